"""The three targets: a k3d cluster, the local real control plane, the simulator.

A target starts a cluster, gives its kubeconfig and audit log, runs webhooks where that cluster
can reach them, and says how a webhook configuration points at them (clientConfig).
"""
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import time

from .context import HarnessError

START_LIMIT_SECONDS = float(os.environ.get("E2E_START_SECONDS", "240"))


def wait_file(path, process, what, log_file):
    deadline = time.monotonic() + START_LIMIT_SECONDS
    while not (os.path.exists(path) and os.path.getsize(path) > 0):
        if process.poll() is not None:
            raise HarnessError(f"{what} exited {process.returncode} before it was ready:\n"
                               + tail(log_file))
        if time.monotonic() > deadline:
            raise HarnessError(f"{what} not ready after {START_LIMIT_SECONDS:.0f}s:\n"
                               + tail(log_file))
        time.sleep(0.1)


def tail(path, lines=20):
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return "(no log)"


def stop_process(process, name, log):
    """SIGTERM, then SIGKILL after 15 s; a non-zero exit other than by our signal is reported."""
    if process is None or process.poll() is not None:
        return
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        log(f"  {name} did not stop after SIGTERM in 15 s: killed")
        process.kill()
        process.wait()


def gen_certs(repo, out_dir, dns_names, ips=("127.0.0.1",)):
    """A CA and a serving certificate (scripts/gen-certs.sh); returns (ca, cert, key) paths."""
    args = ["bash", os.path.join(repo, "scripts", "gen-certs.sh"), "--out", out_dir]
    for name in dns_names:
        args += ["--dns", name]
    for ip in ips:
        args += ["--ip", ip]
    done = subprocess.run(args, capture_output=True, text=True)
    if done.returncode != 0:
        raise HarnessError(f"gen-certs.sh failed: {done.stderr}")
    return (os.path.join(out_dir, "ca.crt"), os.path.join(out_dir, "tls.crt"),
            os.path.join(out_dir, "tls.key"))


def b64_file(path):
    with open(path, "rb") as f:
        return base64.b64encode(f.read()).decode()


class Webhook:
    """A webhook server the suite started: its clientConfig and what it received."""

    def __init__(self, name, client_config, calls_file=None):
        self.name = name
        self.client_config = client_config
        self.calls_file = calls_file

    def calls(self):
        if not self.calls_file or not os.path.exists(self.calls_file):
            return []
        with open(self.calls_file, encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]

    def client_config_for(self, path):
        config = dict(self.client_config)
        if "url" in config:
            base = config["url"].split("/", 3)
            config["url"] = "/".join(base[:3]) + path
        else:
            config["service"] = dict(config["service"], path=path)
        return config


class LoopbackTarget:
    """kube and sim: webhooks are processes on 127.0.0.1, referenced by url."""

    name = ""

    def __init__(self, repo, tools, work_dir, log):
        self.repo = repo
        self.tools = tools
        self.work_dir = work_dir
        self.log = log
        self.kubeconfig = None
        self.processes = []  # (name, Popen)

    def spawn(self, name, args, log_file):
        with open(log_file, "w", encoding="utf-8") as out:
            process = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        self.processes.append((name, process))
        return process

    def start_injector(self, name, profile_args, dns_names=()):
        """`injector serve` on 127.0.0.1 with fresh certificates; returns a Webhook."""
        folder = os.path.join(self.work_dir, name)
        os.makedirs(folder, exist_ok=True)
        ca, cert, key = gen_certs(self.repo, folder, list(dns_names) or ["localhost"])
        ports = os.path.join(folder, "ports.json")
        log_file = os.path.join(folder, "injector.log")
        process = self.spawn(name, [self.tools.injector, "serve", "--address", "127.0.0.1",
                                    "--port", "0", "--admin-port", "0", "--ports-file", ports,
                                    "--tls-cert", cert, "--tls-key", key,
                                    "--kubeconfig", self.kubeconfig, *profile_args], log_file)
        wait_file(ports, process, f"injector {name}", log_file)
        with open(ports, encoding="utf-8") as f:
            port = json.load(f)["webhook"]
        self.log(f"  injector {name} listening on https://127.0.0.1:{port} (log {log_file})")
        return Webhook(name, {"url": f"https://127.0.0.1:{port}/", "caBundle": b64_file(ca)})

    def start_stub(self, name):
        """The scripted stub webhook (stub_webhook.py) on 127.0.0.1; returns a Webhook."""
        folder = os.path.join(self.work_dir, name)
        os.makedirs(folder, exist_ok=True)
        ca, cert, key = gen_certs(self.repo, folder, ["localhost"])
        port_file = os.path.join(folder, "port")
        log_file = os.path.join(folder, "stub.log")
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stub_webhook.py")
        process = self.spawn(name, [sys.executable, script, "--tls-cert", cert, "--tls-key", key,
                                    "--port-file", port_file], log_file)
        wait_file(port_file, process, f"stub {name}", log_file)
        with open(port_file, encoding="utf-8") as f:
            port = int(f.read())
        return Webhook(name, {"url": f"https://127.0.0.1:{port}/", "caBundle": b64_file(ca)},
                       os.path.join(folder, "calls.jsonl"))

    def unreachable(self, name):
        """A clientConfig nothing answers: a loopback port bound and closed again."""
        import socket
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        folder = os.path.join(self.work_dir, name)
        os.makedirs(folder, exist_ok=True)
        ca, _, _ = gen_certs(self.repo, folder, ["localhost"])
        return Webhook(name, {"url": f"https://127.0.0.1:{port}/", "caBundle": b64_file(ca)})

    def stop(self):
        for name, process in reversed(self.processes):
            stop_process(process, name, self.log)
        self.processes = []


class KubeTarget(LoopbackTarget):
    name = "kube"

    def start(self):
        kube_work = os.path.join(self.work_dir, "kube-local")
        shutil.rmtree(kube_work, ignore_errors=True)
        self.kubeconfig = os.path.join(self.work_dir, "kubeconfig")
        log_file = os.path.join(self.work_dir, "kube-local.log")
        out_file = os.path.join(self.work_dir, "kube-local.out")
        with open(log_file, "w", encoding="utf-8") as err, \
                open(out_file, "w", encoding="utf-8") as out:
            process = subprocess.Popen(
                [self.tools.kube_local, "up", "--work-dir", kube_work, "--keep",
                 "--kubeconfig-out", self.kubeconfig,
                 "--bin-dir", os.path.dirname(self.tools.kubectl),
                 "--audit-policy", os.path.join(self.repo, "scenarios", "seed-tutorial",
                                                "audit-policy.yaml")],
                stdout=out, stderr=err, stdin=subprocess.DEVNULL, start_new_session=True)
        self.processes.append(("kube-local", process))
        deadline = time.monotonic() + START_LIMIT_SECONDS
        while "ready in" not in open(out_file, encoding="utf-8").read():
            if process.poll() is not None:
                raise HarnessError(f"kube-local exited {process.returncode}:\n" + tail(log_file))
            if time.monotonic() > deadline:
                raise HarnessError("kube-local not ready:\n" + tail(log_file))
            time.sleep(0.2)
        self.audit_log = os.path.join(kube_work, "audit.log")
        for line in open(out_file, encoding="utf-8"):
            if line.strip().startswith("audit log:"):
                self.audit_log = line.split(":", 1)[1].strip()
        self.log("  " + open(out_file, encoding="utf-8").readline().strip())

    def audit_log_path(self):
        return self.audit_log


class SimTarget(LoopbackTarget):
    name = "sim"

    def start(self):
        self.kubeconfig = os.path.join(self.work_dir, "kubeconfig")
        self.audit_log = os.path.join(self.work_dir, "audit.log")
        for stale in (self.kubeconfig, self.audit_log):
            if os.path.exists(stale):
                os.remove(stale)
        log_file = os.path.join(self.work_dir, "apiserver-sim.log")
        process = self.spawn("apiserver-sim", [
            self.tools.apiserver_sim, "serve",
            os.path.join(self.repo, "e2e", "sim", "cluster.yaml"),
            "--kubeconfig-out", self.kubeconfig, "--audit-log", self.audit_log,
            "--work-dir", os.path.join(self.work_dir, "serve")], log_file)
        # Ready when it says so: the line comes after the kubeconfig is completely written (a
        # kubeconfig that merely exists may still be being copied).
        deadline = time.monotonic() + START_LIMIT_SECONDS
        while True:
            lines = [line for line in tail(log_file, 50).splitlines()
                     if line.startswith("apiserver-sim: serving scenario ")]
            if lines:
                break
            if process.poll() is not None:
                raise HarnessError(f"apiserver-sim serve exited {process.returncode}:\n"
                                   + tail(log_file))
            if time.monotonic() > deadline:
                raise HarnessError("apiserver-sim serve not ready:\n" + tail(log_file))
            time.sleep(0.1)
        self.log("  " + lines[0])

    def audit_log_path(self):
        return self.audit_log


class K3dTarget:
    """A k3d cluster; the injector runs inside it (e2e/Dockerfile, e2e/deploy/)."""

    name = "k3d"
    cluster = "sidecar-harness-e2e"

    def __init__(self, repo, tools, work_dir, log, keep):
        self.repo = repo
        self.tools = tools
        self.work_dir = work_dir
        self.log = log
        self.keep = keep
        self.kubeconfig = os.path.join(work_dir, "kubeconfig")
        self.audit_dir = os.path.join(work_dir, "audit")
        self.started = False
        self.stubs = []

    @staticmethod
    def missing():
        """Why k3d cannot run here, or None."""
        if not shutil.which("docker") or not shutil.which("k3d"):
            return "no Docker engine"
        if subprocess.run(["docker", "info"], capture_output=True).returncode != 0:
            return "no Docker engine"
        return None

    def run(self, *args, **kwargs):
        self.log("$ " + " ".join(args))
        done = subprocess.run(list(args), capture_output=True, text=True, **kwargs)
        if done.returncode != 0:
            raise HarnessError(f"{' '.join(args)} exited {done.returncode}: {done.stderr}")
        return done

    def start(self):
        os.makedirs(self.audit_dir, exist_ok=True)
        config = os.path.join(self.work_dir, "cluster.yaml")
        with open(os.path.join(self.repo, "e2e", "k3d", "cluster.yaml"), encoding="utf-8") as f:
            text = f.read()
        text = text.replace("${AUDIT_POLICY}", os.path.join(self.repo, "scenarios",
                                                            "seed-tutorial", "audit-policy.yaml"))
        text = text.replace("${AUDIT_DIR}", self.audit_dir)
        with open(config, "w", encoding="utf-8") as f:
            f.write(text)
        self.run("k3d", "cluster", "delete", self.cluster)
        self.run("k3d", "cluster", "create", self.cluster, "--config", config,
                 "--kubeconfig-update-default=false", "--wait")
        self.started = True
        done = self.run("k3d", "kubeconfig", "get", self.cluster)
        with open(self.kubeconfig, "w", encoding="utf-8") as f:
            f.write(done.stdout)
        image = "sidecar-harness/injector:e2e"
        self.run("docker", "build", "-f", os.path.join(self.repo, "e2e", "Dockerfile"),
                 "-t", image, self.repo)
        self.run("k3d", "image", "import", image, "--cluster", self.cluster)

    def audit_log_path(self):
        return os.path.join(self.audit_dir, "audit.log")

    def kubectl(self, *args, stdin=None):
        env = dict(os.environ, KUBECONFIG=self.kubeconfig,
                   KUBECACHEDIR=os.path.join(self.work_dir, "kube-cache"))
        self.log("$ kubectl " + " ".join(args))
        done = subprocess.run([self.tools.kubectl, *args], input=stdin, capture_output=True,
                              text=True, env=env)
        if done.returncode != 0:
            raise HarnessError(f"kubectl {' '.join(args)}: {done.stderr}")
        return done

    def start_injector(self, name, profile_args, dns_names=()):
        """e2e/deploy/<name>/ applied in order (Namespace, ServiceAccount, RBAC, the generated
        ConfigMaps and TLS Secret, Deployment, Service); waits for the rollout. The suite then
        writes the webhook configuration with the returned clientConfig (the Service and the
        generated caBundle)."""
        from .deploy import deploy_files
        if name != "linkerd-proxy-injector":
            raise HarnessError(f"the k3d target deploys only the Linkerd profile "
                               f"(e2e/deploy/linkerd-proxy-injector), not {name}")
        before, _, client_config = deploy_files(self.repo, os.path.join(self.work_dir, name),
                                                name)
        for path in before:
            self.kubectl("apply", "-f", path)
        self.kubectl("rollout", "status", "-n", "linkerd", "deployment/" + name,
                     "--timeout=300s")
        return Webhook(name, client_config)

    def start_stub(self, name):
        """The stub runs on the host; the cluster reaches it as host.k3d.internal."""
        folder = os.path.join(self.work_dir, name)
        os.makedirs(folder, exist_ok=True)
        ca, cert, key = gen_certs(self.repo, folder, ["host.k3d.internal"], ips=())
        port_file = os.path.join(folder, "port")
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stub_webhook.py")
        with open(os.path.join(folder, "stub.log"), "w", encoding="utf-8") as out:
            process = subprocess.Popen([sys.executable, script, "--tls-cert", cert, "--tls-key",
                                        key, "--address", "0.0.0.0", "--port-file", port_file],
                                       stdout=out, stderr=subprocess.STDOUT,
                                       start_new_session=True)
        self.stubs.append((name, process))
        wait_file(port_file, process, f"stub {name}", os.path.join(folder, "stub.log"))
        port = int(open(port_file, encoding="utf-8").read())
        return Webhook(name, {"url": f"https://host.k3d.internal:{port}/",
                              "caBundle": b64_file(ca)}, os.path.join(folder, "calls.jsonl"))

    def unreachable(self, name):
        """A Service without endpoints: the apiserver's call fails as for a webhook down."""
        folder = os.path.join(self.work_dir, name)
        os.makedirs(folder, exist_ok=True)
        ca, _, _ = gen_certs(self.repo, folder, [f"{name}.default.svc"], ips=())
        self.kubectl("create", "service", "clusterip", name, "--tcp=443:8443", "-n", "default")
        return Webhook(name, {"service": {"name": name, "namespace": "default", "port": 443,
                                          "path": "/"}, "caBundle": b64_file(ca)})

    def stop(self):
        for name, process in self.stubs:
            stop_process(process, name, self.log)
        if self.started and not self.keep:
            subprocess.run(["k3d", "cluster", "delete", self.cluster], capture_output=True)
