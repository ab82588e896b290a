// --explain text: matches with their clauses, calls with latency against timeout, the
// failurePolicy outcome, and patches as before/after values.

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/sim/explain.h"

namespace harness::sim {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(ExplainPatchTest, ShowsBeforeAndAfterOfEachChangedPath) {
  const json before = json::parse(R"({"metadata": {"labels": {"app": "web"}},
                                      "spec": {"containers": [{"image": "nginx:1.25"}]}})");
  const json patch = json::parse(R"([
    {"op": "add", "path": "/metadata/labels/injected", "value": "true"},
    {"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:1.27"},
    {"op": "remove", "path": "/metadata/labels/app"}])");
  EXPECT_EQ(explainPatch(before, patch),
            "add /metadata/labels/injected\n"
            "    + \"true\"\n"
            "replace /spec/containers/0/image\n"
            "    - \"nginx:1.25\"\n"
            "    + \"nginx:1.27\"\n"
            "remove /metadata/labels/app\n"
            "    - \"web\"\n");
}

TEST(ExplainPatchTest, AddOverAnExistingMemberShowsTheOldValue) {
  const json before = json::parse(R"({"a": {"b": 1}, "l": [1, 2]})");
  const json patch = json::parse(R"([{"op": "add", "path": "/a/b", "value": 2},
                                     {"op": "add", "path": "/l/0", "value": 0}])");
  EXPECT_EQ(explainPatch(before, patch),
            "add /a/b\n    - 1\n    + 2\n"
            "add /l/0\n    + 0\n");
}

// An injector's sidecar is appended with "-" (Istio's /spec/containers/-): the value shown is
// the element it added.
TEST(ExplainPatchTest, AnAppendShowsTheElementItAdded) {
  const json before = json::parse(R"({"l": [{"name": "app"}]})");
  const json patch = json::parse(R"([{"op": "add", "path": "/l/-", "value": {"name": "proxy"}},
                                     {"op": "copy", "from": "/l/0", "path": "/l/-"}])");
  EXPECT_EQ(explainPatch(before, patch),
            "add /l/-\n    + {\"name\":\"proxy\"}\n"
            "copy /l/0 -> /l/-\n    + {\"name\":\"app\"}\n");
  EXPECT_EQ(patchDiff(before, patch)[0]["after"], json::parse(R"({"name": "proxy"})"));
}

TEST(ExplainPatchTest, AnOperationThatDoesNotApplySaysWhy) {
  const json patch = json::parse(R"([{"op": "remove", "path": "/missing"},
                                     {"op": "add", "path": "/x", "value": 1}])");
  const std::string text = explainPatch(json::object(), patch);
  EXPECT_THAT(text, HasSubstr("remove /missing\n    (does not apply: "));
  EXPECT_THAT(text, HasSubstr("add /x\n"));
  EXPECT_THAT(text, Not(HasSubstr("+ 1")));
}

MatchRecord match(MatchOutcome outcome, std::string skipped_by = {}) {
  MatchRecord record;
  record.kind = core::WebhookKind::kMutating;
  record.configuration = "inject";
  record.webhook = "inject.example.com";
  record.round = 0;
  record.index = 2;
  record.match.outcome = outcome;
  record.match.skipped_by = std::move(skipped_by);
  record.match.explanation = {"namespaceSelector {} matches everything"};
  return record;
}

Step podStep() {
  Step step;
  step.name = "create";
  step.request.operation = "CREATE";
  step.request.resource = {"", "v1", "pods"};
  step.request.namespace_name = "demo";
  step.request.name = "web";
  return step;
}

ExplainOptions verbose() {
  ExplainOptions options;
  options.verbose = true;
  return options;
}

TEST(ExplainWebhookTest, SkippedWebhookNamesTheClause) {
  const std::string text =
      explainWebhook(match(MatchOutcome::kSkip, "objectSelector"), nullptr, verbose());
  EXPECT_EQ(text,
            "mutating webhook inject.example.com (configuration inject, round 0 index 2)\n"
            "  match: skipped by objectSelector\n"
            "    namespaceSelector {} matches everything\n");
}

TEST(ExplainWebhookTest, CompactSkipIsOneLineWithTheDecidingClause) {
  MatchRecord skipped = match(MatchOutcome::kSkip, "objectSelector");
  skipped.match.explanation = {"namespaceSelector {}: matches everything",
                               "objectSelector `app in (a,b),!legacy`: object has labels app=c "
                               "(no match), no oldObject: no match"};
  EXPECT_EQ(explainWebhook(skipped, nullptr),
            "mutating webhook inject.example.com (configuration inject, round 0 index 2): "
            "skipped by objectSelector: objectSelector `app in (a,b),!legacy`: object has labels "
            "app=c (no match), no oldObject: no match\n");
  MatchRecord by_rules = match(MatchOutcome::kSkip, "rules");
  by_rules.match.explanation = {"namespaceSelector {}: matches everything",
                                "objectSelector {}: matches everything",
                                "rule[0]: resource \"configmaps\" not in [pods]",
                                "matchPolicy Equivalent: no other resource is stored with configmaps"};
  EXPECT_EQ(explainWebhook(by_rules, nullptr),
            "mutating webhook inject.example.com (configuration inject, round 0 index 2): "
            "skipped by rules: rule[0]: resource \"configmaps\" not in [pods]; matchPolicy "
            "Equivalent: no other resource is stored with configmaps\n");
}

TEST(ExplainWebhookTest, FailedOpenCallShowsLatencyTimeoutAndPolicy) {
  CallRecord call;
  call.webhook = "inject.example.com";
  call.called = true;
  call.url = "https://inject.example.com:443/?timeout=10s";
  call.review_version = "v1";
  call.request_uid = "u-1";
  call.timeout_param = "10s";
  call.timeout = std::chrono::seconds(10);
  call.latency = std::chrono::milliseconds(12);
  call.failure_policy = "Ignore";
  call.outcome = CallOutcome::kFailedOpen;
  call.error = "failed calling webhook \"inject.example.com\": connection refused";
  const std::string text = explainWebhook(match(MatchOutcome::kCall), &call);
  EXPECT_THAT(text, HasSubstr("  match: matched\n"));
  EXPECT_THAT(text, HasSubstr("  call: POST https://inject.example.com:443/?timeout=10s "
                              "(AdmissionReview v1), uid u-1\n"
                              "    latency 12.0ms of a 10.00s timeout (?timeout=10s)\n"));
  EXPECT_THAT(text, HasSubstr("  outcome: FailedOpen — calling error, failurePolicy Ignore -> "
                              "ignored (fail open)\n"));
  EXPECT_THAT(text, HasSubstr("    error: failed calling webhook"));
}

TEST(ExplainWebhookTest, PatchedCallShowsThePatchAgainstTheObjectSent) {
  CallRecord call;
  call.called = true;
  call.outcome = CallOutcome::kPatched;
  call.changed = true;
  call.request_review = json::parse(R"({"request": {"object": {"metadata": {"labels": {}}}}})");
  call.patch = json::parse(R"([{"op": "add", "path": "/metadata/labels/x", "value": "y"}])");
  const std::string text = explainWebhook(match(MatchOutcome::kCall), &call);
  EXPECT_THAT(text, HasSubstr("  patch (1 operations):\n"
                              "    add /metadata/labels/x\n"
                              "        + \"y\"\n"));
  ExplainOptions color;
  color.color = true;
  EXPECT_THAT(explainWebhook(match(MatchOutcome::kCall), &call, color),
              HasSubstr("    add /metadata/labels/x\n        \x1b[32m+ \"y\"\x1b[0m\n"));
}

TEST(ExplainPatchTest, ColourMarksRemovedRedAndAddedGreen) {
  const json before = json::parse(R"({"a": 1})");
  const json patch = json::parse(R"([{"op": "replace", "path": "/a", "value": 2}])");
  EXPECT_EQ(explainPatch(before, patch, true),
            "replace /a\n    \x1b[31m- 1\x1b[0m\n    \x1b[32m+ 2\x1b[0m\n");
  EXPECT_EQ(patchDiff(before, patch),
            json::parse(R"([{"op": "replace", "path": "/a", "before": 1, "after": 2}])"));
}

TEST(ExplainStepTest, ATimeoutSaysTimeoutOnce) {
  AdmissionResult result;
  result.code = 504;
  result.stage = "mutating";
  core::Status status;
  status.code = 504;
  status.reason = "Timeout";
  status.message = "Timeout: request did not complete within requested timeout - context "
                   "deadline exceeded";
  result.status = status;
  const std::string text = explainStep(podStep(), result);
  EXPECT_THAT(text, HasSubstr("\n    Timeout: request did not complete within requested "
                              "timeout - context deadline exceeded\n"));
  EXPECT_THAT(text, Not(HasSubstr("Timeout: Timeout:")));
}

TEST(ExplainStepTest, ReinvocationNamesTheWebhookWhosePatchTriggeredIt) {
  AdmissionResult result;
  result.allowed = true;
  result.code = 201;
  result.reinvoked = true;
  CallRecord unchanged;
  unchanged.webhook = "quiet.example.com";
  unchanged.outcome = CallOutcome::kAllowed;
  CallRecord changed;
  changed.webhook = "init.example.com";
  changed.outcome = CallOutcome::kPatched;
  changed.changed = true;
  result.calls = {unchanged, changed};
  EXPECT_THAT(explainStep(podStep(), result),
              HasSubstr("  reinvocation: init.example.com changed the object in round 0, so round "
                        "1 ran"));
  EXPECT_EQ(explainStepJson(podStep(), result)["reinvocation"]["triggeredBy"],
            json::array({"init.example.com"}));
}

TEST(ExplainStepTest, FiltersByWebhookAndOnlyCalled) {
  AdmissionResult result;
  result.allowed = true;
  result.code = 201;
  MatchRecord skipped = match(MatchOutcome::kSkip, "namespaceSelector");
  skipped.webhook = "skipped.example.com";
  MatchRecord called = match(MatchOutcome::kCall);
  called.webhook = "called.example.com";
  CallRecord call;
  call.kind = core::WebhookKind::kMutating;
  call.configuration = "inject";
  call.webhook = "called.example.com";
  call.called = true;
  call.outcome = CallOutcome::kAllowed;
  result.matches = {skipped, called};
  result.calls = {call};
  ExplainOptions only_called;
  only_called.only_called = true;
  std::string text = explainStep(podStep(), result, only_called);
  EXPECT_THAT(text, HasSubstr("webhook called.example.com"));
  EXPECT_THAT(text, Not(HasSubstr("webhook skipped.example.com")));
  EXPECT_THAT(text, HasSubstr("(1 more webhook decision not shown"));
  ExplainOptions by_name;
  by_name.webhook_filter = "inject/skipped";
  text = explainStep(podStep(), result, by_name);
  EXPECT_THAT(text, HasSubstr("webhook skipped.example.com"));
  EXPECT_THAT(text, Not(HasSubstr("webhook called.example.com")));
  const json doc = explainStepJson(podStep(), result, by_name);
  ASSERT_EQ(doc["webhooks"].size(), 1u);
  EXPECT_EQ(doc["webhooks"][0]["webhook"], "skipped.example.com");
  EXPECT_EQ(doc["webhooks"][0]["skippedBy"], "namespaceSelector");
  const json all = explainStepJson(podStep(), result);
  ASSERT_EQ(all["webhooks"].size(), 2u);
  EXPECT_EQ(all["webhooks"][1]["call"]["outcome"], "Allowed");
}

// --webhook is a Go regexp, like --run: Go-only syntax such as the (?i) flag and \pL classes
// works (ECMAScript's std::regex rejected both).
TEST(ExplainStepTest, TheWebhookFilterIsAGoRegexp) {
  AdmissionResult result;
  result.allowed = true;
  result.code = 201;
  MatchRecord skipped = match(MatchOutcome::kSkip, "namespaceSelector");
  skipped.webhook = "skipped.example.com";
  MatchRecord other = match(MatchOutcome::kSkip, "objectSelector");
  other.webhook = "other.example.com";
  result.matches = {skipped, other};
  for (const char* filter : {"(?i)INJECT/SKIPPED", "^\\pL+/skip"}) {
    ExplainOptions options;
    options.webhook_filter = filter;
    const json doc = explainStepJson(podStep(), result, options);
    ASSERT_EQ(doc["webhooks"].size(), 1u) << filter;
    EXPECT_EQ(doc["webhooks"][0]["webhook"], "skipped.example.com") << filter;
  }
}

TEST(ExplainStepTest, SummarisesTheRequestPluginsAndWebhooks) {
  const Step step = podStep();
  AdmissionResult result;
  result.allowed = false;
  result.code = 403;
  result.stage = "validating";
  core::Status status;
  status.code = 403;
  status.reason = "Forbidden";
  status.message = "denied";
  result.status = status;
  result.plugins.push_back({"ServiceAccount", 0, false, true, std::nullopt});
  result.plugins.push_back({"Priority", 0, false, false, std::nullopt});
  result.matches.push_back(match(MatchOutcome::kSkip, "rules"));
  result.annotations.add("mutation.webhook.admission.k8s.io/round_0_index_2", "{}");
  const std::string text = explainStep(step, result, verbose());
  EXPECT_THAT(explainStep(step, result), HasSubstr("  audit annotations: 1 (-v lists them)\n"));
  EXPECT_THAT(text, HasSubstr("step \"create\": CREATE pods v1 demo/web\n"));
  EXPECT_THAT(text, HasSubstr("  result: 403 denied at validating in "));
  EXPECT_THAT(text, HasSubstr("    Forbidden: denied\n"));
  EXPECT_THAT(text, HasSubstr("  in-tree mutating plugins (round 0): ServiceAccount (changed the "
                              "object), Priority\n"));
  EXPECT_THAT(text, HasSubstr("  mutating webhook inject.example.com (configuration inject, round "
                              "0 index 2)\n    match: skipped by rules\n"));
  EXPECT_THAT(text, HasSubstr("    mutation.webhook.admission.k8s.io/round_0_index_2 = {} (level "
                              "Metadata)\n"));
}

TEST(ExplainStepTest, LongAnnotationValuesAreShortened) {
  const Step step = podStep();
  AdmissionResult result;
  result.allowed = true;
  result.code = 201;
  const std::string patch = "{\"patch\":\"" + std::string(1000, 'x') + "\"}";
  result.annotations.add("patch.webhook.admission.k8s.io/round_0_index_0", patch,
                         audit::Level::kRequest);
  const std::string text = explainStep(step, result, verbose());
  EXPECT_THAT(text, HasSubstr("patch.webhook.admission.k8s.io/round_0_index_0 = {\"patch\":\"xxx"));
  EXPECT_THAT(text, HasSubstr("x... (1012 bytes) (level Request)\n"));
  EXPECT_THAT(text, Not(HasSubstr(std::string(300, 'x'))));
}

TEST(FormatDurationTest, PicksAUnit) {
  EXPECT_EQ(formatDuration(std::chrono::nanoseconds(0)), "0s");
  EXPECT_EQ(formatDuration(std::chrono::nanoseconds(999)), "999ns");
  EXPECT_EQ(formatDuration(std::chrono::microseconds(850)), "850µs");
  EXPECT_EQ(formatDuration(std::chrono::microseconds(12345)), "12.3ms");
  EXPECT_EQ(formatDuration(std::chrono::milliseconds(1500)), "1.50s");
}

}  // namespace
}  // namespace harness::sim
