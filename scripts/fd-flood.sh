#!/usr/bin/env bash
# Floods `injector serve` with idle TCP connections (no TLS) while its file descriptor limit is
# low, and reports the CPU time it used and how much it logged during the flood, then whether it
# answers once the connections close. A measurement, not a test.
#
#   scripts/fd-flood.sh [--injector BIN] [--seconds N] [--nofile N] [--connections N]
#                       [-- extra serve flags, e.g. --max-connections 1000]
#
# Writes only under build/ (a scratch directory removed afterwards).
set -euo pipefail
cd "$(dirname "$0")/.."
injector=build/default/injector/injector seconds=5 nofile=256 connections=400
while [[ $# -gt 0 ]]; do
  case "$1" in
    --injector) injector="$2"; shift 2 ;;
    --seconds) seconds="$2"; shift 2 ;;
    --nofile) nofile="$2"; shift 2 ;;
    --connections) connections="$2"; shift 2 ;;
    --) shift; break ;;
    *) echo "fd-flood.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
done
[[ -x "$injector" ]] || { echo "fd-flood.sh: $injector is not built" >&2; exit 1; }
mkdir -p build
dir=$(mktemp -d "$PWD/build/fd-flood.XXXXXX")
pid=""
cleanup() {
  [[ -n "$pid" ]] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

bash scripts/gen-certs.sh --out "$dir" >/dev/null
echo "proxy: {}" > "$dir/values.yaml"
seed=scenarios/seed-tutorial
(
  ulimit -n "$nofile"
  exec "$injector" --log-level info serve --address 127.0.0.1 --port 0 --admin-port -1 \
    --tls-cert "$dir/tls.crt" --tls-key "$dir/tls.key" --values "$dir/values.yaml" \
    --trust-anchors "$dir/ca.crt" --objects "$seed/application.yaml" \
    --ports-file "$dir/ports.json" "$@"
) > "$dir/injector.log" 2>&1 &
pid=$!
for _ in $(seq 150); do [[ -s "$dir/ports.json" ]] && break; sleep 0.1; done
port=$(sed -E 's/.*"webhook":([0-9]+).*/\1/' "$dir/ports.json")

cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$pid/stat"; }
ticks_per_second=$(getconf CLK_TCK)
log_before=$(wc -c < "$dir/injector.log")
cpu_before=$(cpu_ticks)

fds=()
for _ in $(seq "$connections"); do
  exec {fd}<>"/dev/tcp/127.0.0.1/$port"
  fds+=("$fd")
done
sleep "$seconds"
cpu_after=$(cpu_ticks)
log_after=$(wc -c < "$dir/injector.log")
lines=$(tail -c +"$((log_before + 1))" "$dir/injector.log" | wc -l)
for fd in "${fds[@]}"; do exec {fd}>&-; done

started=$(date +%s.%N)
if answer=$(curl -sk --max-time 10 "https://127.0.0.1:$port/healthz"); then :; else answer=""; fi
answered_after=$(awk -v a="$started" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')

cpu=$(awk -v t="$((cpu_after - cpu_before))" -v hz="$ticks_per_second" 'BEGIN { printf "%.2f", t / hz }')
share=$(awk -v c="$cpu" -v s="$seconds" 'BEGIN { printf "%.0f", 100 * c / s }')
echo "flood: $connections idle connections for ${seconds} s, ulimit -n $nofile, flags: ${*:-none}"
echo "injector CPU during the flood: ${cpu} s (${share}% of a core)"
echo "log written during the flood: $((log_after - log_before)) bytes, $lines lines"
echo "first log lines of the flood:"
tail -c +"$((log_before + 1))" "$dir/injector.log" | head -3 | cut -c1-200 || true
if [[ "$answer" == ok* ]]; then
  echo "after the flood: /healthz answered in ${answered_after} s"
else
  echo "after the flood: /healthz not answered"
fi
