// Request outcomes from audit events; the message texts are listed in outcome.h with the upstream
// files that write them.

#include "harness/audit/outcome.h"

#include <array>
#include <utility>

#include <nlohmann/json.hpp>

#include "harness/audit/annotations.h"
#include "harness/core/json.h"
#include "harness/core/unstructured.h"

namespace harness::audit {
namespace {

constexpr std::string_view kPolicyValidationFailure =
    "validation.policy.admission.k8s.io/validation_failure";

constexpr std::array<std::pair<OutcomeKind, std::string_view>, 6> kKindNames = {{
    {OutcomeKind::kAdmitted, "admitted"},
    {OutcomeKind::kDenied, "denied"},
    {OutcomeKind::kFailed, "failed"},
    {OutcomeKind::kTimedOut, "timed-out"},
    {OutcomeKind::kError, "error"},
    {OutcomeKind::kUnknown, "unknown"},
}};

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

// The name between `prefix` and the next `quote` in `message`: Go's %q of a DNS name is the
// name between plain quotes ("admission webhook \"x\" denied"), the policy dispatcher's '%s' is
// between single quotes.
std::optional<std::string> quotedAfter(std::string_view message, std::string_view prefix,
                                       char quote = '"') {
  const auto at = message.find(prefix);
  if (at == std::string_view::npos) return std::nullopt;
  const std::size_t start = at + prefix.size();
  const auto end = message.find(quote, start);
  if (end == std::string_view::npos) return std::nullopt;
  return std::string(message.substr(start, end - start));
}

bool isTimeout(std::string_view message) {
  return message.find("context deadline exceeded") != std::string_view::npos ||
         message.find("Client.Timeout exceeded") != std::string_view::npos ||
         message.find("i/o timeout") != std::string_view::npos;
}

std::string stepOfKey(std::string_view suffix) {
  // "round_0_index_1" -> "round 0 index 1"
  std::string out(suffix);
  for (char& c : out) {
    if (c == '_') c = ' ';
  }
  return out;
}

}  // namespace

std::string_view toString(OutcomeKind kind) {
  for (const auto& [k, name] : kKindNames) {
    if (k == kind) return name;
  }
  return "unknown";
}

std::optional<OutcomeKind> parseOutcomeKind(std::string_view text) {
  for (const auto& [k, name] : kKindNames) {
    if (name == text) return k;
  }
  return std::nullopt;
}

RequestOutcome outcomeOf(const std::optional<core::Status>& response_status,
                         const std::map<std::string, std::string>& annotations) {
  RequestOutcome out;
  for (const auto& [key, value] : annotations) {
    if (startsWith(key, kMutationFailedOpenAnnotationPrefix)) {
      out.failed_open.push_back(
          "mutating webhook \"" + value + "\" (" +
          stepOfKey(std::string_view(key).substr(kMutationFailedOpenAnnotationPrefix.size())) +
          ")");
    } else if (startsWith(key, kValidatingFailedOpenAnnotationPrefix)) {
      std::string_view suffix =
          std::string_view(key).substr(kValidatingFailedOpenAnnotationPrefix.size());
      // The validating dispatcher always writes round 0.
      if (startsWith(suffix, "round_0_")) suffix.remove_prefix(8);
      out.failed_open.push_back("validating webhook \"" + value + "\" (" + stepOfKey(suffix) +
                                ")");
    } else if (key == kPolicyValidationFailure) {
      auto parsed = core::parseJson(value);
      if (!parsed || !parsed->is_array()) {
        out.policy_audit.push_back(
            std::string("unreadable ").append(key).append(": ").append(value));
        continue;
      }
      for (const auto& entry : *parsed) {
        if (!entry.is_object()) continue;
        out.policy_audit.push_back("policy \"" + core::nestedString(entry, {"policy"}) +
                                   "\" binding \"" + core::nestedString(entry, {"binding"}) +
                                   "\": " + core::nestedString(entry, {"message"}));
      }
    }
  }
  if (!response_status) return out;
  out.code = response_status->code;
  out.reason = response_status->reason;
  out.message = response_status->message;
  if (out.code >= 200 && out.code < 300) {
    out.kind = OutcomeKind::kAdmitted;
    return out;
  }
  const std::string_view message = out.message;
  if (auto webhook = quotedAfter(message, "admission webhook \"");
      webhook && message.find("\" denied the request") != std::string_view::npos) {
    out.kind = OutcomeKind::kDenied;
    out.decided_by_kind = "webhook";
    out.decided_by = std::move(*webhook);
  } else if (auto called = quotedAfter(message, "failed calling webhook \"")) {
    out.kind = isTimeout(message) ? OutcomeKind::kTimedOut : OutcomeKind::kFailed;
    out.decided_by_kind = "webhook";
    out.decided_by = std::move(*called);
  } else if (auto policy = quotedAfter(message, "ValidatingAdmissionPolicy '", '\'')) {
    out.kind = OutcomeKind::kDenied;
    out.decided_by_kind = "policy";
    out.decided_by = std::move(*policy);
    if (auto binding = quotedAfter(message, "' with binding '", '\'')) {
      out.binding = std::move(*binding);
    }
  } else if (message.find("violates PodSecurity") != std::string_view::npos) {
    out.kind = OutcomeKind::kDenied;
    out.decided_by_kind = "plugin";
    out.decided_by = "PodSecurity";
  } else if (out.code == 504 || out.reason == "Timeout") {
    out.kind = OutcomeKind::kTimedOut;
  } else if (out.code == 403 || out.code == 422 || out.code == 400) {
    out.kind = OutcomeKind::kDenied;
    if (message.find(" is forbidden: ") != std::string_view::npos) out.decided_by_kind = "plugin";
  } else {
    out.kind = OutcomeKind::kError;
  }
  return out;
}

std::string formatOutcome(const RequestOutcome& outcome) {
  std::string out(toString(outcome.kind));
  if (outcome.kind == OutcomeKind::kUnknown) {
    out += " (no responseStatus: the log has no ResponseComplete event of this request)";
  } else if (outcome.kind != OutcomeKind::kAdmitted) {
    out += " (" + std::to_string(outcome.code);
    if (!outcome.reason.empty()) out += " " + outcome.reason;
    out += ")";
    if (!outcome.decided_by.empty()) {
      out += " by " + outcome.decided_by_kind + " \"" + outcome.decided_by + "\"";
      if (!outcome.binding.empty()) out += " (binding \"" + outcome.binding + "\")";
    } else if (!outcome.decided_by_kind.empty()) {
      out += " by an admission " + outcome.decided_by_kind;
    }
    if (!outcome.message.empty()) out += ": " + outcome.message;
  }
  for (const auto& failed : outcome.failed_open) out += ", " + failed + " failed open";
  for (const auto& audit : outcome.policy_audit) out += ", audit-action failure of " + audit;
  return out;
}

}  // namespace harness::audit
