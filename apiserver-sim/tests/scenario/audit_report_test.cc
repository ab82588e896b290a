// `apiserver-sim report --audit-log`: the requests of a real cluster's audit logs (k3d with
// Linkerd; the local kube-apiserver with denying webhooks) drawn as the HTML report draws a
// scenario run, and the page drawn by headless Chromium as html_report_test.cc checks it.

#include "harness/sim/audit_report.h"

#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/sim/html_report.h"
#include "harness/testing/support.h"
#include "headless_chromium.h"

namespace harness::sim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

fs::path testdata(const std::string& name) {
  return testing::sourceDir() / "audit/tests/testdata" / name;
}

RunReport load(const std::vector<fs::path>& logs, std::vector<std::string>* bad = nullptr) {
  auto report = reportFromAuditLogs(logs, {}, false, [bad](const std::string& message) {
    if (bad != nullptr) bad->push_back(message);
  });
  EXPECT_TRUE(report.ok()) << report.error().message;
  return report.ok() ? *report : RunReport{};
}

TEST(AuditReportTest, TheLinkerdInjectionOfAK3dClusterIsOneStepWithItsPatch) {
  const RunReport report = load({testdata("k3d_linkerd_pod_create.log")});
  ASSERT_EQ(report.scenarios.size(), 1u);
  const auto& scenario = report.scenarios[0];
  EXPECT_EQ(scenario.name, "audit log k3d_linkerd_pod_create.log");
  ASSERT_EQ(scenario.steps.size(), 1u);
  const auto& step = scenario.steps[0];
  EXPECT_EQ(step.status, StepStatus::kPassed);
  EXPECT_THAT(step.name, HasSubstr("create v1/pods simple-app/"));
  const auto& webhooks = step.explanation_json["webhooks"];
  ASSERT_EQ(webhooks.size(), 1u);
  EXPECT_EQ(webhooks[0]["webhook"], "linkerd-proxy-injector.linkerd.io");
  EXPECT_EQ(webhooks[0]["call"]["outcome"], "Patched");
  EXPECT_FALSE(webhooks[0]["call"]["patch"].empty());

  const std::string html = renderHtmlReport(report, "k3d");
  EXPECT_THAT(html, HasSubstr("<td>linkerd-proxy-injector.linkerd.io</td>"));
  EXPECT_THAT(html, HasSubstr(">persist, audit</text>"));
  EXPECT_THAT(html, HasSubstr("<span class=\"add\">"));  // the patch's values
  EXPECT_THAT(html, HasSubstr("not the webhooks skipped"));  // says what a log cannot tell
}

TEST(AuditReportTest, DenialsAreTheFailuresWithTheWebhookThatDenied) {
  const RunReport report = load({testdata("kube_denials.log")});
  ASSERT_EQ(report.scenarios.size(), 1u);
  std::size_t failed = 0;
  bool drew_denier = false;
  for (const auto& step : report.scenarios[0].steps) {
    if (step.status != StepStatus::kFailed) continue;
    ++failed;
    ASSERT_FALSE(step.failures.empty());
    EXPECT_THAT(step.failures[0].message, HasSubstr("denied"));
    for (const auto& webhook : step.explanation_json["webhooks"]) {
      if (webhook["webhook"] == "deny-fail.denials.example.com") {
        drew_denier = webhook["call"]["outcome"] == "Denied";
      }
    }
  }
  EXPECT_GT(failed, 0u);
  EXPECT_TRUE(drew_denier);
  const std::string html = renderHtmlReport(report, "denials");
  EXPECT_THAT(html, HasSubstr("<div class=\"step failed\">"));
  EXPECT_THAT(html, HasSubstr("Denied (latency not recorded)"));
  EXPECT_THAT(html, Not(HasSubstr("https://")));
}

TEST(AuditReportTest, BadLinesAreReportedAndSkippedAndAMissingLogIsAnError) {
  testing::ScratchDir dir("audit-report");
  const std::string good = testing::readFile(testdata("k3d_linkerd_pod_create.log"));
  // A line that may hold a chain (the reader skips, unparsed, lines that cannot: audit/chain.cc
  // mayHoldChain) but does not parse.
  testing::writeFile(dir / "mixed.log",
                     "{\"stage\":\"ResponseComplete\",\"annotations\":{\"mutation.webhook."
                     "admission.k8s.io/round_0_index_0\":\n" +
                         good);
  std::vector<std::string> bad;
  const RunReport report = load({dir / "mixed.log"}, &bad);
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_THAT(bad[0], HasSubstr("mixed.log:1:"));
  ASSERT_EQ(report.scenarios.size(), 1u);
  EXPECT_EQ(report.scenarios[0].steps.size(), 1u);

  auto missing = reportFromAuditLogs({dir / "nope.log"}, {}, false, {});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.error().message, HasSubstr("nope.log"));
}

TEST(AuditReportChromiumTest, HeadlessChromiumDrawsTheAuditReport) {
  const fs::path browser = test::chromium();
  if (browser.empty()) GTEST_SKIP() << "chromium is not installed (apt-get install -y chromium)";
  testing::ScratchDir dir("audit-report-chromium");
  const fs::path page = dir / "report.html";
  testing::writeFile(page, renderHtmlReport(load({testdata("k3d_linkerd_pod_create.log"),
                                                  testdata("kube_denials.log")}),
                                            "audit"));
  const auto dom = test::runChromium(browser, page, dir.path(), {"--dump-dom"});
  ASSERT_EQ(dom.status, 0) << dom.err;
  EXPECT_THAT(dom.out, HasSubstr("data-rendered=\"ok\""));
  EXPECT_THAT(dom.out, HasSubstr("<line class=\"message\""));
  EXPECT_THAT(dom.out, HasSubstr("<table class=\"decisions\">"));
  EXPECT_THAT(dom.err, Not(HasSubstr("Uncaught")));
}

}  // namespace
}  // namespace harness::sim
