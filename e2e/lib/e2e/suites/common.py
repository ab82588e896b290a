"""Steps several suites share: installing a webhook, waiting until the apiserver uses it, checking
Deployment -> ReplicaSet -> Pod ownership and the audit chains."""
import json
import os

from ..context import HarnessError, webhook_steps

REPLICASET_CONTROLLER = "system:serviceaccount:kube-system:replicaset-controller"
# Outside k3d nothing schedules or runs a Pod: it stays Pending, unscheduled.
NEVER_RUNS = "no scheduler or kubelet outside k3d: the Pod is admitted and stored, never run"


def deploy_dir(ctx, name):
    return os.path.join(ctx.repo, "e2e", "deploy", name)


def client_config_yaml(config):
    # A JSON object is a YAML flow mapping: the manifest templates take it inline.
    return json.dumps(config)


def install_linkerd(ctx):
    """The seed tutorial's Linkerd proxy injector: namespace, injector, webhook configuration."""
    ctx.step("install Linkerd's proxy injector (the injector of this project, Linkerd profile)")
    ctx.apply(os.path.join(deploy_dir(ctx, "linkerd-proxy-injector"), "namespace.yaml"))
    seed = os.path.join(ctx.repo, "scenarios", "seed-tutorial")
    webhook = ctx.target.start_injector(
        "linkerd-proxy-injector",
        ["--profile", "linkerd", "--values", os.path.join(seed, "linkerd-values.yaml"),
         "--trust-anchors", os.path.join(seed, "trust-anchors.pem"),
         "--linkerd-namespace", "linkerd"],
        dns_names=["linkerd-proxy-injector.linkerd.svc"])
    ctx.apply(ctx.render(os.path.join(deploy_dir(ctx, "linkerd-proxy-injector"),
                                      "mutatingwebhookconfiguration.yaml.in"),
                         CLIENT_CONFIG=client_config_yaml(webhook.client_config)))
    return webhook


def create_namespace(ctx, name, annotations=None, labels=None):
    """`kubectl apply` of a Namespace. Not `kubectl create namespace`: that command sends
    protobuf, which the simulator does not decode (415; e2e/README.md)."""
    ctx.apply(json.dumps({"apiVersion": "v1", "kind": "Namespace",
                          "metadata": {"name": name, "annotations": annotations or {},
                                       "labels": labels or {}}}))


def probe_pod(name, namespace, annotations=None, labels=None):
    return json.dumps({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": name, "namespace": namespace,
                                    "annotations": annotations or {}, "labels": labels or {}},
                       "spec": {"containers": [{"name": "probe", "image": "busybox:1.36"}]}})


def wait_until_effective(ctx, what, namespace, predicate, labels=None):
    """kube-apiserver reads webhook configurations from an informer: a request right after the
    configuration was written may not see it. Sends a dry-run Pod CREATE until predicate(result)
    holds (result: (exit status, the Pod or the error text)), as a platform team would."""
    manifest = probe_pod("e2e-probe", namespace, labels=labels)

    def probe():
        done = ctx.kubectl("create", "--dry-run=server", "-f", "-", "-o", "json",
                           stdin=manifest, check=False, quiet=True)
        result = json.loads(done.stdout) if done.returncode == 0 else done.stderr
        return predicate(done.returncode, result)
    ctx.wait_for(what, probe)
    ctx.say(f"  {what} (a dry-run Pod CREATE in {namespace} shows it)")


def wait_until_audited(ctx, what, namespace, prefix, value):
    """Like wait_until_effective, for a webhook whose effect shows only in the audit log (one
    that fails open): dry-run Pod CREATEs until one's audit event has an annotation whose key
    starts with `prefix` and whose value is `value`."""
    sent = []

    def probe():
        name = f"e2e-audit-probe-{len(sent)}"
        sent.append(name)
        ctx.kubectl("create", "--dry-run=server", "-f", "-", "-o", "name",
                    stdin=probe_pod(name, namespace), check=False, quiet=True)
        for event in ctx.audit_events():
            ref = event.get("objectRef", {})
            if (event.get("stage") == "ResponseComplete" and ref.get("name") in sent
                    and ref.get("namespace") == namespace
                    and any(k.startswith(prefix) and v == value
                            for k, v in event.get("annotations", {}).items())):
                return True
        return False
    ctx.wait_for(what, probe)
    ctx.say(f"  {what} (the audit event of a dry-run Pod CREATE in {namespace} has {prefix}*)")


def simple_deployment(name, namespace, template_labels=None, replicas=1):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": dict({"app": name},
                                                              **(template_labels or {}))},
                                  "spec": {"containers": [{"name": "app",
                                                           "image": "nginx:1.27"}]}}}}


def failed_create(ctx, namespace):
    """A Deployment in `namespace` whose Pod cannot be admitted: the ReplicaSet's FailedCreate
    Events (waited for)."""
    ctx.step("a Deployment: its ReplicaSet cannot create the Pod")
    ctx.apply(json.dumps(simple_deployment("app", namespace)))
    return ctx.wait_for("a FailedCreate Event", lambda: [
        e for e in ctx.get("events", namespace=namespace)["items"]
        if e.get("reason") == "FailedCreate"])


def has_container(pod, name):
    spec = pod.get("spec", {}) if isinstance(pod, dict) else {}
    return any(c.get("name") == name for c in
               spec.get("containers", []) + spec.get("initContainers", []))


def owner(obj):
    refs = [r for r in obj["metadata"].get("ownerReferences", []) if r.get("controller")]
    return refs[0] if len(refs) == 1 else None


def check_deployment_pods(ctx, deployment_name, namespace):
    """Deployment -> ReplicaSet -> Pod as kube-controller-manager makes them; returns the Pods."""
    deployment = ctx.get("deployment", deployment_name, namespace)
    if not ctx.check(f"Deployment {deployment_name} exists", deployment is not None):
        return []
    selector = ",".join(f"{k}={v}" for k, v in
                        deployment["spec"]["selector"]["matchLabels"].items())
    replicasets = ctx.wait_for_items("replicasets", namespace, selector, 1,
                                     f"the ReplicaSet of {deployment_name}")
    rs = replicasets[0]
    ref = owner(rs)
    ctx.check(f"ReplicaSet {rs['metadata']['name']} is controlled by Deployment "
              f"{deployment_name}",
              ref and ref["kind"] == "Deployment" and ref["name"] == deployment_name
              and ref["uid"] == deployment["metadata"]["uid"]
              and ref.get("blockOwnerDeletion") is True, json.dumps(ref))
    template_hash = rs["metadata"].get("labels", {}).get("pod-template-hash", "")
    ctx.check(f"ReplicaSet name is the Deployment's plus its pod-template-hash ({template_hash})",
              template_hash and rs["metadata"]["name"] == f"{deployment_name}-{template_hash}",
              rs["metadata"]["name"])
    ctx.check_equal("ReplicaSet selector carries pod-template-hash",
                    rs["spec"]["selector"]["matchLabels"].get("pod-template-hash"), template_hash)
    replicas = deployment["spec"].get("replicas", 1)
    pods = ctx.wait_for_items("pods", namespace, f"pod-template-hash={template_hash}", replicas,
                              f"the Pods of {deployment_name}")
    for pod in pods:
        name = pod["metadata"]["name"]
        ref = owner(pod)
        ctx.check(f"Pod {name} is controlled by ReplicaSet {rs['metadata']['name']}",
                  ref and ref["kind"] == "ReplicaSet" and ref["uid"] == rs["metadata"]["uid"],
                  json.dumps(ref))
        ctx.check_equal(f"Pod {name} generateName", pod["metadata"].get("generateName"),
                        rs["metadata"]["name"] + "-")
        ctx.check(f"Pod {name} is Pending and unscheduled ({NEVER_RUNS})",
                  pod.get("status", {}).get("phase") == "Pending"
                  and not pod["spec"].get("nodeName"), json.dumps(pod.get("status")))
    return pods


def status_summary(obj, keys):
    status = obj.get("status", {})
    out = {}
    for key in keys:
        if key == "conditions":
            out[key] = {c["type"]: c["status"] for c in status.get("conditions", [])}
        else:
            out[key] = status.get(key, 0)
    return out


def wait_for_status(ctx, resource, name, namespace, expected):
    """The controllers' status of an object, as kubectl shows it, reaches `expected` (fields of
    status; "conditions" as {type: status}); a check either way."""
    last = {}

    def probe():
        nonlocal last
        obj = ctx.get(resource, name, namespace)
        last = status_summary(obj or {}, expected.keys())
        return last == expected
    try:
        ctx.wait_for(f"the status of {resource} {name}", probe)
    except HarnessError:
        pass
    ctx.check_equal(f"{resource} {name} status {json.dumps(expected)}", last, expected)


def check_linkerd_injected(ctx, pod, deployment_name):
    name = pod["metadata"]["name"]
    init = [c["name"] for c in pod["spec"].get("initContainers", [])]
    # Native sidecars are Linkerd's default (the seed's values): linkerd-init, then the proxy as
    # a restartable init container.
    ctx.check_equal(f"Pod {name} init containers (admitted object)", init,
                    ["linkerd-init", "linkerd-proxy"])
    proxy = [c for c in pod["spec"].get("initContainers", []) if c["name"] == "linkerd-proxy"]
    ctx.check(f"Pod {name} linkerd-proxy is a native sidecar (restartPolicy Always)",
              proxy and proxy[0].get("restartPolicy") == "Always")
    labels = pod["metadata"].get("labels", {})
    ctx.check_equal(f"Pod {name} label linkerd.io/proxy-deployment",
                    labels.get("linkerd.io/proxy-deployment"), deployment_name)
    annotations = pod["metadata"].get("annotations", {})
    ctx.check(f"Pod {name} annotation linkerd.io/created-by",
              annotations.get("linkerd.io/created-by", "").startswith("linkerd/proxy-injector "),
              json.dumps(annotations))


def pod_create_events(ctx, namespace):
    """The audit log's ResponseComplete events of Pod CREATEs in a namespace (not dry-run), by
    the name the Pod was stored under."""
    out = {}
    for event in ctx.audit_events():
        ref = event.get("objectRef", {})
        if (event.get("stage") == "ResponseComplete" and event.get("verb") == "create"
                and ref.get("resource") == "pods" and ref.get("namespace") == namespace
                and not ref.get("subresource")
                and (event.get("responseStatus", {}).get("code") or 0) < 300):
            response = event.get("responseObject") or {}
            name = ref.get("name") or response.get("metadata", {}).get("name")
            if name and "dryRun" not in event.get("requestURI", ""):
                out[name] = event
    return out


def check_chain(ctx, chains, pod_name, namespace, expected):
    """The mutation chain `apiserver-sim audit` read back for a Pod CREATE: `expected` is a list
    of (round, index, webhook, outcome prefix)."""
    key = ("create", "pods", f"{namespace}/{pod_name}")
    lines = chains.get(key)
    if not ctx.check(f"audit log has the CREATE chain of Pod {pod_name}", lines is not None):
        return
    steps = [(s["round"], s["index"], s["webhook"], s["outcome"]) for s in webhook_steps(lines)]
    ok = len(steps) == len(expected) and all(
        a[:3] == e[:3] and a[3].startswith(e[3]) for a, e in zip(steps, expected))
    ctx.check(f"Pod {pod_name} mutation chain: " + "; ".join(
        f"round {r} index {i} {w} {o}" for r, i, w, o in expected), ok, json.dumps(steps))


def require(ctx, condition, message):
    if not condition:
        raise HarnessError(message)
