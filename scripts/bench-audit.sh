#!/usr/bin/env bash
# Benchmarks `apiserver-sim audit` on a large audit log (scripts/gen-audit-log.sh: a cluster
# injecting Linkerd sidecars into many pods, with the controller traffic around them): read speed
# in MB/s (of wall time and of CPU time: the machine may be shared) and peak RSS, for LOG alone
# and for LOG --compare LOG.
#   scripts/bench-audit.sh [SIZE_MB] [LOG]   (default 1024; LOG is generated unless given)
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb="${1:-1024}"
bash scripts/install-deps.sh >/dev/null
cmake --preset default >/dev/null
cmake --build --preset default -j 2 --target apiserver-sim | tail -1
sim=build/default/apiserver-sim/apiserver-sim
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log="${2:-}"
if [[ -z "$log" ]]; then
  log="$work/audit.log"
  bash scripts/gen-audit-log.sh "$log" "$size_mb"
fi
bytes=$(wc -c <"$log")

measure() {
  local name="$1"
  shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$sim" "$@" >"$work/out" 2>"$work/err" ||
    [[ $? -eq 1 ]]
  read -r wall user system rss_kb <"$work/time"
  awk -v b="$bytes" -v w="$wall" -v u="$user" -v s="$system" -v r="$rss_kb" -v n="$name" 'BEGIN {
    mb = b / 1e6
    printf "== %s: %.0f MB in %.1f s wall (%.0f MB/s), %.1f s CPU (%.0f MB/s of CPU), peak RSS %.0f MB\n",
      n, mb, w, mb / (w > 0 ? w : 1e-9), u + s, mb / (u + s > 0 ? u + s : 1e-9), r / 1024
  }'
  tail -1 "$work/out"
  if [[ -s "$work/err" ]]; then head -3 "$work/err"; fi
}

measure "audit LOG" audit "$log"
measure "audit LOG --compare LOG (both logs read)" audit "$log" --compare "$log"
