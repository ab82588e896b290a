// Namespace deletion as kube-apiserver and kube-controller-manager's namespace controller do it:
// the first DELETE marks the Namespace Terminating (deletionTimestamp, phase, the `kubernetes`
// finalizer stays), creates in it are refused, the controller deletes its content as its service
// account, keeps the deletion conditions, waits for Pods' grace period and for content with
// finalizers, then finalizes the Namespace, which goes. Also the registry's finalizer life cycle
// for any object (marked on DELETE, gone when the last finalizer is removed).

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
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
using std::chrono::seconds;

const core::GroupResource kNamespaces{"", "namespaces"};
const core::GroupResource kConfigMaps{"", "configmaps"};
const core::GroupResource kPods{"", "pods"};
const core::GroupResource kReplicaSets{"apps", "replicasets"};
const core::GroupResource kDeployments{"apps", "deployments"};

class NamespaceDeletionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A validating webhook on every DELETE that records who sent it.
    caller_.handle("https://deletes.example.com/", [this](const core::AdmissionReview& review) {
      {
        std::lock_guard lock(mutex_);
        deletes_.push_back(review.request->resource.resource + "/" + review.request->name + " " +
                           review.request->user_info.username);
      }
      core::AdmissionResponse response;
      response.uid = review.request->uid;
      response.allowed = true;
      return core::AdmissionReview{review.api_version, review.kind, std::nullopt, response};
    });
    store_.put({"admissionregistration.k8s.io", "validatingwebhookconfigurations"},
               json::parse(R"({"apiVersion": "admissionregistration.k8s.io/v1",
      "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "deletes"},
      "webhooks": [{"name": "deletes.example.com",
        "clientConfig": {"url": "https://deletes.example.com/"},
        "rules": [{"operations": ["DELETE"], "apiGroups": ["*"], "apiVersions": ["*"],
                   "resources": ["*"]}],
        "sideEffects": "None", "admissionReviewVersions": ["v1"], "failurePolicy": "Fail"}]})"));
    chain_ = std::make_unique<AdmissionChain>(store_, caller_, metrics_, ChainOptions{});
    ControllerOptions options;
    options.run_thread = false;
    options.now = [this] { return now_; };
    controllers_ = std::make_unique<WorkloadControllers>(store_, *chain_, options);
    ASSERT_TRUE(write("CREATE", {"", "v1", "namespaces"}, "", "",
                      json::parse(R"({"apiVersion": "v1", "kind": "Namespace",
                                      "metadata": {"name": "demo"}})"))
                    .allowed);
  }

  AdmissionResult write(const std::string& operation, const core::GroupVersionResource& resource,
                        const std::string& ns, const std::string& name,
                        std::optional<json> object = std::nullopt,
                        const std::string& subresource = {}) {
    WriteRequest request;
    request.operation = operation;
    request.resource = resource;
    request.namespace_name = ns;
    request.name = name;
    request.object = std::move(object);
    request.subresource = subresource;
    return chain_->handle(request);
  }

  AdmissionResult createConfigMap(const std::string& name, const json& finalizers = nullptr) {
    json cm = {{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", name}, {"namespace", "demo"}}},
               {"data", {{"k", "v"}}}};
    if (!finalizers.is_null()) cm["metadata"]["finalizers"] = finalizers;
    return write("CREATE", {"", "v1", "configmaps"}, "demo", name, cm);
  }

  // The controllers run at the time now_ says, until they write nothing more.
  void settle() {
    for (int pass = 0; pass < 20 && controllers_->reconcileOnce(); ++pass) {
    }
    ASSERT_FALSE(controllers_->reconcileOnce()) << "the controllers did not settle";
  }

  std::map<std::string, json> conditions() {
    std::map<std::string, json> out;
    auto ns = store_.get(kNamespaces, "", "demo");
    if (!ns) return out;
    for (const auto& c : (*ns)["status"].value("conditions", json::array())) {
      out[c.value("type", "")] = c;
    }
    return out;
  }

  std::vector<std::string> deletes() {
    std::lock_guard lock(mutex_);
    return deletes_;
  }

  ObjectStore store_;
  InProcessWebhookCaller caller_;
  core::MetricsRegistry metrics_;
  std::unique_ptr<AdmissionChain> chain_;
  std::unique_ptr<WorkloadControllers> controllers_;
  std::chrono::system_clock::time_point now_ = std::chrono::system_clock::now();
  std::mutex mutex_;
  std::vector<std::string> deletes_;
};

TEST_F(NamespaceDeletionTest, FirstDeleteMarksTheNamespaceTerminatingAndKeepsIt) {
  const auto result = write("DELETE", {"", "v1", "namespaces"}, "", "demo");
  ASSERT_TRUE(result.allowed);
  EXPECT_FALSE(result.deleted);
  EXPECT_EQ(result.code, 200);
  ASSERT_TRUE(result.object);
  EXPECT_TRUE((*result.object)["metadata"].contains("deletionTimestamp"));
  EXPECT_FALSE((*result.object)["metadata"].contains("deletionGracePeriodSeconds"));
  EXPECT_EQ((*result.object)["status"]["phase"], "Terminating");
  EXPECT_EQ((*result.object)["spec"]["finalizers"], json::array({"kubernetes"}));
  const auto stored = store_.get(kNamespaces, "", "demo");
  ASSERT_TRUE(stored);
  EXPECT_EQ(*stored, *result.object);

  // A second DELETE answers the namespace unchanged while spec.finalizers is not empty.
  const auto again = write("DELETE", {"", "v1", "namespaces"}, "", "demo");
  ASSERT_TRUE(again.allowed);
  EXPECT_FALSE(again.deleted);
  EXPECT_EQ(*again.object, *stored);

  // Creating content is refused with NamespaceLifecycle's message and cause.
  const auto refused = createConfigMap("late");
  ASSERT_FALSE(refused.allowed);
  EXPECT_EQ(refused.code, 403);
  EXPECT_EQ(refused.status->message,
            "configmaps \"late\" is forbidden: unable to create new content in namespace demo "
            "because it is being terminated");
  ASSERT_TRUE(refused.status->details);
  ASSERT_FALSE(refused.status->details->causes.empty());
  EXPECT_EQ(refused.status->details->causes.back().type, "NamespaceTerminating");
}

TEST_F(NamespaceDeletionTest, ControllerEmptiesTheNamespaceWaitsForPodGraceThenFinalizesIt) {
  ASSERT_TRUE(createConfigMap("settings").allowed);
  ASSERT_TRUE(write("CREATE", {"apps", "v1", "deployments"}, "demo", "web",
                    json::parse(R"({"apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "demo"},
    "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
      "template": {"metadata": {"labels": {"app": "web"}},
                   "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}})"))
                  .allowed);
  settle();
  ASSERT_EQ(store_.list(kPods, "demo").size(), 1u);
  deletes_.clear();

  ASSERT_TRUE(write("DELETE", {"", "v1", "namespaces"}, "", "demo").allowed);
  settle();
  // Everything inside is gone, each deletion sent by the namespace controller, Pods first.
  EXPECT_TRUE(store_.list(kPods, "demo").empty());
  EXPECT_TRUE(store_.list(kConfigMaps, "demo").empty());
  EXPECT_TRUE(store_.list(kReplicaSets, "demo").empty());
  EXPECT_TRUE(store_.list(kDeployments, "demo").empty());
  EXPECT_TRUE(store_.list({"", "serviceaccounts"}, "demo").empty());
  const auto sent = deletes();
  ASSERT_FALSE(sent.empty());
  EXPECT_EQ(sent[0], "namespaces/demo system:admin");
  ASSERT_GE(sent.size(), 2u);
  EXPECT_EQ(sent[1].rfind("pods/web-", 0), 0u) << sent[1];
  for (std::size_t i = 1; i < sent.size(); ++i) {
    EXPECT_NE(sent[i].find(" system:serviceaccount:kube-system:namespace-controller"),
              std::string::npos)
        << sent[i];
  }
  // The Pod's 30 s grace period had not passed: the namespace stays, with the conditions.
  auto ns = store_.get(kNamespaces, "", "demo");
  ASSERT_TRUE(ns);
  EXPECT_EQ((*ns)["spec"]["finalizers"], json::array({"kubernetes"}));
  auto c = conditions();
  ASSERT_EQ(c.size(), 5u);
  EXPECT_EQ(c["NamespaceContentRemaining"]["status"], "False");
  EXPECT_EQ(c["NamespaceContentRemaining"]["reason"], "ContentRemoved");
  EXPECT_EQ(c["NamespaceDeletionContentFailure"]["message"],
            "All content successfully deleted, may be waiting on finalization");

  // Requeued after 30/2 + 1 s: not before.
  now_ += seconds(15);
  settle();
  ASSERT_TRUE(store_.get(kNamespaces, "", "demo"));
  now_ += seconds(1);
  settle();
  EXPECT_FALSE(store_.get(kNamespaces, "", "demo"));
}

TEST_F(NamespaceDeletionTest, ContentWithFinalizersHoldsTheNamespaceUntilTheyAreRemoved) {
  ASSERT_TRUE(createConfigMap("kept", json::array({"example.com/keep"})).allowed);
  ASSERT_TRUE(write("DELETE", {"", "v1", "namespaces"}, "", "demo").allowed);
  settle();
  auto cm = store_.get(kConfigMaps, "demo", "kept");
  ASSERT_TRUE(cm);
  EXPECT_TRUE((*cm)["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ((*cm)["metadata"]["deletionGracePeriodSeconds"], 0);
  auto c = conditions();
  EXPECT_EQ(c["NamespaceContentRemaining"]["status"], "True");
  EXPECT_EQ(c["NamespaceContentRemaining"]["reason"], "SomeResourcesRemain");
  EXPECT_EQ(c["NamespaceContentRemaining"]["message"],
            "Some resources are remaining: configmaps. has 1 resource instances");
  EXPECT_EQ(c["NamespaceFinalizersRemaining"]["message"],
            "Some content in the namespace has finalizers remaining: example.com/keep in 1 "
            "resource instances");

  // No finalizer may be added to an object being deleted.
  json more = *cm;
  more["metadata"]["finalizers"].push_back("example.com/other");
  const auto refused = write("UPDATE", {"", "v1", "configmaps"}, "demo", "kept", more);
  ASSERT_FALSE(refused.allowed);
  EXPECT_EQ(refused.code, 422);
  EXPECT_NE(refused.status->message.find(
                "metadata.finalizers: Forbidden: no new finalizers can be added if the object is "
                "being deleted, found new finalizers []string{\"example.com/other\"}"),
            std::string::npos)
      << refused.status->message;

  // Removing the last finalizer deletes the object (ShouldDeleteDuringUpdate).
  json released = *cm;
  released["metadata"].erase("finalizers");
  released["metadata"].erase("deletionTimestamp");  // an update cannot remove it
  const auto update = write("UPDATE", {"", "v1", "configmaps"}, "demo", "kept", released);
  ASSERT_TRUE(update.allowed) << update.status->message;
  EXPECT_FALSE(store_.get(kConfigMaps, "demo", "kept"));

  // The controller looks again after finalizerEstimateSeconds / 2 + 1 = 8 s.
  now_ += seconds(7);
  settle();
  ASSERT_TRUE(store_.get(kNamespaces, "", "demo"));
  now_ += seconds(1);
  settle();
  EXPECT_FALSE(store_.get(kNamespaces, "", "demo"));
}

TEST_F(NamespaceDeletionTest, DeleteOfAnObjectWithFinalizersMarksItOnce) {
  ASSERT_TRUE(createConfigMap("kept", json::array({"example.com/keep"})).allowed);
  const auto first = write("DELETE", {"", "v1", "configmaps"}, "demo", "kept");
  ASSERT_TRUE(first.allowed);
  EXPECT_FALSE(first.deleted);
  const std::string stamp = (*first.object)["metadata"]["deletionTimestamp"];
  now_ += seconds(5);
  const auto second = write("DELETE", {"", "v1", "configmaps"}, "demo", "kept");
  ASSERT_TRUE(second.allowed);
  EXPECT_EQ((*second.object)["metadata"]["deletionTimestamp"], stamp);
  EXPECT_TRUE(store_.get(kConfigMaps, "demo", "kept"));
  // Without finalizers a DELETE removes at once.
  ASSERT_TRUE(createConfigMap("plain").allowed);
  const auto plain = write("DELETE", {"", "v1", "configmaps"}, "demo", "plain");
  ASSERT_TRUE(plain.allowed);
  EXPECT_TRUE(plain.deleted);
  EXPECT_FALSE(store_.get(kConfigMaps, "demo", "plain"));
}

TEST_F(NamespaceDeletionTest, AnUpdateThatChangesNothingIsNotWritten) {
  const auto created = createConfigMap("same");
  ASSERT_TRUE(created.allowed);
  const std::string version = (*created.object)["metadata"]["resourceVersion"];
  const auto same = write("UPDATE", {"", "v1", "configmaps"}, "demo", "same", *created.object);
  ASSERT_TRUE(same.allowed);
  EXPECT_EQ((*same.object)["metadata"]["resourceVersion"], version);
  json changed = *created.object;
  changed["data"]["k"] = "w";
  const auto update = write("UPDATE", {"", "v1", "configmaps"}, "demo", "same", changed);
  ASSERT_TRUE(update.allowed);
  EXPECT_NE((*update.object)["metadata"]["resourceVersion"], version);
  // A stale resourceVersion is still the store's conflict, even for an unchanged object.
  const auto stale = write("UPDATE", {"", "v1", "configmaps"}, "demo", "same", *created.object);
  ASSERT_FALSE(stale.allowed);
  EXPECT_EQ(stale.code, 409);
}

TEST_F(NamespaceDeletionTest, ImmortalNamespacesCannotBeDeleted) {
  ASSERT_TRUE(write("CREATE", {"", "v1", "namespaces"}, "", "",
                    json::parse(R"({"apiVersion": "v1", "kind": "Namespace",
                                    "metadata": {"name": "kube-system"}})"))
                  .allowed);
  const auto result = write("DELETE", {"", "v1", "namespaces"}, "", "kube-system");
  ASSERT_FALSE(result.allowed);
  EXPECT_EQ(result.status->message,
            "namespaces \"kube-system\" is forbidden: this namespace may not be deleted");
}

}  // namespace
}  // namespace harness::sim
