#!/usr/bin/env python3
"""Writes the Istio injection truth-table scenarios of this folder.

    python3 scenarios/istio-revisions/generate.py          # rewrite the scenario files
    python3 scenarios/istio-revisions/generate.py --check  # exit 1 if a file is not up to date

Every combination of

  namespace label istio-injection   enabled | disabled | (absent)
  namespace label istio.io/rev      default | canary | prod-canary (a tag) | (absent)
  pod label sidecar.istio.io/inject "true" | "false" | (absent)
  pod label istio.io/rev            default | canary | prod-canary | (absent)
  pod annotation sidecar.istio.io/inject  (absent) | "true" | "false"

is one step creating a Pod, against the webhook configurations of webhooks.yaml and two real
injectors (`injector serve --profile istio`): istiod (the default revision) and istiod-canary
(`revision: canary`, values-canary.json). One scenario file per istio-injection value.

The expected outcome of each row is written here from Istio's documented behaviour, not from
what the simulator computes:

* istio.io "Installing the Sidecar", section "Controlling the injection policy": if either label
  (istio-injection, sidecar.istio.io/inject) is disabled, the pod is not injected; if either
  label (istio-injection, sidecar.istio.io/inject, istio.io/rev) is enabled, it is injected; if
  neither is set it is not (enableNamespacesByDefault is off). "If the istio-injection label and
  the istio.io/rev label are both present on the same namespace, the istio-injection label will
  take precedence", and it means the default revision (istio/istio.io#14597). A namespace's
  istio.io/rev wins over the pod's (istio/istio#48316; the default
  revisionLabelPreference: namespace of istio/istio#60377 keeps it so).
* "Revision tags" (istio.io docs, setup/upgrade/canary): a tag is an alias of the revision it
  points at; its webhook calls that revision's istiod, which injects as that revision.
* Which webhook entry serves each route is the comment of each entry in the chart's
  mutatingwebhook.yaml / revision-tags-mwc.yaml ("Case 1: namespace selector matches...").
* Once called, istiod decides with injectRequired (pkg/kube/inject/inject.go): the pod label
  sidecar.istio.io/inject wins over the annotation of the same name; "true" injects, "false"
  does not; neither falls back to the policy, `enabled` in the chart's default values. The
  annotation alone never makes a webhook match: selectors only read labels.
"""

import argparse
import pathlib
import sys

HERE = pathlib.Path(__file__).resolve().parent

NS_INJECTION = ["enabled", "disabled", None]
NS_REV = ["default", "canary", "prod-canary", None]
POD_INJECT = ["true", "false", None]
POD_REV = ["default", "canary", "prod-canary", None]
ANNOTATION = [None, "true", "false"]

# The MutatingWebhookConfiguration answering for each istio.io/rev value, and the revision whose
# istiod it calls (a tag is an alias of its revision).
CONFIGURATION = {
    "default": "istio-sidecar-injector",
    "canary": "istio-sidecar-injector-canary",
    "prod-canary": "istio-revision-tag-prod-canary",
}
REVISION = {"default": "default", "canary": "canary", "prod-canary": "canary"}

FILES = {
    "enabled": "injection-enabled.yaml",
    "disabled": "injection-disabled.yaml",
    None: "injection-unset.yaml",
}


def route(ns_injection, ns_rev, pod_inject, pod_rev):
    """(webhook, configuration, revision) of the webhook that is called, or None."""
    # Either label disabled: not injected, whatever the revision labels say.
    if pod_inject == "false" or ns_injection == "disabled":
        return None
    # istio-injection=enabled: the default revision; it takes precedence over istio.io/rev.
    if ns_injection == "enabled":
        return ("namespace.sidecar-injector.istio.io", CONFIGURATION["default"], "default")
    # The namespace's revision wins over the pod's.
    if ns_rev is not None:
        return ("rev.namespace.sidecar-injector.istio.io", CONFIGURATION[ns_rev], REVISION[ns_rev])
    if pod_rev is not None:
        return ("rev.object.sidecar-injector.istio.io", CONFIGURATION[pod_rev], REVISION[pod_rev])
    if pod_inject == "true":
        return ("object.sidecar-injector.istio.io", CONFIGURATION["default"], "default")
    return None  # no label enables injection (enableNamespacesByDefault is off)


def injects(pod_inject, annotation):
    """injectRequired once the webhook is called (policy: enabled)."""
    value = pod_inject if pod_inject is not None else annotation
    return value != "false"


def show(value):
    return "-" if value is None else value


def namespace_name(ns_injection, ns_rev):
    return "inj-%s-rev-%s" % (ns_injection or "unset", ns_rev or "unset")


def pod_name(pod_inject, pod_rev, annotation):
    return "label-%s.rev-%s.ann-%s" % (pod_inject or "unset", pod_rev or "unset",
                                       annotation or "unset")


def flow_map(items):
    return "{" + ", ".join("%s: %s" % (k, v) for k, v in items) + "}"


def quoted(v):
    return '"%s"' % v


def rows_for(ns_injection):
    for ns_rev in NS_REV:
        for pod_inject in POD_INJECT:
            for pod_rev in POD_REV:
                for annotation in ANNOTATION:
                    yield ns_rev, pod_inject, pod_rev, annotation


def scenario(ns_injection):
    out = []
    rows = list(rows_for(ns_injection))
    title = "istio-injection=%s" % ns_injection if ns_injection else "no istio-injection label"
    out.append("# Generated by generate.py (python3 scenarios/istio-revisions/generate.py); do not edit.")
    out.append("#")
    out.append("# Istio's webhook set (webhooks.yaml) and two real injectors, one per revision, for every")
    out.append("# pod in namespaces with %s: which webhook is called and what it injects." % title)
    out.append("# The expected rows are Istio's documented behaviour (generate.py says where each rule")
    out.append("# comes from). Injected pods carry the revision of the istiod that injected them in")
    out.append("# the istio.io/rev annotation and in sidecar.istio.io/status.")
    out.append("#")
    out.append("#   ns istio.io/rev | pod label inject | pod istio.io/rev | annotation inject | webhook called (configuration)                     | injected")
    for ns_rev, pod_inject, pod_rev, annotation in rows:
        r = route(ns_injection, ns_rev, pod_inject, pod_rev)
        if r is None:
            called, result = "none", "no"
        else:
            called = "%s (%s)" % (r[0].split("sidecar-injector")[0] or r[0], r[1])
            result = ("yes, " + r[2]) if injects(pod_inject, annotation) else "no"
        out.append("#   %-15s | %-16s | %-16s | %-17s | %-50s | %s" % (
            show(ns_rev), show(pod_inject), show(pod_rev), show(annotation), called, result))
    out.append("apiVersion: apiserver-sim.harness.dev/v1alpha1")
    out.append("kind: Scenario")
    out.append("metadata:")
    name = "istio-revisions-" + (ns_injection or "unset")
    out.append("  name: %s" % name)
    out.append("  description: >-")
    out.append("    Istio's default revision, a canary revision and a revision tag: which webhook injects")
    out.append("    each pod (namespace %s) and as which revision." % title)
    out.append("spec:")
    out.append("  seed: 11")
    out.append("  objects:")
    out.append("    - file: cluster.yaml")
    out.append("  webhookConfigurations:")
    out.append("    - file: webhooks.yaml")
    out.append("  endpoints:")
    # Native sidecars pinned off (the classic layout: istio-proxy among the containers). In
    # Istio's auto mode the layout follows the nodes' kubelet versions, and neither the simulator
    # nor the control plane of `compare --backend kube` has nodes; the table is about routing.
    out.append("    - name: istiod")
    out.append("      injector: {profile: istio, args: [--istio-enable-native-sidecars=false]}")
    out.append("      service: {namespace: istio-system, name: istiod, port: 443}")
    out.append("    - name: istiod-canary")
    out.append("      injector: {profile: istio, istioValues: values-canary.json,")
    out.append("                 args: [--istio-enable-native-sidecars=false]}")
    out.append("      service: {namespace: istio-system, name: istiod-canary, port: 443}")
    out.append("  steps:")
    for ns_rev, pod_inject, pod_rev, annotation in rows:
        ns = namespace_name(ns_injection, ns_rev)
        pod = pod_name(pod_inject, pod_rev, annotation)
        labels = []
        if pod_inject is not None:
            labels.append(("sidecar.istio.io/inject", quoted(pod_inject)))
        if pod_rev is not None:
            labels.append(("istio.io/rev", pod_rev))
        meta = [("name", pod), ("namespace", ns)]
        if labels:
            meta.append(("labels", flow_map(labels)))
        if annotation is not None:
            meta.append(("annotations", flow_map([("sidecar.istio.io/inject", quoted(annotation))])))
        out.append("    - name: %s %s" % (ns, pod))
        out.append("      request:")
        out.append("        object:")
        out.append("          apiVersion: v1")
        out.append("          kind: Pod")
        out.append("          metadata: %s" % flow_map(meta))
        out.append("          spec: {containers: [{name: app, image: \"nginx:1.27\"}]}")
        out.append("      expect:")
        out.append("        allowed: true")
        # The pod names have dots: kube-apiserver's Pod strategy warns (WarningsOnCreate).
        out.append("        warnings: [\"metadata.name: this is used in the Pod's hostname, which can result in")
        out.append("          surprising behavior; a DNS label is recommended: [must not contain dots]\"]")
        r = route(ns_injection, ns_rev, pod_inject, pod_rev)
        if r is None:
            out.append("        calls: []")
        else:
            webhook, configuration, revision = r
            outcome = "Patched" if injects(pod_inject, annotation) else "Allowed"
            out.append("        calls:")
            out.append("          - {webhook: %s, configuration: %s, outcome: %s}" % (
                webhook, configuration, outcome))
        if r is not None and injects(pod_inject, annotation):
            revision = r[2]
            out.append("        object:")
            out.append("          metadata:")
            out.append("            annotations:")
            out.append("              istio.io/rev: %s" % revision)
            out.append("              sidecar.istio.io/status: {$regex: '\"revision\":\"%s\"'}" % revision)
            out.append("          spec:")
            out.append("            initContainers: [{name: istio-init}]")
            out.append("            containers: [{name: app}, {name: istio-proxy}]")
        else:
            out.append("        absent: [/metadata/annotations/sidecar.istio.io~1status, /spec/initContainers,")
            out.append("                 /spec/containers/1]")
    return "\n".join(out) + "\n"


def cluster():
    out = [
        "# Generated by generate.py; do not edit. The namespaces of the Istio truth-table scenarios,",
        "# one per (istio-injection, istio.io/rev) pair, each with its default ServiceAccount.",
    ]
    docs = []
    for ns_injection in NS_INJECTION:
        for ns_rev in NS_REV:
            ns = namespace_name(ns_injection, ns_rev)
            labels = []
            if ns_injection is not None:
                labels.append(("istio-injection", ns_injection))
            if ns_rev is not None:
                labels.append(("istio.io/rev", ns_rev))
            meta = [("name", ns)]
            if labels:
                meta.append(("labels", flow_map(labels)))
            docs.append("apiVersion: v1\nkind: Namespace\nmetadata: %s" % flow_map(meta))
            docs.append("apiVersion: v1\nkind: ServiceAccount\nmetadata: {name: default, namespace: %s}"
                        % ns)
    return "\n".join(out) + "\n" + "\n---\n".join(docs) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1 when a generated file differs from what is on disk")
    args = parser.parse_args()
    files = {HERE / "cluster.yaml": cluster()}
    for ns_injection, name in FILES.items():
        files[HERE / name] = scenario(ns_injection)
    stale = []
    for path, text in files.items():
        if args.check:
            if not path.exists() or path.read_text() != text:
                stale.append(path)
        else:
            path.write_text(text)
    if stale:
        for path in stale:
            print("%s: not up to date; run python3 %s" % (path, pathlib.Path(__file__)),
                  file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
