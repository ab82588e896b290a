#!/usr/bin/env bash
# Benchmarks `apiserver-sim audit` on a large audit log (scripts/gen-audit-log.sh: a cluster
# injecting Linkerd sidecars into many pods, with the controller traffic around them): read speed
# in MB/s and events/s (of wall time and of CPU time: the machine may be shared) and peak RSS, for
# `audit chains LOG` (every Pod chain rebuilt and replayed), `audit chains -o json`, the same log
# gzip-compressed, and `audit compare LOG LOG`.
#   scripts/bench-audit.sh [SIZE_MB] [LOG]   (default 1024; LOG is generated unless given)
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb="${1:-1024}"
bash scripts/install-deps.sh >/dev/null
cmake --preset default >/dev/null
nice -n 5 cmake --build --preset default -j 2 --target apiserver-sim | tail -1
sim=build/default/apiserver-sim/apiserver-sim
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log="${2:-}"
if [[ -z "$log" ]]; then
  log="$work/audit.log"
  bash scripts/gen-audit-log.sh "$log" "$size_mb"
fi
bytes=$(wc -c <"$log")
events=$(wc -l <"$log")

measure() {
  local name="$1"
  shift
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "$sim" "$@" >"$work/out" 2>"$work/err" ||
    [[ $? -eq 1 ]]
  read -r wall user system rss_kb <"$work/time"
  awk -v b="$bytes" -v e="$events" -v w="$wall" -v u="$user" -v s="$system" -v r="$rss_kb" -v n="$name" 'BEGIN {
    mb = b / 1e6
    c = u + s > 0 ? u + s : 1e-9
    printf "== %s: %.0f MB, %d events in %.1f s wall (%.0f MB/s), %.1f s CPU (%.0f MB/s, %.0f events/s of CPU), peak RSS %.0f MB\n",
      n, mb, e, w, mb / (w > 0 ? w : 1e-9), u + s, mb / c, e / c, r / 1024
  }'
  tail -1 "$work/out"
  if [[ -s "$work/err" ]]; then head -3 "$work/err"; fi
}

measure "audit chains LOG" audit chains "$log"
measure "audit chains -o json LOG" audit chains -o json "$log"
gzip -1 -c "$log" >"$work/audit.log.gz"
measure "audit chains LOG.gz (sizes: of the uncompressed log)" audit chains "$work/audit.log.gz"
rm -f "$work/audit.log.gz"
measure "audit compare LOG LOG (both logs read, the second twice)" audit compare "$log" "$log"
