"""Runs suites against one target and reports (e2e/run is the command line)."""
import importlib
import os
import shutil
import sys
import time
import traceback

from .context import Context, HarnessError
from .targets import K3dTarget, KubeTarget, SimTarget

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))

# The suites, in the order they run. Each module in e2e/lib/e2e/suites has a docstring (its
# description) and run(ctx).
SUITES = ["seed-tutorial", "istio-revisions", "opt-out", "webhook-down", "reinvocation",
          "validating-denial", "namespace-lifecycle", "jobs", "cascade"]

EXIT_SKIPPED = 77


def suite_module(name):
    return importlib.import_module("e2e.suites." + name.replace("-", "_"))


def suite_descriptions():
    return [(name, (suite_module(name).__doc__ or "").strip().splitlines()[0]) for name in SUITES]


class Tools:
    def __init__(self, build_dir):
        self.kubectl = os.environ.get("HARNESS_KUBECTL") or os.path.join(
            REPO, "build", "kube", "bin", "kubectl")
        self.apiserver_sim = os.path.join(build_dir, "apiserver-sim", "apiserver-sim")
        self.injector = os.path.join(build_dir, "injector", "injector")
        self.kube_local = os.path.join(build_dir, "kube", "kube-local")

    def missing(self, target):
        """One line naming the build command for a missing binary, or None."""
        if not os.access(self.kubectl, os.X_OK):
            return (f"{self.kubectl} is not built (bash scripts/build-kube.sh builds it; "
                    "needs Go 1.26)")
        if target == "kube" and not os.access(os.path.join(os.path.dirname(self.kubectl),
                                                           "kube-apiserver"), os.X_OK):
            return "build/kube/bin/kube-apiserver is not built (bash scripts/build-kube.sh)"
        needed = [self.apiserver_sim, self.injector] + ([self.kube_local]
                                                        if target == "kube" else [])
        for binary in needed:
            if not os.access(binary, os.X_OK):
                return (f"{binary} is not built (cmake --build --preset default --target "
                        f"{os.path.basename(binary)})")
        return None


def main(args):
    build_dir = os.path.abspath(args.build_dir or os.path.join(REPO, "build", "default"))
    tools = Tools(build_dir)
    names = args.suite or SUITES
    for name in names:
        if name not in SUITES:
            print(f"e2e/run: unknown suite {name!r} (e2e/run --list)", file=sys.stderr)
            return 2
    if args.target == "k3d":
        why = K3dTarget.missing()
        if why:
            print(f"skipped: {why}")
            return 0
    missing = tools.missing(args.target)
    if missing:
        print(f"skipped: {missing}")
        return EXIT_SKIPPED
    work_root = os.path.abspath(args.work_dir or os.path.join(REPO, "build", "e2e", args.target))
    os.makedirs(work_root, exist_ok=True)

    def log(text):
        print(text, flush=True)

    results = []
    for name in names:
        # One cluster per suite: a suite's audit log holds its requests only, and no state
        # (namespaces, webhook configurations) leaks between suites.
        work_dir = os.path.join(work_root, name)
        shutil.rmtree(work_dir, ignore_errors=True)
        os.makedirs(work_dir)
        if args.target == "kube":
            target = KubeTarget(REPO, tools, work_dir, log)
        elif args.target == "sim":
            target = SimTarget(REPO, tools, work_dir, log)
        else:
            target = K3dTarget(REPO, tools, work_dir, log, args.keep)
        log(f"== suite {name} on {args.target}")
        started = time.monotonic()
        ctx = Context(target, name, work_dir, REPO, tools, log)
        error = None
        try:
            target.start()
            suite_module(name).run(ctx)
        except HarnessError as e:
            error = str(e)
        except Exception:  # a bug in a suite: report it as a harness error, keep going
            error = traceback.format_exc()
        finally:
            target.stop()
            # Kept beside the suites' folders for the divergence report (e2e/divergence).
            audit_log = target.audit_log_path()
            if os.path.exists(audit_log):
                shutil.copyfile(audit_log, os.path.join(work_root, f"{name}.audit.log"))
        seconds = time.monotonic() - started
        if error:
            log(f"  ERROR {error}")
        status = "error" if error else ("failed" if ctx.failed else "passed")
        log(f"== suite {name} on {args.target}: {status} ({len(ctx.checks)} checks, "
            f"{len(ctx.failed)} failed, {seconds:.1f}s; files in {work_dir})")
        results.append((name, status))
        if not args.keep and status == "passed":
            shutil.rmtree(work_dir, ignore_errors=True)
    passed = sum(1 for _, s in results if s == "passed")
    log(f"e2e {args.target}: {passed} of {len(results)} suites passed")
    if any(s == "error" for _, s in results):
        return 2 if passed == 0 and all(s == "error" for _, s in results) else 1
    return 0 if passed == len(results) else 1
