#pragma once

// failurePolicy applied to a webhook call: what both dispatchers make of one call's outcome.
// Followed: apiserver pkg/admission/plugin/webhook/mutating/dispatcher.go and
// validating/dispatcher.go (Dispatch: the switch on ErrCallingWebhook, ErrWebhookRejection and
// other errors after a call; the fail-open metric and annotation), util/webhook/error.go
// (ErrCallingWebhook, ErrWebhookRejection). The decision itself is
// harness/sim/failure_policy.h, shared with matchConditions.

#include <optional>

#include "dispatch.h"
#include "harness/core/status.h"
#include "webhook_call.h"

namespace harness::sim::detail {

// Settles one call attempt: records its metrics, sets the record's outcome, status and error;
// a calling error under failurePolicy Ignore fails open (the fail-open metric and the
// `failed-open.(mutation|validating).webhook.admission.k8s.io/round_{r}_index_{i}` annotation,
// from the record's round and index, unless the call was canceled). Returns the Status the
// request is rejected with: a calling error under Fail as a 500 `failed calling webhook`, a
// denial's Status, an internal error's Status; nullopt when the call admitted the request or
// failed open.
std::optional<core::Status> settleCall(RequestState& state, const HookEntry& hook,
                                       const HookError& error, CallRecord& record);

}  // namespace harness::sim::detail
