// Throughput of the simulated admission chain over real HTTPS on 127.0.0.1 (never a test):
//   * BM_PodCreateThreeStubs: a Pod CREATE through two patching mutating stub webhooks and one
//     validating stub webhook (three-stubs.yaml), keep-alive connections;
//   * BM_PodCreateRealInjector: the seed tutorial's Pod CREATE with the real `injector` binary
//     (Linkerd profile) as the webhook, which looks the namespace and owners up through the
//     simulator's REST API on every request;
//   * BM_PodCreateAllowOnlyWebhooks/N: a Pod CREATE through N (1, 8, 64) mutating webhooks that
//     allow, each its own stub over HTTPS (the cost per admission against the webhook count);
//   * BM_ScenarioLibrary: every scenario under scenarios/, each in a fresh simulated cluster
//     (items/s = scenarios per second).
// Each admission is checked (allowed, the webhooks' changes present), so a broken setup reports
// an error instead of a fast number.

#include <sys/resource.h>
#include <unistd.h>

#include <benchmark/benchmark.h>

#include <algorithm>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/sim/kube_cel_session.h"
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

// User and system CPU seconds of this process so far, all threads.
double processCpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return seconds(usage.ru_utime) + seconds(usage.ru_stime);
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
  const double cpu_before = processCpuSeconds();
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
  // The whole process's CPU (the chain, the client and the stubs' server threads): unlike wall
  // time, hardly changed by other processes on a busy machine.
  state.counters["process_cpu"] = benchmark::Counter(
      (processCpuSeconds() - cpu_before) / static_cast<double>(std::max<benchmark::IterationCount>(
                                               state.iterations(), 1)));
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

// A Pod CREATE through `count` mutating webhooks that allow without a patch, each its own
// stub endpoint (its own HTTPS server on 127.0.0.1), called one after the other as the mutating
// phase calls them: the simulator's cost per admission against the number of webhooks
// (issue 19). Reported per admission; "per_webhook" (seconds) divides by the count.
void BM_PodCreateAllowOnlyWebhooks(benchmark::State& state) {
  const auto count = static_cast<int>(state.range(0));
  std::string endpoints, webhooks, calls;
  for (int i = 0; i < count; ++i) {
    const std::string host = "allow-" + std::to_string(i) + ".bench.example.com";
    endpoints += "    - {name: allow-" + std::to_string(i) + ", stub: {}, hosts: [\"" + host +
                 ":443\"]}\n";
    webhooks += "        - name: " + host + "\n          clientConfig: {url: https://" + host +
                "/}\n          rules: [{operations: [CREATE], apiGroups: [\"\"], apiVersions: "
                "[v1], resources: [pods]}]\n          sideEffects: None\n          "
                "admissionReviewVersions: [v1]\n          reinvocationPolicy: Never\n";
    calls += "          - {webhook: " + host + ", outcome: Allowed}\n";
  }
  const std::string text =
      "apiVersion: apiserver-sim.harness.dev/v1alpha1\nkind: Scenario\nmetadata: {name: "
      "bench-allow-" + std::to_string(count) +
      "}\nspec:\n  objects:\n    - {apiVersion: v1, kind: Namespace, metadata: {name: bench}}\n"
      "    - {apiVersion: v1, kind: ServiceAccount, metadata: {name: default, namespace: bench}}\n"
      "  endpoints:\n" + endpoints +
      "  webhookConfigurations:\n    - apiVersion: admissionregistration.k8s.io/v1\n"
      "      kind: MutatingWebhookConfiguration\n      metadata: {name: bench-allow}\n"
      "      webhooks:\n" + webhooks +
      "  steps:\n    - name: create a pod\n      request:\n        object:\n"
      "          apiVersion: v1\n          kind: Pod\n"
      "          metadata: {name: web, namespace: bench, labels: {app: web}}\n"
      "          spec: {containers: [{name: app, image: nginx:1.27}]}\n"
      "      expect:\n        allowed: true\n        calls:\n" + calls;
  const fs::path file = workDir("allow-" + std::to_string(count)) / "scenario.yaml";
  {
    std::ofstream out(file);
    out << text;
  }
  // The allowed Pod carries the ServiceAccount plugin's volume.
  admitRepeatedly(state, file, "create a pod", "kube-api-access-");
  fs::remove_all(file.parent_path());
  state.counters["per_webhook"] = benchmark::Counter(
      static_cast<double>(count) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}
BENCHMARK(BM_PodCreateAllowOnlyWebhooks)
    ->Arg(1)
    ->Arg(8)
    ->Arg(64)
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

void BM_ScenarioLibrary(benchmark::State& state) {
  // As `apiserver-sim run` plays them: the policy, matchCondition and apply scenarios need
  // Kubernetes' own code (bash scripts/build-kube.sh), and it must run before they load.
  const sim::KubeCelSession kube_cel;
  if (!kube_cel.available()) {
    state.SkipWithError(("the library needs kube-cel: " + kube_cel.status()).c_str());
    return;
  }
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
  std::vector<double> wall, cpu;  // per scenario run, seconds
  for (auto _ : state) {
    for (const auto& scenario : scenarios) {
      const double cpu_before = processCpuSeconds();
      const sim::ScenarioResult result = sim::runScenario(scenario, options);
      cpu.push_back(processCpuSeconds() - cpu_before);
      wall.push_back(static_cast<double>(result.duration.count()) / 1e9);
      if (!result.passed()) {
        state.SkipWithError(("scenario failed: " + result.name).c_str());
        return;
      }
      steps += result.steps.size();
    }
  }
  auto median = [](std::vector<double> values) {
    if (values.empty()) return 0.0;
    std::nth_element(values.begin(), values.begin() + values.size() / 2, values.end());
    return values[values.size() / 2];
  };
  // The goal is on the median scenario's wall time (the library's paced stub delays
  // included); its process CPU shows what the machine's load does not.
  state.counters["median_scenario_wall"] = median(wall);
  state.counters["median_scenario_cpu"] = median(cpu);
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * scenarios.size()));
  state.counters["scenarios"] = static_cast<double>(scenarios.size());
  state.counters["steps/s"] =
      benchmark::Counter(static_cast<double>(steps), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ScenarioLibrary)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
