// Followed: apiserver pkg/admission/plugin/webhook/mutating/dispatcher.go and
// validating/dispatcher.go Dispatch (after callAttrMutatingHook / callHook: ignoreClientCallFailures,
// ObserveWebhookFailOpen, addFailedOpenAnnotation, apierrors.NewInternalError of a calling error,
// the rejection's Status).

#include "failure_policy.h"

#include "harness/audit/annotations.h"
#include "harness/sim/failure_policy.h"

namespace harness::sim::detail {

std::optional<core::Status> settleCall(RequestState& state, const HookEntry& hook,
                                       const HookError& error, CallRecord& record) {
  const bool mutating = hook.kind == core::WebhookKind::kMutating;
  // The dispatchers fail open only under Ignore (kNeither fails closed).
  const bool fail_open = error.error_class == HookErrorClass::kCalling &&
                         decideOnFailure(hook.webhook) == FailurePolicyDecision::kFailOpen;
  observeAttempt(state, hook, error, fail_open, record.latency);
  switch (error.error_class) {
    case HookErrorClass::kNone:
      record.outcome = record.patch ? CallOutcome::kPatched : CallOutcome::kAllowed;
      return std::nullopt;
    case HookErrorClass::kCalling:
      record.error = error.reason;
      record.status = error.status;
      if (fail_open) {
        record.outcome = CallOutcome::kFailedOpen;
        if (!error.canceled) {
          state.metrics->observeWebhookFailOpen(
              hook.webhook.name, mutating ? kWebhookTypeAdmit : kWebhookTypeValidating);
          state.addAnnotation(audit::failedOpenAnnotationKey(mutating, record.round, record.index),
                              hook.webhook.name, audit::Level::kMetadata);
        }
        return std::nullopt;
      }
      record.outcome = CallOutcome::kCallingError;
      return core::newInternalError(callingErrorText(hook.webhook.name, error.reason));
    case HookErrorClass::kRejection:
      record.outcome = CallOutcome::kDenied;
      record.status = error.status;
      return error.status;
    case HookErrorClass::kInternal:
      if (record.outcome != CallOutcome::kDryRunUnsupported) {
        record.outcome = CallOutcome::kApplyError;
      }
      record.status = error.status;
      return error.status;
  }
  return std::nullopt;
}

}  // namespace harness::sim::detail
