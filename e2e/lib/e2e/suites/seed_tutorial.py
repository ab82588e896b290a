"""The seed tutorial: Linkerd injects the Pods of simple-app-v1 and simple-app-v2.

As seed 000 does it: the mesh's injector and its webhook configuration, then `kubectl apply -f
application.yaml` (the namespace annotated linkerd.io/inject: enabled, the Deployment), plus the
second application its logs show (simple-app-v2, a Deployment and a Service). The Deployment and
ReplicaSet controllers create the Pods; the Pods are injected (checked on the admitted objects:
they never run outside k3d); `kubectl get events` shows Injected on each Deployment; the audit
log's mutation chain of each Pod CREATE is read back with `apiserver-sim audit`.
"""
import os

from . import common


def run(ctx):
    common.install_linkerd(ctx)
    ctx.step("wait until the apiserver calls the new webhook")
    common.create_namespace(ctx, "e2e-probe", annotations={"linkerd.io/inject": "enabled"})
    common.wait_until_effective(
        ctx, "the proxy injector is called", "e2e-probe",
        lambda code, pod: code == 0 and common.has_container(pod, "linkerd-proxy"))

    ctx.step("kubectl apply -f application.yaml (seed 000), and simple-app-v2")
    ctx.apply(os.path.join(ctx.repo, "scenarios", "seed-tutorial", "application.yaml"))
    ctx.apply(os.path.join(ctx.repo, "e2e", "suites", "seed-tutorial", "app-v2.yaml"))

    ctx.step("the controllers create each Deployment's ReplicaSet and Pod; the Pods are injected")
    pods = {}
    for deployment in ("simple-app-v1", "simple-app-v2"):
        for pod in common.check_deployment_pods(ctx, deployment, "simple-app"):
            common.check_linkerd_injected(ctx, pod, deployment)
            pods[pod["metadata"]["name"]] = deployment
    ctx.kubectl("get", "pods", "-n", "simple-app", "-o", "wide")

    ctx.step("the Deployments' and ReplicaSets' status: nothing ever becomes available")
    for deployment in ("simple-app-v1", "simple-app-v2"):
        common.wait_for_status(ctx, "deployment", deployment, "simple-app", {
            "replicas": 1, "updatedReplicas": 1, "unavailableReplicas": 1,
            "conditions": {"Available": "False", "Progressing": "True"}})
    for rs in ctx.get("replicasets", namespace="simple-app")["items"]:
        common.wait_for_status(ctx, "replicaset", rs["metadata"]["name"], "simple-app",
                               {"replicas": 1, "fullyLabeledReplicas": 1})
    ctx.kubectl("get", "deployments,replicasets", "-n", "simple-app")

    ctx.step("kubectl get events: the injector's Injected Event on each Deployment")

    def injected_events():
        events = ctx.get("events", namespace="simple-app")["items"]
        found = {e["involvedObject"]["name"] for e in events
                 if e.get("reason") == "Injected"
                 and e.get("message") == "Linkerd sidecar proxy injected"
                 and e["involvedObject"].get("kind") == "Deployment"}
        return found if found >= {"simple-app-v1", "simple-app-v2"} else None
    found = ctx.wait_for("Injected events on both Deployments", injected_events)
    ctx.check("Event Injected (Linkerd sidecar proxy injected) on Deployments simple-app-v1 and "
              "simple-app-v2", found)
    ctx.kubectl("get", "events", "-n", "simple-app", "--sort-by=.metadata.creationTimestamp")

    ctx.step("the audit log: who created each Pod, and its mutation chain")
    creates = common.pod_create_events(ctx, "simple-app")
    _, chains = ctx.audit_chains()
    for name in pods:
        event = creates.get(name)
        if ctx.check(f"audit log has the CREATE of Pod {name}", event is not None):
            ctx.check_equal(f"Pod {name} was created by the replicaset controller",
                            event.get("user", {}).get("username"),
                            common.REPLICASET_CONTROLLER)
        common.check_chain(ctx, chains, name, "simple-app",
                           [(0, 0, "linkerd-proxy-injector.linkerd.io", "mutated, patch of")])
    service = ("create", "services", "simple-app/simple-app-v2")
    lines = chains.get(service) or []
    ctx.check("Service simple-app-v2 went through the injector, which did not mutate it",
              [(s["webhook"], s["outcome"]) for s in common.webhook_steps(lines)]
              == [("linkerd-proxy-injector.linkerd.io", "not mutated")], "\n".join(lines))
