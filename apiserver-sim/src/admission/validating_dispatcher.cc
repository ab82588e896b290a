// The validating webhook dispatcher (docs/admission-chain.md §2.2, §4.3, §7.1).
// Followed: apiserver pkg/admission/plugin/webhook/validating/dispatcher.go: matching serially
// (the first matching error aborts before any call), the 504 when the request is already done,
// one concurrent call per matching webhook, and the first error to arrive returned. The calls
// start together on the request's simulated clock; "first to arrive" is the error of the call with
// the shortest simulated latency, the earlier webhook in configuration order on a tie (the real
// apiserver's order between simultaneous answers is a race).

#include <algorithm>
#include <optional>
#include <thread>

#include "dispatch.h"
#include "failure_policy.h"
#include "harness/sim/failure_policy.h"
#include "webhook_call.h"

namespace harness::sim::detail {

DispatchError dispatchValidating(RequestState& state, const std::vector<HookEntry>& hooks) {
  AdmissionResult& result = *state.result;
  struct Relevant {
    const HookEntry* hook;
    Invocation invocation;
  };
  std::vector<Relevant> relevant;
  for (const HookEntry& hook : hooks) {
    MatchRecord match_record;
    match_record.kind = hook.kind;
    match_record.configuration = hook.configuration;
    match_record.webhook = hook.webhook.name;
    match_record.round = 0;
    match_record.index = hook.index;
    match_record.match =
        shouldCallHook(hook, state.attributes, state.namespaces, state.match_conditions);
    const MatchOutcome outcome = match_record.match.outcome;
    std::optional<core::Status> error = match_record.match.error;
    std::optional<Invocation> invocation = match_record.match.invocation;
    result.matches.push_back(std::move(match_record));
    if (outcome == MatchOutcome::kError) {
      return error.value_or(core::newInternalError("webhook matching failed"));
    }
    if (outcome == MatchOutcome::kCall && invocation) relevant.push_back({&hook, *invocation});
  }
  if (relevant.empty()) return std::nullopt;
  if (state.elapsed >= state.timeout) {
    return core::newTimeoutError(core::kRequestTimeoutMessage, 0);
  }

  std::vector<CallRecord> records(relevant.size());
  std::vector<std::optional<core::Status>> errors(relevant.size());  // per call
  auto call = [&](std::size_t j) {
    const HookEntry& hook = *relevant[j].hook;
    CallRecord& record = records[j];
    record.kind = hook.kind;
    record.configuration = hook.configuration;
    record.webhook = hook.webhook.name;
    record.uid = hook.webhook.uid;
    record.round = 0;
    record.index = j;  // failed-open keys use the index among matching webhooks
    record.failure_policy = failurePolicyName(hook.webhook);
    record.invocation = relevant[j].invocation;
    core::VerifiedResponse verified;
    HookError error = callWebhook(state, hook, relevant[j].invocation, record, verified);
    errors[j] = settleCall(state, hook, error, record);
  };
  // One thread per call but the last, which this thread makes: a single validating webhook (the
  // usual case) costs no thread, and the calls still run at once.
  std::vector<std::thread> threads;
  threads.reserve(relevant.size() - 1);
  for (std::size_t j = 0; j + 1 < relevant.size(); ++j) threads.emplace_back(call, j);
  call(relevant.size() - 1);
  for (auto& thread : threads) thread.join();
  // The phase ends with its slowest call; the error returned is the first to arrive.
  std::chrono::nanoseconds slowest{0};
  std::optional<std::size_t> first;
  for (std::size_t j = 0; j < records.size(); ++j) {
    slowest = std::max(slowest, records[j].latency);
    if (errors[j] && (!first || records[j].latency < records[*first].latency)) first = j;
  }
  state.elapsed += slowest;
  for (auto& record : records) result.calls.push_back(std::move(record));
  if (!first) return std::nullopt;
  return errors[*first];
}

}  // namespace harness::sim::detail
