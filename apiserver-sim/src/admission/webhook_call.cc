// Followed: apiserver pkg/admission/plugin/webhook/mutating/dispatcher.go callAttrMutatingHook and
// validating/dispatcher.go callHook (docs/admission-chain.md §4, §4.6, §4.7).

#include "webhook_call.h"

#include <algorithm>

#include <fmt/format.h>

#include "harness/audit/annotations.h"

namespace harness::sim::detail {
namespace {

HookError calling(std::string reason, core::Status status) {
  HookError error;
  error.error_class = HookErrorClass::kCalling;
  error.reason = std::move(reason);
  error.status = std::move(status);
  return error;
}

// client-go decodes a 2xx answer into the request's own type (*v1.AdmissionReview or
// *v1beta1.AdmissionReview; rest.Result.Into through the webhook client's codec, whose scheme has
// admission.k8s.io v1 and v1beta1): another version of AdmissionReview needs a conversion the
// scheme does not have, another kind is not registered. Seen with kube-apiserver v1.37.2
// (`apiserver-sim compare --backend kube`); VerifyAdmissionResponse's own GVK check is only
// reached by answers without apiVersion and kind. "" when the answer decodes.
std::string typeDecodeError(core::ReviewVersion version, const core::AdmissionReview& review) {
  if (review.kind.empty() || review.api_version.empty()) return {};
  const std::string wanted(core::versionNameOf(version));
  const std::string group_prefix = "admission.k8s.io/";
  if (review.api_version.rfind(group_prefix, 0) == 0) {
    const std::string got = review.api_version.substr(group_prefix.size());
    if ((got == "v1" || got == "v1beta1") && review.kind == core::kAdmissionReviewKind) {
      if (got == wanted) return {};
      return fmt::format("converting ({}.AdmissionReview) to ({}.AdmissionReview): unknown conversion",
                         got, wanted);
    }
  }
  return fmt::format(
      "no kind \"{}\" is registered for version \"{}\" in scheme \"pkg/runtime/scheme.go:111\"",
      review.kind, review.api_version);
}

}  // namespace

HookError callWebhook(RequestState& state, const HookEntry& hook, const Invocation& invocation,
                      CallRecord& record, core::VerifiedResponse& verified) {
  const core::Webhook& webhook = hook.webhook;
  const bool mutating = hook.kind == core::WebhookKind::kMutating;

  // §4.6: dry run is checked before anything is sent.
  if (state.attributes.dry_run) {
    if (!webhook.side_effects) {
      return calling("Webhook SideEffects is nil", core::newBadRequest("Webhook SideEffects is nil"));
    }
    if (*webhook.side_effects != core::kSideEffectsNone &&
        *webhook.side_effects != core::kSideEffectsNoneOnDryRun) {
      HookError error;
      error.error_class = HookErrorClass::kInternal;
      error.status = dryRunUnsupported(webhook.name);
      record.outcome = CallOutcome::kDryRunUnsupported;
      return error;
    }
  }

  auto version = core::negotiateReviewVersion(webhook.admission_review_versions);
  if (!version.ok()) {
    return calling(fmt::format("could not create admission objects: {}", version.error().message),
                   core::newBadRequest("error creating admission objects"));
  }
  const std::string uid = state.new_uid();
  core::AdmissionReview review =
      core::makeRequestReview(*version, buildAdmissionRequest(state.attributes, invocation, uid));
  record.review_version = std::string(core::versionNameOf(*version));
  record.request_uid = uid;
  record.request_review = core::toJson(review);

  // The call's budget: what is left of the request deadline, shortened by timeoutSeconds (§4.3).
  std::chrono::nanoseconds budget = state.timeout - state.elapsed;
  if (webhook.timeout_seconds) {
    record.timeout = std::chrono::seconds(*webhook.timeout_seconds);
    budget = std::min<std::chrono::nanoseconds>(budget, record.timeout);
  }
  WebhookCall call;
  call.webhook_name = webhook.name;
  call.client_config = webhook.client_config;
  call.body = core::encodeAdmissionReview(review);
  call.request_uid = uid;
  call.timeout_param = timeoutParam(budget);
  call.budget = budget;
  call.time_scale = state.time_scale;
  call.mutating = mutating;
  record.timeout_param = call.timeout_param;
  record.called = true;

  CallResult result = state.caller->call(call);
  record.url = result.url.empty() ? webhookUrl(webhook.client_config, call.timeout_param)
                                  : result.url;
  record.latency = std::clamp(result.latency, std::chrono::nanoseconds(0),
                              std::max(budget, std::chrono::nanoseconds(0)));
  record.attempts = result.attempts;
  if (!result.ok()) return calling(result.reason, result.status);
  record.response_review = core::toJson(result.review);
  if (std::string mismatch = typeDecodeError(*version, result.review); !mismatch.empty()) {
    return calling("failed to call webhook: " + mismatch,
                   core::newServiceUnavailable("error calling webhook"));
  }

  auto checked = core::verifyAdmissionResponse(*version, uid, mutating, result.review);
  if (!checked.ok()) {
    return calling(core::invalidWebhookResponseText(checked.error().message),
                   core::newServiceUnavailable("error validating webhook response"));
  }
  verified = std::move(checked).value();
  record.warnings = verified.warnings;
  record.audit_annotations = verified.audit_annotations;

  // §4.7: "<webhook name>/<key>" at level Metadata, also when the webhook denies; invalid keys
  // are dropped (attributes.go).
  for (const auto& [key, value] : verified.audit_annotations) {
    const std::string full_key = fmt::format("{}/{}", webhook.name, key);
    if (audit::isValidWebhookAnnotationKey(full_key)) {
      state.addAnnotation(full_key, value, audit::Level::kMetadata);
    }
  }
  for (const auto& warning : verified.warnings) state.addWarning(warning);

  if (!verified.allowed) {
    HookError error;
    error.error_class = HookErrorClass::kRejection;
    error.status = toStatusErr(webhook.name, verified.status);
    return error;
  }
  return {};
}

void observeAttempt(RequestState& state, const HookEntry& hook, const HookError& error,
                    bool fail_open, std::chrono::nanoseconds elapsed) {
  const std::string_view type = hook.kind == core::WebhookKind::kMutating
                                    ? kWebhookTypeAdmit
                                    : kWebhookTypeValidating;
  const std::string& name = hook.webhook.name;
  const std::string& operation = state.attributes.operation;
  switch (error.error_class) {
    case HookErrorClass::kNone:
      state.metrics->observeWebhook(name, type, operation, elapsed, false, 200);
      break;
    case HookErrorClass::kCalling:
      if (!fail_open && !error.canceled) {
        state.metrics->observeWebhookRejection(name, type, operation,
                                               kRejectionCallingWebhookError, error.status.code);
      }
      state.metrics->observeWebhook(name, type, operation, elapsed, !fail_open,
                                    error.status.code);
      break;
    case HookErrorClass::kRejection:
      state.metrics->observeWebhookRejection(name, type, operation, kRejectionNoError,
                                             error.status.code);
      state.metrics->observeWebhook(name, type, operation, elapsed, true, error.status.code);
      break;
    case HookErrorClass::kInternal:
      state.metrics->observeWebhookRejection(name, type, operation,
                                             kRejectionApiserverInternalError, 0);
      state.metrics->observeWebhook(name, type, operation, elapsed, true, 0);
      break;
  }
}

}  // namespace harness::sim::detail
