// Patch generation and application on the shapes an injector produces: a small pod getting a
// sidecar, and a pod with 2,000 env vars getting one (the case that made Istio's quadratic diff
// take seconds).

#include <benchmark/benchmark.h>

#include <string>

#include "harness/core/json_patch.h"
#include "harness/core/strategic_merge.h"

namespace harness::core {
namespace {

using json = nlohmann::json;

json pod(std::size_t env_count) {
  json env = json::array();
  for (std::size_t i = 0; i < env_count; ++i) {
    env.push_back({{"name", "VAR_" + std::to_string(i)}, {"value", "value-" + std::to_string(i)}});
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "web"}, {"namespace", "default"}, {"labels", {{"app", "web"}}}}},
          {"spec",
           {{"containers", json::array({{{"name", "app"},
                                         {"image", "web:1"},
                                         {"ports", json::array({{{"containerPort", 8080}}})},
                                         {"env", env}}})},
            {"volumes", json::array({{{"name", "data"}, {"emptyDir", json::object()}}})}}}};
}

json sidecarTemplate() {
  return json::parse(R"({
    "metadata": {"annotations": {"sidecar.istio.io/status": "{\"containers\":[\"istio-proxy\"]}"},
                 "labels": {"security.istio.io/tlsMode": "istio"}},
    "spec": {
      "initContainers": [{"name": "istio-init", "image": "proxyv2", "args": ["istio-iptables"]}],
      "containers": [{"name": "istio-proxy", "image": "proxyv2", "args": ["proxy", "sidecar"],
                      "env": [{"name": "ISTIO_META_POD_NAME", "value": "web"}],
                      "volumeMounts": [{"name": "istio-envoy", "mountPath": "/etc/istio/proxy"}]}],
      "volumes": [{"name": "istio-envoy", "emptyDir": {"medium": "Memory"}}]
    }
  })");
}

json injected(const json& original) {
  auto merged = strategicMerge(original, sidecarTemplate(), podSchema());
  return merged.ok() ? *merged : original;
}

void BM_CreatePatch(benchmark::State& state) {
  const json from = pod(static_cast<std::size_t>(state.range(0)));
  const json to = injected(from);
  for (auto _ : state) benchmark::DoNotOptimize(createPatch(from, to));
}
BENCHMARK(BM_CreatePatch)->Arg(5)->Arg(2000)->Unit(benchmark::kMicrosecond);

void BM_ApplyPatch(benchmark::State& state) {
  const json from = pod(static_cast<std::size_t>(state.range(0)));
  const JsonPatch patch = createPatch(from, injected(from));
  for (auto _ : state) benchmark::DoNotOptimize(applyPatch(from, patch));
}
BENCHMARK(BM_ApplyPatch)->Arg(5)->Arg(2000)->Unit(benchmark::kMicrosecond);

void BM_CreatePatchOneEnvChanged(benchmark::State& state) {
  const json from = pod(2000);
  json to = from;
  to["spec"]["containers"][0]["env"][1000]["value"] = "changed";
  for (auto _ : state) benchmark::DoNotOptimize(createPatch(from, to));
}
BENCHMARK(BM_CreatePatchOneEnvChanged)->Unit(benchmark::kMicrosecond);

void BM_DecodeAndApplyPatch(benchmark::State& state) {
  const json from = pod(2000);
  const std::string text = encodePatch(createPatch(from, injected(from))).dump();
  for (auto _ : state) {
    auto patch = decodePatch(text);
    benchmark::DoNotOptimize(applyPatch(from, *patch));
  }
}
BENCHMARK(BM_DecodeAndApplyPatch)->Unit(benchmark::kMicrosecond);

void BM_StrategicMergeSidecarTemplate(benchmark::State& state) {
  const json from = pod(static_cast<std::size_t>(state.range(0)));
  const json overlay = sidecarTemplate();
  for (auto _ : state) benchmark::DoNotOptimize(strategicMerge(from, overlay, podSchema()));
}
BENCHMARK(BM_StrategicMergeSidecarTemplate)->Arg(5)->Arg(2000)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace harness::core

BENCHMARK_MAIN();
