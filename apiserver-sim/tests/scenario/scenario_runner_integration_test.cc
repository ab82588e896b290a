// End-to-end scenario runs over real HTTPS on 127.0.0.1 with stub webhook endpoints, and the
// apiserver-sim executable's outputs and exit codes.

#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <thread>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/sim/report.h"
#include "harness/sim/scenario.h"
#include "harness/sim/scenario_runner.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

fs::path examples() { return testing::sourceDir() / "scenarios/examples"; }
fs::path simulator() { return testing::binaryDir() / "apiserver-sim/apiserver-sim"; }

std::string failuresOf(const ScenarioResult& result) {
  std::string out;
  if (result.error) out += "error: " + *result.error + "\n";
  for (const auto& step : result.steps) {
    for (const auto& failure : step.failures) out += step.name + ": " + formatFailure(failure);
  }
  return out;
}

ScenarioResult runFile(const fs::path& path, const RunOptions& options = {}) {
  auto scenario = loadScenario(path);
  EXPECT_TRUE(scenario.ok()) << scenario.error().message;
  if (!scenario.ok()) return {};
  return runScenario(*scenario, options);
}

class ExampleScenarioTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ExampleScenarioTest, Passes) {
  const ScenarioResult result = runFile(examples() / GetParam());
  EXPECT_TRUE(result.passed()) << failuresOf(result);
  for (const auto& step : result.steps) EXPECT_EQ(step.status, StepStatus::kPassed) << step.name;
}

INSTANTIATE_TEST_SUITE_P(Examples, ExampleScenarioTest,
                         ::testing::Values("allow.yaml", "deny.yaml", "patch.yaml",
                                           "fail-open.yaml"),
                         [](const auto& info) {
                           std::string name = info.param.substr(0, info.param.find('.'));
                           for (char& c : name) {
                             if (c == '-') c = '_';
                           }
                           return name;
                         });

class ScenarioRunnerTest : public ::testing::Test {
 protected:
  fs::path write(const std::string& name, const std::string& text) {
    fs::path path = dir_ / name;
    testing::writeFile(path, text);
    return path;
  }
  testing::ScratchDir dir_{"scenario-runner"};
};

// A stub that answers a sequence (allow, then deny) and a pod created twice under two names.
constexpr const char* kSequenceScenario = R"(apiVersion: apiserver-sim.harness.dev/v1alpha1
kind: Scenario
metadata: {name: sequence}
spec:
  timeScale: 0.01
  plugins: []
  objects:
    - {apiVersion: v1, kind: Namespace, metadata: {name: demo}}
  endpoints:
    - name: seq
      stub:
        responses:
          - sequence:
              - {}
              - {allowed: false, status: {code: 403, message: second}}
      service: {namespace: w, name: seq}
  webhookConfigurations:
    - apiVersion: admissionregistration.k8s.io/v1
      kind: ValidatingWebhookConfiguration
      metadata: {name: seq}
      webhooks:
        - name: seq.example.com
          clientConfig: {service: {namespace: w, name: seq}}
          rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
          sideEffects: None
          admissionReviewVersions: [v1]
  steps:
    - name: first
      request:
        object: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: demo}}
      expect:
        code: 201
        stub: {seq: {calls: 1}}
    - name: second
      request:
        object: {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: demo}}
      expect:
        code: 201
    - name: third
      request:
        object: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: demo}}
      expect:
        code: 403
)";

TEST_F(ScenarioRunnerTest, FailingExpectationIsReportedWithItsDiffAndLaterStepsStillRun) {
  const ScenarioResult result = runFile(write("s.yaml", kSequenceScenario));
  ASSERT_FALSE(result.error) << *result.error;
  ASSERT_EQ(result.steps.size(), 3u);
  EXPECT_EQ(result.steps[0].status, StepStatus::kPassed) << failuresOf(result);
  EXPECT_EQ(result.steps[1].status, StepStatus::kFailed);
  ASSERT_EQ(result.steps[1].failures.size(), 1u);
  EXPECT_EQ(result.steps[1].failures[0].field, "code");
  EXPECT_THAT(result.steps[1].failures[0].message,
              HasSubstr("expected 201, got 403: admission webhook \"seq.example.com\" denied the "
                        "request: second"));
  // The stub's sequence goes on across steps: its last behaviour repeats.
  EXPECT_EQ(result.steps[2].status, StepStatus::kPassed) << failuresOf(result);
  EXPECT_FALSE(result.passed());
}

TEST_F(ScenarioRunnerTest, StopOnFailureLeavesTheRestNotRun) {
  RunOptions options;
  options.stop_on_failure = true;
  const ScenarioResult result = runFile(write("s.yaml", kSequenceScenario), options);
  ASSERT_EQ(result.steps.size(), 3u);
  EXPECT_EQ(result.steps[1].status, StepStatus::kFailed);
  EXPECT_EQ(result.steps[2].status, StepStatus::kNotRun);
}

TEST_F(ScenarioRunnerTest, UnselectedEarlierStepsRunForTheirEffect) {
  RunOptions options;
  options.step_filter = "^third$";
  const ScenarioResult result = runFile(write("s.yaml", kSequenceScenario), options);
  ASSERT_EQ(result.steps.size(), 3u);
  EXPECT_EQ(result.steps[0].status, StepStatus::kSkipped);
  EXPECT_EQ(result.steps[1].status, StepStatus::kSkipped);  // its failure is not checked
  EXPECT_EQ(result.steps[2].status, StepStatus::kPassed) << failuresOf(result);
  EXPECT_TRUE(result.passed());
}

// Outcomes never depend on the time scale (scenarios/FORMAT.md "Time"): the timeout scenarios pass
// at a scale where the old scaled deadlines (10 s -> 10 us of real time) were shorter than any TLS
// handshake, and every call to a stub is charged exactly its declared delay.
TEST_F(ScenarioRunnerTest, TimeoutScenariosDoNotDependOnTheTimeScale) {
  RunOptions options;
  options.time_scale = 1e-6;
  for (const char* file : {"timeouts/shared-deadline.yaml", "timeouts/rounding.yaml",
                           "failure-policy/transport-errors.yaml",
                           "failure-policy/retry-after.yaml"}) {
    const ScenarioResult result =
        runFile(testing::sourceDir() / "scenarios" / file, options);
    EXPECT_TRUE(result.passed()) << file << "\n" << failuresOf(result);
    if (std::string(file) != "timeouts/shared-deadline.yaml") continue;
    // Its "work" stub takes 1 s per answer, the "vallow" stub nothing.
    for (const auto& step : result.steps) {
      ASSERT_TRUE(step.admission.has_value()) << step.name;
      for (const auto& call : step.admission->calls) {
        const bool work = call.url.find("https://work.example.com/") == 0;
        EXPECT_EQ(call.latency, work ? std::chrono::nanoseconds(std::chrono::seconds(1))
                                     : std::chrono::nanoseconds(0))
            << step.name << ": " << call.webhook;
      }
    }
  }
}

TEST_F(ScenarioRunnerTest, StepsAfterTheLastSelectedAreNotRun) {
  RunOptions options;
  options.step_filter = "first";
  const ScenarioResult result = runFile(write("s.yaml", kSequenceScenario), options);
  ASSERT_EQ(result.steps.size(), 3u);
  EXPECT_EQ(result.steps[0].status, StepStatus::kPassed);
  EXPECT_EQ(result.steps[1].status, StepStatus::kNotRun);
  EXPECT_EQ(result.steps[2].status, StepStatus::kNotRun);
}

TEST_F(ScenarioRunnerTest, ExplainDescribesEveryStep) {
  RunOptions options;
  options.explain = true;
  const ScenarioResult result = runFile(examples() / "patch.yaml", options);
  ASSERT_FALSE(result.steps.empty());
  const std::string& text = result.steps[0].explanation;
  EXPECT_THAT(text, HasSubstr("mutating webhook labeler.example.com (configuration labeler, "
                              "round 0 index 0)"));
  EXPECT_THAT(text, HasSubstr("  match: matched"));
  EXPECT_THAT(text, HasSubstr("call: POST https://labeler.example.com"));
  EXPECT_THAT(text, HasSubstr("add /metadata/labels/injected"));
  EXPECT_THAT(text, HasSubstr("+ \"true\""));
}

// explain --step RE: only the steps it selects are explained; every step still runs.
TEST_F(ScenarioRunnerTest, ExplainStepFilterExplainsOnlyTheStepsItSelects) {
  RunOptions options;
  options.explain = true;
  options.explain_step_filter = "^sec";
  const ScenarioResult result = runFile(write("s.yaml", kSequenceScenario), options);
  ASSERT_EQ(result.steps.size(), 3u);
  EXPECT_TRUE(result.steps[0].explanation.empty());
  EXPECT_TRUE(result.steps[0].explanation_json.is_null());
  EXPECT_THAT(result.steps[1].explanation, HasSubstr("validating webhook seq.example.com"));
  EXPECT_TRUE(result.steps[1].explanation_json.is_object());
  EXPECT_TRUE(result.steps[2].explanation.empty());
  EXPECT_EQ(result.steps[2].status, StepStatus::kPassed) << failuresOf(result);
}

TEST_F(ScenarioRunnerTest, AuditEventsReachTheSink) {
  fs::path path = write("audit.yaml", R"(apiVersion: apiserver-sim.harness.dev/v1alpha1
kind: Scenario
metadata: {name: audit}
spec:
  plugins: []
  auditPolicy:
    apiVersion: audit.k8s.io/v1
    kind: Policy
    rules: [{level: Metadata}]
  objects:
    - {apiVersion: v1, kind: Namespace, metadata: {name: demo}}
  steps:
    - request:
        object: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: demo}}
      expect:
        code: 201
        auditEvent: {level: Metadata, requestObject: false}
)");
  std::vector<audit::Event> events;
  RunOptions options;
  options.audit_sink = [&](const audit::Event& event) { events.push_back(event); };
  const ScenarioResult result = runFile(path, options);
  EXPECT_TRUE(result.passed()) << failuresOf(result);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().level, audit::Level::kMetadata);
}

TEST_F(ScenarioRunnerTest, AnEndpointThatCannotStartIsAHarnessError) {
  fs::path path = write("injector.yaml", R"(apiVersion: apiserver-sim.harness.dev/v1alpha1
kind: Scenario
metadata: {name: no-injector}
spec:
  endpoints:
    - name: injector
      injector: {profile: linkerd}
      service: {namespace: linkerd, name: linkerd-proxy-injector}
  steps:
    - request:
        object: {apiVersion: v1, kind: Namespace, metadata: {name: demo}}
)");
  RunOptions options;
  options.injector_binary = dir_ / "no-such-injector";
  const ScenarioResult result = runFile(path, options);
  ASSERT_TRUE(result.error.has_value());
  EXPECT_THAT(*result.error, HasSubstr("endpoint \"injector\""));
  ASSERT_EQ(result.steps.size(), 1u);
  EXPECT_EQ(result.steps[0].status, StepStatus::kNotRun);
}

TEST_F(ScenarioRunnerTest, WorkDirKeepsTheEndpointCertificates) {
  RunOptions options;
  options.work_dir = dir_ / "work";
  fs::create_directories(options.work_dir);
  const ScenarioResult result = runFile(examples() / "allow.yaml", options);
  EXPECT_TRUE(result.passed()) << failuresOf(result);
  EXPECT_TRUE(fs::exists(options.work_dir / "example-allow"));
  EXPECT_FALSE(fs::is_empty(options.work_dir / "example-allow"));
}

TEST_F(ScenarioRunnerTest, RunScenarioFilesCollectsLoadErrorsAndFiltersByName) {
  write("bad.yaml", "apiVersion: apiserver-sim.harness.dev/v1alpha1\nkind: Scenario\nspec: 1\n");
  write("s.yaml", kSequenceScenario);
  auto report = runScenarioFiles({dir_.path()}, "^nothing$", {});
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->scenarios.empty());
  ASSERT_EQ(report->load_errors.size(), 1u);
  EXPECT_THAT(report->load_errors[0].message, HasSubstr("metadata: required field is missing"));
  EXPECT_EQ(report->exitCode(), 2);
  EXPECT_FALSE(runScenarioFiles({dir_.path()}, "(", {}).ok());
}

// --- the executable ---

struct CommandResult {
  int status = -1;
  std::string out, err;
};

CommandResult runSimulator(const std::string& arguments, const fs::path& dir) {
  const fs::path out = dir / "stdout.txt";
  const fs::path err = dir / "stderr.txt";
  const int raw = std::system((simulator().string() + " " + arguments + " >" + out.string() +
                               " 2>" + err.string())
                                  .c_str());
  CommandResult result;
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  result.out = testing::readFile(out);
  result.err = testing::readFile(err);
  return result;
}

TEST_F(ScenarioRunnerTest, CommandExitsZeroWhenAllExamplesPass) {
  auto result = runSimulator("run " + examples().string(), dir_.path());
  EXPECT_EQ(result.status, 0) << result.out << result.err;
  EXPECT_THAT(result.out, HasSubstr("4 scenarios: 4 passed, 0 failed, 0 errors"));
  EXPECT_THAT(result.err, HasSubstr("PASS    example-deny/create the pod"));
}

TEST_F(ScenarioRunnerTest, CommandExitsOneOnFailuresWithOneJsonDocument) {
  write("s.yaml", kSequenceScenario);
  auto result = runSimulator("run -o json " + (dir_ / "s.yaml").string(), dir_.path());
  EXPECT_EQ(result.status, 1) << result.err;
  const json report = json::parse(result.out);  // exactly one document, or this throws
  EXPECT_EQ(report["summary"]["failed"], 1);
  EXPECT_EQ(report["scenarios"][0]["steps"][1]["failures"][0]["field"], "code");
}

TEST_F(ScenarioRunnerTest, CommandWritesJunit) {
  write("s.yaml", kSequenceScenario);
  auto result = runSimulator("run -o junit " + (dir_ / "s.yaml").string(), dir_.path());
  EXPECT_EQ(result.status, 1) << result.err;
  EXPECT_THAT(result.out, ::testing::StartsWith("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                                "<testsuites name=\"apiserver-sim\" tests=\"3\" "
                                                "failures=\"1\""));
}

TEST_F(ScenarioRunnerTest, CommandExitsTwoOnBadInput) {
  write("bad.yaml", "apiVersion: apiserver-sim.harness.dev/v1alpha1\nkind: Scenario\nspec: 1\n");
  auto result = runSimulator("run " + (dir_ / "bad.yaml").string(), dir_.path());
  EXPECT_EQ(result.status, 2);
  EXPECT_THAT(result.err, HasSubstr("bad.yaml:3:7: spec: expected mapping, got integer"));
  EXPECT_EQ(runSimulator("run " + (dir_ / "missing").string(), dir_.path()).status, 2);
  EXPECT_EQ(runSimulator("run --run '(' " + examples().string(), dir_.path()).status, 2);
  EXPECT_EQ(runSimulator("frobnicate", dir_.path()).status, 2);
}

TEST_F(ScenarioRunnerTest, ExplainCommandPrintsTheExplanation) {
  auto result = runSimulator("explain " + (examples() / "fail-open.yaml").string(), dir_.path());
  EXPECT_EQ(result.status, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("calling error, failurePolicy Ignore -> ignored (fail open)"));
  EXPECT_THAT(result.out, HasSubstr("skipped by rules"));
}

TEST_F(ScenarioRunnerTest, CommandAppendsAuditLogLines) {
  const fs::path log = dir_ / "audit.log";
  fs::path path = write("audit.yaml", R"(apiVersion: apiserver-sim.harness.dev/v1alpha1
kind: Scenario
metadata: {name: audit}
spec:
  plugins: []
  auditPolicy: {apiVersion: audit.k8s.io/v1, kind: Policy, rules: [{level: Metadata}]}
  steps:
    - request:
        object: {apiVersion: v1, kind: Namespace, metadata: {name: demo}}
)");
  auto result = runSimulator("run --audit-log " + log.string() + " " + path.string(), dir_.path());
  EXPECT_EQ(result.status, 0) << result.out << result.err;
  std::ifstream in(log);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    const json event = json::parse(line);
    EXPECT_EQ(event["apiVersion"], "audit.k8s.io/v1");
    ++lines;
  }
  EXPECT_GE(lines, 1);
}

TEST_F(ScenarioRunnerTest, ServeWritesAKubeconfigAndStopsOnSigterm) {
  const fs::path kubeconfig = dir_ / "kubeconfig";
  testing::ChildProcess serve({simulator().string(), "serve", (examples() / "allow.yaml").string(),
                               "--kubeconfig-out", kubeconfig.string()},
                              dir_ / "serve.log");
  // The kubeconfig line is printed after the file is written.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline &&
         (!fs::exists(dir_ / "serve.log") ||
          testing::readFile(dir_ / "serve.log").find("kubeconfig: ") == std::string::npos)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ASSERT_TRUE(fs::exists(kubeconfig)) << testing::readFile(dir_ / "serve.log");
  EXPECT_THAT(testing::readFile(kubeconfig), HasSubstr("server: https://127.0.0.1:"));
  EXPECT_EQ(serve.stop(SIGTERM, 10'000), 0) << testing::readFile(dir_ / "serve.log");
  EXPECT_THAT(testing::readFile(dir_ / "serve.log"), HasSubstr("apiserver-sim: serving scenario "
                                                              "example-allow at https://"));
}

}  // namespace
}  // namespace harness::sim

namespace harness::sim {
namespace {

// --audit-log on a scenario without spec.auditPolicy used to write nothing, silently: it now
// records the scenario with the default policy (RequestResponse, RequestReceived omitted) and
// says so.
TEST(DefaultAuditPolicy, AScenarioWithoutAPolicyIsRecordedAndWarned) {
  const fs::path allow = testing::sourceDir() / "scenarios/examples/allow.yaml";
  ASSERT_TRUE(loadScenario(allow).ok());
  ASSERT_FALSE(loadScenario(allow)->audit_policy.has_value());
  std::vector<audit::Event> events;
  std::vector<std::string> warnings;
  RunOptions options;
  options.audit_sink = [&](const audit::Event& event) { events.push_back(event); };
  options.on_warning = [&](const std::string& warning) { warnings.push_back(warning); };
  auto report = runScenarioFiles({allow}, "", options);
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->scenarios.size(), 1u);
  EXPECT_TRUE(report->scenarios[0].passed());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("scenario example-allow has no spec.auditPolicy: the audit "
                                     "log records it with the default policy"));
  ASSERT_FALSE(events.empty());
  for (const auto& event : events) {
    EXPECT_EQ(event.level, audit::Level::kRequestResponse);
    EXPECT_EQ(event.stage, audit::Stage::kResponseComplete);
  }
  EXPECT_TRUE(events.back().annotations.count("mutation.webhook.admission.k8s.io/round_0_index_0"));
  // Without a sink, nothing is said or changed.
  warnings.clear();
  options.audit_sink = nullptr;
  ASSERT_TRUE(runScenarioFiles({allow}, "", options).ok());
  EXPECT_TRUE(warnings.empty());
}

}  // namespace
}  // namespace harness::sim
