"""A mutating webhook that is down, with failurePolicy Fail and with Ignore.

Two webhook configurations point at an address nothing answers (a closed loopback port; on k3d a
Service without endpoints), each selecting its own namespace:
  * Fail: `kubectl apply` of a Pod prints kube-apiserver's InternalError ("failed calling
    webhook ... failed to call webhook"); a Deployment's ReplicaSet cannot create its Pod and
    records FailedCreate with the same error;
  * Ignore: the Pod is created without the mutation, and its audit event carries the
    failed-open annotation (`apiserver-sim audit` shows the call as "failed open").
"""
import json

from . import common

FAIL = "down-fail.e2e.harness.dev"
IGNORE = "down-ignore.e2e.harness.dev"
CALL_ERROR = 'Internal error occurred: failed calling webhook "{}": failed to call webhook'


def configuration(name, webhook, policy, namespace, client_config):
    return {"apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "MutatingWebhookConfiguration", "metadata": {"name": name},
            "webhooks": [{"name": webhook, "clientConfig": client_config,
                          "rules": [{"operations": ["CREATE"], "apiGroups": [""],
                                     "apiVersions": ["v1"], "resources": ["pods"]}],
                          "namespaceSelector": {"matchLabels": {
                              "kubernetes.io/metadata.name": namespace}},
                          "failurePolicy": policy, "sideEffects": "None",
                          "timeoutSeconds": 5, "admissionReviewVersions": ["v1"]}]}


def pod(name, namespace):
    return json.dumps({"apiVersion": "v1", "kind": "Pod",
                       "metadata": {"name": name, "namespace": namespace},
                       "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}})


def run(ctx):
    ctx.step("two webhooks nothing answers: failurePolicy Fail and Ignore")
    down = ctx.target.unreachable("down")
    for namespace in ("down-fail", "down-ignore"):
        common.create_namespace(ctx, namespace)
    ctx.apply(json.dumps(configuration("down-fail", FAIL, "Fail", "down-fail",
                                       down.client_config)))
    ctx.apply(json.dumps(configuration("down-ignore", IGNORE, "Ignore", "down-ignore",
                                       down.client_config)))
    common.wait_until_effective(
        ctx, "the Fail webhook is called", "down-fail",
        lambda code, result: code != 0 and CALL_ERROR.format(FAIL) in result)
    common.wait_until_audited(ctx, "the Ignore webhook is called", "down-ignore",
                              "failed-open.mutation.webhook.admission.k8s.io/", IGNORE)

    ctx.step("failurePolicy Fail: kubectl prints the apiserver's error, nothing is stored")
    done = ctx.kubectl("apply", "-f", "-", stdin=pod("web", "down-fail"), check=False)
    ctx.check("kubectl apply exits non-zero", done.returncode != 0)
    ctx.check(f"kubectl prints: Error from server (InternalError): error when creating "
              f"\"STDIN\": {CALL_ERROR.format(FAIL)}...",
              done.stderr.startswith('Error from server (InternalError): error when creating '
                                     f'"STDIN": {CALL_ERROR.format(FAIL)}'), done.stderr)
    ctx.check("the Pod does not exist", ctx.get("pod", "web", "down-fail") is None)

    failed = common.failed_create(ctx, "down-fail")
    ctx.check("FailedCreate on the ReplicaSet: Error creating: " + CALL_ERROR.format(FAIL),
              failed[0]["involvedObject"]["kind"] == "ReplicaSet"
              and failed[0]["message"].startswith("Error creating: " + CALL_ERROR.format(FAIL)),
              failed[0]["message"])
    ctx.kubectl("get", "events", "-n", "down-fail", "--field-selector", "reason=FailedCreate",
                "-o", "custom-columns=OBJECT:.involvedObject.name,REASON:.reason")
    ctx.check("no Pod in down-fail", not ctx.get("pods", namespace="down-fail")["items"])

    ctx.step("failurePolicy Ignore: the Pod is created, the call failed open")
    ctx.apply(pod("web", "down-ignore"))
    stored = ctx.get("pod", "web", "down-ignore")
    ctx.check("the Pod exists, unmutated", stored is not None
              and [c["name"] for c in stored["spec"]["containers"]] == ["app"])
    _, chains = ctx.audit_chains()
    steps = common.webhook_steps(chains.get(("create", "pods", "down-ignore/web"), []))
    # The index is the webhook's position among all mutating webhooks in order (down-fail's
    # comes first), matched or not (docs/admission-chain.md §7).
    ctx.check_equal("audit chain of Pod web: the call failed open",
                    [[s["round"], s["index"], s["webhook"], s["outcome"]] for s in steps],
                    [[0, 1, IGNORE, "failed open"]])
