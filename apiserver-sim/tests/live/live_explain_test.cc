// explain --kubeconfig's narration (live_explain.h) on a cluster snapshot read through a fake
// REST GET: Linkerd's webhook configuration as the seed tutorial's cluster shows it, Istio's as
// its chart renders it, their ConfigMaps from the repository's injector configuration, and the
// project's injector deciding offline. The same against the real control plane is
// kube/tests/live_cluster_real_test.cc.

#include <filesystem>
#include <algorithm>
#include <map>
#include <string>
#include <variant>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/yaml.h"
#include "harness/process/kube_bin_dir.h"
#include "harness/sim/cel.h"
#include "harness/sim/live_explain.h"
#include "harness/testing/support.h"

#ifndef HARNESS_INJECTOR_BINARY
#error "HARNESS_INJECTOR_BINARY is set by apiserver-sim/CMakeLists.txt"
#endif

namespace harness::sim::live {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

json yamlFile(const fs::path& file) {
  auto parsed = core::parseYaml(testing::readFile(file));
  EXPECT_TRUE(parsed.ok()) << file;
  return parsed.ok() ? *parsed : json();
}

json configMap(const std::string& ns, const std::string& name, json data) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"name", name}, {"namespace", ns}}},
          {"data", std::move(data)}};
}

json namespaceObject(const std::string& name, json labels, json annotations = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata", {{"name", name}, {"labels", std::move(labels)},
                        {"annotations", std::move(annotations)}}}};
}

// The REST API of a cluster with Linkerd and Istio installed, as GET answers.
class FakeCluster {
 public:
  FakeCluster() {
    const fs::path root = testing::sourceDir();
    json linkerd = yamlFile(root / "scenarios/seed-tutorial/linkerd-webhook.yaml");
    auto istio = core::parseYamlDocuments(
        testing::readFile(root / "scenarios/istio-revisions/webhooks.yaml"));
    json mutating = json::array({linkerd, (*istio)[0]});
    objects_["/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"] =
        json{{"items", mutating}};
    objects_["/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"] =
        json{{"items", json::array()}};
    add("/api/v1/namespaces/app-istio",
        namespaceObject("app-istio", {{"istio-injection", "enabled"},
                                      {"kubernetes.io/metadata.name", "app-istio"}}));
    add("/api/v1/namespaces/app-linkerd",
        namespaceObject("app-linkerd", {{"kubernetes.io/metadata.name", "app-linkerd"}},
                        {{"linkerd.io/inject", "enabled"}}));
    add("/api/v1/namespaces/linkerd/configmaps/linkerd-config",
        configMap("linkerd", "linkerd-config",
                  {{"values", testing::readFile(root / "scenarios/seed-tutorial/linkerd-values.yaml")}}));
    add("/api/v1/namespaces/istio-system/configmaps/istio-sidecar-injector",
        configMap("istio-system", "istio-sidecar-injector",
                  {{"config", testing::readFile(root / "injector/istio/sidecar-injector-config.yaml")},
                   {"values", testing::readFile(root / "injector/istio/values.json")}}));
    add("/api/v1/namespaces/istio-system/configmaps/istio",
        configMap("istio-system", "istio",
                  {{"mesh", testing::readFile(root / "injector/istio/mesh.yaml")}}));
  }
  void add(const std::string& path, json object) { objects_[path] = std::move(object); }
  void remove(const std::string& path) { objects_.erase(path); }

  ClusterGet get() {
    return [this](const std::string& path) -> core::Result<std::optional<json>> {
      paths_.push_back(path);
      auto it = objects_.find(path);
      if (it == objects_.end()) return std::optional<json>{};
      return std::optional<json>{it->second};
    };
  }
  [[nodiscard]] const std::vector<std::string>& paths() const { return paths_; }

 private:
  std::map<std::string, json> objects_;
  std::vector<std::string> paths_;
};

json pod(const std::string& ns) {
  json object = yamlFile(testing::sourceDir() / "scenarios/seed-tutorial/pod.yaml");
  object["metadata"]["namespace"] = ns;
  return object;
}

class LiveExplainTest : public ::testing::Test {
 protected:
  core::Result<LiveExplanation> explain(const std::string& ns, ExplainOptions explain = {}) {
    auto snapshot = readCluster(cluster_.get(), ns, "fake cluster");
    if (!snapshot.ok()) return snapshot.error();
    LiveExplainOptions options;
    options.explain = explain;
    options.injector_binary = HARNESS_INJECTOR_BINARY;
    options.work_dir = scratch_.path();
    options.cel_unavailable_reason = "no CEL in this test";
    return explainCreate(*snapshot, pod(ns), ns, options);
  }
  FakeCluster cluster_;
  testing::ScratchDir scratch_{"live-explain"};
};

TEST_F(LiveExplainTest, IdentifiesTheInjectorsAndTheirConfigMaps) {
  core::Webhook webhook;
  webhook.name = "rev.namespace.sidecar-injector.istio.io";
  webhook.client_config.service = core::ServiceReference{"istio-system", "istiod-canary", "/inject", 443};
  auto istio = identifyInjector(webhook);
  ASSERT_TRUE(istio);
  EXPECT_EQ(istio->profile, "istio");
  EXPECT_EQ(istio->config_maps,
            (std::vector<std::string>{"istio-sidecar-injector-canary", "istio-canary"}));
  webhook.name = "linkerd-proxy-injector.linkerd.io";
  webhook.client_config.service = core::ServiceReference{"linkerd", "linkerd-proxy-injector", "/", 443};
  EXPECT_EQ(identifyInjector(webhook)->profile, "linkerd");
  webhook.name = "policy.example.com";
  EXPECT_FALSE(identifyInjector(webhook));
}

TEST_F(LiveExplainTest, IstioNamespaceIsInjectedByIstioAndLinkerdDeclines) {
  auto explained = explain("app-istio");
  ASSERT_TRUE(explained.ok()) << explained.error().message;
  const std::string& text = explained->text;
  EXPECT_THAT(text, HasSubstr("CREATE pods v1 app-istio/simple-app-v1-7b9c6f5d4-<generated>\n"));
  EXPECT_THAT(text, HasSubstr("namespace app-istio: labels istio-injection=enabled,"));
  // Istio: the legacy namespace webhook matches; the revision ones are skipped by their clause.
  EXPECT_THAT(text, HasSubstr("mutating webhook namespace.sidecar-injector.istio.io "
                              "(configuration istio-sidecar-injector, round 0 index 2)\n"
                              "    match: matched\n"));
  EXPECT_THAT(text, HasSubstr("rev.namespace.sidecar-injector.istio.io (configuration "
                              "istio-sidecar-injector, round 0 index 0): skipped by "
                              "namespaceSelector: namespaceSelector `!istio-injection,istio.io/rev "
                              "in (default)`"));
  EXPECT_THAT(text, HasSubstr("istio injector's decision (offline, on the cluster's "
                              "istio-sidecar-injector and istio):\n"));
  // Linkerd's webhook is called too (its selector only excludes opted-out namespaces), and its
  // injector declines: nothing asks for injection.
  EXPECT_THAT(text, HasSubstr("linkerd injector's decision (offline, on the cluster's "
                              "linkerd-config):\n"));
  EXPECT_TRUE(explained->would_inject);
  const auto& webhooks = explained->json["webhooks"];
  std::map<std::string, std::string> decisions;
  for (const auto& entry : webhooks) {
    if (entry.contains("injector") && entry["injector"].contains("decision")) {
      decisions[entry["injector"]["profile"]] = entry["injector"]["decision"];
    }
  }
  EXPECT_EQ(decisions["istio"], "injected") << text;
  EXPECT_NE(decisions["linkerd"], "inject") << text;
  // Nothing but GETs of what explain needs.
  for (const auto& path : cluster_.paths()) {
    EXPECT_TRUE(path.starts_with("/api")) << path;
  }
}

TEST_F(LiveExplainTest, LinkerdNamespaceIsInjectedByLinkerdOnly) {
  ExplainOptions only_called;
  only_called.only_called = true;
  auto explained = explain("app-linkerd", only_called);
  ASSERT_TRUE(explained.ok()) << explained.error().message;
  EXPECT_THAT(explained->text, HasSubstr("linkerd-proxy-injector.linkerd.io"));
  EXPECT_THAT(explained->text, Not(HasSubstr("sidecar-injector.istio.io (")));
  EXPECT_THAT(explained->text, HasSubstr("(4 more webhook decisions not shown"));
  ASSERT_EQ(explained->json["webhooks"].size(), 1u);
  EXPECT_EQ(explained->json["webhooks"][0]["injector"]["decision"], "inject")
      << explained->text;
}

TEST_F(LiveExplainTest, AMissingConfigMapOrNamespaceIsSaid) {
  cluster_.remove("/api/v1/namespaces/linkerd/configmaps/linkerd-config");
  auto explained = explain("app-linkerd");
  ASSERT_TRUE(explained.ok()) << explained.error().message;
  EXPECT_THAT(explained->text,
              HasSubstr("linkerd injector's decision: unknown: ConfigMap linkerd/linkerd-config is "
                        "not in the cluster (or not readable)"));
  auto missing = explain("nowhere");
  ASSERT_TRUE(missing.ok()) << missing.error().message;
  EXPECT_THAT(missing->text, HasSubstr("namespace nowhere: does not exist"));
  EXPECT_THAT(missing->text, HasSubstr("namespaces \"nowhere\" not found"));
}


// Admission policies, as the cluster stores them (upstream's defaults, by kube-cel), narrated in
// admission order: the MutatingAdmissionPolicy before the mutating webhooks, the
// ValidatingAdmissionPolicy before the validating webhooks, each binding matched or not by the
// plugin's own matcher and decided by its own dispatcher.
class LiveExplainPolicyTest : public LiveExplainTest {
 protected:
  void SetUp() override {
    const fs::path binary = process::kubeBinDir() / "kube-cel";
    if (auto reason = testing::notBuiltReason(binary); !reason.empty()) GTEST_SKIP() << reason;
    auto started = cel::KubeCel::start(binary, scratch_ / "kube-cel.log");
    ASSERT_TRUE(started.ok()) << started.error().message;
    cel_ = std::move(started).value();
    auto admit = cel::policyObjectAdmitter(cel_);
    std::map<std::string, std::vector<json>> stored;
    auto documents = core::parseYamlDocuments(testing::readFile(
        testing::sourceDir() / "apiserver-sim/tests/live/testdata/policies.yaml"));
    ASSERT_TRUE(documents.ok()) << documents.error().message;
    for (const auto& document : *documents) {
      if (!isAdmissionPolicyObject(document)) continue;  // the Namespace, added below
      const std::string kind = document["kind"];
      auto admitted = admit(kind, document, nullptr, nullptr);
      ASSERT_TRUE(std::holds_alternative<json>(admitted))
          << std::get<core::Status>(admitted).message;
      std::string resource = kind;
      std::transform(resource.begin(), resource.end(), resource.begin(), ::tolower);
      resource = resource.ends_with("policy") ? resource.substr(0, resource.size() - 1) + "ies"
                                              : resource + "s";
      stored[resource].push_back(std::get<json>(admitted));
    }
    for (auto& [resource, items] : stored) {
      cluster_.add("/apis/admissionregistration.k8s.io/v1/" + resource, json{{"items", items}});
    }
    cluster_.add("/api/v1/namespaces/app-policy",
                 namespaceObject("app-policy", {{"policy", "enforced"},
                                                {"kubernetes.io/metadata.name", "app-policy"}}));
  }

  core::Result<LiveExplanation> explainWithPolicies(const std::string& ns) {
    auto snapshot = readCluster(cluster_.get(), ns, "fake cluster");
    if (!snapshot.ok()) return snapshot.error();
    LiveExplainOptions options;
    options.injector_binary = HARNESS_INJECTOR_BINARY;
    options.work_dir = scratch_.path();
    options.evaluator = cel::matchConditionEvaluator(cel_);
    options.validating_policies = cel::validatingPolicyDispatcher(cel_);
    options.mutating_policies = cel::mutatingPolicyDispatcher(cel_);
    return explainCreate(*snapshot, pod(ns), ns, options);
  }

  std::shared_ptr<cel::KubeCel> cel_;
};

TEST_F(LiveExplainPolicyTest, PoliciesInAdmissionOrderWithTheirDecisions) {
  auto explained = explainWithPolicies("app-policy");
  ASSERT_TRUE(explained.ok()) << explained.error().message;
  const std::string& text = explained->text;
  const auto map = text.find("  mutating admission policy add-label (binding add-label; "
                             "failurePolicy Fail): matched -> mutates the object:\n");
  ASSERT_NE(map, std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr("add /metadata/labels/mutated-by\n"));
  const auto vap = text.find(
      "  validating admission policy require-team (binding require-team; failurePolicy Fail; "
      "validationActions Deny): matched -> denied (422): pods ");
  ASSERT_NE(vap, std::string::npos) << text;
  EXPECT_THAT(text, HasSubstr(" is forbidden: ValidatingAdmissionPolicy 'require-team' with "
                              "binding 'require-team' denied request: pods need a team label\n"));
  EXPECT_THAT(text, HasSubstr("  validating admission policy never-bound: no "
                              "ValidatingAdmissionPolicyBinding names it: never evaluated\n"));
  // AllOrderedPlugins: MutatingAdmissionPolicy, MutatingAdmissionWebhook,
  // ValidatingAdmissionPolicy, ValidatingAdmissionWebhook.
  const auto first_webhook = text.find("mutating webhook ");
  const auto last_webhook = text.rfind("mutating webhook ");
  ASSERT_NE(first_webhook, std::string::npos);
  EXPECT_LT(map, first_webhook);
  EXPECT_GT(vap, last_webhook);
  EXPECT_EQ(explained->json["deniedByPolicy"], true);
  std::map<std::string, std::string> decisions;
  for (const auto& entry : explained->json["policies"]) {
    decisions[entry["policy"].get<std::string>()] = entry["decision"];
  }
  EXPECT_EQ(decisions, (std::map<std::string, std::string>{
                           {"add-label", "mutate"}, {"never-bound", "unbound"},
                           {"require-team", "deny"}}));

  // Elsewhere neither binding matches (their namespaceSelectors).
  auto elsewhere = explainWithPolicies("app-istio");
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.error().message;
  EXPECT_THAT(elsewhere->text,
              HasSubstr("validating admission policy require-team (binding require-team; "
                        "failurePolicy Fail; validationActions Deny): not matched: its "
                        "matchConstraints, the binding's matchResources or matchConditions "
                        "exclude this request\n"));
  EXPECT_THAT(elsewhere->text, HasSubstr("mutating admission policy add-label (binding "
                                         "add-label; failurePolicy Fail): not matched"));
  EXPECT_EQ(elsewhere->json["deniedByPolicy"], false);
}

TEST_F(LiveExplainTest, PoliciesWithoutCelAreListedNotEvaluated) {
  cluster_.add("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
               json{{"items", json::array({{{"metadata", {{"name", "p"}}},
                                            {"spec", {{"failurePolicy", "Ignore"}}}}})}});
  cluster_.add("/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
               json{{"items", json::array({{{"metadata", {{"name", "b"}}},
                                            {"spec", {{"policyName", "p"},
                                                      {"validationActions", {"Warn"}}}}}})}});
  auto explained = explain("app-istio");
  ASSERT_TRUE(explained.ok()) << explained.error().message;
  EXPECT_THAT(explained->text,
              HasSubstr("validating admission policy p (binding b; failurePolicy Ignore; "
                        "validationActions Warn): not evaluated (no CEL in this test)\n"));
}

}  // namespace
}  // namespace harness::sim::live
