// --explain: the chain's records of one request as text (explain.h).

#include "harness/sim/explain.h"

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/audit/level.h"
#include "harness/core/json_patch.h"
#include "harness/core/json_pointer.h"
#include "harness/core/webhook_config.h"
#include "harness/sim/scenario_runner.h"

namespace harness::sim {
using nlohmann::json;

namespace {

std::string show(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 160) text = text.substr(0, 157) + "...";
  return text;
}

std::string_view webhookTypeName(core::WebhookKind kind) {
  return kind == core::WebhookKind::kMutating ? "mutating" : "validating";
}

std::string indent(const std::string& text, std::string_view prefix) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out.append(prefix);
    out.append(text, start, end - start);
    out += '\n';
    start = end + 1;
  }
  return out;
}

// The value at a JSON Patch path (evanphx splits on "/" leniently; the RFC parser is close enough
// for display), or nullptr.
const json* valueAt(const json& doc, const std::string& path) {
  auto found = core::resolvePointer(doc, std::string_view(path));
  return found.ok() ? *found : nullptr;
}

std::string failurePolicyOf(const CallRecord& call) {
  return call.failure_policy.empty() ? std::string(core::kFailurePolicyFail) : call.failure_policy;
}

// What the outcome did to the request, in the reference's words (docs/admission-chain.md §4.4).
std::string outcomeText(const CallRecord& call) {
  switch (call.outcome) {
    case CallOutcome::kAllowed:
      return "allowed, no patch";
    case CallOutcome::kPatched:
      return call.changed ? "allowed with a patch that changed the object"
                          : "allowed with a patch that did not change the object";
    case CallOutcome::kDenied:
      return "denied (a rejection: failurePolicy does not apply)";
    case CallOutcome::kCallingError:
      return fmt::format("calling error, failurePolicy {} -> rejected (fail closed)",
                         failurePolicyOf(call));
    case CallOutcome::kFailedOpen:
      return fmt::format("calling error, failurePolicy {} -> ignored (fail open)",
                         failurePolicyOf(call));
    case CallOutcome::kDryRunUnsupported:
      return "dry-run request to a webhook with side effects -> 400, not called";
    case CallOutcome::kApplyError:
      return "the patch could not be applied -> 500 (failurePolicy does not apply)";
    case CallOutcome::kRequestTimeout:
      return "the request deadline was exhausted -> 504";
  }
  return "unknown";
}

std::string requestLine(const Step& step, const AdmissionResult& result) {
  const auto& request = step.request;
  std::string target = request.resource.resource;
  if (!request.resource.group.empty()) target += "." + request.resource.group;
  if (!request.subresource.empty()) target += "/" + request.subresource;
  std::string name = request.name;
  if (name.empty() && result.object) {
    if (auto it = result.object->find("metadata"); it != result.object->end() && it->is_object()) {
      name = it->value("name", "");
    }
  }
  if (name.empty() && request.object) {
    if (auto it = request.object->find("metadata"); it != request.object->end() && it->is_object()) {
      const std::string generate = it->value("generateName", "");
      if (!generate.empty()) name = generate + "<generated>";
    }
  }
  std::string where = request.namespace_name.empty() ? name : request.namespace_name + "/" + name;
  return fmt::format("{} {} {} {}{}", request.operation, target, request.resource.version, where,
                     request.dry_run ? " (dry run)" : "");
}

}  // namespace

std::string formatDuration(std::chrono::nanoseconds duration) {
  const double ns = static_cast<double>(duration.count());
  if (ns == 0) return "0s";  // a stub that declares no delay
  if (ns < 1e3) return fmt::format("{}ns", duration.count());
  if (ns < 1e6) return fmt::format("{:.0f}µs", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.1f}ms", ns / 1e6);
  return fmt::format("{:.2f}s", ns / 1e9);
}

std::string explainPatch(const nlohmann::json& before, const nlohmann::json& patch) {
  if (!patch.is_array()) return fmt::format("(not a patch: {})\n", show(patch));
  std::string out;
  // Each operation's effect: the document before it and after it.
  json current = before;
  bool applicable = true;
  for (const auto& op : patch) {
    const std::string kind = op.is_object() ? op.value("op", "?") : "?";
    const std::string path = op.is_object() && op.contains("path") && op["path"].is_string()
                                 ? op["path"].get<std::string>()
                                 : "";
    const std::string from = op.is_object() && op.contains("from") && op["from"].is_string()
                                 ? op["from"].get<std::string>()
                                 : "";
    out += from.empty() ? fmt::format("{} {}\n", kind, path)
                        : fmt::format("{} {} -> {}\n", kind, from, path);
    if (!applicable) continue;
    json next;
    auto decoded = core::decodePatch(json::array({op}).dump());
    if (decoded.ok()) {
      auto applied = core::applyPatch(current, *decoded);
      if (applied.ok()) {
        next = std::move(*applied);
      } else {
        out += fmt::format("    (does not apply: {})\n", applied.error().message);
        applicable = false;
        continue;
      }
    } else {
      applicable = false;
      continue;
    }
    if (kind == "test") {
      current = std::move(next);
      continue;
    }
    if (kind == "move" && !from.empty()) {
      if (const json* old = valueAt(current, from)) out += "    - " + show(*old) + "\n";
    }
    if (const json* old = valueAt(current, path); old != nullptr && kind != "add") {
      out += "    - " + show(*old) + "\n";
    } else if (old != nullptr && kind == "add" && !(current.is_object() && path.empty())) {
      // add on an existing object member replaces it; on an array index it inserts.
      const json* parent = valueAt(current, core::JsonPointer::parse(path).ok()
                                                ? core::JsonPointer::parse(path)->parent().toString()
                                                : std::string());
      if (parent != nullptr && parent->is_object()) out += "    - " + show(*old) + "\n";
    }
    if (kind != "remove") {
      if (const json* now = valueAt(next, path)) out += "    + " + show(*now) + "\n";
    }
    current = std::move(next);
  }
  return out;
}

std::string explainWebhook(const MatchRecord& match, const CallRecord* call) {
  std::string out;
  const std::string index_label = match.kind == core::WebhookKind::kMutating
                                      ? fmt::format("round {} index {}", match.round, match.index)
                                      : fmt::format("index {}", match.index);
  out += fmt::format("{} webhook {} (configuration {}, {})\n", webhookTypeName(match.kind), match.webhook,
                     match.configuration, index_label);
  std::string decision;
  switch (match.match.outcome) {
    case MatchOutcome::kCall:
      decision = match.reinvocation_note.empty() ? "matched" : "matched, not reinvoked";
      break;
    case MatchOutcome::kSkip:
      decision = match.match.skipped_by.empty() ? "skipped"
                                                : fmt::format("skipped by {}", match.match.skipped_by);
      break;
    case MatchOutcome::kError:
      decision = "matching error (returned as-is; failurePolicy does not apply)";
      break;
  }
  out += "  match: " + decision + "\n";
  for (const auto& line : match.match.explanation) out += "    " + line + "\n";
  if (!match.reinvocation_note.empty()) out += "    " + match.reinvocation_note + "\n";
  if (match.match.invocation && match.match.invocation->equivalent) {
    const auto& inv = *match.match.invocation;
    out += fmt::format("    sent as {} {} (matchPolicy Equivalent, rule {})\n",
                       inv.resource.toString(), inv.kind.toString(), inv.rule_index);
  }
  if (match.match.error) {
    out += fmt::format("    error: {} {}\n", match.match.error->code, match.match.error->message);
  }
  if (call == nullptr) return out;
  if (call->called) {
    out += fmt::format("  call: POST {} (AdmissionReview {}), uid {}\n", call->url,
                       call->review_version, call->request_uid);
    out += fmt::format("    latency {} of a {} timeout (?timeout={}){}\n",
                       formatDuration(call->latency),
                       formatDuration(std::chrono::duration_cast<std::chrono::nanoseconds>(
                           call->timeout)),
                       call->timeout_param,
                       call->attempts > 1 ? fmt::format(", {} attempts", call->attempts) : "");
  } else {
    out += "  call: not sent\n";
  }
  out += fmt::format("  outcome: {} — {}\n", toString(call->outcome), outcomeText(*call));
  if (!call->error.empty()) out += "    error: " + call->error + "\n";
  if (call->status && call->outcome != CallOutcome::kAllowed &&
      call->outcome != CallOutcome::kPatched) {
    out += fmt::format("    status: {} {}: {}\n", call->status->code, call->status->reason,
                       call->status->message);
  }
  for (const auto& warning : call->warnings) out += "    warning: " + warning + "\n";
  for (const auto& [key, value] : call->audit_annotations) {
    out += fmt::format("    audit annotation {}: {}\n", key, value);
  }
  if (call->patch) {
    json before;
    if (call->request_review.is_object() && call->request_review.contains("request") &&
        call->request_review["request"].is_object()) {
      before = call->request_review["request"].value("object", json());
    }
    out += fmt::format("  patch ({} operations{}):\n",
                       call->patch->is_array() ? call->patch->size() : 0,
                       call->changed ? "" : ", no change");
    out += indent(explainPatch(before, *call->patch), "    ");
  }
  return out;
}

std::string explainStep(const Step& step, const AdmissionResult& result) {
  std::string out;
  out += fmt::format("step {}: {}\n", json(step.name).dump(), requestLine(step, result));
  if (result.allowed) {
    out += fmt::format("  result: {} allowed in {}\n", result.code, formatDuration(result.duration));
  } else {
    out += fmt::format("  result: {} denied at {} in {}\n", result.code,
                       result.stage.empty() ? "?" : result.stage, formatDuration(result.duration));
    if (result.status) {
      out += fmt::format("    {}: {}\n", result.status->reason, result.status->message);
    }
  }

  // In-tree plugins, per round and phase.
  std::map<std::pair<bool, int>, std::vector<std::string>> plugins;
  for (const auto& plugin : result.plugins) {
    std::string text = plugin.name;
    if (plugin.changed) text += " (changed the object)";
    if (plugin.rejection) {
      text += fmt::format(" (rejected: {} {})", plugin.rejection->code, plugin.rejection->message);
    }
    plugins[{plugin.validating, plugin.round}].push_back(std::move(text));
  }
  for (const auto& [key, names] : plugins) {
    std::string list;
    for (const auto& name : names) list += (list.empty() ? "" : ", ") + name;
    out += fmt::format("  in-tree {} plugins{}: {}\n", key.first ? "validating" : "mutating",
                       key.first ? "" : fmt::format(" (round {})", key.second), list);
  }
  if (result.reinvoked) out += "  reinvocation: a webhook changed the object, so round 1 ran\n";

  // Webhooks: each match record with the call it led to.
  std::map<std::tuple<core::WebhookKind, int>, std::size_t> cursor;
  auto nextCall = [&](const MatchRecord& match) -> const CallRecord* {
    std::size_t& position = cursor[{match.kind, match.round}];
    while (position < result.calls.size()) {
      const CallRecord& call = result.calls[position++];
      if (call.kind == match.kind && call.round == match.round) {
        if (call.webhook == match.webhook && call.configuration == match.configuration) return &call;
      }
    }
    return nullptr;
  };
  if (result.matches.empty()) {
    out += "  webhooks: none considered\n";
  }
  for (const auto& match : result.matches) {
    const CallRecord* call = nullptr;
    if (match.match.outcome == MatchOutcome::kCall && match.reinvocation_note.empty()) {
      auto saved = cursor;
      call = nextCall(match);
      if (call == nullptr) cursor = saved;
    }
    out += indent(explainWebhook(match, call), "  ");
  }

  if (!result.annotations.empty()) {
    out += "  audit annotations:\n";
    for (const auto& [key, entry] : result.annotations.entries()) {
      // A patch annotation can be kilobytes long; the patch is shown above operation by
      // operation and the whole value is in the audit event.
      constexpr std::size_t kShown = 200;
      std::string value = entry.value;
      if (value.size() > kShown + 40) {
        std::size_t cut = kShown;
        // Not inside a UTF-8 sequence.
        while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;
        value = fmt::format("{}... ({} bytes)", value.substr(0, cut), entry.value.size());
      }
      out += fmt::format("    {} = {} (level {})\n", key, value, audit::toString(entry.level));
    }
  }
  if (result.audit_event) {
    out += fmt::format("  audit event: level {}, {} annotations\n",
                       audit::toString(result.audit_event->level),
                       result.audit_event->annotations.size());
  }
  for (const auto& warning : result.warnings) out += "  warning: " + warning + "\n";
  return out;
}

}  // namespace harness::sim
