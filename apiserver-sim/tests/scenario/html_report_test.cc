// The HTML report: its content from the explain JSON (diagram lanes and arrows, the decision
// table, diffs, escaping, failures), and the page drawn by headless Chromium (Debian's
// `chromium`; skipped with one line when it is not installed): the script marks the page
// rendered, the DOM has the diagram and the table, no script error is logged, and a screenshot
// is written.

#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/sim/explain.h"
#include "harness/sim/html_report.h"
#include "harness/testing/support.h"
#include "headless_chromium.h"

namespace harness::sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

RunReport sampleReport() {
  Step step;
  step.name = "create <pod>";
  step.request.operation = "CREATE";
  step.request.resource = {"", "v1", "pods"};
  step.request.namespace_name = "demo";
  step.request.name = "web";
  AdmissionResult result;
  result.allowed = false;
  result.code = 403;
  result.stage = "validating";
  core::Status status;
  status.code = 403;
  status.reason = "Forbidden";
  status.message = "admission webhook \"policy.example.com\" denied the request: <no>";
  result.status = status;
  result.plugins.push_back({"ServiceAccount", 0, false, true, std::nullopt});
  MatchRecord injector;
  injector.kind = core::WebhookKind::kMutating;
  injector.configuration = "inject";
  injector.webhook = "inject.example.com";
  injector.match.outcome = MatchOutcome::kCall;
  MatchRecord skipped = injector;
  skipped.webhook = "other.example.com";
  skipped.match.outcome = MatchOutcome::kSkip;
  skipped.match.skipped_by = "namespaceSelector";
  skipped.match.explanation = {"namespaceSelector `team=x`: namespace \"demo\" has labels "
                               "<none>: no match"};
  MatchRecord policy;
  policy.kind = core::WebhookKind::kValidating;
  policy.configuration = "policy";
  policy.webhook = "policy.example.com";
  policy.match.outcome = MatchOutcome::kCall;
  result.matches = {injector, skipped, policy};
  CallRecord patched;
  patched.kind = core::WebhookKind::kMutating;
  patched.configuration = "inject";
  patched.webhook = "inject.example.com";
  patched.called = true;
  patched.outcome = CallOutcome::kPatched;
  patched.changed = true;
  patched.latency = std::chrono::milliseconds(4);
  patched.timeout = std::chrono::seconds(10);
  patched.request_review = json::parse(R"({"request": {"object": {"metadata": {"labels": {}}}}})");
  patched.patch = json::parse(R"([{"op": "add", "path": "/metadata/labels/x", "value": "y"}])");
  CallRecord denied;
  denied.kind = core::WebhookKind::kValidating;
  denied.configuration = "policy";
  denied.webhook = "policy.example.com";
  denied.called = true;
  denied.outcome = CallOutcome::kDenied;
  denied.latency = std::chrono::milliseconds(2);
  denied.timeout = std::chrono::seconds(5);
  result.calls = {patched, denied};

  StepResult step_result;
  step_result.name = step.name;
  step_result.status = StepStatus::kFailed;
  step_result.failures.push_back({"code", "expected 201, got 403", ""});
  step_result.explanation_json = explainStepJson(step, result);
  ScenarioResult scenario;
  scenario.name = "sample";
  scenario.file = "sample.yaml";
  scenario.steps.push_back(std::move(step_result));
  RunReport report;
  report.scenarios.push_back(std::move(scenario));
  return report;
}

TEST(HtmlReportTest, DrawsTheRequestDecisionsAndDiffs) {
  const std::string html = renderHtmlReport(sampleReport(), "report <test>");
  EXPECT_THAT(html, HasSubstr("<title>report &lt;test&gt;</title>"));
  EXPECT_THAT(html, HasSubstr("<svg class=\"sequence\""));
  // Lanes: client, apiserver, plugins, the called webhooks, validation, storage.
  EXPECT_THAT(html, HasSubstr(">inject.example.com</text>"));
  EXPECT_THAT(html, HasSubstr(">policy.example.com</text>"));
  EXPECT_THAT(html, HasSubstr("Patched in 4.0ms of 10.00s"));
  EXPECT_THAT(html, HasSubstr("Denied in 2.0ms of 5.00s"));
  EXPECT_THAT(html, HasSubstr("class=\"latency\""));
  // Denied: no storage arrow, the answer in red.
  EXPECT_THAT(html, Not(HasSubstr(">persist, audit</text>")));
  EXPECT_THAT(html, HasSubstr("fill=\"#c33\">403 admission webhook &quot;policy.example.com&quot;"));
  // The decision table, with the deciding clause escaped.
  EXPECT_THAT(html, HasSubstr("<td>other.example.com</td>"));
  EXPECT_THAT(html, HasSubstr("namespaceSelector `team=x`: namespace &quot;demo&quot; has labels "
                              "&lt;none&gt;: no match"));
  EXPECT_THAT(html, HasSubstr("<span class=\"add\">    + &quot;y&quot;</span>"));
  EXPECT_THAT(html, HasSubstr("<p class=\"failure\">code: expected 201, got 403</p>"));
  EXPECT_THAT(html, HasSubstr("<div class=\"step failed\">"));
  // Self-contained: nothing fetched.
  EXPECT_THAT(html, Not(HasSubstr("http://")));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
  EXPECT_THAT(html, Not(HasSubstr("<no>")));
}

TEST(HtmlReportChromiumTest, HeadlessChromiumDrawsThePage) {
  const fs::path browser = test::chromium();
  if (browser.empty()) GTEST_SKIP() << "chromium is not installed (apt-get install -y chromium)";
  testing::ScratchDir dir("html-report");
  const fs::path page = dir / "report.html";
  testing::writeFile(page, renderHtmlReport(sampleReport(), "report"));
  const auto dom = test::runChromium(browser, page, dir.path(), {"--dump-dom"});
  ASSERT_EQ(dom.status, 0) << dom.err;
  EXPECT_THAT(dom.out, HasSubstr("data-rendered=\"ok\""));
  EXPECT_THAT(dom.out, HasSubstr("<line class=\"message\""));
  EXPECT_THAT(dom.out, HasSubstr("<table class=\"decisions\">"));
  EXPECT_THAT(dom.err, Not(HasSubstr("Uncaught")));
  const auto screenshot = test::runChromium(
      browser, page, dir.path(),
      {"--window-size=1200,1400", "--screenshot=" + (dir / "report.png").string()});
  ASSERT_EQ(screenshot.status, 0) << screenshot.err;
  ASSERT_TRUE(fs::exists(dir / "report.png"));
  EXPECT_GT(fs::file_size(dir / "report.png"), 10'000u);  // a drawn page, not a blank one
}

}  // namespace
}  // namespace harness::sim
