#pragma once

// failurePolicy: the one decision on the errors a webhook's failurePolicy governs, taken by the
// mutating and validating dispatchers (for calling errors) and by matchConditions (for
// evaluation errors).
// Followed: apiserver pkg/admission/plugin/webhook/mutating/dispatcher.go and
// validating/dispatcher.go (Dispatch: ignoreClientCallFailures), matchconditions/matcher.go
// (NewMatcher: a nil failurePolicy is Fail; Match: Fail returns the error, Ignore skips).

#include <string>

#include "harness/core/webhook_config.h"

namespace harness::sim {

enum class FailurePolicyDecision {
  kFailClosed,  // Fail, or unset (the v1 default): the error rejects the request
  kFailOpen,    // Ignore: the webhook is passed over and the request goes on
  // Any other value (v1 validation rejects it, so only a hand-built webhook has one): neither
  // branch of upstream's checks is taken. The dispatchers then fail closed (they only test for
  // Ignore); matchConditions match the webhook (Match falls through to Matches: true).
  kNeither,
};

// The decision for an error of `webhook` that its failurePolicy governs.
FailurePolicyDecision decideOnFailure(const core::Webhook& webhook);

// The policy as records and explanations name it: the configured value, "Fail" when unset.
std::string failurePolicyName(const core::Webhook& webhook);

}  // namespace harness::sim
