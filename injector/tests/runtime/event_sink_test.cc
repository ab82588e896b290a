// The injector's background event writer: every event posted reaches the API in order, a burst
// takes one wake of the worker, flush() and destruction do not wait for the coalescing window,
// a full queue drops (and counts) what does not fit.

#include "event_sink.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "harness/injector/kube_api.h"

namespace harness::injector {
namespace {

using namespace std::chrono_literals;

EventSpec injected(const std::string& pod) {
  return {"Normal", "Injected", "Linkerd sidecar proxy injected",
          {{"kind", "Pod"}, {"namespace", "emojivoto"}, {"name", pod}},
          "linkerd-proxy-injector"};
}

std::vector<std::string> involvedNames(const LocalKubeApi& api) {
  std::vector<std::string> names;
  for (const auto& event : api.events()) names.push_back(event["involvedObject"]["name"]);
  return names;
}

TEST(EventSink, EveryEventPostedReachesTheApiInOrder) {
  LocalKubeApi api;
  {
    EventSink sink(api);
    for (int i = 0; i < 50; ++i) sink.post(injected("web-" + std::to_string(i)));
    sink.flush();
    EXPECT_EQ(sink.posted(), 50u);
    EXPECT_EQ(sink.failed(), 0u);
  }
  const auto names = involvedNames(api);
  ASSERT_EQ(names.size(), 50u);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(names[i], "web-" + std::to_string(i));
  EXPECT_EQ(api.events().front()["reason"], "Injected");
  EXPECT_EQ(api.events().front()["source"]["component"], "linkerd-proxy-injector");
}

// The window is an hour here: only flush() can end it, so the burst is taken at once however
// slowly this machine schedules the worker (without coalescing, each post woke it). The first
// flush() returns once the worker waits for events, so the burst starts with a wake.
TEST(EventSink, ABurstIsTakenInOneBatchAndFlushEndsTheWindow) {
  LocalKubeApi api;
  EventSink sink(api, 1000, std::chrono::hours(1));
  sink.flush();
  for (int i = 0; i < 100; ++i) sink.post(injected("web-" + std::to_string(i)));
  sink.flush();
  EXPECT_EQ(sink.posted(), 100u);
  EXPECT_EQ(sink.batches(), 1u);
  EXPECT_EQ(api.eventsCreated(), 100u);
}

TEST(EventSink, DestructionWritesWhatIsQueuedWithoutWaitingForTheWindow) {
  LocalKubeApi api;
  const auto started = std::chrono::steady_clock::now();
  {
    EventSink sink(api, 1000, std::chrono::hours(1));
    for (int i = 0; i < 10; ++i) sink.post(injected("web-" + std::to_string(i)));
  }
  EXPECT_EQ(api.eventsCreated(), 10u);
  // A backstop far above need: the hour-long window was not waited for.
  EXPECT_LT(std::chrono::steady_clock::now() - started, 10min);
}

TEST(EventSink, AHalfFullQueueEndsTheWindow) {
  LocalKubeApi api;
  EventSink sink(api, 4, std::chrono::hours(1));
  sink.flush();  // the worker waits for events: the two below start one window
  sink.post(injected("web-0"));
  sink.post(injected("web-1"));  // half of 4: the worker takes them without flush()
  const auto deadline = std::chrono::steady_clock::now() + 2min;  // a backstop far above need
  while (sink.posted() < 2 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_EQ(sink.posted(), 2u);
}

TEST(EventSink, AFullQueueDropsAndCountsWhatDoesNotFit) {
  LocalKubeApi api;
  EventSink sink(api, 4, std::chrono::hours(1));
  for (int i = 0; i < 40; ++i) sink.post(injected("web-" + std::to_string(i)));
  sink.flush();
  // However the worker was scheduled, nothing is lost silently, and the first four always fit.
  EXPECT_EQ(sink.posted() + sink.failed(), 40u);
  EXPECT_EQ(api.eventsCreated(), sink.posted());
  EXPECT_GE(sink.posted(), 4u);
}

}  // namespace
}  // namespace harness::injector
