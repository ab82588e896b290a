#pragma once

// Internal to the admission module: what the mutating and validating dispatchers share
// (apiserver pkg/admission/plugin/webhook/{mutating,validating}/dispatcher.go,
// request/admissionreview.go, errors/statuserror.go).

#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/audit/annotations.h"
#include "harness/core/admission_review.h"
#include "harness/core/status.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/admission_metrics.h"
#include "harness/sim/attributes.h"
#include "harness/sim/caller.h"
#include "harness/sim/matching.h"
#include "harness/sim/webhook_source.h"
#include "reinvocation_context.h"

namespace harness::sim::detail {

using Clock = std::chrono::steady_clock;

// Per-request state shared by the phases.
struct RequestState {
  AdmissionAttributes attributes;  // object = the current (possibly mutated) versioned object
  // The request's simulated clock (scenarios/FORMAT.md "Time"): the request deadline
  // (docs/admission-chain.md §4.3) and how much of it the webhook calls have taken so far. Only
  // webhook calls advance it; the validating calls of a request run in parallel from one start.
  std::chrono::nanoseconds timeout{0};
  std::chrono::nanoseconds elapsed{0};
  double time_scale = 1.0;  // the pace of simulated waits (WebhookCall::time_scale)
  WebhookCaller* caller = nullptr;
  AdmissionMetrics* metrics = nullptr;
  NamespaceLabelsLookup namespaces;
  const MatchConditionEvaluator* match_conditions = nullptr;
  std::function<std::string()> new_uid;
  // After a webhook's patch and the scheme's defaults: the custom resource defaulter of the
  // object's CRD (unset for built-in kinds); a Status when it fails.
  std::function<std::optional<core::Status>(nlohmann::json& object)> default_object;
  AdmissionResult* result = nullptr;
  // The result's records and annotations are written from validating threads too.
  std::mutex mutex;

  void addWarning(const std::string& text);
  // AddAnnotation with a level: false when the key exists with another value (first wins).
  bool addAnnotation(const std::string& key, const std::string& value, audit::Level level);
};

// The outcome of a dispatcher: nullopt = admitted (continue), else the error Status for the
// client.
using DispatchError = std::optional<core::Status>;

// Mutating webhooks, serially, one pass of the mutating chain (round 0, or 1 when
// `reinvocation.is_reinvoke`); sets `reinvocation.should_reinvoke` when a webhook changed the
// object.
DispatchError dispatchMutating(RequestState& state, const std::vector<HookEntry>& hooks,
                               ReinvocationContext& reinvocation);
// Validating webhooks: matching serially, calls in parallel, the first error to arrive.
DispatchError dispatchValidating(RequestState& state, const std::vector<HookEntry>& hooks);

// --- request building and answers (request/admissionreview.go, errors/statuserror.go) ---

// The object converted to the invocation kind: the built-in equivalents share one schema, so the
// conversion rewrites apiVersion and kind.
nlohmann::json convertTo(const nlohmann::json& object, const core::GroupVersionKind& kind);

// CreateAdmissionObjects' request.
core::AdmissionRequest buildAdmissionRequest(const AdmissionAttributes& attributes,
                                             const Invocation& invocation, const std::string& uid);

// ToStatusErr (errors/statuserror.go): the Status of a denial.
core::Status toStatusErr(const std::string& webhook_name, const std::optional<core::Status>& result);
// NewDryRunUnsupportedErr: 400 BadRequest `admission webhook "<name>" does not support dry run`.
core::Status dryRunUnsupported(const std::string& webhook_name);
// ErrCallingWebhook.Error(): `failed calling webhook "<name>": <reason>`.
std::string callingErrorText(const std::string& webhook_name, const std::string& reason);

// The ?timeout= value for a call that may take `budget` (min(webhook timeout, what is left of the
// request deadline)): rounded up to whole seconds, or "" when nothing is left.
std::string timeoutParam(std::chrono::nanoseconds budget);

// apiequality.Semantic.DeepEqual on the JSON of typed objects: null, {} and [] equal absence;
// quantities compare by value.
bool semanticEqual(const nlohmann::json& a, const nlohmann::json& b);

}  // namespace harness::sim::detail
