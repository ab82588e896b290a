#!/usr/bin/env bash
# Benchmarks `apiserver-sim audit` on a large audit log (scripts/gen-audit-log.sh: a cluster
# injecting Linkerd sidecars into many pods, with the controller traffic around them): read speed
# in MB/s and events/s (of wall time and of CPU time: the machine may be shared) and peak RSS, for
# `audit chains LOG` (every Pod chain rebuilt and replayed), `audit chains -o json`, the same log
# gzip-compressed, `audit compare LOG LOG`, `audit assert LOG EXPECTATIONS` and `audit timeline LOG
# AUDIT_ID` (one request found in the whole log).
#   scripts/bench-audit.sh [SIZE_MB] [LOG]   (default 1024; LOG is generated unless given)
# Environment:
#   SIM=PATH      the apiserver-sim to measure (default: build/default's, built first)
#   OLD_SIM=PATH  also measure this one (e.g. a build of main), each command run by both in turn
#   ONLY=REGEX    only the measurements whose name matches
#   PIN=CPU       run every command on that CPU (taskset): old and new binaries alike
set -euo pipefail
cd "$(dirname "$0")/.."
size_mb="${1:-1024}"
sim="${SIM:-}"
if [[ -z "$sim" ]]; then
  bash scripts/install-deps.sh >/dev/null
  cmake --preset default >/dev/null
  nice -n 5 cmake --build --preset default -j 2 --target apiserver-sim | tail -1
  sim=build/default/apiserver-sim/apiserver-sim
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
log="${2:-}"
if [[ -z "$log" ]]; then
  log="$work/audit.log"
  bash scripts/gen-audit-log.sh "$log" "$size_mb"
fi
bytes=$(wc -c <"$log")
events=$(wc -l <"$log")

# What a CI job would assert on such a log: the injected Pods of one namespace, and every
# ConfigMap read of another (selects 1 event in 16, and 1 in 2).
cat >"$work/expectations.yaml" <<'YAML'
apiVersion: apiserver-sim.harness.dev/v1alpha1
kind: AuditExpectations
expectations:
  - name: team-7's Pods are injected
    match: {verb: create, resource: pods, namespace: team-7}
    expect:
      allowed: true
      code: 201
      annotations:
        subset:
          mutation.webhook.admission.k8s.io/round_0_index_0: '{"configuration":"linkerd-proxy-injector-webhook-config","webhook":"linkerd-proxy-injector.linkerd.io","mutated":true}'
  - name: team-9 reads its settings
    match: {verb: get, resource: configmaps, namespace: team-9}
    expect: {allowed: true, code: 200}
YAML

measure() {
  local name="$1" binary="$2" label="$3"
  shift 3
  if [[ -n "${ONLY:-}" && ! "$name" =~ $ONLY ]]; then return; fi
  local pin=()
  if [[ -n "${PIN:-}" ]]; then pin=(taskset -c "$PIN"); fi
  /usr/bin/time -f "%e %U %S %M" -o "$work/time" "${pin[@]}" "$binary" "$@" >"$work/out" 2>"$work/err" ||
    [[ $? -eq 1 ]]
  read -r wall user system rss_kb <"$work/time"
  awk -v b="$bytes" -v e="$events" -v w="$wall" -v u="$user" -v s="$system" -v r="$rss_kb" \
    -v n="$name" -v l="$label" 'BEGIN {
    mb = b / 1e6
    c = u + s > 0 ? u + s : 1e-9
    printf "== %s [%s]: %.0f MB, %d events in %.1f s wall (%.0f MB/s), %.1f s CPU (%.0f MB/s, %.0f events/s of CPU), peak RSS %.0f MB\n",
      n, l, mb, e, w, mb / (w > 0 ? w : 1e-9), u + s, mb / c, e / c, r / 1024
  }'
  tail -1 "$work/out"
  if [[ -s "$work/err" ]]; then head -3 "$work/err"; fi
}

# Each measurement with the old binary first (when given), then the new, back to back.
both() {
  local name="$1"
  shift
  if [[ -n "${OLD_SIM:-}" ]]; then measure "$name" "$OLD_SIM" old "$@"; fi
  measure "$name" "$sim" new "$@"
}

both "audit chains LOG" audit chains "$log"
both "audit chains -o json LOG" audit chains -o json "$log"
both "audit assert LOG EXPECTATIONS" audit assert "$log" "$work/expectations.yaml"
both "audit compare LOG LOG (both logs read, the second twice)" audit compare "$log" "$log"
# The last Pod CREATE of the log: every line is looked at, one event parsed.
audit_id=$(tail -c 1000000 "$log" | grep -o '"auditID":"[^"]*","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/[^"]*/pods"' |
  tail -1 | cut -d'"' -f4)
both "audit timeline LOG AUDIT_ID" audit timeline "$log" "$audit_id"
if [[ -z "${ONLY:-}" || "gzip" =~ $ONLY ]]; then
  gzip -1 -c "$log" >"$work/audit.log.gz"
  both "audit chains LOG.gz (gzip; sizes: of the uncompressed log)" audit chains "$work/audit.log.gz"
  rm -f "$work/audit.log.gz"
fi
