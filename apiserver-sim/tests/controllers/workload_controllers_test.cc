// The workload controllers of `apiserver-sim serve`: a Deployment gets a ReplicaSet and Pods
// through the admission chain, as kube-controller-manager's controllers make them (owner
// references, pod-template-hash, the controllers' service accounts in the admission request),
// scaling, the garbage collector, and a Pod creation a webhook denies (FailedCreate, backoff).

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

TEST_F(ControllersTest, GarbageCollectorRemovesTheDependentsOfADeletedDeployment) {
  create(deployment(2));
  settle();
  ASSERT_EQ(store_.list(kPods, "demo").size(), 2u);
  store_.remove(kDeployments, "demo", "web");
  settle();
  EXPECT_TRUE(store_.list(kReplicaSets, "demo").empty());
  EXPECT_TRUE(store_.list(kPods, "demo").empty());
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
