#!/usr/bin/env python3
"""A small scripted admission webhook for the e2e suites (HTTPS, AdmissionReview v1).

  stub_webhook.py --tls-cert C --tls-key K [--address 127.0.0.1] --port-file F

Paths (the behaviour is chosen by the webhook configuration's path):
  /allow                     allowed, no patch
  /deny/N/M                  allowed: false with status {code: N, message: M} (M
                             percent-encoded: a webhook URL may not carry a query)
  /annotate                  allowed with a JSON patch setting the annotation
                             e2e.harness.dev/containers to the names of the
                             object's containers and init containers ("a,b|c"): a mutation that
                             changes again when a later webhook adds a container, so it shows
                             reinvocation (docs/admission-chain.md §6)
Every request is appended to calls.jsonl beside the port file (path, uid, operation, name, the
containers seen), so suites can check what the webhook received.
"""
import argparse
import base64
import json
import os
import ssl
import sys
import threading
import urllib.parse
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's request body limit for a webhook answer


def container_names(obj):
    spec = (obj or {}).get("spec") or {}
    init = ",".join(c.get("name", "") for c in spec.get("initContainers") or [])
    main = ",".join(c.get("name", "") for c in spec.get("containers") or [])
    return f"{main}|{init}"


def answer(path, request):
    uid = request.get("uid", "")
    response = {"uid": uid, "allowed": True}
    if path.startswith("/deny/"):
        _, _, code, message = path.split("/", 3)
        response["allowed"] = False
        response["status"] = {"code": int(code), "message": urllib.parse.unquote(message)}
    elif path == "/annotate":
        key = "e2e.harness.dev/containers"
        obj = request.get("object") or {}
        patch = []
        if not (obj.get("metadata") or {}).get("annotations"):
            patch.append({"op": "add", "path": "/metadata/annotations", "value": {}})
        pointer = "/metadata/annotations/" + key.replace("~", "~0").replace("/", "~1")
        patch.append({"op": "add", "path": pointer, "value": container_names(obj)})
        response["patchType"] = "JSONPatch"
        response["patch"] = base64.b64encode(json.dumps(patch).encode()).decode()
    elif path != "/allow":
        return None
    return response


class Handler(BaseHTTPRequestHandler):
    server_version = "e2e-stub"
    calls_lock = threading.Lock()

    def log_message(self, format, *args):  # noqa: A002 (BaseHTTPRequestHandler's name)
        pass

    def do_POST(self):  # noqa: N802
        url = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        if length <= 0 or length > MAX_BODY:
            self.send_error(400, "bad body length")
            return
        try:
            review = json.loads(self.rfile.read(length))
            request = review["request"]
        except (ValueError, KeyError, TypeError):
            self.send_error(400, "not an AdmissionReview")
            return
        response = answer(url.path, request)
        if response is None:
            self.send_error(404, "no such path")
            return
        record = {"path": url.path, "uid": request.get("uid"),
                  "operation": request.get("operation"), "name": request.get("name"),
                  "namespace": request.get("namespace"),
                  "containers": container_names(request.get("object")),
                  "dryRun": request.get("dryRun", False)}
        with Handler.calls_lock:
            with open(self.server.calls_file, "a", encoding="utf-8") as calls:
                calls.write(json.dumps(record) + "\n")
        body = json.dumps({"apiVersion": review.get("apiVersion", "admission.k8s.io/v1"),
                           "kind": "AdmissionReview", "response": response}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--tls-cert", required=True)
    parser.add_argument("--tls-key", required=True)
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--port-file", required=True)
    args = parser.parse_args()
    server = ThreadingHTTPServer((args.address, args.port), Handler)
    server.daemon_threads = True
    server.calls_file = os.path.join(os.path.dirname(os.path.abspath(args.port_file)),
                                     "calls.jsonl")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.load_cert_chain(args.tls_cert, args.tls_key)
    server.socket = context.wrap_socket(server.socket, server_side=True)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(str(server.server_address[1]))
    os.replace(tmp, args.port_file)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
