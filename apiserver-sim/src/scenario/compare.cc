// Comparing the simulator with another backend (compare.h).

#include "harness/sim/compare.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/audit/level.h"
#include "harness/core/json_pointer.h"
#include "harness/core/yaml.h"
#include "harness/sim/scenario_runner.h"
#include "harness/sim/store.h"
#include "junit.h"

namespace harness::sim {
using nlohmann::json;

bool KnownDifference::matches(const std::string& scenario_name, const std::string& step_name,
                              const std::string& field_name) const {
  if (scenario != "*" && scenario != scenario_name) return false;
  if (step != "*" && step != step_name) return false;
  if (!field.empty() && field.back() == '*') {
    // "object:/status/*" also covers "object:/status" (a subtree present on one side only).
    if (field.size() >= 2 && field[field.size() - 2] == '/' &&
        field_name == field.substr(0, field.size() - 2)) {
      return true;
    }
    return field_name.compare(0, field.size() - 1, field, 0, field.size() - 1) == 0;
  }
  return field == field_name;
}

core::Result<std::vector<KnownDifference>> loadKnownDifferences(
    const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::makeError(fmt::format("{}: cannot read", path.string()));
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto parsed = core::parseYaml(text);
  if (!parsed.ok()) return parsed.error().within(path.string());
  const json& root = *parsed;
  if (!root.is_object() || !root.contains("differences") || !root["differences"].is_array()) {
    return core::makeError(
        fmt::format("{}: expected a mapping with a list `differences`", path.string()));
  }
  std::vector<KnownDifference> out;
  std::size_t index = 0;
  for (const auto& entry : root["differences"]) {
    const std::string where = fmt::format("{}: differences[{}]", path.string(), index++);
    if (!entry.is_object()) return core::makeError(where + ": expected a mapping");
    for (const auto& [key, value] : entry.items()) {
      if (key != "scenario" && key != "step" && key != "field" && key != "reason" &&
          key != "upstream" && key != "intermittent") {
        return core::makeError(fmt::format("{}.{}: unknown field", where, key));
      }
    }
    KnownDifference known;
    for (auto [field, target] : {std::pair{"scenario", &known.scenario},
                                 std::pair{"step", &known.step}, std::pair{"field", &known.field},
                                 std::pair{"reason", &known.reason},
                                 std::pair{"upstream", &known.upstream}}) {
      if (!entry.contains(field) || !entry[field].is_string() ||
          entry[field].get<std::string>().empty()) {
        return core::makeError(fmt::format("{}.{}: required, a non-empty string", where, field));
      }
      *target = entry[field].get<std::string>();
    }
    if (entry.contains("intermittent")) {
      if (!entry["intermittent"].is_boolean()) {
        return core::makeError(where + ".intermittent: expected a boolean");
      }
      known.intermittent = entry["intermittent"].get<bool>();
    }
    known.location = where;
    out.push_back(std::move(known));
  }
  return out;
}

namespace {

std::string callLine(const CallRecord& call) {
  std::string line = fmt::format(
      "{} {}", call.kind == core::WebhookKind::kMutating ? "mutating" : "validating",
      call.webhook);
  if (call.kind == core::WebhookKind::kMutating) {
    line += fmt::format(" round={} index={} changed={}", call.round, call.index, call.changed);
  }
  line += fmt::format(" outcome={}", toString(call.outcome));
  return line;
}

bool hidden(const std::vector<std::string>& unobservable, std::string_view field) {
  return std::find(unobservable.begin(), unobservable.end(), field) != unobservable.end();
}

}  // namespace

// Request UIDs are fresh per call: "<uid>" in messages.
std::string withoutUids(const std::string& text) {
  static const std::regex kUid("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}");
  return std::regex_replace(text, kUid, "<uid>");
}

// The ServiceAccount plugin's projected volume is kube-api-access-<utilrand.String(5)>, fresh
// on every backend: a webhook's patch that names it (Istio's moves the pod's volumes) differs
// only by that name. Compared as "kube-api-access-*", as the object is.
std::string withoutGeneratedVolumeNames(const std::string& text) {
  static const std::regex kName("kube-api-access-" + randSuffixPattern());
  return std::regex_replace(text, kName, "kube-api-access-*");
}

namespace {

// A name made from metadata.generateName ends in utilrand.String(5)
// (k8s.io/apiserver pkg/storage/names/generate.go), fresh on every backend: compared as
// "<generateName>*".
json withoutGeneratedName(json object) {
  if (!object.is_object() || !object.contains("metadata") || !object["metadata"].is_object()) {
    return object;
  }
  json& metadata = object["metadata"];
  const json* prefix = metadata.contains("generateName") ? &metadata["generateName"] : nullptr;
  const json* name = metadata.contains("name") ? &metadata["name"] : nullptr;
  if (prefix == nullptr || name == nullptr || !prefix->is_string() || !name->is_string()) {
    return object;
  }
  const auto& p = prefix->get_ref<const std::string&>();
  const auto& n = name->get_ref<const std::string&>();
  static const std::regex kSuffix(randSuffixPattern());
  if (n.size() == p.size() + kRandSuffixLength && n.compare(0, p.size(), p) == 0 &&
      std::regex_match(n.substr(p.size()), kSuffix)) {
    metadata["name"] = p + "*";
  }
  return object;
}

// metadata.deletionTimestamp is a time on each backend (now + the grace period): compared as
// set or not.
json withoutDeletionTime(json object) {
  if (object.is_object() && object.contains("metadata") && object["metadata"].is_object() &&
      object["metadata"].contains("deletionTimestamp") &&
      object["metadata"]["deletionTimestamp"].is_string()) {
    object["metadata"]["deletionTimestamp"] = "<time>";
  }
  return object;
}

}  // namespace

json comparableView(const StepResult& step, const std::vector<std::string>& unobservable) {
  json view = json::object();
  if (!step.admission) return view;
  const AdmissionResult& result = *step.admission;
  view["code"] = result.code;
  view["reason"] = result.status ? result.status->reason : "";
  view["message"] =
      result.status ? withoutGeneratedVolumeNames(withoutUids(result.status->message)) : "";
  // Validating webhooks run in parallel and the request fails with the first rejection to
  // arrive (validating/dispatcher.go Dispatch: errs[0] of the error channel): when several
  // rejected it, which one the Status names (and so its code and text) is a race. The view then
  // says which rejected, sorted; the calls below still show each one's outcome.
  std::vector<std::string> rejecting;
  for (const auto& call : result.calls) {
    if (call.called && call.kind == core::WebhookKind::kValidating &&
        (call.outcome == CallOutcome::kDenied || call.outcome == CallOutcome::kCallingError)) {
      rejecting.push_back(call.webhook);
    }
  }
  std::sort(rejecting.begin(), rejecting.end());
  rejecting.erase(std::unique(rejecting.begin(), rejecting.end()), rejecting.end());
  if (!result.allowed && rejecting.size() > 1) {
    const std::string raced =
        fmt::format("the first to answer of the validating webhooks that rejected it: {}",
                    fmt::join(rejecting, ", "));
    view["code"] = raced;
    view["reason"] = raced;
    view["message"] = raced;
  }
  view["object"] = result.object ? withoutDeletionTime(withoutGeneratedName(
                                       withoutServerSetFields(*result.object)))
                                 : json();
  view["warnings"] = result.warnings;
  if (!hidden(unobservable, "annotations")) {
    json annotations = json::object();
    for (const auto& [key, entry] : result.annotations.entries()) {
      annotations[key] = withoutGeneratedVolumeNames(entry.value);
    }
    view["annotations"] = std::move(annotations);
  }
  if (result.audit_event) {
    const auto& event = *result.audit_event;
    // The latency trackers' annotations (apiserver.latency.k8s.io/*) are added by
    // kube-apiserver to requests slower than its threshold: a measure of time, not compared.
    json event_annotations = json::object();
    for (const auto& [key, value] : event.annotations) {
      if (key.rfind("apiserver.latency.k8s.io/", 0) != 0) {
        event_annotations[key] = withoutGeneratedVolumeNames(value);
      }
    }
    view["auditEvent"] = {{"level", std::string(audit::toString(event.level))},
                          {"annotations", std::move(event_annotations)},
                          {"requestObject", event.request_object.has_value()},
                          {"responseObject", event.response_object.has_value()}};
  } else {
    view["auditEvent"] = nullptr;
  }
  view["metrics"] = step.webhook_metric_changes;
  json stubs = json::object();
  for (const auto& [name, seen] : step.stubs) {
    stubs[name] = {{"calls", seen.calls},
                   {"lastTimeout", seen.last_timeout},
                   {"lastOperation", seen.last_operation},
                   {"lastDryRun", seen.last_dry_run ? json(*seen.last_dry_run) : json()}};
  }
  view["stubs"] = std::move(stubs);
  if (!hidden(unobservable, "calls")) {
    // Mutating calls in order; validating ones run in parallel, so as a sorted list.
    // A DELETE admitted more than once (a Pod's graceful delete) calls each webhook once a
    // pass, and how many passes kube-apiserver makes depends on its watch cache (two or
    // three): each mutating call is shown once (the real server's audit annotations name each
    // round and index once), each validating call line too.
    json calls = json::array();
    std::vector<std::string> validating;
    std::set<std::pair<int, std::size_t>> mutating_seen;
    for (const auto& call : result.calls) {
      if (!call.called) continue;
      if (call.kind == core::WebhookKind::kMutating) {
        if (!mutating_seen.insert({call.round, call.index}).second) continue;
        calls.push_back(callLine(call));
      } else {
        validating.push_back(callLine(call));
      }
    }
    std::sort(validating.begin(), validating.end());
    validating.erase(std::unique(validating.begin(), validating.end()), validating.end());
    for (auto& line : validating) calls.push_back(std::move(line));
    view["calls"] = std::move(calls);
  }
  return view;
}

namespace {

std::string yamlOf(const json& value) { return value.is_null() ? "" : core::toYaml(value); }

void addDifference(std::vector<FieldDifference>& out, std::string field, const json& a,
                   const json& b) {
  FieldDifference difference;
  difference.field = std::move(field);
  difference.simulator = a;
  difference.other = b;
  difference.diff = lineDiff(yamlOf(a), yamlOf(b));
  out.push_back(std::move(difference));
}

// Leaf by leaf: "object:/spec/containers/0/image".
void diffObjects(const json& a, const json& b, const core::JsonPointer& at,
                 std::vector<FieldDifference>& out) {
  if (a == b) return;
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (const auto& [key, value] : a.items()) keys.insert(key);
    for (const auto& [key, value] : b.items()) keys.insert(key);
    for (const auto& key : keys) {
      diffObjects(a.contains(key) ? a[key] : json(), b.contains(key) ? b[key] : json(),
                  at.child(key), out);
    }
    return;
  }
  if (a.is_array() && b.is_array()) {
    for (std::size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
      diffObjects(i < a.size() ? a[i] : json(), i < b.size() ? b[i] : json(), at.child(i), out);
    }
    return;
  }
  addDifference(out, "object:" + (at.isRoot() ? std::string("/") : at.toString()), a, b);
}

void diffMaps(const std::string& prefix, const json& a, const json& b,
              std::vector<FieldDifference>& out) {
  if (!a.is_object() || !b.is_object()) {
    if (a != b) addDifference(out, prefix, a, b);
    return;
  }
  std::set<std::string> keys;
  for (const auto& [key, value] : a.items()) keys.insert(key);
  for (const auto& [key, value] : b.items()) keys.insert(key);
  for (const auto& key : keys) {
    const json left = a.contains(key) ? a[key] : json();
    const json right = b.contains(key) ? b[key] : json();
    if (left != right) addDifference(out, fmt::format("{}:{}", prefix, key), left, right);
  }
}

std::vector<FieldDifference> diffViews(const json& a, const json& b) {
  std::vector<FieldDifference> out;
  for (const char* field : {"code", "reason", "message", "warnings", "calls"}) {
    if (!a.contains(field) || !b.contains(field)) continue;
    if (a[field] != b[field]) addDifference(out, field, a[field], b[field]);
  }
  if (a.contains("object")) diffObjects(a["object"], b["object"], core::JsonPointer(), out);
  if (a.contains("annotations") && b.contains("annotations")) {
    diffMaps("annotations", a["annotations"], b["annotations"], out);
  }
  const json& ea = a["auditEvent"];
  const json& eb = b["auditEvent"];
  if (ea.is_null() != eb.is_null()) {
    addDifference(out, "auditEvent", ea, eb);
  } else if (!ea.is_null()) {
    for (const char* field : {"level", "requestObject", "responseObject"}) {
      if (ea[field] != eb[field]) {
        addDifference(out, std::string("auditEvent.") + field, ea[field], eb[field]);
      }
    }
    diffMaps("auditEvent.annotations", ea["annotations"], eb["annotations"], out);
  }
  diffMaps("metrics", a["metrics"], b["metrics"], out);
  diffMaps("stubs", a["stubs"], b["stubs"], out);
  return out;
}

}  // namespace

ComparisonReport compareRuns(const RunReport& simulator, const RunReport& other,
                             const std::vector<KnownDifference>& known) {
  ComparisonReport report;
  report.load_errors = simulator.load_errors;
  std::map<std::pair<std::string, std::string>, const ScenarioResult*> others;
  for (const auto& scenario : other.scenarios) {
    others[{scenario.file.string(), scenario.name}] = &scenario;
    if (report.other_backend.empty()) report.other_backend = scenario.backend;
  }
  std::set<const KnownDifference*> used;
  std::set<std::string> compared_scenarios;
  for (const auto& sim_scenario : simulator.scenarios) {
    ScenarioComparison comparison;
    comparison.name = sim_scenario.name;
    comparison.file = sim_scenario.file.string();
    compared_scenarios.insert(sim_scenario.name);
    auto it = others.find({comparison.file, comparison.name});
    const ScenarioResult* theirs = it == others.end() ? nullptr : it->second;
    if (sim_scenario.error) comparison.error = "simulator: " + *sim_scenario.error;
    if (theirs && theirs->error) {
      comparison.error += (comparison.error.empty() ? "" : "; ") + theirs->backend + ": " +
                          *theirs->error;
    }
    for (const auto& step : sim_scenario.steps) {
      StepComparison compared;
      compared.name = step.name;
      const StepResult* their_step = nullptr;
      if (theirs) {
        for (const auto& candidate : theirs->steps) {
          if (candidate.name == step.name) their_step = &candidate;
        }
      }
      if (!their_step || !their_step->admission || !step.admission) {
        compared.result = StepComparison::Result::kSkipped;
        compared.note = their_step && !their_step->skip_reason.empty()
                            ? their_step->skip_reason
                            : "not played on both backends";
        comparison.steps.push_back(std::move(compared));
        continue;
      }
      const json mine = comparableView(step, their_step->unchecked);
      const json others_view = comparableView(*their_step, their_step->unchecked);
      compared.differences = diffViews(mine, others_view);
      bool all_known = true;
      for (auto& difference : compared.differences) {
        for (const auto& entry : known) {
          if (entry.matches(comparison.name, step.name, difference.field)) {
            difference.known = &entry;
            used.insert(&entry);
            break;
          }
        }
        if (!difference.known) all_known = false;
      }
      compared.result = compared.differences.empty() ? StepComparison::Result::kIdentical
                        : all_known                  ? StepComparison::Result::kKnown
                                                     : StepComparison::Result::kDifferent;
      comparison.steps.push_back(std::move(compared));
    }
    report.scenarios.push_back(std::move(comparison));
  }
  for (const auto& entry : known) {
    if (used.contains(&entry) || entry.intermittent) continue;
    // Entries for every scenario ("*") are not reported: a run of some scenarios cannot tell.
    if (compared_scenarios.contains(entry.scenario)) {
      report.stale.push_back(&entry);
    }
  }
  return report;
}

ComparisonReport::Counts ComparisonReport::counts() const {
  Counts counts;
  counts.scenarios = scenarios.size();
  for (const auto& scenario : scenarios) {
    if (!scenario.error.empty()) ++counts.errors;
    for (const auto& step : scenario.steps) {
      ++counts.steps;
      switch (step.result) {
        case StepComparison::Result::kIdentical:
          ++counts.identical;
          break;
        case StepComparison::Result::kKnown:
          ++counts.known;
          break;
        case StepComparison::Result::kDifferent:
          ++counts.different;
          break;
        case StepComparison::Result::kSkipped:
          ++counts.skipped;
          break;
      }
    }
  }
  return counts;
}

int ComparisonReport::exitCode() const {
  const Counts c = counts();
  if (!load_errors.empty() || c.errors > 0) return 2;
  return c.different > 0 || !stale.empty() ? 1 : 0;
}

namespace {

std::string_view resultWord(StepComparison::Result result) {
  switch (result) {
    case StepComparison::Result::kIdentical:
      return "SAME";
    case StepComparison::Result::kKnown:
      return "KNOWN";
    case StepComparison::Result::kDifferent:
      return "DIFF";
    case StepComparison::Result::kSkipped:
      return "SKIP";
  }
  return "?";
}

std::string indented(const std::string& text, const std::string& prefix) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    out += prefix + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

std::string differenceText(const FieldDifference& difference) {
  std::string out = difference.field;
  if (difference.known) out += " (known: " + difference.known->reason + ")";
  out += "\n";
  if (!difference.known) out += indented(difference.diff, "  ");
  return out;
}

}  // namespace

std::string renderComparisonTable(const ComparisonReport& report) {
  std::string out =
      fmt::format("simulator (-) against {} (+)\n", report.other_backend.empty()
                                                        ? std::string("the other backend")
                                                        : report.other_backend);
  for (const auto& error : report.load_errors) {
    out += fmt::format("ERROR  {}\n{}", error.file, indented(error.message, "    "));
  }
  for (const auto& scenario : report.scenarios) {
    if (!scenario.error.empty()) {
      out += fmt::format("ERROR  {}\n{}", scenario.name, indented(scenario.error, "    "));
    }
    for (const auto& step : scenario.steps) {
      out += fmt::format("{:<6} {}/{}\n", resultWord(step.result), scenario.name, step.name);
      if (!step.note.empty()) out += "    " + step.note + "\n";
      for (const auto& difference : step.differences) {
        out += indented(differenceText(difference), "    ");
      }
    }
  }
  for (const auto* entry : report.stale) {
    out += fmt::format("STALE  {} ({}/{} {}): listed as a known difference, no longer occurs\n",
                       entry->location, entry->scenario, entry->step, entry->field);
  }
  const auto c = report.counts();
  out += fmt::format(
      "\n{} scenarios ({} errors), {} steps: {} identical, {} with known differences only, {} "
      "with unlisted differences, {} skipped; {} stale known differences\n",
      c.scenarios, c.errors, c.steps, c.identical, c.known, c.different, c.skipped,
      report.stale.size());
  // The failing steps once more, after the counts: a long run's log is often read from its end
  // (CI keeps the tail), where the DIFF lines above may have been cut off.
  for (const auto& scenario : report.scenarios) {
    if (!scenario.error.empty()) out += fmt::format("  error: {}\n", scenario.name);
    for (const auto& step : scenario.steps) {
      if (step.result != StepComparison::Result::kDifferent) continue;
      std::string fields;
      for (const auto& difference : step.differences) {
        if (difference.known) continue;
        fields += (fields.empty() ? "" : ", ") + difference.field;
      }
      out += fmt::format("  unlisted: {}/{} ({})\n", scenario.name, step.name, fields);
    }
  }
  for (const auto* entry : report.stale) {
    out += fmt::format("  stale: {} ({}/{})\n", entry->location, entry->scenario, entry->step);
  }
  return out;
}

json comparisonJson(const ComparisonReport& report) {
  json scenarios = json::array();
  for (const auto& scenario : report.scenarios) {
    json steps = json::array();
    for (const auto& step : scenario.steps) {
      json differences = json::array();
      for (const auto& difference : step.differences) {
        json entry = {{"field", difference.field},
                      {"simulator", difference.simulator},
                      {report.other_backend.empty() ? "other" : report.other_backend,
                       difference.other},
                      {"diff", difference.diff}};
        if (difference.known) {
          entry["known"] = {{"reason", difference.known->reason},
                            {"upstream", difference.known->upstream}};
        }
        differences.push_back(std::move(entry));
      }
      json entry = {{"name", step.name},
                    {"result", std::string(resultWord(step.result))},
                    {"differences", std::move(differences)}};
      if (!step.note.empty()) entry["note"] = step.note;
      steps.push_back(std::move(entry));
    }
    json entry = {{"name", scenario.name}, {"file", scenario.file}, {"steps", std::move(steps)}};
    if (!scenario.error.empty()) entry["error"] = scenario.error;
    scenarios.push_back(std::move(entry));
  }
  json stale = json::array();
  for (const auto* entry : report.stale) {
    stale.push_back({{"scenario", entry->scenario},
                     {"step", entry->step},
                     {"field", entry->field},
                     {"location", entry->location}});
  }
  json load_errors = json::array();
  for (const auto& error : report.load_errors) {
    load_errors.push_back({{"file", error.file}, {"message", error.message}});
  }
  const auto c = report.counts();
  return {{"apiVersion", "apiserver-sim.harness.dev/v1alpha1"},
          {"kind", "BackendComparison"},
          {"backend", report.other_backend},
          {"summary",
           {{"scenarios", c.scenarios},
            {"errors", c.errors},
            {"steps", c.steps},
            {"identical", c.identical},
            {"knownDifferences", c.known},
            {"unlistedDifferences", c.different},
            {"skipped", c.skipped},
            {"staleKnownDifferences", report.stale.size()},
            {"exitCode", report.exitCode()}}},
          {"loadErrors", std::move(load_errors)},
          {"scenarios", std::move(scenarios)},
          {"staleKnownDifferences", std::move(stale)}};
}

std::string renderComparisonJunit(const ComparisonReport& report) {
  JunitDocument document;
  for (const auto& scenario : report.scenarios) {
    JunitSuite suite;
    if (!scenario.error.empty()) {
      suite.addCase("setup", scenario.name, "", JunitResult::kError,
                    fmt::format("      <error message=\"the scenario could not be run\" "
                                "type=\"HarnessError\">{}</error>\n",
                                xmlEscaped(scenario.error, false)));
    }
    for (const auto& step : scenario.steps) {
      std::string body;
      std::string details;
      for (const auto& difference : step.differences) details += differenceText(difference);
      JunitResult result = JunitResult::kPassed;
      if (step.result == StepComparison::Result::kDifferent) {
        result = JunitResult::kFailed;
        body += fmt::format(
            "      <failure message=\"the simulator and {} differ\" type=\"Divergence\">{}"
            "</failure>\n",
            xmlEscaped(report.other_backend, true), xmlEscaped(details, false));
      } else if (step.result == StepComparison::Result::kSkipped) {
        result = JunitResult::kSkipped;
        body += fmt::format("      <skipped message=\"{}\"/>\n", xmlEscaped(step.note, true));
      } else if (!details.empty()) {
        body += fmt::format("      <system-out>{}</system-out>\n", xmlEscaped(details, false));
      }
      suite.addCase(step.name, scenario.name, "", result, body);
    }
    document.addSuite(scenario.name, "", suite);
  }
  if (!report.stale.empty()) {
    JunitSuite suite;
    for (const auto* entry : report.stale) {
      suite.addCase(entry->location, "known-differences", "", JunitResult::kFailed,
                    fmt::format("      <failure message=\"listed as a known difference, no longer "
                                "occurs\" type=\"StaleKnownDifference\">{}/{} {}</failure>\n",
                                xmlEscaped(entry->scenario, false), xmlEscaped(entry->step, false),
                                xmlEscaped(entry->field, false)));
    }
    document.addSuite("known-differences", "", suite);
  }
  return document.render("apiserver-sim compare", "");
}

}  // namespace harness::sim
