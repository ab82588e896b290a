// The admission chain with in-process webhooks (no TLS): deadline arithmetic (the ?timeout= each
// webhook sees, one request deadline shared by every call: docs/admission-chain.md §4.3),
// reinvocation bookkeeping (§6: at most one more round, only IfNeeded webhooks that ran in round
// 0, not for a webhook's own change, the in-tree plugins again) and the calls' records.

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../../src/admission/dispatch.h"
#include "configmap_fixture.h"
#include "harness/core/metrics.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/caller.h"
#include "harness/sim/store.h"

namespace harness::sim {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

// --- deadline arithmetic (pure) ---

TEST(TimeoutParamTest, RoundsTheBudgetUpToWholeSeconds) {
  EXPECT_EQ(detail::timeoutParam(10s), "10s");
  EXPECT_EQ(detail::timeoutParam(7300ms), "8s");
  EXPECT_EQ(detail::timeoutParam(200ms), "1s");
  EXPECT_EQ(detail::timeoutParam(1ns), "1s");
  EXPECT_EQ(detail::timeoutParam(9s + 1ns), "10s");
  EXPECT_EQ(detail::timeoutParam(90s), "1m30s");
}

TEST(TimeoutParamTest, EmptyWhenNothingIsLeft) {
  EXPECT_EQ(detail::timeoutParam(0ns), "");
  EXPECT_EQ(detail::timeoutParam(-1ms), "");
}

// --- the chain ---

json webhook(const std::string& name, int timeout_seconds, const std::string& reinvocation,
             const std::string& failure_policy = "Fail") {
  json hook = fixture::configMapWebhook(name, timeout_seconds);
  hook["failurePolicy"] = failure_policy;
  if (!reinvocation.empty()) hook["reinvocationPolicy"] = reinvocation;
  return hook;
}

using fixture::configuration;

// What an in-process webhook does: the time its answer takes (declared, on the simulated clock),
// an optional label to set, or a denial; `running` is real time spent in the handler, which
// stands for a slow exchange on a loaded machine and must not count.
struct Behaviour {
  std::chrono::milliseconds takes{0};
  std::string label;  // "key=value" set by a JSON patch unless the object already has it
  std::string deny;   // non-empty: allowed false with this message
  std::chrono::milliseconds running{0};
};

class ChainTest : public ::testing::Test {
 protected:
  void SetUp() override { fixture::putDemoNamespace(store_); }

  void addWebhook(const std::string& name, const Behaviour& behaviour) {
    caller_.handle("https://" + name + "/", [this, name, behaviour](
                                                const core::AdmissionReview& review) {
      {
        std::lock_guard lock(mutex_);
        timeouts_[name].push_back(review.request ? review.request->uid : "");
        calls_[name]++;
      }
      if (behaviour.running.count() > 0) std::this_thread::sleep_for(behaviour.running);
      core::AdmissionReview answer = fixture::answerTo(review, behaviour.deny);
      core::AdmissionResponse& response = *answer.response;
      if (!behaviour.label.empty()) {
        const auto eq = behaviour.label.find('=');
        const std::string key = behaviour.label.substr(0, eq);
        const std::string value = behaviour.label.substr(eq + 1);
        const json object = review.request->object.value_or(json::object());
        const json labels =
            object.value("metadata", json::object()).value("labels", json::object());
        if (labels.value(key, "") != value) {
          const json patch = json::array(
              {{{"op", "add"}, {"path", "/metadata/labels/" + key}, {"value", value}}});
          response.patch = patch.dump();
          response.patch_type = "JSONPatch";
        }
      }
      return answer;
    }, behaviour.takes);
  }

  AdmissionResult create(std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
    return chain().handle(fixture::configMapCreate(timeout));
  }

  AdmissionChain& chain() {
    if (!chain_) chain_ = std::make_unique<AdmissionChain>(store_, caller_, metrics_, options_);
    return *chain_;
  }

  static std::vector<std::string> sent(const AdmissionResult& result) {
    std::vector<std::string> out;
    out.reserve(result.calls.size());
    for (const auto& call : result.calls) {
      out.push_back(call.webhook + " r" + std::to_string(call.round) + " " + call.timeout_param);
    }
    return out;
  }

  ObjectStore store_;
  InProcessWebhookCaller caller_;
  core::MetricsRegistry metrics_;
  ChainOptions options_;
  std::unique_ptr<AdmissionChain> chain_;
  std::mutex mutex_;
  std::map<std::string, std::vector<std::string>> timeouts_;
  std::map<std::string, int> calls_;
};

// The reference's timeout_test.go case (§4.3): request timeout 10 s; mutating webhooks of 20 s,
// 5 s and 20 s each taking 1 s see 10s, 5s and 8s; a validating webhook of 30 s then sees what is
// left of the request's deadline (7 s). Each call is charged exactly what it takes.
TEST_F(ChainTest, EveryCallSharesTheRequestDeadline) {
  addWebhook("a.example.com", {1s});
  addWebhook("b.example.com", {1s});
  addWebhook("c.example.com", {1s});
  addWebhook("v.example.com", {});
  store_.put({"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
             configuration("MutatingWebhookConfiguration", "m",
                           json::array({webhook("a.example.com", 20, ""),
                                        webhook("b.example.com", 5, ""),
                                        webhook("c.example.com", 20, "")})));
  store_.put({"admissionregistration.k8s.io", "validatingwebhookconfigurations"},
             configuration("ValidatingWebhookConfiguration", "v",
                           json::array({webhook("v.example.com", 30, "")})));
  const AdmissionResult result = create(10s);
  ASSERT_TRUE(result.allowed) << (result.status ? result.status->message : "");
  EXPECT_EQ(sent(result), std::vector<std::string>({"a.example.com r0 10s", "b.example.com r0 5s",
                                                    "c.example.com r0 8s",
                                                    "v.example.com r0 7s"}));
  ASSERT_EQ(result.calls.size(), 4u);
  EXPECT_EQ(result.calls[0].latency, 1s);
  EXPECT_EQ(result.calls[3].latency, 0s);
}

TEST_F(ChainTest, AWebhookTimeoutIsACallingErrorWithTheRoundedTimeout) {
  addWebhook("slow.example.com", {5s});  // 5 s against timeoutSeconds: 1
  store_.put({"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
             configuration("MutatingWebhookConfiguration", "m",
                           json::array({webhook("slow.example.com", 1, "")})));
  const AdmissionResult result = create();
  EXPECT_FALSE(result.allowed);
  EXPECT_EQ(result.code, 500);
  ASSERT_EQ(result.calls.size(), 1u);
  EXPECT_EQ(result.calls[0].outcome, CallOutcome::kCallingError);
  EXPECT_EQ(result.calls[0].timeout_param, "1s");
  EXPECT_EQ(result.calls[0].latency, 1s);  // the call ended at its deadline
  ASSERT_TRUE(result.status.has_value());
  EXPECT_EQ(result.status->message,
            "Internal error occurred: failed calling webhook \"slow.example.com\": failed to call "
            "webhook: Post \"https://slow.example.com/?timeout=1s\": context deadline exceeded");
}

// The comparison with the deadline is exact: an answer that takes the whole budget comes too late
// (the context is done at the deadline), one a millisecond sooner is in time.
TEST_F(ChainTest, AnAnswerTakingTheWholeBudgetIsLate) {
  addWebhook("late.example.com", {2s});
  addWebhook("just.example.com", {1999ms});
  store_.put({"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
             configuration("MutatingWebhookConfiguration", "m",
                           json::array({webhook("just.example.com", 2, "", "Ignore"),
                                        webhook("late.example.com", 2, "", "Ignore")})));
  const AdmissionResult result = create();
  ASSERT_TRUE(result.allowed) << (result.status ? result.status->message : "");
  ASSERT_EQ(result.calls.size(), 2u);
  EXPECT_EQ(result.calls[0].outcome, CallOutcome::kAllowed);
  EXPECT_EQ(result.calls[0].latency, 1999ms);
  EXPECT_EQ(result.calls[1].outcome, CallOutcome::kFailedOpen);
  EXPECT_EQ(result.calls[1].latency, 2s);
}

// The real time a call spends (here 300 ms in the handler, as a TLS handshake on a loaded machine
// may) is not charged: at time scale 0.001 the old scaled deadline of 1 s was 1 ms of real time,
// and this call timed out.
TEST_F(ChainTest, RealTimeSpentInACallIsNotCharged) {
  options_.time_scale = 0.001;
  addWebhook("a.example.com", {0ms, "", "", 300ms});
  addWebhook("b.example.com", {});
  store_.put({"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
             configuration("MutatingWebhookConfiguration", "m",
                           json::array({webhook("a.example.com", 1, ""),
                                        webhook("b.example.com", 10, "")})));
  const AdmissionResult result = create(10s);
  ASSERT_TRUE(result.allowed) << (result.status ? result.status->message : "");
  EXPECT_EQ(sent(result),
            std::vector<std::string>({"a.example.com r0 1s", "b.example.com r0 10s"}));
}

// §4.3: a fail-open call that used up the request's deadline ends the request with 504, and the
// later webhooks are not called.
TEST_F(ChainTest, AFailOpenThatExhaustsTheRequestDeadlineIs504) {
  addWebhook("slow.example.com", {30s});
  addWebhook("later.example.com", {});
  store_.put({"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
             configuration("MutatingWebhookConfiguration", "m",
                           json::array({webhook("slow.example.com", 10, "", "Ignore"),
                                        webhook("later.example.com", 10, "")})));
  const AdmissionResult result = create(3s);
  EXPECT_FALSE(result.allowed);
  EXPECT_EQ(result.code, 504);
  EXPECT_EQ(sent(result), std::vector<std::string>({"slow.example.com r0 3s"}));
  ASSERT_EQ(result.calls.size(), 1u);
  EXPECT_EQ(result.calls[0].outcome, CallOutcome::kRequestTimeout);
  EXPECT_EQ(calls_.count("later.example.com"), 0u);
}

// Validating calls run in parallel: the error returned is the one that arrives first on the
// simulated clock, not the first thread to finish; on a tie, the earlier webhook's.
TEST_F(ChainTest, TheValidatingErrorReturnedIsTheFirstToArrive) {
  addWebhook("slow.example.com", {2s, "", "slow says no"});
  addWebhook("fast.example.com", {1s, "", "fast says no", 200ms});
  addWebhook("also-fast.example.com", {1s, "", "also-fast says no"});
  store_.put({"admissionregistration.k8s.io", "validatingwebhookconfigurations"},
             configuration("ValidatingWebhookConfiguration", "v",
                           json::array({webhook("slow.example.com", 10, ""),
                                        webhook("fast.example.com", 10, ""),
                                        webhook("also-fast.example.com", 10, "")})));
  const AdmissionResult result = create();
  EXPECT_FALSE(result.allowed);
  ASSERT_TRUE(result.status.has_value());
  EXPECT_EQ(result.status->message,
            "admission webhook \"fast.example.com\" denied the request: fast says no");
}

// Validating calls run at once, as the dispatcher's goroutines do, one of them on the admitting
// thread: a single validating webhook (the usual case) starts no thread. Each handler waits until
// all three have started (or 30 s pass, and the test fails instead of hanging).
TEST_F(ChainTest, ValidatingCallsRunAtOnceOneOnTheAdmittingThread) {
  std::mutex mutex;
  std::condition_variable all_started;
  int started = 0;
  std::vector<std::thread::id> threads;
  bool met = true;
  for (const std::string name : {"v1.example.com", "v2.example.com", "v3.example.com"}) {
    caller_.handle("https://" + name + "/", [&](const core::AdmissionReview& review) {
      std::unique_lock lock(mutex);
      threads.push_back(std::this_thread::get_id());
      ++started;
      all_started.notify_all();
      met = all_started.wait_for(lock, 30s, [&] { return started >= 3; }) && met;
      return fixture::answerTo(review, "");
    });
  }
  store_.put({"admissionregistration.k8s.io", "validatingwebhookconfigurations"},
             configuration("ValidatingWebhookConfiguration", "v",
                           json::array({webhook("v1.example.com", 10, ""),
                                        webhook("v2.example.com", 10, ""),
                                        webhook("v3.example.com", 10, "")})));
  const AdmissionResult result = create();
  EXPECT_TRUE(result.allowed);
  EXPECT_TRUE(met) << "the three calls did not run at once";
  ASSERT_EQ(threads.size(), 3u);
  EXPECT_EQ(std::count(threads.begin(), threads.end(), std::this_thread::get_id()), 1);
  EXPECT_EQ(std::set<std::thread::id>(threads.begin(), threads.end()).size(), 3u);
}

TEST_F(ChainTest, ASingleValidatingWebhookIsCalledOnTheAdmittingThread) {
  std::thread::id called_on;
  caller_.handle("https://only.example.com/", [&](const core::AdmissionReview& review) {
    called_on = std::this_thread::get_id();
    return fixture::answerTo(review, "");
  });
  store_.put({"admissionregistration.k8s.io", "validatingwebhookconfigurations"},
             configuration("ValidatingWebhookConfiguration", "v",
                           json::array({webhook("only.example.com", 10, "")})));
  EXPECT_TRUE(create().allowed);
  EXPECT_EQ(called_on, std::this_thread::get_id());
}

// §6: a later webhook's change reinvokes an earlier IfNeeded webhook once, in round 1; a Never
// webhook is not reinvoked; the in-tree plugins run again.
TEST_F(ChainTest, IfNeededWebhookIsReinvokedOnceAfterALaterChange) {
  addWebhook("a.example.com", {});                 // IfNeeded, changes nothing
  addWebhook("b.example.com", {0ms, "injected=yes"});  // Never, changes the object
  store_.put({"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
             configuration("MutatingWebhookConfiguration", "m",
                           json::array({webhook("a.example.com", 10, "IfNeeded"),
                                        webhook("b.example.com", 10, "Never")})));
  const AdmissionResult result = create();
  ASSERT_TRUE(result.allowed) << (result.status ? result.status->message : "");
  EXPECT_TRUE(result.reinvoked);
  EXPECT_EQ(sent(result), std::vector<std::string>({"a.example.com r0 10s", "b.example.com r0 10s",
                                                    "a.example.com r1 10s"}));
  EXPECT_EQ(result.calls[1].outcome, CallOutcome::kPatched);
  EXPECT_TRUE(result.calls[1].changed);
  bool plugins_in_round_1 = false;
  for (const auto& plugin : result.plugins) plugins_in_round_1 |= plugin.round == 1;
  EXPECT_TRUE(plugins_in_round_1);
  EXPECT_EQ((*result.object)["metadata"]["labels"]["injected"], "yes");
}

TEST_F(ChainTest, AWebhooksOwnChangeDoesNotReinvokeIt) {
  addWebhook("a.example.com", {0ms, "injected=yes"});  // IfNeeded, the only change
  addWebhook("b.example.com", {0ms, ""});
  store_.put({"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
             configuration("MutatingWebhookConfiguration", "m",
                           json::array({webhook("a.example.com", 10, "IfNeeded"),
                                        webhook("b.example.com", 10, "IfNeeded")})));
  const AdmissionResult result = create();
  ASSERT_TRUE(result.allowed) << (result.status ? result.status->message : "");
  // Round 1 happens (the object changed) but neither webhook is called again: a is added to
  // previouslyInvoked after its own change, and b ran after the only change.
  EXPECT_EQ(sent(result),
            std::vector<std::string>({"a.example.com r0 10s", "b.example.com r0 10s"}));
  EXPECT_TRUE(result.reinvoked);
}

TEST_F(ChainTest, NoSecondRoundWithoutAChange) {
  addWebhook("a.example.com", {0ms, ""});
  store_.put({"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
             configuration("MutatingWebhookConfiguration", "m",
                           json::array({webhook("a.example.com", 10, "IfNeeded")})));
  const AdmissionResult result = create();
  ASSERT_TRUE(result.allowed) << (result.status ? result.status->message : "");
  EXPECT_FALSE(result.reinvoked);
  EXPECT_EQ(sent(result), std::vector<std::string>({"a.example.com r0 10s"}));
  for (const auto& plugin : result.plugins) EXPECT_EQ(plugin.round, 0) << plugin.name;
}

// Two IfNeeded webhooks that keep changing the object: still exactly one extra round.
TEST_F(ChainTest, NeverAThirdRound) {
  int flips = 0;
  for (const std::string name : {"a.example.com", "b.example.com"}) {
    caller_.handle("https://" + name + "/", [name, &flips](const core::AdmissionReview& review) {
      core::AdmissionReview answer{review.api_version, review.kind, std::nullopt, std::nullopt};
      core::AdmissionResponse response;
      response.uid = review.request->uid;
      response.allowed = true;
      const json patch = json::array({{{"op", "add"},
                                       {"path", "/metadata/labels/owner"},
                                       {"value", name + std::to_string(flips++)}}});
      response.patch = patch.dump();
      response.patch_type = "JSONPatch";
      answer.response = response;
      return std::optional<core::AdmissionReview>(answer);
    });
  }
  store_.put({"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
             configuration("MutatingWebhookConfiguration", "m",
                           json::array({webhook("a.example.com", 10, "IfNeeded"),
                                        webhook("b.example.com", 10, "IfNeeded")})));
  const AdmissionResult result = create();
  ASSERT_TRUE(result.allowed) << (result.status ? result.status->message : "");
  EXPECT_EQ(sent(result), std::vector<std::string>({"a.example.com r0 10s", "b.example.com r0 10s",
                                                    "a.example.com r1 10s",
                                                    "b.example.com r1 10s"}));
}

// A patch within encoding/json's limit can still nest the patched object deeper than it: the
// API server's decode of the patched object fails (an internal error, whatever the
// failurePolicy), and nothing copies the object recursively before that is checked.
TEST_F(ChainTest, APatchThatNestsTheObjectTooDeeplyIsAnInternalError) {
  caller_.handle("https://deep.example.com/", [](const core::AdmissionReview& review) {
    core::AdmissionReview answer{review.api_version, review.kind, std::nullopt, std::nullopt};
    core::AdmissionResponse response;
    response.uid = review.request->uid;
    response.allowed = true;
    // 2 + 9,998 levels: the patch itself is within the limit; /metadata/labels/deep is at 3.
    response.patch = R"([{"op":"add","path":"/metadata/labels/deep","value":)" +
                     std::string(9998, '[') + std::string(9998, ']') + "}]";
    response.patch_type = "JSONPatch";
    answer.response = response;
    return std::optional<core::AdmissionReview>(answer);
  });
  store_.put({"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
             configuration("MutatingWebhookConfiguration", "m",
                           json::array({webhook("deep.example.com", 10, "")})));
  const AdmissionResult result = create();
  EXPECT_FALSE(result.allowed);
  EXPECT_EQ(result.code, 500);
  ASSERT_TRUE(result.status.has_value());
  EXPECT_EQ(result.status->message,
            "Internal error occurred: couldn't get version/kind; json parse error: invalid "
            "character '[' exceeded max depth");
  ASSERT_EQ(result.calls.size(), 1u);
  EXPECT_EQ(result.calls[0].outcome, CallOutcome::kApplyError);
}

}  // namespace
}  // namespace harness::sim
