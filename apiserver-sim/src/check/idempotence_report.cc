// The reports of check-idempotence: text, JSON and JUnit (the scenario reports' JUnit writer).

#include <ostream>

#include <fmt/format.h>

#include "../scenario/junit.h"
#include "harness/core/yaml.h"
#include "harness/sim/idempotence_check.h"
#include "harness/sim/report.h"

namespace harness::sim {

namespace {

using nlohmann::json;

constexpr const char* kLaws[] = {"patch", "idempotence", "reinvocation"};

double seconds(std::chrono::nanoseconds d) { return static_cast<double>(d.count()) / 1e9; }

std::string indented(const std::string& text, std::string_view pad) {
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    const auto line = text.substr(start, end == std::string::npos ? end : end - start);
    out += std::string(pad) + line + "\n";
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return out;
}

std::string patchText(const json& patch) {
  if (!patch.is_array() || patch.empty()) return "(none)\n";
  std::string out;
  for (const auto& op : patch) out += op.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  return out;
}

// The counterexample as text: the minimal object and both calls with their patches.
std::string details(const IdempotenceReport& report, const Counterexample& c) {
  std::string out = fmt::format("{}: {}\n", c.law, c.message);
  out += fmt::format("case {} (reproduce: --seed {} --cases {}), shrunk in {} step{}\n",
                     c.case_number, report.seed, c.case_number, c.shrink_steps,
                     c.shrink_steps == 1 ? "" : "s");
  out += "object (minimal):\n" + indented(core::toYaml(c.object), "  ");
  out += "first call's patch:\n" + indented(patchText(c.first_patch), "  ");
  if (!c.mutator.empty()) out += "then " + c.mutator + " changed the result\n";
  out += "failing call was sent:\n" + indented(core::toYaml(c.failing_input), "  ");
  out += "failing call's patch:\n" + indented(patchText(c.failing_patch), "  ");
  return out;
}

std::string summary(const IdempotenceReport& report) {
  return fmt::format(
      "{}: seed {}, {} case{} ({} patched, {} denied), {} call{}, mutators beside it: {}; {:.2f} s",
      report.webhook, report.seed, report.cases, report.cases == 1 ? "" : "s",
      report.patched_cases, report.denied_cases, report.calls, report.calls == 1 ? "" : "s",
      report.mutators.empty() ? std::string("none") : fmt::format("{}", fmt::join(report.mutators, ", ")),
      seconds(report.duration));
}

json reportJson(const IdempotenceReport& report) {
  json out = {{"webhook", report.webhook},
              {"seed", report.seed},
              {"cases", report.cases},
              {"patchedCases", report.patched_cases},
              {"deniedCases", report.denied_cases},
              {"calls", report.calls},
              {"mutators", report.mutators},
              {"durationSeconds", seconds(report.duration)},
              {"result", report.error ? "error" : report.counterexample ? "fail" : "pass"},
              {"exitCode", report.exitCode()}};
  if (report.error) out["error"] = *report.error;
  if (const auto& c = report.counterexample) {
    out["counterexample"] = {{"law", c->law},
                             {"message", c->message},
                             {"case", c->case_number},
                             {"shrinkSteps", c->shrink_steps},
                             {"object", c->object},
                             {"firstPatch", c->first_patch},
                             {"mutator", c->mutator},
                             {"failingInput", c->failing_input},
                             {"failingPatch", c->failing_patch}};
  }
  return out;
}

std::string junit(const IdempotenceReport& report) {
  JunitSuite suite;
  const std::string time = fmt::format(" time=\"{:.6f}\"", seconds(report.duration));
  for (const char* law : kLaws) {
    std::string body;
    JunitResult result = JunitResult::kPassed;
    if (report.error) {
      result = JunitResult::kError;
      body = fmt::format("      <error message=\"the webhook could not be asked\" "
                         "type=\"HarnessError\">{}</error>\n",
                         xmlEscaped(*report.error, false));
    } else if (report.counterexample && report.counterexample->law == law) {
      result = JunitResult::kFailed;
      body = fmt::format("      <failure message=\"{}\" type=\"Counterexample\">{}</failure>\n",
                         xmlEscaped(report.counterexample->message, true),
                         xmlEscaped(details(report, *report.counterexample), false));
    } else if (report.counterexample) {
      result = JunitResult::kSkipped;  // the run stopped at the first counterexample
      body = "      <skipped message=\"the run stopped at the first counterexample\"/>\n";
    } else if (std::string_view(law) == "reinvocation" && report.mutators.empty()) {
      result = JunitResult::kSkipped;
      body = "      <skipped message=\"no mutator beside the webhook (--mutator)\"/>\n";
    }
    suite.addCase(law, report.webhook, time, result, body);
  }
  JunitDocument document;
  document.addSuite("check-idempotence " + report.webhook,
                    time + fmt::format(" seed=\"{}\"", report.seed), suite);
  return document.render("apiserver-sim check-idempotence", time);
}

}  // namespace

void writeIdempotenceReport(const IdempotenceReport& report, const std::string& format,
                            std::ostream& out) {
  if (format == "json") {
    out << reportJson(report).dump(2, ' ', false, json::error_handler_t::replace) << "\n";
    return;
  }
  if (format == "junit") {
    out << junit(report);
    return;
  }
  if (report.error) {
    out << "ERROR " << summary(report) << "\n  the webhook could not be asked: " << *report.error
        << "\n";
  } else if (report.counterexample) {
    out << "FAIL " << summary(report) << "\n" << details(report, *report.counterexample);
  } else {
    out << "PASS " << summary(report) << "\n";
  }
}

}  // namespace harness::sim
