"""Reinvocation: a second mutating webhook (IfNeeded) runs again after the injector changed the Pod.

The seed tutorial's Linkerd injector (reinvocationPolicy Never) and a stub webhook,
`containers.e2e.harness.dev` in the configuration `a-containers` (sorted before Linkerd's, so it
runs first), reinvocationPolicy IfNeeded, that writes the names of the Pod's containers into an
annotation. Round 0: the stub sees only the application container, Linkerd adds its two; the
object changed after the stub's call, so kube-apiserver calls the stub again in round 1
(docs/admission-chain.md §6): the stored annotation names the injected containers, the audit
chain has round 1, and the stub received two CREATEs per Pod.
"""
import json
import os

from . import common

STUB = "containers.e2e.harness.dev"
ANNOTATION = "e2e.harness.dev/containers"


def run(ctx):
    common.install_linkerd(ctx)
    stub = ctx.target.start_stub("containers-stub")
    ctx.step("a second mutating webhook, IfNeeded, ordered before Linkerd's")
    ctx.apply(json.dumps({
        "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "a-containers"},
        "webhooks": [{"name": STUB,
                      "clientConfig": stub.client_config_for("/annotate"),
                      "rules": [{"operations": ["CREATE"], "apiGroups": [""],
                                 "apiVersions": ["v1"], "resources": ["pods"]}],
                      "namespaceSelector": {"matchLabels": {
                          "kubernetes.io/metadata.name": "simple-app"}},
                      "reinvocationPolicy": "IfNeeded", "failurePolicy": "Fail",
                      "sideEffects": "None", "timeoutSeconds": 10,
                      "admissionReviewVersions": ["v1"]}]}))
    common.create_namespace(ctx, "simple-app", annotations={"linkerd.io/inject": "enabled"})
    common.wait_until_effective(
        ctx, "both webhooks are called", "simple-app",
        lambda code, pod: code == 0 and common.has_container(pod, "linkerd-proxy")
        and ANNOTATION in pod["metadata"].get("annotations", {}))

    ctx.step("kubectl apply -f application.yaml (seed 000)")
    ctx.apply(os.path.join(ctx.repo, "scenarios", "seed-tutorial", "application.yaml"))
    pods = common.check_deployment_pods(ctx, "simple-app-v1", "simple-app")
    for pod in pods:
        name = pod["metadata"]["name"]
        common.check_linkerd_injected(ctx, pod, "simple-app-v1")
        ctx.check_equal(f"Pod {name} annotation {ANNOTATION} (written by the stub's second call)",
                        pod["metadata"].get("annotations", {}).get(ANNOTATION),
                        "http-app|linkerd-init,linkerd-proxy")

    ctx.step("the stub was called twice per Pod: round 0, then reinvoked")
    calls = [c for c in stub.calls() if c["namespace"] == "simple-app" and not c["dryRun"]]
    ctx.check_equal("the stub's calls for the Pod (containers it saw)",
                    [c["containers"] for c in calls],
                    ["http-app|", "http-app|linkerd-init,linkerd-proxy"])

    ctx.step("the audit log: round 0 both webhooks, round 1 the stub again")
    _, chains = ctx.audit_chains()
    for pod in pods:
        common.check_chain(ctx, chains, pod["metadata"]["name"], "simple-app", [
            (0, 0, STUB, "mutated"),
            (0, 1, "linkerd-proxy-injector.linkerd.io", "mutated"),
            (1, 0, STUB, "mutated")])
