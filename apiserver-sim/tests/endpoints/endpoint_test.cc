// parseExternalEndpoint: URL rules of a webhook clientConfig.url and a usable CA file.

#include "harness/sim/endpoint.h"

#include <gtest/gtest.h>

#include "harness/net/certificates.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

using nlohmann::json;
namespace t = harness::testing;

class ExternalEndpointTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto ca = net::CertificateAuthority::create("endpoint-ca");
    ASSERT_TRUE(ca.ok()) << ca.error().message;
    ca_pem_ = ca->certificate_pem;
    t::writeFile(dir_ / "ca.crt", ca_pem_);
  }

  std::string errorOf(const json& value) {
    auto endpoint = parseExternalEndpoint(value, dir_.path());
    EXPECT_FALSE(endpoint.ok());
    return endpoint.ok() ? std::string("<parsed>") : endpoint.error().message;
  }

  t::ScratchDir dir_{"endpoint"};
  std::string ca_pem_;
};

TEST_F(ExternalEndpointTest, ReadsUrlAndCaFileRelativeToTheBaseDir) {
  auto endpoint =
      parseExternalEndpoint(json{{"url", "https://127.0.0.1:8443/inject"}, {"caFile", "ca.crt"}},
                            dir_.path());
  ASSERT_TRUE(endpoint.ok()) << endpoint.error().message;
  EXPECT_EQ(endpoint->url, "https://127.0.0.1:8443/inject");
  EXPECT_EQ(endpoint->ca_file, (dir_.path() / "ca.crt").lexically_normal());
  EXPECT_EQ(endpoint->ca_pem, ca_pem_);
}

TEST_F(ExternalEndpointTest, AnAbsoluteCaFileIsUsedAsIs) {
  const auto absolute = std::filesystem::absolute(dir_ / "ca.crt");
  auto endpoint = parseExternalEndpoint(
      json{{"url", "https://webhook.example.com/"}, {"caFile", absolute.string()}}, "/elsewhere");
  ASSERT_TRUE(endpoint.ok()) << endpoint.error().message;
  EXPECT_EQ(endpoint->ca_file, absolute.lexically_normal());
}

TEST_F(ExternalEndpointTest, WithoutCaFileUsesTheSystemRoots) {
  auto endpoint = parseExternalEndpoint(json{{"url", "https://webhook.example.com"}}, dir_.path());
  ASSERT_TRUE(endpoint.ok()) << endpoint.error().message;
  EXPECT_TRUE(endpoint->ca_pem.empty());
  EXPECT_TRUE(endpoint->ca_file.empty());
}

TEST_F(ExternalEndpointTest, UrlIsRequired) {
  EXPECT_EQ(errorOf(json{{"caFile", "ca.crt"}}), "endpoint.url: Required value");
}

TEST_F(ExternalEndpointTest, UrlMustBeHttps) {
  EXPECT_EQ(errorOf(json{{"url", "http://127.0.0.1:8080/"}}),
            "endpoint.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; "
            "desired format: https://host[/path]");
}

TEST_F(ExternalEndpointTest, UrlMayNotCarryAQuery) {
  EXPECT_EQ(errorOf(json{{"url", "https://127.0.0.1/x?timeout=1s"}}),
            "endpoint.url: Invalid value: \"timeout=1s\": query parameters are not permitted "
            "in the URL");
}

TEST_F(ExternalEndpointTest, UrlMustBeAString) {
  EXPECT_EQ(errorOf(json{{"url", 443}}), "endpoint.url: must be a string, got number");
}

TEST_F(ExternalEndpointTest, MissingCaFileIsNamed) {
  const auto missing = (dir_.path() / "missing.crt").lexically_normal().string();
  EXPECT_EQ(errorOf(json{{"url", "https://127.0.0.1/"}, {"caFile", "missing.crt"}}),
            "endpoint.caFile: cannot read \"" + missing + "\": No such file or directory");
}

TEST_F(ExternalEndpointTest, CaFileThatIsNotPem) {
  t::writeFile(dir_ / "garbage.crt", "not a certificate");
  EXPECT_EQ(errorOf(json{{"url", "https://127.0.0.1/"}, {"caFile", "garbage.crt"}}),
            "endpoint.caFile: unable to load root certificates: unable to parse bytes as PEM "
            "block");
}

TEST_F(ExternalEndpointTest, EmptyCaFile) {
  t::writeFile(dir_ / "empty.crt", "");
  const auto empty = (dir_.path() / "empty.crt").lexically_normal().string();
  EXPECT_EQ(errorOf(json{{"url", "https://127.0.0.1/"}, {"caFile", "empty.crt"}}),
            "endpoint.caFile: \"" + empty + "\" is empty");
}

TEST_F(ExternalEndpointTest, UnknownField) {
  EXPECT_EQ(errorOf(json{{"url", "https://127.0.0.1/"}, {"caBundle", "x"}}),
            "endpoint: unknown field \"caBundle\"");
}

TEST_F(ExternalEndpointTest, MustBeAnObject) {
  EXPECT_EQ(errorOf(json("https://127.0.0.1/")), "endpoint: must be an object, got string");
}

}  // namespace
}  // namespace harness::sim
