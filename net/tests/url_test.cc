#include "harness/net/url.h"

#include <gtest/gtest.h>

#include "harness/net/http.h"
#include "harness/net/server.h"

namespace harness::net {
namespace {

TEST(ParseUrl, SplitsServiceUrlWithDefaultHttpsPort) {
  auto url = parseUrl("https://webhook.ns.svc/inject?timeout=10s");
  ASSERT_TRUE(url.ok()) << url.error().message;
  EXPECT_EQ(url->scheme, "https");
  EXPECT_EQ(url->host, "webhook.ns.svc");
  EXPECT_EQ(url->port, 443);
  EXPECT_FALSE(url->host_is_ip);
  EXPECT_EQ(url->target, "/inject?timeout=10s");
  EXPECT_EQ(url->toString(), "https://webhook.ns.svc/inject?timeout=10s");
}

TEST(ParseUrl, RecognisesIpLiteralsIncludingIpv6) {
  auto v4 = parseUrl("https://127.0.0.1:8443");
  ASSERT_TRUE(v4.ok());
  EXPECT_TRUE(v4->host_is_ip);
  EXPECT_EQ(v4->port, 8443);
  EXPECT_EQ(v4->target, "/");
  auto v6 = parseUrl("https://[::1]:9443/x");
  ASSERT_TRUE(v6.ok());
  EXPECT_TRUE(v6->host_is_ip);
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->hostPort(), "[::1]:9443");
}

TEST(ParseUrl, RejectsUnsupportedSchemeAndGarbage) {
  auto ftp = parseUrl("ftp://example.com/");
  ASSERT_FALSE(ftp.ok());
  EXPECT_EQ(ftp.error().message, "unsupported protocol scheme \"ftp\"");
  EXPECT_FALSE(parseUrl("not a url").ok());
  EXPECT_FALSE(parseUrl("https://").ok());
}

TEST(Headers, LookupIsCaseInsensitiveAndSetReplaces) {
  Headers h;
  h.add("Content-Type", "text/plain");
  h.add("Warning", "299 - \"a\"");
  h.add("warning", "299 - \"b\"");
  EXPECT_EQ(h.get("content-type"), "text/plain");
  EXPECT_EQ(h.getAll("WARNING").size(), 2u);
  h.set("CONTENT-TYPE", "application/json");
  EXPECT_EQ(h.getAll("content-type"), std::vector<std::string>{"application/json"});
  EXPECT_FALSE(h.get("missing").has_value());
}

TEST(Request, QueryParamFindsValue) {
  Request r;
  r.query = "a=1&timeout=10s&flag";
  EXPECT_EQ(r.queryParam("timeout"), "10s");
  EXPECT_EQ(r.queryParam("flag"), "");
  EXPECT_FALSE(r.queryParam("missing").has_value());
}

TEST(Router, ExactBeatsPrefixAndLongestPrefixWins) {
  Router router;
  router.exact("/inject", [](const Request&) { return Response::text(200, "exact"); });
  router.prefix("/inject", [](const Request&) { return Response::text(200, "short"); });
  router.prefix("/inject/cluster", [](const Request&) { return Response::text(200, "long"); });
  auto call = [&](std::string path) {
    Request r;
    r.path = std::move(path);
    return router.dispatch(r).response;
  };
  EXPECT_EQ(call("/inject").body, "exact");
  EXPECT_EQ(call("/inject/x").body, "short");
  EXPECT_EQ(call("/inject/cluster/c1/net/n1").body, "long");
  EXPECT_EQ(call("/injectx").status, 404);  // a prefix matches whole segments only
  EXPECT_EQ(call("/other").status, 404);
}

TEST(ReasonPhrase, KnownAndUnknownCodes) {
  EXPECT_EQ(reasonPhrase(200), "OK");
  EXPECT_EQ(reasonPhrase(503), "Service Unavailable");
  EXPECT_EQ(reasonPhrase(799), "");
}

}  // namespace
}  // namespace harness::net
