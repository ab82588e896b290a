// Offline `injector inject` of the input scripts/bench-inject.sh generates (20 annotated
// Namespaces, a ReplicaSet per 10 pods, pods owned by them), per profile: the time per pod must
// not grow with the number of pods. Linked without the injector binary's jemalloc, so this
// measures the work itself.

#include <benchmark/benchmark.h>

#include <filesystem>
#include <ostream>
#include <sstream>
#include <streambuf>
#include <string>

#include "harness/injector/istio/config.h"
#include "inject_command.h"

namespace {

using harness::injector::InjectOptions;

std::string podsYaml(int pods) {
  std::string out;
  for (int n = 0; n < 20; ++n) {
    out += "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: team-" + std::to_string(n) +
           "\n  annotations:\n    linkerd.io/inject: enabled\n---\n";
  }
  for (int r = 0; r * 10 < pods; ++r) {
    const std::string rs = "app-" + std::to_string(r) + "-7b9c6f5d4";
    out += "apiVersion: apps/v1\nkind: ReplicaSet\nmetadata:\n  name: " + rs +
           "\n  namespace: team-" + std::to_string(r % 20) + "\n  uid: rs-" + std::to_string(r) +
           "\nspec:\n  selector:\n    matchLabels: {app: app-" + std::to_string(r) +
           "}\n  template:\n    metadata:\n      labels: {app: app-" + std::to_string(r) +
           "}\n    spec:\n      containers:\n      - {name: app, image: ghcr.io/example/app:1}\n"
           "---\n";
  }
  for (int p = 0; p < pods; ++p) {
    const int r = p / 10;
    const std::string rs = "app-" + std::to_string(r) + "-7b9c6f5d4";
    out += "apiVersion: v1\nkind: Pod\nmetadata:\n  name: " + rs + "-" + std::to_string(p) +
           "\n  namespace: team-" + std::to_string(r % 20) + "\n  labels: {app: app-" +
           std::to_string(r) + "}\n  ownerReferences:\n  - {apiVersion: apps/v1, kind: " +
           "ReplicaSet, name: " + rs + ", uid: rs-" + std::to_string(r) +
           ", controller: true}\nspec:\n  containers:\n  - name: app\n    image: "
           "ghcr.io/example/app:1." + std::to_string(p % 7) +
           "\n    ports:\n    - containerPort: 8080\n    env:\n    - {name: POD_INDEX, value: \"" +
           std::to_string(p) + "\"}\n---\n";
  }
  return out;
}

// Counts what is written and keeps none of it.
class CountingBuffer : public std::streambuf {
 public:
  std::size_t written = 0;

 protected:
  std::streamsize xsputn(const char*, std::streamsize n) override {
    written += static_cast<std::size_t>(n);
    return n;
  }
  int_type overflow(int_type c) override {
    ++written;
    return c;
  }
};

void inject(benchmark::State& state, const std::string& profile) {
  const int pods = static_cast<int>(state.range(0));
  const std::string input = podsYaml(pods);
  InjectOptions options;
  options.profile = profile;
  options.version = "bench";
  const std::filesystem::path dir(harness::injector::istio::defaultDataDir());
  options.istio.config_file = dir / "sidecar-injector-config.yaml";
  options.istio.values_file = dir / "values.json";
  options.istio.mesh_file = dir / "mesh.yaml";
  for (auto _ : state) {
    std::istringstream in(input);
    CountingBuffer buffer;
    std::ostream out(&buffer);
    std::ostringstream err;
    const int code = harness::injector::runInject(options, in, out, err);
    if (code != 0) {
      state.SkipWithError(err.str().c_str());
      return;
    }
    benchmark::DoNotOptimize(buffer.written);
  }
  state.SetItemsProcessed(state.iterations() * pods);
}

void BM_InjectLinkerd(benchmark::State& state) { inject(state, "linkerd"); }
void BM_InjectIstio(benchmark::State& state) { inject(state, "istio"); }

BENCHMARK(BM_InjectLinkerd)->Arg(200)->Arg(2000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_InjectIstio)->Arg(200)->Arg(2000)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
