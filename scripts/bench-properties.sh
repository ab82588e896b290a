#!/usr/bin/env bash
# Measures the properties (property/, CTest label `property`): for each property, the wall time
# of a run of CASES cases (HARNESS_PROPERTY_CASES, fixed seed) and the cases per second; then
# `apiserver-sim check-idempotence` on the example stubs and both injector profiles. The figures
# go into property/README.md. A benchmark, never a test: the numbers depend on the machine.
#   scripts/bench-properties.sh [CASES] [CHECK_CASES]   (default: 10000 1000)
set -euo pipefail
cases="${1:-10000}"
check_cases="${2:-1000}"
cd "$(dirname "$0")/.."
root="$(pwd)"
build="$root/build/default"
cmake --preset default >/dev/null
cmake --build --preset default -j 2 --target property_tests apiserver-sim injector | tail -1
export HARNESS_SOURCE_DIR="$root" HARNESS_BINARY_DIR="$build"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

now() { date +%s.%N; }
echo "## properties, $cases cases each (nproc $(nproc), load $(cut -d' ' -f1 /proc/loadavg))"
total_start=$(now)
for bin in "$build"/property/property_*_test; do
  for test in $("$bin" --gtest_list_tests | awk '/^[^ ]/ {suite=$1} /^  / {print suite $1}'); do
    start=$(now)
    (cd "$work" && HARNESS_PROPERTY_CASES="$cases" "$bin" --gtest_filter="$test" \
      >"$work/out.txt" 2>&1) || { cat "$work/out.txt"; echo "FAILED: $test"; exit 1; }
    end=$(now)
    # Example tests (TEST, not RC_GTEST_PROP) run once: no rate.
    if grep -q "OK, passed" "$work/out.txt"; then
      awk -v t="$test" -v n="$cases" -v s="$start" -v e="$end" \
        'BEGIN { printf "%-72s %9.1f s %10.1f cases/s\n", t, e - s, n / (e - s) }'
    fi
  done
done
awk -v s="$total_start" -v e="$(now)" 'BEGIN { printf "all properties: %.1f s\n", e - s }'

echo "## apiserver-sim check-idempotence, $check_cases cases"
sim="$build/apiserver-sim/apiserver-sim"
run_check() {
  local label="$1"; shift
  local start end status=0
  start=$(now)
  "$sim" check-idempotence --seed 1 --cases "$check_cases" -o json "$@" >"$work/check.json" || status=$?
  end=$(now)
  python3 - "$work/check.json" "$label" "$status" "$start" "$end" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
label, status, start, end = sys.argv[2], sys.argv[3], float(sys.argv[4]), float(sys.argv[5])
seconds = end - start
print(f"{label:<58} exit {status}  {report['cases']:>6} cases {report['calls']:>7} calls "
      f"{seconds:7.1f} s {report['calls'] / seconds:8.1f} calls/s")
PY
}
mutators=(--mutator add-annotation --mutator add-init-container
          --mutator set-image-pull-policy=Always --mutator label-fighter=blue)
run_check "stub add-annotation, 4 mutators, all kinds" --stub-mutator add-annotation \
  --kinds all "${mutators[@]}"
run_check "injector linkerd, 4 mutators, all kinds" --injector linkerd --kinds all "${mutators[@]}"
run_check "injector istio (native sidecars), 4 mutators, Pods" --injector istio "${mutators[@]}"
run_check "injector istio (classic sidecars), 4 mutators, Pods" --injector istio \
  --injector-arg=--istio-enable-native-sidecars=false "${mutators[@]}"
for bad in append-sidecar timestamp-annotation reorder-containers; do
  run_check "stub $bad (fails; shrinking included)" --stub-mutator "$bad"
done
