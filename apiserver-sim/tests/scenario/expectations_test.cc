// Expectations: each kind passes when it holds and fails with a readable message (and diff) when
// it does not.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/metrics.h"
#include "harness/core/status.h"
#include "harness/sim/scenario_runner.h"

namespace harness::sim {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

AdmissionResult allowedPod() {
  AdmissionResult result;
  result.allowed = true;
  result.code = 201;
  result.object = json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web", "namespace": "demo", "uid": "1234", "resourceVersion": "7",
                 "creationTimestamp": "2026-11-22T10:00:00Z",
                 "labels": {"app": "web", "injected": "true"}},
    "spec": {"containers": [{"name": "app", "image": "nginx:1.27"},
                            {"name": "proxy", "image": "proxy:2"}],
             "volumes": [{"name": "kube-api-access-x7k2q", "projected": {}}]}})");
  return result;
}

AdmissionResult deniedPod() {
  AdmissionResult result;
  result.allowed = false;
  result.code = 403;
  core::Status status;
  status.code = 403;
  status.reason = "Forbidden";
  status.message = "admission webhook \"deny.example.com\" denied the request: no";
  result.status = status;
  return result;
}

CallRecord call(std::string webhook, CallOutcome outcome, std::size_t index = 0, int round = 0) {
  CallRecord record;
  record.webhook = std::move(webhook);
  record.configuration = "config";
  record.outcome = outcome;
  record.index = index;
  record.round = round;
  record.called = true;
  record.timeout_param = "10s";
  return record;
}

std::vector<ExpectationFailure> check(const Expectation& expect, const AdmissionResult& result,
                                      StepObservation observation = {}) {
  observation.result = &result;
  return checkExpectations(expect, observation);
}

TEST(ExpectationsTest, EmptyExpectationAlwaysPasses) {
  EXPECT_THAT(check({}, deniedPod()), IsEmpty());
}

TEST(ExpectationsTest, AllowedMismatchNamesTheDenial) {
  Expectation expect;
  expect.allowed = true;
  auto failures = check(expect, deniedPod());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].field, "allowed");
  EXPECT_EQ(failures[0].message,
            "expected the request to be allowed, got 403 Forbidden: admission webhook "
            "\"deny.example.com\" denied the request: no");
  EXPECT_THAT(check(expect, allowedPod()), IsEmpty());
}

TEST(ExpectationsTest, CodeMismatch) {
  Expectation expect;
  expect.code = 201;
  auto failures = check(expect, deniedPod());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].message,
            "expected 201, got 403 Forbidden: admission webhook \"deny.example.com\" denied the "
            "request: no");
  expect.code = 403;
  EXPECT_THAT(check(expect, deniedPod()), IsEmpty());
}

TEST(ExpectationsTest, ExactMessageMismatchHasADiff) {
  Expectation expect;
  expect.message = TextExpectation{TextMatch::kExact, "admission webhook \"deny.example.com\" denied the request: yes"};
  auto failures = check(expect, deniedPod());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].field, "message");
  EXPECT_EQ(failures[0].diff,
            "- admission webhook \"deny.example.com\" denied the request: yes\n"
            "+ admission webhook \"deny.example.com\" denied the request: no\n");
}

TEST(ExpectationsTest, ContainsAndRegexMessages) {
  Expectation expect;
  expect.message = TextExpectation{TextMatch::kContains, "denied the request"};
  EXPECT_THAT(check(expect, deniedPod()), IsEmpty());
  expect.message = TextExpectation{TextMatch::kRegex, "^admission webhook \"[a-z.]+\" denied"};
  EXPECT_THAT(check(expect, deniedPod()), IsEmpty());
  expect.message = TextExpectation{TextMatch::kRegex, "timeout"};
  auto failures = check(expect, deniedPod());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].message,
            "expected a message matching /timeout/, got \"admission webhook \\\"deny.example.com\\\" "
            "denied the request: no\"");
}

TEST(ExpectationsTest, AllowedRequestHasAnEmptyMessage) {
  Expectation expect;
  expect.message = TextExpectation{TextMatch::kContains, "denied"};
  auto failures = check(expect, allowedPod());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].message, "expected a message containing \"denied\", got \"\"");
}

TEST(ExpectationsTest, ReasonMismatch) {
  Expectation expect;
  expect.reason = "InternalError";
  auto failures = check(expect, deniedPod());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].message, "expected \"InternalError\", got \"Forbidden\"");
}

TEST(ExpectationsTest, PartialObjectMatches) {
  Expectation expect;
  expect.object = json::parse(R"({"metadata": {"labels": {"injected": "true"}},
                                  "spec": {"containers": [{"name": "app"}, {"name": "proxy"}]}})");
  EXPECT_THAT(check(expect, allowedPod()), IsEmpty());
}

TEST(ExpectationsTest, PartialObjectMismatchShowsPathsAndAProjectedDiff) {
  Expectation expect;
  expect.object = json::parse(R"({"metadata": {"name": "web", "labels": {"injected": "false"}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.25"}]}})");
  auto failures = check(expect, allowedPod());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].field, "object");
  EXPECT_EQ(failures[0].message,
            "/metadata/labels/injected: expected \"false\", got \"true\" (and 2 more)");
  // The actual object is cut to the expected fields, without server-set metadata; the extra
  // container shows up because lists must match in length.
  EXPECT_EQ(failures[0].diff,
            "  metadata:\n"
            "    labels:\n"
            "-     injected: \"false\"\n"
            "+     injected: \"true\"\n"
            "    name: web\n"
            "  spec:\n"
            "    containers:\n"
            "-   - image: nginx:1.25\n"
            "+   - image: nginx:1.27\n"
            "      name: app\n"
            "+   - image: proxy:2\n"
            "+     name: proxy\n");
}

TEST(ExpectationsTest, PartialMatchReportsEachMismatch) {
  const json actual = json::parse(R"({"a": {"b": 1, "c": [1, 2]}, "s": "x"})");
  EXPECT_THAT(partialMatchMismatches(json::parse(R"({"a": {"b": 1.0}})"), actual), IsEmpty());
  EXPECT_THAT(partialMatchMismatches(json::parse(R"({"a": {"c": [1]}, "s": {"$regex": "^y"},
                                                      "z": null})"),
                                     actual),
              ElementsAre("/a/c: expected 1 items, got 2",
                          "/s: expected a string matching /^y/, got \"x\"",
                          "/z: missing (expected null)"));
  EXPECT_THAT(partialMatchMismatches(json::parse(R"({"a": []})"), actual),
              ElementsAre("/a: expected a list, got {\"b\":1,\"c\":[1,2]}"));
}

TEST(ExpectationsTest, KubeApiAccessPlaceholderMatchesTheRandomVolumeName) {
  Expectation expect;
  expect.object = json::parse(R"({"spec": {"volumes": [{"name": "kube-api-access-*"}]}})");
  EXPECT_THAT(check(expect, allowedPod()), IsEmpty());
  expect.object = json::parse(R"({"spec": {"volumes": [{"name": {"$regex": "^kube-api-access-"}}]}})");
  EXPECT_THAT(check(expect, allowedPod()), IsEmpty());
}

TEST(ExpectationsTest, ObjectExpectedButRequestDenied) {
  Expectation expect;
  expect.object = json::object();
  auto failures = check(expect, deniedPod());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_THAT(failures[0].message, HasSubstr("expected an object, got none (403 Forbidden"));
}

TEST(ExpectationsTest, AbsentPointers) {
  Expectation expect;
  expect.absent = {"/metadata/labels/other", "/spec/containers/2"};
  EXPECT_THAT(check(expect, allowedPod()), IsEmpty());
  expect.absent = {"/metadata/labels/injected"};
  auto failures = check(expect, allowedPod());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].message, "/metadata/labels/injected exists: \"true\"");
}

TEST(ExpectationsTest, CallsMatchExactlyInOrder) {
  AdmissionResult result = allowedPod();
  result.calls = {call("a.example.com", CallOutcome::kPatched, 0),
                  call("b.example.com", CallOutcome::kAllowed, 1)};
  Expectation expect;
  expect.calls = std::vector<CallExpectation>{{.webhook = "a.example.com", .outcome = "Patched"},
                                              {.webhook = "b.example.com"}};
  EXPECT_THAT(check(expect, result), IsEmpty());

  expect.calls = std::vector<CallExpectation>{{.webhook = "b.example.com"},
                                              {.webhook = "a.example.com"}};
  auto failures = check(expect, result);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].message, "call 0 differs");
  EXPECT_EQ(failures[0].diff,
            "- webhook=b.example.com\n"
            "  webhook=a.example.com\n"
            "+ webhook=b.example.com\n");
}

TEST(ExpectationsTest, CallCountMismatchShowsTheActualCalls) {
  AdmissionResult result = allowedPod();
  result.calls = {call("a.example.com", CallOutcome::kFailedOpen, 3)};
  Expectation expect;
  expect.calls = std::vector<CallExpectation>{};
  auto failures = check(expect, result);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].message, "expected 0 calls, got 1");
  EXPECT_EQ(failures[0].diff,
            "+ webhook=a.example.com configuration=config type=mutating round=0 index=3 "
            "outcome=FailedOpen called=true timeout=10s code=0 changed=false\n");
}

TEST(ExpectationsTest, CallsSubsetMatchesInOrderAmongOthers) {
  AdmissionResult result = allowedPod();
  result.calls = {call("a.example.com", CallOutcome::kAllowed, 0),
                  call("b.example.com", CallOutcome::kAllowed, 1),
                  call("a.example.com", CallOutcome::kAllowed, 0, 1)};
  Expectation expect;
  expect.calls_match = ListMatch::kSubset;
  expect.calls = std::vector<CallExpectation>{{.webhook = "b.example.com"},
                                              {.webhook = "a.example.com", .round = 1}};
  EXPECT_THAT(check(expect, result), IsEmpty());
  expect.calls = std::vector<CallExpectation>{{.webhook = "a.example.com", .round = 1},
                                              {.webhook = "b.example.com"}};
  auto failures = check(expect, result);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].message,
            "expected call 1 (webhook=b.example.com) not found in order");
}

TEST(ExpectationsTest, CallCounts) {
  AdmissionResult result = allowedPod();
  result.calls = {call("a.example.com", CallOutcome::kAllowed),
                  call("a.example.com", CallOutcome::kAllowed, 0, 1)};
  Expectation expect;
  expect.call_counts = {{"a.example.com", 2}, {"b.example.com", 0}};
  EXPECT_THAT(check(expect, result), IsEmpty());
  expect.call_counts = {{"a.example.com", 1}};
  auto failures = check(expect, result);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].field, "callCounts[a.example.com]");
  EXPECT_EQ(failures[0].message, "expected 1 calls of a.example.com, got 2");
}

TEST(ExpectationsTest, AnnotationsCompareJsonValuesSemantically) {
  AdmissionResult result = allowedPod();
  result.annotations.add("mutation.webhook.admission.k8s.io/round_0_index_0",
                         R"({"configuration":"c","webhook":"w","mutated":true})");
  Expectation expect;
  expect.annotations = std::map<std::string, std::string>{
      {"mutation.webhook.admission.k8s.io/round_0_index_0",
       R"({"mutated": true, "webhook": "w", "configuration": "c"})"}};
  EXPECT_THAT(check(expect, result), IsEmpty());
}

TEST(ExpectationsTest, ExactAnnotationsRejectExtraKeysSubsetDoesNot) {
  AdmissionResult result = allowedPod();
  result.annotations.add("a.example.com/x", "1");
  result.annotations.add("a.example.com/y", "2");
  Expectation expect;
  expect.annotations = std::map<std::string, std::string>{{"a.example.com/x", "1"}};
  auto failures = check(expect, result);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].message, "\"a.example.com/y\" unexpected");
  EXPECT_EQ(failures[0].diff, "  a.example.com/x: 1\n+ a.example.com/y: 2\n");
  expect.annotations_match = ListMatch::kSubset;
  EXPECT_THAT(check(expect, result), IsEmpty());
}

TEST(ExpectationsTest, AnnotationValueMismatch) {
  AdmissionResult result = allowedPod();
  result.annotations.add("a.example.com/x", "1");
  Expectation expect;
  expect.annotations_match = ListMatch::kSubset;
  expect.annotations = std::map<std::string, std::string>{{"a.example.com/x", "2"},
                                                          {"a.example.com/z", "3"}};
  auto failures = check(expect, result);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].message, "\"a.example.com/x\": expected \"2\", got \"1\" (and 1 more)");
}

TEST(ExpectationsTest, WarningsAreExactAndOrdered) {
  AdmissionResult result = allowedPod();
  result.warnings = {"w1", "w2"};
  Expectation expect;
  expect.warnings = std::vector<std::string>{"w1", "w2"};
  EXPECT_THAT(check(expect, result), IsEmpty());
  expect.warnings = std::vector<std::string>{"w2"};
  auto failures = check(expect, result);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].message, "expected 1 warnings, got 2");
  EXPECT_EQ(failures[0].diff, "+ w1\n  w2\n");
}

TEST(ExpectationsTest, MetricDeltas) {
  Expectation expect;
  expect.metrics = {{"apiserver_admission_webhook_rejection_count", {{"name", "d"}}, 1},
                    {"nope_total", {}, 0}};
  StepObservation observation;
  observation.metric_deltas = {1.0, std::nullopt};
  auto failures = check(expect, deniedPod(), observation);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].field, "metrics[1]");
  EXPECT_EQ(failures[0].message, "no counter named \"nope_total\"");
  observation.metric_deltas = {0.0, 0.0};
  failures = check(expect, deniedPod(), observation);
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].message,
            "apiserver_admission_webhook_rejection_count{name=\"d\"}: expected a change of 1, "
            "got 0");
}

TEST(ExpectationsTest, StubObservations) {
  Expectation expect;
  expect.stubs["deny"] = StubExpectation{1, "10s", "CREATE", false};
  StepObservation observation;
  observation.stubs["deny"] = StubObservation{1, "10s", "CREATE", false};
  EXPECT_THAT(check(expect, deniedPod(), observation), IsEmpty());
  observation.stubs["deny"] = StubObservation{2, "5s", "UPDATE", true};
  auto failures = check(expect, deniedPod(), observation);
  ASSERT_EQ(failures.size(), 4u);
  EXPECT_EQ(failures[0].field, "stub[deny]");
  EXPECT_EQ(failures[0].message, "expected 1 requests, got 2");
  EXPECT_EQ(failures[1].message, "expected the last ?timeout= \"10s\", got \"5s\"");
  EXPECT_EQ(failures[2].message, "expected the last operation \"CREATE\", got \"UPDATE\"");
  EXPECT_EQ(failures[3].message, "expected the last dryRun false, got true");
}

TEST(ExpectationsTest, Reinvoked) {
  Expectation expect;
  expect.reinvoked = true;
  auto failures = check(expect, allowedPod());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].message, "expected true, got false");
}

TEST(ExpectationsTest, AuditEventLevelAndObjects) {
  AdmissionResult result = allowedPod();
  audit::Event event;
  event.level = audit::Level::kMetadata;
  event.annotations = {{"a.example.com/x", "1"}};
  result.audit_event = event;
  Expectation expect;
  expect.audit_event = AuditEventExpectation{};
  expect.audit_event->level = "Metadata";
  expect.audit_event->annotations = std::map<std::string, std::string>{{"a.example.com/x", "1"}};
  expect.audit_event->request_object = false;
  EXPECT_THAT(check(expect, result), IsEmpty());
  expect.audit_event->level = "Request";
  expect.audit_event->request_object = true;
  auto failures = check(expect, result);
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0].field, "auditEvent.level");
  EXPECT_EQ(failures[0].message, "expected Request, got Metadata");
  EXPECT_EQ(failures[1].message, "expected requestObject, got none");
}

TEST(ExpectationsTest, AuditEventAbsent) {
  Expectation expect;
  expect.audit_event = AuditEventExpectation{};
  auto failures = check(expect, allowedPod());
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].message, "expected an audit event, got none");
  expect.audit_event->present = false;
  EXPECT_THAT(check(expect, allowedPod()), IsEmpty());
}

TEST(ServerSetFieldsTest, AreLeftOutAndRandomVolumeNamesMasked) {
  const json cleaned = withoutServerSetFields(*allowedPod().object);
  EXPECT_FALSE(cleaned["metadata"].contains("uid"));
  EXPECT_FALSE(cleaned["metadata"].contains("resourceVersion"));
  EXPECT_FALSE(cleaned["metadata"].contains("creationTimestamp"));
  EXPECT_EQ(cleaned["metadata"]["name"], "web");
  EXPECT_EQ(cleaned["spec"]["volumes"][0]["name"], "kube-api-access-*");
}

TEST(LineDiffTest, EqualTextsHaveNoDiff) { EXPECT_EQ(lineDiff("a\nb\n", "a\nb\n"), ""); }

TEST(LineDiffTest, LongUnchangedRunsAreElided) {
  std::string a;
  std::string b;
  for (int i = 0; i < 20; ++i) {
    a += std::to_string(i) + "\n";
    b += (i == 10 ? std::string("ten") : std::to_string(i)) + "\n";
  }
  EXPECT_EQ(lineDiff(a, b), "  ...\n  7\n  8\n  9\n- 10\n+ ten\n  11\n  12\n  13\n  ...\n");
}

TEST(MetricValueTest, SumsTheSeriesWhoseLabelsIncludeTheGivenOnes) {
  core::MetricsRegistry registry;
  auto& counter = registry.counter("c_total", "help", {"name", "type"});
  counter.add({"a", "admit"}, 2);
  counter.add({"a", "validating"}, 3);
  counter.add({"b", "admit"}, 5);
  EXPECT_EQ(metricValue(registry, "c_total", {}), 10);
  EXPECT_EQ(metricValue(registry, "c_total", {{"name", "a"}}), 5);
  EXPECT_EQ(metricValue(registry, "c_total", {{"name", "a"}, {"type", "admit"}}), 2);
  EXPECT_EQ(metricValue(registry, "c_total", {{"other", "x"}}), 0);
  EXPECT_EQ(metricValue(registry, "missing_total", {}), std::nullopt);
}

}  // namespace
}  // namespace harness::sim
