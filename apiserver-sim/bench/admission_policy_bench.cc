// The cost of a ValidatingAdmissionPolicy per request (never a test; scripts/bench.sh runs it):
// a ConfigMap CREATE (dry run, so the store does not grow) through the whole admission chain with
// the default in-tree plugins,
//   * BM_ChainWithoutPolicy: no policy (the baseline);
//   * BM_ChainPolicyFiveValidations: one policy with five validations (all true) and its binding,
//     evaluated by kube-cel with Kubernetes' validating dispatcher: one pipe round trip, the
//     request and the policies encoded, Go's matching and evaluation of the five;
//   * BM_ChainPolicyOneValidation: the same policy with one validation.
// Per expression = (five - one) / 4, which leaves out the round trip and the fixed costs.
// Needs build/kube/bin/kube-cel (bash scripts/build-kube.sh); without it the policy benchmarks
// report an error, not a number.

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <string>

#include "harness/sim/admission_chain.h"
#include "harness/sim/cel.h"

namespace {

namespace sim = harness::sim;
namespace core = harness::core;
using nlohmann::json;

std::shared_ptr<sim::cel::KubeCel>& kubeCel() {
  static std::shared_ptr<sim::cel::KubeCel> cel = [] {
    auto started = sim::cel::KubeCel::start(
        sim::cel::KubeCel::defaultBinary(),
        std::filesystem::temp_directory_path() /
            ("policy-bench-" + std::to_string(::getpid()) + ".log"));
    return started.ok() ? std::move(started).value() : nullptr;
  }();
  return cel;
}

json policy(int validations) {
  static const char* kExpressions[] = {
      "object.metadata.name.size() < 64",
      "!has(object.data) || object.data.all(k, k.size() < 32)",
      "has(object.metadata.labels) && 'app' in object.metadata.labels",
      "request.userInfo.username != ''",
      "!has(object.metadata.annotations) || !('forbidden' in object.metadata.annotations)",
  };
  json list = json::array();
  for (int i = 0; i < validations; ++i) {
    list.push_back({{"expression", kExpressions[i]}, {"message", "rule " + std::to_string(i)}});
  }
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", "ValidatingAdmissionPolicy"},
          {"metadata", {{"name", "bench"}, {"uid", "u1"}, {"generation", 1}}},
          {"spec",
           {{"failurePolicy", "Fail"},
            {"matchConstraints",
             {{"resourceRules",
               json::array({{{"apiGroups", {""}},
                             {"apiVersions", {"v1"}},
                             {"operations", {"CREATE"}},
                             {"resources", {"configmaps"}}}})}}},
            {"validations", list}}}};
}

void run(benchmark::State& state, int validations) {
  sim::ObjectStore store;
  store.put({"", "namespaces"},
            {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "demo"}}}});
  sim::ChainOptions options;
  if (validations > 0) {
    if (!kubeCel()) {
      state.SkipWithError("kube-cel is not built (bash scripts/build-kube.sh)");
      return;
    }
    options.validating_policies = sim::cel::validatingPolicyDispatcher(kubeCel());
    store.put({"admissionregistration.k8s.io", "validatingadmissionpolicies"}, policy(validations));
    store.put({"admissionregistration.k8s.io", "validatingadmissionpolicybindings"},
              {{"apiVersion", "admissionregistration.k8s.io/v1"},
               {"kind", "ValidatingAdmissionPolicyBinding"},
               {"metadata", {{"name", "bench"}}},
               {"spec", {{"policyName", "bench"}, {"validationActions", {"Deny"}}}}});
  }
  sim::InProcessWebhookCaller caller;
  core::MetricsRegistry metrics;
  sim::AdmissionChain chain(store, caller, metrics, options);
  sim::WriteRequest request;
  request.operation = "CREATE";
  request.resource = {"", "v1", "configmaps"};
  request.namespace_name = "demo";
  request.name = "settings";
  request.dry_run = true;
  request.object = json{{"apiVersion", "v1"},
                        {"kind", "ConfigMap"},
                        {"metadata",
                         {{"name", "settings"},
                          {"namespace", "demo"},
                          {"labels", {{"app", "web"}}}}},
                        {"data", {{"mode", "strict"}, {"level", "3"}}}};
  for (auto _ : state) {
    auto result = chain.handle(request);
    if (!result.allowed) {
      state.SkipWithError(("the request was rejected: " +
                           (result.status ? result.status->message : std::string("?")))
                              .c_str());
      return;
    }
    benchmark::DoNotOptimize(result);
  }
}

void BM_ChainWithoutPolicy(benchmark::State& state) { run(state, 0); }
void BM_ChainPolicyOneValidation(benchmark::State& state) { run(state, 1); }
void BM_ChainPolicyFiveValidations(benchmark::State& state) { run(state, 5); }

BENCHMARK(BM_ChainWithoutPolicy)->UseRealTime();
BENCHMARK(BM_ChainPolicyOneValidation)->UseRealTime();
BENCHMARK(BM_ChainPolicyFiveValidations)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
