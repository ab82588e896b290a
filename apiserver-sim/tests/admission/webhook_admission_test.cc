// The webhook admission steps (failurePolicy, patch application, reinvocation, validating
// denial, matchConditions) as table rows, in the shape of kube-apiserver's
// pkg/admission/plugin/webhook/testing/testcase.go (MutatingTest / ValidatingTest: Name,
// Webhooks, ExpectAllow, ExpectStatusCode, ErrorContains, ExpectAnnotations,
// ExpectReinvokeWebhooks) and their runner in mutating/plugin_test.go TestAdmit. Each row admits
// one ConfigMap CREATE through AdmissionChain with an InProcessWebhookCaller (no TLS): the
// webhooks answer in-process, on the request's simulated clock.
//
// Expected annotations are those an audit event at level Metadata records
// (GetAnnotations(auditinternal.LevelMetadata)), written out literally. Expected reinvoked
// webhooks are those called again in round 1.

#include <cctype>
#include <chrono>
#include <map>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/metrics.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/caller.h"
#include "harness/sim/store.h"
#include "configmap_fixture.h"

namespace harness::sim {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// One webhook of a row: its configuration and what its in-process endpoint answers.
struct RowWebhook {
  std::string name;
  bool validating = false;
  std::string failure_policy;       // "" = unset (Fail)
  std::string reinvocation_policy;  // "" = unset (Never)
  int timeout_seconds = 10;
  // The endpoint.
  bool unreachable = false;               // the handler gives no answer: a transport error
  std::chrono::milliseconds takes{0};     // the answer's declared latency
  std::string deny;                       // non-empty: allowed false, this message, code 403
  std::string patch;                      // the response's patch text ("" = none)
  std::string patch_type = "JSONPatch";
  // Patches with `patch` only while the object lacks this label (key=value), so that a
  // reinvocation sees no further change.
  std::string unless_label;
  std::map<std::string, std::string> audit_annotations;
  // matchConditions: one named condition whose evaluation gives this (true/false or an error).
  std::optional<std::variant<bool, std::string>> match_condition;
};

// testcase.go's MutatingTest/ValidatingTest fields the simulator has.
struct Row {
  std::string name;
  std::vector<RowWebhook> webhooks;
  bool expect_allow = true;
  int expect_status_code = 201;
  std::string error_contains;  // in the Status message when denied
  std::map<std::string, std::string> expect_annotations;
  std::set<std::string> expect_reinvoked;  // webhooks called again in round 1
  std::optional<std::chrono::milliseconds> request_timeout;
};

std::ostream& operator<<(std::ostream& out, const Row& row) { return out << row.name; }

json webhookJson(const RowWebhook& hook) {
  json out = fixture::configMapWebhook(hook.name, hook.timeout_seconds);
  if (!hook.failure_policy.empty()) out["failurePolicy"] = hook.failure_policy;
  if (!hook.reinvocation_policy.empty()) out["reinvocationPolicy"] = hook.reinvocation_policy;
  if (hook.match_condition) {
    out["matchConditions"] = json::array({{{"name", "row"}, {"expression", "row"}}});
  }
  return out;
}

std::optional<core::AdmissionReview> answer(const RowWebhook& hook,
                                            const core::AdmissionReview& review) {
  if (hook.unreachable) return std::nullopt;
  core::AdmissionReview out = fixture::answerTo(review, hook.deny);
  core::AdmissionResponse& response = *out.response;
  response.audit_annotations = hook.audit_annotations;
  bool patch = !hook.patch.empty();
  if (patch && !hook.unless_label.empty()) {
    const auto eq = hook.unless_label.find('=');
    const json object = review.request->object.value_or(json::object());
    const json labels = object.value("metadata", json::object()).value("labels", json::object());
    patch = labels.value(hook.unless_label.substr(0, eq), "") != hook.unless_label.substr(eq + 1);
  }
  if (patch) {
    response.patch = hook.patch;
    response.patch_type = hook.patch_type;
  }
  return out;
}

AdmissionResult admit(const Row& row) {
  ObjectStore store;
  fixture::putDemoNamespace(store);
  InProcessWebhookCaller caller;
  json mutating = json::array();
  json validating = json::array();
  for (const RowWebhook& hook : row.webhooks) {
    caller.handle(
        "https://" + hook.name + "/",
        [hook](const core::AdmissionReview& review) { return answer(hook, review); }, hook.takes);
    (hook.validating ? validating : mutating).push_back(webhookJson(hook));
  }
  store.put({"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
            fixture::configuration("MutatingWebhookConfiguration", "m", mutating));
  store.put({"admissionregistration.k8s.io", "validatingwebhookconfigurations"},
            fixture::configuration("ValidatingWebhookConfiguration", "v", validating));

  ChainOptions options;
  options.plugins = {};  // webhooks only: no in-tree plugin adds annotations or changes
  options.match_conditions = [&row](const HookEntry& entry, const AdmissionAttributes&,
                                    const core::GroupVersionKind&) {
    std::vector<std::variant<bool, std::string>> results;
    for (const RowWebhook& hook : row.webhooks) {
      if (hook.name == entry.webhook.name && hook.match_condition) {
        results.push_back(*hook.match_condition);
      }
    }
    return results;
  };
  core::MetricsRegistry metrics;
  AdmissionChain chain(store, caller, metrics, options);

  return chain.handle(fixture::configMapCreate(row.request_timeout));
}

// Annotation values, as the dispatchers encode them (mutating/dispatcher.go webhookAnnotator).
std::string mutation(const std::string& webhook, bool mutated) {
  return R"({"configuration":"m","webhook":")" + webhook + R"(","mutated":)" +
         (mutated ? "true" : "false") + "}";
}
const std::string kMutation00 = "mutation.webhook.admission.k8s.io/round_0_index_0";
const std::string kMutation01 = "mutation.webhook.admission.k8s.io/round_0_index_1";
const std::string kMutation10 = "mutation.webhook.admission.k8s.io/round_1_index_0";
const std::string kFailedOpenMutation00 =
    "failed-open.mutation.webhook.admission.k8s.io/round_0_index_0";
const std::string kFailedOpenValidating00 =
    "failed-open.validating.webhook.admission.k8s.io/round_0_index_0";
const std::string kAddLabel = R"([{"op":"add","path":"/metadata/labels/injected","value":"yes"}])";

std::vector<Row> rows() {
  std::vector<Row> out;
  // --- failurePolicy on calling errors ---
  out.push_back({.name = "mutating calling error, failurePolicy Fail: 500",
                 .webhooks = {{.name = "a", .failure_policy = "Fail", .unreachable = true}},
                 .expect_allow = false,
                 .expect_status_code = 500,
                 .error_contains = "failed calling webhook \"a\"",
                 .expect_annotations = {{kMutation00, mutation("a", false)}}});
  out.push_back({.name = "mutating calling error, failurePolicy unset: fails closed",
                 .webhooks = {{.name = "a", .unreachable = true}},
                 .expect_allow = false,
                 .expect_status_code = 500,
                 .error_contains = "failed calling webhook \"a\"",
                 .expect_annotations = {{kMutation00, mutation("a", false)}}});
  out.push_back({.name = "mutating calling error, failurePolicy Ignore: fails open",
                 .webhooks = {{.name = "a", .failure_policy = "Ignore", .unreachable = true},
                              {.name = "b"}},
                 .expect_annotations = {{kMutation00, mutation("a", false)},
                                        {kFailedOpenMutation00, "a"},
                                        {kMutation01, mutation("b", false)}}});
  out.push_back({.name = "validating calling error, failurePolicy Fail: 500",
                 .webhooks = {{.name = "v", .validating = true, .failure_policy = "Fail",
                               .unreachable = true}},
                 .expect_allow = false,
                 .expect_status_code = 500,
                 .error_contains = "failed calling webhook \"v\""});
  out.push_back({.name = "validating calling error, failurePolicy Ignore: fails open",
                 .webhooks = {{.name = "v", .validating = true, .failure_policy = "Ignore",
                               .unreachable = true}},
                 .expect_annotations = {{kFailedOpenValidating00, "v"}}});
  // --- timeouts ---
  out.push_back({.name = "webhook timeout, failurePolicy Fail: 500 deadline exceeded",
                 .webhooks = {{.name = "slow", .failure_policy = "Fail", .timeout_seconds = 1,
                               .takes = 2s}},
                 .expect_allow = false,
                 .expect_status_code = 500,
                 .error_contains = "context deadline exceeded",
                 .expect_annotations = {{kMutation00, mutation("slow", false)}}});
  out.push_back({.name = "webhook timeout, failurePolicy Ignore: fails open",
                 .webhooks = {{.name = "slow", .failure_policy = "Ignore", .timeout_seconds = 1,
                               .takes = 2s}},
                 .expect_annotations = {{kMutation00, mutation("slow", false)},
                                        {kFailedOpenMutation00, "slow"}}});
  out.push_back({.name = "fail-open call that uses up the request deadline: 504",
                 .webhooks = {{.name = "slow", .failure_policy = "Ignore", .takes = 30s},
                              {.name = "later"}},
                 .expect_allow = false,
                 .expect_status_code = 504,
                 .error_contains = "request did not complete within requested timeout",
                 .expect_annotations = {{kMutation00, mutation("slow", false)},
                                        {kFailedOpenMutation00, "slow"}},
                 .request_timeout = 3s});
  out.push_back({.name = "validating timeout, failurePolicy Fail: 500",
                 .webhooks = {{.name = "v", .validating = true, .timeout_seconds = 1,
                               .takes = 1s}},
                 .expect_allow = false,
                 .expect_status_code = 500,
                 .error_contains = "context deadline exceeded"});
  // --- reinvocation ---
  out.push_back({.name = "IfNeeded webhook reinvoked after a later webhook's change",
                 .webhooks = {{.name = "a", .reinvocation_policy = "IfNeeded"},
                              {.name = "b", .reinvocation_policy = "Never", .patch = kAddLabel,
                               .unless_label = "injected=yes"}},
                 .expect_annotations = {{kMutation00, mutation("a", false)},
                                        {kMutation01, mutation("b", true)},
                                        {kMutation10, mutation("a", false)}},
                 .expect_reinvoked = {"a"}});
  out.push_back({.name = "Never webhook not reinvoked after a later webhook's change",
                 .webhooks = {{.name = "a", .reinvocation_policy = "Never"},
                              {.name = "b", .patch = kAddLabel, .unless_label = "injected=yes"}},
                 .expect_annotations = {{kMutation00, mutation("a", false)},
                                        {kMutation01, mutation("b", true)}}});
  out.push_back({.name = "a webhook's own change does not reinvoke it",
                 .webhooks = {{.name = "a", .reinvocation_policy = "IfNeeded", .patch = kAddLabel,
                               .unless_label = "injected=yes"},
                              {.name = "b", .reinvocation_policy = "IfNeeded"}},
                 .expect_annotations = {{kMutation00, mutation("a", true)},
                                        {kMutation01, mutation("b", false)}}});
  out.push_back({.name = "two IfNeeded webhooks that change the object: the earlier one reinvoked",
                 .webhooks = {{.name = "a", .reinvocation_policy = "IfNeeded",
                               .patch = R"([{"op":"add","path":"/metadata/labels/a","value":"1"}])",
                               .unless_label = "a=1"},
                              {.name = "b", .reinvocation_policy = "IfNeeded",
                               .patch = R"([{"op":"add","path":"/metadata/labels/b","value":"1"}])",
                               .unless_label = "b=1"}},
                 .expect_annotations = {{kMutation00, mutation("a", true)},
                                        {kMutation01, mutation("b", true)},
                                        {kMutation10, mutation("a", false)}},
                 .expect_reinvoked = {"a"}});
  // --- patch application errors ---
  out.push_back({.name = "undecodable patch, failurePolicy Fail: calling error 500",
                 .webhooks = {{.name = "a", .patch = "{not json"}},
                 .expect_allow = false,
                 .expect_status_code = 500,
                 .error_contains = "received undecodable patch in webhook response",
                 .expect_annotations = {{kMutation00, mutation("a", false)}}});
  out.push_back({.name = "undecodable patch, failurePolicy Ignore: fails open",
                 .webhooks = {{.name = "a", .failure_policy = "Ignore", .patch = "{not json"}},
                 .expect_annotations = {{kMutation00, mutation("a", false)},
                                        {kFailedOpenMutation00, "a"}}});
  out.push_back({.name = "patch that does not apply: 500 whatever the failurePolicy",
                 .webhooks = {{.name = "a", .failure_policy = "Ignore",
                               .patch = R"([{"op":"remove","path":"/metadata/nothing"}])"}},
                 .expect_allow = false,
                 .expect_status_code = 500,
                 .expect_annotations = {{kMutation00, mutation("a", false)}}});
  out.push_back({.name = "unsupported patch type, failurePolicy Fail: calling error 500",
                 .webhooks = {{.name = "a", .patch = kAddLabel, .patch_type = "MergePatch"}},
                 .expect_allow = false,
                 .expect_status_code = 500,
                 .error_contains = "unsupported patch type \"MergePatch\"",
                 .expect_annotations = {{kMutation00, mutation("a", false)}}});
  // --- validating denial ---
  out.push_back({.name = "validating webhook denies: its Status, annotations kept",
                 .webhooks = {{.name = "v", .validating = true, .deny = "not today",
                               .audit_annotations = {{"reason", "policy"}}}},
                 .expect_allow = false,
                 .expect_status_code = 403,
                 .error_contains = "admission webhook \"v\" denied the request: not today",
                 .expect_annotations = {{"v/reason", "policy"}}});
  out.push_back({.name = "mutating webhook denies: no later webhook runs",
                 .webhooks = {{.name = "a", .deny = "no"}, {.name = "b"}},
                 .expect_allow = false,
                 .expect_status_code = 403,
                 .error_contains = "admission webhook \"a\" denied the request: no",
                 .expect_annotations = {{kMutation00, mutation("a", false)}}});
  // --- matchConditions ---
  out.push_back({.name = "matchConditions error, failurePolicy Fail: 403",
                 .webhooks = {{.name = "a", .failure_policy = "Fail",
                               .match_condition = std::string("no such key")}},
                 .expect_allow = false,
                 .expect_status_code = 403,
                 .error_contains = "configmaps \"settings\" is forbidden: no such key"});
  out.push_back({.name = "matchConditions error, failurePolicy Ignore: webhook skipped",
                 .webhooks = {{.name = "a", .failure_policy = "Ignore", .deny = "called",
                               .match_condition = std::string("no such key")}}});
  out.push_back({.name = "matchConditions false: webhook skipped",
                 .webhooks = {{.name = "a", .deny = "called", .match_condition = false}}});
  out.push_back({.name = "matchConditions true: webhook called",
                 .webhooks = {{.name = "a", .deny = "called", .match_condition = true}},
                 .expect_allow = false,
                 .expect_status_code = 403,
                 .error_contains = "denied the request: called",
                 .expect_annotations = {{kMutation00, mutation("a", false)}}});
  return out;
}

class WebhookAdmissionTest : public ::testing::TestWithParam<Row> {};

TEST_P(WebhookAdmissionTest, Row) {
  const Row& row = GetParam();
  const AdmissionResult result = admit(row);
  const std::string message = result.status ? result.status->message : "";
  EXPECT_EQ(result.allowed, row.expect_allow) << message;
  EXPECT_EQ(result.code, row.expect_status_code) << message;
  if (!row.error_contains.empty()) {
    EXPECT_NE(message.find(row.error_contains), std::string::npos) << message;
  }
  EXPECT_EQ(result.annotations.forLevel(audit::Level::kMetadata), row.expect_annotations);
  std::set<std::string> reinvoked;
  for (const CallRecord& call : result.calls) {
    if (call.round == 1) reinvoked.insert(call.webhook);
  }
  EXPECT_EQ(reinvoked, row.expect_reinvoked);
}

INSTANTIATE_TEST_SUITE_P(Rows, WebhookAdmissionTest, ::testing::ValuesIn(rows()),
                         [](const ::testing::TestParamInfo<Row>& info) {
                           std::string name;
                           for (char c : info.param.name) {
                             name += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace harness::sim
