#!/usr/bin/env bash
# The injector (Linkerd and Istio profiles) side by side with a trivial Go net/http webhook
# (scripts/bench/go-webhook, built with the machine's Go), Istio's own sidecar injector built from
# its Go module (scripts/bench/anchors/istio, the same-work anchor of the Istio profile), a Node
# https webhook (scripts/bench/node-webhook.js) and nginx returning a static AdmissionReview (the
# ceiling): same ECDSA P-256 certificate, TLS 1.3, the same review, server on one core and
# wrk/hey on another. Prints requests per server CPU-second, p50/p99 at 1 and 16 keep-alive
# connections, the CPU cost of a new TLS connection, RSS and the ratios to Go and to the real
# injector, as a table or JSON. Meaningful only on an otherwise idle machine with at least two
# cores. See injector/README.md. Without Go, the Go servers are left out (one line says so).
#
#   scripts/bench/compare.sh [--seconds S] [--rounds N] [--connections 1,16]
#                            [--servers injector-linkerd,injector-istio,istio-upstream,go,node,nginx]
#                            [--server-cpu 0] [--client-cpu 1] [-o table|json]
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
cd "$root"
for tool in wrk hey nginx node; do
  command -v "$tool" >/dev/null || [[ "$tool" == nginx && -x /usr/sbin/nginx ]] ||
    { echo "compare.sh: $tool is missing (bash scripts/install-deps.sh --bench)" >&2; exit 2; }
done
cmake --preset default >/dev/null
cmake --build --preset default -j 2 --target injector | tail -1 >&2
mkdir -p build/default/bench
go_servers=()
if command -v go >/dev/null; then
  # No dependencies outside the standard library: nothing is downloaded.
  (cd scripts/bench/go-webhook && GOFLAGS=-mod=mod go build -trimpath \
    -o "$root/build/default/bench/go-webhook" .)
  go_servers+=(--go-webhook build/default/bench/go-webhook)
  # istio.io/istio and its dependencies through the module proxy (go.sum pins them); the first
  # build takes minutes, later ones come from Go's build cache.
  if [[ " $* " != *" --servers "* || " $* " == *istio-upstream* ]]; then
    echo "compare.sh: building Istio's injector (scripts/bench/anchors/istio)" >&2
    (cd scripts/bench/anchors/istio && go build -trimpath \
      -o "$root/build/default/bench/istio-anchor" .)
    go_servers+=(--istio-anchor build/default/bench/istio-anchor)
  fi
else
  echo "compare.sh: go is not installed: the Go webhook and Istio's own injector are left out" >&2
fi
exec python3 scripts/bench/compare.py --injector build/default/injector/injector \
  "${go_servers[@]}" "$@"
