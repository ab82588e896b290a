// RestApiServer over real HTTPS on 127.0.0.1: the serving certificate verifies against the CA for
// the names a client dials, every request needs the bearer token, and writes go through the chain.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/metrics.h"
#include "harness/core/yaml.h"
#include "harness/net/certificates.h"
#include "harness/net/client.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/caller.h"
#include "harness/sim/rest_api.h"
#include "harness/sim/store.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

using nlohmann::json;

class RestApiServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca = net::CertificateAuthority::create("apiserver-sim-test-ca");
    ASSERT_TRUE(ca.ok()) << ca.error().message;
    ca_ = *ca;
    chain_ = std::make_unique<AdmissionChain>(store_, caller_, metrics_, ChainOptions{});
    store_.put({"", "namespaces"},
               {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "default"}}}});
    RestApiOptions options;
    options.scratch_dir = scratch_.path() / "rest";
    options.metrics = &metrics_;
    auto server = RestApiServer::start(store_, *chain_, ca_, options);
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server);
    net::ClientOptions client_options;
    client_options.ca_pem = ca_.certificate_pem;
    client_ = std::make_unique<net::HttpClient>(client_options);
  }

  void TearDown() override {
    client_.reset();
    if (server_) server_->stop();
  }

  net::ClientResponse call(const std::string& method, const std::string& path,
                           const std::string& body = "", const std::string& content_type = "",
                           const std::optional<std::string>& token = std::nullopt,
                           const std::string& host = "127.0.0.1") {
    net::ClientRequest request;
    request.method = method;
    request.url = "https://" + host + ":" + std::to_string(server_->port()) + path;
    request.connect_to = "127.0.0.1:" + std::to_string(server_->port());
    request.headers.add("Authorization", "Bearer " + token.value_or(server_->bearerToken()));
    if (!content_type.empty()) request.headers.add("Content-Type", content_type);
    request.body = body;
    request.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    return client_->sendSync(std::move(request));
  }

  testing::ScratchDir scratch_{"rest-api"};
  net::CertificateAuthority ca_;
  ObjectStore store_;
  InProcessWebhookCaller caller_;
  core::MetricsRegistry metrics_;
  std::unique_ptr<AdmissionChain> chain_;
  std::unique_ptr<RestApiServer> server_;
  std::unique_ptr<net::HttpClient> client_;
};

TEST_F(RestApiServerTest, UrlIsHttpsOnLoopbackWithTheBoundPort) {
  EXPECT_EQ(server_->url(), "https://127.0.0.1:" + std::to_string(server_->port()));
  EXPECT_NE(server_->port(), 0);
}

TEST_F(RestApiServerTest, GeneratesABearerTokenWhenNoneIsGiven) {
  EXPECT_GE(server_->bearerToken().size(), 32u);
}

TEST_F(RestApiServerTest, VersionIsServedOverVerifiedTls) {
  const auto response = call("GET", "/version");
  ASSERT_TRUE(response.ok()) << response.error_message;
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(json::parse(response.body)["gitVersion"], "v1.31.4+k3s1");
}

TEST_F(RestApiServerTest, ServingCertificateCoversInClusterNames) {
  for (const char* host : {"localhost", "kubernetes.default.svc"}) {
    const auto response = call("GET", "/healthz", "", "", std::nullopt, host);
    ASSERT_TRUE(response.ok()) << host << ": " << response.error_message;
    EXPECT_EQ(response.body, "ok");
  }
}

TEST_F(RestApiServerTest, WrongTokenIsUnauthorizedOverTheWire) {
  const auto response = call("GET", "/api/v1/namespaces", "", "", std::string("wrong"));
  ASSERT_TRUE(response.ok()) << response.error_message;
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(json::parse(response.body)["reason"], "Unauthorized");
}

TEST_F(RestApiServerTest, CreateThenGetThroughTheChain) {
  const json cm = {{"apiVersion", "v1"},
                   {"kind", "ConfigMap"},
                   {"metadata", {{"name", "settings"}}},
                   {"data", {{"k", "v"}}}};
  const auto created = call("POST", "/api/v1/namespaces/default/configmaps", cm.dump(),
                            "application/json");
  ASSERT_TRUE(created.ok()) << created.error_message;
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(created.headers.get("Content-Type").value_or(""), "application/json");
  const auto read = call("GET", "/api/v1/namespaces/default/configmaps/settings");
  ASSERT_EQ(read.status, 200);
  EXPECT_EQ(json::parse(read.body)["data"]["k"], "v");
}

TEST_F(RestApiServerTest, MetricsAreTheChainRegistry) {
  metrics_.counter("rest_test_total", "Test.", {}).add({}, 1);
  const auto response = call("GET", "/metrics");
  ASSERT_TRUE(response.ok()) << response.error_message;
  EXPECT_NE(response.body.find("rest_test_total 1"), std::string::npos);
}

TEST_F(RestApiServerTest, KubeconfigPointsAtTheServerWithTheToken) {
  const auto file = scratch_.path() / "kubeconfig";
  auto written = server_->writeKubeconfig(file);
  ASSERT_TRUE(written.ok()) << written.error().message;
  EXPECT_EQ(*written, file);
  auto doc = core::parseYaml(testing::readFile(file));
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ((*doc)["clusters"][0]["cluster"]["server"], server_->url());
  EXPECT_EQ((*doc)["users"][0]["user"]["token"], server_->bearerToken());
  EXPECT_EQ((*doc)["current-context"], "apiserver-sim");
}

TEST_F(RestApiServerTest, StopIsIdempotentAndRefusesNewConnections) {
  server_->stop();
  server_->stop();
  const auto response = call("GET", "/version");
  EXPECT_FALSE(response.ok());
}

TEST(RestApiServerStartTest, ScratchDirIsRequired) {
  auto ca = net::CertificateAuthority::create("ca");
  ASSERT_TRUE(ca.ok());
  ObjectStore store;
  InProcessWebhookCaller caller;
  core::MetricsRegistry metrics;
  AdmissionChain chain(store, caller, metrics, ChainOptions{});
  auto server = RestApiServer::start(store, chain, *ca, RestApiOptions{});
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.error().message.find("scratch_dir"), std::string::npos);
}

TEST(RestApiServerStartTest, UnusableCertificateAuthorityIsAnError) {
  testing::ScratchDir scratch("rest-api-bad-ca");
  net::CertificateAuthority ca;
  ca.certificate_pem = "not a certificate";
  ca.private_key_pem = "not a key";
  ObjectStore store;
  InProcessWebhookCaller caller;
  core::MetricsRegistry metrics;
  AdmissionChain chain(store, caller, metrics, ChainOptions{});
  RestApiOptions options;
  options.scratch_dir = scratch.path();
  auto server = RestApiServer::start(store, chain, ca, options);
  ASSERT_FALSE(server.ok());
  EXPECT_NE(server.error().message.find("serving certificate"), std::string::npos)
      << server.error().message;
}

}  // namespace
}  // namespace harness::sim
