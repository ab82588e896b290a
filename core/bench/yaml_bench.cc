// The YAML reader (never a test; scripts/bench.sh runs it). Read as ratios measured side by side:
//   * BM_ReadManifest / BM_ReadManifestWithYamlCpp: a Pod with N env vars written by toYaml,
//     read by parseYamlDocuments (libfyaml, yaml-cpp only for what libfyaml misreads) and by
//     yaml-cpp alone: the fast reader's gain;
//   * BM_ReadNestedFlow: N nested flow sequences ("[[[...]]]", refused past the depth limit
//     after parsing): items per second stays flat as N grows when the checks that send text to
//     yaml-cpp cost the same per node at any depth (a walk up the open collections per node once
//     made 100,000 levels take 2.4 s).

#include <benchmark/benchmark.h>

#include <string>

#include "harness/core/yaml.h"
#include "harness/core/yaml_reference.h"

namespace harness::core {
namespace {

using json = nlohmann::json;

std::string manifest(std::size_t env_count) {
  json env = json::array();
  for (std::size_t i = 0; i < env_count; ++i) {
    env.push_back({{"name", "VAR_" + std::to_string(i)}, {"value", "value " + std::to_string(i)}});
  }
  const json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"name", "web"},
        {"namespace", "default"},
        {"labels", {{"app", "web"}}},
        {"annotations", {{"note", "a text\nover two lines"}}}}},
      {"spec",
       {{"containers", json::array({{{"name", "app"},
                                     {"image", "web:1"},
                                     {"args", {"--port", "8080"}},
                                     {"ports", json::array({{{"containerPort", 8080}}})},
                                     {"env", env}}})}}}};
  return toYaml(pod);
}

void BM_ReadManifest(benchmark::State& state) {
  const std::string text = manifest(static_cast<std::size_t>(state.range(0)));
  if (!detail::libfyamlReads(text)) state.SkipWithError("not read by libfyaml");
  for (auto _ : state) benchmark::DoNotOptimize(parseYamlDocuments(text));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ReadManifest)->Arg(5)->Arg(2000)->Unit(benchmark::kMicrosecond);

void BM_ReadManifestWithYamlCpp(benchmark::State& state) {
  const std::string text = manifest(static_cast<std::size_t>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(detail::parseYamlDocumentsWithYamlCpp(text));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * text.size()));
}
BENCHMARK(BM_ReadManifestWithYamlCpp)->Arg(5)->Arg(2000)->Unit(benchmark::kMicrosecond);

void BM_ReadNestedFlow(benchmark::State& state) {
  const auto depth = static_cast<std::size_t>(state.range(0));
  const std::string text = std::string(depth, '[') + std::string(depth, ']');
  for (auto _ : state) benchmark::DoNotOptimize(parseYamlDocuments(text));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * depth));
}
BENCHMARK(BM_ReadNestedFlow)->Arg(1000)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace harness::core
