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
#   4. a denial explained (a validating webhook says no: what the client gets and why);
#   5. the picture: `apiserver-sim report` writes one self-contained HTML file of the tutorial's
#      requests (sequence diagram, decision table, patches); its path is printed;
#   6. a lint finding: `apiserver-sim lint` on a webhook that locks out its own namespace
#      (scenarios/walkthroughs/06-self-lockout.yaml), with the rule, the reason and the fix;
#   7. (with --injector-webhook) the injector alone: offline `inject --explain`, and the webhook
#      answering one AdmissionReview over HTTPS (scripts/demo-injector.sh).
# Idempotent: everything it writes is under build/demo, recreated on each run. Once built, it
# takes well under a minute (parts 1-6: about 20 s on the 2-core development machine).
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

echo
echo "== 4. a denial, explained"
echo "\$ apiserver-sim explain scenarios/examples/deny.yaml --only-called --step 'create the pod'"
"$sim" explain scenarios/examples/deny.yaml --only-called --step 'create the pod' \
  --injector "$injector" 2>/dev/null

echo
echo "== 5. the picture of every request: one HTML file, no network needed to view it"
echo "\$ apiserver-sim report $seed/scenario.yaml --out report.html"
"$sim" report "$seed/scenario.yaml" --out "$work/report.html" --injector "$injector" 2>/dev/null
[[ -s "$work/report.html" ]] || { echo "demo: the report was not written"; exit 1; }
echo "report written: $work/report.html ($(wc -c < "$work/report.html") bytes)"
echo "open it in a browser: file://$work/report.html"

echo
echo "== 6. lint: a webhook set that would lock a cluster out, found before it is applied"
echo "\$ apiserver-sim lint scenarios/walkthroughs/06-self-lockout.yaml"
# lint exits 1 when it finds an error-level problem: that is the point of this part.
lint_status=0
"$sim" lint scenarios/walkthroughs/06-self-lockout.yaml || lint_status=$?
[[ $lint_status == 1 ]] || { echo "demo: lint was expected to report the lockout (exit 1), got $lint_status"; exit 1; }

if [[ $injector_webhook == 1 ]]; then
  echo
  echo "== 7. the injector on its own"
  bash scripts/demo-injector.sh
fi
echo
echo "Next: scenarios/walkthroughs/ (nine guided scenarios: explain them one by one),"
echo "      scenarios/FORMAT.md (write your own scenarios), apiserver-sim run scenarios (the library),"
echo "      scripts/demo.sh --injector-webhook (the injector alone), scripts/test.sh (all tests)."
