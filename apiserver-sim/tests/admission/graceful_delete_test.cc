// A Pod's DELETE is graceful (deletion.h: BeforeDelete with the pod strategy's
// CheckGracefulDelete; admission_chain.cc deleteGracefully): the decision on its own, then the
// chain with in-process webhooks, which must see the DELETE admitted once for the update that
// marks the Pod and twice more for the storage's delete (the watch cache's stale copy, then the
// marked Pod), as kube-apiserver v1.37.2 does.

#include <chrono>
#include <map>
#include <string>
#include <mutex>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../../src/admission/deletion.h"
#include "configmap_fixture.h"
#include "harness/core/metrics.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/caller.h"
#include "harness/sim/store.h"

namespace harness::sim {
namespace {

using nlohmann::json;
using Kind = detail::GracefulDeletion::Kind;
using namespace std::chrono_literals;

const core::GroupResource kPods{"", "pods"};
// 2026-11-22T10:00:00Z
const auto kNow = std::chrono::system_clock::from_time_t(1795341600);

json pod(const std::string& name, const std::string& node = "") {
  json spec = {{"containers", json::array({{{"name", "app"}, {"image", "nginx"}}})},
               {"terminationGracePeriodSeconds", 30}};
  if (!node.empty()) spec["nodeName"] = node;
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", name}, {"namespace", "demo"}, {"generation", 1}}},
          {"spec", spec}};
}

TEST(GracefulDeletionTest, AnUnboundPodIsMarkedWithAZeroPeriod) {
  const auto deletion = detail::gracefulDeletion(kPods, pod("p"), json::object(), kNow);
  ASSERT_EQ(deletion.kind, Kind::kGraceful);
  EXPECT_EQ(deletion.period, 0);
  EXPECT_EQ(deletion.options_period, 0);
  EXPECT_EQ(deletion.marked["metadata"]["deletionTimestamp"], "2026-11-22T10:00:00Z");
  EXPECT_EQ(deletion.marked["metadata"]["deletionGracePeriodSeconds"], 0);
  EXPECT_EQ(deletion.marked["metadata"]["generation"], 2);
}

TEST(GracefulDeletionTest, ABoundPodTakesItsTerminationGracePeriodOrTheRequestedOne) {
  auto deletion = detail::gracefulDeletion(kPods, pod("p", "node-a"), json::object(), kNow);
  ASSERT_EQ(deletion.kind, Kind::kGraceful);
  EXPECT_EQ(deletion.period, 30);
  EXPECT_EQ(deletion.marked["metadata"]["deletionTimestamp"], "2026-11-22T10:00:30Z");
  deletion = detail::gracefulDeletion(kPods, pod("p", "node-a"),
                                      {{"gracePeriodSeconds", -5}}, kNow);
  EXPECT_EQ(deletion.period, 1);  // negative counts as 1
  EXPECT_EQ(deletion.options_period, 1);
  json done = pod("p", "node-a");
  done["status"] = {{"phase", "Succeeded"}};
  EXPECT_EQ(detail::gracefulDeletion(kPods, done, json::object(), kNow).period, 0);
}

TEST(GracefulDeletionTest, APendingDeletionMayOnlyBeShortened) {
  json marked = detail::gracefulDeletion(kPods, pod("p", "node-a"), json::object(), kNow).marked;
  EXPECT_EQ(detail::gracefulDeletion(kPods, marked, json::object(), kNow).kind, Kind::kPending);
  EXPECT_EQ(detail::gracefulDeletion(kPods, marked, {{"gracePeriodSeconds", 30}}, kNow).kind,
            Kind::kPending);
  // 10 s later, 5 s: the timestamp moves back to start + 5 s = now - 5 s, so it is now and the
  // period 1 (an expired graceful period stays graceful).
  auto shortened =
      detail::gracefulDeletion(kPods, marked, {{"gracePeriodSeconds", 5}}, kNow + 10s);
  ASSERT_EQ(shortened.kind, Kind::kGraceful);
  EXPECT_EQ(shortened.period, 1);
  EXPECT_EQ(shortened.marked["metadata"]["deletionTimestamp"], "2026-11-22T10:00:10Z");
  EXPECT_EQ(shortened.marked["metadata"]["generation"], 2);  // bumped once only
  shortened = detail::gracefulDeletion(kPods, marked, {{"gracePeriodSeconds", 20}}, kNow);
  EXPECT_EQ(shortened.period, 20);
  EXPECT_EQ(shortened.marked["metadata"]["deletionTimestamp"], "2026-11-22T10:00:20Z");
  EXPECT_EQ(detail::gracefulDeletion(kPods, marked, {{"gracePeriodSeconds", 0}}, kNow).period, 0);
}

TEST(GracefulDeletionTest, OtherKindsAndZeroPeriodDeletionsAreNotGraceful) {
  json config = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "c"}}}};
  EXPECT_EQ(detail::gracefulDeletion({"", "configmaps"}, config, json::object(), kNow).kind,
            Kind::kNotGraceful);
  json marked = detail::gracefulDeletion(kPods, pod("p"), json::object(), kNow).marked;
  EXPECT_EQ(detail::gracefulDeletion(kPods, marked, json::object(), kNow).kind,
            Kind::kNotGraceful);
}

// --- through the chain ---

class GracefulDeleteChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fixture::putDemoNamespace(store_);
    for (const char* kind : {"MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"}) {
      const std::string name = std::string(kind) == "MutatingWebhookConfiguration"
                                   ? "mutating.example.com"
                                   : "validating.example.com";
      json hook = fixture::configMapWebhook(name, 10);
      hook["rules"][0]["operations"] = json::array({"DELETE"});
      hook["rules"][0]["resources"] = json::array({"pods"});
      store_.put({"admissionregistration.k8s.io",
                  std::string(kind) == "MutatingWebhookConfiguration"
                      ? "mutatingwebhookconfigurations"
                      : "validatingwebhookconfigurations"},
                 fixture::configuration(kind, name, json::array({hook})));
      caller_.handle("https://" + name + "/", [this, name](const core::AdmissionReview& review) {
        std::lock_guard lock(mutex_);
        seen_[name].push_back(review.request->old_object.value_or(json()));
        return fixture::answerTo(review, "");
      });
    }
  }

  AdmissionResult remove(const std::string& name, json options = json()) {
    WriteRequest request;
    request.operation = "DELETE";
    request.resource = {"", "v1", "pods"};
    request.namespace_name = "demo";
    request.name = name;
    if (!options.is_null()) {
      options["kind"] = "DeleteOptions";
      options["apiVersion"] = "meta.k8s.io/v1";
      request.options = options;
    }
    return chain_.handle(request);
  }

  // deletionGracePeriodSeconds of each old object a webhook saw (-1: not being deleted).
  std::vector<int> graceSeen(const std::string& webhook) {
    std::lock_guard lock(mutex_);
    std::vector<int> out;
    for (const auto& old : seen_[webhook]) {
      out.push_back(old["metadata"].value("deletionGracePeriodSeconds", -1));
    }
    seen_[webhook].clear();
    return out;
  }

  ObjectStore store_;
  InProcessWebhookCaller caller_;
  core::MetricsRegistry metrics_;
  AdmissionChain chain_{store_, caller_, metrics_, ChainOptions{}};
  std::mutex mutex_;
  std::map<std::string, std::vector<json>> seen_;
};

TEST_F(GracefulDeleteChainTest, AnUnboundPodIsAdmittedThreeTimesAndAnsweredMarked) {
  store_.put(kPods, pod("p"));
  const AdmissionResult result = remove("p");
  ASSERT_TRUE(result.allowed);
  EXPECT_TRUE(result.deleted);
  EXPECT_EQ(result.code, 200);
  EXPECT_EQ((*result.object)["metadata"]["deletionGracePeriodSeconds"], 0);
  EXPECT_TRUE((*result.object)["metadata"].contains("deletionTimestamp"));
  EXPECT_FALSE(store_.get(kPods, "demo", "p"));
  // The update's admission, the stale cached copy, the marked Pod.
  EXPECT_EQ(graceSeen("mutating.example.com"), (std::vector<int>{-1, -1, 0}));
  EXPECT_EQ(graceSeen("validating.example.com"), (std::vector<int>{-1, -1, 0}));
}

TEST_F(GracefulDeleteChainTest, ABoundPodStaysMarkedAndASecondDeleteCallsNoWebhook) {
  store_.put(kPods, pod("p", "node-a"));
  AdmissionResult result = remove("p");
  ASSERT_TRUE(result.allowed);
  EXPECT_FALSE(result.deleted);
  EXPECT_EQ((*result.object)["metadata"]["deletionGracePeriodSeconds"], 30);
  EXPECT_EQ(graceSeen("validating.example.com"), (std::vector<int>{-1}));
  auto stored = store_.get(kPods, "demo", "p");
  ASSERT_TRUE(stored);
  EXPECT_EQ((*stored)["metadata"]["deletionGracePeriodSeconds"], 30);

  result = remove("p");
  ASSERT_TRUE(result.allowed);
  EXPECT_EQ(result.code, 200);
  EXPECT_TRUE(graceSeen("validating.example.com").empty());

  result = remove("p", {{"gracePeriodSeconds", 0}});
  ASSERT_TRUE(result.allowed);
  EXPECT_TRUE(result.deleted);
  EXPECT_EQ(graceSeen("validating.example.com"), (std::vector<int>{30, 30, 0}));
  EXPECT_FALSE(store_.get(kPods, "demo", "p"));
}

TEST_F(GracefulDeleteChainTest, ADryRunIsAdmittedOnceAndKeepsThePod) {
  store_.put(kPods, pod("p"));
  WriteRequest request;
  request.operation = "DELETE";
  request.resource = {"", "v1", "pods"};
  request.namespace_name = "demo";
  request.name = "p";
  request.dry_run = true;
  const AdmissionResult result = chain_.handle(request);
  ASSERT_TRUE(result.allowed);
  EXPECT_EQ((*result.object)["metadata"]["deletionGracePeriodSeconds"], 0);
  EXPECT_EQ(graceSeen("mutating.example.com"), (std::vector<int>{-1}));
  auto stored = store_.get(kPods, "demo", "p");
  ASSERT_TRUE(stored);
  EXPECT_FALSE((*stored)["metadata"].contains("deletionTimestamp"));
}

TEST_F(GracefulDeleteChainTest, APendingFinalizerKeepsAnUnboundPodAfterOneAdmission) {
  json kept = pod("p");
  kept["metadata"]["finalizers"] = {"example.com/keep"};
  store_.put(kPods, kept);
  const AdmissionResult result = remove("p");
  ASSERT_TRUE(result.allowed);
  EXPECT_FALSE(result.deleted);
  EXPECT_EQ(graceSeen("validating.example.com"), (std::vector<int>{-1}));
  auto stored = store_.get(kPods, "demo", "p");
  ASSERT_TRUE(stored);
  EXPECT_EQ((*stored)["metadata"]["deletionGracePeriodSeconds"], 0);
}

}  // namespace
}  // namespace harness::sim
