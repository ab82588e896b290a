// Throughput of the simulated admission chain over real HTTPS on 127.0.0.1 (never a test):
//   * BM_PodCreateThreeStubs: a Pod CREATE through two patching mutating stub webhooks and one
//     validating stub webhook (three-stubs.yaml), keep-alive connections;
//   * BM_PodCreateRealInjector: the seed tutorial's Pod CREATE with the real `injector` binary
//     (Linkerd profile) as the webhook, which looks the namespace and owners up through the
//     simulator's REST API on every request;
//   * BM_ScenarioLibrary: every scenario under scenarios/, each in a fresh simulated cluster
//     (items/s = scenarios per second).
// Each admission is checked (allowed, the webhooks' changes present), so a broken setup reports
// an error instead of a fast number.

#include <benchmark/benchmark.h>

#include <filesystem>
#include <string>

#include "harness/sim/scenario.h"
#include "harness/sim/scenario_runner.h"

namespace {

namespace sim = harness::sim;
namespace fs = std::filesystem;

const fs::path kSource = HARNESS_SOURCE_DIR;
const fs::path kInjector = HARNESS_INJECTOR_BINARY;

fs::path workDir(const std::string& name) {
  fs::path dir = fs::temp_directory_path() / ("apiserver-sim-bench-" + name + "-" +
                                              std::to_string(::getpid()));
  fs::create_directories(dir);
  return dir;
}

// Repeats the first step of `scenario_file` with a new object name each iteration.
void admitRepeatedly(benchmark::State& state, const fs::path& scenario_file,
                     const std::string& step_name, const std::string& must_contain) {
  auto scenario = sim::loadScenario(scenario_file);
  if (!scenario.ok()) {
    state.SkipWithError(scenario.error().message.c_str());
    return;
  }
  const sim::Step* step = nullptr;
  for (const auto& s : scenario->steps) {
    if (s.name == step_name) step = &s;
  }
  if (step == nullptr) {
    state.SkipWithError(("no step named " + step_name).c_str());
    return;
  }
  const fs::path dir = workDir(scenario->name);
  sim::EnvironmentOptions options;
  options.work_dir = dir;
  options.injector_binary = kInjector;
  auto env = sim::ScenarioEnvironment::start(*scenario, options);
  if (!env.ok()) {
    state.SkipWithError(env.error().message.c_str());
    fs::remove_all(dir);
    return;
  }
  // Steps before the benchmarked one set the store up (the tutorial creates its Deployment).
  for (const auto& s : scenario->steps) {
    if (&s == step) break;
    (void)(*env)->chain().handle((*env)->writeRequest(s.request));
  }
  const sim::WriteRequest base = (*env)->writeRequest(step->request);
  std::size_t i = 0;
  for (auto _ : state) {
    sim::WriteRequest request = base;
    const std::string name = "bench-" + std::to_string(i++);
    request.name = name;
    (*request.object)["metadata"]["name"] = name;
    (*request.object)["metadata"].erase("generateName");
    sim::AdmissionResult result = (*env)->chain().handle(request);
    if (!result.allowed || !result.object ||
        result.object->dump().find(must_contain) == std::string::npos) {
      state.SkipWithError(("admission did not do its job: " +
                           (result.status ? result.status->message : std::string("no change")))
                              .c_str());
      break;
    }
    // Keep the store at its starting size.
    (void)(*env)->store().remove({request.resource.group, request.resource.resource},
                                 request.namespace_name, name);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
  (*env)->stop();
  fs::remove_all(dir);
}

void BM_PodCreateThreeStubs(benchmark::State& state) {
  admitRepeatedly(state, kSource / "apiserver-sim/bench/three-stubs.yaml", "create a pod",
                  "\"annotated\":\"true\"");
}
BENCHMARK(BM_PodCreateThreeStubs)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_PodCreateRealInjector(benchmark::State& state) {
  admitRepeatedly(state, kSource / "scenarios/seed-tutorial/scenario.yaml",
                  "the ReplicaSet's Pod is injected", "linkerd-proxy");
}
BENCHMARK(BM_PodCreateRealInjector)->Unit(benchmark::kMicrosecond)->UseRealTime();

void BM_ScenarioLibrary(benchmark::State& state) {
  auto files = sim::findScenarioFiles({kSource / "scenarios"});
  if (!files.ok()) {
    state.SkipWithError(files.error().message.c_str());
    return;
  }
  std::vector<sim::Scenario> scenarios;
  for (const auto& file : *files) {
    auto scenario = sim::loadScenario(file);
    if (!scenario.ok()) {
      state.SkipWithError(scenario.error().message.c_str());
      return;
    }
    scenarios.push_back(std::move(*scenario));
  }
  sim::RunOptions options;
  options.injector_binary = kInjector;
  std::size_t steps = 0;
  for (auto _ : state) {
    for (const auto& scenario : scenarios) {
      const sim::ScenarioResult result = sim::runScenario(scenario, options);
      if (!result.passed()) {
        state.SkipWithError(("scenario failed: " + result.name).c_str());
        return;
      }
      steps += result.steps.size();
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * scenarios.size()));
  state.counters["scenarios"] = static_cast<double>(scenarios.size());
  state.counters["steps/s"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ScenarioLibrary)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
