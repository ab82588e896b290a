#!/usr/bin/env bash
# The injector (Linkerd and Istio profiles) side by side with a trivial Go net/http webhook
# (scripts/bench/go-webhook, built with the machine's Go), a Node https webhook
# (scripts/bench/node-webhook.js) and nginx returning a static AdmissionReview (the ceiling):
# same ECDSA P-256 certificate, TLS 1.3, the same review, server on one core and wrk/hey on
# another. Prints requests per server CPU-second, p50/p99 at 1 and 16 keep-alive connections,
# the CPU cost of a new TLS connection, RSS and the ratio to Go, as a table or JSON. Meaningful
# only on an otherwise idle machine with at least two cores. See injector/README.md.
#
#   scripts/bench/compare.sh [--seconds S] [--rounds N] [--connections 1,16]
#                            [--servers injector-linkerd,injector-istio,go,node,nginx]
#                            [--server-cpu 0] [--client-cpu 1] [-o table|json]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
for tool in wrk hey nginx node go; do
  command -v "$tool" >/dev/null || [[ "$tool" == nginx && -x /usr/sbin/nginx ]] ||
    { echo "compare.sh: $tool is missing (bash scripts/install-deps.sh --bench)" >&2; exit 2; }
done
cmake --preset default >/dev/null
cmake --build --preset default -j 2 --target injector | tail -1 >&2
mkdir -p build/default/bench
# No dependencies outside the standard library: nothing is downloaded.
(cd scripts/bench/go-webhook && GOFLAGS=-mod=mod go build -trimpath \
  -o "$root/build/default/bench/go-webhook" .)
exec python3 scripts/bench/compare.py --injector build/default/injector/injector \
  --go-webhook build/default/bench/go-webhook "$@"
