"""Unit tests of e2e/lib: reading `apiserver-sim audit` output, the stub webhook's answers."""
import base64
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "lib"))

from e2e import stub_webhook  # noqa: E402
from e2e.context import parse_chains, webhook_steps  # noqa: E402

AUDIT = """create pods simple-app/web-abc-x1 (auditID 1)
  round 0 index 0  a.example.com (a): mutated, patch of 2 operations
  round 0 index 1  linkerd-proxy-injector.linkerd.io (linkerd): mutated, patch of 14 operations
  round 1 index 0  a.example.com (a): not mutated
  replay: the patches turn the requestObject into the responseObject
create services simple-app/svc (auditID 2)
  round 0 index 0  b.example.com (b): failed open
"""


class ChainsTest(unittest.TestCase):
    def test_chains_by_object_and_their_steps(self):
        chains = parse_chains(AUDIT)
        self.assertEqual(sorted(chains), [("create", "pods", "simple-app/web-abc-x1"),
                                          ("create", "services", "simple-app/svc")])
        steps = webhook_steps(chains[("create", "pods", "simple-app/web-abc-x1")])
        self.assertEqual([(s["round"], s["index"], s["webhook"], s["configuration"])
                          for s in steps],
                         [(0, 0, "a.example.com", "a"),
                          (0, 1, "linkerd-proxy-injector.linkerd.io", "linkerd"),
                          (1, 0, "a.example.com", "a")])
        self.assertEqual(steps[2]["outcome"], "not mutated")
        self.assertEqual(webhook_steps(chains[("create", "services", "simple-app/svc")])[0]
                         ["outcome"], "failed open")

    def test_no_chain_lines(self):
        self.assertEqual(parse_chains(""), {})
        self.assertEqual(webhook_steps(["replay: x", "round x"]), [])


class StubTest(unittest.TestCase):
    POD = {"metadata": {}, "spec": {"containers": [{"name": "app"}],
                                    "initContainers": [{"name": "init"}]}}

    def test_annotate_names_the_containers(self):
        response = stub_webhook.answer("/annotate", {"uid": "u", "object": self.POD})
        patch = json.loads(base64.b64decode(response["patch"]))
        self.assertEqual(patch, [
            {"op": "add", "path": "/metadata/annotations", "value": {}},
            {"op": "add", "path": "/metadata/annotations/e2e.harness.dev~1containers",
             "value": "app|init"}])

    def test_deny_decodes_code_and_message(self):
        response = stub_webhook.answer("/deny/422/no%20way", {"uid": "u"})
        self.assertEqual(response, {"uid": "u", "allowed": False,
                                    "status": {"code": 422, "message": "no way"}})

    def test_unknown_path(self):
        self.assertIsNone(stub_webhook.answer("/nope", {"uid": "u"}))


if __name__ == "__main__":
    unittest.main()
