"""Namespace deletion and kubectl patch, as kube-apiserver and the namespace controller do them.

A namespace `doomed` gets its `default` ServiceAccount (the serviceaccount controller), a
Deployment (ReplicaSet, Pod: the pod-template-hash of Kubernetes' controller.ComputeHash), a
ConfigMap from `kubectl create configmap` (kubectl's typed client sends protobuf), a ConfigMap changed by `kubectl patch` of each type (strategic
merge, merge, JSON patch: each a PATCH through the admission chain, verb patch in the audit log)
and a ConfigMap holding a finalizer. `kubectl delete namespace --wait=false`:
  * the Namespace stays, phase Terminating, deletionTimestamp set, spec.finalizers [kubernetes];
  * a create in it is refused: `Error from server (Forbidden): error when creating "STDIN":
    configmaps "late" is forbidden: unable to create new content in namespace doomed because it
    is being terminated`;
  * the namespace controller deletes its content (its service account in the audit log, Pods
    first), the ConfigMap with the finalizer stays, marked as deleting, and the Namespace's
    conditions say so (NamespaceContentRemaining, NamespaceFinalizersRemaining with upstream's
    messages);
  * once `kubectl patch` removes that finalizer the ConfigMap goes, the controller finalizes the
    Namespace (PUT .../finalize) and it is gone.
"""
import json

from . import common

NS = "doomed"
HOLD = "e2e.harness.dev/hold"


def configmap(name, data=None, finalizers=None):
    metadata = {"name": name, "namespace": NS}
    if finalizers:
        metadata["finalizers"] = finalizers
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata,
                       "data": data or {}})


def conditions(ns):
    return {c["type"]: c for c in (ns or {}).get("status", {}).get("conditions", [])}


def run(ctx):
    ctx.step("a namespace with a Deployment and ConfigMaps")
    common.create_namespace(ctx, NS)
    ctx.wait_for("the default ServiceAccount (serviceaccount controller)",
                 lambda: ctx.get("serviceaccount", "default", NS))
    ctx.apply(json.dumps(common.simple_deployment("web", NS)))
    ctx.apply(configmap("settings", {"mode": "a"}))
    ctx.apply(configmap("held", {"k": "v"}, [HOLD]))
    pods = ctx.wait_for_items("pods", NS, "app=web", 1, "the Deployment's Pod")
    # controller.ComputeHash of this template as kube-controller-manager v1.37.2 computes it (the
    # simulator asks kube-cel for Kubernetes' own function).
    ctx.check_equal("the ReplicaSet's pod-template-hash",
                    pods[0]["metadata"]["labels"].get("pod-template-hash"), "54cb9f4f5f")
    done = ctx.kubectl("create", "configmap", "typed", "-n", NS, "--from-literal=a=b",
                       check=False)
    ctx.check_equal("kubectl create configmap (a protobuf body)", done.stdout.strip(),
                    "configmap/typed created")

    ctx.step("kubectl patch: strategic merge, merge, JSON patch")
    for args, expected in [
            (["-p", '{"data":{"level":"3"}}'], "configmap/settings patched"),
            (["--type", "merge", "-p", '{"data":{"mode":null}}'], "configmap/settings patched"),
            (["--type", "json", "-p", '[{"op":"add","path":"/data/extra","value":"x"}]'],
             "configmap/settings patched"),
            (["--type", "merge", "-p", '{"data":{"extra":"x"}}'],
             "configmap/settings patched (no change)")]:
        done = ctx.kubectl("patch", "configmap", "settings", "-n", NS, *args, check=False)
        ctx.check_equal(f"kubectl patch {' '.join(args[:-1])}: output", done.stdout.strip(),
                        expected)
    ctx.check_equal("the patched data", ctx.get("configmap", "settings", NS)["data"],
                    {"level": "3", "extra": "x"})
    done = ctx.kubectl("patch", "configmap", "settings", "-n", NS, "--type", "json", "-p",
                       '[{"op":"remove","path":"/data/missing"}]', check=False)
    ctx.check_equal("a JSON patch that does not apply: kubectl's message", done.stderr.strip(),
                    'The request is invalid: the server rejected our request due to an error in '
                    'our request')
    patches = [e for e in ctx.audit_events()
               if e.get("stage") == "ResponseComplete" and e.get("verb") == "patch"
               and e.get("objectRef", {}).get("resource") == "configmaps"
               and e.get("objectRef", {}).get("name") == "settings"]
    ctx.check_equal("the audit log: PATCH requests of the ConfigMap", len(patches), 5)

    ctx.step("kubectl delete namespace: Terminating")
    done = ctx.kubectl("delete", "namespace", NS, "--wait=false")
    ctx.check_equal("kubectl's output", done.stdout.strip(), f'namespace "{NS}" deleted')
    ns = ctx.get("namespace", NS)
    if ctx.check("the Namespace stays", ns is not None):
        ctx.check_equal("its phase", ns.get("status", {}).get("phase"), "Terminating")
        ctx.check("its deletionTimestamp", ns["metadata"].get("deletionTimestamp"))
        ctx.check_equal("its spec.finalizers", ns.get("spec", {}).get("finalizers"),
                        ["kubernetes"])
    done = ctx.kubectl("apply", "-f", "-", stdin=configmap("late"), check=False)
    ctx.check_equal("a create in it: kubectl's message", done.stderr.strip(),
                    'Error from server (Forbidden): error when creating "STDIN": configmaps '
                    f'"late" is forbidden: unable to create new content in namespace {NS} '
                    'because it is being terminated')

    ctx.step("the namespace controller: content deleted, the finalizer holds the Namespace")
    ns = ctx.wait_for("the NamespaceFinalizersRemaining condition", lambda: (
        lambda n: n if conditions(n).get("NamespaceFinalizersRemaining", {}).get("status")
        == "True" else None)(ctx.get("namespace", NS)))
    found = conditions(ns)
    ctx.check_equal("NamespaceContentRemaining", {
        k: found.get("NamespaceContentRemaining", {}).get(k) for k in ("status", "reason",
                                                                         "message")},
        {"status": "True", "reason": "SomeResourcesRemain",
         "message": "Some resources are remaining: configmaps. has 1 resource instances"})
    ctx.check_equal("NamespaceFinalizersRemaining message",
                    found["NamespaceFinalizersRemaining"].get("message"),
                    "Some content in the namespace has finalizers remaining: "
                    f"{HOLD} in 1 resource instances")
    ctx.check_equal("NamespaceDeletionDiscoveryFailure",
                    found.get("NamespaceDeletionDiscoveryFailure", {}).get("reason"),
                    "ResourcesDiscovered")
    for resource in ("pods", "replicasets", "deployments", "serviceaccounts"):
        listed = ctx.get(resource, namespace=NS)
        ctx.check(f"no {resource} left", listed is not None and not listed["items"],
                  json.dumps([i["metadata"]["name"] for i in (listed or {}).get("items", [])]))
    held = ctx.get("configmap", "held", NS)
    if ctx.check("the ConfigMap with a finalizer stays", held is not None):
        ctx.check("marked as deleting", held["metadata"].get("deletionTimestamp"))
        ctx.check_equal("with deletionGracePeriodSeconds",
                        held["metadata"].get("deletionGracePeriodSeconds"), 0)
    controller = "system:serviceaccount:kube-system:namespace-controller"
    deletes = [e for e in ctx.audit_events()
               if e.get("stage") == "ResponseComplete" and e.get("verb") == "deletecollection"
               and e.get("objectRef", {}).get("namespace") == NS
               and e.get("objectRef", {}).get("resource") == "pods"]
    ctx.check("the audit log: the Pods deleted by the namespace controller",
              deletes and all(e.get("user", {}).get("username") == controller for e in deletes),
              json.dumps([e.get("user") for e in deletes]))

    ctx.step("the finalizer removed: the ConfigMap and the Namespace go")
    done = ctx.kubectl("patch", "configmap", "held", "-n", NS, "--type", "json", "-p",
                       '[{"op":"remove","path":"/metadata/finalizers"}]')
    ctx.check_equal("kubectl patch's output", done.stdout.strip(), "configmap/held patched")
    ctx.wait_for("the Namespace to be gone", lambda: ctx.get("namespace", NS) is None)
    finalized = [e for e in ctx.audit_events()
                 if e.get("stage") == "ResponseComplete" and e.get("verb") == "update"
                 and e.get("objectRef", {}).get("resource") == "namespaces"
                 and e.get("objectRef", {}).get("subresource") == "finalize"
                 and e.get("objectRef", {}).get("name") == NS]
    ctx.check("the audit log: the namespace controller's finalize",
              finalized and finalized[-1].get("user", {}).get("username") == controller,
              json.dumps([e.get("user") for e in finalized]))
