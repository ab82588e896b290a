// The simulator's webhook client presenting a client certificate over real TLS, as
// kube-apiserver does with an AdmissionConfiguration kubeconfig, to the real injector started
// with --client-ca-file (mutual TLS): accepted with a certificate the injector trusts, refused
// without one or with a certificate from another CA. Needs the `injector` target built.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/net/certificates.h"
#include "harness/sim/caller.h"
#include "harness/sim/injector_process.h"
#include "harness/sim/webhook_authentication.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;
using nlohmann::json;
namespace t = harness::testing;

std::string podReview(const std::string& uid) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "web"}, {"namespace", "apps"}}},
              {"spec", {{"containers", {{{"name", "app"}, {"image", "nginx:1.25"}}}}}}};
  return json{{"apiVersion", "admission.k8s.io/v1"},
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
                {"dryRun", false}}}}
      .dump();
}

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
    call.body = podReview(uid);
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
