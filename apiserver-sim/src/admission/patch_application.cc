// Patch application: the part of callAttrMutatingHook after a verified, allowed response
// (docs/admission-chain.md §5, §4.4).
// Followed: apiserver pkg/admission/plugin/webhook/mutating/dispatcher.go callAttrMutatingHook
// (jsonpatch.DecodePatch, the object-less and patch-type checks, patchObj.Apply, the decode into
// the versioned object, apiequality.Semantic.DeepEqual for `changed`, webhookAnnotator
// addPatchAnnotation) and the scheme defaulting re-applied after it.

#include "patch_application.h"

#include <fmt/format.h>

#include "harness/audit/annotations.h"
#include "harness/core/json.h"
#include "harness/core/json_patch.h"
#include "harness/go/strconv.h"
#include "harness/sim/defaulting.h"

namespace harness::sim::detail {

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
        go::quote(name)));
    record.outcome = CallOutcome::kApplyError;
    return error;
  }
  if (verified.patch_type != core::kPatchTypeJsonPatch) {
    HookError error;
    error.error_class = HookErrorClass::kCalling;
    error.reason = fmt::format("unsupported patch type {}", go::quote(verified.patch_type));
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
  if (state.default_object) {
    // mutating/dispatcher.go: o.GetObjectDefaulter().Default(...), the CRD's structural
    // defaults for a custom resource (customresource_handler.go unstructuredDefaulter).
    if (auto failure = state.default_object(after)) {
      HookError error;
      error.error_class = HookErrorClass::kInternal;
      error.status = std::move(*failure);
      record.outcome = CallOutcome::kApplyError;
      record.error = error.status.message;
      return error;
    }
  }
  state.attributes.object = std::move(after);
  return {};
}

}  // namespace harness::sim::detail
