// `apiserver-sim serve` as a process, over HTTPS with the kubeconfig it writes: request bodies
// nested deeper than Go's decoders accept are refused with the apiserver's decode errors instead
// of crashing the process (a recursive copy of a 100,000-deep object overflowed the stack).

#include <csignal>
#include <chrono>
#include <filesystem>
#include <string>
#include <thread>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/yaml.h"
#include "harness/go/base64.h"
#include "harness/net/client.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

class ServeHostileBodyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path kubeconfig = dir_ / "kubeconfig";
    serve_ = std::make_unique<testing::ChildProcess>(
        std::vector<std::string>{(testing::binaryDir() / "apiserver-sim/apiserver-sim").string(),
                                 "serve",
                                 (testing::sourceDir() / "scenarios/examples/allow.yaml").string(),
                                 "--kubeconfig-out", kubeconfig.string()},
        dir_ / "serve.log");
    // The kubeconfig line is printed after the file is written.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (std::chrono::steady_clock::now() < deadline &&
           log().find("kubeconfig: ") == std::string::npos) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(fs::exists(kubeconfig)) << log();
    auto config = core::parseYaml(testing::readFile(kubeconfig));
    ASSERT_TRUE(config.ok()) << config.error().message;
    server_ = (*config)["clusters"][0]["cluster"]["server"];
    token_ = (*config)["users"][0]["user"]["token"];
    auto ca = go::base64Decode(
        (*config)["clusters"][0]["cluster"]["certificate-authority-data"].get<std::string>());
    ASSERT_TRUE(ca.ok());
    net::ClientOptions options;
    options.ca_pem = *ca;
    client_ = std::make_unique<net::HttpClient>(options);
  }

  void TearDown() override {
    client_.reset();
    if (serve_) {
      EXPECT_EQ(serve_->stop(SIGTERM, 10'000), 0) << log();
    }
  }

  std::string log() const {
    return fs::exists(dir_ / "serve.log") ? testing::readFile(dir_ / "serve.log") : "";
  }

  net::ClientResponse call(const std::string& method, const std::string& path,
                           const std::string& body = "", const std::string& content_type = "") {
    net::ClientRequest request;
    request.method = method;
    request.url = server_ + path;
    request.headers.add("Authorization", "Bearer " + token_);
    if (!content_type.empty()) request.headers.add("Content-Type", content_type);
    request.body = body;
    request.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    return client_->sendSync(std::move(request));
  }

  // The Status a refused write answers with.
  static json status(const net::ClientResponse& response) {
    return json::parse(response.body, nullptr, false);
  }

  testing::ScratchDir dir_{"serve-hostile"};
  std::unique_ptr<testing::ChildProcess> serve_;
  std::string server_, token_;
  std::unique_ptr<net::HttpClient> client_;
};

TEST_F(ServeHostileBodyTest, DeeplyNestedWriteBodiesAreBadRequestsAndTheServerLivesOn) {
  // POST: the serializer's meta.Interpret (encoding/json) fails first, and create.go's
  // transformDecodeError words it.
  const std::string pod =
      R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"deep"},"spec":{"x":)" +
      nested(100000) + "}}";
  auto created = call("POST", "/api/v1/namespaces/default/pods", pod, "application/json");
  ASSERT_TRUE(created.ok()) << created.error_message << "\n" << log();
  EXPECT_EQ(created.status, 400) << created.body;
  EXPECT_EQ(status(created)["message"],
            "the object provided is unrecognized (must be of type Pod): couldn't get "
            "version/kind; json parse error: invalid character '[' exceeded max depth "
            "({\"apiVersion\":\"v1\",\"kind\":\"Pod ...)");

  // The same as YAML.
  auto yaml = call("POST", "/api/v1/namespaces/default/pods", nested(100000), "application/yaml");
  ASSERT_TRUE(yaml.ok()) << yaml.error_message << "\n" << log();
  EXPECT_EQ(yaml.status, 400) << yaml.body;

  // Merge PATCH of an existing object: jsonpatch.MergePatch refuses a body json.Valid rejects.
  const auto patch = [&](const std::string& content_type) {
    auto response = call("PATCH", "/api/v1/namespaces/demo",
                         R"({"metadata":{"labels":{"k":)" + nested(100000) + "}}}", content_type);
    EXPECT_TRUE(response.ok()) << response.error_message << "\n" << log();
    EXPECT_EQ(response.status, 400) << response.body;
    return status(response)["message"];
  };
  EXPECT_EQ(patch("application/merge-patch+json"), "Invalid JSON Patch");
  // A strategic merge patch: the JSON error itself.
  EXPECT_EQ(patch("application/strategic-merge-patch+json"),
            "invalid character '[' exceeded max depth");

  // Still serving, and nothing was stored.
  auto read = call("GET", "/api/v1/namespaces/demo");
  ASSERT_EQ(read.status, 200) << read.body;
  EXPECT_FALSE(json::parse(read.body)["metadata"].value("labels", json::object()).contains("k"));
  EXPECT_EQ(call("GET", "/api/v1/namespaces/default/pods/deep").status, 404);
}

}  // namespace
}  // namespace harness::sim
