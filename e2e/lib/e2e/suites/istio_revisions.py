"""Istio: injection chosen by namespace label, revision label and revision tag.

Istio's own webhook set (scenarios/istio-revisions/webhooks.yaml: istio-sidecar-injector,
istio-sidecar-injector-canary, the revision tag prod-canary) with two injectors of this project
(Istio profile), the default revision and `canary`. One Deployment per case: the namespace label
istio-injection=enabled (default revision, legacy `namespace.` entry), istio.io/rev=canary, the tag
istio.io/rev=prod-canary (served by canary), a Pod template labelled istio.io/rev=canary in an
unlabelled namespace (`rev.object.` entry), an opted-out template (sidecar.istio.io/inject:
"false"), and an unlabelled namespace. Checked on the admitted Pods (revision in
sidecar.istio.io/status, istio-proxy present or not) and on each Pod CREATE's chain in the audit
log (which entry of which configuration patched it).
"""
import json
import os

from . import common

CASES = [
    # (namespace, namespace labels, template labels, expected revision or None, webhook entry)
    ("istio-legacy", {"istio-injection": "enabled"}, {}, "default",
     ("namespace.sidecar-injector.istio.io", "istio-sidecar-injector")),
    ("istio-canary", {"istio.io/rev": "canary"}, {}, "canary",
     ("rev.namespace.sidecar-injector.istio.io", "istio-sidecar-injector-canary")),
    ("istio-tag", {"istio.io/rev": "prod-canary"}, {}, "canary",
     ("rev.namespace.sidecar-injector.istio.io", "istio-revision-tag-prod-canary")),
    ("istio-plain", {}, {"istio.io/rev": "canary"}, "canary",
     ("rev.object.sidecar-injector.istio.io", "istio-sidecar-injector-canary")),
    ("istio-legacy", {"istio-injection": "enabled"}, {"sidecar.istio.io/inject": "false"}, None,
     None),
    ("istio-plain", {}, {}, None, None),
]


def deployment(name, namespace, labels):
    template_labels = dict({"app": name}, **labels)
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": template_labels},
                                  "spec": {"containers": [{"name": "app",
                                                           "image": "nginx:1.27"}]}}}}


def run(ctx):
    istio = os.path.join(ctx.repo, "scenarios", "istio-revisions")
    ctx.step("install two istiod revisions (the injector, Istio profile) and Istio's webhooks")
    common.create_namespace(ctx, "istio-system")
    default = ctx.target.start_injector(
        "istiod", ["--profile", "istio", "--istio-enable-native-sidecars=false"],
        dns_names=["istiod.istio-system.svc"])
    canary = ctx.target.start_injector(
        "istiod-canary", ["--profile", "istio", "--istio-enable-native-sidecars=false",
                          "--istio-values", os.path.join(istio, "values-canary.json")],
        dns_names=["istiod-canary.istio-system.svc"])
    # kubectl reads the chart's YAML; each entry then points at the injector of its revision.
    for config in ctx.manifests(os.path.join(istio, "webhooks.yaml")):
        for hook in config["webhooks"]:
            server = hook["clientConfig"]["service"]["name"]
            injector = canary if server == "istiod-canary" else default
            hook["clientConfig"] = injector.client_config_for(hook["clientConfig"]["service"]
                                                              .get("path", "/inject"))
        ctx.apply(json.dumps(config))

    ctx.step("namespaces by label; wait until each revision's webhook is called")
    namespaces = {}
    for namespace, labels, _, _, _ in CASES:
        namespaces[namespace] = labels
    for namespace, labels in namespaces.items():
        common.create_namespace(ctx, namespace, labels=labels)
    for namespace, labels in namespaces.items():
        if labels:
            common.wait_until_effective(
                ctx, f"the {namespace} injection is called", namespace,
                lambda code, pod: code == 0 and common.has_container(pod, "istio-proxy"))

    ctx.step("one Deployment per case; the controllers create the Pods")
    names = []
    for i, (namespace, _, labels, _, _) in enumerate(CASES):
        name = f"case-{i}"
        names.append(name)
        ctx.apply(json.dumps(deployment(name, namespace, labels)))

    ctx.step("each Pod injected by the expected revision, or not at all (admitted objects)")
    pods = {}
    for name, (namespace, _, labels, revision, _) in zip(names, CASES):
        items = ctx.wait_for_items("pods", namespace, f"app={name}", 1, f"the Pod of {name}")
        pod = items[0]
        pods[name] = pod
        what = f"Pod of {name} ({namespace} {json.dumps(namespaces[namespace])}, template " \
               f"{json.dumps(labels)})"
        if revision is None:
            ctx.check(f"{what} is not injected", not common.has_container(pod, "istio-proxy"))
            continue
        status = json.loads(pod["metadata"].get("annotations", {})
                            .get("sidecar.istio.io/status", "{}"))
        ctx.check(f"{what} has istio-init and istio-proxy",
                  common.has_container(pod, "istio-init")
                  and common.has_container(pod, "istio-proxy"))
        ctx.check_equal(f"{what} injected by revision", status.get("revision"), revision)
    ctx.kubectl("get", "pods", "-A", "-l", "app", "-o",
                "custom-columns=NAMESPACE:.metadata.namespace,NAME:.metadata.name,"
                "REVISION:.metadata.annotations.istio\\.io/rev,CONTAINERS:.spec.containers[*].name")

    ctx.step("the audit log: which webhook entry injected each Pod")
    _, chains = ctx.audit_chains()
    for name, (namespace, _, _, revision, entry) in zip(names, CASES):
        pod_name = pods[name]["metadata"]["name"]
        if entry is None:
            # A call that does not mutate still shows in the chain: only the matching entries.
            lines = chains.get(("create", "pods", f"{namespace}/{pod_name}"), [])
            ctx.check(f"Pod {pod_name}: no webhook mutated it",
                      all(s["outcome"].startswith("not mutated")
                          for s in common.webhook_steps(lines)), "\n".join(lines))
            continue
        key = ("create", "pods", f"{namespace}/{pod_name}")
        steps = common.webhook_steps(chains.get(key, []))
        ctx.check(f"Pod {pod_name}: {entry[0]} ({entry[1]}) mutated it",
                  [(s["webhook"], s["configuration"], s["outcome"].split(",")[0])
                   for s in steps] == [(entry[0], entry[1], "mutated")], json.dumps(steps))
