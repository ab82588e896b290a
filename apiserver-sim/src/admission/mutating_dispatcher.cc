// The mutating webhook dispatcher, one round (docs/admission-chain.md §5, §6).
// Followed: apiserver pkg/admission/plugin/webhook/mutating/dispatcher.go (Dispatch,
// callAttrMutatingHook, webhookAnnotator). Its steps have their own files: the call
// (webhook_call.h), patch application (patch_application.h), failurePolicy (failure_policy.h) and
// the reinvocation context of mutating/reinvocationcontext.go (reinvocation_context.h).

#include "dispatch.h"
#include "failure_policy.h"
#include "harness/audit/annotations.h"
#include "harness/sim/failure_policy.h"
#include "patch_application.h"
#include "webhook_call.h"

namespace harness::sim::detail {
namespace {

std::string uidNote(const HookEntry& hook) {
  if (hook.webhook.reinvocation_policy.value_or(std::string(core::kReinvocationNever)) !=
      core::kReinvocationIfNeeded) {
    return "not reinvoked: reinvocationPolicy is Never";
  }
  return "not reinvoked: not called in round 0, or nothing changed the object after its last call";
}

}  // namespace

DispatchError dispatchMutating(RequestState& state, const std::vector<HookEntry>& hooks,
                               ReinvocationContext& reinvocation) {
  AdmissionResult& result = *state.result;
  const int round = reinvocation.round();
  WebhookReinvokeContext& webhooks = reinvocation.webhooks;
  if (reinvocation.is_reinvoke &&
      webhooks.isOutputChangedSinceLastWebhookInvocation(state.attributes.object)) {
    // In-tree plugins changed the object in round 1: every eligible webhook is reinvoked.
    webhooks.requireReinvokingPreviouslyInvokedPlugins();
  }
  struct SaveOutput {
    RequestState& state;
    WebhookReinvokeContext& webhooks;
    ~SaveOutput() { webhooks.setLastWebhookInvocationOutput(state.attributes.object); }
  } save_output{state, webhooks};

  for (const HookEntry& hook : hooks) {
    MatchRecord match_record;
    match_record.kind = hook.kind;
    match_record.configuration = hook.configuration;
    match_record.webhook = hook.webhook.name;
    match_record.round = round;
    match_record.index = hook.index;
    match_record.match =
        shouldCallHook(hook, state.attributes, state.namespaces, state.match_conditions);
    const MatchOutcome outcome = match_record.match.outcome;
    const bool eligible = outcome != MatchOutcome::kCall || !reinvocation.is_reinvoke ||
                          webhooks.shouldReinvokeWebhook(hook.webhook.uid);
    if (!eligible) match_record.reinvocation_note = uidNote(hook);
    std::optional<core::Status> match_error = match_record.match.error;
    std::optional<Invocation> invocation = match_record.match.invocation;
    result.matches.push_back(std::move(match_record));
    if (outcome == MatchOutcome::kError) {
      return match_error.value_or(core::newInternalError("webhook matching failed"));
    }
    if (outcome == MatchOutcome::kSkip || !eligible || !invocation) continue;

    CallRecord record;
    record.kind = hook.kind;
    record.configuration = hook.configuration;
    record.webhook = hook.webhook.name;
    record.uid = hook.webhook.uid;
    record.round = round;
    record.index = hook.index;
    record.failure_policy = failurePolicyName(hook.webhook);
    record.invocation = *invocation;

    bool changed = false;
    core::VerifiedResponse verified;
    HookError error = callWebhook(state, hook, *invocation, record, verified);
    state.elapsed += record.latency;
    if (error.error_class == HookErrorClass::kNone) {
      error = applyResponsePatch(state, hook, *invocation, verified, record, changed);
    }
    // webhookAnnotator.addMutationAnnotation: always, after the attempt.
    state.addAnnotation(audit::mutationAnnotationKey(round, hook.index),
                        audit::mutationAnnotationValue(hook.configuration, hook.webhook.name,
                                                       changed),
                        audit::Level::kMetadata);
    if (changed) {
      webhooks.requireReinvokingPreviouslyInvokedPlugins();
      reinvocation.should_reinvoke = true;
    }
    if (hook.webhook.reinvocation_policy &&
        *hook.webhook.reinvocation_policy == core::kReinvocationIfNeeded) {
      webhooks.addReinvocableWebhookToPreviouslyInvoked(hook.webhook.uid);
    }

    std::optional<core::Status> rejection = settleCall(state, hook, error, record);
    const bool failed_open = record.outcome == CallOutcome::kFailedOpen;
    result.calls.push_back(std::move(record));
    if (rejection) return rejection;
    if (failed_open && state.elapsed >= state.timeout) {
      // The request context is done: stop here (dispatcher.go, "no point in continuing").
      result.calls.back().outcome = CallOutcome::kRequestTimeout;
      return core::newTimeoutError(core::kRequestTimeoutMessage, 0);
    }
  }
  return std::nullopt;
}

}  // namespace harness::sim::detail
