"""e2e/deploy/<injector>/: the files the k3d target applies, in order, with what is generated.

Static manifests (Namespace, ServiceAccount, RBAC, Deployment, Service) are applied as they are;
generated here into the run's folder: the ConfigMaps of the injector's inputs (the seed's
linkerd-config values and trust roots, as Linkerd's chart makes them), the serving certificate's
Secret (a fresh CA; its certificate is the webhook configuration's caBundle), and the webhook
configuration itself (mutatingwebhookconfiguration.yaml.in with that clientConfig).
"""
import json
import os
import string

from .targets import gen_certs, b64_file

SERVICE = {"name": "linkerd-proxy-injector", "namespace": "linkerd", "port": 443}


def deploy_files(repo, folder, name="linkerd-proxy-injector"):
    """Returns (files to apply before the webhook configuration, in order; the webhook
    configuration file; the Service reference)."""
    source = os.path.join(repo, "e2e", "deploy", name)
    seed = os.path.join(repo, "scenarios", "seed-tutorial")
    os.makedirs(folder, exist_ok=True)
    service_host = f"{SERVICE['name']}.{SERVICE['namespace']}.svc"
    ca, cert, key = gen_certs(repo, folder, [service_host, service_host + ".cluster.local"],
                              ips=())

    def read(path):
        with open(path, encoding="utf-8") as f:
            return f.read()
    generated = [
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "linkerd-config", "namespace": "linkerd",
                      "labels": {"linkerd.io/control-plane-component": "controller"}},
         "data": {"values": read(os.path.join(seed, "linkerd-values.yaml"))}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "linkerd-identity-trust-roots", "namespace": "linkerd",
                      "labels": {"linkerd.io/control-plane-component": "identity"}},
         "data": {"ca-bundle.crt": read(os.path.join(seed, "trust-anchors.pem"))}},
        {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
         "metadata": {"name": "linkerd-proxy-injector-k8s-tls", "namespace": "linkerd",
                      "labels": {"linkerd.io/control-plane-component": "proxy-injector"}},
         "data": {"tls.crt": b64_file(cert), "tls.key": b64_file(key)}},
    ]
    generated_file = os.path.join(folder, "generated.json")
    with open(generated_file, "w", encoding="utf-8") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": generated}, f, indent=1)
    client_config = {"service": dict(SERVICE, path="/"), "caBundle": b64_file(ca)}
    webhook_file = os.path.join(folder, "mutatingwebhookconfiguration.yaml")
    with open(webhook_file, "w", encoding="utf-8") as f:
        f.write(string.Template(read(os.path.join(source, "mutatingwebhookconfiguration.yaml.in")))
                .substitute(CLIENT_CONFIG=json.dumps(client_config)))
    before = [os.path.join(source, "namespace.yaml"), os.path.join(source, "serviceaccount.yaml"),
              os.path.join(source, "rbac.yaml"), generated_file,
              os.path.join(source, "deployment.yaml"), os.path.join(source, "service.yaml")]
    return before, webhook_file, client_config
