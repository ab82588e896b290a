#!/usr/bin/env bash
# The two scenario backends side by side: how long the real control plane (kube/) takes to start
# (`kube-local up` to ready, N times), and how many scenarios per minute the library plays on the
# simulator and on the real control plane (`apiserver-sim run --backend ...`, slow scenarios
# excluded). A benchmark, never a test: figures depend on the machine and its load.
#   scripts/bench-backends.sh [STARTS] [SCENARIO_PATH...]   (default 3 starts, scenarios/)
# Needs the binaries of scripts/build-kube.sh (otherwise: one "skipped" line, exit 0).
set -euo pipefail
cd "$(dirname "$0")/.."
starts="${1:-3}"
shift || true
paths=("$@")
if [[ ${#paths[@]} -eq 0 ]]; then paths=(scenarios); fi
if [[ ! -x build/kube/bin/kube-apiserver ]]; then
  echo "bench-backends: skipped: build/kube/bin/kube-apiserver is not built (bash scripts/build-kube.sh builds it)"
  exit 0
fi
cmake --preset default >/dev/null
cmake --build --preset default -j 2 --target apiserver-sim kube-local injector | tail -1
sim=build/default/apiserver-sim/apiserver-sim
local_bin=build/default/kube/kube-local
injector=build/default/injector/injector
work="$(mktemp -d /tmp/bench-backends-XXXXXX)"
pid=""
cleanup() {
  if [[ -n "$pid" ]]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

echo "control plane start (kube-local up to /readyz and the default ServiceAccount):"
for i in $(seq 1 "$starts"); do
  "$local_bin" up --work-dir "$work/plane-$i" >"$work/up-$i.log" 2>&1 &
  pid=$!
  while ! grep -q "ready in" "$work/up-$i.log"; do
    if ! kill -0 "$pid" 2>/dev/null; then cat "$work/up-$i.log"; exit 1; fi
    sleep 0.2
  done
  sed -n 's/^kube-local: ready in \([0-9.]*\)s.*/  start '"$i"': \1 s/p' "$work/up-$i.log"
  kill -INT "$pid"
  wait "$pid" || true
  pid=""
done

rate() {
  local backend="$1"
  local start end
  start=$(date +%s.%N)
  "$sim" run --backend "$backend" --slow exclude --injector "$injector" -o json "${paths[@]}" \
    >"$work/$backend.json" 2>"$work/$backend.err" || true
  end=$(date +%s.%N)
  python3 - "$work/$backend.json" "$start" "$end" "$backend" <<'EOF'
import json, sys
report = json.load(open(sys.argv[1]))
wall = float(sys.argv[3]) - float(sys.argv[2])
scenarios = [s for s in report["scenarios"] if s["result"] != "skipped"]
steps = sum(len(s["steps"]) for s in scenarios)
print(f"  {sys.argv[4]:9}: {len(scenarios)} scenarios ({steps} steps) in {wall:.1f} s wall: "
      f"{60 * len(scenarios) / wall:.1f} scenarios/min "
      f"({report['summary']['skipped']} skipped, {report['summary']['failed']} failed)")
EOF
}
echo "scenarios per minute (slow scenarios excluded):"
rate simulator
rate kube
