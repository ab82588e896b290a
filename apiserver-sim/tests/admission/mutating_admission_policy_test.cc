// The MutatingAdmissionPolicy step of the chain with a scripted dispatcher (no kube-cel): its
// place (after the in-tree mutating plugins, before the mutating webhooks, in both passes), the
// reinvocation pass its change causes, the request id and round it passes, the release of
// kube-cel's state, the operations and resources it skips, its errors
// (docs/admission-chain.md §12). The decisions themselves are Kubernetes' code, tested through
// kube-cel in tests/cel and by the scenarios in scenarios/admission-policies/.

#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "configmap_fixture.h"
#include "harness/core/metrics.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/caller.h"
#include "harness/sim/store.h"

namespace harness::sim {
namespace {

using nlohmann::json;

const core::GroupResource kPolicies{"admissionregistration.k8s.io", "mutatingadmissionpolicies"};
const core::GroupResource kBindings{"admissionregistration.k8s.io",
                                    "mutatingadmissionpolicybindings"};

json policyObject(const std::string& kind, const std::string& name) {
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", kind},
          {"metadata", {{"name", name}}},
          {"spec", json::object()}};
}

// What the scripted dispatcher saw per call.
struct Seen {
  std::string request;
  bool is_reinvoke = false;
  json labels;  // the object's labels it was given
};

class MutatingPolicyChainTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fixture::putDemoNamespace(store_);
    store_.put(kPolicies, policyObject("MutatingAdmissionPolicy", "stamp"));
    store_.put(kBindings, policyObject("MutatingAdmissionPolicyBinding", "stamp"));
    options_.plugins = {};
    options_.mutating_policies.dispatch = [this](const PolicyInput& input,
                                                 const AdmissionAttributes& attributes,
                                                 const MutatingPolicyRound& round) {
      EXPECT_EQ(input.policies.size(), 1u);
      EXPECT_EQ(input.bindings.size(), 1u);
      json object = attributes.object.value_or(json());
      seen_.push_back({round.request, round.is_reinvoke,
                       object.value("metadata", json::object()).value("labels", json::object())});
      MutatingPolicyOutcome outcome;
      if (deny_) {
        outcome.status = core::newInternalError("denied by the script");
        return outcome;
      }
      outcome.warnings = warnings_;
      // The policy's label: the webhook's label as seen, like a policy reading the object.
      const json labels = object["metadata"].value("labels", json::object());
      const std::string value = labels.value("webhook", "none");
      if (labels.value("policy", "") != value) {
        object["metadata"]["labels"]["policy"] = value;
        outcome.should_reinvoke = true;
      }
      outcome.object = object;
      return outcome;
    };
    options_.mutating_policies.release = [this](const std::string& request) {
      released_.push_back(request);
    };
  }

  void addLabellingWebhook() {
    caller_.handle("https://w.example.com/", [](const core::AdmissionReview& review) {
      core::AdmissionReview answer = fixture::answerTo(review, "");
      const json labels = review.request->object->value("metadata", json::object())
                              .value("labels", json::object());
      if (!labels.contains("webhook")) {
        answer.response->patch =
            json::array({{{"op", "add"}, {"path", "/metadata/labels/webhook"}, {"value", "set"}}})
                .dump();
        answer.response->patch_type = "JSONPatch";
      }
      return answer;
    });
    json hook = fixture::configMapWebhook("w.example.com", 10);
    hook["reinvocationPolicy"] = "Never";
    store_.put({"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
               fixture::configuration("MutatingWebhookConfiguration", "m", json::array({hook})));
  }

  AdmissionResult handle(const WriteRequest& request) {
    AdmissionChain chain(store_, caller_, metrics_, options_);
    return chain.handle(request);
  }

  ObjectStore store_;
  InProcessWebhookCaller caller_;
  core::MetricsRegistry metrics_;
  ChainOptions options_;
  std::vector<Seen> seen_;
  std::vector<std::string> released_;
  std::vector<std::string> warnings_;
  bool deny_ = false;
};

TEST_F(MutatingPolicyChainTest, RunsBeforeTheWebhooksAndAgainAfterTheirChange) {
  addLabellingWebhook();
  const AdmissionResult result = handle(fixture::configMapCreate(std::nullopt));
  ASSERT_TRUE(result.allowed) << (result.status ? result.status->message : "");
  ASSERT_EQ(seen_.size(), 2u);
  // Round 0: before the webhook (no webhook label yet); round 1: after it, same request id.
  EXPECT_FALSE(seen_[0].is_reinvoke);
  EXPECT_FALSE(seen_[0].labels.contains("webhook"));
  EXPECT_TRUE(seen_[1].is_reinvoke);
  EXPECT_EQ(seen_[1].labels.value("webhook", ""), "set");
  EXPECT_EQ(seen_[0].request, seen_[1].request);
  EXPECT_EQ(seen_[0].request, result.audit_id);
  EXPECT_EQ((*result.object)["metadata"]["labels"]["policy"], "set");
  EXPECT_TRUE(result.reinvoked);
  // The reinvocation pass was the request's last call: nothing to release.
  EXPECT_TRUE(released_.empty());
  // Recorded as a plugin of each pass, changed in both.
  std::vector<std::pair<int, bool>> records;
  for (const auto& plugin : result.plugins) {
    if (plugin.name == "MutatingAdmissionPolicy") records.emplace_back(plugin.round, plugin.changed);
  }
  EXPECT_EQ(records, (std::vector<std::pair<int, bool>>{{0, true}, {1, true}}));
}

TEST_F(MutatingPolicyChainTest, ItsOwnChangeMakesTheReinvocationPass) {
  const AdmissionResult result = handle(fixture::configMapCreate(std::nullopt));
  ASSERT_TRUE(result.allowed) << (result.status ? result.status->message : "");
  ASSERT_EQ(seen_.size(), 2u);
  EXPECT_TRUE(seen_[1].is_reinvoke);
  EXPECT_TRUE(result.reinvoked);
  EXPECT_EQ((*result.object)["metadata"]["labels"]["policy"], "none");
}

TEST_F(MutatingPolicyChainTest, WithoutAChangeThereIsOnePassAndTheStateIsReleased) {
  WriteRequest request = fixture::configMapCreate(std::nullopt);
  (*request.object)["metadata"]["labels"]["policy"] = "none";
  warnings_ = {"from the policy"};
  const AdmissionResult result = handle(request);
  ASSERT_TRUE(result.allowed) << (result.status ? result.status->message : "");
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_FALSE(result.reinvoked);
  EXPECT_EQ(released_, std::vector<std::string>({result.audit_id}));
  EXPECT_EQ(result.warnings, std::vector<std::string>({"from the policy"}));
}

TEST_F(MutatingPolicyChainTest, ItsErrorIsTheRequestsAndTheWebhooksAreNotCalled) {
  addLabellingWebhook();
  deny_ = true;
  const AdmissionResult result = handle(fixture::configMapCreate(std::nullopt));
  EXPECT_FALSE(result.allowed);
  ASSERT_TRUE(result.status.has_value());
  EXPECT_EQ(result.status->message, "Internal error occurred: denied by the script");
  EXPECT_TRUE(result.calls.empty());
}

TEST_F(MutatingPolicyChainTest, DeleteAndThePolicyResourcesAreNotEvaluated) {
  store_.put({"", "configmaps"}, {{"apiVersion", "v1"},
                                  {"kind", "ConfigMap"},
                                  {"metadata", {{"name", "settings"}, {"namespace", "demo"}}}});
  WriteRequest del;
  del.operation = "DELETE";
  del.resource = {"", "v1", "configmaps"};
  del.namespace_name = "demo";
  del.name = "settings";
  EXPECT_TRUE(handle(del).allowed);
  WriteRequest policy;
  policy.operation = "CREATE";
  policy.resource = {"admissionregistration.k8s.io", "v1", "mutatingadmissionpolicybindings"};
  policy.name = "other";
  policy.object = policyObject("MutatingAdmissionPolicyBinding", "other");
  EXPECT_TRUE(handle(policy).allowed);
  EXPECT_TRUE(seen_.empty());
}

TEST_F(MutatingPolicyChainTest, WithoutAnEvaluatorBindingsAre500NamingTheBuild) {
  options_.mutating_policies = {};
  const AdmissionResult result = handle(fixture::configMapCreate(std::nullopt));
  EXPECT_FALSE(result.allowed);
  EXPECT_EQ(result.code, 500);
  ASSERT_TRUE(result.status.has_value());
  EXPECT_NE(result.status->message.find("bash scripts/build-kube.sh"), std::string::npos)
      << result.status->message;
}

TEST_F(MutatingPolicyChainTest, WithoutBindingsNothingIsEvaluated) {
  store_.remove(kBindings, "", "stamp");
  const AdmissionResult result = handle(fixture::configMapCreate(std::nullopt));
  EXPECT_TRUE(result.allowed);
  EXPECT_TRUE(seen_.empty());
  EXPECT_TRUE(released_.empty());
}

}  // namespace
}  // namespace harness::sim
