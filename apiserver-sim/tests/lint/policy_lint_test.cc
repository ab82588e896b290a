// `apiserver-sim lint` on admission policies: each policy rule with objects that trip it and
// objects that do not, validation without and with kube-cel (upstream's own validation), params
// from files and from a cluster's (complete) facts, a scenario's policies, and the reports.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/yaml.h"
#include "harness/process/kube_bin_dir.h"
#include "harness/sim/cel.h"
#include "harness/sim/lint.h"
#include "harness/sim/lint_input.h"
#include "harness/testing/support.h"
#include "lint_test_support.h"

namespace harness::sim::lint {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

using testing_support::load;
using testing_support::withRule;

std::vector<Finding> lintYaml(const std::string& yaml, const LintOptions& options = {},
                              bool cluster = false) {
  auto loaded = load(yaml);
  loaded.input.facts.complete = cluster;
  return lint(loaded.input, options);
}

// A ValidatingAdmissionPolicy on pod CREATE; `spec_extra` is appended to its spec (indent 2).
std::string policy(const std::string& name, const std::string& spec_extra = "") {
  return "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingAdmissionPolicy\n"
         "metadata: {name: " + name + "}\nspec:\n"
         "  matchConstraints:\n    resourceRules: [{apiGroups: [\"\"], apiVersions: [v1], "
         "operations: [CREATE], resources: [pods]}]\n"
         "  validations: [{expression: \"has(object.metadata.labels)\"}]\n" + spec_extra;
}

std::string binding(const std::string& name, const std::string& policy_name,
                    const std::string& spec_extra = "  validationActions: [Deny]\n") {
  return "---\napiVersion: admissionregistration.k8s.io/v1\n"
         "kind: ValidatingAdmissionPolicyBinding\nmetadata: {name: " + name + "}\nspec:\n"
         "  policyName: " + policy_name + "\n" + spec_extra;
}

constexpr char kParamKind[] = "  paramKind: {apiVersion: v1, kind: ConfigMap}\n";
constexpr char kLimits[] =
    "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: limits, namespace: policy, "
    "labels: {policy: limits}}\ndata: {max: \"3\"}\n";

TEST(PolicyLintTest, APolicyWithoutBindingNeverRuns) {
  auto found = withRule(lintYaml(policy("require-labels")), "policy-without-binding");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::kWarning);
  EXPECT_EQ(found[0].object_kind, "ValidatingAdmissionPolicy");
  EXPECT_EQ(found[0].configuration, "require-labels");
  EXPECT_THAT(found[0].message, HasSubstr("no ValidatingAdmissionPolicyBinding names it"));
  EXPECT_TRUE(withRule(lintYaml(policy("require-labels") + binding("b", "require-labels")),
                       "policy-without-binding")
                  .empty());
  // A MutatingAdmissionPolicy's binding does not bind a validating policy of the same name.
  const std::string mutating_binding =
      "---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingAdmissionPolicyBinding\n"
      "metadata: {name: b}\nspec: {policyName: require-labels}\n";
  auto cross = lintYaml(policy("require-labels") + mutating_binding);
  EXPECT_EQ(withRule(cross, "policy-without-binding").size(), 1u);
  auto missing = withRule(cross, "binding-without-policy");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].object_kind, "MutatingAdmissionPolicyBinding");
  EXPECT_THAT(missing[0].message,
              HasSubstr("MutatingAdmissionPolicy \"require-labels\", which is not among the "
                        "files read"));
}

TEST(PolicyLintTest, ABindingNamingAMissingPolicyDoesNothing) {
  auto found = withRule(lintYaml(binding("b", "typo"), {}, /*cluster=*/true),
                        "binding-without-policy");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::kWarning);
  EXPECT_THAT(found[0].message, HasSubstr("\"typo\", which does not exist in the cluster"));
  EXPECT_TRUE(withRule(lintYaml(policy("typo") + binding("b", "typo")), "binding-without-policy")
                  .empty());
}

// kube-apiserver's validation (validation.go validateValidationActions, validateParamRef),
// checked by lint itself when kube-cel is not there.
TEST(PolicyLintTest, ValidationActionsAndParameterNotFoundActionAreRequired) {
  auto missing = withRule(lintYaml(policy("p") + binding("b", "p", "")), "invalid-configuration");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].severity, Severity::kError);
  EXPECT_EQ(missing[0].object_kind, "ValidatingAdmissionPolicyBinding");
  EXPECT_THAT(missing[0].message,
              HasSubstr("spec.validationActions: Required value: at least one validation action "
                        "is required"));
  auto both = withRule(lintYaml(policy("p") + binding("b", "p", "  validationActions: [Deny, Warn]\n")),
                       "invalid-configuration");
  ASSERT_EQ(both.size(), 1u);
  EXPECT_THAT(both[0].message, HasSubstr("must not contain both Deny and Warn"));
  auto no_action = withRule(
      lintYaml(policy("p", kParamKind) + kLimits +
               binding("b", "p", "  validationActions: [Deny]\n  paramRef: {name: limits}\n")),
      "invalid-configuration");
  ASSERT_EQ(no_action.size(), 1u);
  EXPECT_THAT(no_action[0].message,
              HasSubstr("spec.paramRef.parameterNotFoundAction: Required value"));
  EXPECT_TRUE(withRule(lintYaml(policy("p") + binding("b", "p", "  validationActions: [Warn, Audit]\n")),
                       "invalid-configuration")
                  .empty());
}

TEST(PolicyLintTest, AParamRefSelectingNothing) {
  const std::string bound_deny =
      policy("p", kParamKind) +
      binding("b", "p",
              "  validationActions: [Deny]\n  paramRef: {name: limits, namespace: policy, "
              "parameterNotFoundAction: Deny}\n");
  // From files: the param may exist in the cluster they are applied to.
  auto from_files = withRule(lintYaml(bound_deny), "policy-param-not-found");
  ASSERT_EQ(from_files.size(), 1u);
  EXPECT_EQ(from_files[0].severity, Severity::kInfo);
  // In a cluster it does not exist: every request the binding matches is denied.
  auto live = withRule(lintYaml(bound_deny, {}, true), "policy-param-not-found");
  ASSERT_EQ(live.size(), 1u);
  EXPECT_EQ(live[0].severity, Severity::kError);
  EXPECT_THAT(live[0].message, HasSubstr("v1/ConfigMap \"limits\" in namespace policy does not "
                                         "exist: with parameterNotFoundAction Deny"));
  EXPECT_THAT(live[0].message, HasSubstr("failurePolicy Fail denies it"));
  EXPECT_EQ(live[0].related, std::vector<std::string>{"ValidatingAdmissionPolicy/p"});
  EXPECT_TRUE(withRule(lintYaml(bound_deny + kLimits, {}, true), "policy-param-not-found").empty());
  // In another namespace it is not the param.
  std::string elsewhere = kLimits;
  elsewhere.replace(elsewhere.find("namespace: policy"), 17, "namespace: other");
  EXPECT_EQ(withRule(lintYaml(bound_deny + elsewhere, {}, true), "policy-param-not-found").size(),
            1u);
  // Allow: the policy is silently skipped (a warning).
  auto allow = withRule(
      lintYaml(policy("p", kParamKind) +
                   binding("b", "p",
                           "  validationActions: [Deny]\n  paramRef: {selector: {matchLabels: "
                           "{policy: limits}}, parameterNotFoundAction: Allow}\n"),
               {}, true),
      "policy-param-not-found");
  ASSERT_EQ(allow.size(), 1u);
  EXPECT_EQ(allow[0].severity, Severity::kWarning);
  EXPECT_THAT(allow[0].message, HasSubstr("silently not evaluated"));
  EXPECT_TRUE(withRule(lintYaml(policy("p", kParamKind) + kLimits +
                                    binding("b", "p",
                                            "  validationActions: [Deny]\n  paramRef: "
                                            "{selector: {matchLabels: {policy: limits}}, "
                                            "parameterNotFoundAction: Allow}\n"),
                                {}, true),
                       "policy-param-not-found")
                  .empty());
}

// A live cluster's custom resource params (lint_input.cc lists every paramKind the cluster
// serves, found through discovery): known, so a missing one is an error; a kind the cluster does
// not serve is the policy's configuration error, which failurePolicy decides.
TEST(PolicyLintTest, CustomResourceParamsOfALiveCluster) {
  const std::string bound =
      policy("p", "  paramKind: {apiVersion: example.com/v1, kind: Limit}\n") +
      binding("b", "p",
              "  validationActions: [Deny]\n  paramRef: {name: strict, namespace: policy, "
              "parameterNotFoundAction: Deny}\n");
  const std::string strict =
      "---\napiVersion: example.com/v1\nkind: Limit\nmetadata: {name: strict, namespace: "
      "policy}\nspec: {maxContainers: 1}\n";
  auto lintCluster = [](const std::string& yaml, std::optional<bool> served) {
    auto loaded = load(yaml);
    loaded.input.facts.complete = true;
    if (served) loaded.input.facts.param_kinds_served["example.com/v1/Limit"] = *served;
    return withRule(lint(loaded.input, {}), "policy-param-not-found");
  };
  // Served and listed: there, no finding; missing, an error as for a built-in kind.
  EXPECT_TRUE(lintCluster(bound + strict, true).empty());
  auto missing = lintCluster(bound, true);
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0].severity, Severity::kError);
  EXPECT_THAT(missing[0].message, HasSubstr("example.com/v1/Limit \"strict\" in namespace "
                                            "policy does not exist: with parameterNotFoundAction "
                                            "Deny"));
  // Not served by the cluster: the policy cannot be evaluated at all.
  auto unserved = lintCluster(bound, false);
  ASSERT_EQ(unserved.size(), 1u);
  EXPECT_EQ(unserved[0].severity, Severity::kError);
  EXPECT_THAT(unserved[0].message, HasSubstr("the cluster does not serve that kind"));
  EXPECT_THAT(unserved[0].message, HasSubstr("failed to find resource referenced by paramKind"));
  EXPECT_THAT(unserved[0].fix, HasSubstr("CustomResourceDefinition"));
  // Not listed (facts from somewhere that could not list the kind): only a note.
  auto unknown = lintCluster(bound, std::nullopt);
  ASSERT_EQ(unknown.size(), 1u);
  EXPECT_EQ(unknown[0].severity, Severity::kInfo);
}

// The resource of a kind: built-in from the table (no request), a custom resource from the
// cluster's discovery document, nothing for a group/version or kind the cluster does not serve.
TEST(PolicyLintTest, ResourceForKindUsesDiscoveryForCustomResources) {
  std::vector<std::string> asked;
  RestGet get = [&asked](const std::string& path) -> core::Result<std::optional<nlohmann::json>> {
    asked.push_back(path);
    if (path != "/apis/example.com/v1") return std::optional<nlohmann::json>{};
    return std::optional<nlohmann::json>{nlohmann::json::parse(R"({"kind": "APIResourceList",
        "resources": [{"name": "limits/status", "kind": "Limit", "namespaced": true},
                      {"name": "limits", "kind": "Limit", "namespaced": true},
                      {"name": "quotas", "kind": "Quota", "namespaced": false}]})")};
  };
  auto configmaps = resourceForKind(get, {"", "v1", "ConfigMap"});
  ASSERT_TRUE(configmaps.ok() && *configmaps);
  EXPECT_EQ((*configmaps)->resource.resource, "configmaps");
  EXPECT_TRUE(asked.empty());
  auto limits = resourceForKind(get, {"example.com", "v1", "Limit"});
  ASSERT_TRUE(limits.ok() && *limits);
  EXPECT_EQ(listPath((*limits)->resource), "/apis/example.com/v1/limits");
  EXPECT_TRUE((*limits)->namespaced);
  auto quotas = resourceForKind(get, {"example.com", "v1", "Quota"});
  ASSERT_TRUE(quotas.ok() && *quotas);
  EXPECT_FALSE((*quotas)->namespaced);
  auto other = resourceForKind(get, {"example.com", "v1", "Other"});
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(*other);
  auto unserved = resourceForKind(get, {"example.com", "v2", "Limit"});
  ASSERT_TRUE(unserved.ok());
  EXPECT_FALSE(*unserved);
}

TEST(PolicyLintTest, AParamKindBoundWithoutParamRefEvaluatesNullParams) {
  auto found = withRule(lintYaml(policy("p", kParamKind) + binding("b", "p")),
                        "policy-params-unset");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_THAT(found[0].message, HasSubstr("evaluated with `params` null"));
  EXPECT_TRUE(withRule(lintYaml(policy("p") + binding("b", "p")), "policy-params-unset").empty());
}

TEST(PolicyLintTest, AnEnforcingPolicyThatFailsOpen) {
  auto found = withRule(lintYaml(policy("p", "  failurePolicy: Ignore\n") + binding("b", "p")),
                        "policy-fail-open");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::kWarning);
  EXPECT_EQ(found[0].related, std::vector<std::string>{"ValidatingAdmissionPolicyBinding/b"});
  EXPECT_TRUE(withRule(lintYaml(policy("p", "  failurePolicy: Fail\n") + binding("b", "p")),
                       "policy-fail-open")
                  .empty());
  // Warn or Audit only: failing open changes nothing a user is refused.
  EXPECT_TRUE(withRule(lintYaml(policy("p", "  failurePolicy: Ignore\n") +
                                    binding("b", "p", "  validationActions: [Warn]\n")),
                       "policy-fail-open")
                  .empty());
}

// The matchConditions of a policy see namespaceObject as null (upstream's matchconditions.Matcher
// passes no namespace): a condition reading it fails on every request.
TEST(PolicyLintTest, AMatchConditionReadingTheNamespaceObject) {
  const std::string reads_namespace =
      "  matchConditions:\n"
      "    - {name: enforced, expression: \"namespaceObject.metadata.labels['policy'] == 'x'\"}\n";
  auto found = withRule(lintYaml(policy("p", reads_namespace) + binding("b", "p")),
                        "policy-match-condition-namespace");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::kWarning);
  EXPECT_THAT(found[0].message, HasSubstr("spec.matchConditions[0] (enforced) reads "
                                          "namespaceObject"));
  EXPECT_THAT(found[0].message, HasSubstr("failurePolicy Fail decides every request"));
  // A longer identifier, or the namespace read in a validation, is fine.
  const std::string other =
      "  matchConditions:\n    - {name: n, expression: \"!has(object.namespaceObjectX)\"}\n"
      "  variables: [{name: ns, expression: \"namespaceObject\"}]\n";
  EXPECT_TRUE(withRule(lintYaml(policy("p", other) + binding("b", "p")),
                       "policy-match-condition-namespace")
                  .empty());
}

TEST(PolicyLintTest, ReportsNameThePolicyObjects) {
  auto loaded = load(policy("require-labels"));
  const auto findings = lint(loaded.input, {});
  const std::string text = renderText(findings, 0, 0, loaded.input.policies.size());
  EXPECT_THAT(text, HasSubstr("warning policy-without-binding  ValidatingAdmissionPolicy "
                              "require-labels\n  from: test.yaml\n"));
  EXPECT_THAT(text, HasSubstr("0 configurations, 0 webhooks, 1 admission policy object: 0 "
                              "errors, 1 warning, 0 info\n"));
  const auto json = renderJson(findings, 0, 0, 1);
  EXPECT_EQ(json["findings"][0]["kind"], "ValidatingAdmissionPolicy");
  EXPECT_EQ(json["summary"]["policies"], 1);
  // The same policy twice is an error naming both sources.
  LoadedInput twice;
  auto document = core::parseYaml(policy("require-labels").substr(4));
  ASSERT_TRUE(document.ok());
  ASSERT_TRUE(addDocument(*document, "a.yaml", twice).ok());
  auto again = addDocument(*document, "b.yaml", twice);
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.error().message,
              HasSubstr("b.yaml: ValidatingAdmissionPolicy \"require-labels\" is also defined in "
                        "a.yaml"));
}

// The repository's policy scenarios: their objects (policies, bindings and params) are read from
// spec.objects, and every binding finds its policy and params.
TEST(PolicyLintTest, ScenarioPoliciesBindAndFindTheirParams) {
  const fs::path file = testing::sourceDir() / "scenarios/admission-policies/mutating-mutations.yaml";
  auto loaded = loadFiles({file});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->input.policies.size(), 4u);
  const auto findings = lint(loaded->input, {});
  for (const char* rule : {"policy-without-binding", "binding-without-policy",
                           "policy-param-not-found", "policy-params-unset", "invalid-configuration"}) {
    EXPECT_TRUE(withRule(findings, rule).empty()) << rule;
  }
}

// With kube-cel, the validation is upstream's own (the registry strategy's), so a field lint does
// not check itself is refused too, with kube-apiserver's words.
TEST(PolicyLintTest, WithKubeCelTheValidationIsUpstreams) {
  const fs::path binary = process::kubeBinDir() / "kube-cel";
  if (auto reason = testing::notBuiltReason(binary); !reason.empty()) GTEST_SKIP() << reason;
  testing::ScratchDir dir("policy-lint-cel");
  auto started = cel::KubeCel::start(binary, dir / "kube-cel.log");
  ASSERT_TRUE(started.ok()) << started.error().message;
  LintOptions options;
  options.validate_policy = cel::policyObjectAdmitter(std::move(started).value());
  auto missing = withRule(lintYaml(policy("p") + binding("b", "p", ""), options),
                          "invalid-configuration");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_THAT(missing[0].message, HasSubstr("spec.validationActions: Required value"));
  // A CEL expression that does not compile: only upstream's validation knows.
  auto bad = withRule(lintYaml(policy("q", "  matchConditions: [{name: c, expression: \"object.(\"}]\n") +
                                   binding("b", "q"),
                               options),
                      "invalid-configuration");
  ASSERT_EQ(bad.size(), 1u) << (bad.empty() ? "" : bad[0].message);
  EXPECT_EQ(bad[0].object_kind, "ValidatingAdmissionPolicy");
  EXPECT_THAT(bad[0].message, HasSubstr("spec.matchConditions[0].expression"));
  EXPECT_TRUE(withRule(lintYaml(policy("p") + binding("b", "p"), options), "invalid-configuration")
                  .empty());
}

}  // namespace
}  // namespace harness::sim::lint
