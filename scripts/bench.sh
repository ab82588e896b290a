#!/usr/bin/env bash
# Benchmarks (never run as tests): JSON patch generation/application and strategic merge on a
# pod with 2,000 env vars (Google Benchmark), the injector webhook under load over HTTPS, and the
# simulated admission chain (Pod CREATEs through three stub webhooks / the real injector,
# scenarios per second), and matchConditions evaluated by kube-cel (Kubernetes' CEL).
#   scripts/bench.sh [seconds-per-load-run]
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build-kube.sh  # kube-cel for cel_bench; without Go it says so and cel_bench reports it
cmake --preset default >/dev/null
cmake --build --preset default --target core_bench injector_istio_bench injector_load_bench \
  apiserver_sim_bench cel_bench admission_policy_bench | tail -1
echo "== core: patches (Google Benchmark)"
build/default/core/core_bench --benchmark_min_time=0.2
echo "== injector: Istio injection of a small pod and of a pod with 2,000 env vars"
build/default/injector/injector_istio_bench --benchmark_min_time=0.2
echo "== injector: request path over keep-alive HTTPS; memory around large reviews"
build/default/injector/injector_load_bench --seconds "${1:-5}" --large-mb 8
echo "== apiserver-sim: admissions per second over HTTPS, scenarios per second"
build/default/apiserver-sim/apiserver_sim_bench --benchmark_min_time=2
build/default/apiserver-sim/cel_bench --benchmark_min_time=0.5
build/default/apiserver-sim/admission_policy_bench --benchmark_min_time=0.5 --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
