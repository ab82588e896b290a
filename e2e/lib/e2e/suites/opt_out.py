"""Linkerd opt-outs: a disabled Pod template, a namespace and a workload the webhook skips.

The seed tutorial's injector and webhook configuration, and three ways out of injection:
  * the Pod template annotated linkerd.io/inject: disabled in an injected namespace: the webhook
    is called, the injector answers without a patch (the Pod has no proxy, the chain says "not
    mutated", no Injected Event for that Deployment);
  * a namespace labelled config.linkerd.io/admission-webhooks: disabled: the namespaceSelector
    excludes it, the webhook is not called at all (no mutation annotation in the audit event);
  * a Pod template labelled linkerd.io/control-plane-component: the objectSelector excludes it.
"""
import json

from . import common


def deployment(name, namespace, annotations=None, labels=None):
    return {"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": dict({"app": name}, **(labels or {})),
                                               "annotations": annotations or {}},
                                  "spec": {"containers": [{"name": "app",
                                                           "image": "nginx:1.27"}]}}}}


def run(ctx):
    common.install_linkerd(ctx)
    ctx.step("namespaces: one injected, one the webhook skips")
    common.create_namespace(ctx, "meshed", annotations={"linkerd.io/inject": "enabled"})
    common.create_namespace(ctx, "unmeshed", annotations={"linkerd.io/inject": "enabled"},
                            labels={"config.linkerd.io/admission-webhooks": "disabled"})
    common.wait_until_effective(
        ctx, "the proxy injector is called", "meshed",
        lambda code, pod: code == 0 and common.has_container(pod, "linkerd-proxy"))

    ctx.step("four Deployments: injected, opted out by annotation, skipped namespace, skipped "
             "by the objectSelector")
    cases = [("injected", "meshed", None, None),
             ("opted-out", "meshed", {"linkerd.io/inject": "disabled"}, None),
             ("skipped-namespace", "unmeshed", None, None),
             ("control-plane", "meshed", None, {"linkerd.io/control-plane-component": "e2e"})]
    for name, namespace, annotations, labels in cases:
        ctx.apply(json.dumps(deployment(name, namespace, annotations, labels)))

    pods = {}
    for name, namespace, _, _ in cases:
        pods[name] = ctx.wait_for_items("pods", namespace, f"app={name}", 1,
                                        f"the Pod of {name}")[0]
    ctx.check("Deployment injected: its Pod has the proxy",
              common.has_container(pods["injected"], "linkerd-proxy"))
    for name in ("opted-out", "skipped-namespace", "control-plane"):
        ctx.check(f"Deployment {name}: its Pod has no proxy (admitted object)",
                  not common.has_container(pods[name], "linkerd-proxy"))

    ctx.step("kubectl get events: Injected only for the injected Deployment")
    injected = ctx.wait_for("the Injected Event", lambda: {
        e["involvedObject"]["name"] for e in ctx.get("events", namespace="meshed")["items"]
        if e.get("reason") == "Injected"} or None)
    ctx.check_equal("Deployments with an Injected Event in meshed", sorted(injected),
                    ["injected"])
    ctx.kubectl("get", "events", "-n", "meshed", "--field-selector", "reason=Injected")

    ctx.step("the audit log: called and not mutated, or not called at all")
    _, chains = ctx.audit_chains()
    creates = {}
    for namespace in ("meshed", "unmeshed"):
        creates.update(common.pod_create_events(ctx, namespace))
    for name, namespace, _, _ in cases:
        pod_name = pods[name]["metadata"]["name"]
        event = creates.get(pod_name)
        if not ctx.check(f"audit log has the CREATE of Pod {pod_name}", event is not None):
            continue
        called = sorted(k for k in event.get("annotations", {})
                        if k.startswith("mutation.webhook.admission.k8s.io/"))
        steps = common.webhook_steps(chains.get(("create", "pods", f"{namespace}/{pod_name}"),
                                                []))
        outcomes = [[s["webhook"], s["outcome"].split(",")[0]] for s in steps]
        if name == "injected":
            ctx.check_equal(f"Pod {pod_name} chain", outcomes,
                            [["linkerd-proxy-injector.linkerd.io", "mutated"]])
        elif name == "opted-out":
            ctx.check_equal(f"Pod {pod_name} chain (called, answered without a patch)",
                            outcomes, [["linkerd-proxy-injector.linkerd.io", "not mutated"]])
        else:
            ctx.check_equal(f"Pod {pod_name}: no mutating webhook called (audit annotations)",
                            called, [])
