// Reports of a run (report.h).

#include "harness/sim/report.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/audit/default_policy.h"
#include "harness/audit/policy.h"
#include "harness/core/utf8.h"
#include "harness/sim/explain.h"
#include "harness/sim/scenario.h"
#include "junit.h"

namespace harness::sim {
using nlohmann::json;

namespace {

double seconds(std::chrono::nanoseconds duration) {
  return static_cast<double>(duration.count()) / 1e9;
}

std::string scenarioResult(const ScenarioResult& scenario) {
  if (scenario.error) return "error";
  if (scenario.skip_reason) return "skipped";
  return scenario.passed() ? "passed" : "failed";
}

std::string indentLines(std::string_view text, std::string_view prefix) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    out.append(prefix);
    out.append(text.substr(start, end - start));
    out += '\n';
    start = end + 1;
  }
  return out;
}

// Text XML 1.0 may carry: valid UTF-8, no control characters other than tab, LF and CR, no
// U+FFFE/U+FFFF.
std::string xmlSafe(std::string_view text) {
  const std::string valid = core::replaceInvalidUtf8(text);
  std::string out;
  out.reserve(valid.size());
  std::size_t offset = 0;
  while (offset < valid.size()) {
    const core::Rune rune = core::decodeUtf8(valid, offset);
    const char32_t c = rune.code_point;
    const bool allowed = c == 0x9 || c == 0xA || c == 0xD || (c >= 0x20 && c <= 0xD7FF) ||
                         (c >= 0xE000 && c <= 0xFFFD) || (c >= 0x10000 && c <= 0x10FFFF);
    if (allowed) {
      out.append(valid, offset, rune.length);
    } else {
      out += "\xEF\xBF\xBD";  // U+FFFD
    }
    offset += std::max<std::size_t>(rune.length, 1);
  }
  return out;
}

std::string xmlEscape(std::string_view text, bool attribute) {
  std::string out;
  for (char c : xmlSafe(text)) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += attribute ? "&quot;" : "\"";
        break;
      case '\n':
        out += attribute ? "&#10;" : "\n";
        break;
      case '\r':
        out += attribute ? "&#13;" : "\r";
        break;
      case '\t':
        out += attribute ? "&#9;" : "\t";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string attr(std::string_view text) { return xmlEscape(text, true); }
std::string text(std::string_view value) { return xmlEscape(value, false); }

// Pads to `width` display columns (UTF-8 aware enough for names: counts code points).
std::string pad(const std::string& value, std::size_t width) {
  std::size_t columns = 0;
  for (unsigned char c : value) {
    if ((c & 0xC0) != 0x80) ++columns;
  }
  return columns >= width ? value : value + std::string(width - columns, ' ');
}

std::string statusWord(StepStatus status) {
  switch (status) {
    case StepStatus::kPassed:
      return "PASS";
    case StepStatus::kFailed:
      return "FAIL";
    case StepStatus::kSkipped:
      return "SKIP";
    case StepStatus::kNotRun:
      return "NOT RUN";
  }
  return "?";
}

json callsJson(const AdmissionResult& result) {
  json calls = json::array();
  for (const auto& call : result.calls) {
    json entry = {
        {"webhook", call.webhook},
        {"configuration", call.configuration},
        {"type", call.kind == core::WebhookKind::kMutating ? "mutating" : "validating"},
        {"round", call.round},
        {"index", call.index},
        {"outcome", std::string(toString(call.outcome))},
        {"called", call.called},
        {"timeout", call.timeout_param},
        {"latencySeconds", seconds(call.latency)},
    };
    if (call.status) entry["code"] = call.status->code;
    if (!call.error.empty()) entry["error"] = call.error;
    calls.push_back(std::move(entry));
  }
  return calls;
}

}  // namespace

core::Result<Shard> parseShard(std::string_view text) {
  auto bad = [&] {
    return core::makeError(fmt::format(
        "--shard: want K/N with 1 <= K <= N (this job's part of N), got \"{}\"", text));
  };
  const auto slash = text.find('/');
  if (slash == std::string_view::npos) return bad();
  auto number = [](std::string_view digits) -> std::optional<unsigned> {
    if (digits.empty() || digits.size() > 6) return std::nullopt;
    unsigned value = 0;
    for (char c : digits) {
      if (c < '0' || c > '9') return std::nullopt;
      value = value * 10 + static_cast<unsigned>(c - '0');
    }
    return value;
  };
  const auto index = number(text.substr(0, slash));
  const auto count = number(text.substr(slash + 1));
  if (!index || !count || *index < 1 || *index > *count) return bad();
  return Shard{*index, *count};
}

namespace {

// One entry of the run, in the order a serial run reports it: a file that did not load, or a
// selected scenario. --shard splits this list, so the shards' reports together are the serial one.
struct RunEntry {
  std::optional<LoadError> load_error;
  std::optional<Scenario> scenario;
};

// The files of `paths`, loaded and selected as a serial run does (audit policies defaulted).
std::vector<RunEntry> collectEntries(const std::vector<std::filesystem::path>& paths,
                                     const RunFilter& filter, const RunOptions& options) {
  std::vector<RunEntry> entries;
  for (const auto& path : paths) {
    auto files = findScenarioFiles({path});
    if (!files.ok()) {
      entries.push_back({LoadError{path.string(), files.error().message}, std::nullopt});
      continue;
    }
    if (files->empty()) {
      entries.push_back({LoadError{path.string(),
                                   fmt::format("{}: no scenario files (kind: Scenario) found",
                                               path.string())},
                         std::nullopt});
      continue;
    }
    for (const auto& file : *files) {
      auto scenario = loadScenario(file);
      if (!scenario.ok()) {
        entries.push_back({LoadError{file.string(), scenario.error().message}, std::nullopt});
        continue;
      }
      if (!matchesScenario(filter, scenario->name)) continue;
      if ((options.slow == RunOptions::Slow::kExclude && scenario->slow) ||
          (options.slow == RunOptions::Slow::kOnly && !scenario->slow)) {
        continue;
      }
      if (options.audit_sink && !scenario->audit_policy) {
        // Without a policy nothing would be recorded: an empty log and no word why.
        auto policy = audit::parsePolicy(audit::kDefaultLogPolicyText, "default audit policy");
        if (policy.ok()) {
          scenario->audit_policy = std::move(*policy);
          scenario->audit_policy_text = std::string(audit::kDefaultLogPolicyText);
          if (options.on_warning) {
            options.on_warning(fmt::format(
                "{}: scenario {} has no spec.auditPolicy: the audit log records it with the "
                "default policy (every request at RequestResponse, RequestReceived omitted)",
                file.string(), scenario->name));
          }
        }
      }
      entries.push_back({std::nullopt, std::move(*scenario)});
    }
  }
  return entries;
}

// Runs `scenarios` on `jobs` threads, each scenario whole on one thread with its own
// environment (runScenario: its work directory, stubs on their own ports, store, chain);
// results in the order of `scenarios`. `on_step` calls are serialized.
std::vector<ScenarioResult> runInParallel(const std::vector<const Scenario*>& scenarios,
                                          const RunOptions& options, unsigned jobs) {
  std::vector<ScenarioResult> results(scenarios.size());
  std::mutex step_mutex;
  RunOptions scenario_options = options;
  if (options.on_step && jobs > 1) {
    scenario_options.on_step = [&](const ScenarioResult& scenario, const StepResult& step) {
      const std::lock_guard lock(step_mutex);
      options.on_step(scenario, step);
    };
  }
  std::atomic<std::size_t> next{0};
  std::mutex started_mutex;
  std::condition_variable_any started;  // a scenario started: `next` moved on
  auto work = [&] {
    for (std::size_t i = next++; i < scenarios.size(); i = next++) {
      { const std::lock_guard lock(started_mutex); }
      started.notify_all();
      results[i] = runScenario(*scenarios[i], scenario_options);
    }
  };
  // The simulator's stubs of the next few scenarios are prepared (certificates, server TLS
  // contexts: StubWebhook::prepare) on another thread while scenarios play: the same objects
  // their start would make, made on a core a playing scenario mostly leaves idle (its calls wait
  // for their answers). A few ahead only: the process keeps 32 server contexts.
  std::optional<std::jthread> preparer;
  if (options.backend == nullptr && scenarios.size() > 1) {
    preparer.emplace([&](const std::stop_token& stop) {
      constexpr std::size_t kAhead = 4;
      // The first scenario's start makes its own: it begins at once.
      for (std::size_t i = 1; i < scenarios.size(); ++i) {
        std::unique_lock lock(started_mutex);
        if (!started.wait(lock, stop, [&] { return i < next.load() + kAhead; })) return;
        lock.unlock();
        try {
          prepareScenarioStubs(*scenarios[i]);
        } catch (const std::exception&) {
          // Nothing is lost: the scenario's start makes what is missing and reports why not.
        }
      }
    });
  }
  const auto threads = std::min<std::size_t>(std::max(jobs, 1U), scenarios.size());
  if (threads <= 1) {
    work();
    return results;
  }
  std::vector<std::thread> workers;
  workers.reserve(threads - 1);
  for (std::size_t t = 1; t < threads; ++t) workers.emplace_back(work);
  work();
  for (auto& worker : workers) worker.join();
  return results;
}

}  // namespace

core::Result<RunReport> runScenarioFiles(const std::vector<std::filesystem::path>& paths,
                                         std::string_view run_filter, const RunOptions& options,
                                         const std::function<void(const LoadError&)>& on_load_error,
                                         const RunSplit& split) {
  auto filter = parseRunFilter(run_filter);
  if (!filter.ok()) return filter.error();
  if (split.shard.count == 0 || split.shard.index < 1 ||
      split.shard.index > split.shard.count) {
    return core::makeError(fmt::format("shard {}/{}: want 1 <= K <= N", split.shard.index,
                                       split.shard.count));
  }
  const auto started = std::chrono::steady_clock::now();
  std::vector<RunEntry> entries = collectEntries(paths, *filter, options);
  RunReport report;
  std::vector<const Scenario*> scenarios;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    // Round robin over the serial list: deterministic, and every shard gets a fair share of
    // each folder (neighbouring scenarios are often alike in cost).
    if (i % split.shard.count != split.shard.index - 1) continue;
    if (entries[i].load_error) {
      if (on_load_error) on_load_error(*entries[i].load_error);
      report.load_errors.push_back(std::move(*entries[i].load_error));
    } else {
      scenarios.push_back(&*entries[i].scenario);
    }
  }
  RunOptions scenario_options = options;
  scenario_options.step_filter = filter->step;
  // Another backend (the real control plane) plays one scenario at a time.
  report.scenarios =
      runInParallel(scenarios, scenario_options, options.backend == nullptr ? split.jobs : 1);
  report.duration = std::chrono::steady_clock::now() - started;
  return report;
}

int RunReport::exitCode() const {
  if (!load_errors.empty()) return 2;
  for (const auto& scenario : scenarios) {
    if (scenario.error) return 2;
  }
  for (const auto& scenario : scenarios) {
    if (!scenario.passed()) return 1;
  }
  return 0;
}

std::string xmlEscaped(std::string_view value, bool attribute) {
  return xmlEscape(value, attribute);
}

std::string formatFailure(const ExpectationFailure& failure) {
  std::string out = fmt::format("{}: {}\n", failure.field, failure.message);
  if (!failure.diff.empty()) out += indentLines(failure.diff, "  ");
  return out;
}

std::string progressLine(const ScenarioResult& scenario, const StepResult& step) {
  return fmt::format("{:<7} {}/{} ({})", statusWord(step.status), scenario.name, step.name,
                     formatDuration(step.duration));
}

std::string renderTable(const RunReport& report, bool with_explanations) {
  struct Row {
    std::string scenario, step, result, time, details;
  };
  std::vector<Row> rows;
  std::size_t steps_passed = 0, steps_failed = 0, steps_skipped = 0, steps_not_run = 0;
  rows.reserve(report.load_errors.size());
  for (const auto& error : report.load_errors) {
    rows.push_back({error.file, "-", "ERROR", "", error.message + "\n"});
  }
  for (const auto& scenario : report.scenarios) {
    if (scenario.error) {
      rows.push_back({scenario.name, "-", "ERROR", formatDuration(scenario.duration),
                      *scenario.error + "\n"});
    }
    if (scenario.skip_reason) {
      rows.push_back({scenario.name, "-", "SKIP", "",
                      fmt::format("not played on {}: {}\n", scenario.backend,
                                  *scenario.skip_reason)});
    }
    for (const auto& step : scenario.steps) {
      std::string details;
      if (!step.skip_reason.empty() && !scenario.skip_reason) {
        details += fmt::format("not played on {}: {}\n", scenario.backend, step.skip_reason);
      }
      if (!step.unchecked.empty()) {
        std::string fields;
        for (const auto& field : step.unchecked) fields += (fields.empty() ? "" : ", ") + field;
        details += fmt::format("not observable on {}, not checked: {}\n", scenario.backend, fields);
      }
      for (const auto& failure : step.failures) details += formatFailure(failure);
      if (with_explanations && !step.explanation.empty()) details += step.explanation;
      rows.push_back({scenario.name, step.name, statusWord(step.status),
                      step.status == StepStatus::kNotRun ? "" : formatDuration(step.duration),
                      details});
      switch (step.status) {
        case StepStatus::kPassed:
          ++steps_passed;
          break;
        case StepStatus::kFailed:
          ++steps_failed;
          break;
        case StepStatus::kSkipped:
          ++steps_skipped;
          break;
        case StepStatus::kNotRun:
          ++steps_not_run;
          break;
      }
    }
  }
  std::size_t w_scenario = 8, w_step = 4, w_result = 6;
  for (const auto& row : rows) {
    w_scenario = std::max(w_scenario, row.scenario.size());
    w_step = std::max(w_step, row.step.size());
    w_result = std::max(w_result, row.result.size());
  }
  std::string out = fmt::format("{}  {}  {}  TIME\n", pad("SCENARIO", w_scenario),
                                pad("STEP", w_step), pad("RESULT", w_result));
  for (const auto& row : rows) {
    std::string line = fmt::format("{}  {}  {}  {}", pad(row.scenario, w_scenario),
                                   pad(row.step, w_step), pad(row.result, w_result), row.time);
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
    if (!row.details.empty()) out += indentLines(row.details, "    ");
  }
  std::size_t scenarios_passed = 0, scenarios_failed = 0, scenarios_error = 0;
  std::size_t scenarios_skipped = 0;
  for (const auto& scenario : report.scenarios) {
    if (scenario.error) {
      ++scenarios_error;
    } else if (scenario.skip_reason) {
      ++scenarios_skipped;
    } else if (scenario.passed()) {
      ++scenarios_passed;
    } else {
      ++scenarios_failed;
    }
  }
  scenarios_error += report.load_errors.size();
  out += fmt::format(
      "\n{} scenarios: {} passed, {} failed, {} errors{}; {} steps: {} passed, {} failed, {} "
      "skipped, {} not run ({})\n",
      report.scenarios.size() + report.load_errors.size(), scenarios_passed, scenarios_failed,
      scenarios_error,
      scenarios_skipped == 0 ? std::string() : fmt::format(", {} skipped", scenarios_skipped),
      steps_passed + steps_failed + steps_skipped + steps_not_run, steps_passed,
      steps_failed, steps_skipped, steps_not_run, formatDuration(report.duration));
  return out;
}

nlohmann::json reportJson(const RunReport& report) {
  json scenarios = json::array();
  std::size_t passed = 0, failed = 0, errors = report.load_errors.size(), skipped_scenarios = 0;
  json step_counts = {{"passed", 0}, {"failed", 0}, {"skipped", 0}, {"notRun", 0}};
  for (const auto& scenario : report.scenarios) {
    const std::string result = scenarioResult(scenario);
    if (result == "passed") ++passed;
    if (result == "failed") ++failed;
    if (result == "error") ++errors;
    if (result == "skipped") ++skipped_scenarios;
    json steps = json::array();
    for (const auto& step : scenario.steps) {
      const std::string status(toString(step.status));
      step_counts[status] = step_counts[status].get<int>() + 1;
      json entry = {{"name", step.name},
                    {"result", status},
                    {"durationSeconds", seconds(step.duration)}};
      if (step.admission) {
        const auto& admission = *step.admission;
        json response = {{"allowed", admission.allowed}, {"code", admission.code}};
        if (admission.status) {
          response["reason"] = admission.status->reason;
          response["message"] = admission.status->message;
        }
        if (!admission.warnings.empty()) response["warnings"] = admission.warnings;
        entry["response"] = std::move(response);
        entry["calls"] = callsJson(admission);
      }
      json failures = json::array();
      for (const auto& failure : step.failures) {
        json f = {{"field", failure.field}, {"message", failure.message}};
        if (!failure.diff.empty()) f["diff"] = failure.diff;
        failures.push_back(std::move(f));
      }
      entry["failures"] = std::move(failures);
      if (!step.skip_reason.empty()) entry["skipReason"] = step.skip_reason;
      if (!step.unchecked.empty()) entry["unchecked"] = step.unchecked;
      if (!step.explanation.empty()) entry["explanation"] = step.explanation;
      if (!step.explanation_json.is_null()) entry["explain"] = step.explanation_json;
      steps.push_back(std::move(entry));
    }
    json entry = {{"name", scenario.name},
                  {"file", scenario.file.string()},
                  {"result", result},
                  {"durationSeconds", seconds(scenario.duration)},
                  {"steps", std::move(steps)}};
    if (!scenario.description.empty()) entry["description"] = scenario.description;
    if (scenario.error) entry["error"] = *scenario.error;
    if (scenario.skip_reason) entry["skipReason"] = *scenario.skip_reason;
    entry["backend"] = scenario.backend;
    scenarios.push_back(std::move(entry));
  }
  json load_errors = json::array();
  for (const auto& error : report.load_errors) {
    load_errors.push_back({{"file", error.file}, {"message", error.message}});
  }
  return {{"apiVersion", std::string(kScenarioApiVersion)},
          {"kind", "ScenarioRunReport"},
          {"summary",
           {{"scenarios", report.scenarios.size() + report.load_errors.size()},
            {"passed", passed},
            {"failed", failed},
            {"errors", errors},
            {"skipped", skipped_scenarios},
            {"steps", std::move(step_counts)},
            {"durationSeconds", seconds(report.duration)},
            {"exitCode", report.exitCode()}}},
          {"loadErrors", std::move(load_errors)},
          {"scenarios", std::move(scenarios)}};
}

std::string renderJson(const RunReport& report) {
  return reportJson(report).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

namespace {

std::string timeAttribute(std::chrono::nanoseconds duration) {
  return fmt::format(" time=\"{:.6f}\"", seconds(duration));
}

}  // namespace

std::string renderJunit(const RunReport& report) {
  JunitDocument document;
  for (const auto& error : report.load_errors) {
    JunitSuite suite;
    suite.addCase("load", error.file, " time=\"0\"", JunitResult::kError,
                  fmt::format("      <error message=\"the scenario could not be loaded\" "
                              "type=\"LoadError\">{}</error>\n",
                              text(error.message)));
    document.addSuite(error.file, fmt::format(" time=\"0\" file=\"{}\"", attr(error.file)),
                      suite);
  }
  for (const auto& scenario : report.scenarios) {
    JunitSuite suite;
    if (scenario.error) {
      suite.addCase("setup", scenario.name, timeAttribute(scenario.duration), JunitResult::kError,
                    fmt::format("      <error message=\"the scenario could not be run\" "
                                "type=\"HarnessError\">{}</error>\n",
                                text(*scenario.error)));
    }
    for (const auto& step : scenario.steps) {
      std::string body;
      JunitResult result = JunitResult::kPassed;
      if (step.status == StepStatus::kFailed) {
        result = JunitResult::kFailed;
        std::string details;
        for (const auto& failure : step.failures) details += formatFailure(failure);
        const std::string summary =
            step.failures.empty() ? "failed"
                                  : step.failures.front().field + ": " + step.failures.front().message;
        body += fmt::format("      <failure message=\"{}\" type=\"ExpectationFailed\">{}</failure>\n",
                            attr(summary), text(details));
      } else if (step.status == StepStatus::kSkipped || step.status == StepStatus::kNotRun) {
        result = JunitResult::kSkipped;
        body += fmt::format("      <skipped message=\"{}\"/>\n",
                            !step.skip_reason.empty()
                                ? attr("not played on " + scenario.backend + ": " +
                                       step.skip_reason)
                            : step.status == StepStatus::kSkipped
                                ? "not selected by --run (run only for its effect on the store)"
                                : "not run");
      }
      if (!step.explanation.empty()) {
        body += fmt::format("      <system-out>{}</system-out>\n", text(step.explanation));
      }
      suite.addCase(step.name, scenario.name, timeAttribute(step.duration), result, body);
    }
    document.addSuite(scenario.name,
                      timeAttribute(scenario.duration) +
                          fmt::format(" file=\"{}\"", attr(scenario.file.string())),
                      suite);
  }
  return document.render("apiserver-sim", timeAttribute(report.duration));
}

}  // namespace harness::sim
