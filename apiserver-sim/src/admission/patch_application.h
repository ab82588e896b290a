#pragma once

// Patch application, the step after a mutating webhook allowed the request
// (mutating/dispatcher.go callAttrMutatingHook, from jsonpatch.DecodePatch on).

#include "dispatch.h"
#include "harness/core/admission_review.h"
#include "webhook_call.h"

namespace harness::sim::detail {

// Applies the verified response's patch to state.attributes.object (converted to the invocation
// kind, patched, decoded as the typed object, converted back, defaulted). An empty or undecodable
// patch, a patch on a request without object, an unsupported patch type, a patch that does not
// apply, nests the object too deeply or yields no object: the HookError the dispatcher settles
// (undecodable and unsupported type: calling errors, subject to failurePolicy; the rest: internal
// errors, 500 whatever the policy). On success `changed` says whether the object changed
// semantically, and the patch annotation is recorded.
HookError applyResponsePatch(RequestState& state, const HookEntry& hook,
                             const Invocation& invocation, const core::VerifiedResponse& verified,
                             CallRecord& record, bool& changed);

}  // namespace harness::sim::detail
