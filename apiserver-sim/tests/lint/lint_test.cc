// `apiserver-sim lint`: every rule with a configuration that trips it and one that does not,
// the selector overlap it rests on, loading, the reports and exit codes, and the upstream
// configurations (Istio's webhooks as its chart renders them, Linkerd's as the seed tutorial's
// cluster shows it) keeping only true findings.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/core/yaml.h"
#include "harness/process/kube_bin_dir.h"
#include "harness/sim/cel.h"
#include "harness/sim/lint.h"
#include "harness/sim/lint_input.h"
#include "harness/sim/selector_overlap.h"
#include "harness/testing/support.h"
#include "lint_test_support.h"


namespace harness::sim::lint {
namespace {

namespace fs = std::filesystem;

using testing_support::load;
using testing_support::withRule;

std::vector<Finding> lintYaml(const std::string& yaml, const LintOptions& options = {}) {
  return lint(load(yaml).input, options);
}

// A MutatingWebhookConfiguration with one webhook on pod CREATE; `extra` is appended to the
// webhook (indented by 4).
std::string mutating(const std::string& config, const std::string& webhook,
                     const std::string& extra = "", const std::string& service_ns = "mesh") {
  return "---\napiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
         "metadata: {name: " + config + "}\nwebhooks:\n  - name: " + webhook +
         "\n    clientConfig: {service: {namespace: " + service_ns + ", name: " + config +
         "}}\n    rules: [{operations: [CREATE], apiGroups: [\"\"], apiVersions: [v1], resources: "
         "[pods]}]\n    sideEffects: None\n    admissionReviewVersions: [v1]\n" + extra;
}

std::string validating(const std::string& config, const std::string& webhook,
                       const std::string& extra, const std::string& resources = "[pods]") {
  return "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
         "metadata: {name: " + config + "}\nwebhooks:\n  - name: " + webhook +
         "\n    clientConfig: {url: \"https://policy.example.com/validate\"}\n"
         "    rules: [{operations: [CREATE, UPDATE], apiGroups: [\"\", apps], apiVersions: [v1], "
         "resources: " + resources + "}]\n    sideEffects: None\n    admissionReviewVersions: [v1]\n" +
         extra;
}

constexpr char kIgnoreOutsideKubeSystem[] =
    "    failurePolicy: Ignore\n";

// --- selector overlap ---

core::LabelSelector selector(const std::string& yaml) {
  // Under a key: a document starting with `{` is read as JSON (core/yaml.h).
  auto document = core::parseYaml("selector: " + yaml);
  EXPECT_TRUE(document.ok()) << yaml << ": " << document.error().message;
  if (!document.ok()) return core::LabelSelector::nothing();
  auto parsed = core::LabelSelector::parse((*document)["selector"]);
  EXPECT_TRUE(parsed.ok()) << yaml << ": " << parsed.error().message;
  return parsed.ok() ? *parsed : core::LabelSelector::nothing();
}

TEST(SelectorOverlapTest, FindsLabelsBothSelectorsMatchOrSaysNoneExist) {
  const auto istio = selector("{matchLabels: {istio-injection: enabled}}");
  const auto linkerd = selector(
      "{matchExpressions: [{key: config.linkerd.io/admission-webhooks, operator: NotIn, values: "
      "[disabled]}]}");
  auto both = commonLabels({&istio, &linkerd});
  ASSERT_TRUE(both);
  EXPECT_EQ(formatLabels(*both), "istio-injection=enabled");
  const auto not_istio = selector("{matchExpressions: [{key: istio-injection, operator: DoesNotExist}]}");
  EXPECT_FALSE(commonLabels({&istio, &not_istio}));
  const auto a_or_b = selector("{matchExpressions: [{key: k, operator: In, values: [a, b]}]}");
  const auto not_a = selector("{matchExpressions: [{key: k, operator: NotIn, values: [a]}]}");
  const auto not_b = selector("{matchExpressions: [{key: k, operator: NotIn, values: [b]}]}");
  EXPECT_EQ(formatLabels(*commonLabels({&a_or_b, &not_a})), "k=b");
  EXPECT_FALSE(commonLabels({&a_or_b, &not_a, &not_b}));
  const auto exists = selector("{matchExpressions: [{key: k, operator: Exists}]}");
  EXPECT_EQ(formatLabels(*commonLabels({&exists, &not_a})), "k=x");
  const auto nothing = core::LabelSelector::nothing();
  EXPECT_FALSE(commonLabels({&nothing}));
  // Fixed labels cannot be dropped or changed.
  const auto not_system = selector(
      "{matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: "
      "[kube-system]}]}");
  EXPECT_FALSE(commonLabels({&not_system}, {{"kubernetes.io/metadata.name", "kube-system"}}));
  EXPECT_TRUE(commonLabels({&not_system}, {{"kubernetes.io/metadata.name", "apps"}}));
}

// --- invalid-configuration ---

TEST(LintTest, InvalidConfigurationIsAnError) {
  std::string bad = mutating("bad", "bad.example.com");
  bad.replace(bad.find("    sideEffects: None\n"), 22, "");
  auto found = withRule(lintYaml(bad), "invalid-configuration");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::kError);
  EXPECT_NE(found[0].message.find("webhooks[0].sideEffects: Required value"), std::string::npos)
      << found[0].message;
  EXPECT_TRUE(withRule(lintYaml(mutating("good", "good.example.com")), "invalid-configuration")
                  .empty());
}

// --- multiple-injectors ---

constexpr char kLinkerdSelector[] =
    "    failurePolicy: Ignore\n"
    "    namespaceSelector:\n"
    "      matchExpressions:\n"
    "        - {key: config.linkerd.io/admission-webhooks, operator: NotIn, values: [disabled]}\n"
    "        - {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}\n";
constexpr char kIstioSelector[] =
    "    namespaceSelector: {matchLabels: {istio-injection: enabled}}\n";

TEST(LintTest, TwoInjectorsOnTheSamePodsAreFoundWithLabelsAndAFix) {
  auto found = withRule(
      lintYaml(mutating("linkerd-proxy-injector-webhook-config", "linkerd-proxy-injector.linkerd.io",
                        kLinkerdSelector, "linkerd") +
               mutating("istio-sidecar-injector", "namespace.sidecar-injector.istio.io",
                        kIstioSelector, "istio-system")),
      "multiple-injectors");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].webhook, "linkerd-proxy-injector.linkerd.io");  // the second called
  EXPECT_NE(found[0].message.find("a namespace labelled istio-injection=enabled"),
            std::string::npos)
      << found[0].message;
  EXPECT_NE(found[0].fix.find("add {key: istio-injection, operator: DoesNotExist} to the "
                              "namespaceSelector of linkerd-proxy-injector-webhook-config/"),
            std::string::npos)
      << found[0].fix;
}

TEST(LintTest, InjectorsWithDisjointSelectorsAreNotFound) {
  const std::string linkerd_excluding_istio =
      std::string(kLinkerdSelector) + "        - {key: istio-injection, operator: DoesNotExist}\n";
  EXPECT_TRUE(withRule(lintYaml(mutating("linkerd", "linkerd.example.com",
                                         linkerd_excluding_istio, "linkerd") +
                                mutating("istio", "istio.example.com", kIstioSelector,
                                         "istio-system")),
                       "multiple-injectors")
                  .empty());
}

// --- self-lockout ---

TEST(LintTest, FailWebhookOnItsOwnNamespacesPodsLocksItselfOut) {
  auto found = withRule(lintYaml(mutating("policy", "policy.example.com", "", "policy")),
                        "self-lockout");
  ASSERT_EQ(found.size(), 2u);  // its own namespace, and kube-system
  EXPECT_EQ(found[0].severity, Severity::kError);
  EXPECT_NE(found[0].message.find("Its own pods run in namespace policy"), std::string::npos);
  EXPECT_NE(found[0].fix.find("values: [policy, kube-system]"), std::string::npos);
  EXPECT_NE(found[1].message.find("pod creation in kube-system"), std::string::npos);
}

TEST(LintTest, ExcludedNamespacesIgnoreOrExcludedPodsDoNotLockOut) {
  const std::string excluded =
      "    namespaceSelector:\n      matchExpressions:\n"
      "        - {key: kubernetes.io/metadata.name, operator: NotIn, values: [policy, kube-system]}\n";
  EXPECT_TRUE(
      withRule(lintYaml(mutating("policy", "policy.example.com", excluded, "policy")), "self-lockout")
          .empty());
  EXPECT_TRUE(withRule(lintYaml(mutating("policy", "policy.example.com", kIgnoreOutsideKubeSystem,
                                         "policy")),
                       "self-lockout")
                  .empty());
  // Its pods (the Service's selector) are excluded by the objectSelector, kube-system by label.
  const std::string own_pods_excluded =
      "    namespaceSelector:\n      matchExpressions:\n"
      "        - {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}\n"
      "    objectSelector:\n      matchExpressions:\n"
      "        - {key: app, operator: NotIn, values: [policy-webhook]}\n";
  const std::string service =
      "---\napiVersion: v1\nkind: Service\nmetadata: {name: policy, namespace: policy}\n"
      "spec: {selector: {app: policy-webhook}}\n";
  EXPECT_TRUE(withRule(lintYaml(service + mutating("policy", "policy.example.com",
                                                   own_pods_excluded, "policy")),
                       "self-lockout")
                  .empty());
  // Without the Service, its pods' labels are unknown: a pod without labels is matched.
  EXPECT_EQ(withRule(lintYaml(mutating("policy", "policy.example.com", own_pods_excluded, "policy")),
                     "self-lockout")
                .size(),
            1u);
  // The Namespace's own labels count: opted out by label.
  const std::string opt_out =
      "    namespaceSelector:\n      matchExpressions:\n"
      "        - {key: policy.example.com/ignore, operator: DoesNotExist}\n";
  const std::string namespaces =
      "---\napiVersion: v1\nkind: Namespace\nmetadata: {name: policy, labels: "
      "{policy.example.com/ignore: \"true\"}}\n---\napiVersion: v1\nkind: Namespace\nmetadata: "
      "{name: kube-system, labels: {policy.example.com/ignore: \"true\"}}\n";
  EXPECT_TRUE(withRule(lintYaml(namespaces + mutating("policy", "policy.example.com", opt_out,
                                                      "policy")),
                       "self-lockout")
                  .empty());
}

// --- fail-closed-all-namespaces ---

TEST(LintTest, FailWithoutNamespaceExclusionIsAWarning) {
  auto found = lintYaml(validating("deploy-policy", "deployments.example.com", "",
                                   "[deployments]"));
  auto fail = withRule(found, "fail-closed-all-namespaces");
  ASSERT_EQ(fail.size(), 1u);
  EXPECT_EQ(fail[0].severity, Severity::kWarning);
  EXPECT_TRUE(withRule(found, "self-lockout").empty());  // no pods
  const std::string excluded =
      "    namespaceSelector:\n      matchExpressions:\n"
      "        - {key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}\n";
  EXPECT_TRUE(withRule(lintYaml(validating("deploy-policy", "deployments.example.com", excluded,
                                           "[deployments]")),
                       "fail-closed-all-namespaces")
                  .empty());
  // Cluster-scoped rules ignore the namespaceSelector.
  const std::string cluster_rules =
      "---\napiVersion: admissionregistration.k8s.io/v1\nkind: ValidatingWebhookConfiguration\n"
      "metadata: {name: nodes}\nwebhooks:\n  - name: nodes.example.com\n"
      "    clientConfig: {url: \"https://nodes.example.com/\"}\n"
      "    rules: [{operations: [CREATE], apiGroups: [\"\"], apiVersions: [v1], resources: [nodes], "
      "scope: Cluster}]\n    sideEffects: None\n    admissionReviewVersions: [v1]\n";
  EXPECT_TRUE(withRule(lintYaml(cluster_rules), "fail-closed-all-namespaces").empty());
}

// --- timeouts-exceed-deadline ---

TEST(LintTest, TimeoutsAddingUpPastTheDeadlineAreFound) {
  auto webhook = [](const std::string& name, int timeout, const std::string& more = "") {
    return mutating(name, name + ".example.com",
                    kIgnoreOutsideKubeSystem + std::string("    timeoutSeconds: ") +
                        std::to_string(timeout) + "\n" + more);
  };
  auto found = withRule(lintYaml(webhook("a", 25) + webhook("b", 25) + webhook("c", 25)),
                        "timeouts-exceed-deadline");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("75s in all, above the request's 60s deadline"),
            std::string::npos)
      << found[0].message;
  EXPECT_TRUE(withRule(lintYaml(webhook("a", 10) + webhook("b", 10) + webhook("c", 10)),
                       "timeouts-exceed-deadline")
                  .empty());
  // Selectors that never meet: at most two of the three on one pod.
  const std::string opt_in = "    objectSelector: {matchLabels: {team: x}}\n";
  const std::string opt_out =
      "    objectSelector: {matchExpressions: [{key: team, operator: DoesNotExist}]}\n";
  EXPECT_TRUE(withRule(lintYaml(webhook("a", 25, opt_in) + webhook("b", 25, opt_out) +
                                webhook("c", 25)),
                       "timeouts-exceed-deadline")
                  .empty());
  // IfNeeded counts twice (round 1); validating webhooks run in parallel: the longest counts.
  const std::string if_needed = "    reinvocationPolicy: IfNeeded\n";
  const std::string short_validating =
      validating("v1", "v1.example.com", "    failurePolicy: Ignore\n    timeoutSeconds: 3\n");
  const std::string long_validating =
      validating("v2", "v2.example.com", "    failurePolicy: Ignore\n    timeoutSeconds: 5\n");
  EXPECT_TRUE(withRule(lintYaml(webhook("a", 20, if_needed) + webhook("b", 20)),
                       "timeouts-exceed-deadline")
                  .empty());  // 60s: not above
  found = withRule(lintYaml(webhook("a", 20, if_needed) + webhook("b", 20) + short_validating +
                            long_validating),
                   "timeouts-exceed-deadline");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("65s in all"), std::string::npos) << found[0].message;
  LintOptions longer;
  longer.request_timeout = std::chrono::seconds(120);
  EXPECT_TRUE(withRule(lintYaml(webhook("a", 25) + webhook("b", 25) + webhook("c", 25), longer),
                       "timeouts-exceed-deadline")
                  .empty());
}

// --- dry-run-side-effects ---

TEST(LintTest, SideEffectsThatBreakDryRun) {
  std::string some = mutating("audit", "audit.example.com", kIgnoreOutsideKubeSystem);
  some.replace(some.find("sideEffects: None"), 17, "sideEffects: Some");
  auto found = withRule(lintYaml(some), "dry-run-side-effects");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("does not support dry run"), std::string::npos);
  std::string on_dry_run = mutating("audit", "audit.example.com", kIgnoreOutsideKubeSystem);
  on_dry_run.replace(on_dry_run.find("sideEffects: None"), 17, "sideEffects: NoneOnDryRun");
  EXPECT_TRUE(withRule(lintYaml(on_dry_run), "dry-run-side-effects").empty());
}

// --- reinvocation-order ---

TEST(LintTest, AnEarlierNeverMutatorMissesALaterOnesChanges) {
  const std::string never = kIgnoreOutsideKubeSystem;
  const std::string if_needed = std::string(kIgnoreOutsideKubeSystem) +
                                "    reinvocationPolicy: IfNeeded\n";
  auto found = withRule(lintYaml(mutating("a-injector", "inject.example.com", never) +
                                 mutating("b-init", "init.example.com", if_needed)),
                        "reinvocation-order");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].webhook, "inject.example.com");
  EXPECT_NE(found[0].message.find("is called before b-init/init.example.com"), std::string::npos);
  // The reader last and reinvoked: nothing to say.
  EXPECT_TRUE(withRule(lintYaml(mutating("a-injector", "inject.example.com", if_needed) +
                                mutating("b-init", "init.example.com", if_needed)),
                       "reinvocation-order")
                  .empty());
  // An IfNeeded webhook reinvoked after a later Never one: the later one misses round 1.
  found = withRule(lintYaml(mutating("a-init", "init.example.com", if_needed) +
                            mutating("b-injector", "inject.example.com", never)),
                   "reinvocation-order");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].webhook, "inject.example.com");
  EXPECT_NE(found[0].message.find("never sees what that second call adds"), std::string::npos);
  // Different resources never meet.
  std::string deployments = mutating("b-init", "init.example.com", if_needed);
  deployments.replace(deployments.find("apiGroups: [\"\"]"), 15, "apiGroups: [apps]");
  deployments.replace(deployments.find("[pods]"), 6, "[deployments]");
  EXPECT_TRUE(withRule(lintYaml(mutating("a-injector", "inject.example.com", never) + deployments),
                       "reinvocation-order")
                  .empty());
}

// --- object-selector-bypass ---

TEST(LintTest, ObjectSelectorOptOutsOfValidatingWebhooksAreBypassable) {
  const std::string opt_out =
      "    failurePolicy: Ignore\n    objectSelector:\n      matchExpressions:\n"
      "        - {key: policy.example.com/skip, operator: DoesNotExist}\n";
  auto found = withRule(lintYaml(validating("policy", "policy.example.com", opt_out)),
                        "object-selector-bypass");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::kWarning);
  EXPECT_NE(found[0].message.find("skips objects labelled policy.example.com/skip"),
            std::string::npos);
  found = withRule(lintYaml(mutating("inject", "inject.example.com", opt_out)),
                   "object-selector-bypass");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::kInfo);
  EXPECT_TRUE(withRule(lintYaml(validating("policy", "policy.example.com",
                                           "    failurePolicy: Ignore\n")),
                       "object-selector-bypass")
                  .empty());
}

// --- match-conditions-never-true ---

std::string withCondition(const std::string& expression) {
  return mutating("conditions", "conditions.example.com",
                  std::string(kIgnoreOutsideKubeSystem) +
                      "    matchConditions:\n      - name: only\n        expression: " +
                      core::toYaml(expression));
}

TEST(LintTest, MatchConditionsWithoutCelSayTheyWereSkipped) {
  LintOptions options;
  options.cel_unavailable_reason = "kube-cel is not built (x)";
  auto found = withRule(lintYaml(withCondition("request.resource.resource == 'deployments'"),
                                 options),
                        "match-conditions-never-true");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::kInfo);
  EXPECT_NE(found[0].message.find("Skipped: its 1 matchConditions need CEL, and kube-cel is not "
                                  "built (x)"),
            std::string::npos);
}

class LintRealCelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path binary = process::kubeBinDir() / "kube-cel";
    if (auto reason = testing::notBuiltReason(binary); !reason.empty()) GTEST_SKIP() << reason;
    auto started = cel::KubeCel::start(binary, dir_ / "kube-cel.log");
    ASSERT_TRUE(started.ok()) << started.error().message;
    options_.evaluator = cel::matchConditionEvaluator(std::move(started).value());
  }
  testing::ScratchDir dir_{"lint-cel"};
  LintOptions options_;
};

TEST_F(LintRealCelTest, AConditionFalseForEveryRequestTheRulesAdmitIsFound) {
  auto found = withRule(lintYaml(withCondition("request.resource.resource == 'deployments'"),
                                 options_),
                        "match-conditions-never-true");
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].severity, Severity::kWarning);
  EXPECT_NE(found[0].message.find("false for every request they admit (CREATE pods)"),
            std::string::npos)
      << found[0].message;
  EXPECT_TRUE(withRule(lintYaml(withCondition("request.resource.resource == 'pods'"), options_),
                       "match-conditions-never-true")
                  .empty());
  // Depends on the object: not decided from the rules.
  EXPECT_TRUE(withRule(lintYaml(withCondition("object.metadata.name == 'x'"), options_),
                       "match-conditions-never-true")
                  .empty());
  EXPECT_TRUE(withRule(lintYaml(withCondition("request.operation == 'CREATE' && "
                                              "request.userInfo.username == 'admin'"),
                                options_),
                       "match-conditions-never-true")
                  .empty());
  EXPECT_EQ(withRule(lintYaml(withCondition("request.operation == 'UPDATE'"), options_),
                     "match-conditions-never-true")
                .size(),
            1u);
}

// --- loading, reports, exit codes ---

TEST(LintInputTest, FoldersListsScenariosAndDuplicates) {
  testing::ScratchDir dir("lint");
  fs::create_directories(dir.path() / "sub");
  std::ofstream(dir.path() / "sub" / "webhooks.yaml")
      << "apiVersion: v1\nkind: List\nitems:\n" << "- " << "{apiVersion: v1, kind: Namespace, "
      << "metadata: {name: mesh, labels: {team: a}}}\n";
  std::ofstream(dir / "a.yaml") << mutating("one", "one.example.com");
  std::ofstream(dir / "template.yaml") << "{{ if .Values.x }}\nkey: [\n";
  auto loaded = loadFiles({dir.path()});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  EXPECT_EQ(loaded->input.configurations.size(), 1u);
  EXPECT_EQ(loaded->input.facts.namespaces.at("mesh").at("team"), "a");
  ASSERT_EQ(loaded->skipped.size(), 1u);
  EXPECT_NE(loaded->skipped[0].find("template.yaml"), std::string::npos);
  // Named on the command line, the same file is an error.
  EXPECT_FALSE(loadFiles({dir / "template.yaml"}).ok());
  std::ofstream(dir / "b.yaml") << mutating("one", "other.example.com");
  auto duplicate = loadFiles({dir.path()});
  ASSERT_FALSE(duplicate.ok());
  EXPECT_NE(duplicate.error().message.find("MutatingWebhookConfiguration \"one\" is also defined in"),
            std::string::npos)
      << duplicate.error().message;
  std::ofstream(dir / "b.yaml")
      << "apiVersion: admissionregistration.k8s.io/v1\nkind: MutatingWebhookConfiguration\n"
         "metadata: {name: two}\nwebhooks: [{name: x.example.com, timeoutSeconds: \"10\"}]\n";
  auto bad = loadFiles({dir / "b.yaml"});
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("b.yaml"), std::string::npos);
  EXPECT_NE(bad.error().message.find("timeoutSeconds"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(loadFiles({dir / "missing.yaml"}).ok());
}

TEST(LintInputTest, ScenarioFilesGiveTheirConfigurationsAndNamespaces) {
  const fs::path seed = testing::sourceDir() / "scenarios/seed-tutorial/scenario.yaml";
  auto loaded = loadFiles({seed});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_EQ(loaded->input.configurations.size(), 1u);
  EXPECT_EQ(loaded->input.configurations[0].configuration.name,
            "linkerd-proxy-injector-webhook-config");
  EXPECT_EQ(loaded->input.facts.namespaces.at("linkerd").at("config.linkerd.io/admission-webhooks"),
            "disabled");
}

TEST(LintReportTest, TextJsonAndExitCodes) {
  const auto findings = lintYaml(mutating("policy", "policy.example.com", "", "policy"));
  const std::string text = renderText(findings, 1, 1);
  EXPECT_NE(text.find("error   self-lockout  mutating webhook policy.example.com "
                      "(MutatingWebhookConfiguration policy)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("  fix: "), std::string::npos);
  EXPECT_NE(text.find("1 configuration, 1 webhook: 2 errors, 0 warnings, 0 info"),
            std::string::npos)
      << text;
  const auto json = renderJson(findings, 1, 1);
  EXPECT_EQ(json["summary"]["error"], 2);
  EXPECT_EQ(json["findings"][0]["rule"], "self-lockout");
  EXPECT_EQ(json["findings"][0]["severity"], "error");
  EXPECT_FALSE(json["findings"][0]["fix"].get<std::string>().empty());
  EXPECT_EQ(exitCode(findings, Severity::kError), 1);
  EXPECT_EQ(exitCode(findings, std::nullopt), 0);
  const auto warnings = lintYaml(validating("d", "d.example.com", "", "[deployments]"));
  EXPECT_EQ(exitCode(warnings, Severity::kError), 0);
  EXPECT_EQ(exitCode(warnings, Severity::kWarning), 1);
  EXPECT_EQ(parseSeverity("warning"), Severity::kWarning);
  EXPECT_FALSE(parseSeverity("none"));
}

// --- upstream configurations ---

TEST(LintUpstreamTest, IstiosRenderedWebhooksHaveNoOverlapLockoutOrDeadlineFinding) {
  const fs::path istio = testing::sourceDir() / "scenarios/istio-revisions/webhooks.yaml";
  auto loaded = loadFiles({istio});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  ASSERT_GE(loaded->input.configurations.size(), 3u);
  const auto findings = lint(loaded->input, {});
  // Istio's revision webhooks are disjoint by design; opt-in selectors keep kube-system out.
  for (const auto& finding : findings) {
    EXPECT_NE(finding.severity, Severity::kError) << finding.rule << ": " << finding.message;
    EXPECT_NE(finding.rule, "multiple-injectors") << finding.message;
    EXPECT_NE(finding.rule, "reinvocation-order") << finding.message;
    EXPECT_NE(finding.rule, "timeouts-exceed-deadline") << finding.message;
  }
  // Its `sidecar.istio.io/inject notin (false)` opt-out is reported, as info, on mutating hooks.
  auto opt_outs = withRule(findings, "object-selector-bypass");
  ASSERT_FALSE(opt_outs.empty());
  for (const auto& finding : opt_outs) EXPECT_EQ(finding.severity, Severity::kInfo);
}

TEST(LintUpstreamTest, LinkerdBesideIstioOverlapsInIstioNamespaces) {
  const fs::path root = testing::sourceDir();
  auto loaded = loadFiles({root / "scenarios/istio-revisions/webhooks.yaml",
                           root / "scenarios/seed-tutorial/scenario.yaml"});
  ASSERT_TRUE(loaded.ok()) << loaded.error().message;
  const auto findings = lint(loaded->input, {});
  auto overlaps = withRule(findings, "multiple-injectors");
  ASSERT_FALSE(overlaps.empty());
  for (const auto& finding : overlaps) {
    EXPECT_EQ(finding.webhook, "linkerd-proxy-injector.linkerd.io") << finding.message;
  }
  // Linkerd's own namespace is labelled config.linkerd.io/admission-webhooks=disabled and its
  // failurePolicy is Ignore: no lockout.
  EXPECT_TRUE(withRule(findings, "self-lockout").empty());
}

}  // namespace
}  // namespace harness::sim::lint
