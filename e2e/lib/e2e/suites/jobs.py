"""Jobs and CronJobs: their Pods made by the job controller and injected by Linkerd.

The seed tutorial's injector and webhook configuration in an injected namespace `batch`:
  * a Job (parallelism 2, completions 3): the job controller creates two Pods (generateName
    "pi-", the batch.kubernetes.io/job-tracking finalizer, the Job as controller owner, the Job
    strategy's labels with the Job's uid), each through the proxy injector as the job-controller
    service account (audit log); SuccessfulCreate Events; status active 2, ready 0;
  * an Indexed Job: Pods idx-0-*, idx-1-* with their completion index (annotation, label,
    hostname, JOB_COMPLETION_INDEX), injected too;
  * a Pod of the Job deleted: it counts as failed (status.failed 1), its finalizer removed;
  * a CronJob every minute: at the next minute the cronjob controller creates the Job
    "<cronjob>-<minutes since the epoch>" with the scheduled-timestamp annotation, whose Pod is
    injected; status.active lists it;
  * `kubectl delete cronjob` takes its Job and the Job's Pod with it (garbage collector, then the
    job controller removes the orphan Pod's finalizer).
Pods never run outside k3d: checks are on the admitted objects.
"""
import json

from . import common

NS = "batch"
TRACKING = "batch.kubernetes.io/job-tracking"
INDEX = "batch.kubernetes.io/job-completion-index"


def job(name, extra):
    spec = dict({"template": {"metadata": {"labels": {"app": name}},
                              "spec": {"restartPolicy": "Never",
                                       "containers": [{"name": "work", "image": "busybox:1.36",
                                                       "command": ["true"]}]}}}, **extra)
    return json.dumps({"apiVersion": "batch/v1", "kind": "Job",
                       "metadata": {"name": name, "namespace": NS}, "spec": spec})


def cron_job(name):
    return json.dumps({"apiVersion": "batch/v1", "kind": "CronJob",
                       "metadata": {"name": name, "namespace": NS},
                       "spec": {"schedule": "* * * * *", "concurrencyPolicy": "Forbid",
                                "jobTemplate": {"metadata": {"labels": {"team": "e2e"}},
                                                "spec": {"template": {"spec": {
                                                    "restartPolicy": "OnFailure",
                                                    "containers": [{"name": "work",
                                                                    "image": "busybox:1.36"}]}}}}}})


def check_job_pod(ctx, pod, job_obj):
    name = pod["metadata"]["name"]
    ref = common.owner(pod)
    ctx.check(f"Pod {name} is controlled by Job {job_obj['metadata']['name']}",
              ref and ref["kind"] == "Job" and ref["apiVersion"] == "batch/v1"
              and ref["uid"] == job_obj["metadata"]["uid"]
              and ref.get("blockOwnerDeletion") is True, json.dumps(ref))
    ctx.check(f"Pod {name} has the {TRACKING} finalizer",
              TRACKING in pod["metadata"].get("finalizers", []),
              json.dumps(pod["metadata"].get("finalizers")))
    labels = pod["metadata"].get("labels", {})
    ctx.check_equal(f"Pod {name} label batch.kubernetes.io/controller-uid",
                    labels.get("batch.kubernetes.io/controller-uid"), job_obj["metadata"]["uid"])
    ctx.check_equal(f"Pod {name} label job-name", labels.get("job-name"),
                    job_obj["metadata"]["name"])
    ctx.check(f"Pod {name} is injected (linkerd-proxy)",
              common.has_container(pod, "linkerd-proxy"))


def run(ctx):
    common.install_linkerd(ctx)
    ctx.step("an injected namespace")
    common.create_namespace(ctx, NS, annotations={"linkerd.io/inject": "enabled"})
    common.wait_until_effective(
        ctx, "the proxy injector is called", NS,
        lambda code, pod: code == 0 and common.has_container(pod, "linkerd-proxy"))

    ctx.step("a Job: parallelism 2 of 3 completions")
    ctx.apply(job("pi", {"parallelism": 2, "completions": 3}))
    pods = ctx.wait_for_items("pods", NS, "job-name=pi", 2, "the Pods of Job pi")
    pi = ctx.get("job", "pi", NS)
    for pod in pods:
        check_job_pod(ctx, pod, pi)
        ctx.check_equal(f"Pod {pod['metadata']['name']} generateName",
                        pod["metadata"].get("generateName"), "pi-")
    common.wait_for_status(ctx, "job", "pi", NS, {"active": 2, "ready": 0, "failed": 0})
    creates = common.pod_create_events(ctx, NS)
    for pod in pods:
        event = creates.get(pod["metadata"]["name"])
        ctx.check_equal(f"Pod {pod['metadata']['name']} created by (audit log)",
                        (event or {}).get("user", {}).get("username"),
                        "system:serviceaccount:kube-system:job-controller")
    def pi_created():
        events = [e for e in ctx.get("events", namespace=NS)["items"]
                  if e.get("reason") == "SuccessfulCreate"
                  and e["involvedObject"]["name"] == "pi"]
        return events if len(events) >= 2 else None
    created = ctx.wait_for("the Job's two SuccessfulCreate Events", pi_created)
    ctx.check_equal("SuccessfulCreate messages of Job pi", sorted(e["message"] for e in created),
                    sorted(f"Created pod: {p['metadata']['name']}" for p in pods))

    ctx.step("an Indexed Job: each Pod carries its completion index")
    ctx.apply(job("idx", {"completionMode": "Indexed", "parallelism": 2, "completions": 2}))
    indexed = ctx.wait_for_items("pods", NS, "job-name=idx", 2, "the Pods of Job idx")
    idx = ctx.get("job", "idx", NS)
    by_index = {p["metadata"].get("labels", {}).get(INDEX): p for p in indexed}
    ctx.check_equal("completion indexes of Job idx's Pods", sorted(by_index), ["0", "1"])
    for index, pod in by_index.items():
        check_job_pod(ctx, pod, idx)
        name = pod["metadata"]["name"]
        ctx.check(f"Pod {name} generateName idx-{index}-",
                  pod["metadata"].get("generateName") == f"idx-{index}-")
        ctx.check_equal(f"Pod {name} hostname", pod["spec"].get("hostname"), f"idx-{index}")
        ctx.check_equal(f"Pod {name} annotation {INDEX}",
                        pod["metadata"].get("annotations", {}).get(INDEX), index)
        work = [c for c in pod["spec"]["containers"] if c["name"] == "work"]
        env = {e["name"]: e for e in (work[0].get("env", []) if work else [])}
        ctx.check_equal(f"Pod {name} JOB_COMPLETION_INDEX",
                        env.get("JOB_COMPLETION_INDEX", {}).get("valueFrom"),
                        {"fieldRef": {"apiVersion": "v1",
                                      "fieldPath": f"metadata.labels['{INDEX}']"}})

    ctx.step("a Pod of Job pi deleted: it counts as failed")
    victim = pods[0]["metadata"]["name"]
    ctx.kubectl("delete", "pod", victim, "-n", NS, "--wait=false")
    ctx.wait_for(f"Pod {victim} gone (its finalizer removed by the job controller)",
                 lambda: ctx.get("pod", victim, NS) is None)
    common.wait_for_status(ctx, "job", "pi", NS, {"failed": 1})

    ctx.step("a CronJob every minute: its first Job, injected")
    ctx.apply(cron_job("every"))
    made = ctx.wait_for_items("jobs", NS, "team=e2e", 1, "the CronJob's first Job")[0]
    every = ctx.get("cronjob", "every", NS)
    ref = common.owner(made)
    ctx.check("the Job is controlled by CronJob every",
              ref and ref["kind"] == "CronJob" and ref["uid"] == every["metadata"]["uid"],
              json.dumps(ref))
    scheduled = made["metadata"].get("annotations", {}).get(
        "batch.kubernetes.io/cronjob-scheduled-timestamp", "")
    ctx.check(f"the Job's name is every-<minutes since the epoch> of {scheduled}",
              made["metadata"]["name"].startswith("every-")
              and made["metadata"]["name"][len("every-"):].isdigit(), made["metadata"]["name"])
    job_pod = ctx.wait_for_items("pods", NS, f"job-name={made['metadata']['name']}", 1,
                                 "the Pod of the CronJob's Job")[0]
    check_job_pod(ctx, job_pod, made)
    ctx.wait_for("the CronJob's status lists its Job", lambda: [
        a for a in (ctx.get("cronjob", "every", NS) or {}).get("status", {}).get("active", [])
        if a.get("uid") == made["metadata"]["uid"]])
    ctx.kubectl("get", "cronjobs,jobs", "-n", NS)

    ctx.step("kubectl delete cronjob: its Job and Pod go with it")
    ctx.kubectl("delete", "cronjob", "every", "-n", NS)
    ctx.wait_for("the CronJob's Job deleted",
                 lambda: ctx.get("job", made["metadata"]["name"], NS) is None)
    ctx.wait_for("the Job's Pod deleted",
                 lambda: ctx.get("pod", job_pod["metadata"]["name"], NS) is None)
