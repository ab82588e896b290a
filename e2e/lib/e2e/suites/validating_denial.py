"""A validating webhook denies: the message kubectl prints, and a ReplicaSet's FailedCreate.

The seed tutorial's Linkerd injector, and a stub validating webhook `policy.e2e.harness.dev` that
denies every Pod CREATE in the namespace `restricted` with code 403 and a policy message. The
mutating phase runs first (the Pod is injected), then validation denies it:
  * `kubectl apply` of a Pod prints `Error from server (Forbidden): error when creating "STDIN":
    admission webhook "policy.e2e.harness.dev" denied the request: <message>` and exits 1;
  * a Deployment's ReplicaSet records FailedCreate `Error creating: admission webhook ... denied
    the request: <message>`; no Pod exists;
  * the audit log has the denied CREATE (403) with the injector's mutation annotations.
"""
import json
import urllib.parse

from . import common

WEBHOOK = "policy.e2e.harness.dev"
MESSAGE = "pods in restricted must come from an approved pipeline"
DENIAL = f'admission webhook "{WEBHOOK}" denied the request: {MESSAGE}'


def run(ctx):
    common.install_linkerd(ctx)
    stub = ctx.target.start_stub("policy-stub")
    ctx.step("a validating webhook that denies Pods in restricted")
    config = stub.client_config_for("/deny/403/" + urllib.parse.quote(MESSAGE))
    ctx.apply(json.dumps({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "e2e-policy"},
        "webhooks": [{"name": WEBHOOK, "clientConfig": config,
                      "rules": [{"operations": ["CREATE"], "apiGroups": [""],
                                 "apiVersions": ["v1"], "resources": ["pods"]}],
                      "namespaceSelector": {"matchLabels": {
                          "kubernetes.io/metadata.name": "restricted"}},
                      "failurePolicy": "Fail", "sideEffects": "None", "timeoutSeconds": 10,
                      "admissionReviewVersions": ["v1"]}]}))
    common.create_namespace(ctx, "restricted", annotations={"linkerd.io/inject": "enabled"})
    common.wait_until_effective(ctx, "the validating webhook is called", "restricted",
                                lambda code, result: code != 0 and DENIAL in result)

    ctx.step("kubectl apply of a Pod: the denial as kubectl prints it")
    done = ctx.kubectl("apply", "-f", "-", check=False, stdin=json.dumps({
        "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "restricted"},
        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}))
    # The webhook sets no reason: kube-apiserver passes its Status on with code 403 and no
    # reason (webhookerrors.ToStatusErr), so kubectl prints no "(Forbidden)".
    expected = f'Error from server: error when creating "STDIN": {DENIAL}'
    ctx.check_equal("kubectl's exit status", done.returncode, 1)
    ctx.check_equal("kubectl's message", done.stderr.strip(), expected)
    ctx.check("the Pod does not exist", ctx.get("pod", "web", "restricted") is None)

    failed = common.failed_create(ctx, "restricted")
    ctx.check_equal("FailedCreate message on the ReplicaSet", failed[0]["message"],
                    "Error creating: " + DENIAL)
    ctx.check("no Pod in restricted", not ctx.get("pods", namespace="restricted")["items"])

    ctx.step("the audit log: the denied CREATE, after the injector mutated it")
    denied = [e for e in ctx.audit_events()
              if e.get("stage") == "ResponseComplete" and e.get("verb") == "create"
              and e.get("objectRef", {}).get("resource") == "pods"
              and e.get("objectRef", {}).get("namespace") == "restricted"
              and e.get("objectRef", {}).get("name") == "web"
              and "dryRun" not in e.get("requestURI", "")]
    if ctx.check("audit log has the CREATE of Pod web", len(denied) == 1):
        event = denied[0]
        ctx.check_equal("its response code", event.get("responseStatus", {}).get("code"), 403)
        ctx.check_equal("its response message", event.get("responseStatus", {}).get("message"),
                        DENIAL)
        mutation = json.loads(event.get("annotations", {}).get(
            "mutation.webhook.admission.k8s.io/round_0_index_0", "{}"))
        ctx.check_equal("the injector mutated it before validation", mutation.get("mutated"),
                        True)
    calls = [c for c in stub.calls() if c["namespace"] == "restricted" and not c["dryRun"]]
    ctx.check("the validating webhook saw the injected Pod",
              calls and "linkerd-proxy" in calls[0]["containers"], json.dumps(calls[:1]))
