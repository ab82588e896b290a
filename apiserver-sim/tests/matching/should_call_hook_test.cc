// ShouldCallHook: a port of kubernetes/apiserver pkg/admission/plugin/webhook/generic/
// webhook_test.go TestShouldCallHook (with its fake equivalent-resource mapper), then the
// evaluation order, error surfacing and explanations of docs/admission-chain.md §3 against the
// built-in resource table.

#include <cctype>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/sim/matching.h"

namespace harness::sim {
namespace {

using nlohmann::json;

core::GroupVersionResource gvr(const std::string& g, const std::string& v, const std::string& r) {
  return {g, v, r};
}
core::GroupVersionKind gvk(const std::string& g, const std::string& v, const std::string& k) {
  return {g, v, k};
}

// runtime.NewEquivalentResourceRegistryWithIdentity with deployments co-located in all groups,
// and the RegisterKindFor calls of TestShouldCallHook, in the same order.
EquivalentResourceLookup upstreamTestMapper() {
  struct Entry {
    core::GroupVersionResource resource;
    std::string subresource;
    core::GroupVersionKind kind;
  };
  const std::vector<Entry> registered = {
      {gvr("extensions", "v1beta1", "deployments"), "", gvk("extensions", "v1beta1", "Deployment")},
      {gvr("apps", "v1", "deployments"), "", gvk("apps", "v1", "Deployment")},
      {gvr("apps", "v1beta1", "deployments"), "", gvk("apps", "v1beta1", "Deployment")},
      {gvr("apps", "v1alpha1", "deployments"), "", gvk("apps", "v1alpha1", "Deployment")},
      {gvr("extensions", "v1beta1", "deployments"), "scale", gvk("extensions", "v1beta1", "Scale")},
      {gvr("apps", "v1", "deployments"), "scale", gvk("autoscaling", "v1", "Scale")},
      {gvr("apps", "v1beta1", "deployments"), "scale", gvk("apps", "v1beta1", "Scale")},
      {gvr("apps", "v1alpha1", "deployments"), "scale", gvk("apps", "v1alpha1", "Scale")},
      // invalid kinds, to trigger an error
      {gvr("example.com", "v1", "widgets"), "", gvk("", "", "")},
      {gvr("example.com", "v2", "widgets"), "", gvk("", "", "")},
  };
  auto key = [](const core::GroupVersionResource& r) {
    return r.resource == "deployments" ? std::string("/deployments") : r.group + "/" + r.resource;
  };
  return
      [registered, key](const core::GroupVersionResource& resource, std::string_view subresource) {
        std::vector<core::ResourceInfo> out;
        for (const auto& e : registered) {
          if (key(e.resource) == key(resource) && e.subresource == subresource) {
            out.push_back({e.resource, e.subresource, e.kind, true});
          }
        }
        return out;
      };
}

core::RuleWithOperations rule(const std::string& group, const std::string& version,
                              std::vector<std::string> resources) {
  core::RuleWithOperations r;
  r.operations = {"*"};
  r.api_groups = {group};
  r.api_versions = {version};
  r.resources = std::move(resources);
  r.scope = "*";
  return r;
}

// A v1 webhook with the given selectors (JSON; nullopt = nil) and rules.
core::Webhook webhook(std::vector<core::RuleWithOperations> rules,
                      std::optional<std::string> match_policy = std::nullopt,
                      const std::optional<json>& object_selector = json::object(),
                      const std::optional<json>& namespace_selector = json::object()) {
  core::Webhook w;
  w.name = "hook.example.com";
  w.rules = std::move(rules);
  w.match_policy = std::move(match_policy);
  w.namespace_selector = core::SelectorField::fromJson(namespace_selector);
  w.object_selector = core::SelectorField::fromJson(object_selector);
  return w;
}

HookEntry entry(core::Webhook w) {
  HookEntry e;
  e.configuration = "webhook-cfg";
  e.webhook = std::move(w);
  e.webhook.uid = "webhook-cfg/" + e.webhook.name + "/0";
  return e;
}

// admission.NewAttributesRecord(nil, nil, kind, "ns", "name", resource, sub, Create, ...).
AdmissionAttributes attrs(core::GroupVersionKind kind, core::GroupVersionResource resource,
                          const std::string& subresource = "") {
  AdmissionAttributes a;
  a.kind = std::move(kind);
  a.resource = std::move(resource);
  a.subresource = subresource;
  a.namespace_name = "ns";
  a.name = "name";
  a.operation = std::string(kOperationCreate);
  return a;
}

const std::string kEquivalent = "Equivalent";
const std::string kExact = "Exact";

struct UpstreamCase {
  std::string name;
  core::Webhook webhook;
  AdmissionAttributes attributes;
  bool expect_call = false;
  std::string expect_err;
  core::GroupVersionResource expect_resource;
  std::string expect_subresource;
  core::GroupVersionKind expect_kind;
  // fakeMatcher: the evaluator's answer for every condition.
  std::optional<std::string> match_error;
  bool match_result = true;
};

std::vector<UpstreamCase> upstreamCases() {
  const auto deployment = gvk("apps", "v1", "Deployment");
  const auto deployments = gvr("apps", "v1", "deployments");
  const auto scale = gvk("autoscaling", "v1", "Scale");
  const auto ext = rule("extensions", "v1beta1", {"deployments"});
  const auto apps_beta = rule("apps", "v1beta1", {"deployments"});
  const auto apps_v1 = rule("apps", "v1", {"deployments"});
  const auto ext_scale = rule("extensions", "v1beta1", {"deployments", "deployments/scale"});
  const auto apps_beta_scale = rule("apps", "v1beta1", {"deployments", "deployments/scale"});
  const auto apps_v1_scale = rule("apps", "v1", {"deployments", "deployments/scale"});
  auto with_conditions = [](core::Webhook w) {
    w.match_conditions = {{"test1", "test expression"}};
    return w;
  };
  const auto wildcard = rule("*", "*", {"*"});

  std::vector<UpstreamCase> cases;
  cases.push_back({"no rules (just write)", webhook({}, std::nullopt, std::nullopt),
                   attrs(deployment, deployments), false});
  cases.push_back({"invalid kind lookup",
                   webhook({rule("example.com", "v1", {"widgets"})}, kEquivalent),
                   attrs(gvk("example.com", "v2", "Widget"), gvr("example.com", "v2", "widgets")),
                   false, "unknown kind"});
  cases.push_back({"wildcard rule, match as requested", webhook({wildcard}),
                   attrs(deployment, deployments), true, "", deployments, "", deployment});
  cases.push_back({"specific rules, prefer exact match", webhook({ext, apps_beta, apps_v1}),
                   attrs(deployment, deployments), true, "", deployments, "", deployment});
  cases.push_back({"specific rules, match miss", webhook({ext, apps_beta}),
                   attrs(deployment, deployments), false});
  cases.push_back({"specific rules, exact match miss", webhook({ext, apps_beta}, kExact),
                   attrs(deployment, deployments), false});
  cases.push_back({"specific rules, equivalent match, prefer extensions",
                   webhook({ext, apps_beta}, kEquivalent), attrs(deployment, deployments), true, "",
                   gvr("extensions", "v1beta1", "deployments"), "",
                   gvk("extensions", "v1beta1", "Deployment")});
  cases.push_back({"specific rules, equivalent match, prefer apps",
                   webhook({apps_beta, ext}, kEquivalent), attrs(deployment, deployments), true, "",
                   gvr("apps", "v1beta1", "deployments"), "",
                   gvk("apps", "v1beta1", "Deployment")});
  cases.push_back({"specific rules, subresource prefer exact match",
                   webhook({ext_scale, apps_beta_scale, apps_v1_scale}),
                   attrs(scale, deployments, "scale"), true, "", deployments, "scale", scale});
  cases.push_back({"specific rules, subresource match miss", webhook({ext_scale, apps_beta_scale}),
                   attrs(scale, deployments, "scale"), false});
  cases.push_back({"specific rules, subresource exact match miss",
                   webhook({ext_scale, apps_beta_scale}, kExact),
                   attrs(scale, deployments, "scale"), false});
  cases.push_back({"specific rules, subresource equivalent match, prefer extensions",
                   webhook({ext_scale, apps_beta_scale}, kEquivalent),
                   attrs(scale, deployments, "scale"), true, "",
                   gvr("extensions", "v1beta1", "deployments"), "scale",
                   gvk("extensions", "v1beta1", "Scale")});
  cases.push_back(
      {"specific rules, subresource equivalent match, prefer apps",
       webhook({apps_beta_scale, ext_scale}, kEquivalent), attrs(scale, deployments, "scale"), true,
       "", gvr("apps", "v1beta1", "deployments"), "scale", gvk("apps", "v1beta1", "Scale")});
  cases.push_back({"wildcard rule, match conditions also match",
                   with_conditions(webhook({wildcard})), attrs(deployment, deployments), true, "",
                   deployments, "", deployment});
  UpstreamCase no_match{"wildcard rule, match conditions do not match",
                        with_conditions(webhook({wildcard})), attrs(deployment, deployments),
                        false};
  no_match.match_result = false;
  cases.push_back(no_match);
  UpstreamCase error{"wildcard rule, match conditions error", with_conditions(webhook({wildcard})),
                     attrs(deployment, deployments), false,
                     "deployments.apps \"name\" is forbidden: test error"};
  error.match_error = "test error";
  cases.push_back(error);
  return cases;
}

class UpstreamShouldCallHookTest : public testing::TestWithParam<UpstreamCase> {};

TEST_P(UpstreamShouldCallHookTest, MatchesUpstreamExpectation) {
  const auto& tc = GetParam();
  const auto mapper = upstreamTestMapper();
  const MatchConditionEvaluator evaluator = [&tc](const HookEntry& hook, const AdmissionAttributes&,
                                                  const core::GroupVersionKind&) {
    std::vector<std::variant<bool, std::string>> out;
    for (std::size_t i = 0; i < hook.webhook.match_conditions.size(); ++i) {
      if (tc.match_error) {
        out.emplace_back(*tc.match_error);
      } else {
        out.emplace_back(tc.match_result);
      }
    }
    return out;
  };
  const auto result = shouldCallHook(entry(tc.webhook), tc.attributes, {}, &evaluator, &mapper);
  if (!tc.expect_err.empty()) {
    ASSERT_EQ(result.outcome, MatchOutcome::kError);
    ASSERT_TRUE(result.error);
    EXPECT_NE(result.error->message.find(tc.expect_err), std::string::npos)
        << result.error->message;
    return;
  }
  ASSERT_NE(result.outcome, MatchOutcome::kError) << result.error->message;
  ASSERT_EQ(result.outcome == MatchOutcome::kCall, tc.expect_call);
  if (!tc.expect_call) return;
  ASSERT_TRUE(result.invocation);
  EXPECT_EQ(result.invocation->kind, tc.expect_kind);
  EXPECT_EQ(result.invocation->resource, tc.expect_resource);
  EXPECT_EQ(result.invocation->subresource, tc.expect_subresource);
}

std::string caseName(const testing::TestParamInfo<UpstreamCase>& info) {
  std::string out;
  bool upper = true;
  for (const char c : info.param.name) {
    if (std::isalnum(static_cast<unsigned char>(c)) != 0) {
      out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
      upper = false;
    } else {
      upper = true;
    }
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(TestShouldCallHook, UpstreamShouldCallHookTest,
                         testing::ValuesIn(upstreamCases()), caseName);

TEST(ShouldCallHookTest, UnknownKindErrorHasUpstreamText) {
  const auto mapper = upstreamTestMapper();
  const auto result =
      shouldCallHook(entry(webhook({rule("example.com", "v1", {"widgets"})}, kEquivalent)),
                     attrs(gvk("example.com", "v2", "Widget"), gvr("example.com", "v2", "widgets")),
                     {}, nullptr, &mapper);
  ASSERT_EQ(result.outcome, MatchOutcome::kError);
  EXPECT_EQ(result.error->code, 500);
  EXPECT_EQ(result.error->message,
            "Internal error occurred: unable to convert to example.com/v1, Resource=widgets: "
            "unknown kind");
  EXPECT_EQ(result.explanation.back(),
            "matchPolicy Equivalent: example.com/v1 widgets matches rule[0] but has no kind: "
            "unable to convert to example.com/v1, Resource=widgets: unknown kind");
}

// --- against the built-in resource table (core::equivalentResources) ---

NamespaceLabelsLookup namespaces(const std::map<std::string, core::StringMap>& known) {
  return [known](const std::string& name) -> std::variant<core::StringMap, core::Status> {
    const auto it = known.find(name);
    if (it == known.end()) return core::newNotFound({"", "namespaces"}, name);
    return it->second;
  };
}

core::RuleWithOperations podRule() {
  core::RuleWithOperations r;
  r.operations = {"CREATE"};
  r.api_groups = {""};
  r.api_versions = {"v1"};
  r.resources = {"pods"};
  r.scope = "*";
  return r;
}

AdmissionAttributes podCreate(const std::string& ns = "apps", const core::StringMap& labels = {}) {
  AdmissionAttributes a = attrs(gvk("", "v1", "Pod"), gvr("", "v1", "pods"));
  a.namespace_name = ns;
  a.name = "web";
  a.object = json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "web"}}}};
  for (const auto& [k, v] : labels) (*a.object)["metadata"]["labels"][k] = v;
  return a;
}

const json kInjectOn = {{"matchLabels", {{"inject", "on"}}}};

TEST(ShouldCallHookTest, CallsWithTheRequestAsMadeWhenARuleMatches) {
  const auto result =
      shouldCallHook(entry(webhook({podRule()}, kEquivalent)), podCreate(), namespaces({}));
  ASSERT_EQ(result.outcome, MatchOutcome::kCall);
  EXPECT_EQ(result.invocation,
            (Invocation{gvr("", "v1", "pods"), "", gvk("", "v1", "Pod"), false, 0}));
  EXPECT_TRUE(result.skipped_by.empty());
  EXPECT_EQ(result.explanation,
            (std::vector<std::string>{
                "namespaceSelector {}: matches everything", "objectSelector {}: matches everything",
                "rule[0] operations [CREATE] apiGroups [\"\"] apiVersions [v1] resources [pods] "
                "scope *: matches"}));
}

TEST(ShouldCallHookTest, FirstMatchingRuleIsRecorded) {
  auto first = podRule();
  first.operations = {"DELETE"};
  const auto result =
      shouldCallHook(entry(webhook({first, podRule()})), podCreate(), namespaces({}));
  ASSERT_EQ(result.outcome, MatchOutcome::kCall);
  EXPECT_EQ(result.invocation->rule_index, 1u);
  EXPECT_EQ(result.explanation[2], "rule[0]: operation CREATE not in [DELETE]");
}

TEST(ShouldCallHookTest, EquivalentUsesTheBuiltinTableAndItsKinds) {
  // A rule written for extensions/v1beta1 only still sees apps/v1 deployments, as
  // extensions/v1beta1 Deployment.
  const auto result = shouldCallHook(
      entry(webhook({rule("extensions", "v1beta1", {"deployments"})}, kEquivalent)),
      attrs(gvk("apps", "v1", "Deployment"), gvr("apps", "v1", "deployments")), namespaces({}));
  ASSERT_EQ(result.outcome, MatchOutcome::kCall);
  EXPECT_EQ(result.invocation, (Invocation{gvr("extensions", "v1beta1", "deployments"), "",
                                           gvk("extensions", "v1beta1", "Deployment"), true, 0}));
  EXPECT_EQ(result.explanation.back(),
            "matchPolicy Equivalent: extensions/v1beta1 deployments matches rule[0] -> kind "
            "extensions/v1beta1, Kind=Deployment");
}

TEST(ShouldCallHookTest, EquivalentScaleSubresourceGetsTheEquivalentsScaleKind) {
  const auto result = shouldCallHook(
      entry(webhook({rule("apps", "v1beta1", {"deployments/scale"})}, kEquivalent)),
      attrs(gvk("autoscaling", "v1", "Scale"), gvr("apps", "v1", "deployments"), "scale"),
      namespaces({}));
  ASSERT_EQ(result.outcome, MatchOutcome::kCall);
  EXPECT_EQ(result.invocation, (Invocation{gvr("apps", "v1beta1", "deployments"), "scale",
                                           gvk("apps", "v1beta1", "Scale"), true, 0}));
}

TEST(ShouldCallHookTest, ExactPolicyIgnoresEquivalents) {
  const auto result = shouldCallHook(
      entry(webhook({rule("extensions", "v1beta1", {"deployments"})}, kExact)),
      attrs(gvk("apps", "v1", "Deployment"), gvr("apps", "v1", "deployments")), namespaces({}));
  EXPECT_EQ(result.outcome, MatchOutcome::kSkip);
  EXPECT_EQ(result.skipped_by, "rules");
  EXPECT_EQ(result.explanation.back(),
            "matchPolicy Exact: equivalent resources are not considered");
}

TEST(ShouldCallHookTest, UnsetMatchPolicyBehavesAsExact) {
  const auto result = shouldCallHook(
      entry(webhook({rule("extensions", "v1beta1", {"deployments"})})),
      attrs(gvk("apps", "v1", "Deployment"), gvr("apps", "v1", "deployments")), namespaces({}));
  EXPECT_EQ(result.outcome, MatchOutcome::kSkip);
  EXPECT_EQ(result.explanation.back(),
            "matchPolicy unset: equivalent resources are not considered (as Exact)");
}

TEST(ShouldCallHookTest, ExplainsRulesSkip) {
  const auto result = shouldCallHook(
      entry(webhook({podRule()}, kEquivalent)),
      attrs(gvk("apps", "v1", "Deployment"), gvr("apps", "v1", "deployments")), namespaces({}));
  EXPECT_EQ(result.outcome, MatchOutcome::kSkip);
  EXPECT_EQ(result.skipped_by, "rules");
  EXPECT_EQ(result.explanation,
            (std::vector<std::string>{
                "namespaceSelector {}: matches everything", "objectSelector {}: matches everything",
                "rule[0]: apiGroup \"apps\" not in [\"\"]",
                "matchPolicy Equivalent: none of extensions/v1beta1 deployments, apps/v1beta2 "
                "deployments, apps/v1beta1 deployments matches any rule"}));
}

TEST(ShouldCallHookTest, ExplainsAResourceWithoutEquivalents) {
  auto deployment_rule = podRule();
  deployment_rule.resources = {"services"};
  const auto result =
      shouldCallHook(entry(webhook({deployment_rule}, kEquivalent)), podCreate(), namespaces({}));
  EXPECT_EQ(result.skipped_by, "rules");
  EXPECT_EQ(result.explanation.back(),
            "matchPolicy Equivalent: no other resource is stored with v1 pods");
}

TEST(ShouldCallHookTest, ExplainsAWebhookWithoutRules) {
  const auto result = shouldCallHook(entry(webhook({})), podCreate(), namespaces({}));
  EXPECT_EQ(result.skipped_by, "rules");
  EXPECT_EQ(result.explanation[2], "rules: none (a webhook without rules matches nothing)");
}

TEST(ShouldCallHookTest, NamespaceSelectorSkipComesFirstAndIsExplained) {
  const auto result =
      shouldCallHook(entry(webhook({podRule()}, kEquivalent, json::object(), kInjectOn)),
                     podCreate("apps"), namespaces({{"apps", {{"team", "a"}}}}));
  EXPECT_EQ(result.outcome, MatchOutcome::kSkip);
  EXPECT_EQ(result.skipped_by, "namespaceSelector");
  EXPECT_EQ(result.explanation,
            (std::vector<std::string>{
                "namespaceSelector `inject=on`: namespace \"apps\" has labels team=a: no match"}));
}

TEST(ShouldCallHookTest, ObjectSelectorSkipIsExplained) {
  const auto result = shouldCallHook(entry(webhook({podRule()}, kEquivalent, kInjectOn)),
                                     podCreate("apps", {{"app", "web"}}), namespaces({}));
  EXPECT_EQ(result.outcome, MatchOutcome::kSkip);
  EXPECT_EQ(result.skipped_by, "objectSelector");
  EXPECT_EQ(result.explanation,
            (std::vector<std::string>{"namespaceSelector {}: matches everything",
                                      "objectSelector `inject=on`: object has labels app=web "
                                      "(no match), no oldObject: no match"}));
}

TEST(ShouldCallHookTest, SelectorsMatchingLetTheRulesDecide) {
  const auto result = shouldCallHook(entry(webhook({podRule()}, kEquivalent, kInjectOn, kInjectOn)),
                                     podCreate("apps", {{"inject", "on"}}),
                                     namespaces({{"apps", {{"inject", "on"}}}}));
  EXPECT_EQ(result.outcome, MatchOutcome::kCall);
}

TEST(ShouldCallHookTest, MissingNamespaceIsReturnedAsIsWhenRulesMatch) {
  const auto result =
      shouldCallHook(entry(webhook({podRule()}, kEquivalent, json::object(), kInjectOn)),
                     podCreate("gone"), namespaces({}));
  ASSERT_EQ(result.outcome, MatchOutcome::kError);
  EXPECT_EQ(result.error->code, 404);
  EXPECT_EQ(result.error->message, "namespaces \"gone\" not found");
  EXPECT_TRUE(result.skipped_by.empty());
  EXPECT_EQ(result.explanation.back(),
            "namespaceSelector error returned: namespaces \"gone\" not found");
}

TEST(ShouldCallHookTest, MissingNamespaceIsSwallowedWhenRulesDoNotMatch) {
  auto other = podRule();
  other.resources = {"services"};
  const auto result =
      shouldCallHook(entry(webhook({other}, kEquivalent, json::object(), kInjectOn)),
                     podCreate("gone"), namespaces({}));
  EXPECT_EQ(result.outcome, MatchOutcome::kSkip);
  EXPECT_EQ(result.skipped_by, "rules");
  EXPECT_FALSE(result.error);
  EXPECT_EQ(result.explanation.back(), "selector errors are ignored: no rule matches");
}

TEST(ShouldCallHookTest, LookupErrorOtherThanNotFoundIsA500) {
  const NamespaceLabelsLookup failing =
      [](const std::string&) -> std::variant<core::StringMap, core::Status> {
    return core::newInternalError("etcd unavailable");
  };
  const auto result = shouldCallHook(
      entry(webhook({podRule()}, kEquivalent, json::object(), kInjectOn)), podCreate(), failing);
  ASSERT_EQ(result.outcome, MatchOutcome::kError);
  EXPECT_EQ(result.error->code, 500);
  EXPECT_EQ(result.error->message,
            "Internal error occurred: Internal error occurred: etcd unavailable");
}

const json kBrokenSelector = {{"matchExpressions", {{{"key", "a"}, {"operator", "Foo"}}}}};

TEST(ShouldCallHookTest, BrokenObjectSelectorIsA500OnlyWhenRulesMatch) {
  const auto matched = shouldCallHook(entry(webhook({podRule()}, kEquivalent, kBrokenSelector)),
                                      podCreate(), namespaces({}));
  ASSERT_EQ(matched.outcome, MatchOutcome::kError);
  EXPECT_EQ(matched.error->code, 500);
  EXPECT_EQ(matched.error->reason, "InternalError");

  auto other = podRule();
  other.operations = {"DELETE"};
  const auto unmatched = shouldCallHook(entry(webhook({other}, kEquivalent, kBrokenSelector)),
                                        podCreate(), namespaces({}));
  EXPECT_EQ(unmatched.outcome, MatchOutcome::kSkip);
}

TEST(ShouldCallHookTest, NamespaceErrorTakesPrecedenceOverObjectSelectorError) {
  const auto result =
      shouldCallHook(entry(webhook({podRule()}, kEquivalent, kBrokenSelector, kBrokenSelector)),
                     podCreate(), namespaces({}));
  ASSERT_EQ(result.outcome, MatchOutcome::kError);
  EXPECT_EQ(result.explanation.back().rfind("namespaceSelector error returned: ", 0), 0u);
}

TEST(ShouldCallHookTest, ErrorsAreNotSubjectToFailurePolicy) {
  auto hook = webhook({podRule()}, kEquivalent, json::object(), kInjectOn);
  hook.failure_policy = "Ignore";
  const auto result = shouldCallHook(entry(hook), podCreate("gone"), namespaces({}));
  EXPECT_EQ(result.outcome, MatchOutcome::kError);
}

TEST(ShouldCallHookTest, ClusterScopedRequestsBypassTheNamespaceSelector) {
  core::RuleWithOperations nodes = podRule();
  nodes.resources = {"nodes"};
  AdmissionAttributes a = attrs(gvk("", "v1", "Node"), gvr("", "v1", "nodes"));
  a.namespace_name.clear();
  a.object = json{{"kind", "Node"}, {"metadata", {{"name", "n"}}}};
  const auto result =
      shouldCallHook(entry(webhook({nodes}, kEquivalent, json::object(), std::nullopt)), a, {});
  EXPECT_EQ(result.outcome, MatchOutcome::kCall);
}

TEST(ShouldCallHookTest, ExemptKindsAreSkippedBeforeAnything) {
  auto all = rule("*", "*", {"*"});
  AdmissionAttributes a =
      attrs(gvk("admissionregistration.k8s.io", "v1", "MutatingWebhookConfiguration"),
            gvr("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations"));
  a.namespace_name.clear();
  const auto result = shouldCallHook(entry(webhook({all}, kEquivalent)), a, {});
  EXPECT_EQ(result.outcome, MatchOutcome::kSkip);
  EXPECT_EQ(result.skipped_by, "exempt");
  EXPECT_EQ(result.explanation,
            (std::vector<std::string>{
                "exempt: admissionregistration.k8s.io/v1, Kind=MutatingWebhookConfiguration "
                "requests are never sent to admission webhooks"}));
}

TEST(ShouldCallHookTest, ThrowingEquivalentLookupIsAnInternalError) {
  const EquivalentResourceLookup throwing =
      [](const core::GroupVersionResource&, std::string_view) -> std::vector<core::ResourceInfo> {
    throw std::runtime_error("mapper broke");
  };
  const auto result =
      shouldCallHook(entry(webhook({rule("extensions", "v1beta1", {"deployments"})}, kEquivalent)),
                     attrs(gvk("apps", "v1", "Deployment"), gvr("apps", "v1", "deployments")),
                     namespaces({}), nullptr, &throwing);
  ASSERT_EQ(result.outcome, MatchOutcome::kError);
  EXPECT_EQ(result.error->message, "Internal error occurred: mapper broke");
}

TEST(MatchOutcomeTest, HasNames) {
  EXPECT_EQ(toString(MatchOutcome::kCall), "call");
  EXPECT_EQ(toString(MatchOutcome::kSkip), "skip");
  EXPECT_EQ(toString(MatchOutcome::kError), "error");
}

}  // namespace
}  // namespace harness::sim
