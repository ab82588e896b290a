// Followed: apiserver pkg/admission/plugin/webhook/matchconditions/matcher.go NewMatcher (nil is
// Fail) and the dispatchers' ignoreClientCallFailures (mutating/dispatcher.go,
// validating/dispatcher.go Dispatch).

#include "harness/sim/failure_policy.h"

namespace harness::sim {

FailurePolicyDecision decideOnFailure(const core::Webhook& webhook) {
  if (!webhook.failure_policy || *webhook.failure_policy == core::kFailurePolicyFail) {
    return FailurePolicyDecision::kFailClosed;
  }
  if (*webhook.failure_policy == core::kFailurePolicyIgnore) {
    return FailurePolicyDecision::kFailOpen;
  }
  return FailurePolicyDecision::kNeither;
}

std::string failurePolicyName(const core::Webhook& webhook) {
  return webhook.failure_policy.value_or(std::string(core::kFailurePolicyFail));
}

}  // namespace harness::sim
