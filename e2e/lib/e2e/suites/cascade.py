"""Deletion propagation (Orphan, Foreground) and `kubectl rollout` on Deployments.

In a namespace `cascade`, nothing injected:
  * `kubectl delete deployment --cascade=orphan`: the Deployment goes (the API server keeps it
    with the `orphan` finalizer until the garbage collector has removed its ownerReference from
    the ReplicaSet); the ReplicaSet and its Pods stay, the Pods still owned by the ReplicaSet;
  * `kubectl delete deployment --cascade=foreground` with Pods held by a finalizer of their own:
    the Deployment and its ReplicaSet stay with deletionTimestamp and the `foregroundDeletion`
    finalizer, the Pods with deletionTimestamp, until the Pods' finalizer is patched away; then
    all three go, the Deployment last;
  * `kubectl rollout status --timeout=1s` (Pods never become available here: the message of a
    rollout waiting for its available replicas, then kubectl's timeout), `rollout restart` (a new
    ReplicaSet of revision 2), `rollout history` and `rollout undo`; a Deployment with
    progressDeadlineSeconds 1: Progressing False ProgressDeadlineExceeded, and `kubectl rollout
    status` says it "exceeded its progress deadline"; a restart with 4 replicas (the new
    ReplicaSet scaled to 2, the old one down to 3: maxSurge 1, maxUnavailable 1).
Pods never run outside k3d: checks are on the admitted objects.
"""
import json

from . import common

NS = "cascade"
HOLD = "e2e.example.com/hold"


def run(ctx):
    ctx.step("a namespace")
    common.create_namespace(ctx, NS)

    ctx.step("kubectl delete deployment --cascade=orphan: the ReplicaSet and Pods stay")
    ctx.apply(json.dumps(common.simple_deployment("keep", NS, replicas=2)))
    pods = ctx.wait_for_items("pods", NS, "app=keep", 2, "the Pods of Deployment keep")
    rs = ctx.wait_for_items("replicasets", NS, "app=keep", 1, "the ReplicaSet of keep")[0]
    ctx.kubectl("delete", "deployment", "keep", "-n", NS, "--cascade=orphan")
    ctx.check("Deployment keep is gone", ctx.get("deployment", "keep", NS) is None)
    kept = ctx.get("replicaset", rs["metadata"]["name"], NS)
    ctx.check("its ReplicaSet stays", kept is not None)
    ctx.check_equal("the ReplicaSet's ownerReferences (removed by the garbage collector)",
                    (kept or {}).get("metadata", {}).get("ownerReferences"), None)
    for pod in pods:
        now = ctx.get("pod", pod["metadata"]["name"], NS) or {"metadata": {}}
        ref = common.owner(now)
        ctx.check(f"Pod {pod['metadata']['name']} stays, owned by the ReplicaSet",
                  ref and ref["uid"] == rs["metadata"]["uid"], json.dumps(ref))
    ctx.kubectl("get", "replicasets,pods", "-n", NS, "-l", "app=keep")

    ctx.step("kubectl delete deployment --cascade=foreground: dependents first")
    held = common.simple_deployment("held", NS)
    held["spec"]["template"]["metadata"]["finalizers"] = [HOLD]
    ctx.apply(json.dumps(held))
    pod = ctx.wait_for_items("pods", NS, "app=held", 1, "the Pod of Deployment held")[0]
    pod_name = pod["metadata"]["name"]
    ctx.kubectl("delete", "deployment", "held", "-n", NS, "--cascade=foreground", "--wait=false")
    ctx.wait_for(f"Pod {pod_name} being deleted (garbage collector)", lambda: (
        ctx.get("pod", pod_name, NS) or {}).get("metadata", {}).get("deletionTimestamp"))
    deployment = ctx.get("deployment", "held", NS) or {"metadata": {}}
    ctx.check("Deployment held has a deletionTimestamp",
              "deletionTimestamp" in deployment["metadata"])
    ctx.check_equal("Deployment held's finalizers", deployment["metadata"].get("finalizers"),
                    ["foregroundDeletion"])
    held_rs = ctx.get("replicasets", namespace=NS, selector="app=held")["items"]
    ctx.check_equal("its ReplicaSet's finalizers (deleted in the foreground too)",
                    [r["metadata"].get("finalizers") for r in held_rs], [["foregroundDeletion"]])
    ctx.kubectl("get", "deployment", "held", "-n", NS, "-o",
                "jsonpath={.metadata.finalizers} {.metadata.deletionGracePeriodSeconds}")
    ctx.kubectl("patch", "pod", pod_name, "-n", NS, "--type=json",
                "-p", '[{"op":"remove","path":"/metadata/finalizers"}]')
    ctx.wait_for("Deployment held gone", lambda: ctx.get("deployment", "held", NS) is None)
    ctx.check("its ReplicaSet is gone",
              not ctx.get("replicasets", namespace=NS, selector="app=held")["items"])
    ctx.check(f"Pod {pod_name} is gone", ctx.get("pod", pod_name, NS) is None)

    ctx.step("kubectl rollout status, restart, history, undo")
    ctx.apply(json.dumps(common.simple_deployment("roll", NS)))
    ctx.wait_for_items("pods", NS, "app=roll", 1, "the Pod of Deployment roll")
    common.wait_for_status(ctx, "deployment", "roll", NS,
                           {"observedGeneration": 1, "replicas": 1, "updatedReplicas": 1,
                            "unavailableReplicas": 1})
    status = ctx.kubectl("rollout", "status", "deployment/roll", "-n", NS, "--timeout=1s",
                         check=False)
    ctx.check_equal("kubectl rollout status: exit status", status.returncode, 1)
    ctx.check_equal("kubectl rollout status: stdout", status.stdout,
                    'Waiting for deployment "roll" rollout to finish: '
                    "0 of 1 updated replicas are available...\n")
    ctx.check_equal("kubectl rollout status: stderr", status.stderr,
                    "error: timed out waiting for the condition\n")

    first = ctx.wait_for_items("replicasets", NS, "app=roll", 1, "the ReplicaSet of roll")[0]
    ctx.kubectl("rollout", "restart", "deployment/roll", "-n", NS)
    sets = ctx.wait_for_items("replicasets", NS, "app=roll", 2, "a second ReplicaSet of roll")
    common.wait_for_status(ctx, "deployment", "roll", NS,
                           {"observedGeneration": 2, "replicas": 2, "updatedReplicas": 1,
                            "unavailableReplicas": 2})
    by_revision = {r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]:
                   r for r in ctx.get("replicasets", namespace=NS, selector="app=roll")["items"]}
    ctx.check_equal("the ReplicaSets' revisions", sorted(by_revision), ["1", "2"])
    ctx.check_equal("the first ReplicaSet is revision 1",
                    by_revision.get("1", {}).get("metadata", {}).get("name"),
                    first["metadata"]["name"])
    ctx.check_equal("replicas of revisions 1 and 2 (one replica: the old is not scaled down)",
                    [by_revision.get(r, {}).get("spec", {}).get("replicas") for r in ("1", "2")],
                    [1, 1])
    ctx.check("revision 2's template has kubectl.kubernetes.io/restartedAt",
              "kubectl.kubernetes.io/restartedAt" in by_revision.get("2", {}).get(
                  "spec", {}).get("template", {}).get("metadata", {}).get("annotations", {}))
    status = ctx.kubectl("rollout", "status", "deployment/roll", "-n", NS, "--timeout=1s",
                         check=False)
    ctx.check_equal("kubectl rollout status after the restart: stdout", status.stdout,
                    'Waiting for deployment "roll" rollout to finish: '
                    "1 old replicas are pending termination...\n")
    history = ctx.kubectl("rollout", "history", "deployment/roll", "-n", NS)
    ctx.check_equal("kubectl rollout history",
                    [line.rstrip() for line in history.stdout.strip().splitlines()],
                    ["deployment.apps/roll", "REVISION  CHANGE-CAUSE", "1         <none>",
                     "2         <none>"])
    ctx.kubectl("rollout", "undo", "deployment/roll", "-n", NS)
    ctx.wait_for("the Deployment at revision 3", lambda: (
        ctx.get("deployment", "roll", NS) or {}).get("metadata", {}).get(
            "annotations", {}).get("deployment.kubernetes.io/revision") == "3")
    back = ctx.get("replicaset", first["metadata"]["name"], NS) or {"metadata": {}}
    annotations = back["metadata"].get("annotations", {})
    ctx.check_equal("the first ReplicaSet's revision and revision-history after the undo",
                    [annotations.get("deployment.kubernetes.io/revision"),
                     annotations.get("deployment.kubernetes.io/revision-history")], ["3", "1"])

    ctx.step("kubectl rollout restart with 4 replicas: within maxSurge 1 and maxUnavailable 1")
    ctx.apply(json.dumps(common.simple_deployment("wide", NS, replicas=4)))
    ctx.wait_for_items("pods", NS, "app=wide", 4, "the Pods of Deployment wide")
    ctx.kubectl("rollout", "restart", "deployment/wide", "-n", NS)

    def wide_sizes():
        sets = ctx.get("replicasets", namespace=NS, selector="app=wide")["items"]
        return sorted((r["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
                       r["spec"]["replicas"]) for r in sets)
    ctx.wait_for("the new ReplicaSet at 2 and the old at 3",
                 lambda: wide_sizes() == [("1", 3), ("2", 2)])
    status = ctx.kubectl("rollout", "status", "deployment/wide", "-n", NS, "--timeout=1s",
                         check=False)
    ctx.check_equal("kubectl rollout status of deployment wide: stdout", status.stdout,
                    'Waiting for deployment "wide" rollout to finish: '
                    "2 out of 4 new replicas have been updated...\n")

    ctx.step("a rollout without progress past its progressDeadlineSeconds")
    slow = common.simple_deployment("slow", NS)
    slow["spec"]["progressDeadlineSeconds"] = 1
    ctx.apply(json.dumps(slow))

    def timed_out():
        conditions = (ctx.get("deployment", "slow", NS) or {}).get("status", {}).get(
            "conditions", [])
        return [c for c in conditions if c.get("type") == "Progressing"
                and c.get("reason") == "ProgressDeadlineExceeded"]
    condition = ctx.wait_for("Progressing False ProgressDeadlineExceeded", timed_out)[0]
    slow_rs = ctx.get("replicasets", namespace=NS, selector="app=slow")["items"][0]
    ctx.check_equal("the Progressing condition", [condition["status"], condition["message"]],
                    ["False", f'ReplicaSet "{slow_rs["metadata"]["name"]}" has timed out '
                              "progressing."])
    status = ctx.kubectl("rollout", "status", "deployment/slow", "-n", NS, "--timeout=5s",
                         check=False)
    ctx.check_equal("kubectl rollout status of a rollout past its deadline",
                    [status.returncode, status.stderr],
                    [1, 'error: deployment "slow" exceeded its progress deadline\n'])
