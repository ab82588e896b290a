// Reports: the human table, one JSON document, one well-formed JUnit XML document, exit codes.

#include <cctype>
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/sim/report.h"

namespace harness::sim {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// A strict-enough XML 1.0 well-formedness check for what the JUnit writer emits: one root
// element, balanced tags, quoted attributes without '<', known entity references only.
std::string xmlProblem(std::string_view xml) {
  std::vector<std::string> open;
  std::size_t i = 0;
  bool root_seen = false;
  auto checkText = [](std::string_view text) -> std::string {
    for (std::size_t k = 0; k < text.size(); ++k) {
      if (text[k] == '<') return "'<' in text";
      if (text[k] == '&') {
        const auto end = text.find(';', k);
        if (end == std::string_view::npos) return "unterminated entity";
        const std::string_view entity = text.substr(k + 1, end - k - 1);
        const bool known = entity == "amp" || entity == "lt" || entity == "gt" ||
                           entity == "quot" || entity == "apos" ||
                           (entity.size() > 1 && entity[0] == '#');
        if (!known) return "unknown entity &" + std::string(entity) + ";";
      }
      const auto c = static_cast<unsigned char>(text[k]);
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') return "control character";
    }
    return {};
  };
  if (xml.rfind("<?xml", 0) == 0) i = xml.find("?>") + 2;
  while (i < xml.size()) {
    const auto lt = xml.find('<', i);
    const std::string_view text = xml.substr(i, lt == std::string_view::npos ? xml.npos : lt - i);
    if (auto problem = checkText(text); !problem.empty()) return problem;
    if (open.empty() && text.find_first_not_of(" \t\r\n") != std::string_view::npos) {
      return "text outside the root";
    }
    if (lt == std::string_view::npos) break;
    const auto gt = xml.find('>', lt);
    if (gt == std::string_view::npos) return "unterminated tag";
    std::string_view tag = xml.substr(lt + 1, gt - lt - 1);
    if (!tag.empty() && tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return "mismatched </" + std::string(tag.substr(1)) + ">";
      open.pop_back();
    } else {
      const bool self_closing = !tag.empty() && tag.back() == '/';
      if (self_closing) tag.remove_suffix(1);
      std::size_t k = 0;
      while (k < tag.size() && !std::isspace(static_cast<unsigned char>(tag[k]))) ++k;
      const std::string name(tag.substr(0, k));
      if (name.empty()) return "empty tag name";
      // Attributes: name="value" pairs.
      while (k < tag.size()) {
        while (k < tag.size() && std::isspace(static_cast<unsigned char>(tag[k]))) ++k;
        if (k >= tag.size()) break;
        const auto eq = tag.find('=', k);
        if (eq == std::string_view::npos || eq + 1 >= tag.size() || tag[eq + 1] != '"') {
          return "unquoted attribute in <" + name + ">";
        }
        const auto close = tag.find('"', eq + 2);
        if (close == std::string_view::npos) return "unterminated attribute in <" + name + ">";
        if (auto problem = checkText(tag.substr(eq + 2, close - eq - 2)); !problem.empty()) {
          problem += " in an attribute of <";
          problem += name;
          problem += ">";
          return problem;
        }
        k = close + 1;
      }
      if (open.empty()) {
        if (root_seen) return "two root elements";
        root_seen = true;
      }
      if (!self_closing) open.push_back(name);
    }
    i = gt + 1;
  }
  if (!open.empty()) return "unclosed <" + open.back() + ">";
  if (!root_seen) return "no root element";
  return {};
}

RunReport sampleReport() {
  RunReport report;
  ScenarioResult passing;
  passing.name = "allow";
  passing.file = "scenarios/allow.yaml";
  StepResult ok;
  ok.name = "create";
  ok.status = StepStatus::kPassed;
  ok.admission = AdmissionResult{};
  ok.admission->allowed = true;
  ok.admission->code = 201;
  passing.steps.push_back(ok);

  ScenarioResult failing;
  failing.name = "deny <&> \"quotes\"";
  failing.file = "scenarios/deny.yaml";
  StepResult bad;
  bad.name = "create";
  bad.status = StepStatus::kFailed;
  bad.failures.push_back({"code", "expected 403, got 201", ""});
  bad.failures.push_back({"object", "/metadata/labels/x: expected \"a\", got \"b\"",
                          "  metadata:\n-   x: a\n+   x: b\x01\n"});
  failing.steps.push_back(bad);
  StepResult skipped;
  skipped.name = "later";
  skipped.status = StepStatus::kNotRun;
  failing.steps.push_back(skipped);
  report.scenarios = {passing, failing};
  return report;
}

TEST(ReportTest, ExitCodeZeroWhenEverythingPassed) {
  RunReport report = sampleReport();
  report.scenarios.pop_back();
  EXPECT_EQ(report.exitCode(), 0);
}

TEST(ReportTest, ExitCodeOneOnFailedExpectations) { EXPECT_EQ(sampleReport().exitCode(), 1); }

TEST(ReportTest, ExitCodeTwoOnLoadErrors) {
  RunReport report = sampleReport();
  report.load_errors.push_back({"x.yaml", "x.yaml:1:1: kind: expected \"Scenario\""});
  EXPECT_EQ(report.exitCode(), 2);
}

TEST(ReportTest, ExitCodeTwoOnHarnessErrors) {
  RunReport report = sampleReport();
  report.scenarios[0].error = "endpoint \"x\": bind failed";
  EXPECT_EQ(report.exitCode(), 2);
}

TEST(ReportTest, TableListsStepsWithFailureDetailsAndASummary) {
  const std::string table = renderTable(sampleReport());
  EXPECT_THAT(table, HasSubstr("SCENARIO"));
  EXPECT_THAT(table, HasSubstr("PASS"));
  EXPECT_THAT(table, HasSubstr("FAIL"));
  EXPECT_THAT(table, HasSubstr("NOT RUN"));
  EXPECT_THAT(table, HasSubstr("    code: expected 403, got 201\n"));
  EXPECT_THAT(table, HasSubstr("    object: /metadata/labels/x: expected \"a\", got \"b\"\n"
                               "        metadata:\n"
                               "      -   x: a\n"));
  EXPECT_THAT(table, HasSubstr("2 scenarios: 1 passed, 1 failed, 0 errors; 3 steps: 1 passed, 1 "
                               "failed, 0 skipped, 1 not run"));
}

TEST(ReportTest, JsonIsOneDocumentWithSummaryAndFailures) {
  const json report = json::parse(renderJson(sampleReport()));
  EXPECT_EQ(report["kind"], "ScenarioRunReport");
  EXPECT_EQ(report["summary"]["exitCode"], 1);
  EXPECT_EQ(report["summary"]["passed"], 1);
  EXPECT_EQ(report["summary"]["failed"], 1);
  EXPECT_EQ(report["summary"]["steps"]["notRun"], 1);
  ASSERT_EQ(report["scenarios"].size(), 2u);
  EXPECT_EQ(report["scenarios"][0]["steps"][0]["response"]["code"], 201);
  const json& failures = report["scenarios"][1]["steps"][0]["failures"];
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_EQ(failures[0]["field"], "code");
  EXPECT_FALSE(failures[0].contains("diff"));
  EXPECT_EQ(failures[1]["diff"], "  metadata:\n-   x: a\n+   x: b\x01\n");
}

TEST(ReportTest, JsonListsLoadErrors) {
  RunReport report;
  report.load_errors.push_back({"bad.yaml", "bad.yaml:3:4: spec: expected mapping, got string"});
  const json parsed = json::parse(renderJson(report));
  EXPECT_EQ(parsed["summary"]["errors"], 1);
  EXPECT_EQ(parsed["loadErrors"][0]["file"], "bad.yaml");
}

TEST(ReportTest, JunitIsWellFormedWithFailuresAndSkips) {
  const std::string xml = renderJunit(sampleReport());
  EXPECT_EQ(xmlProblem(xml), "");
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"apiserver-sim\" tests=\"3\" failures=\"1\" "
                             "errors=\"0\" skipped=\"1\""));
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"deny &lt;&amp;&gt; &quot;quotes&quot;\""));
  EXPECT_THAT(xml, HasSubstr("<failure message=\"code: expected 403, got 201\" "
                             "type=\"ExpectationFailed\">"));
  EXPECT_THAT(xml, HasSubstr("+   x: b\xEF\xBF\xBD"));  // the control character replaced
  EXPECT_THAT(xml, HasSubstr("<skipped message=\"not run\"/>"));
}

TEST(ReportTest, JunitReportsLoadAndHarnessErrors) {
  RunReport report = sampleReport();
  report.load_errors.push_back({"bad.yaml", "bad.yaml:1:1: <oops>"});
  report.scenarios[0].error = "endpoint \"x\" did not start";
  const std::string xml = renderJunit(report);
  EXPECT_EQ(xmlProblem(xml), "");
  EXPECT_THAT(xml, HasSubstr("errors=\"2\""));
  EXPECT_THAT(xml, HasSubstr("<error message=\"the scenario could not be loaded\" "
                             "type=\"LoadError\">bad.yaml:1:1: &lt;oops&gt;</error>"));
  EXPECT_THAT(xml, HasSubstr("<testcase name=\"setup\" classname=\"allow\""));
}

// The whole document, byte for byte: every kind of test case, the counters and the times.
TEST(ReportTest, JunitDocumentIsExactlyThis) {
  RunReport report = sampleReport();
  report.duration = std::chrono::milliseconds(2500);
  report.load_errors.push_back({"bad \"one\".yaml", "bad.yaml:1:1: <oops>"});
  report.scenarios[0].duration = std::chrono::milliseconds(1250);
  report.scenarios[0].steps[0].duration = std::chrono::microseconds(1500);
  report.scenarios[0].error = "endpoint \"x\" did not start";
  StepResult skipped;
  skipped.name = "elsewhere";
  skipped.status = StepStatus::kSkipped;
  skipped.skip_reason = "no such feature";
  skipped.explanation = "why & how";
  report.scenarios[0].backend = "kube";
  report.scenarios[0].steps.push_back(skipped);
  StepResult selected_out;
  selected_out.name = "unselected";
  selected_out.status = StepStatus::kSkipped;
  report.scenarios[0].steps.push_back(selected_out);
  StepResult explained;
  explained.name = "explained";
  explained.status = StepStatus::kPassed;
  explained.explanation = "all fine";
  report.scenarios[0].steps.push_back(explained);
  EXPECT_EQ(renderJunit(report),
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"apiserver-sim\" tests=\"8\" failures=\"1\" errors=\"2\" skipped=\"3\" time=\"2.500000\">\n"
      "  <testsuite name=\"bad &quot;one&quot;.yaml\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\" time=\"0\" file=\"bad &quot;one&quot;.yaml\">\n"
      "    <testcase name=\"load\" classname=\"bad &quot;one&quot;.yaml\" time=\"0\">\n"
      "      <error message=\"the scenario could not be loaded\" type=\"LoadError\">bad.yaml:1:1: &lt;oops&gt;</error>\n"
      "    </testcase>\n"
      "  </testsuite>\n"
      "  <testsuite name=\"allow\" tests=\"5\" failures=\"0\" errors=\"1\" skipped=\"2\" time=\"1.250000\" file=\"scenarios/allow.yaml\">\n"
      "    <testcase name=\"setup\" classname=\"allow\" time=\"1.250000\">\n"
      "      <error message=\"the scenario could not be run\" type=\"HarnessError\">endpoint \"x\" did not start</error>\n"
      "    </testcase>\n"
      "    <testcase name=\"create\" classname=\"allow\" time=\"0.001500\"/>\n"
      "    <testcase name=\"elsewhere\" classname=\"allow\" time=\"0.000000\">\n"
      "      <skipped message=\"not played on kube: no such feature\"/>\n"
      "      <system-out>why &amp; how</system-out>\n"
      "    </testcase>\n"
      "    <testcase name=\"unselected\" classname=\"allow\" time=\"0.000000\">\n"
      "      <skipped message=\"not selected by --run (run only for its effect on the store)\"/>\n"
      "    </testcase>\n"
      "    <testcase name=\"explained\" classname=\"allow\" time=\"0.000000\">\n"
      "      <system-out>all fine</system-out>\n"
      "    </testcase>\n"
      "  </testsuite>\n"
      "  <testsuite name=\"deny &lt;&amp;&gt; &quot;quotes&quot;\" tests=\"2\" failures=\"1\" errors=\"0\" skipped=\"1\" time=\"0.000000\" file=\"scenarios/deny.yaml\">\n"
      "    <testcase name=\"create\" classname=\"deny &lt;&amp;&gt; &quot;quotes&quot;\" time=\"0.000000\">\n"
      "      <failure message=\"code: expected 403, got 201\" type=\"ExpectationFailed\">code: expected 403, got 201\n"
      "object: /metadata/labels/x: expected \"a\", got \"b\"\n"
      "    metadata:\n"
      "  -   x: a\n"
      "  +   x: b\xEF\xBF\xBD\n"
      "</failure>\n"
      "    </testcase>\n"
      "    <testcase name=\"later\" classname=\"deny &lt;&amp;&gt; &quot;quotes&quot;\" time=\"0.000000\">\n"
      "      <skipped message=\"not run\"/>\n"
      "    </testcase>\n"
      "  </testsuite>\n"
      "</testsuites>\n");
}

TEST(ReportTest, JunitReplacesInvalidUtf8) {
  RunReport report = sampleReport();
  report.scenarios[1].steps[0].failures[0].message = "bad \xff byte";
  const std::string xml = renderJunit(report);
  EXPECT_EQ(xmlProblem(xml), "");
  EXPECT_THAT(xml, HasSubstr("bad \xEF\xBF\xBD byte"));
}

TEST(ReportTest, ProgressLineNamesScenarioAndStep) {
  const RunReport report = sampleReport();
  EXPECT_THAT(progressLine(report.scenarios[1], report.scenarios[1].steps[0]),
              HasSubstr("FAIL    deny <&> \"quotes\"/create ("));
}

TEST(ReportTest, FormatFailureIndentsTheDiff) {
  EXPECT_EQ(formatFailure({"warnings", "expected 1 warnings, got 0", "- w\n"}),
            "warnings: expected 1 warnings, got 0\n  - w\n");
}

}  // namespace
}  // namespace harness::sim
