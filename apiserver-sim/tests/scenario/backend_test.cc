// The runner's backend interface (backend.h) with a scripted backend, the Prometheus counter
// helpers, and the comparison of two backends (compare.h) with known differences.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/sim/backend.h"
#include "harness/sim/compare.h"
#include "harness/sim/report.h"
#include "harness/sim/scenario.h"
#include "harness/sim/scenario_runner.h"
#include "harness/sim/store.h"

namespace harness::sim {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A backend that answers every step with `code` and records what it was asked.
class ScriptedBackend : public Backend {
 public:
  std::optional<std::string> scenario_reason;
  std::string unplayable_step;  // a step of this name cannot be played
  int code = 201;
  std::set<std::string> unobservable;
  std::vector<std::string> played;
  bool stopped = false;

  class Session : public BackendSession {
   public:
    explicit Session(ScriptedBackend& backend) : backend_(backend) {}
    core::Result<StepOutcome> play(const Step& step) override {
      backend_.played.push_back(step.name);
      StepOutcome outcome;
      outcome.admission.code = backend_.code;
      outcome.admission.allowed = backend_.code / 100 == 2;
      outcome.admission.reinvoked = false;
      outcome.unobservable = backend_.unobservable;
      return outcome;
    }
    std::string explain(const Step&, const StepOutcome&) override { return "scripted"; }
    void stop() override { backend_.stopped = true; }

   private:
    ScriptedBackend& backend_;
  };

  [[nodiscard]] std::string_view name() const override { return "scripted"; }
  [[nodiscard]] std::optional<std::string> unsupported(const Scenario&) const override {
    return scenario_reason;
  }
  [[nodiscard]] std::optional<std::string> unsupportedStep(const Step& step) const override {
    if (step.name == unplayable_step) return std::string("cannot play ") + step.name;
    return std::nullopt;
  }
  core::Result<std::unique_ptr<BackendSession>> start(const Scenario&,
                                                      const BackendOptions&) override {
    return std::unique_ptr<BackendSession>(new Session(*this));
  }
};

Scenario threeSteps() {
  Scenario scenario;
  scenario.name = "three";
  for (const char* name : {"one", "two", "three"}) {
    Step step;
    step.name = name;
    step.expect.code = 201;
    step.expect.reinvoked = true;
    scenario.steps.push_back(step);
  }
  return scenario;
}

TEST(BackendRunner, PlaysEveryStepOnTheGivenBackendAndStopsIt) {
  ScriptedBackend backend;
  backend.unobservable = {"reinvoked"};
  RunOptions options;
  options.backend = &backend;
  const auto result = runScenario(threeSteps(), options);
  EXPECT_EQ(result.backend, "scripted");
  EXPECT_THAT(backend.played, ::testing::ElementsAre("one", "two", "three"));
  EXPECT_TRUE(backend.stopped);
  ASSERT_EQ(result.steps.size(), 3u);
  // reinvoked: true is not observable there: not checked, and said so.
  for (const auto& step : result.steps) {
    EXPECT_EQ(step.status, StepStatus::kPassed);
    EXPECT_THAT(step.unchecked, ::testing::ElementsAre("reinvoked"));
  }
  RunReport report;
  report.scenarios.push_back(result);
  EXPECT_THAT(renderTable(report), HasSubstr("not observable on scripted, not checked: reinvoked"));
}

TEST(BackendRunner, ObservableExpectationsAreChecked) {
  ScriptedBackend backend;
  backend.code = 403;
  RunOptions options;
  options.backend = &backend;
  const auto result = runScenario(threeSteps(), options);
  ASSERT_EQ(result.steps.size(), 3u);
  EXPECT_EQ(result.steps[0].status, StepStatus::kFailed);
  // reinvoked was observable (false), so it fails too.
  ASSERT_EQ(result.steps[0].failures.size(), 2u);
  EXPECT_EQ(result.steps[0].failures[0].field, "code");
  EXPECT_EQ(result.steps[0].failures[1].field, "reinvoked");
}

TEST(BackendRunner, AnUnsupportedScenarioIsSkippedWithItsReasonNeverPassed) {
  ScriptedBackend backend;
  backend.scenario_reason = "no such feature here";
  RunOptions options;
  options.backend = &backend;
  const auto result = runScenario(threeSteps(), options);
  EXPECT_TRUE(backend.played.empty());
  ASSERT_TRUE(result.skip_reason);
  EXPECT_EQ(*result.skip_reason, "no such feature here");
  for (const auto& step : result.steps) {
    EXPECT_EQ(step.status, StepStatus::kSkipped);
    EXPECT_EQ(step.skip_reason, "no such feature here");
  }
  RunReport report;
  report.scenarios.push_back(result);
  EXPECT_THAT(renderTable(report), HasSubstr("not played on scripted: no such feature here"));
  EXPECT_THAT(renderTable(report), HasSubstr("1 skipped"));
  const json document = reportJson(report);
  EXPECT_EQ(document["scenarios"][0]["result"], "skipped");
  EXPECT_EQ(document["summary"]["skipped"], 1);
  EXPECT_THAT(renderJunit(report), HasSubstr("not played on scripted: no such feature here"));
}

TEST(BackendRunner, AnUnplayableStepSkipsItAndTheStepsThatDependOnIt) {
  ScriptedBackend backend;
  backend.unplayable_step = "two";
  backend.unobservable = {"reinvoked"};
  RunOptions options;
  options.backend = &backend;
  const auto result = runScenario(threeSteps(), options);
  EXPECT_THAT(backend.played, ::testing::ElementsAre("one"));
  ASSERT_EQ(result.steps.size(), 3u);
  EXPECT_EQ(result.steps[0].status, StepStatus::kPassed);
  EXPECT_EQ(result.steps[1].status, StepStatus::kSkipped);
  EXPECT_EQ(result.steps[1].skip_reason, "cannot play two");
  EXPECT_EQ(result.steps[2].status, StepStatus::kSkipped);
  EXPECT_EQ(result.steps[2].skip_reason, "cannot play two");
}

TEST(CounterSamples, ParsesCountersOnlyWithLabelsAndEscapes) {
  const std::string text =
      "# HELP apiserver_admission_webhook_request_total x\n"
      "# TYPE apiserver_admission_webhook_request_total counter\n"
      "apiserver_admission_webhook_request_total{code=\"200\",name=\"a.b.c\",operation=\"CREATE\","
      "rejected=\"false\",type=\"admit\"} 3\n"
      "apiserver_admission_webhook_request_total{code=\"500\",name=\"q\\\"x\",operation=\"CREATE\","
      "rejected=\"true\",type=\"admit\"} 1 1700000000\n"
      "# TYPE apiserver_admission_webhook_admission_duration_seconds histogram\n"
      "apiserver_admission_webhook_admission_duration_seconds_count{name=\"a.b.c\"} 3\n"
      "unrelated_total 7\n";
  const auto samples = parseCounterSamples(text, "apiserver_admission_webhook_");
  ASSERT_EQ(samples.size(), 2u);
  EXPECT_EQ(samples[1].labels.at("name"), "q\"x");
  EXPECT_EQ(sumMatching(samples, "apiserver_admission_webhook_request_total", {{"type", "admit"}}),
            4);
  auto after = samples;
  after[0].value = 5;
  const auto changes = counterChanges(samples, after);
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes.begin()->first,
            "apiserver_admission_webhook_request_total{code=\"200\",name=\"a.b.c\","
            "operation=\"CREATE\",rejected=\"false\",type=\"admit\"}");
  EXPECT_EQ(changes.begin()->second, 2);
}

StepResult stepWith(int code, json object, std::map<std::string, double> metrics = {}) {
  StepResult step;
  step.name = "create";
  step.status = StepStatus::kPassed;
  AdmissionResult admission;
  admission.code = code;
  admission.allowed = code / 100 == 2;
  admission.object = std::move(object);
  step.admission = admission;
  step.webhook_metric_changes = std::move(metrics);
  return step;
}

RunReport runOf(const std::string& backend, StepResult step) {
  ScenarioResult scenario;
  scenario.name = "s";
  scenario.file = "s.yaml";
  scenario.backend = backend;
  scenario.steps.push_back(std::move(step));
  RunReport report;
  report.scenarios.push_back(std::move(scenario));
  return report;
}

TEST(Compare, IdenticalStepsAreIdentical) {
  const json pod = {{"metadata", {{"name", "p"}, {"uid", "1"}}}};
  json other_pod = pod;
  other_pod["metadata"]["uid"] = "2";  // server-set: not a difference
  const auto report =
      compareRuns(runOf("simulator", stepWith(201, pod)), runOf("kube", stepWith(201, other_pod)), {});
  EXPECT_EQ(report.counts().identical, 1u);
  EXPECT_EQ(report.exitCode(), 0);
}

// Validating webhooks run in parallel: when two reject a request, the real server reports
// whichever answered first. Which one each backend named is not a difference; the set of
// webhooks that rejected, and each one's outcome, still are.
TEST(Compare, SeveralValidatingRejectionsRaceForTheStatus) {
  auto rejected = [](const std::string& named, CallOutcome second) {
    StepResult step = stepWith(500, nullptr);
    core::Status status;
    status.code = 500;
    status.reason = "InternalError";
    status.message = "Internal error occurred: failed calling webhook \"" + named + "\": broken";
    step.admission->status = status;
    for (const auto& [webhook, outcome] :
         {std::pair<std::string, CallOutcome>{"w2", CallOutcome::kCallingError},
          std::pair<std::string, CallOutcome>{"w3", second}}) {
      CallRecord call;
      call.kind = core::WebhookKind::kValidating;
      call.webhook = webhook;
      call.called = true;
      call.outcome = outcome;
      step.admission->calls.push_back(call);
    }
    return step;
  };
  const auto raced = compareRuns(runOf("simulator", rejected("w2", CallOutcome::kCallingError)),
                                 runOf("kube", rejected("w3", CallOutcome::kCallingError)), {});
  EXPECT_EQ(raced.counts().identical, 1u);
  // One rejection only: the Status is deterministic and compared.
  const auto alone = compareRuns(runOf("simulator", rejected("w2", CallOutcome::kAllowed)),
                                 runOf("kube", rejected("w3", CallOutcome::kAllowed)), {});
  EXPECT_EQ(alone.counts().different, 1u);
  // A denial where the other backend saw a calling error is a difference.
  const auto outcome = compareRuns(runOf("simulator", rejected("w2", CallOutcome::kDenied)),
                                   runOf("kube", rejected("w2", CallOutcome::kCallingError)), {});
  EXPECT_EQ(outcome.counts().different, 1u);
}

// A Pod's graceful DELETE is admitted once per pass, and kube-apiserver makes two or three
// passes depending on its watch cache: the same webhooks called two and three times are the
// same calls (their counts stay in metrics and stubs); another webhook or outcome is not.
TEST(Compare, ADeleteAdmittedTwiceOrThriceCallsTheSameWebhooks) {
  auto deleted = [](int passes, CallOutcome outcome) {
    StepResult step = stepWith(200, json::object());
    for (int pass = 0; pass < passes; ++pass) {
      for (const auto kind : {core::WebhookKind::kMutating, core::WebhookKind::kValidating}) {
        CallRecord call;
        call.kind = kind;
        call.webhook = kind == core::WebhookKind::kMutating ? "m" : "v";
        call.called = true;
        call.outcome = outcome;
        step.admission->calls.push_back(call);
      }
    }
    return step;
  };
  const auto passes = compareRuns(runOf("simulator", deleted(3, CallOutcome::kAllowed)),
                                  runOf("kube", deleted(2, CallOutcome::kAllowed)), {});
  EXPECT_EQ(passes.counts().identical, 1u);
  const auto outcome = compareRuns(runOf("simulator", deleted(3, CallOutcome::kAllowed)),
                                   runOf("kube", deleted(2, CallOutcome::kDenied)), {});
  EXPECT_EQ(outcome.counts().different, 1u);
}

// Each backend names the ServiceAccount volume afresh (kube-api-access-<5 random>); a patch
// annotation that names it is the same patch (seen with Istio's injector, which moves volumes).
TEST(Compare, GeneratedVolumeNamesInAnnotationsAreNotDifferences) {
  auto withPatch = [](const std::string& volume) {
    StepResult step = stepWith(201, json::object());
    EXPECT_TRUE(step.admission->annotations.add(
        "patch.webhook.admission.k8s.io/round_0_index_0",
        R"({"patch":[{"op":"add","path":"/spec/volumes/1","value":{"name":")" + volume + R"("}}]})",
        audit::Level::kRequest));
    return step;
  };
  const auto same = compareRuns(runOf("simulator", withPatch("kube-api-access-rzgt9")),
                                runOf("kube", withPatch("kube-api-access-wjww7")), {});
  EXPECT_EQ(same.counts().identical, 1u);
  const auto other = compareRuns(runOf("simulator", withPatch("kube-api-access-rzgt9")),
                                 runOf("kube", withPatch("istio-envoy")), {});
  EXPECT_EQ(other.counts().identical, 0u);
}

// The store, the comparison and the expectations share one utilrand alphabet (store.h): every
// suffix the store generates is recognised, and a name that only looks generated is not.
TEST(Compare, NamesTheStoreGeneratesFromGenerateNameAreNotDifferences) {
  const std::regex suffix(randSuffixPattern());
  ObjectStore store;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    store.seed(seed);
    const std::string generated = store.randomSuffix();
    ASSERT_TRUE(std::regex_match(generated, suffix)) << generated;
  }
  for (const std::string not_generated : {"abcde", "x7k2", "x7k2q9", "X7K2Q", "x7k2-", "x1k2q"}) {
    EXPECT_FALSE(std::regex_match(not_generated, suffix)) << not_generated;
  }

  auto podNamed = [](const std::string& name) {
    return json{{"metadata", {{"generateName", "web-"}, {"name", name}}}};
  };
  store.seed(1);
  const std::string first = "web-" + store.randomSuffix();
  store.seed(2);
  const std::string second = "web-" + store.randomSuffix();
  ASSERT_NE(first, second);
  const auto same = compareRuns(runOf("simulator", stepWith(201, podNamed(first))),
                                runOf("kube", stepWith(201, podNamed(second))), {});
  EXPECT_EQ(same.counts().identical, 1u);
  // 'a' and '1' are not in utilrand's alphabet: a name Kubernetes cannot have generated.
  const auto other = compareRuns(runOf("simulator", stepWith(201, podNamed(first))),
                                 runOf("kube", stepWith(201, podNamed("web-a1bcd"))), {});
  EXPECT_EQ(other.counts().identical, 0u);
}

TEST(Compare, ADifferenceIsReportedFieldByFieldWithADiff) {
  const json a = {{"metadata", {{"name", "p"}, {"labels", {{"x", "1"}}}}}};
  const json b = {{"metadata", {{"name", "p"}, {"labels", {{"x", "2"}}}}}, {"status", {{"phase", "Pending"}}}};
  const auto report = compareRuns(
      runOf("simulator", stepWith(201, a, {{"m{name=\"w\"}", 1}})),
      runOf("kube", stepWith(201, b, {{"m{name=\"w\"}", 2}})), {});
  ASSERT_EQ(report.scenarios.size(), 1u);
  const auto& step = report.scenarios[0].steps[0];
  EXPECT_EQ(step.result, StepComparison::Result::kDifferent);
  std::vector<std::string> fields;
  fields.reserve(step.differences.size());
  for (const auto& difference : step.differences) fields.push_back(difference.field);
  EXPECT_THAT(fields, ::testing::ElementsAre("object:/metadata/labels/x", "object:/status",
                                             "metrics:m{name=\"w\"}"));
  EXPECT_THAT(step.differences[0].diff, HasSubstr("- \"1\""));
  EXPECT_THAT(step.differences[0].diff, HasSubstr("+ \"2\""));
  EXPECT_EQ(report.exitCode(), 1);
  const std::string table = renderComparisonTable(report);
  EXPECT_THAT(table, HasSubstr("DIFF   s/create"));
  // Repeated after the counts, with the fields, for logs read from their end.
  EXPECT_THAT(table.substr(table.find("stale known differences")),
              HasSubstr("unlisted: s/create (object:/metadata/labels/x, object:/status, "
                        "metrics:m{name=\"w\"})"));
  EXPECT_EQ(comparisonJson(report)["summary"]["unlistedDifferences"], 1);
  EXPECT_THAT(renderComparisonJunit(report), HasSubstr("type=\"Divergence\""));
}

// The whole JUnit document, byte for byte: every kind of test case and the counters.
TEST(Compare, JunitDocumentIsExactlyThis) {
  KnownDifference known;
  known.reason = "the real server sets it";
  const KnownDifference stale{
      .scenario = "s<1>", .step = "create", .field = "code", .location = "known.yaml:3"};
  ComparisonReport report;
  report.other_backend = "kube \"real\"";
  ScenarioComparison broken;
  broken.name = "broken & bent";
  broken.error = "endpoint <x> did not start";
  ScenarioComparison scenario;
  scenario.name = "s";
  StepComparison different;
  different.name = "create";
  different.result = StepComparison::Result::kDifferent;
  different.differences.push_back({"code", 201, 403, "- 201\n+ 403\n", nullptr});
  StepComparison listed;
  listed.name = "update";
  listed.result = StepComparison::Result::kKnown;
  listed.differences.push_back({"object:/status", nullptr, "x", "+ x\n", &known});
  StepComparison skipped;
  skipped.name = "delete";
  skipped.result = StepComparison::Result::kSkipped;
  skipped.note = "not \"played\"";
  StepComparison identical;
  identical.name = "get";
  scenario.steps = {different, listed, skipped, identical};
  report.scenarios = {broken, scenario};
  report.stale.push_back(&stale);
  EXPECT_EQ(renderComparisonJunit(report),
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<testsuites name=\"apiserver-sim compare\" tests=\"6\" failures=\"2\" errors=\"1\" skipped=\"1\">\n"
      "  <testsuite name=\"broken &amp; bent\" tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\">\n"
      "    <testcase name=\"setup\" classname=\"broken &amp; bent\">\n"
      "      <error message=\"the scenario could not be run\" type=\"HarnessError\">endpoint &lt;x&gt; did not start</error>\n"
      "    </testcase>\n"
      "  </testsuite>\n"
      "  <testsuite name=\"s\" tests=\"4\" failures=\"1\" errors=\"0\" skipped=\"1\">\n"
      "    <testcase name=\"create\" classname=\"s\">\n"
      "      <failure message=\"the simulator and kube &quot;real&quot; differ\" type=\"Divergence\">code\n"
      "  - 201\n"
      "  + 403\n"
      "</failure>\n"
      "    </testcase>\n"
      "    <testcase name=\"update\" classname=\"s\">\n"
      "      <system-out>object:/status (known: the real server sets it)\n"
      "</system-out>\n"
      "    </testcase>\n"
      "    <testcase name=\"delete\" classname=\"s\">\n"
      "      <skipped message=\"not &quot;played&quot;\"/>\n"
      "    </testcase>\n"
      "    <testcase name=\"get\" classname=\"s\"/>\n"
      "  </testsuite>\n"
      "  <testsuite name=\"known-differences\" tests=\"1\" failures=\"1\" errors=\"0\" skipped=\"0\">\n"
      "    <testcase name=\"known.yaml:3\" classname=\"known-differences\">\n"
      "      <failure message=\"listed as a known difference, no longer occurs\" type=\"StaleKnownDifference\">s&lt;1&gt;/create code</failure>\n"
      "    </testcase>\n"
      "  </testsuite>\n"
      "</testsuites>\n");
}

TEST(Compare, KnownDifferencesAreListedAndStaleOnesReported) {
  const fs::path file = fs::path(::testing::TempDir()) / "known-differences.yaml";
  {
    std::ofstream out(file);
    out << "differences:\n"
           "  - {scenario: s, step: create, field: \"object:/status/*\", reason: the real Pod "
           "has a status, upstream: pkg/registry/core/pod/strategy.go}\n"
           "  - {scenario: s, step: \"*\", field: code, reason: stale, upstream: nowhere}\n"
           "  - {scenario: other, step: \"*\", field: code, reason: not compared, upstream: x}\n"
           "  - {scenario: s, step: \"*\", field: message, reason: a race, upstream: z1, "
           "intermittent: true}\n";
  }
  auto known = loadKnownDifferences(file);
  ASSERT_TRUE(known.ok()) << known.error().message;
  const json a = {{"metadata", {{"name", "p"}}}};
  const json b = {{"metadata", {{"name", "p"}}}, {"status", {{"phase", "Pending"}}}};
  const auto report =
      compareRuns(runOf("simulator", stepWith(201, a)), runOf("kube", stepWith(201, b)), *known);
  const auto& step = report.scenarios[0].steps[0];
  EXPECT_EQ(step.result, StepComparison::Result::kKnown);
  ASSERT_EQ(step.differences.size(), 1u);
  ASSERT_NE(step.differences[0].known, nullptr);
  EXPECT_EQ(step.differences[0].known->reason, "the real Pod has a status");
  // The code entry never matched: stale (the one for a scenario not compared is not, nor the
  // intermittent one).
  ASSERT_EQ(report.stale.size(), 1u);
  EXPECT_EQ(report.stale[0]->reason, "stale");
  EXPECT_EQ(report.exitCode(), 1);
  EXPECT_THAT(renderComparisonTable(report), HasSubstr("no longer occurs"));
}

TEST(Compare, BadKnownDifferencesFilesNameTheEntryAndField) {
  const fs::path file = fs::path(::testing::TempDir()) / "bad-known-differences.yaml";
  {
    std::ofstream out(file);
    out << "differences:\n  - {scenario: s, step: x, field: code, reason: r}\n";
  }
  auto known = loadKnownDifferences(file);
  ASSERT_FALSE(known.ok());
  EXPECT_THAT(known.error().message, HasSubstr("differences[0].upstream: required"));
  {
    std::ofstream out(file);
    out << "differences:\n  - {scenario: s, step: x, field: code, reason: r, upstream: u, "
           "typo: 1}\n";
  }
  known = loadKnownDifferences(file);
  ASSERT_FALSE(known.ok());
  EXPECT_THAT(known.error().message, HasSubstr("differences[0].typo: unknown field"));
  EXPECT_FALSE(loadKnownDifferences(fs::path(::testing::TempDir()) / "missing.yaml").ok());
}

TEST(Compare, StepsNotPlayedOnTheOtherBackendAreSkippedWithTheReason) {
  StepResult skipped;
  skipped.name = "create";
  skipped.status = StepStatus::kSkipped;
  skipped.skip_reason = "request.oldObject: cannot be sent";
  const auto report = compareRuns(runOf("simulator", stepWith(201, json::object())),
                                  runOf("kube", skipped), {});
  EXPECT_EQ(report.counts().skipped, 1u);
  EXPECT_EQ(report.scenarios[0].steps[0].note, "request.oldObject: cannot be sent");
  EXPECT_EQ(report.exitCode(), 0);
}

}  // namespace
}  // namespace harness::sim
