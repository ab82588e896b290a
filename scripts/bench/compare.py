#!/usr/bin/env python3
"""The injector side by side with webhooks written the obvious way (run by compare.sh).

Every server gets the same ECDSA P-256 certificate, TLS 1.3, the same AdmissionReview (the seed
tutorial Pod, as `injector review` builds it), one core (taskset) while the load tool (wrk, and
hey for new connections) runs on another. Reported per server: requests per server CPU-second
(utime + stime from /proc/PID/stat of the server and its children), p50/p99 latency at each
connection count (keep-alive), the server CPU a new TLS connection costs (hey with keep-alive
off, less the keep-alive cost per request), resident memory (VmRSS) after the runs, and the
ratio of requests per CPU-second to the Go webhook's.
"""

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CLK_TCK = os.sysconf("SC_CLK_TCK")
SERVERS = ["injector-linkerd", "injector-istio", "istio-upstream", "go", "node", "nginx"]
# The same-work anchors: each injector profile and the real injector it reproduces, built from
# its Go module (scripts/bench/anchors). Linkerd's is missing: proxy.golang.org answers
# "403 Forbidden: This module version is not available" for every version of
# github.com/linkerd/linkerd2 (edge-26.8.3, its commit b24cd4059841, @latest, @v/list).
ANCHORS = {"injector-istio": "istio-upstream"}

# The answer nginx returns for every request: the Go webhook's answer to the review.
STATIC_ANSWER = {
    "apiVersion": "admission.k8s.io/v1",
    "kind": "AdmissionReview",
    "response": {
        "uid": "bench",
        "allowed": True,
        "patchType": "JSONPatch",
        # [{"op":"add","path":"/metadata/labels/bench~1injected","value":"true"},
        #  {"op":"add","path":"/metadata/annotations","value":{"bench/by":"nginx"}}]
        "patch": "W3sib3AiOiJhZGQiLCJwYXRoIjoiL21ldGFkYXRhL2xhYmVscy9iZW5jaH4xaW5qZWN0ZWQiLCJ2YWx1"
                 "ZSI6InRydWUifSx7Im9wIjoiYWRkIiwicGF0aCI6Ii9tZXRhZGF0YS9hbm5vdGF0aW9ucyIsInZhbHVl"
                 "Ijp7ImJlbmNoL2J5IjoibmdpbngifX1d",
    },
}


def fail(message):
    print("compare.sh: " + message, file=sys.stderr)
    sys.exit(1)


def tree_pids(pid):
    """The process and its descendants (nginx's workers)."""
    pids, todo = [], [pid]
    while todo:
        p = todo.pop()
        pids.append(p)
        try:
            with open(f"/proc/{p}/task/{p}/children") as f:
                todo.extend(int(c) for c in f.read().split())
        except OSError:
            pass
    return pids


def cpu_seconds(pid):
    total = 0
    for p in tree_pids(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
        except (OSError, IndexError):
            pass
    return total / CLK_TCK


def rss_mib(pid):
    total = 0
    for p in tree_pids(pid):
        try:
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        total += int(line.split()[1])
        except OSError:
            pass
    return total / 1024


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_for(predicate, seconds, what):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    fail(f"{what} did not start within {seconds} s")


def port_open(port):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


class Server:
    def __init__(self, name, argv, port, path, work, env=None, port_file=None):
        self.name, self.path = name, path
        self.log = open(os.path.join(work, name + ".log"), "wb")
        if port_file and os.path.exists(port_file):
            os.remove(port_file)  # the previous round's: its port is closed now
        self.proc = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT,
                                     env=env, start_new_session=True)
        try:
            self.port = self.wait_until_listening(port, port_file, work)
        except BaseException:
            self.stop()  # a server that does not come up is not left running
            raise

    def wait_until_listening(self, port, port_file, work):
        if port_file:
            wait_for(lambda: self.exited() or
                     (os.path.exists(port_file) and os.path.getsize(port_file) > 0), 30,
                     self.name)
            if self.exited():
                self.log.flush()
                with open(os.path.join(work, self.name + ".log"), "rb") as f:
                    tail = f.read()[-2000:].decode(errors="replace")
                fail(f"{self.name} exited with status {self.proc.returncode} before it "
                     f"listened:\n{tail}")
            with open(port_file) as f:
                text = f.read().strip()
            port = json.loads(text)["webhook"] if text.startswith("{") else int(text)
        wait_for(lambda: port_open(port), 30, self.name)
        return port

    def exited(self):
        return self.proc.poll() is not None

    @property
    def url(self):
        return f"https://127.0.0.1:{self.port}{self.path}"

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def check_answer(server, review_file):
    """One request first: the server must answer the review with a patch, or the run is void."""
    context = ssl.create_default_context()
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE  # the same self-made certificate for every server
    with open(review_file, "rb") as f:
        body = f.read()
    conn = http.client.HTTPSConnection("127.0.0.1", server.port, context=context, timeout=30)
    try:
        conn.request("POST", server.path, body, {"Content-Type": "application/json"})
        res = conn.getresponse()
        text = res.read()
    finally:
        conn.close()
    try:
        response = json.loads(text)["response"]
    except (ValueError, KeyError, TypeError):
        response = {}
    if res.status != 200 or not response.get("allowed") or not response.get("patch"):
        fail(f"{server.name} did not answer the review with a patch: HTTP {res.status} "
             f"{text[:300]!r}")


def parse_duration_ms(text):
    m = re.match(r"([\d.]+)(us|ms|s|m)$", text)
    if not m:
        return None
    value, unit = float(m.group(1)), m.group(2)
    return value * {"us": 0.001, "ms": 1, "s": 1000, "m": 60000}[unit]


def run_wrk(args, server, connections, seconds, lua):
    cmd = ["taskset", "-c", args.client_cpu, "wrk", "-t1", f"-c{connections}", f"-d{seconds}s",
           "--latency", "--timeout", "10s", "-s", lua, server.url]
    before = cpu_seconds(server.proc.pid)
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    cpu = cpu_seconds(server.proc.pid) - before
    if out.returncode != 0:
        fail(f"wrk against {server.name}: {out.stderr.strip()}")
    text = out.stdout
    requests = int(re.search(r"(\d+) requests in", text).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    errors = int(bad.group(1)) if bad else 0
    sock = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if sock:
        errors += sum(int(g) for g in sock.groups())
    pct = dict(re.findall(r"^\s+(50|99)%\s+(\S+)$", text, re.M))
    return {
        "connections": connections,
        "requests": requests,
        "errors": errors,
        "requests_per_second": requests / seconds,
        "server_cpu_seconds": cpu,
        "requests_per_cpu_second": requests / cpu if cpu > 0 else None,
        "p50_ms": parse_duration_ms(pct.get("50", "")),
        "p99_ms": parse_duration_ms(pct.get("99", "")),
    }


def run_hey(args, server, seconds, review_file, new_connections, qps=None):
    """One client: a new connection per request, or one kept connection at `qps` requests a
    second (the pace of a new-connection run, so that both leave the server idle as long
    between requests: an idle gap costs the next request its caches)."""
    cmd = ["taskset", "-c", args.client_cpu, "hey", "-z", f"{seconds}s", "-c", "1",
           "-m", "POST", "-T", "application/json", "-D", review_file, "-t", "10"]
    if new_connections:
        cmd.append("-disable-keepalive")
    if qps:
        cmd += ["-q", f"{qps:.1f}"]
    cmd.append(server.url)
    before = cpu_seconds(server.proc.pid)
    out = subprocess.run(cmd, capture_output=True, text=True, check=False)
    cpu = cpu_seconds(server.proc.pid) - before
    if out.returncode != 0:
        fail(f"hey against {server.name}: {out.stderr.strip()}")
    ok = re.search(r"\[200\]\s+(\d+) responses", out.stdout)
    requests = int(ok.group(1)) if ok else 0
    return requests, cpu


def start(name, args, work, certs):
    cert, key = os.path.join(certs, "tls.crt"), os.path.join(certs, "tls.key")
    pin = ["taskset", "-c", args.server_cpu]
    seed = os.path.join(ROOT, "scenarios", "seed-tutorial")
    if name.startswith("injector-"):
        profile = name.split("-", 1)[1]
        ports = os.path.join(work, name + ".ports.json")
        argv = pin + [args.injector, "--log-level", args.log_level, "serve", "--address",
                      "127.0.0.1", "--port", "0", "--admin-port", "-1", "--threads", "1",
                      "--profile", profile, "--tls-cert", cert, "--tls-key", key,
                      "--values", os.path.join(seed, "linkerd-values.yaml"),
                      "--trust-anchors", os.path.join(seed, "trust-anchors.pem"),
                      "--objects", os.path.join(seed, "application.yaml"),
                      "--objects", os.path.join(seed, "owners.yaml"), "--ports-file", ports]
        path = "/" if profile == "linkerd" else "/inject"
        return Server(name, argv, None, path, work, port_file=ports)
    if name == "go":
        port_file = os.path.join(work, "go.port")
        env = dict(os.environ, GOMAXPROCS="1")
        argv = pin + [args.go_webhook, "-tls-cert", cert, "-tls-key", key, "-port-file", port_file]
        return Server(name, argv, None, "/", work, env=env, port_file=port_file)
    if name == "istio-upstream":
        port_file = os.path.join(work, "istio-upstream.port")
        env = dict(os.environ, GOMAXPROCS="1")
        argv = pin + [args.istio_anchor, "-tls-cert", cert, "-tls-key", key, "-port-file",
                      port_file, "-work-dir", work]
        return Server(name, argv, None, "/inject", work, env=env, port_file=port_file)
    if name == "node":
        port_file = os.path.join(work, "node.port")
        argv = pin + ["node", os.path.join(ROOT, "scripts", "bench", "node-webhook.js"), cert, key,
                      port_file]
        return Server(name, argv, None, "/", work, port_file=port_file)
    if name == "nginx":
        port = free_port()
        conf = os.path.join(work, "nginx.conf")
        answer = json.dumps(STATIC_ANSWER, separators=(",", ":"))
        temp = os.path.join(work, "nginx-temp")
        os.makedirs(temp, exist_ok=True)
        with open(conf, "w") as f:
            f.write(f"""daemon off;
worker_processes 1;
pid {work}/nginx.pid;
error_log {work}/nginx-error.log warn;
events {{ worker_connections 1024; }}
http {{
  access_log off;
  client_body_temp_path {temp}/body;
  proxy_temp_path {temp}/proxy;
  fastcgi_temp_path {temp}/fastcgi;
  uwsgi_temp_path {temp}/uwsgi;
  scgi_temp_path {temp}/scgi;
  keepalive_requests 100000000;
  server {{
    listen 127.0.0.1:{port} ssl;
    ssl_certificate {cert};
    ssl_certificate_key {key};
    ssl_protocols TLSv1.3;
    location / {{
      default_type application/json;
      return 200 '{answer}';
    }}
  }}
}}
""")
        argv = pin + [args.nginx, "-c", conf, "-e", os.path.join(work, "nginx-error.log")]
        return Server(name, argv, port, "/", work)
    fail(f"unknown server {name} (known: {', '.join(SERVERS)})")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--injector", required=True)
    p.add_argument("--go-webhook", help="without it (no Go), the Go webhook is left out")
    p.add_argument("--istio-anchor", help="Istio's own injector (scripts/bench/anchors/istio); "
                   "without it, istio-upstream is left out")
    p.add_argument("--nginx", default=shutil.which("nginx") or "/usr/sbin/nginx")
    p.add_argument("--servers", default=",".join(SERVERS))
    p.add_argument("--connections", default="1,16")
    p.add_argument("--seconds", type=float, default=10)
    p.add_argument("--rounds", type=int, default=1, help="interleaved rounds; the best is kept")
    p.add_argument("--server-cpu", default="0")
    p.add_argument("--client-cpu", default="1")
    p.add_argument("--log-level", default="warn", help="the injector's")
    p.add_argument("-o", "--output", choices=["table", "json"], default="table")
    args = p.parse_args()
    servers = [s for s in args.servers.split(",") if s]
    missing = {"go": args.go_webhook, "istio-upstream": args.istio_anchor}
    servers = [s for s in servers if s not in missing or missing[s]]
    connections = [int(c) for c in args.connections.split(",")]
    seconds = max(1, int(round(args.seconds)))
    for tool in ["wrk", "hey", "taskset"] + (["node"] if "node" in servers else []):
        if not shutil.which(tool):
            fail(f"{tool} is not installed (scripts/install-deps.sh --bench installs it)")

    work = tempfile.mkdtemp(prefix="compare-")
    try:
        certs = os.path.join(work, "certs")
        subprocess.run(["bash", os.path.join(ROOT, "scripts", "gen-certs.sh"), "--out", certs,
                        "--ip", "127.0.0.1"], check=True, capture_output=True)
        review_file = os.path.join(work, "review.json")
        with open(review_file, "w") as f:
            subprocess.run([args.injector, "review",
                            os.path.join(ROOT, "scenarios", "seed-tutorial", "pod.yaml"), "--uid",
                            "bench"], stdout=f, check=True)
        lua = os.path.join(work, "post.lua")
        with open(lua, "w") as f:
            f.write('wrk.method = "POST"\n'
                    f'local file = io.open("{review_file}", "rb")\n'
                    'wrk.body = file:read("*a")\nfile:close()\n'
                    'wrk.headers["Content-Type"] = "application/json"\n')
        results = {s: None for s in servers}
        for _ in range(args.rounds):
            for name in servers:
                server = start(name, args, work, certs)
                try:
                    check_answer(server, review_file)
                    run_wrk(args, server, max(connections), 1, lua)  # warm-up
                    runs = [run_wrk(args, server, c, seconds, lua) for c in connections]
                    fresh, fresh_cpu = run_hey(args, server, seconds, review_file, True)
                    paced, paced_cpu = run_hey(args, server, seconds, review_file, False,
                                               qps=fresh / seconds if fresh else None)
                    rss = rss_mib(server.proc.pid)
                finally:
                    server.stop()
                keepalive_us = paced_cpu / paced * 1e6 if paced else None
                new_conn_us = fresh_cpu / fresh * 1e6 if fresh else None
                result = {
                    "runs": runs,
                    "new_connection_requests": fresh,
                    "new_connection_cpu_us_per_request": new_conn_us,
                    "paced_keepalive_requests": paced,
                    "paced_keepalive_cpu_us_per_request": keepalive_us,
                    "handshake_cpu_us": (new_conn_us - keepalive_us
                                         if new_conn_us is not None and keepalive_us is not None
                                         else None),
                    "rss_mib": rss,
                }
                best = results[name]
                top = max(connections)
                score = lambda r: next(x for x in r["runs"] if x["connections"] == top)[
                    "requests_per_cpu_second"] or 0
                if best is None or score(result) > score(best):
                    results[name] = result
        top = max(connections)
        def rate_of(name):
            r = results.get(name)
            return (next(x for x in r["runs"] if x["connections"] == top)["requests_per_cpu_second"]
                    if r else None)
        base_rate = rate_of("go")
        for name, r in results.items():
            rate = rate_of(name)
            r["vs_go"] = rate / base_rate if rate and base_rate else None
            anchor = rate_of(ANCHORS[name]) if name in ANCHORS else None
            r["vs_upstream"] = rate / anchor if rate and anchor else None
        report = {"seconds_per_run": seconds, "rounds": args.rounds, "connections": connections,
                  "server_cpu": args.server_cpu, "client_cpu": args.client_cpu,
                  "review_bytes": os.path.getsize(review_file), "servers": results}
        if args.output == "json":
            json.dump(report, sys.stdout, indent=2)
            print()
        else:
            print_table(report)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def fmt(value, spec):
    return "-" if value is None else format(value, spec)


def print_table(report):
    conns = report["connections"]
    head = f"{'server':<18}"
    for c in conns:
        head += f" {'req/CPU-s c=' + str(c):>16} {'p50 ms':>8} {'p99 ms':>8}"
    head += f" {'errors':>7} {'handshake µs':>13} {'RSS MiB':>8} {'vs go':>6} {'vs upstream':>11}"
    print(head)
    for name, r in report["servers"].items():
        line = f"{name:<18}"
        for c in conns:
            run = next(x for x in r["runs"] if x["connections"] == c)
            line += (f" {fmt(run['requests_per_cpu_second'], '16.0f')} {fmt(run['p50_ms'], '8.3f')}"
                     f" {fmt(run['p99_ms'], '8.3f')}")
        errors = sum(x["errors"] for x in r["runs"])
        line += (f" {errors:>7} {fmt(r['handshake_cpu_us'], '13.0f')} {r['rss_mib']:>8.1f}"
                 f" {fmt(r['vs_go'], '6.2f')} {fmt(r.get('vs_upstream'), '11.2f')}")
        print(line)
    print(f"({report['seconds_per_run']} s per run, best of {report['rounds']} round(s); server on "
          f"CPU {report['server_cpu']}, load tool on CPU {report['client_cpu']}; review "
          f"{report['review_bytes']} bytes; 'vs go' compares requests per server CPU-second at "
          f"c={max(conns)}, 'vs upstream' to the real injector of the same profile; "
          "handshake = server CPU per request on new connections less on one keep-alive "
          "connection at the same pace)")


if __name__ == "__main__":
    main()
