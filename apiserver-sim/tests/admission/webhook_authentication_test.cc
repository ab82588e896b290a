// The credentials kube-apiserver presents to a webhook: an AdmissionConfiguration's webhook
// plugins, their kubeconfigs, and users[] matched by host and port as
// k8s.io/apiserver pkg/util/webhook/authentication.go matches them.

#include "harness/sim/webhook_authentication.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/go/base64.h"
#include "harness/sim/caller.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

namespace t = harness::testing;
using ::testing::HasSubstr;

std::string user(const std::string& name, const std::string& token) {
  return "- name: \"" + name + "\"\n  user:\n    token: " + token + "\n";
}

WebhookKubeconfig kubeconfig(const t::ScratchDir& dir, const std::string& users,
                             const std::string& extra = {}) {
  t::writeFile(dir / "kubeconfig.yaml", "apiVersion: v1\nkind: Config\nusers:\n" + users + extra);
  auto loaded = WebhookKubeconfig::load(dir / "kubeconfig.yaml");
  if (!loaded.ok()) throw std::runtime_error(loaded.error().message);
  return std::move(*loaded);
}

std::string tokenFor(const WebhookKubeconfig& config, const std::string& host_port) {
  const auto* found = config.forHostPort(host_port);
  return found ? found->bearer_token : "<anonymous>";
}

// The URL kube-apiserver posts to (and names in its errors): an empty path is requested as "/".
TEST(WebhookUrl, AnEmptyPathIsTheRoot) {
  core::WebhookClientConfig service;
  service.service = core::ServiceReference{"ns", "hook", std::nullopt, std::nullopt};
  EXPECT_EQ(webhookUrl(service, "10s"), "https://hook.ns.svc:443/?timeout=10s");
  service.service->path = "/mutate";
  service.service->port = 8443;
  EXPECT_EQ(webhookUrl(service, ""), "https://hook.ns.svc:8443/mutate");
  core::WebhookClientConfig url;
  url.url = "https://127.0.0.1:1";
  EXPECT_EQ(webhookUrl(url, "5s"), "https://127.0.0.1:1/?timeout=5s");
  url.url = "https://hook.example.com/validate";
  EXPECT_EQ(webhookUrl(url, "5s"), "https://hook.example.com/validate?timeout=5s");
}

TEST(WebhookKubeconfig, MatchesExactThenStarDomainsThenWithoutPort443ThenStar) {
  t::ScratchDir dir{"webhook-auth"};
  const auto config =
      kubeconfig(dir, user("hook.ns.svc:8443", "exact") + user("*.ns.svc:8443", "star-ns-port") +
                          user("*.svc:8443", "star-svc-port") + user("*.svc", "star-svc") +
                          user("other.example.com", "no-port") + user("*", "default"));
  EXPECT_EQ(tokenFor(config, "hook.ns.svc:8443"), "exact");
  EXPECT_EQ(tokenFor(config, "other.ns.svc:8443"), "star-ns-port");  // the longest domain first
  EXPECT_EQ(tokenFor(config, "other.team.svc:8443"), "star-svc-port");
  // Names without a port only match port 443.
  EXPECT_EQ(tokenFor(config, "hook.ns.svc:443"), "star-svc");
  EXPECT_EQ(tokenFor(config, "other.example.com:443"), "no-port");
  EXPECT_EQ(tokenFor(config, "other.example.com:8443"), "default");
  EXPECT_EQ(tokenFor(config, "127.0.0.1:9443"), "default");
}

TEST(WebhookKubeconfig, FallsBackToTheCurrentContextsUserThenAnonymous) {
  t::ScratchDir dir{"webhook-auth"};
  const auto with_context = kubeconfig(
      dir, user("apiserver", "current") + user("hook.ns.svc:443", "exact"),
      "contexts:\n- name: webhook\n  context:\n    user: apiserver\ncurrent-context: webhook\n");
  EXPECT_EQ(tokenFor(with_context, "hook.ns.svc:443"), "exact");
  EXPECT_EQ(tokenFor(with_context, "elsewhere.svc:443"), "current");
  const auto without = kubeconfig(dir, user("hook.ns.svc:443", "exact"));
  EXPECT_EQ(tokenFor(without, "elsewhere.svc:443"), "<anonymous>");
}

TEST(WebhookKubeconfig, ServiceReferencesAndUrlsAreLookedUpByHostAndPort) {
  t::ScratchDir dir{"webhook-auth"};
  const auto config = kubeconfig(dir, user("*.linkerd.svc", "service") +
                                          user("webhook.example.com:443", "url-default-port") +
                                          user("127.0.0.1:8443", "url-port"));
  core::WebhookClientConfig service;
  service.service = core::ServiceReference{};
  service.service->name = "linkerd-proxy-injector";
  service.service->namespace_name = "linkerd";
  ASSERT_NE(config.forClientConfig(service), nullptr);
  EXPECT_EQ(config.forClientConfig(service)->bearer_token, "service");
  service.service->port = 8443;  // "*.linkerd.svc" matches port 443 only
  EXPECT_EQ(config.forClientConfig(service), nullptr);
  core::WebhookClientConfig url;
  url.url = "https://webhook.example.com/mutate";
  EXPECT_EQ(config.forClientConfig(url)->bearer_token, "url-default-port");
  url.url = "https://127.0.0.1:8443/mutate";
  EXPECT_EQ(config.forClientConfig(url)->bearer_token, "url-port");
}

TEST(WebhookKubeconfig, ReadsCertificatesFromFilesAndData) {
  t::ScratchDir dir{"webhook-auth"};
  t::writeFile(dir / "certs" / "client.crt", "CERT");
  t::writeFile(dir / "certs" / "client.key", "KEY");
  const auto config = kubeconfig(
      dir, "- name: \"*.svc\"\n  user:\n    client-certificate: certs/client.crt\n"
           "    client-key: certs/client.key\n"
           "- name: inline\n  user:\n    client-certificate-data: " + go::base64Encode("C2") +
               "\n    client-key-data: " + go::base64Encode("K2") +
               "\n    client-certificate: missing.crt\n");
  const auto* files = config.forHostPort("hook.ns.svc:443");
  ASSERT_NE(files, nullptr);
  EXPECT_EQ(files->user, "*.svc");
  EXPECT_EQ(files->client_certificate_pem, "CERT");
  EXPECT_EQ(files->client_key_pem, "KEY");
  const auto* inline_data = config.forHostPort("inline");
  ASSERT_NE(inline_data, nullptr);
  EXPECT_EQ(inline_data->client_certificate_pem, "C2");  // -data wins over the file
  EXPECT_EQ(inline_data->client_key_pem, "K2");
}

TEST(WebhookKubeconfig, ErrorsNameTheFileAndTheField) {
  t::ScratchDir dir{"webhook-auth"};
  t::writeFile(dir / "missing-key.yaml",
               "users:\n- name: hook\n  user:\n    client-certificate-data: " +
                   go::base64Encode("C") + "\n    client-key: nowhere.key\n");
  auto missing = WebhookKubeconfig::load(dir / "missing-key.yaml");
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("missing-key.yaml: users[hook].user.client-key"));
  EXPECT_THAT(missing.error().message, HasSubstr("nowhere.key"));
  t::writeFile(dir / "exec.yaml", "users:\n- name: hook\n  user:\n    exec:\n      command: x\n");
  auto exec = WebhookKubeconfig::load(dir / "exec.yaml");
  ASSERT_FALSE(exec.ok());
  EXPECT_THAT(exec.error().message, HasSubstr("users[hook].user.exec: not supported"));
  auto absent = WebhookKubeconfig::load(dir / "absent.yaml");
  ASSERT_FALSE(absent.ok());
  EXPECT_THAT(absent.error().message, HasSubstr("absent.yaml"));
}

TEST(WebhookAuthentication, EachWebhookPluginHasItsKubeconfig) {
  t::ScratchDir dir{"webhook-auth"};
  t::writeFile(dir / "mutating.yaml", "users:\n" + user("*", "mutating"));
  t::writeFile(dir / "validating.yaml", "users:\n" + user("*", "validating"));
  t::writeFile(dir / "validating-plugin.yaml",
               "apiVersion: apiserver.config.k8s.io/v1alpha1\nkind: WebhookAdmission\n"
               "kubeConfigFile: " + (dir / "validating.yaml").string() + "\n");
  t::writeFile(dir / "admission.yaml",
               "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n"
               "- name: MutatingAdmissionWebhook\n  configuration:\n"
               "    apiVersion: apiserver.config.k8s.io/v1\n"
               "    kind: WebhookAdmissionConfiguration\n"
               "    kubeConfigFile: " + (dir / "mutating.yaml").string() + "\n"
               "- name: ValidatingAdmissionWebhook\n  path: validating-plugin.yaml\n"
               "- name: PodSecurity\n  configuration: {}\n");
  auto loaded = WebhookAuthentication::loadAdmissionConfiguration(dir / "admission.yaml");
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  core::WebhookClientConfig config;
  config.url = "https://127.0.0.1:8443/";
  EXPECT_EQ(loaded->forCall(config, true)->bearer_token, "mutating");
  EXPECT_EQ(loaded->forCall(config, false)->bearer_token, "validating");
  EXPECT_EQ(WebhookAuthentication{}.forCall(config, true), nullptr);
}

TEST(WebhookAuthentication, KubeConfigFileMustBeAbsoluteAsKubeApiserverRequires) {
  t::ScratchDir dir{"webhook-auth"};
  t::writeFile(dir / "admission.yaml",
               "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n"
               "- name: MutatingAdmissionWebhook\n  configuration:\n"
               "    apiVersion: apiserver.config.k8s.io/v1\n"
               "    kind: WebhookAdmissionConfiguration\n    kubeConfigFile: kubeconfig.yaml\n");
  auto loaded = WebhookAuthentication::loadAdmissionConfiguration(dir / "admission.yaml");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.error().message,
              HasSubstr("plugins[0].configuration: kubeConfigFile: Invalid value: "
                        "\"kubeconfig.yaml\": must be an absolute file path"));
  t::writeFile(dir / "wrong-kind.yaml", "apiVersion: v1\nkind: Config\n");
  auto wrong = WebhookAuthentication::loadAdmissionConfiguration(dir / "wrong-kind.yaml");
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong.error().message, HasSubstr("expected kind AdmissionConfiguration"));
}

}  // namespace
}  // namespace harness::sim
