// Istio injection of a small pod and of a pod with 2,000 env vars (Istio once took 15 s on such
// a pod because of patch generation): the ratio must stay well under 20x.

#include <benchmark/benchmark.h>

#include <fstream>
#include <sstream>

#include "harness/injector/istio/config.h"
#include "harness/injector/istio/injector.h"

namespace {

using nlohmann::json;
namespace istio = harness::injector::istio;

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const istio::InjectorSettings& settings() {
  static const istio::InjectorSettings s = [] {
    const std::string dir(istio::defaultDataDir());
    auto loaded = istio::loadSettings(readFile(dir + "/sidecar-injector-config.yaml"),
                                      readFile(dir + "/values.json"), readFile(dir + "/mesh.yaml"));
    if (!loaded) throw std::runtime_error(loaded.error().message);
    return *loaded;
  }();
  return s;
}

json pod(int env_vars) {
  json env = json::array();
  for (int i = 0; i < env_vars; ++i) {
    env.push_back({{"name", "VAR_" + std::to_string(i)}, {"value", "value-" + std::to_string(i)}});
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "web"}, {"namespace", "shop"}, {"labels", {{"app", "web"}}}}},
          {"spec",
           {{"containers",
             {{{"name", "app"},
               {"image", "nginx"},
               {"env", env},
               {"ports", {{{"containerPort", 8080}}}},
               {"readinessProbe", {{"httpGet", {{"path", "/ready"}, {"port", 8080}}}}}}}}}}};
}

void BM_IstioAdmit(benchmark::State& state) {
  istio::AdmissionInput input;
  input.pod = pod(static_cast<int>(state.range(0)));
  input.request_namespace = "shop";
  input.native_sidecars = false;
  for (auto _ : state) {
    auto outcome = istio::admit(settings(), input);
    if (outcome.decision != istio::Decision::kInject) state.SkipWithError("not injected");
    benchmark::DoNotOptimize(outcome);
  }
}
BENCHMARK(BM_IstioAdmit)->Arg(0)->Arg(2000)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
