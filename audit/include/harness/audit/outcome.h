#pragma once

// What became of a request, read back from its audit event: admitted, denied (by which webhook,
// admission policy or in-tree plugin, with the code and message the client got), failed open,
// timed out. The texts recognised are those kube-apiserver writes:
//   * webhook rejection: `admission webhook "<name>" denied the request[: <msg>]`
//     (pkg/admission/plugin/webhook/errors/statuserror.go ToStatusErr);
//   * webhook calling error, failing closed: `failed calling webhook "<name>": <reason>`
//     (pkg/admission/plugin/webhook/errors/errors.go ErrCallingWebhook), a timeout when the
//     reason ends in "context deadline exceeded" or "Client.Timeout exceeded ...";
//   * ValidatingAdmissionPolicy: `ValidatingAdmissionPolicy '<p>' with binding '<b>' denied
//     request: <msg>` (pkg/admission/plugin/policy/validating/dispatcher.go), and the
//     `validation.policy.admission.k8s.io/validation_failure` annotation of the Audit action;
//   * failed open: the failed-open.{mutation,validating}.webhook.admission.k8s.io/ annotations.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/audit/event.h"

namespace harness::audit {

enum class OutcomeKind {
  kAdmitted,   // 2xx
  kDenied,     // a webhook, policy or plugin said no (4xx)
  kFailed,     // a webhook could not be called and its failurePolicy is Fail (500)
  kTimedOut,   // the same, because the call or the request ran out of time
  kError,      // any other non-2xx answer
  kUnknown,    // the event holds no responseStatus (stage before ResponseComplete)
};

// "admitted", "denied", "failed", "timed-out", "error", "unknown".
std::string_view toString(OutcomeKind kind);
// The same names; nullopt for anything else.
std::optional<OutcomeKind> parseOutcomeKind(std::string_view text);

struct RequestOutcome {
  OutcomeKind kind = OutcomeKind::kUnknown;
  std::int32_t code = 0;
  std::string reason, message;
  // Who decided, when the message says: "webhook", "policy" (a ValidatingAdmissionPolicy) or
  // "plugin" (PodSecurity, NamespaceLifecycle...: `<gr> "<name>" is forbidden: ...`), and its name.
  std::string decided_by_kind, decided_by;
  std::string binding;  // of the policy
  // The webhooks that failed open, e.g. `mutating webhook "a.example.com" (round 0 index 1)`,
  // `validating webhook "v.example.com" (index 0)`.
  std::vector<std::string> failed_open;
  // Audit-action failures of admission policies (validation_failure annotation), one per entry:
  // `policy "p" binding "b": message`.
  std::vector<std::string> policy_audit;

  bool operator==(const RequestOutcome&) const = default;
};

// The outcome from the event's responseStatus and annotations.
RequestOutcome outcomeOf(const std::optional<core::Status>& response_status,
                         const std::map<std::string, std::string>& annotations);
inline RequestOutcome outcomeOf(const Event& event) {
  return outcomeOf(event.response_status, event.annotations);
}

// One line, e.g. `denied (403 Forbidden) by webhook "deny.example.com": admission webhook
// "deny.example.com" denied the request: no`, `admitted, validating webhook "v" failed open`.
std::string formatOutcome(const RequestOutcome& outcome);

}  // namespace harness::audit
