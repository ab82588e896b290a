// The real injector binary started by InjectorProcess: a certificate from an in-process CA, real
// HTTPS on 127.0.0.1, a real AdmissionReview for a Pod, SIGTERM; and mutual TLS with the
// simulator's webhook client presenting a client certificate. Needs the `injector` target
// built (found next to this test in the build tree, or through HARNESS_INJECTOR_BINARY).

#include <signal.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/go/base64.h"
#include "harness/net/certificates.h"
#include "harness/net/client.h"
#include "harness/sim/caller.h"
#include "harness/sim/injector_process.h"
#include "harness/sim/webhook_authentication.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
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
    auto bytes = go::base64Decode(review["response"]["patch"].get<std::string>());
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

// The simulator's webhook client presenting a client certificate over real TLS, as
// kube-apiserver does with an AdmissionConfiguration kubeconfig, to the injector started with
// --client-ca-file (mutual TLS): accepted with a certificate the injector trusts, refused without
// one or with a certificate from another CA.
class WebhookClientCertificateTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto serving_ca = net::CertificateAuthority::create("scenario-ca");
    auto client_ca = net::CertificateAuthority::create("apiserver-client-ca");
    auto stranger_ca = net::CertificateAuthority::create("stranger-ca");
    ASSERT_TRUE(serving_ca.ok() && client_ca.ok() && stranger_ca.ok());
    serving_ca_ = *serving_ca;
    auto client = net::issueCertificate(*client_ca, "kube-apiserver", {"kube-apiserver"});
    auto stranger = net::issueCertificate(*stranger_ca, "kube-apiserver", {"kube-apiserver"});
    ASSERT_TRUE(client.ok() && stranger.ok());
    t::writeFile(dir_ / "certs" / "client-ca.crt", client_ca->certificate_pem);
    t::writeFile(dir_ / "certs" / "apiserver.crt", client->certificate_pem);
    t::writeFile(dir_ / "certs" / "apiserver.key", client->private_key_pem);
    t::writeFile(dir_ / "certs" / "stranger.crt", stranger->certificate_pem);
    t::writeFile(dir_ / "certs" / "stranger.key", stranger->private_key_pem);
    t::writeFile(dir_ / "scenario" / "values.yaml", "proxy:\n  logLevel: warn,linkerd=info\n");
    t::writeFile(dir_ / "scenario" / "trust.pem", serving_ca_.certificate_pem);
    t::writeFile(dir_ / "scenario" / "objects.yaml",
                 "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: apps\n"
                 "  annotations:\n    linkerd.io/inject: enabled\n");

    auto spec = parseInjectorSpec(
        {{"values", "values.yaml"},
         {"trustAnchors", "trust.pem"},
         {"args", {"--client-ca-file", (dir_ / "certs" / "client-ca.crt").string()}}},
        dir_ / "scenario");
    ASSERT_TRUE(spec.ok()) << spec.error().message;
    InjectorLaunchOptions options;
    options.object_files = {dir_ / "scenario" / "objects.yaml"};
    auto process = InjectorProcess::start("injector", std::move(*spec), serving_ca_, dir_.path(),
                                          {}, options);
    ASSERT_TRUE(process.ok()) << process.error().message;
    injector_ = std::move(*process);
  }

  // The AdmissionConfiguration kube-apiserver would be given, its kubeconfig's users[] as
  // written here.
  std::shared_ptr<const WebhookAuthentication> authentication(const std::string& users) {
    t::writeFile(dir_ / "kubeconfig.yaml", "apiVersion: v1\nkind: Config\nusers:\n" + users);
    t::writeFile(dir_ / "admission.yaml",
                 "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\n"
                 "plugins:\n- name: MutatingAdmissionWebhook\n  configuration:\n"
                 "    apiVersion: apiserver.config.k8s.io/v1\n"
                 "    kind: WebhookAdmissionConfiguration\n"
                 "    kubeConfigFile: " + (dir_ / "kubeconfig.yaml").string() + "\n");
    auto loaded = WebhookAuthentication::loadAdmissionConfiguration(dir_ / "admission.yaml");
    EXPECT_TRUE(loaded.ok()) << loaded.error().message;
    if (!loaded.ok()) return nullptr;
    return std::make_shared<const WebhookAuthentication>(std::move(*loaded));
  }

  static std::string certificateUser(const std::string& name, const std::string& identity) {
    return "- name: \"" + name + "\"\n  user:\n    client-certificate: certs/" + identity +
           ".crt\n    client-key: certs/" + identity + ".key\n";
  }

  CallResult call(std::shared_ptr<const WebhookAuthentication> authentication,
                  const std::string& uid) {
    HttpsWebhookCaller caller;
    caller.setAuthentication(std::move(authentication));
    WebhookCall call;
    call.webhook_name = "linkerd-proxy-injector.linkerd.io";
    call.client_config.url = injector_->url();
    call.client_config.ca_bundle = serving_ca_.certificate_pem;
    call.body = podReview(uid).dump();
    call.request_uid = uid;
    call.timeout_param = "10s";
    call.budget = 10s;
    call.mutating = true;
    return caller.call(call);
  }

  t::ScratchDir dir_{"webhook-client-certificate"};
  net::CertificateAuthority serving_ca_;
  std::unique_ptr<InjectorProcess> injector_;
};

TEST_F(WebhookClientCertificateTest, TheMatchingUsersCertificateIsAccepted) {
  const std::string host_port = "127.0.0.1:" + std::to_string(injector_->port());
  auto result = call(authentication(certificateUser(host_port, "apiserver") +
                                    certificateUser("*", "stranger")),
                     "uid-exact");
  ASSERT_TRUE(result.ok()) << result.reason << "\n" << injector_->logTail();
  ASSERT_TRUE(result.review.response.has_value());
  EXPECT_EQ(result.review.response->uid, "uid-exact");
  EXPECT_TRUE(result.review.response->allowed);
  // "*" matches any host when no better name does.
  auto star = call(authentication(certificateUser("*", "apiserver")), "uid-star");
  ASSERT_TRUE(star.ok()) << star.reason << "\n" << injector_->logTail();
}

TEST_F(WebhookClientCertificateTest, WithoutATrustedCertificateTheHandshakeIsRefused) {
  // No users[] entry for this host: kube-apiserver calls anonymously.
  auto anonymous = call(authentication(certificateUser("other.example.com", "apiserver")),
                        "uid-anonymous");
  EXPECT_EQ(anonymous.error, CallErrorKind::kTransport) << anonymous.reason;
  EXPECT_THAT(anonymous.reason, HasSubstr("failed to call webhook: Post \"" + injector_->url()));
  auto none = call(nullptr, "uid-none");
  EXPECT_EQ(none.error, CallErrorKind::kTransport) << none.reason;
  auto stranger = call(authentication(certificateUser("*", "stranger")), "uid-stranger");
  EXPECT_EQ(stranger.error, CallErrorKind::kTransport) << stranger.reason;
}

}  // namespace
}  // namespace harness::sim
