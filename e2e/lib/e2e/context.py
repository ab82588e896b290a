"""What a suite sees: kubectl against the target's cluster, checks, waits, the audit log.

A suite is the same code on every target; it asks the target only for what differs by nature
(where the injector runs and how a webhook configuration reaches it, where the audit log is).
"""
import json
import os
import shlex
import subprocess
import time

# Every wait polls with plain GETs (no watch): controllers and informers are asynchronous on a
# real cluster and on the simulator alike. The limit only bounds a broken run; a passing run
# never waits for it.
WAIT_LIMIT_SECONDS = float(os.environ.get("E2E_WAIT_SECONDS", "180"))
POLL_SECONDS = 0.25


class HarnessError(Exception):
    """The run could not go on (a command failed unexpectedly, a cluster did not start)."""


class Check:
    def __init__(self, name, ok, detail=""):
        self.name = name
        self.ok = ok
        self.detail = detail


class Context:
    def __init__(self, target, suite_name, work_dir, repo, tools, log):
        self.target = target
        self.suite = suite_name
        self.work_dir = work_dir
        self.repo = repo
        self.tools = tools
        self.log = log
        self.checks = []
        os.makedirs(work_dir, exist_ok=True)

    # --- output ---
    def say(self, text):
        self.log(text)

    def step(self, title):
        self.log(f"-- {title}")

    # --- kubectl ---
    def kubectl(self, *args, stdin=None, check=True, quiet=False):
        """Runs kubectl; prints the command and its output. Returns CompletedProcess."""
        cmd = [self.tools.kubectl, *args]
        # A discovery cache per run: kubectl keys ~/.kube/cache by host:port, and a port reused
        # by another cluster (a simulator after a kube-apiserver) would serve its stale discovery.
        env = dict(os.environ, KUBECONFIG=self.target.kubeconfig,
                   KUBECACHEDIR=os.path.join(self.work_dir, "kube-cache"))
        shown = "kubectl " + " ".join(shlex.quote(a) for a in args)
        if not quiet:
            self.log("$ " + shown.replace(self.repo + "/", ""))
        done = subprocess.run(cmd, input=stdin, capture_output=True, text=True, env=env,
                              timeout=WAIT_LIMIT_SECONDS)
        if not quiet:
            for line in (done.stdout + done.stderr).rstrip("\n").splitlines():
                self.log("  " + line)
        if check and done.returncode != 0:
            raise HarnessError(f"{shown} exited {done.returncode}: {done.stderr.strip()}")
        return done

    def get(self, resource, name=None, namespace=None, selector=None):
        """The object (or list) as JSON, or None when it does not exist."""
        args = ["get", resource]
        if name:
            args.append(name)
        if namespace:
            args += ["-n", namespace]
        if selector:
            args += ["-l", selector]
        done = self.kubectl(*args, "-o", "json", check=False, quiet=True)
        if done.returncode != 0:
            if "NotFound" in done.stderr or "not found" in done.stderr:
                return None
            raise HarnessError(f"kubectl {' '.join(args)}: {done.stderr.strip()}")
        return json.loads(done.stdout)

    def apply(self, path_or_text, namespace=None, extra=()):
        args = ["apply"]
        if namespace:
            args += ["-n", namespace]
        if os.path.exists(path_or_text):
            return self.kubectl(*args, "-f", path_or_text, *extra)
        return self.kubectl(*args, "-f", "-", *extra, stdin=path_or_text)

    def wait_for(self, what, probe):
        """Polls probe() until it returns a true value; returns it, or raises after the limit."""
        deadline = time.monotonic() + WAIT_LIMIT_SECONDS
        while True:
            value = probe()
            if value:
                return value
            if time.monotonic() > deadline:
                raise HarnessError(f"waited {WAIT_LIMIT_SECONDS:.0f}s for {what}")
            time.sleep(POLL_SECONDS)

    def wait_for_items(self, resource, namespace, selector, count, what):
        def probe():
            listed = self.get(resource, namespace=namespace, selector=selector)
            items = listed["items"] if listed else []
            return items if len(items) >= count else None
        items = self.wait_for(what, probe)
        self.log(f"  {what}: {', '.join(i['metadata']['name'] for i in items)}")
        return items

    # --- checks ---
    def check(self, name, ok, detail=""):
        self.checks.append(Check(name, bool(ok), detail))
        self.log(("  ok   " if ok else "  FAIL ") + name + ("" if ok or not detail else
                                                           ": " + detail))
        return bool(ok)

    def check_equal(self, name, actual, expected):
        return self.check(name, actual == expected,
                          f"expected {json.dumps(expected)}, got {json.dumps(actual)}")

    @property
    def failed(self):
        return [c for c in self.checks if not c.ok]

    # --- the audit log ---
    def audit_events(self):
        """The audit log's events (JSON lines), as the target wrote them so far."""
        path = self.target.audit_log_path()
        events = []
        with open(path, encoding="utf-8") as log:
            for line in log:
                line = line.strip()
                if line:
                    events.append(json.loads(line))
        return events

    def audit_chains(self):
        """`apiserver-sim audit LOG`: its text and the chains parsed from it, by object."""
        path = self.target.audit_log_path()
        done = subprocess.run([self.tools.apiserver_sim, "audit", path], capture_output=True,
                              text=True, timeout=WAIT_LIMIT_SECONDS)
        self.log("$ apiserver-sim audit " + os.path.relpath(path, self.work_dir))
        if done.returncode != 0:
            raise HarnessError(f"apiserver-sim audit exited {done.returncode}: {done.stderr}")
        return done.stdout, parse_chains(done.stdout)

    def manifests(self, path):
        """The objects of a YAML manifest file as JSON, converted by kubectl itself
        (`create --dry-run=client -o json` prints one JSON document per object)."""
        text = self.kubectl("create", "--dry-run=client", "-f", path, "-o", "json",
                            quiet=True).stdout
        decoder = json.JSONDecoder()
        objects, at = [], 0
        while True:
            while at < len(text) and text[at].isspace():
                at += 1
            if at >= len(text):
                return objects
            obj, at = decoder.raw_decode(text, at)
            objects.extend(obj["items"] if obj.get("kind") == "List" else [obj])

    def render(self, path, **values):
        """A manifest template with ${NAME} placeholders filled (string.Template)."""
        import string
        with open(path, encoding="utf-8") as f:
            return string.Template(f.read()).substitute(values)


def parse_chains(text):
    """Chains of `apiserver-sim audit` output: {(verb, resource, "ns/name"): [lines]}."""
    chains = {}
    current = None
    for line in text.splitlines():
        if line and not line.startswith(" "):
            parts = line.split(" ")
            if len(parts) >= 3:
                current = (parts[0], parts[1], parts[2])
                chains.setdefault(current, []).append(line)
                continue
            current = None
        elif current is not None:
            chains[current].append(line.strip())
    return chains


def webhook_steps(chain_lines):
    """The "round R index I  WEBHOOK (CONFIG): OUTCOME..." lines of a chain, parsed."""
    steps = []
    for line in chain_lines:
        if not line.startswith("round "):
            continue
        head, _, outcome = line.partition(": ")
        words = head.split()
        # round R index I WEBHOOK (CONFIG)
        if len(words) >= 6:
            steps.append({"round": int(words[1]), "index": int(words[3]), "webhook": words[4],
                          "configuration": words[5].strip("()"), "outcome": outcome})
    return steps
