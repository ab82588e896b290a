// `run -j N` and `--shard K/N`: scenarios in parallel, each in its own environment, and a
// deterministic split of the scenario list; the reports are the serial run's but for durations.

#include <sys/wait.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/net/server.h"
#include "harness/sim/report.h"
#include "harness/sim/scenario_runner.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// Scenarios of several kinds (allow, deny, patch, fail-open, matching, reinvocation, dry-run),
// and a file that does not load, so that load errors are placed too.
std::vector<fs::path> suite(const fs::path& bad_file) {
  const fs::path scenarios = testing::sourceDir() / "scenarios";
  return {scenarios / "examples", bad_file, scenarios / "matching", scenarios / "reinvocation",
          scenarios / "dry-run"};
}

fs::path writeBadFile(const testing::ScratchDir& dir) {
  fs::path bad = dir.path() / "bad.yaml";
  testing::writeFile(bad, "apiVersion: apiserver-sim.harness.dev/v1alpha1\nkind: Scenario\nspec: 1\n");
  return bad;
}

// The JSON report without what depends on the machine's pace.
json withoutTimes(json value) {
  if (value.is_object()) {
    value.erase("durationSeconds");
    value.erase("latencySeconds");
    for (auto& [key, member] : value.items()) member = withoutTimes(member);
  } else if (value.is_array()) {
    for (auto& element : value) element = withoutTimes(element);
  }
  return value;
}

std::string junitWithoutTimes(const std::string& junit) {
  return std::regex_replace(junit, std::regex(R"( time="[0-9.]+")"), "");
}

RunReport run(const std::vector<fs::path>& paths, unsigned jobs, Shard shard = {}) {
  auto report = runScenarioFiles(paths, "", {}, {}, {jobs, shard});
  EXPECT_TRUE(report.ok()) << report.error().message;
  return report.ok() ? std::move(*report) : RunReport{};
}

TEST(ParallelRun, ReportIsTheSerialOnesButForDurations) {
  const testing::ScratchDir dir{"parallel-run"};
  const auto paths = suite(writeBadFile(dir));
  const RunReport serial = run(paths, 1);
  const RunReport parallel = run(paths, 4);
  ASSERT_GT(serial.scenarios.size(), 20u);
  ASSERT_EQ(serial.load_errors.size(), 1u);
  for (const auto& scenario : serial.scenarios) {
    EXPECT_TRUE(scenario.passed()) << scenario.name;
  }
  EXPECT_EQ(withoutTimes(reportJson(parallel)), withoutTimes(reportJson(serial)));
  EXPECT_EQ(junitWithoutTimes(renderJunit(parallel)), junitWithoutTimes(renderJunit(serial)));
  EXPECT_EQ(parallel.exitCode(), serial.exitCode());
}

// The same scenario many times at once under one --work-dir: each run gets its own folder,
// certificates, stub ports and store, so none sees another's objects or calls.
TEST(ParallelRun, CopiesOfOneScenarioAreIsolated) {
  const testing::ScratchDir dir{"parallel-isolated"};
  const fs::path scenario = testing::sourceDir() / "scenarios/reinvocation/fight-over-label.yaml";
  RunOptions options;
  options.work_dir = dir.path() / "work";
  fs::create_directories(options.work_dir);
  auto report = runScenarioFiles(std::vector<fs::path>(6, scenario), "", options, {}, {6, {}});
  ASSERT_TRUE(report.ok());
  ASSERT_EQ(report->scenarios.size(), 6u);
  for (const auto& result : report->scenarios) {
    EXPECT_TRUE(result.passed()) << (result.error ? *result.error : result.name);
  }
  std::size_t folders = 0;
  for (const auto& entry : fs::directory_iterator(options.work_dir)) {
    if (entry.is_directory()) ++folders;
  }
  EXPECT_EQ(folders, 6u);
}

TEST(Shard, TheShardsTogetherAreTheSerialRunInRoundRobin) {
  const testing::ScratchDir dir{"shard-run"};
  const auto paths = suite(writeBadFile(dir));
  const json serial = withoutTimes(reportJson(run(paths, 1)));
  constexpr unsigned kShards = 3;
  std::vector<json> shards;
  for (unsigned k = 1; k <= kShards; ++k) {
    shards.push_back(withoutTimes(reportJson(run(paths, 2, {k, kShards}))));
  }
  // The serial list of entries: the load error is the examples' count-th entry.
  std::vector<json> entries;
  std::size_t examples = 0;
  for (const auto& scenario : serial["scenarios"]) {
    if (scenario["file"].get<std::string>().find("/examples/") != std::string::npos) ++examples;
  }
  for (std::size_t i = 0; i < serial["scenarios"].size(); ++i) {
    if (i == examples) entries.push_back(serial["loadErrors"][0]);
    entries.push_back(serial["scenarios"][i]);
  }
  std::vector<std::size_t> next_scenario(kShards, 0), next_error(kShards, 0);
  std::size_t total = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::size_t k = i % kShards;
    const bool is_error = !entries[i].contains("steps");
    const json& shard_entries = shards[k][is_error ? "loadErrors" : "scenarios"];
    std::size_t& next = is_error ? next_error[k] : next_scenario[k];
    ASSERT_LT(next, shard_entries.size()) << "shard " << k + 1 << " misses entry " << i;
    EXPECT_EQ(shard_entries[next], entries[i]) << "entry " << i;
    ++next;
  }
  for (unsigned k = 0; k < kShards; ++k) {
    EXPECT_EQ(next_scenario[k], shards[k]["scenarios"].size());
    EXPECT_EQ(next_error[k], shards[k]["loadErrors"].size());
    total += shards[k]["scenarios"].size() + shards[k]["loadErrors"].size();
  }
  EXPECT_EQ(total, entries.size());
}

TEST(Shard, Parses) {
  auto shard = parseShard("2/5");
  ASSERT_TRUE(shard.ok());
  EXPECT_EQ(shard->index, 2u);
  EXPECT_EQ(shard->count, 5u);
  for (const char* bad : {"", "1", "0/2", "3/2", "1/0", "a/b", "1/2/3", "-1/2", " 1/2", "1/9999999"}) {
    auto parsed = parseShard(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(parsed.error().message, HasSubstr("--shard: want K/N")) << bad;
  }
  EXPECT_FALSE(
      runScenarioFiles({testing::sourceDir() / "scenarios/examples"}, "", {}, {}, {1, {3, 2}})
          .ok());
}

struct CommandResult {
  int status = -1;
  std::string out;
};

CommandResult runSimulator(const std::string& arguments, const fs::path& dir) {
  const fs::path out = dir / "stdout.txt";
  const std::string command = (testing::binaryDir() / "apiserver-sim/apiserver-sim").string() +
                              " " + arguments + " >" + out.string() + " 2>" +
                              (dir / "stderr.txt").string();
  const int raw = std::system(command.c_str());
  CommandResult result;
  result.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  result.out = testing::readFile(out);
  return result;
}

TEST(ParallelRunCommand, JobsAndShardsOnTheCommandLine) {
  const testing::ScratchDir dir{"parallel-command"};
  const std::string examples = (testing::sourceDir() / "scenarios/examples").string();
  const CommandResult serial = runSimulator("run -o junit " + examples, dir.path());
  const CommandResult parallel = runSimulator("run -j 3 -o junit " + examples, dir.path());
  ASSERT_EQ(serial.status, 0) << serial.out;
  ASSERT_EQ(parallel.status, 0) << parallel.out;
  EXPECT_EQ(junitWithoutTimes(parallel.out), junitWithoutTimes(serial.out));
  const CommandResult first = runSimulator("run --shard 1/2 -o json " + examples, dir.path());
  const CommandResult second = runSimulator("run --shard 2/2 -o json " + examples, dir.path());
  ASSERT_EQ(first.status, 0);
  ASSERT_EQ(second.status, 0);
  const json a = json::parse(first.out), b = json::parse(second.out);
  const json all = json::parse(runSimulator("run -o json " + examples, dir.path()).out);
  EXPECT_EQ(a["scenarios"].size() + b["scenarios"].size(), all["scenarios"].size());
  EXPECT_EQ(a["scenarios"][0]["name"], all["scenarios"][0]["name"]);
  EXPECT_EQ(b["scenarios"][0]["name"], all["scenarios"][1]["name"]);
  const CommandResult bad = runSimulator("run --shard 3/2 " + examples, dir.path());
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(testing::readFile(dir.path() / "stderr.txt"), HasSubstr("--shard: want K/N"));
  EXPECT_EQ(runSimulator("run -j 0 " + examples, dir.path()).status, 2);
}

// While a scenario plays, the stubs of the next ones are prepared on another thread: during the
// first scenario's step (held until then, at most 30 s), the server TLS context of the second
// scenario's stub is made; its start later makes none. Host names no other test uses, so that
// each stub needs a context of its own.
TEST(ParallelRun, TheNextScenariosStubsArePreparedWhileOnePlays) {
  const testing::ScratchDir dir{"prepared-ahead"};
  const auto scenario = [](const std::string& name) {
    return "apiVersion: apiserver-sim.harness.dev/v1alpha1\nkind: Scenario\nmetadata:\n  name: " +
           name +
           "\nspec:\n  endpoints:\n    - name: allow\n      service: {namespace: ahead, name: " +
           name +
           "}\n      stub: {}\n  steps:\n    - name: a namespace\n      request:\n"
           "        object:\n          apiVersion: v1\n          kind: Namespace\n"
           "          metadata: {name: created}\n      expect: {allowed: true}\n";
  };
  // New names on every run of the test in a process (--gtest_repeat): the process keeps what it
  // made for names it saw.
  static int run = 0;
  const std::string first = "ahead-" + std::to_string(++run) + "-first";
  const std::string second = "ahead-" + std::to_string(run) + "-second";
  testing::writeFile(dir.path() / "a.yaml", scenario(first));
  testing::writeFile(dir.path() / "b.yaml", scenario(second));
  const std::uint64_t before = net::serverTlsContextsMade();
  bool prepared_while_playing = false;
  std::uint64_t after_second_started = 0;
  RunOptions options;
  options.on_step = [&](const ScenarioResult& result, const StepResult&) {
    if (result.name == first) {
      // This scenario's stub made one context; the next scenario's is the preparer's.
      const auto give_up = std::chrono::steady_clock::now() + 30s;
      while (net::serverTlsContextsMade() < before + 2 &&
             std::chrono::steady_clock::now() < give_up) {
        std::this_thread::sleep_for(1ms);
      }
      prepared_while_playing = net::serverTlsContextsMade() >= before + 2;
    } else {
      after_second_started = net::serverTlsContextsMade();
    }
  };
  auto report = runScenarioFiles({dir.path() / "a.yaml", dir.path() / "b.yaml"}, "", options);
  ASSERT_TRUE(report.ok()) << report.error().message;
  ASSERT_EQ(report->scenarios.size(), 2u);
  for (const auto& result : report->scenarios) EXPECT_TRUE(result.passed()) << result.name;
  EXPECT_TRUE(prepared_while_playing);
  EXPECT_EQ(after_second_started, before + 2);
}

}  // namespace
}  // namespace harness::sim
