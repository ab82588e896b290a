// --explain: the chain's records of one request as text (explain.h).

#include "harness/sim/explain.h"

#include <cstddef>
#include <map>
#include <optional>
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
#include "harness/go/regexp.h"
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

// "<reason>: <message>", without repeating a reason the message already starts with (a 504's
// message is "Timeout: request did not complete within requested timeout - ...").
std::string statusText(const core::Status& status) {
  if (status.reason.empty() || status.message.starts_with(status.reason + ":")) {
    return status.message;
  }
  return status.reason + ": " + status.message;
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

std::string indentText(const std::string& text, std::string_view prefix) {
  return indent(text, prefix);
}

std::string formatDuration(std::chrono::nanoseconds duration) {
  const double ns = static_cast<double>(duration.count());
  if (ns == 0) return "0s";  // a stub that declares no delay
  if (ns < 1e3) return fmt::format("{}ns", duration.count());
  if (ns < 1e6) return fmt::format("{:.0f}µs", ns / 1e3);
  if (ns < 1e9) return fmt::format("{:.1f}ms", ns / 1e6);
  return fmt::format("{:.2f}s", ns / 1e9);
}

namespace {

// One operation of a patch and its effect.
struct PatchEffect {
  std::string op;
  std::string path;
  std::string from;
  std::optional<json> before;  // the value replaced or removed (moved from)
  std::optional<json> after;   // the value now at the path
  std::string error;           // the operation does not apply
};

std::vector<PatchEffect> patchEffects(const json& before, const json& patch) {
  std::vector<PatchEffect> effects;
  // Each operation's effect: the document before it and after it.
  json current = before;
  bool applicable = true;
  for (const auto& op : patch) {
    PatchEffect effect;
    effect.op = op.is_object() ? op.value("op", "?") : "?";
    if (op.is_object() && op.contains("path") && op["path"].is_string()) {
      effect.path = op["path"].get<std::string>();
    }
    if (op.is_object() && op.contains("from") && op["from"].is_string()) {
      effect.from = op["from"].get<std::string>();
    }
    const std::string& kind = effect.op;
    const std::string& path = effect.path;
    if (!applicable) {
      effects.push_back(std::move(effect));
      continue;
    }
    json next;
    auto decoded = core::decodePatch(json::array({op}).dump());
    if (!decoded.ok()) {
      applicable = false;
      effects.push_back(std::move(effect));
      continue;
    }
    auto applied = core::applyPatch(current, *decoded);
    if (!applied.ok()) {
      effect.error = applied.error().message;
      applicable = false;
      effects.push_back(std::move(effect));
      continue;
    }
    next = std::move(*applied);
    if (kind == "test") {
      current = std::move(next);
      effects.push_back(std::move(effect));
      continue;
    }
    if (kind == "move" && !effect.from.empty()) {
      if (const json* old = valueAt(current, effect.from)) effect.before = *old;
    }
    if (const json* old = valueAt(current, path); old != nullptr && kind != "add") {
      effect.before = *old;
    } else if (old != nullptr && kind == "add" && !(current.is_object() && path.empty())) {
      // add on an existing object member replaces it; on an array index it inserts.
      const json* parent = valueAt(current, core::JsonPointer::parse(path).ok()
                                                ? core::JsonPointer::parse(path)->parent().toString()
                                                : std::string());
      if (parent != nullptr && parent->is_object()) effect.before = *old;
    }
    if (kind != "remove") {
      const json* now = valueAt(next, path);
      // "-" names the element after the last (RFC 6902 section 4.1, RFC 6901 section 4): what
      // an add, copy or move put there is the array's last element now.
      if (now == nullptr && path.ends_with("/-")) {
        const json* array = valueAt(next, path.substr(0, path.size() - 2));
        if (array != nullptr && array->is_array() && !array->empty()) now = &array->back();
      }
      if (now != nullptr) effect.after = *now;
    }
    current = std::move(next);
    effects.push_back(std::move(effect));
  }
  return effects;
}

constexpr std::string_view kRed = "\x1b[31m";
constexpr std::string_view kGreen = "\x1b[32m";
constexpr std::string_view kReset = "\x1b[0m";

}  // namespace

std::string explainPatch(const nlohmann::json& before, const nlohmann::json& patch, bool color) {
  if (!patch.is_array()) return fmt::format("(not a patch: {})\n", show(patch));
  std::string out;
  for (const auto& effect : patchEffects(before, patch)) {
    out += effect.from.empty() ? fmt::format("{} {}\n", effect.op, effect.path)
                               : fmt::format("{} {} -> {}\n", effect.op, effect.from, effect.path);
    if (!effect.error.empty()) out += fmt::format("    (does not apply: {})\n", effect.error);
    if (effect.before) {
      out += color ? fmt::format("    {}- {}{}\n", kRed, show(*effect.before), kReset)
                   : "    - " + show(*effect.before) + "\n";
    }
    if (effect.after) {
      out += color ? fmt::format("    {}+ {}{}\n", kGreen, show(*effect.after), kReset)
                   : "    + " + show(*effect.after) + "\n";
    }
  }
  return out;
}

nlohmann::json patchDiff(const nlohmann::json& before, const nlohmann::json& patch) {
  json out = json::array();
  if (!patch.is_array()) return out;
  for (const auto& effect : patchEffects(before, patch)) {
    json entry = {{"op", effect.op}, {"path", effect.path}};
    if (!effect.from.empty()) entry["from"] = effect.from;
    if (effect.before) entry["before"] = *effect.before;
    if (effect.after) entry["after"] = *effect.after;
    if (!effect.error.empty()) entry["error"] = effect.error;
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<std::string> decidingClauses(const MatchResult& match) {
  const auto& lines = match.explanation;
  if (match.outcome != MatchOutcome::kSkip || lines.empty()) return lines;
  if (match.skipped_by == "rules") {
    std::vector<std::string> out;
    for (const auto& line : lines) {
      if (line.starts_with("rule") || line.starts_with("matchPolicy")) out.push_back(line);
    }
    return out;
  }
  if (match.skipped_by == "matchConditions") {
    std::vector<std::string> out;
    for (const auto& line : lines) {
      if (line.starts_with("matchCondition")) out.push_back(line);
    }
    if (!out.empty()) return out;
  }
  return {lines.back()};  // the selector or exemption that decided is the last clause evaluated
}

std::vector<std::string> reinvocationCauses(const AdmissionResult& result) {
  std::vector<std::string> out;
  for (const auto& call : result.calls) {
    if (call.kind == core::WebhookKind::kMutating && call.round == 0 && call.changed) {
      out.push_back(call.webhook);
    }
  }
  return out;
}

namespace {

std::string indexLabel(const MatchRecord& match) {
  return match.kind == core::WebhookKind::kMutating
             ? fmt::format("round {} index {}", match.round, match.index)
             : fmt::format("index {}", match.index);
}

std::string decisionText(const MatchRecord& match) {
  switch (match.match.outcome) {
    case MatchOutcome::kCall:
      return match.reinvocation_note.empty() ? "matched" : "matched, not reinvoked";
    case MatchOutcome::kSkip:
      return match.match.skipped_by.empty() ? "skipped"
                                            : fmt::format("skipped by {}", match.match.skipped_by);
    case MatchOutcome::kError:
      return "matching error (returned as-is; failurePolicy does not apply)";
  }
  return "?";
}

// The object the webhook was sent (the patch's "before").
json objectSent(const CallRecord& call) {
  if (call.request_review.is_object() && call.request_review.contains("request") &&
      call.request_review["request"].is_object()) {
    return call.request_review["request"].value("object", json());
  }
  return json();
}

// Each match record with the call it led to, in order.
std::vector<std::pair<const MatchRecord*, const CallRecord*>> pairCalls(
    const AdmissionResult& result) {
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
  std::vector<std::pair<const MatchRecord*, const CallRecord*>> out;
  for (const auto& match : result.matches) {
    const CallRecord* call = nullptr;
    if (match.match.outcome == MatchOutcome::kCall && match.reinvocation_note.empty()) {
      auto saved = cursor;
      call = nextCall(match);
      if (call == nullptr) cursor = saved;
    }
    out.emplace_back(&match, call);
  }
  return out;
}

// Whether --webhook and --only-called keep this webhook. A bad regex keeps everything (the
// command checks the regex before running).
bool selected(const MatchRecord& match, const CallRecord* call, const ExplainOptions& options) {
  if (options.only_called && call == nullptr && match.match.outcome != MatchOutcome::kError) {
    return false;
  }
  if (options.webhook_filter.empty()) return true;
  const auto compiled = go::Regexp::compile(options.webhook_filter);
  return !compiled || compiled->matchString(match.configuration + "/" + match.webhook);
}

}  // namespace

std::string explainWebhook(const MatchRecord& match, const CallRecord* call,
                           const ExplainOptions& options) {
  std::string out;
  const std::string header = fmt::format("{} webhook {} (configuration {}, {})",
                                         webhookTypeName(match.kind), match.webhook,
                                         match.configuration, indexLabel(match));
  if (!options.verbose && match.match.outcome == MatchOutcome::kSkip) {
    // One line: the clause that decided.
    std::string clauses;
    for (const auto& line : decidingClauses(match.match)) {
      clauses += (clauses.empty() ? "" : "; ") + line;
    }
    return fmt::format("{}: {}{}\n", header, decisionText(match),
                       clauses.empty() ? "" : ": " + clauses);
  }
  out += header + "\n";
  out += "  match: " + decisionText(match) + "\n";
  if (options.verbose || match.match.outcome == MatchOutcome::kError) {
    for (const auto& line : match.match.explanation) out += "    " + line + "\n";
  }
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
    out += fmt::format("    status: {} {}\n", call->status->code, statusText(*call->status));
  }
  for (const auto& warning : call->warnings) out += "    warning: " + warning + "\n";
  for (const auto& [key, value] : call->audit_annotations) {
    out += fmt::format("    audit annotation {}: {}\n", key, value);
  }
  if (call->patch) {
    out += fmt::format("  patch ({} operations{}):\n",
                       call->patch->is_array() ? call->patch->size() : 0,
                       call->changed ? "" : ", no change");
    out += indent(explainPatch(objectSent(*call), *call->patch, options.color), "    ");
  }
  return out;
}

std::string explainStep(const Step& step, const AdmissionResult& result,
                        const ExplainOptions& options) {
  std::string out;
  out += fmt::format("step {}: {}\n", json(step.name).dump(), requestLine(step, result));
  if (result.allowed) {
    out += fmt::format("  result: {} allowed in {}\n", result.code, formatDuration(result.duration));
  } else {
    out += fmt::format("  result: {} denied at {} in {}\n", result.code,
                       result.stage.empty() ? "?" : result.stage, formatDuration(result.duration));
    if (result.status) out += "    " + statusText(*result.status) + "\n";
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
  if (result.reinvoked) {
    const auto causes = reinvocationCauses(result);
    std::string names;
    for (const auto& name : causes) names += (names.empty() ? "" : ", ") + name;
    out += causes.empty()
               ? "  reinvocation: a webhook changed the object, so round 1 ran\n"
               : fmt::format("  reinvocation: {} changed the object in round 0, so round 1 ran "
                             "(IfNeeded webhooks called again, the in-tree plugins re-run)\n",
                             names);
  }

  if (result.matches.empty()) out += "  webhooks: none considered\n";
  std::size_t hidden = 0;
  for (const auto& [match, call] : pairCalls(result)) {
    if (!selected(*match, call, options)) {
      ++hidden;
      continue;
    }
    out += indent(explainWebhook(*match, call, options), "  ");
  }
  if (hidden > 0) {
    out += fmt::format("  ({} more webhook decision{} not shown: --webhook, --only-called)\n",
                       hidden, hidden == 1 ? "" : "s");
  }

  if (!result.annotations.empty()) {
    if (options.verbose) {
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
    } else {
      out += fmt::format("  audit annotations: {} (-v lists them)\n",
                         result.annotations.entries().size());
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

nlohmann::json explainStepJson(const Step& step, const AdmissionResult& result,
                               const ExplainOptions& options) {
  json out;
  out["step"] = step.name;
  out["request"] = requestLine(step, result);
  json outcome = {{"allowed", result.allowed},
                  {"code", result.code},
                  {"stage", result.stage},
                  {"durationNanoseconds", result.duration.count()}};
  if (result.status) {
    outcome["reason"] = result.status->reason;
    outcome["message"] = result.status->message;
  }
  out["result"] = std::move(outcome);
  json plugins = json::array();
  for (const auto& plugin : result.plugins) {
    json entry = {{"name", plugin.name},
                  {"phase", plugin.validating ? "validating" : "mutating"},
                  {"round", plugin.round},
                  {"changed", plugin.changed}};
    if (plugin.rejection) entry["rejection"] = plugin.rejection->message;
    plugins.push_back(std::move(entry));
  }
  out["plugins"] = std::move(plugins);
  out["reinvocation"] = {{"ran", result.reinvoked},
                         {"triggeredBy", result.reinvoked ? reinvocationCauses(result)
                                                          : std::vector<std::string>{}}};
  json webhooks = json::array();
  for (const auto& [match, call] : pairCalls(result)) {
    if (!selected(*match, call, options)) continue;
    json entry = {{"kind", std::string(webhookTypeName(match->kind))},
                  {"configuration", match->configuration},
                  {"webhook", match->webhook},
                  {"round", match->round},
                  {"index", match->index},
                  {"decision", std::string(toString(match->match.outcome))},
                  {"skippedBy", match->match.skipped_by},
                  {"deciding", decidingClauses(match->match)},
                  {"clauses", match->match.explanation}};
    if (!match->reinvocation_note.empty()) entry["reinvocationNote"] = match->reinvocation_note;
    if (match->match.error) entry["error"] = match->match.error->message;
    if (call != nullptr) {
      json c = {{"called", call->called},
                {"url", call->url},
                {"reviewVersion", call->review_version},
                {"latencyNanoseconds", call->latency.count()},
                {"timeoutMilliseconds", call->timeout.count()},
                {"timeoutParameter", call->timeout_param},
                {"outcome", std::string(toString(call->outcome))},
                {"outcomeText", outcomeText(*call)},
                {"changed", call->changed},
                {"warnings", call->warnings},
                {"auditAnnotations", call->audit_annotations}};
      if (!call->error.empty()) c["error"] = call->error;
      if (call->status) c["status"] = {{"code", call->status->code}, {"message", statusText(*call->status)}};
      if (call->patch) c["patch"] = patchDiff(objectSent(*call), *call->patch);
      entry["call"] = std::move(c);
    }
    webhooks.push_back(std::move(entry));
  }
  out["webhooks"] = std::move(webhooks);
  json annotations = json::object();
  for (const auto& [key, entry] : result.annotations.entries()) annotations[key] = entry.value;
  out["annotations"] = std::move(annotations);
  out["warnings"] = result.warnings;
  return out;
}

}  // namespace harness::sim
