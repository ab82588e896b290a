// `run --watch` / `explain --watch`: the folders watched, the inotify watcher, the description of
// what changed between two runs, and the command itself re-running after a file is edited.

#include "harness/sim/watch.h"

#include <poll.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/process/child_process.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

// A scenario in scenarios/ whose request object is in ../objects/ (a referenced folder).
constexpr char kScenario[] = R"(apiVersion: apiserver-sim.harness.dev/v1alpha1
kind: Scenario
metadata:
  name: watch-test
spec:
  timeScale: 0.01
  objects:
    - {apiVersion: v1, kind: Namespace, metadata: {name: demo}}
  endpoints:
    - name: painter
      service: {namespace: webhooks, name: painter}
      stub:
        responses:
          - respond:
              patch: [{op: add, path: /metadata/labels, value: {color: blue}}]
  webhookConfigurations:
    - apiVersion: admissionregistration.k8s.io/v1
      kind: MutatingWebhookConfiguration
      metadata: {name: painter}
      webhooks:
        - name: painter.example.com
          clientConfig: {service: {namespace: webhooks, name: painter}}
          rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
          sideEffects: None
          admissionReviewVersions: [v1]
  steps:
    - name: create
      request: {file: ../objects/cm.yaml}
      expect:
        code: 201
        object: {metadata: {labels: {color: blue}}}
)";

constexpr char kConfigMap[] = R"(apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: demo}
data: {mode: fast}
)";

class WatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(dir_.path() / "scenarios");
    fs::create_directories(dir_.path() / "objects");
    fs::create_directories(dir_.path() / "unrelated");
    testing::writeFile(scenario(), kScenario);
    testing::writeFile(dir_.path() / "objects/cm.yaml", kConfigMap);
  }
  fs::path scenario() const { return dir_.path() / "scenarios/watch.yaml"; }

  testing::ScratchDir dir_{"watch"};
};

TEST_F(WatchTest, WatchesTheScenarioFolderAndTheFoldersOfTheFilesItNames) {
  const auto dirs = watchedDirectories({scenario()});
  const auto canonical = [](const fs::path& p) { return fs::weakly_canonical(p); };
  EXPECT_THAT(dirs, ::testing::UnorderedElementsAre(canonical(dir_.path() / "scenarios"),
                                                    canonical(dir_.path() / "objects")));
  // A folder given is watched with its subfolders.
  const auto tree = watchedDirectories({dir_.path()});
  EXPECT_THAT(tree, ::testing::Contains(canonical(dir_.path() / "unrelated")));
  EXPECT_THAT(tree, ::testing::Contains(canonical(dir_.path())));
}

TEST_F(WatchTest, WatcherReportsChangedScenarioFilesAndIgnoresOthers) {
  auto watcher = FileWatcher::create(watchedDirectories({scenario()}));
  ASSERT_TRUE(watcher.ok()) << watcher.error().message;
  // Queued before the wait: the watcher reads them when it waits (no timing involved).
  testing::writeFile(dir_.path() / "scenarios/.watch.yaml.swp", "editor swap file");
  testing::writeFile(dir_.path() / "scenarios/notes.txt", "not a scenario file");
  testing::writeFile(dir_.path() / "objects/cm.yaml", kConfigMap);
  auto changed = (*watcher)->waitForChanges(50);
  ASSERT_TRUE(changed.ok()) << changed.error().message;
  EXPECT_THAT(*changed, ::testing::ElementsAre(fs::weakly_canonical(dir_.path() / "objects") /
                                               "cm.yaml"));
}

TEST(WatchChanges, DescribesChangedNewAndGoneSteps) {
  RunReport before, after;
  ScenarioResult scenario;
  scenario.name = "s";
  StepResult step;
  step.name = "create";
  step.status = StepStatus::kPassed;
  step.admission.emplace();
  step.admission->allowed = true;
  step.admission->code = 201;
  step.admission->object = nlohmann::json{{"metadata", {{"labels", {{"color", "blue"}}}}}};
  StepResult gone = step;
  gone.name = "later";
  scenario.steps = {step, gone};
  before.scenarios = {scenario};
  EXPECT_EQ(describeRunChanges(before, before), "no change in any step's outcome\n");

  step.status = StepStatus::kFailed;
  step.failures.push_back(
      {"object", "/metadata/labels/color: expected \"blue\", got \"green\"", ""});
  step.admission->object = nlohmann::json{{"metadata", {{"labels", {{"color", "green"}}}}}};
  StepResult added = step;
  added.name = "new step";
  scenario.steps = {step, added};
  after.scenarios = {scenario};
  const std::string changes = describeRunChanges(before, after);
  EXPECT_THAT(changes, HasSubstr("~ s/create\n"));
  EXPECT_THAT(changes, HasSubstr("- result: passed"));
  EXPECT_THAT(changes, HasSubstr("+ result: failed"));
  EXPECT_THAT(changes, HasSubstr("- object /metadata/labels/color: \"blue\""));
  EXPECT_THAT(changes, HasSubstr("+ object /metadata/labels/color: \"green\""));
  EXPECT_THAT(changes, HasSubstr("+ s/new step (new)"));
  EXPECT_THAT(changes, HasSubstr("- s/later (gone)"));
  // Unchanged lines of a changed step are left out (a new step shows all of its lines).
  EXPECT_THAT(changes.substr(0, changes.find("+ s/new step")), Not(HasSubstr("response: 201")));
}

// Reads the child's stdout until `text` has appeared `count` times in all it printed; false after
// a generous bound (the machine may be loaded: this waits on output, never on time).
bool readUntil(int fd, std::string& output, const std::string& text, int count) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(3);
  auto occurrences = [&] {
    int n = 0;
    for (auto pos = output.find(text); pos != std::string::npos; pos = output.find(text, pos + 1)) {
      ++n;
    }
    return n;
  };
  while (occurrences() < count) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    pollfd pfd{fd, POLLIN, 0};
    if (::poll(&pfd, 1, 1000) <= 0) continue;
    char buffer[4096];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) return false;  // the process ended
    output.append(buffer, static_cast<std::size_t>(n));
  }
  return true;
}

TEST_F(WatchTest, RunWatchRunsAgainAfterAnEditAndPrintsWhatChanged) {
  auto child = process::ChildProcess::startPiped(
      {(testing::binaryDir() / "apiserver-sim/apiserver-sim").string(), "run", "--watch",
       scenario().string()},
      dir_.path() / "stderr.log");
  ASSERT_TRUE(child.ok()) << child.error().message;
  const int fd = (*child)->stdoutFd();
  std::string output;
  constexpr char kWatching[] = "apiserver-sim: watching 2 folders for changes";
  ASSERT_TRUE(readUntil(fd, output, kWatching, 1)) << output << (*child)->logTail();
  EXPECT_THAT(output, HasSubstr("1 passed"));

  // An edit of the referenced object: run 2, the step still passes, its object changed.
  std::string cm = kConfigMap;
  cm.replace(cm.find("fast"), 4, "slow");
  testing::writeFile(dir_.path() / "objects/cm.yaml", cm);
  ASSERT_TRUE(readUntil(fd, output, kWatching, 2)) << output << (*child)->logTail();
  EXPECT_THAT(output, HasSubstr("== run 2: changed: "));
  EXPECT_THAT(output, HasSubstr("objects/cm.yaml"));
  EXPECT_THAT(output, HasSubstr("~ watch-test/create\n"
                                "    - object /data/mode: \"fast\"\n"
                                "    + object /data/mode: \"slow\"\n"));

  // An edit of the scenario that breaks its expectation: run 3 fails, and says how.
  std::string text = kScenario;
  text.replace(text.find("color: blue}}]"), 11, "color: green");
  testing::writeFile(scenario(), text);
  ASSERT_TRUE(readUntil(fd, output, kWatching, 3)) << output << (*child)->logTail();
  const std::string run3 = output.substr(output.find("== run 3"));
  EXPECT_THAT(run3, HasSubstr("- result: passed"));
  EXPECT_THAT(run3, HasSubstr("+ result: failed"));
  EXPECT_THAT(run3, HasSubstr("+ object /metadata/labels/color: \"green\""));
  (*child)->stop();
}

}  // namespace
}  // namespace harness::sim
