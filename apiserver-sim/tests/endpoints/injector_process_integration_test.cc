// The real injector binary started by InjectorProcess: a certificate from an in-process CA, real
// HTTPS on 127.0.0.1, a real AdmissionReview for a Pod, SIGTERM. Needs the `injector` target
// built (found next to this test in the build tree, or through HARNESS_INJECTOR_BINARY).

#include <signal.h>

#include <gtest/gtest.h>

#include "harness/core/base64.h"
#include "harness/net/certificates.h"
#include "harness/net/client.h"
#include "harness/sim/injector_process.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
namespace fs = std::filesystem;
namespace t = harness::testing;

json podReview(const std::string& uid) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "web"}, {"namespace", "apps"}, {"labels", {{"app", "web"}}}}},
              {"spec", {{"containers", {{{"name", "app"}, {"image", "nginx:1.25"}}}}}}};
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", uid},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"name", "web"},
            {"namespace", "apps"},
            {"operation", "CREATE"},
            {"userInfo", {{"username", "admin"}}},
            {"object", pod},
            {"oldObject", nullptr},
            {"dryRun", false}}}};
}

class InjectorIntegrationTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto binary = findInjectorBinary();
    ASSERT_TRUE(binary.ok()) << binary.error().message;
    auto ca = net::CertificateAuthority::create("scenario-ca");
    ASSERT_TRUE(ca.ok()) << ca.error().message;
    ca_ = *ca;
    // A scenario directory: values, trust anchors and the objects the injector looks up.
    t::writeFile(dir_ / "scenario" / "values.yaml", "proxy:\n  logLevel: warn,linkerd=info\n");
    t::writeFile(dir_ / "scenario" / "trust.pem", ca_.certificate_pem);
    t::writeFile(dir_ / "scenario" / "objects.yaml",
                 "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n"
                 "  annotations:\n    linkerd.io/inject: enabled\n");
  }

  std::unique_ptr<InjectorProcess> start(const json& spec_json) {
    auto spec = parseInjectorSpec(spec_json, dir_ / "scenario");
    EXPECT_TRUE(spec.ok()) << spec.error().message;
    if (!spec.ok()) return nullptr;
    InjectorLaunchOptions options;
    options.object_files = {dir_ / "scenario" / "objects.yaml"};
    auto process = InjectorProcess::start("injector", std::move(*spec), ca_, dir_.path(),
                                          {"injector.linkerd.svc"}, options);
    EXPECT_TRUE(process.ok()) << process.error().message;
    return process.ok() ? std::move(*process) : nullptr;
  }

  net::ClientResponse post(const std::string& url, const json& body) {
    net::ClientOptions options;
    options.ca_pem = ca_.certificate_pem;
    net::HttpClient client(options);
    net::ClientRequest request;
    request.url = url;
    request.headers.set("Content-Type", "application/json");
    request.body = body.dump();
    request.deadline = std::chrono::steady_clock::now() + 10s;
    return client.sendSync(std::move(request));
  }

  static std::string decodedPatch(const json& review) {
    if (!review["response"].contains("patch")) return {};
    auto bytes = core::base64Decode(review["response"]["patch"].get<std::string>());
    EXPECT_TRUE(bytes.ok());
    return bytes.ok() ? *bytes : std::string();
  }

  t::ScratchDir dir_{"injector-integration"};
  net::CertificateAuthority ca_;
};

TEST_F(InjectorIntegrationTest, LinkerdProfileInjectsAPodOverHttps) {
  auto injector = start({{"profile", "linkerd"},
                         {"values", "values.yaml"},
                         {"trustAnchors", "trust.pem"},
                         {"logLevel", "debug"}});
  ASSERT_TRUE(injector);
  auto res = post(injector->url() + "?timeout=10s", podReview("uid-1"));
  ASSERT_TRUE(res.ok()) << res.error_message << "\n" << injector->logTail();
  ASSERT_EQ(res.status, 200) << res.body;
  auto review = json::parse(res.body);
  EXPECT_EQ(review["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(review["response"]["uid"], "uid-1");
  EXPECT_EQ(review["response"]["allowed"], true);
  EXPECT_EQ(review["response"]["patchType"], "JSONPatch");
  EXPECT_NE(decodedPatch(review).find("linkerd-proxy"), std::string::npos) << decodedPatch(review);
}

TEST_F(InjectorIntegrationTest, AnswersOnTheServiceNameOfItsCertificate) {
  auto injector = start({{"values", "values.yaml"}, {"trustAnchors", "trust.pem"}});
  ASSERT_TRUE(injector);
  net::ClientOptions options;
  options.ca_pem = ca_.certificate_pem;
  net::HttpClient client(options);
  net::ClientRequest request;
  request.url = "https://injector.linkerd.svc:443/inject/linkerd?timeout=10s";
  request.connect_to = "127.0.0.1:" + std::to_string(injector->port());
  request.body = podReview("uid-2").dump();
  request.deadline = std::chrono::steady_clock::now() + 10s;
  auto res = client.sendSync(std::move(request));
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(json::parse(res.body)["response"]["uid"], "uid-2");
}

TEST_F(InjectorIntegrationTest, IstioProfileAnswersOnInject) {
  auto injector = start({{"profile", "istio"}});
  ASSERT_TRUE(injector);
  auto res = post(injector->url() + "inject?timeout=10s", podReview("uid-3"));
  ASSERT_TRUE(res.ok()) << res.error_message << "\n" << injector->logTail();
  ASSERT_EQ(res.status, 200) << res.body;
  auto review = json::parse(res.body);
  EXPECT_EQ(review["response"]["uid"], "uid-3");
  EXPECT_EQ(review["response"]["allowed"], true);
  EXPECT_NE(decodedPatch(review).find("istio-proxy"), std::string::npos) << decodedPatch(review);
}

TEST_F(InjectorIntegrationTest, StopsWithSigtermAndLeavesNothingBehind) {
  auto injector = start({{"values", "values.yaml"}, {"trustAnchors", "trust.pem"}});
  ASSERT_TRUE(injector);
  const pid_t pid = injector->pid();
  const std::string url = injector->url();
  EXPECT_EQ(injector->stop(), 0) << injector->logTail();
  EXPECT_NE(::kill(pid, 0), 0);
  auto res = post(url, podReview("uid-4"));
  EXPECT_EQ(res.error, net::ClientErrorKind::kConnect) << res.error_message;
  EXPECT_NE(t::readFile(injector->logFile()).find("shut down"), std::string::npos);
}

TEST_F(InjectorIntegrationTest, ABadArgumentFailsWithTheInjectorsOwnMessage) {
  auto spec = parseInjectorSpec(json{{"args", {"--no-such-flag"}}}, dir_ / "scenario");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  auto process = InjectorProcess::start("bad", std::move(*spec), ca_, dir_.path(), {});
  ASSERT_FALSE(process.ok());
  EXPECT_NE(process.error().message.find("injector \"bad\" exited with status"),
            std::string::npos)
      << process.error().message;
  EXPECT_NE(process.error().message.find("--no-such-flag"), std::string::npos)
      << process.error().message;
}

}  // namespace
}  // namespace harness::sim
