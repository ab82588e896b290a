#pragma once

// One webhook call as both dispatchers make it (callAttrMutatingHook / callHook up to the
// verified response), and the three error classes the dispatchers tell apart
// (util/webhook/error.go ErrCallingWebhook, ErrWebhookRejection, and plain StatusErrors).

#include <optional>
#include <string>

#include "dispatch.h"

namespace harness::sim::detail {

enum class HookErrorClass { kNone, kCalling, kRejection, kInternal };

struct HookError {
  HookErrorClass error_class = HookErrorClass::kNone;
  core::Status status;  // calling: its Status (metrics code); rejection/internal: the client's
  std::string reason;   // calling error reason (without the "failed calling webhook" prefix)
  bool canceled = false;
};

// Sends the review and verifies the answer. On success `verified` holds the response; the
// webhook's audit annotations and warnings are recorded (also for denials). Fills the call
// record's request/response fields.
HookError callWebhook(RequestState& state, const HookEntry& hook, const Invocation& invocation,
                      CallRecord& record, core::VerifiedResponse& verified);

// Records the metrics of one attempt as both dispatchers do and returns whether it counts as
// rejected.
void observeAttempt(RequestState& state, const HookEntry& hook, const HookError& error,
                    bool fail_open, std::chrono::nanoseconds elapsed);

}  // namespace harness::sim::detail
