// matchConditions in ShouldCallHook (docs/admission-chain.md §3.6; kubernetes/apiserver
// pkg/admission/plugin/webhook/matchconditions/matcher.go Match, generic/webhook.go) and the
// error aggregation of apimachinery pkg/util/errors.

#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/sim/matching.h"

namespace harness::sim {
namespace {

using nlohmann::json;
using ConditionResult = std::variant<bool, std::string>;

core::RuleWithOperations podRule() {
  core::RuleWithOperations r;
  r.operations = {"*"};
  r.api_groups = {""};
  r.api_versions = {"v1"};
  r.resources = {"pods"};
  r.scope = "*";
  return r;
}

HookEntry hookWithConditions(const std::vector<std::string>& names,
                             std::optional<std::string> failure_policy = std::nullopt,
                             std::vector<core::RuleWithOperations> rules = {podRule()}) {
  HookEntry e;
  e.configuration = "cfg";
  e.webhook.name = "hook.example.com";
  e.webhook.uid = "cfg/hook.example.com/0";
  e.webhook.rules = std::move(rules);
  e.webhook.failure_policy = std::move(failure_policy);
  e.webhook.match_policy = "Equivalent";
  e.webhook.namespace_selector = core::SelectorField::fromJson(json::object());
  e.webhook.object_selector = core::SelectorField::fromJson(json::object());
  for (auto& n : names) e.webhook.match_conditions.push_back({n, "expr-" + n});
  return e;
}

AdmissionAttributes podCreate() {
  AdmissionAttributes a;
  a.operation = std::string(kOperationCreate);
  a.kind = {"", "v1", "Pod"};
  a.resource = {"", "v1", "pods"};
  a.namespace_name = "apps";
  a.name = "web";
  a.object = json{{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "web"}}}};
  return a;
}

MatchConditionEvaluator fixed(const std::vector<ConditionResult>& results, int* calls = nullptr) {
  return [results, calls](const HookEntry&, const AdmissionAttributes&,
                          const core::GroupVersionKind&) {
    if (calls != nullptr) ++*calls;
    return results;
  };
}

const NamespaceLabelsLookup kNoNamespaces = {};

TEST(MatchConditionsTest, WithoutEvaluatorMatchedWebhookIsAnInternalError) {
  const auto result = shouldCallHook(hookWithConditions({"a", "b"}), podCreate(), kNoNamespaces);
  ASSERT_EQ(result.outcome, MatchOutcome::kError);
  EXPECT_EQ(result.error->code, 500);
  EXPECT_EQ(result.error->message,
            "Internal error occurred: matchConditions require a CEL evaluator, which the "
            "simulator does not have");
  EXPECT_EQ(result.explanation.back(),
            "matchConditions [a, b]: require a CEL evaluator, which the simulator does not have");
}

TEST(MatchConditionsTest, EmptyEvaluatorCountsAsNone) {
  const MatchConditionEvaluator empty;
  const auto result = shouldCallHook(hookWithConditions({"a"}), podCreate(), kNoNamespaces, &empty);
  EXPECT_EQ(result.outcome, MatchOutcome::kError);
}

TEST(MatchConditionsTest, WithoutEvaluatorUnmatchedWebhookIsSkippedByRules) {
  auto other = podRule();
  other.resources = {"services"};
  const auto result =
      shouldCallHook(hookWithConditions({"a"}, std::nullopt, {other}), podCreate(), kNoNamespaces);
  EXPECT_EQ(result.outcome, MatchOutcome::kSkip);
  EXPECT_EQ(result.skipped_by, "rules");
}

TEST(MatchConditionsTest, AllTrueCalls) {
  const auto evaluator = fixed({true, true});
  const auto result =
      shouldCallHook(hookWithConditions({"a", "b"}), podCreate(), kNoNamespaces, &evaluator);
  EXPECT_EQ(result.outcome, MatchOutcome::kCall);
  ASSERT_GE(result.explanation.size(), 2u);
  EXPECT_EQ(result.explanation[result.explanation.size() - 2], "matchCondition \"a\": true");
  EXPECT_EQ(result.explanation.back(), "matchCondition \"b\": true");
}

TEST(MatchConditionsTest, AnyFalseSkipsAndIsExplained) {
  const auto evaluator = fixed({true, false});
  const auto result =
      shouldCallHook(hookWithConditions({"a", "b"}), podCreate(), kNoNamespaces, &evaluator);
  EXPECT_EQ(result.outcome, MatchOutcome::kSkip);
  EXPECT_EQ(result.skipped_by, "matchConditions");
  EXPECT_EQ(result.explanation.back(), "matchCondition \"b\": false");
}

TEST(MatchConditionsTest, FalseWinsOverEarlierErrorsEvenWithFail) {
  const auto evaluator = fixed({std::string("boom"), false});
  const auto result = shouldCallHook(hookWithConditions({"a", "b"}, "Fail"), podCreate(),
                                     kNoNamespaces, &evaluator);
  EXPECT_EQ(result.outcome, MatchOutcome::kSkip);
  EXPECT_EQ(result.skipped_by, "matchConditions");
}

TEST(MatchConditionsTest, ErrorWithFailIsA403NamingTheRequestResource) {
  const auto evaluator =
      fixed({std::string("expression 'x' resulted in error: no such key"), true});
  const auto result = shouldCallHook(hookWithConditions({"a", "b"}, "Fail"), podCreate(),
                                     kNoNamespaces, &evaluator);
  ASSERT_EQ(result.outcome, MatchOutcome::kError);
  EXPECT_EQ(result.error->code, 403);
  EXPECT_EQ(result.error->reason, "Forbidden");
  EXPECT_EQ(result.error->message,
            "pods \"web\" is forbidden: expression 'x' resulted in error: no such key");
  EXPECT_EQ(result.explanation.back(),
            "matchConditions: evaluation failed with failurePolicy Fail: expression 'x' resulted "
            "in error: no such key");
}

TEST(MatchConditionsTest, UnsetFailurePolicyFailsClosed) {
  const auto evaluator = fixed({std::string("test error")});
  const auto result =
      shouldCallHook(hookWithConditions({"a"}), podCreate(), kNoNamespaces, &evaluator);
  ASSERT_EQ(result.outcome, MatchOutcome::kError);
  EXPECT_EQ(result.error->code, 403);
}

TEST(MatchConditionsTest, ErrorWithIgnoreSkips) {
  const auto evaluator = fixed({std::string("test error")});
  const auto result =
      shouldCallHook(hookWithConditions({"a"}, "Ignore"), podCreate(), kNoNamespaces, &evaluator);
  EXPECT_EQ(result.outcome, MatchOutcome::kSkip);
  EXPECT_EQ(result.skipped_by, "matchConditions");
  EXPECT_FALSE(result.error);
  EXPECT_EQ(result.explanation.back(),
            "matchConditions: evaluation failed with failurePolicy Ignore: test error");
}

TEST(MatchConditionsTest, SeveralErrorsAreAggregated) {
  const auto evaluator = fixed({std::string("e1"), std::string("e2"), std::string("e1")});
  const auto result =
      shouldCallHook(hookWithConditions({"a", "b", "c"}), podCreate(), kNoNamespaces, &evaluator);
  ASSERT_EQ(result.outcome, MatchOutcome::kError);
  EXPECT_EQ(result.error->message, "pods \"web\" is forbidden: [e1, e2]");
}

TEST(MatchConditionsTest, WrongNumberOfResultsIsAnEvaluatorFailure) {
  const auto evaluator = fixed({true});
  const auto failed =
      shouldCallHook(hookWithConditions({"a", "b"}), podCreate(), kNoNamespaces, &evaluator);
  ASSERT_EQ(failed.outcome, MatchOutcome::kError);
  EXPECT_EQ(failed.error->message,
            "pods \"web\" is forbidden: match condition evaluator returned 1 results for 2 "
            "conditions");
  const auto ignored = shouldCallHook(hookWithConditions({"a", "b"}, "Ignore"), podCreate(),
                                      kNoNamespaces, &evaluator);
  EXPECT_EQ(ignored.outcome, MatchOutcome::kSkip);
  EXPECT_EQ(ignored.skipped_by, "matchConditions");
}

TEST(MatchConditionsTest, ThrowingEvaluatorIsAnEvaluatorFailure) {
  const MatchConditionEvaluator throwing =
      [](const HookEntry&, const AdmissionAttributes&,
         const core::GroupVersionKind&) -> std::vector<ConditionResult> {
    throw std::runtime_error("cel crashed");
  };
  const auto result =
      shouldCallHook(hookWithConditions({"a"}), podCreate(), kNoNamespaces, &throwing);
  ASSERT_EQ(result.outcome, MatchOutcome::kError);
  EXPECT_EQ(result.error->message,
            "pods \"web\" is forbidden: match condition evaluator failed: cel crashed");
}

TEST(MatchConditionsTest, EvaluatorReceivesTheInvocationKind) {
  auto ext = podRule();
  ext.api_groups = {"extensions"};
  ext.api_versions = {"v1beta1"};
  ext.resources = {"deployments"};
  auto hook = hookWithConditions({"a"}, std::nullopt, {ext});
  AdmissionAttributes a = podCreate();
  a.kind = {"apps", "v1", "Deployment"};
  a.resource = {"apps", "v1", "deployments"};
  a.name = "d";
  core::GroupVersionKind seen;
  std::string seen_uid;
  const MatchConditionEvaluator evaluator = [&](const HookEntry& h, const AdmissionAttributes&,
                                                const core::GroupVersionKind& kind) {
    seen = kind;
    seen_uid = h.webhook.uid;
    return std::vector<ConditionResult>{std::string("bad")};
  };
  const auto result = shouldCallHook(hook, a, kNoNamespaces, &evaluator);
  EXPECT_EQ(seen, (core::GroupVersionKind{"extensions", "v1beta1", "Deployment"}));
  EXPECT_EQ(seen_uid, "cfg/hook.example.com/0");
  // The 403 names the resource the client called, not the equivalent one.
  ASSERT_EQ(result.outcome, MatchOutcome::kError);
  EXPECT_EQ(result.error->message, "deployments.apps \"d\" is forbidden: bad");
}

TEST(MatchConditionsTest, SelectorErrorsComeBeforeConditions) {
  auto hook = hookWithConditions({"a"});
  hook.webhook.namespace_selector =
      core::SelectorField::fromJson(json{{"matchLabels", {{"a", "b"}}}});
  int calls = 0;
  const auto evaluator = fixed({true}, &calls);
  const NamespaceLabelsLookup none =
      [](const std::string& name) -> std::variant<core::StringMap, core::Status> {
    return core::newNotFound({"", "namespaces"}, name);
  };
  const auto result = shouldCallHook(hook, podCreate(), none, &evaluator);
  ASSERT_EQ(result.outcome, MatchOutcome::kError);
  EXPECT_EQ(result.error->code, 404);
  EXPECT_EQ(calls, 0);
}

TEST(MatchConditionsTest, WebhooksWithoutConditionsNeverCallTheEvaluator) {
  int calls = 0;
  const auto evaluator = fixed({}, &calls);
  const auto result =
      shouldCallHook(hookWithConditions({}), podCreate(), kNoNamespaces, &evaluator);
  EXPECT_EQ(result.outcome, MatchOutcome::kCall);
  EXPECT_EQ(calls, 0);
}

TEST(AggregateErrorMessageTest, FollowsUtilErrorsAggregate) {
  EXPECT_EQ(aggregateErrorMessage({}), "");
  EXPECT_EQ(aggregateErrorMessage({"one"}), "one");
  EXPECT_EQ(aggregateErrorMessage({"a", "b"}), "[a, b]");
  EXPECT_EQ(aggregateErrorMessage({"a", "a"}), "a");
  EXPECT_EQ(aggregateErrorMessage({"b", "a", "b", "c"}), "[b, a, c]");
}

}  // namespace
}  // namespace harness::sim
