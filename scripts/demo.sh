#!/usr/bin/env bash
# The main job: the seed tutorial (Linkerd's proxy-injector walkthrough on k3d) played
# against the simulated kube-apiserver, with the real injector binary as the webhook over HTTPS.
#   1. `apiserver-sim explain` on scenarios/seed-tutorial/scenario.yaml: for every request, which
#      webhook matched and why (rules, selectors, matchPolicy), the call, its latency against the
#      timeout, the patch, reinvocation, the audit annotations;
#   2. the mutation chain read back from the audit log the simulator wrote (the same command reads
#      a real cluster's log, e.g. the k3d one in audit/tests/testdata);
#   3. the same cluster served over the Kubernetes REST API and driven with the real kubectl:
#      apply the tutorial's application.yaml (annotated namespace, Deployment), let the simulator's
#      controllers create the ReplicaSet and Pod, and see the proxy the injector added and the
#      Event it posted;
#   4. (with --injector-webhook) the injector alone: offline `inject --explain`, and the webhook
#      answering one AdmissionReview over HTTPS (scripts/demo-injector.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
injector_webhook=0
for arg in "$@"; do
  case "$arg" in
    --injector-webhook) injector_webhook=1 ;;
    *) echo "usage: scripts/demo.sh [--injector-webhook]" >&2; exit 2 ;;
  esac
done
bash scripts/install-deps.sh
echo "== building apiserver-sim and the injector (the first build takes a few minutes)"
export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true
cmake --preset default >/dev/null
cmake --build --preset default --target apiserver-sim injector | tail -1
# kubectl for part 3, built from Kubernetes' Go modules (a cold build takes many minutes, a warm
# one seconds; without Go it prints one "skipped" line and part 3 is skipped).
bash scripts/build-kube.sh
sim="$root/build/default/apiserver-sim/apiserver-sim"
injector="$root/build/default/injector/injector"
seed="scenarios/seed-tutorial"
work="$root/build/demo"
rm -rf "$work" && mkdir -p "$work"

echo
echo "== 1. the seed tutorial against the simulated kube-apiserver, explained"
echo "\$ apiserver-sim explain $seed/scenario.yaml --audit-log audit.log"
"$sim" explain "$seed/scenario.yaml" --audit-log "$work/audit.log" --injector "$injector" \
  --work-dir "$work/explain" 2>/dev/null

echo
echo "== 2. the mutation chains in the audit log ($(wc -l < "$work/audit.log") events)"
echo "\$ apiserver-sim audit audit.log"
"$sim" audit "$work/audit.log"

echo
echo "== 3. the same cluster over the Kubernetes REST API, with kubectl"
# The real kubectl built from the Kubernetes modules pinned in kube/go.mod (or $HARNESS_KUBECTL).
kubectl_bin="${HARNESS_KUBECTL:-$root/build/kube/bin/kubectl}"
if [[ ! -x "$kubectl_bin" ]]; then
  echo "demo: skipped: $kubectl_bin is not built (bash scripts/build-kube.sh builds it; needs Go 1.26)"
else
  echo "\$ apiserver-sim serve $seed/scenario.yaml --kubeconfig-out kubeconfig --audit-log serve-audit.log &"
  "$sim" serve "$seed/scenario.yaml" --kubeconfig-out "$work/kubeconfig" \
    --audit-log "$work/serve-audit.log" --injector "$injector" --work-dir "$work/serve" \
    > "$work/serve.out" 2> "$work/serve.err" &
  pid=$!
  trap 'kill $pid 2>/dev/null || true' EXIT
  for _ in $(seq 1 100); do [[ -s "$work/kubeconfig" ]] && break; sleep 0.1; done
  [[ -s "$work/kubeconfig" ]] || { echo "apiserver-sim serve did not start:"; cat "$work/serve.err"; exit 1; }
  cat "$work/serve.out"
  export KUBECONFIG="$work/kubeconfig"
  kubectl() { "$kubectl_bin" "$@"; }
  run() { echo "\$ $*"; "$@"; }
  echo "# as in the tutorial: the simple-app namespace (linkerd.io/inject: enabled) and the Deployment"
  run kubectl apply -f "$seed/application.yaml"
  echo "# the simulator's deployment and replicaset controllers create the ReplicaSet and its Pod"
  echo "# (as the replicaset controller's service account, so the injector is called as on a cluster):"
  for _ in $(seq 1 100); do
    [[ -n "$(kubectl get pods -n simple-app -o name 2>/dev/null)" ]] && break
    sleep 0.1
  done
  run kubectl get deployments,replicasets,pods -n simple-app
  echo "\$ kubectl get pods -n simple-app -o jsonpath=... # containers after injection"
  kubectl get pods -n simple-app -o jsonpath='{range .items[*]}{.metadata.name}{"\n  initContainers: "}{range .spec.initContainers[*]}{.name}{" "}{end}{"\n  containers: "}{range .spec.containers[*]}{.name}{" "}{end}{"\n"}{end}'
  run kubectl get events -n simple-app
  kill -TERM $pid
  wait $pid || true
  trap - EXIT
  echo "\$ apiserver-sim audit serve-audit.log"
  "$sim" audit "$work/serve-audit.log"
fi

if [[ $injector_webhook == 1 ]]; then
  echo
  echo "== 4. the injector on its own"
  bash scripts/demo-injector.sh
fi
echo
echo "Next: scenarios/FORMAT.md (write your own scenarios), apiserver-sim run scenarios (the library),"
echo "      scripts/demo.sh --injector-webhook (the injector alone), scripts/test.sh (all tests)."
