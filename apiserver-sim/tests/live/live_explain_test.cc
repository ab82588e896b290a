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
#include "harness/sim/html_report.h"
#include "harness/sim/live_explain.h"
#include "harness/testing/support.h"
#include "../scenario/headless_chromium.h"

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
    options.explain = std::move(explain);
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
  // The injector that injects predicts its webhook's patch (as a diff on the object as sent); the
  // one that declines has none.
  std::map<std::string, json> patches;
  for (const auto& entry : webhooks) {
    if (entry.contains("injector")) patches[entry["injector"]["profile"]] = entry["injector"];
  }
  ASSERT_TRUE(patches["istio"].contains("patch")) << text;
  EXPECT_THAT(patches["istio"]["patch"].dump(), HasSubstr("\"name\":\"istio-proxy\""));
  EXPECT_FALSE(patches["linkerd"].contains("patch")) << text;
  EXPECT_THAT(text, HasSubstr("    predicted patch (the injector's, offline; nothing is sent):\n"
                              "      add /metadata/annotations\n"));
  EXPECT_THAT(text, HasSubstr("      add /spec/containers/-\n          + {"));
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
  // The patch Linkerd's webhook would answer: the proxy container among what it adds.
  const json& patch = explained->json["webhooks"][0]["injector"]["patch"];
  ASSERT_TRUE(patch.is_array()) << explained->text;
  bool proxy = false;
  for (const auto& op : patch) {
    proxy = proxy || (op["op"] == "add" && op.contains("after") &&
                      op["after"].dump().find("\"name\":\"linkerd-proxy\"") != std::string::npos);
  }
  EXPECT_TRUE(proxy) << patch.dump(2);
  // Drawn in the report as a diff.
  const std::string html = renderHtmlReport(liveReport(*explained, "pod.yaml"), "live");
  EXPECT_THAT(html, HasSubstr("<p>predicted patch of linkerd-proxy-injector.linkerd.io (the "
                              "linkerd injector's, offline; nothing is sent):</p>"
                              "<pre class=\"diff\">"));
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
    storePolicies(testing::readFile(testing::sourceDir() /
                                    "apiserver-sim/tests/live/testdata/policies.yaml"));
    cluster_.add("/api/v1/namespaces/app-policy",
                 namespaceObject("app-policy", {{"policy", "enforced"},
                                                {"kubernetes.io/metadata.name", "app-policy"}}));
  }

  // The policies and bindings of `yaml` as the cluster stores them (defaulted by kube-cel's
  // registry strategy), added to the ones stored before.
  void storePolicies(const std::string& yaml) {
    auto admit = cel::policyObjectAdmitter(cel_);
    auto documents = core::parseYamlDocuments(yaml);
    ASSERT_TRUE(documents.ok()) << documents.error().message;
    for (const auto& document : *documents) {
      if (!isAdmissionPolicyObject(document)) continue;  // the Namespace, added by the caller
      const std::string kind = document["kind"];
      auto admitted = admit(kind, document, nullptr, nullptr);
      ASSERT_TRUE(std::holds_alternative<json>(admitted))
          << std::get<core::Status>(admitted).message;
      std::string resource = kind;
      std::transform(resource.begin(), resource.end(), resource.begin(), ::tolower);
      if (resource.ends_with("policy")) {
        resource.pop_back();
        resource += "ies";
      } else {
        resource += "s";
      }
      stored_[resource].push_back(std::get<json>(admitted));
    }
    for (auto& [resource, items] : stored_) {
      cluster_.add("/apis/admissionregistration.k8s.io/v1/" + resource, json{{"items", items}});
    }
  }

  // The entries of a live explanation's policies by "<policy>/<binding>".
  static std::map<std::string, json> policyEntries(const LiveExplanation& explained) {
    std::map<std::string, json> out;
    for (const auto& entry : explained.json["policies"]) {
      out[entry["policy"].get<std::string>() + "/" +
          (entry["binding"].is_string() ? entry["binding"].get<std::string>() : "")] = entry;
    }
    return out;
  }

  std::map<std::string, std::vector<json>> stored_;

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
                        "failurePolicy Fail; validationActions Deny): not matched: excluded by "
                        "the binding's matchResources.namespaceSelector: namespaceSelector "
                        "`policy=enforced`: namespace \"app-istio\" has labels "
                        "istio-injection=enabled,kubernetes.io/metadata.name=app-istio: no "
                        "match\n"));
  EXPECT_THAT(elsewhere->text, HasSubstr("mutating admission policy add-label (binding "
                                         "add-label; failurePolicy Fail): not matched"));
  EXPECT_EQ(elsewhere->json["deniedByPolicy"], false);
}

// A binding that does not match names the clause that excluded the request, as a webhook's
// skip does: which part (the policy's matchConstraints, the binding's matchResources, a
// matchCondition, the paramRef) from the plugin's own matcher, and the clause's lines.
constexpr char kClausePolicies[] = R"yaml(
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: pods}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  validations: [{expression: "true"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: by-object}
spec:
  policyName: pods
  validationActions: [Deny]
  matchResources:
    objectSelector: {matchExpressions: [{key: app, operator: In, values: [db, cache]}]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: by-exclusion}
spec:
  policyName: pods
  validationActions: [Deny]
  matchResources:
    excludeResourceRules: [{apiGroups: [""], apiVersions: ["*"], operations: ["*"], resources: [pods]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: by-names}
spec:
  policyName: pods
  validationActions: [Deny]
  matchResources:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods], resourceNames: [web-0]}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: matching}
spec:
  policyName: pods
  validationActions: [Deny]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: deployments-exact}
spec:
  matchConstraints:
    matchPolicy: Exact
    resourceRules: [{apiGroups: [apps], apiVersions: [v1], operations: [CREATE], resources: [deployments]}]
  validations: [{expression: "true"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: deployments-exact}
spec: {policyName: deployments-exact, validationActions: [Deny]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: conditional}
spec:
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  matchConditions:
    - {name: has-labels, expression: "has(object.metadata.labels)"}
    - {name: is-db, expression: "object.metadata.labels.app == 'db'"}
  validations: [{expression: "true"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: conditional}
spec: {policyName: conditional, validationActions: [Deny]}
)yaml";

TEST_F(LiveExplainPolicyTest, ABindingThatDoesNotMatchNamesTheClause) {
  storePolicies(kClausePolicies);
  auto explained = explainWithPolicies("app-istio");
  ASSERT_TRUE(explained.ok()) << explained.error().message;
  const std::string& text = explained->text;
  auto entries = policyEntries(*explained);
  auto excluded = [&](const std::string& id) {
    const json& entry = entries[id];
    EXPECT_EQ(entry["decision"], "not-matched") << id << ": " << text;
    return entry.value("excludedBy", json::object());
  };
  EXPECT_EQ(excluded("pods/by-object")["clause"], "objectSelector");
  EXPECT_THAT(text, HasSubstr("(binding by-object; failurePolicy Fail; validationActions Deny): "
                              "not matched: excluded by the binding's "
                              "matchResources.objectSelector: objectSelector `app in (cache,db)`:"));
  const json exclusion = excluded("pods/by-exclusion");
  EXPECT_EQ(exclusion["part"], "matchResources");
  EXPECT_EQ(exclusion["clause"], "excludeResourceRules");
  EXPECT_THAT(exclusion["deciding"][0].get<std::string>(), HasSubstr("excludeResourceRules[0] "))
      << exclusion;
  EXPECT_EQ(excluded("pods/by-names")["clause"], "resourceRules");
  EXPECT_THAT(text, HasSubstr("resourceRules[0]: its resourceNames [\"web-0\"] do not name the "
                              "object (no name yet: generateName)\n"));
  const json rules = excluded("deployments-exact/deployments-exact");
  EXPECT_EQ(rules["part"], "matchConstraints");
  EXPECT_EQ(rules["clause"], "resourceRules");
  EXPECT_THAT(text, HasSubstr("not matched: excluded by the policy's "
                              "matchConstraints.resourceRules: resourceRules[0]: "));
  EXPECT_THAT(text, HasSubstr("; matchPolicy Exact: equivalent resources are not considered\n"));
  const json condition = excluded("conditional/conditional");
  EXPECT_EQ(condition["part"], "matchConditions");
  EXPECT_EQ(condition["clause"], "is-db");
  EXPECT_THAT(text, HasSubstr("not matched: excluded by the policy's matchCondition is-db: "
                              "matchCondition \"is-db\": object.metadata.labels.app == 'db': "
                              "false\n"));
  // The binding that matches is evaluated (and admits), with no exclusion.
  EXPECT_EQ(entries["pods/matching"]["decision"], "admit") << text;
  EXPECT_FALSE(entries["pods/matching"].contains("excludedBy"));
}

// A policy whose paramKind is a custom resource: the kind's resource is found through the
// cluster's discovery (GET /apis/<group>/<version>), its objects listed, and the policy
// evaluated with the param its binding selects.
TEST_F(LiveExplainPolicyTest, ParamsOfACustomResourceKindAreReadThroughDiscovery) {
  cluster_.add("/apis/example.com/v1",
               json{{"kind", "APIResourceList"},
                    {"groupVersion", "example.com/v1"},
                    {"resources", json::array({{{"name", "limits/status"}, {"kind", "Limit"},
                                                {"namespaced", true}},
                                               {{"name", "limits"}, {"kind", "Limit"},
                                                {"namespaced", true}}})}});
  cluster_.add("/apis/example.com/v1/limits",
               json{{"items", json::array({{{"metadata", {{"name", "strict"},
                                                          {"namespace", "app-policy"}}},
                                            {"spec", {{"maxContainers", 0}}}}})}});
  storePolicies(R"yaml(
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: max-containers}
spec:
  paramKind: {apiVersion: example.com/v1, kind: Limit}
  matchConstraints:
    resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
  validations:
    - expression: "size(object.spec.containers) <= params.spec.maxContainers"
      messageExpression: "'at most ' + string(params.spec.maxContainers) + ' containers'"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: max-containers}
spec:
  policyName: max-containers
  validationActions: [Deny]
  paramRef: {name: strict, parameterNotFoundAction: Deny}
)yaml");
  auto explained = explainWithPolicies("app-policy");
  ASSERT_TRUE(explained.ok()) << explained.error().message;
  auto entries = policyEntries(*explained);
  EXPECT_EQ(entries["max-containers/max-containers"]["decision"], "deny") << explained->text;
  EXPECT_THAT(entries["max-containers/max-containers"].value("message", ""),
              HasSubstr("denied request: at most 0 containers"));
  EXPECT_TRUE(std::find(cluster_.paths().begin(), cluster_.paths().end(),
                        "/apis/example.com/v1/limits") != cluster_.paths().end());
  // Elsewhere the param (namespaced, looked up in the request's namespace) does not exist:
  // Deny fails the request with the plugin's message.
  auto elsewhere = explainWithPolicies("app-istio");
  ASSERT_TRUE(elsewhere.ok()) << elsewhere.error().message;
  EXPECT_THAT(policyEntries(*elsewhere)["max-containers/max-containers"].value("message", ""),
              HasSubstr("no params found for policy binding with `Deny` parameterNotFoundAction"))
      << elsewhere->text;
}

// `report --kubeconfig`: the live explanation drawn as the HTML report: the webhooks that would
// be called (nothing is sent) with the injectors' decisions, the skipped ones with their clause,
// the policies in their phases, a policy's denial as the failure.
TEST_F(LiveExplainPolicyTest, TheLiveReportDrawsTheExplanation) {
  auto explained = explainWithPolicies("app-policy");
  ASSERT_TRUE(explained.ok()) << explained.error().message;
  const RunReport report = liveReport(*explained, "pod.yaml");
  ASSERT_EQ(report.scenarios.size(), 1u);
  ASSERT_EQ(report.scenarios[0].steps.size(), 1u);
  EXPECT_EQ(report.scenarios[0].steps[0].status, StepStatus::kFailed);  // require-team denies
  const std::string html = renderHtmlReport(report, "live");
  EXPECT_THAT(html, HasSubstr(">would call (not sent)</text>"));
  EXPECT_THAT(html, HasSubstr(">linkerd injector: "));
  EXPECT_THAT(html, HasSubstr(">mutating policies</text>"));
  EXPECT_THAT(html, HasSubstr(">add-label: mutates the object</text>"));
  EXPECT_THAT(html, HasSubstr(">validating policies</text>"));
  EXPECT_THAT(html, HasSubstr(">require-team: denied (422)</text>"));
  EXPECT_THAT(html, HasSubstr("would be denied by ValidatingAdmissionPolicy require-team"));
  EXPECT_THAT(html, Not(HasSubstr(">persist, audit</text>")));
  // The decision table: a skipped webhook with its clause, the unbound policy.
  EXPECT_THAT(html, HasSubstr("<td>rev.namespace.sidecar-injector.istio.io</td>"));
  EXPECT_THAT(html, HasSubstr("<td>never-bound</td><td>no binding</td>"));
  EXPECT_THAT(html, HasSubstr("mutation of add-label (binding add-label):"));
  EXPECT_THAT(html, HasSubstr("linkerd injector's decision for "
                              "linkerd-proxy-injector.linkerd.io"));
  // Drawn by headless Chromium, as the scenario report is (html_report_test.cc).
  const fs::path browser = test::chromium();
  if (browser.empty()) GTEST_SKIP() << "chromium is not installed (apt-get install -y chromium)";
  const fs::path page = scratch_ / "live-report.html";
  testing::writeFile(page, html);
  const auto dom = test::runChromium(browser, page, scratch_.path(), {"--dump-dom"});
  ASSERT_EQ(dom.status, 0) << dom.err;
  EXPECT_THAT(dom.out, HasSubstr("data-rendered=\"ok\""));
  EXPECT_THAT(dom.out, HasSubstr("<table class=\"decisions\">"));
  EXPECT_THAT(dom.err, Not(HasSubstr("Uncaught")));
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
