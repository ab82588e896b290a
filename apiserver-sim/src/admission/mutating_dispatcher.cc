// The mutating webhook dispatcher, one round (k8s-admission-chain.md §5, §6).
// Followed: apiserver pkg/admission/plugin/webhook/mutating/dispatcher.go (Dispatch,
// callAttrMutatingHook, webhookAnnotator) and mutating/reinvocationcontext.go.

#include <fmt/format.h>

#include "dispatch.h"
#include "harness/audit/annotations.h"
#include "harness/core/json.h"
#include "harness/core/json_patch.h"
#include "harness/sim/defaulting.h"
#include "webhook_call.h"

namespace harness::sim::detail {
namespace {

// The patch part of callAttrMutatingHook, after a verified allowed response.
HookError applyResponsePatch(RequestState& state, const HookEntry& hook,
                             const Invocation& invocation, const core::VerifiedResponse& verified,
                             CallRecord& record, bool& changed) {
  const std::string& name = hook.webhook.name;
  if (verified.patch.empty()) return {};
  auto patch = core::decodePatch(verified.patch);
  if (!patch.ok()) {
    // §4.4: an undecodable patch is a calling error (503 for the metrics).
    HookError error;
    error.error_class = HookErrorClass::kCalling;
    error.reason =
        fmt::format("received undecodable patch in webhook response: {}", patch.error().message);
    error.status = core::newServiceUnavailable("error decoding patch in webhook response");
    return error;
  }
  if (patch->empty()) return {};
  if (!state.attributes.object) {
    HookError error;
    error.error_class = HookErrorClass::kInternal;
    error.status = core::newInternalError(fmt::format(
        "admission webhook {} attempted to modify the object, which is not supported for this "
        "operation",
        core::goQuote(name)));
    record.outcome = CallOutcome::kApplyError;
    return error;
  }
  if (verified.patch_type != core::kPatchTypeJsonPatch) {
    HookError error;
    error.error_class = HookErrorClass::kCalling;
    error.reason = fmt::format("unsupported patch type {}", core::goQuote(verified.patch_type));
    error.status = toStatusErr(name, verified.status);
    return error;
  }
  const nlohmann::json before = convertTo(*state.attributes.object, invocation.kind);
  auto patched = core::applyPatch(before, *patch);
  if (!patched.ok()) {
    HookError error;
    error.error_class = HookErrorClass::kInternal;
    error.status = core::newInternalError(patched.error().message);
    record.outcome = CallOutcome::kApplyError;
    record.error = patched.error().message;
    return error;
  }
  if (const nlohmann::json* deep = core::findTooDeep(*patched)) {
    // The patched JSON is decoded again (patch.go applyPatch -> runtime.Decode), and
    // encoding/json refuses it while reading apiVersion and kind (serializer/json/meta.go
    // Interpret). Checked here, before anything copies the object recursively.
    HookError error;
    error.error_class = HookErrorClass::kInternal;
    error.status = core::newInternalError(
        fmt::format("couldn't get version/kind; json parse error: invalid character '{}' "
                    "exceeded max depth",
                    deep->is_array() ? '[' : '{'));
    record.outcome = CallOutcome::kApplyError;
    record.error = error.status.message;
    return error;
  }
  if (!patched->is_object()) {
    // The serializer cannot decode a non-object into the typed object.
    HookError error;
    error.error_class = HookErrorClass::kInternal;
    error.status = core::newInternalError(
        fmt::format("json: cannot unmarshal {} into Go value of type {}.{}",
                    patched->is_array() ? "array" : core::jsonTypeName(*patched),
                    invocation.kind.version, invocation.kind.kind));
    record.outcome = CallOutcome::kApplyError;
    return error;
  }
  // Decode into the typed object (the Go encoding drops what the type does not hold), convert
  // back to the version being admitted, compare, default.
  nlohmann::json decoded = std::move(patched).value();
  normalizeLikeGoEncoding(decoded);
  nlohmann::json after = convertTo(decoded, state.attributes.kind);
  changed = !semanticEqual(*state.attributes.object, after);

  const nlohmann::json ops = core::encodePatch(*patch);
  record.patch = ops;
  record.changed = changed;
  state.addAnnotation(audit::patchAnnotationKey(record.round, record.index),
                      audit::patchAnnotationValue(hook.configuration, name, ops),
                      audit::Level::kRequest);
  applyDefaults(after);
  normalizeLikeGoEncoding(after);
  state.attributes.object = std::move(after);
  return {};
}

std::string uidNote(const HookEntry& hook) {
  if (hook.webhook.reinvocation_policy.value_or(std::string(core::kReinvocationNever)) !=
      core::kReinvocationIfNeeded) {
    return "not reinvoked: reinvocationPolicy is Never";
  }
  return "not reinvoked: not called in round 0, or nothing changed the object after its last call";
}

}  // namespace

DispatchError dispatchMutating(RequestState& state, const std::vector<HookEntry>& hooks, int round,
                               WebhookReinvocation& reinvocation, bool& changed_any) {
  AdmissionResult& result = *state.result;
  if (round == 1 && reinvocation.last_output && state.attributes.object &&
      !semanticEqual(*reinvocation.last_output, *state.attributes.object)) {
    // In-tree plugins changed the object in round 1: every eligible webhook is reinvoked.
    reinvocation.requireReinvokingPreviouslyInvoked();
  }
  struct SaveOutput {
    RequestState& state;
    WebhookReinvocation& reinvocation;
    ~SaveOutput() { reinvocation.last_output = state.attributes.object; }
  } save_output{state, reinvocation};

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
    const bool eligible =
        outcome != MatchOutcome::kCall || round == 0 || reinvocation.reinvoke.count(hook.webhook.uid);
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
    record.failure_policy = hook.webhook.failure_policy.value_or(std::string(core::kFailurePolicyFail));
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
    const bool ignore = hook.webhook.failure_policy &&
                        *hook.webhook.failure_policy == core::kFailurePolicyIgnore;
    const bool fail_open = error.error_class == HookErrorClass::kCalling && ignore;
    observeAttempt(state, hook, error, fail_open, record.latency);
    if (changed) {
      reinvocation.requireReinvokingPreviouslyInvoked();
      changed_any = true;
    }
    if (hook.webhook.reinvocation_policy &&
        *hook.webhook.reinvocation_policy == core::kReinvocationIfNeeded) {
      reinvocation.previously_invoked.insert(hook.webhook.uid);
    }

    switch (error.error_class) {
      case HookErrorClass::kNone:
        record.outcome = record.patch ? CallOutcome::kPatched : CallOutcome::kAllowed;
        result.calls.push_back(std::move(record));
        continue;
      case HookErrorClass::kCalling:
        record.error = error.reason;
        record.status = error.status;
        if (fail_open) {
          record.outcome = CallOutcome::kFailedOpen;
          if (!error.canceled) {
            state.metrics->observeWebhookFailOpen(hook.webhook.name, kWebhookTypeAdmit);
            state.addAnnotation(audit::failedOpenAnnotationKey(true, round, hook.index),
                                hook.webhook.name, audit::Level::kMetadata);
          }
          result.calls.push_back(std::move(record));
          if (state.elapsed >= state.timeout) {
            // The request context is done: stop here (dispatcher.go, "no point in continuing").
            result.calls.back().outcome = CallOutcome::kRequestTimeout;
            return core::newTimeoutError(core::kRequestTimeoutMessage, 0);
          }
          continue;
        }
        record.outcome = CallOutcome::kCallingError;
        result.calls.push_back(std::move(record));
        return core::newInternalError(callingErrorText(hook.webhook.name, error.reason));
      case HookErrorClass::kRejection:
        record.outcome = CallOutcome::kDenied;
        record.status = error.status;
        result.calls.push_back(std::move(record));
        return error.status;
      case HookErrorClass::kInternal:
        if (record.outcome != CallOutcome::kDryRunUnsupported) {
          record.outcome = CallOutcome::kApplyError;
        }
        record.status = error.status;
        result.calls.push_back(std::move(record));
        return error.status;
    }
  }
  return std::nullopt;
}

}  // namespace harness::sim::detail
