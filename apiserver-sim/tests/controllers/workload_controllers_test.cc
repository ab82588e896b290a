// The workload controllers of `apiserver-sim serve`: a Deployment gets a ReplicaSet and Pods
// through the admission chain, as kube-controller-manager's controllers make them (owner
// references, pod-template-hash, the controllers' service accounts in the admission request),
// scaling, the garbage collector (Background, Orphan and Foreground propagation), and a Pod
// creation a webhook denies (FailedCreate, backoff).

#include <algorithm>
#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/metrics.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/caller.h"
#include "harness/sim/store.h"
#include "harness/sim/workload_controllers.h"

namespace harness::sim {
namespace {

using json = nlohmann::json;

const core::GroupResource kDeployments{"apps", "deployments"};
const core::GroupResource kReplicaSets{"apps", "replicasets"};
const core::GroupResource kPods{"", "pods"};
const core::GroupResource kEvents{"", "events"};

json deployment(int replicas) {
  return json::parse(R"({"apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "demo"},
    "spec": {"replicas": )" + std::to_string(replicas) + R"(,
      "selector": {"matchLabels": {"app": "web"}},
      "template": {"metadata": {"labels": {"app": "web"}, "annotations": {"a": "b"}},
                   "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}})");
}

class ControllersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.put({"", "namespaces"}, json::parse(R"({"apiVersion": "v1", "kind": "Namespace",
      "metadata": {"name": "demo", "labels": {"kubernetes.io/metadata.name": "demo"}}})"));
    store_.put({"", "serviceaccounts"}, json::parse(R"({"apiVersion": "v1",
      "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": "demo"}})"));
    // A mutating webhook on Pod CREATE that records who sent each request.
    caller_.handle("https://pods.example.com/", [this](const core::AdmissionReview& review) {
      {
        std::lock_guard lock(mutex_);
        users_.push_back(review.request->user_info.username);
      }
      core::AdmissionResponse response;
      response.uid = review.request->uid;
      response.allowed = deny_.empty();
      if (!deny_.empty()) {
        core::Status status;
        status.status = "Failure";
        status.message = deny_;
        status.code = 403;
        response.status = status;
      }
      return core::AdmissionReview{review.api_version, review.kind, std::nullopt, response};
    });
    store_.put({"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
               json::parse(R"({"apiVersion": "admissionregistration.k8s.io/v1",
      "kind": "MutatingWebhookConfiguration", "metadata": {"name": "pods"},
      "webhooks": [{"name": "pods.example.com", "clientConfig": {"url": "https://pods.example.com/"},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                   "resources": ["pods"]}],
        "sideEffects": "None", "admissionReviewVersions": ["v1"], "failurePolicy": "Fail"}]})"));
    chain_ = std::make_unique<AdmissionChain>(store_, caller_, metrics_, ChainOptions{});
    ControllerOptions options;
    options.run_thread = false;
    controllers_ = std::make_unique<WorkloadControllers>(store_, *chain_, options);
  }

  void settle() {
    for (int pass = 0; pass < 20 && controllers_->reconcileOnce(); ++pass) {
    }
    ASSERT_FALSE(controllers_->reconcileOnce()) << "the controllers did not settle";
  }

  std::vector<std::string> reasons() {
    std::vector<std::string> out;
    for (const auto& e : store_.list(kEvents, "demo")) out.push_back(e.value("reason", ""));
    return out;
  }

  void create(const json& object) {
    WriteRequest request;
    request.operation = "CREATE";
    request.resource = {"apps", "v1", "deployments"};
    request.namespace_name = "demo";
    request.object = object;
    ASSERT_TRUE(chain_->handle(request).allowed);
  }

  // An UPDATE of Deployment web with another template annotation (a new ReplicaSet).
  void changeTemplate() {
    json changed = *store_.get(kDeployments, "demo", "web");
    changed["spec"]["template"]["metadata"]["annotations"]["a"] = "c";
    WriteRequest request;
    request.operation = "UPDATE";
    request.resource = {"apps", "v1", "deployments"};
    request.namespace_name = "demo";
    request.name = "web";
    request.object = changed;
    ASSERT_TRUE(chain_->handle(request).allowed);
  }

  ObjectStore store_;
  InProcessWebhookCaller caller_;
  core::MetricsRegistry metrics_;
  std::unique_ptr<AdmissionChain> chain_;
  std::unique_ptr<WorkloadControllers> controllers_;
  std::mutex mutex_;
  std::vector<std::string> users_;
  std::string deny_;
};

TEST_F(ControllersTest, DeploymentGetsAReplicaSetAndPodsAsTheControllersMakeThem) {
  create(deployment(2));
  settle();
  const auto d = store_.get(kDeployments, "demo", "web");
  ASSERT_TRUE(d);
  const auto replicasets = store_.list(kReplicaSets, "demo");
  ASSERT_EQ(replicasets.size(), 1u);
  const json& rs = replicasets[0];
  const std::string hash = rs["metadata"]["labels"]["pod-template-hash"];
  EXPECT_EQ(rs["metadata"]["name"], "web-" + hash);
  EXPECT_EQ(rs["spec"]["selector"]["matchLabels"]["pod-template-hash"], hash);
  EXPECT_EQ(rs["spec"]["replicas"], 2);
  EXPECT_EQ(rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "1");
  EXPECT_EQ(rs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"], "3");
  EXPECT_EQ(rs["metadata"]["ownerReferences"][0],
            json({{"apiVersion", "apps/v1"}, {"kind", "Deployment"}, {"name", "web"},
                  {"uid", (*d)["metadata"]["uid"]}, {"controller", true},
                  {"blockOwnerDeletion", true}}));
  EXPECT_EQ(rs["status"]["replicas"], 2);
  EXPECT_EQ((*d)["metadata"]["annotations"]["deployment.kubernetes.io/revision"], "1");
  EXPECT_EQ((*d)["status"]["updatedReplicas"], 2);
  EXPECT_EQ((*d)["status"]["unavailableReplicas"], 2);
  EXPECT_EQ((*d)["status"]["conditions"][0]["reason"], "MinimumReplicasUnavailable");

  const auto pods = store_.list(kPods, "demo");
  ASSERT_EQ(pods.size(), 2u);
  for (const auto& pod : pods) {
    EXPECT_EQ(pod["metadata"]["generateName"], "web-" + hash + "-");
    EXPECT_EQ(pod["metadata"]["labels"]["pod-template-hash"], hash);
    EXPECT_EQ(pod["metadata"]["annotations"]["a"], "b");
    EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["kind"], "ReplicaSet");
    EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["uid"], rs["metadata"]["uid"]);
    EXPECT_EQ(pod["status"]["phase"], "Pending");  // never scheduled, never run
  }
  EXPECT_EQ(users_, std::vector<std::string>(
                        2, "system:serviceaccount:kube-system:replicaset-controller"));
  const auto r = reasons();
  EXPECT_EQ(std::count(r.begin(), r.end(), "ScalingReplicaSet"), 1);
  EXPECT_EQ(std::count(r.begin(), r.end(), "SuccessfulCreate"), 2);
}

TEST_F(ControllersTest, ScalingTheDeploymentScalesItsReplicaSet) {
  create(deployment(1));
  settle();
  auto d = *store_.get(kDeployments, "demo", "web");
  d["spec"]["replicas"] = 3;
  store_.update(kDeployments, d);
  settle();
  EXPECT_EQ(store_.list(kPods, "demo").size(), 3u);
  d = *store_.get(kDeployments, "demo", "web");
  d["spec"]["replicas"] = 1;
  store_.update(kDeployments, d);
  settle();
  EXPECT_EQ(store_.list(kPods, "demo").size(), 1u);
  EXPECT_EQ(store_.list(kReplicaSets, "demo").size(), 1u);
  const auto r = reasons();
  EXPECT_EQ(std::count(r.begin(), r.end(), "SuccessfulDelete"), 2);
}

// rolling.go: with 4 replicas (maxSurge 1, maxUnavailable 1) and Pods that never become
// available, a new template scales the new ReplicaSet to 2 and the old one down to 3.
TEST_F(ControllersTest, ARollingUpdateScalesWithinSurgeAndUnavailable) {
  create(deployment(4));
  settle();
  const std::string first = store_.list(kReplicaSets, "demo")[0]["metadata"]["name"];
  changeTemplate();
  settle();
  std::map<std::string, json> by_revision;
  for (const auto& rs : store_.list(kReplicaSets, "demo")) {
    by_revision[rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"]] = rs;
  }
  ASSERT_EQ(by_revision.size(), 2u);
  EXPECT_EQ(by_revision["1"]["metadata"]["name"], first);
  EXPECT_EQ(by_revision["1"]["spec"]["replicas"], 3);
  EXPECT_EQ(by_revision["2"]["spec"]["replicas"], 2);
  EXPECT_EQ(store_.list(kPods, "demo").size(), 5u);
}

TEST_F(ControllersTest, GarbageCollectorRemovesTheDependentsOfADeletedDeployment) {
  create(deployment(2));
  settle();
  ASSERT_EQ(store_.list(kPods, "demo").size(), 2u);
  store_.remove(kDeployments, "demo", "web");
  settle();
  EXPECT_TRUE(store_.list(kReplicaSets, "demo").empty());
  EXPECT_TRUE(store_.list(kPods, "demo").empty());
}

// A DELETE as kubectl sends it, with DeleteOptions; the result's object.
json deleteWith(AdmissionChain& chain, const core::GroupVersionResource& resource,
                const std::string& name, const json& options) {
  WriteRequest request;
  request.operation = "DELETE";
  request.resource = resource;
  request.namespace_name = "demo";
  request.name = name;
  request.options = options;
  auto result = chain.handle(request);
  EXPECT_TRUE(result.allowed);
  return result.object.value_or(json());
}

TEST_F(ControllersTest, OrphanPropagationRemovesTheOwnerReferencesThenTheOwner) {
  create(deployment(2));
  settle();
  const json marked = deleteWith(*chain_, {"apps", "v1", "deployments"}, "web",
                                 {{"propagationPolicy", "Orphan"}});
  // store.go updateForGracefulDeletionAndFinalizers: kept with the orphan finalizer.
  EXPECT_EQ(marked["metadata"]["finalizers"], json::array({"orphan"}));
  EXPECT_TRUE(marked["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(marked["metadata"]["deletionGracePeriodSeconds"], 0);
  ASSERT_TRUE(store_.get(kDeployments, "demo", "web"));
  settle();
  EXPECT_FALSE(store_.get(kDeployments, "demo", "web"));
  const auto replicasets = store_.list(kReplicaSets, "demo");
  ASSERT_EQ(replicasets.size(), 1u);
  EXPECT_FALSE(replicasets[0]["metadata"].contains("ownerReferences"));
  // The Pods keep their ReplicaSet, which keeps them.
  const auto pods = store_.list(kPods, "demo");
  ASSERT_EQ(pods.size(), 2u);
  for (const auto& pod : pods) {
    EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["uid"], replicasets[0]["metadata"]["uid"]);
  }
  // The same Deployment again adopts the orphan (ClaimReplicaSets): no second ReplicaSet.
  create(deployment(2));
  settle();
  const auto adopted = store_.list(kReplicaSets, "demo");
  ASSERT_EQ(adopted.size(), 1u);
  EXPECT_EQ(adopted[0]["metadata"]["ownerReferences"][0]["uid"],
            (*store_.get(kDeployments, "demo", "web"))["metadata"]["uid"]);
  EXPECT_EQ(store_.list(kPods, "demo").size(), 2u);
}

TEST_F(ControllersTest, TheOldOrphanDependentsOptionAndTheVersionsDefaultOrphanToo) {
  create(deployment(1));
  settle();
  deleteWith(*chain_, {"apps", "v1", "deployments"}, "web", {{"orphanDependents", true}});
  settle();
  EXPECT_FALSE(store_.get(kDeployments, "demo", "web"));
  ASSERT_EQ(store_.list(kReplicaSets, "demo").size(), 1u);
  // A batch/v1 Job deleted without options orphans (jobStrategy DefaultGarbageCollectionPolicy).
  const json job = {{"apiVersion", "batch/v1"},
                    {"kind", "Job"},
                    {"metadata", {{"name", "j"}, {"namespace", "demo"}, {"uid", "job-uid"}}}};
  store_.put({"batch", "jobs"}, job);
  EXPECT_EQ(deleteWith(*chain_, {"batch", "v1", "jobs"}, "j", json::object())["metadata"]
                ["finalizers"],
            json::array({"orphan"}));
  // A second DELETE may change the policy: Background takes the finalizer away, so it goes.
  deleteWith(*chain_, {"batch", "v1", "jobs"}, "j", {{"propagationPolicy", "Background"}});
  EXPECT_FALSE(store_.get({"batch", "jobs"}, "demo", "j"));
}

TEST_F(ControllersTest, ForegroundPropagationDeletesTheDependentsBeforeTheOwner) {
  json held = deployment(2);
  held["spec"]["template"]["metadata"]["finalizers"] = json::array({"example.com/hold"});
  create(held);
  settle();
  ASSERT_EQ(store_.list(kPods, "demo").size(), 2u);
  const json marked = deleteWith(*chain_, {"apps", "v1", "deployments"}, "web",
                                 {{"propagationPolicy", "Foreground"}});
  EXPECT_EQ(marked["metadata"]["finalizers"], json::array({"foregroundDeletion"}));
  settle();
  // The Pods are deleted (kept by their own finalizer), the ReplicaSet waits for them in the
  // foreground and the Deployment for the ReplicaSet.
  const auto d = store_.get(kDeployments, "demo", "web");
  ASSERT_TRUE(d);
  EXPECT_EQ((*d)["metadata"]["finalizers"], json::array({"foregroundDeletion"}));
  const auto replicasets = store_.list(kReplicaSets, "demo");
  ASSERT_EQ(replicasets.size(), 1u);
  EXPECT_EQ(replicasets[0]["metadata"]["finalizers"], json::array({"foregroundDeletion"}));
  EXPECT_TRUE(replicasets[0]["metadata"].contains("deletionTimestamp"));
  auto pods = store_.list(kPods, "demo");
  ASSERT_EQ(pods.size(), 2u);
  for (auto pod : pods) {
    EXPECT_TRUE(pod["metadata"].contains("deletionTimestamp"));
    pod["metadata"].erase("finalizers");
    WriteRequest release;
    release.operation = "UPDATE";
    release.resource = {"", "v1", "pods"};
    release.namespace_name = "demo";
    release.name = pod["metadata"]["name"];
    release.object = pod;
    ASSERT_TRUE(chain_->handle(release).allowed);
  }
  settle();
  EXPECT_TRUE(store_.list(kPods, "demo").empty());
  EXPECT_TRUE(store_.list(kReplicaSets, "demo").empty());
  EXPECT_FALSE(store_.get(kDeployments, "demo", "web"));
}

TEST_F(ControllersTest, AnOwnerWithoutDependentsLosesItsPropagationFinalizer) {
  store_.put({"", "configmaps"}, json::parse(R"({"apiVersion": "v1", "kind": "ConfigMap",
    "metadata": {"name": "c", "namespace": "demo"}})"));
  deleteWith(*chain_, {"", "v1", "configmaps"}, "c", {{"propagationPolicy", "Foreground"}});
  ASSERT_TRUE(store_.get({"", "configmaps"}, "demo", "c"));
  settle();
  EXPECT_FALSE(store_.get({"", "configmaps"}, "demo", "c"));
}

// progress.go: no Pod ever becomes available, so a rollout makes no progress after its Pods are
// created; past progressDeadlineSeconds Progressing turns False (kubectl rollout status: "exceeded
// its progress deadline").
TEST_F(ControllersTest, ARolloutWithoutProgressTimesOutAfterItsDeadline) {
  auto clock = std::chrono::system_clock::now();
  ControllerOptions options;
  options.run_thread = false;
  options.now = [&clock] { return clock; };
  controllers_ = std::make_unique<WorkloadControllers>(store_, *chain_, options);
  json d = deployment(1);
  d["spec"]["progressDeadlineSeconds"] = 60;
  create(d);
  settle();
  auto progressing = [this] {
    const json stored = store_.get(kDeployments, "demo", "web").value_or(json::object());
    for (const auto& c : stored.value("status", json::object()).value("conditions", json())) {
      if (c["type"] == "Progressing") return c;
    }
    return json();
  };
  const std::string rs = store_.list(kReplicaSets, "demo")[0]["metadata"]["name"];
  EXPECT_EQ(progressing()["reason"], "ReplicaSetUpdated");
  clock += std::chrono::seconds(59);
  settle();
  EXPECT_EQ(progressing()["status"], "True");
  clock += std::chrono::seconds(2);
  settle();
  EXPECT_EQ(progressing()["status"], "False");
  EXPECT_EQ(progressing()["reason"], "ProgressDeadlineExceeded");
  EXPECT_EQ(progressing()["message"], "ReplicaSet \"" + rs + "\" has timed out progressing.");
  // A new template is progress again.
  changeTemplate();
  settle();
  EXPECT_EQ(progressing()["status"], "True");
  EXPECT_EQ(progressing()["reason"], "ReplicaSetUpdated");
}

TEST_F(ControllersTest, ADeniedPodCreationIsAFailedCreateEventAndBacksOff) {
  deny_ = "no pods today";
  create(deployment(1));
  settle();
  EXPECT_TRUE(store_.list(kPods, "demo").empty());
  std::vector<std::string> failures;
  for (const auto& e : store_.list(kEvents, "demo")) {
    if (e.value("reason", "") == "FailedCreate") failures.push_back(e.value("message", ""));
  }
  // One attempt: the next waits for the backoff, not for the next pass.
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0],
            "Error creating: admission webhook \"pods.example.com\" denied the request: "
            "no pods today");
}

TEST_F(ControllersTest, TheSameEventAgainIsCountedOnTheStoredOne) {
  deny_ = "no pods today";
  ControllerOptions options;
  options.run_thread = false;
  options.initial_backoff = std::chrono::milliseconds(0);  // every pass retries
  controllers_ = std::make_unique<WorkloadControllers>(store_, *chain_, options);
  create(deployment(1));
  controllers_->reconcileOnce();  // the ReplicaSet, and a first attempt
  controllers_->reconcileOnce();  // a second attempt
  std::vector<json> failures;
  for (const auto& e : store_.list(kEvents, "demo")) {
    if (e.value("reason", "") == "FailedCreate") failures.push_back(e);
  }
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0]["count"], 2);
}

// validatingadmissionpolicystatus: a policy whose generation is past status.observedGeneration
// gets the status the type checker gives, applied to the status subresource as the controller's
// service account; once observed, and after a failure, it is not written again (no spin).
TEST_F(ControllersTest, ValidatingAdmissionPolicyStatusIsWrittenOncePerGeneration) {
  const core::GroupResource policies{"admissionregistration.k8s.io",
                                     "validatingadmissionpolicies"};
  std::vector<json> checked;
  bool fail = false;
  ControllerOptions options;
  options.run_thread = false;
  options.policy_status = [&](const json& policy) -> std::optional<json> {
    checked.push_back(policy);
    if (fail) throw std::runtime_error("kube-cel: broken pipe");
    return json{{"observedGeneration", policy["metadata"]["generation"]},
                {"typeChecking",
                 {{"expressionWarnings",
                   json::array({{{"fieldRef", "spec.validations[0].expression"},
                                 {"warning", "w"}}})}}}};
  };
  controllers_ = std::make_unique<WorkloadControllers>(store_, *chain_, options);
  // As the registry stores a created policy (generation 1, no status).
  json policy = json::parse(R"({"apiVersion": "admissionregistration.k8s.io/v1",
    "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "p", "generation": 1},
    "spec": {"validations": [{"expression": "object.spec.replicas > 'x'"}]}})");
  store_.put(policies, policy);

  settle();
  ASSERT_EQ(checked.size(), 1u);
  EXPECT_FALSE(checked[0].contains("status"));
  auto stored = store_.get(policies, "", "p");
  ASSERT_TRUE(stored);
  EXPECT_EQ((*stored)["status"]["observedGeneration"], 1);
  EXPECT_EQ((*stored)["status"]["typeChecking"]["expressionWarnings"][0]["fieldRef"],
            "spec.validations[0].expression");
  EXPECT_EQ((*stored)["metadata"]["generation"], 1);  // a status write is not a new generation
  EXPECT_EQ((*stored)["spec"]["validations"][0]["expression"], "object.spec.replicas > 'x'");

  // A new generation whose check fails: tried once, not again until the policy changes.
  fail = true;
  json next = *stored;
  next["metadata"]["generation"] = 2;
  next["spec"]["validations"][0]["expression"] = "object.spec.replicas > 1";
  store_.put(policies, next);
  settle();
  EXPECT_EQ(checked.size(), 2u);
  EXPECT_EQ((*store_.get(policies, "", "p"))["status"]["observedGeneration"], 1);
}

// --- job and cronjob controllers -------------------------------------------------------------

class JobControllersTest : public ControllersTest {
 protected:
  void SetUp() override {
    ControllersTest::SetUp();
    now_ = std::chrono::system_clock::now();
    ControllerOptions options;
    options.run_thread = false;
    options.now = [this] { return now_; };
    controllers_ = std::make_unique<WorkloadControllers>(store_, *chain_, options);
  }

  void createBatch(const std::string& resource, const json& object) {
    WriteRequest request;
    request.operation = "CREATE";
    request.resource = {"batch", "v1", resource};
    request.namespace_name = "demo";
    request.object = object;
    const auto result = chain_->handle(request);
    ASSERT_TRUE(result.allowed) << (result.status ? result.status->message : "");
  }

  void deleteObject(const core::GroupResource& resource, const std::string& name) {
    WriteRequest request;
    request.operation = "DELETE";
    request.resource = {resource.group, "v1", resource.resource};
    request.namespace_name = "demo";
    request.name = name;
    ASSERT_TRUE(chain_->handle(request).allowed);
  }

  std::vector<json> events(const std::string& reason) {
    std::vector<json> out;
    for (const auto& e : store_.list(kEvents, "demo")) {
      if (e.value("reason", "") == reason) out.push_back(e);
    }
    return out;
  }

  // Creates a CronJob; returns the start of the minute it was created in (its first scheduled
  // time with "* * * * *" is a minute later).
  std::chrono::system_clock::time_point createCronJob(const json& cron_job) {
    createBatch("cronjobs", cron_job);
    const auto stored = store_.get({"batch", "cronjobs"}, "demo", cron_job["metadata"]["name"]);
    return std::chrono::floor<std::chrono::minutes>(
        parseRfc3339(stored.value()["metadata"]["creationTimestamp"]).value());
  }

  // A Job's name for a scheduled time: "<cronjob>-<minutes since the epoch>".
  static std::string jobName(const std::string& cron_job, std::chrono::system_clock::time_point t) {
    return cron_job + "-" +
           std::to_string(
               std::chrono::duration_cast<std::chrono::minutes>(t.time_since_epoch()).count());
  }

  std::chrono::system_clock::time_point now_;
};

const core::GroupResource kJobs{"batch", "jobs"};
const core::GroupResource kCronJobs{"batch", "cronjobs"};

json job(const std::string& name, const std::string& spec_extra) {
  return json::parse(R"({"apiVersion": "batch/v1", "kind": "Job",
    "metadata": {"name": ")" + name + R"(", "namespace": "demo"},
    "spec": {)" + spec_extra + R"(
      "template": {"metadata": {"labels": {"app": "pi"}},
                   "spec": {"restartPolicy": "Never",
                            "containers": [{"name": "pi", "image": "perl"}]}}}})");
}

// job_controller.go manageJob: parallelism Pods (bounded by completions), as the job-controller
// service account, each with the tracking finalizer and the Job as controller.
TEST_F(JobControllersTest, AJobGetsItsPodsAsTheJobControllerMakesThem) {
  createBatch("jobs", job("pi", R"("parallelism": 2, "completions": 3,)"));
  settle();
  const auto j = *store_.get(kJobs, "demo", "pi");
  const auto pods = store_.list(kPods, "demo");
  ASSERT_EQ(pods.size(), 2u);
  for (const auto& pod : pods) {
    EXPECT_EQ(pod["metadata"]["generateName"], "pi-");
    EXPECT_EQ(pod["metadata"]["finalizers"], json::array({"batch.kubernetes.io/job-tracking"}));
    EXPECT_EQ(pod["metadata"]["labels"]["app"], "pi");
    EXPECT_EQ(pod["metadata"]["labels"]["job-name"], "pi");  // the Job strategy's labels
    EXPECT_EQ(pod["metadata"]["labels"]["batch.kubernetes.io/controller-uid"],
              j["metadata"]["uid"]);
    EXPECT_EQ(pod["metadata"]["ownerReferences"][0],
              json({{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"name", "pi"},
                    {"uid", j["metadata"]["uid"]}, {"controller", true},
                    {"blockOwnerDeletion", true}}));
  }
  EXPECT_EQ(users_, std::vector<std::string>(2, "system:serviceaccount:kube-system:job-controller"));
  EXPECT_EQ(events("SuccessfulCreate").size(), 2u);
  EXPECT_EQ(events("SuccessfulCreate")[0]["source"]["component"], "job-controller");
  EXPECT_EQ(j["status"]["active"], 2);
  EXPECT_EQ(j["status"]["ready"], 0);
  EXPECT_EQ(j["status"]["terminating"], 0);
  EXPECT_EQ(j["status"]["uncountedTerminatedPods"], json::object());
  EXPECT_EQ(j["status"]["startTime"], rfc3339(now_));
}

// indexed_job_utils.go: the lowest indexes, their annotation and label, hostname, generateName
// and the JOB_COMPLETION_INDEX variable.
TEST_F(JobControllersTest, AnIndexedJobsPodsCarryTheirIndex) {
  createBatch("jobs", job("idx", R"("completionMode": "Indexed", "parallelism": 2,
                                      "completions": 5,)"));
  settle();
  auto pods = store_.list(kPods, "demo");
  ASSERT_EQ(pods.size(), 2u);
  std::sort(pods.begin(), pods.end(), [](const json& a, const json& b) {
    return a["spec"]["hostname"] < b["spec"]["hostname"];
  });
  for (int i = 0; i < 2; ++i) {
    const json& pod = pods[static_cast<std::size_t>(i)];
    EXPECT_EQ(pod["metadata"]["generateName"], "idx-" + std::to_string(i) + "-");
    EXPECT_EQ(pod["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"],
              std::to_string(i));
    EXPECT_EQ(pod["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"],
              std::to_string(i));
    EXPECT_EQ(pod["spec"]["hostname"], "idx-" + std::to_string(i));
    EXPECT_EQ(pod["spec"]["containers"][0]["env"][0]["name"], "JOB_COMPLETION_INDEX");
    EXPECT_EQ(pod["spec"]["containers"][0]["env"][0]["valueFrom"]["fieldRef"]["fieldPath"],
              "metadata.labels['batch.kubernetes.io/job-completion-index']");
  }
}

// A Pod deleted before it finished failed: its finalizer goes, status.failed counts it, the
// replacement waits for the pod-failure backoff (10 s); past backoffLimit the Job fails.
TEST_F(JobControllersTest, ADeletedPodFailsAndIsReplacedAfterTheBackoff) {
  createBatch("jobs", job("pi", R"("backoffLimit": 1,)"));
  settle();
  ASSERT_EQ(store_.list(kPods, "demo").size(), 1u);
  deleteObject(kPods, store_.list(kPods, "demo")[0]["metadata"]["name"]);
  settle();
  EXPECT_TRUE(store_.list(kPods, "demo").empty()) << "the finalizer was not removed";
  EXPECT_EQ((*store_.get(kJobs, "demo", "pi"))["status"]["failed"], 1);
  now_ += std::chrono::seconds(9);
  settle();
  EXPECT_TRUE(store_.list(kPods, "demo").empty()) << "replaced before the backoff";
  now_ += std::chrono::seconds(2);
  settle();
  ASSERT_EQ(store_.list(kPods, "demo").size(), 1u);

  deleteObject(kPods, store_.list(kPods, "demo")[0]["metadata"]["name"]);
  settle();
  const auto j = *store_.get(kJobs, "demo", "pi");
  EXPECT_EQ(j["status"]["failed"], 2);
  ASSERT_EQ(j["status"]["conditions"].size(), 2u);
  EXPECT_EQ(j["status"]["conditions"][0]["type"], "FailureTarget");
  EXPECT_EQ(j["status"]["conditions"][1]["type"], "Failed");
  EXPECT_EQ(j["status"]["conditions"][1]["reason"], "BackoffLimitExceeded");
  EXPECT_EQ(j["status"]["conditions"][1]["message"], "Job has reached the specified backoff limit");
  EXPECT_FALSE(j["status"].contains("active"));
  EXPECT_EQ(events("BackoffLimitExceeded").size(), 1u);
  now_ += std::chrono::minutes(30);
  settle();
  EXPECT_TRUE(store_.list(kPods, "demo").empty()) << "a failed Job made a Pod";
}

// Suspending deletes the active Pods without counting them as failed; resuming starts again.
TEST_F(JobControllersTest, SuspendAndResume) {
  createBatch("jobs", job("pi", R"("suspend": true,)"));
  settle();
  EXPECT_TRUE(store_.list(kPods, "demo").empty());
  auto j = *store_.get(kJobs, "demo", "pi");
  EXPECT_EQ(j["status"]["conditions"][0]["type"], "Suspended");
  EXPECT_EQ(j["status"]["conditions"][0]["reason"], "JobSuspended");
  EXPECT_FALSE(j["status"].contains("startTime"));
  EXPECT_EQ(events("Suspended").size(), 1u);

  j["spec"]["suspend"] = false;
  store_.update(kJobs, j);
  settle();
  EXPECT_EQ(store_.list(kPods, "demo").size(), 1u);
  j = *store_.get(kJobs, "demo", "pi");
  EXPECT_EQ(j["status"]["conditions"][0]["status"], "False");
  EXPECT_EQ(j["status"]["conditions"][0]["reason"], "JobResumed");
  EXPECT_TRUE(j["status"].contains("startTime"));
  EXPECT_EQ(events("Resumed").size(), 1u);

  j["spec"]["suspend"] = true;
  store_.update(kJobs, j);
  settle();
  EXPECT_TRUE(store_.list(kPods, "demo").empty());
  EXPECT_EQ(events("SuccessfulDelete").size(), 1u);
  EXPECT_FALSE((*store_.get(kJobs, "demo", "pi"))["status"].contains("failed"));
}

json cronJob(const std::string& name, const std::string& spec_extra) {
  return json::parse(R"({"apiVersion": "batch/v1", "kind": "CronJob",
    "metadata": {"name": ")" + name + R"(", "namespace": "demo"},
    "spec": {"schedule": "* * * * *", )" + spec_extra + R"(
      "jobTemplate": {"metadata": {"labels": {"team": "a"}, "annotations": {"note": "x"}},
        "spec": {"template": {"spec": {"restartPolicy": "OnFailure",
                                       "containers": [{"name": "c", "image": "busybox"}]}}}}}})");
}

// cronjob_controllerv2.go syncCronJob: one Job per scheduled time, named after it in minutes,
// its Pods made by the job controller; the status lists it; Forbid waits for it.
TEST_F(JobControllersTest, ACronJobMakesAJobAtEachScheduledTime) {
  using std::chrono::minutes;
  using std::chrono::seconds;
  const auto m0 = createCronJob(cronJob("every", R"("concurrencyPolicy": "Forbid",)"));
  now_ = m0 + minutes(1) - seconds(1);
  settle();
  EXPECT_TRUE(store_.list(kJobs, "demo").empty()) << "before the first scheduled time";
  now_ = m0 + minutes(1);
  settle();
  const auto jobs = store_.list(kJobs, "demo");
  ASSERT_EQ(jobs.size(), 1u);
  const json& made = jobs[0];
  EXPECT_EQ(made["metadata"]["name"], jobName("every", m0 + minutes(1)));
  EXPECT_EQ(made["metadata"]["labels"]["team"], "a");
  EXPECT_EQ(made["metadata"]["annotations"]["note"], "x");
  EXPECT_EQ(made["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"],
            rfc3339(m0 + minutes(1)));
  EXPECT_EQ(made["metadata"]["ownerReferences"][0]["kind"], "CronJob");
  EXPECT_EQ(store_.list(kPods, "demo").size(), 1u);
  auto cj = *store_.get(kCronJobs, "demo", "every");
  EXPECT_EQ(cj["status"]["lastScheduleTime"], rfc3339(m0 + minutes(1)));
  ASSERT_EQ(cj["status"]["active"].size(), 1u);
  EXPECT_EQ(cj["status"]["active"][0]["name"], made["metadata"]["name"]);
  EXPECT_EQ(cj["status"]["active"][0]["uid"], made["metadata"]["uid"]);
  ASSERT_EQ(events("SuccessfulCreate").size(), 2u);  // the CronJob's and the Job's
  EXPECT_EQ(users_.front(), "system:serviceaccount:kube-system:job-controller");

  now_ = m0 + minutes(2) + seconds(10);
  settle();
  settle();  // acted on once per scheduled time
  EXPECT_EQ(store_.list(kJobs, "demo").size(), 1u);
  ASSERT_EQ(events("JobAlreadyActive").size(), 1u);
  EXPECT_EQ(events("JobAlreadyActive")[0]["count"], 1);
  EXPECT_EQ(events("JobAlreadyActive")[0]["message"],
            "Not starting job because prior execution is running and concurrency policy is "
            "Forbid");

  // Deleting the CronJob takes its Job and the Job's Pod with it.
  deleteObject(kCronJobs, "every");
  settle();
  EXPECT_TRUE(store_.list(kJobs, "demo").empty());
  EXPECT_TRUE(store_.list(kPods, "demo").empty());
}

// Replace deletes the running Job before it makes the next; a controller that comes late makes
// only the most recent missed time, and none older than startingDeadlineSeconds.
TEST_F(JobControllersTest, ReplaceAndStartingDeadline) {
  using std::chrono::minutes;
  using std::chrono::seconds;
  const auto m0 = createCronJob(cronJob("rep", R"("concurrencyPolicy": "Replace",)"));
  now_ = m0 + minutes(3) + seconds(20);
  settle();
  auto jobs = store_.list(kJobs, "demo");
  ASSERT_EQ(jobs.size(), 1u) << "three missed times make one Job";
  EXPECT_EQ(jobs[0]["metadata"]["name"], jobName("rep", m0 + minutes(3)));
  now_ = m0 + minutes(4);
  settle();
  jobs = store_.list(kJobs, "demo");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0]["metadata"]["name"], jobName("rep", m0 + minutes(4)));
  ASSERT_EQ(events("SuccessfulDelete").size(), 1u);
  EXPECT_EQ(events("SuccessfulDelete")[0]["message"],
            "Deleted job " + jobName("rep", m0 + minutes(3)));
  deleteObject(kCronJobs, "rep");
  settle();
  ASSERT_TRUE(store_.list(kJobs, "demo").empty());

  const auto m1 = createCronJob(cronJob("late", R"("startingDeadlineSeconds": 10,)"));
  now_ = m1 + minutes(5) + seconds(45);
  settle();
  EXPECT_TRUE(store_.list(kJobs, "demo").empty()) << "the last scheduled time is 45 s ago";
  now_ = m1 + minutes(6) + seconds(5);
  settle();
  jobs = store_.list(kJobs, "demo");
  ASSERT_EQ(jobs.size(), 1u);
  EXPECT_EQ(jobs[0]["metadata"]["name"], jobName("late", m1 + minutes(6)));
}

// Schedules the simulator cannot evaluate say so in a Warning event and make nothing.
TEST_F(JobControllersTest, BadSchedulesAndTimeZonesAreWarningEvents) {
  const auto m0 = createCronJob(cronJob("tz", R"("timeZone": "Europe/Paris",)"));
  now_ = m0 + std::chrono::minutes(3);
  settle();
  EXPECT_TRUE(store_.list(kJobs, "demo").empty());
  ASSERT_EQ(events("UnsupportedTimeZone").size(), 1u);
  EXPECT_EQ(events("UnsupportedTimeZone")[0]["type"], "Warning");
}

TEST(PodTemplateHashTest, FormOfControllerComputeHash) {
  const json a = deployment(1)["spec"]["template"];
  json b = a;
  b["spec"]["containers"][0]["image"] = "nginx:2";
  const std::string ha = podTemplateHash(a);
  EXPECT_EQ(ha, podTemplateHash(a));
  EXPECT_NE(ha, podTemplateHash(b));
  EXPECT_LE(ha.size(), 10u);  // the decimal digits of a uint32
  EXPECT_EQ(ha.find_first_not_of(kRandAlphabet), std::string::npos);
}

}  // namespace
}  // namespace harness::sim
