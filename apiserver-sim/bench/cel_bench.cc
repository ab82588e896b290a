// The cost of matchConditions per request (never a test; scripts/bench.sh runs it):
//   * BM_ShouldCallHookWithoutConditions: ShouldCallHook for a Pod CREATE and a webhook with no
//     matchConditions (the baseline);
//   * BM_ShouldCallHookThreeConditions: the same webhook with three matchConditions (the
//     Kubernetes documentation's exclude-leases, exclude-kubelet-requests and rbac), evaluated by
//     kube-cel: one pipe round trip and Go's evaluation of the three;
//   * BM_EvaluateOneCondition: a single always-true condition, to read the per-expression cost.
// Reported per iteration; per expression = (three - none) / 3. Needs build/kube/bin/kube-cel
// (bash scripts/build-kube.sh); without it the CEL benchmarks report an error, not a number.

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "harness/sim/cel.h"
#include "harness/sim/matching.h"

namespace {

namespace sim = harness::sim;
namespace core = harness::core;

sim::AdmissionAttributes podCreate() {
  sim::AdmissionAttributes a;
  a.operation = "CREATE";
  a.kind = {"", "v1", "Pod"};
  a.resource = {"", "v1", "pods"};
  a.namespace_name = "demo";
  a.name = "web-0";
  a.object = nlohmann::json{
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata", {{"name", "web-0"}, {"namespace", "demo"}, {"labels", {{"app", "web"}}}}},
      {"spec",
       {{"containers",
         {{{"name", "app"}, {"image", "nginx:1.27"}, {"ports", {{{"containerPort", 80}}}}}}}}}};
  a.user_info = {"jane", "", {"developers", "system:authenticated"}, {}};
  return a;
}

sim::HookEntry hook(std::vector<core::MatchCondition> conditions) {
  sim::HookEntry entry;
  entry.webhook.name = "my-webhook.example.com";
  core::RuleWithOperations rule;
  rule.operations = {"CREATE", "UPDATE"};
  rule.api_groups = {"*"};
  rule.api_versions = {"*"};
  rule.resources = {"*"};
  entry.webhook.rules = {rule};
  entry.webhook.match_conditions = std::move(conditions);
  // As stored: v1 defaults (empty selectors match everything, scope "*").
  core::WebhookConfiguration config;
  config.webhooks = {entry.webhook};
  core::applyV1Defaults(config);
  entry.webhook = config.webhooks[0];
  return entry;
}

std::shared_ptr<sim::cel::KubeCel>& kubeCel() {
  static std::shared_ptr<sim::cel::KubeCel> cel = [] {
    auto started = sim::cel::KubeCel::start(
        sim::cel::KubeCel::defaultBinary(),
        std::filesystem::temp_directory_path() / ("cel-bench-" + std::to_string(::getpid()) + ".log"));
    return started.ok() ? std::move(started).value() : nullptr;
  }();
  return cel;
}

void run(benchmark::State& state, const sim::HookEntry& entry, bool with_cel) {
  const auto attributes = podCreate();
  sim::NamespaceLabelsLookup namespaces = [](const std::string&) {
    return std::variant<core::StringMap, core::Status>(core::StringMap{});
  };
  sim::MatchConditionEvaluator evaluator;
  if (with_cel) {
    if (!kubeCel()) {
      state.SkipWithError("kube-cel is not built (bash scripts/build-kube.sh)");
      return;
    }
    evaluator = sim::cel::matchConditionEvaluator(kubeCel());
  }
  for (auto _ : state) {
    auto result = sim::shouldCallHook(entry, attributes, namespaces, with_cel ? &evaluator : nullptr);
    if (result.outcome != sim::MatchOutcome::kCall) {
      std::string why = "the webhook was not called:";
      for (const auto& line : result.explanation) why += " " + line + ";";
      state.SkipWithError(why.c_str());
      return;
    }
    benchmark::DoNotOptimize(result);
  }
}

void BM_ShouldCallHookWithoutConditions(benchmark::State& state) { run(state, hook({}), false); }

void BM_ShouldCallHookThreeConditions(benchmark::State& state) {
  run(state,
      hook({{"exclude-leases",
             "!(request.resource.group == \"coordination.k8s.io\" && request.resource.resource "
             "== \"leases\")"},
            {"exclude-kubelet-requests", "!(\"system:nodes\" in request.userInfo.groups)"},
            {"rbac", "request.resource.group != \"rbac.authorization.k8s.io\""}}),
      true);
}

void BM_EvaluateOneCondition(benchmark::State& state) {
  run(state, hook({{"always", "true"}}), true);
}

BENCHMARK(BM_ShouldCallHookWithoutConditions);
BENCHMARK(BM_ShouldCallHookThreeConditions)->UseRealTime();
BENCHMARK(BM_EvaluateOneCondition)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
