#!/usr/bin/env bash
# The injector on its own (scripts/demo.sh --injector-webhook): the sidecar injector on the seed
# tutorial (namespace simple-app annotated linkerd.io/inject: enabled, Deployment simple-app-v1
# and its Pod).
#   1. offline: `injector inject --explain` on the tutorial's application.yaml;
#   2. online: the injector as an HTTPS webhook on 127.0.0.1 with freshly generated certificates,
#      sent the Pod's AdmissionReview as kube-apiserver sends it; the JSON patch it answers, the
#      Event it would post, its health and metrics endpoints; then a graceful SIGTERM.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
bash scripts/install-deps.sh
echo "== building the injector (the first build takes a few minutes)"
cmake --preset default >/dev/null
cmake --build --preset default --target injector | tail -1
injector="$root/build/default/injector/injector"
seed="$root/scenarios/seed-tutorial"
work="$root/build/demo"
rm -rf "$work/injector" && mkdir -p "$work/injector"
work="$work/injector"

echo
echo "== 1. offline: what the webhook does to the tutorial's objects"
echo "\$ injector inject scenarios/seed-tutorial/application.yaml --explain"
"$injector" inject "$seed/application.yaml" --explain

echo
echo "== 2. online: the webhook over HTTPS"
bash scripts/gen-certs.sh --out "$work/certs" \
  --dns linkerd-proxy-injector.linkerd.svc --dns localhost --ip 127.0.0.1
cp "$work/certs/ca.crt" "$work/trust-anchors.pem"
echo "proxy: {}" > "$work/values.yaml"
"$injector" serve --address 127.0.0.1 --port 0 --admin-port 0 \
  --tls-cert "$work/certs/tls.crt" --tls-key "$work/certs/tls.key" \
  --values "$work/values.yaml" --trust-anchors "$work/trust-anchors.pem" \
  --objects "$seed/application.yaml" --objects "$seed/owners.yaml" \
  --ports-file "$work/ports.json" 2> "$work/injector.log" &
pid=$!
trap 'kill $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [[ -s "$work/ports.json" ]] && break; sleep 0.1; done
[[ -s "$work/ports.json" ]] || { echo "the injector did not start:"; cat "$work/injector.log"; exit 1; }
webhook_port=$(sed -E 's/.*"webhook":([0-9]+).*/\1/' "$work/ports.json")
admin_port=$(sed -E 's/.*"admin":([0-9]+).*/\1/' "$work/ports.json")
echo "injector listening on https://127.0.0.1:$webhook_port (admin http://127.0.0.1:$admin_port)"

echo "\$ injector review scenarios/seed-tutorial/pod.yaml > review.json   # what kube-apiserver sends"
"$injector" review "$seed/pod.yaml" --uid 7f0c2a52-5e2b-4d1c-9a43-3b2f0c6d1e99 \
  --user system:serviceaccount:kube-system:replicaset-controller > "$work/review.json"
echo "\$ curl --cacert ca.crt https://127.0.0.1:$webhook_port/?timeout=10s --data @review.json"
curl -sS --cacert "$work/certs/ca.crt" -H 'Content-Type: application/json' \
  --data @"$work/review.json" "https://127.0.0.1:$webhook_port/?timeout=10s" > "$work/response.json"
echo "response: $(grep -o '"response":{"allowed":[a-z]*' "$work/response.json" | head -1)..."
patch=$(grep -o '"patch":"[^"]*"' "$work/response.json" | sed -E 's/"patch":"(.*)"/\1/' | base64 -d)
echo "the JSON patch, one line per operation (values elided):"
echo "$patch" | grep -o '{"op":"[a-z]*","path":"[^"]*"' | sed -E 's/\{"op":"([a-z]*)","path":"([^"]*)"/  \1 \2/'

echo
echo "\$ curl http://127.0.0.1:$admin_port/metrics | grep proxy_inject"
curl -sS "http://127.0.0.1:$admin_port/metrics" | grep '^proxy_inject' | cut -c1-200
echo "\$ curl http://127.0.0.1:$admin_port/readyz"
curl -sS "http://127.0.0.1:$admin_port/readyz"

kill -TERM $pid
wait $pid && echo "injector stopped gracefully (exit 0)"
trap - EXIT
echo
echo "== the injector's log"
cat "$work/injector.log"
