// A report of audit logs (audit_report.h).

#include "harness/sim/audit_report.h"

#include <chrono>

#include <fmt/format.h>

#include "harness/audit/chain.h"
#include "harness/audit/log.h"
#include "harness/audit/outcome.h"

namespace harness::sim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string requestLine(const audit::MutationChain& chain) {
  std::string resource = chain.resource;
  if (!chain.subresource.empty()) resource += "/" + chain.subresource;
  const std::string group = chain.api_group.empty() ? "" : chain.api_group + "/";
  std::string object = chain.namespace_name.empty() ? chain.name
                                                    : chain.namespace_name + "/" + chain.name;
  return fmt::format("{} {}{}/{} {}{}", chain.verb, group, chain.api_version, resource, object,
                     chain.user.empty() ? "" : " as " + chain.user);
}

// An audit patch annotation's JSON patch as the explain JSON's diff entries (op, path, the value
// after; the value before is not in the log).
json patchEntries(const json& patch) {
  json out = json::array();
  if (!patch.is_array()) return out;
  for (const auto& op : patch) {
    if (!op.is_object()) continue;
    json entry = {{"op", op.value("op", "")}, {"path", op.value("path", "")}};
    if (op.contains("value")) entry["after"] = op["value"];
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace

json explainJsonFromAuditChain(const audit::MutationChain& chain) {
  const auto& outcome = chain.outcome;
  const bool allowed = outcome.kind == audit::OutcomeKind::kAdmitted;
  json result = {{"allowed", allowed},
                 {"code", outcome.code},
                 {"reason", outcome.reason},
                 {"message", outcome.message},
                 {"stage", allowed ? "done" : ""}};
  json webhooks = json::array();
  for (const auto& step : chain.steps) {
    // The mutating webhook that denied the request is recorded as a step that did not mutate.
    const bool denied_here = outcome.decided_by_kind == "webhook" &&
                             outcome.decided_by == step.webhook &&
                             outcome.kind != audit::OutcomeKind::kAdmitted;
    const char* outcome_name =
        denied_here ? (outcome.kind == audit::OutcomeKind::kDenied ? "Denied" : "CallingError")
                    : step.failed_open ? "FailedOpen"
                                       : (step.mutated ? "Patched" : "Allowed");
    json call = {{"called", true},
                 {"outcome", outcome_name},
                 {"outcomeText", step.failed_open ? "failed open (failurePolicy Ignore)"
                                                  : (step.mutated ? "mutated the object"
                                                                  : "did not mutate")},
                 {"changed", step.mutated}};
    if (step.patch) call["patch"] = patchEntries(*step.patch);
    webhooks.push_back({{"kind", "mutating"},
                        {"configuration", step.configuration},
                        {"webhook", step.webhook},
                        {"round", step.round},
                        {"index", step.index},
                        {"decision", "Call"},
                        {"deciding", json::array({fmt::format(
                                         "recorded in the audit event: round {} index {}",
                                         step.round, step.index)})},
                        {"call", std::move(call)}});
  }
  // The webhook that denied (or could not be called, failing closed), when it is not one of the
  // mutating steps: a validating webhook, whose allowing calls the log does not record.
  if (outcome.decided_by_kind == "webhook") {
    bool listed = false;
    for (const auto& step : chain.steps) listed = listed || step.webhook == outcome.decided_by;
    if (!listed) {
      const char* kind_outcome = outcome.kind == audit::OutcomeKind::kDenied ? "Denied"
                                 : outcome.kind == audit::OutcomeKind::kTimedOut
                                     ? "RequestTimeout"
                                     : "CallingError";
      webhooks.push_back(
          {{"kind", "validating"},
           {"configuration", ""},
           {"webhook", outcome.decided_by},
           {"round", 0},
           {"index", 0},
           {"decision", "Call"},
           {"deciding", json::array({"named by the response status in the audit event"})},
           {"call", {{"called", true},
                     {"outcome", kind_outcome},
                     {"outcomeText", outcome.message},
                     {"status", {{"code", outcome.code}, {"message", outcome.message}}}}}});
    }
  }
  // A policy or an in-tree plugin that denied is shown as the validation phase's failure.
  if (!allowed && outcome.decided_by_kind != "webhook") result["stage"] = "validation";
  json out = {{"step", chain.audit_id},
              {"request", requestLine(chain)},
              {"result", std::move(result)},
              {"plugins", json::array()},
              {"webhooks", std::move(webhooks)},
              {"source", "audit"},
              {"auditID", chain.audit_id},
              {"outcome", audit::formatOutcome(outcome)}};
  json annotations = json::object();
  for (const auto& [key, value] : chain.webhook_annotations) annotations[key] = value;
  out["annotations"] = std::move(annotations);
  out["failedOpen"] = outcome.failed_open;
  return out;
}

core::Result<RunReport> reportFromAuditLogs(
    const std::vector<fs::path>& logs, const audit::ChainFilter& filter, bool keep_all,
    const std::function<void(const std::string&)>& on_bad_line) {
  RunReport report;
  for (const auto& path : logs) {
    auto file = audit::LogFile::open(path);
    if (!file.ok()) return file.error();
    ScenarioResult scenario;
    scenario.name = "audit log " + path.filename().string();
    scenario.file = path;
    scenario.backend = "audit";
    audit::ChainReader reader((*file)->stream(), path.string(), keep_all);
    std::size_t requests = 0;
    while (auto entry = reader.next([&](const std::string& message) {
      if (on_bad_line) on_bad_line(message);
    })) {
      const auto& chain = entry->chain;
      if (!filter.matches(chain)) continue;
      ++requests;
      StepResult step;
      step.name = fmt::format("{} (line {})", requestLine(chain), entry->line_number);
      const bool admitted = chain.outcome.kind == audit::OutcomeKind::kAdmitted;
      step.status = admitted ? StepStatus::kPassed : StepStatus::kFailed;
      if (!admitted) step.failures.push_back({"outcome", audit::formatOutcome(chain.outcome), ""});
      if (chain.received && chain.completed) {
        step.duration = std::chrono::duration_cast<std::chrono::nanoseconds>(*chain.completed -
                                                                             *chain.received);
      }
      step.explanation_json = explainJsonFromAuditChain(chain);
      scenario.steps.push_back(std::move(step));
    }
    if (auto error = (*file)->error()) return core::Error{*error};
    if (reader.failed()) return core::Error{"cannot read " + path.string()};
    scenario.description = fmt::format(
        "{} request{} with an admission chain, read from the audit log (it records the mutating "
        "webhooks called and their patches, and who denied; not the webhooks skipped, the "
        "validating webhooks that allowed, or latencies)",
        requests, requests == 1 ? "" : "s");
    report.scenarios.push_back(std::move(scenario));
  }
  return report;
}

}  // namespace harness::sim
