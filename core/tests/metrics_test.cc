#include "harness/core/metrics.h"

#include <gtest/gtest.h>

#include <thread>

namespace harness::core {
namespace {

TEST(Metrics, CounterRendersSortedSeriesWithEscapedLabels) {
  MetricsRegistry registry;
  auto& c = registry.counter("proxy_inject_admission_requests_total", "A counter of requests",
                             {"owner_kind", "namespace"});
  c.add({"pod", "b"});
  c.add({"deployment", "a\"q\\\n"}, 2);
  c.add({"pod", "b"});
  EXPECT_EQ(registry.render(),
            "# HELP proxy_inject_admission_requests_total A counter of requests\n"
            "# TYPE proxy_inject_admission_requests_total counter\n"
            "proxy_inject_admission_requests_total{owner_kind=\"deployment\",namespace=\"a\\\"q\\\\"
            "\\n\"} 2\n"
            "proxy_inject_admission_requests_total{owner_kind=\"pod\",namespace=\"b\"} 2\n");
  EXPECT_EQ(c.value({"pod", "b"}), 2);
  EXPECT_EQ(c.value({"pod", "missing"}), 0);
}

TEST(Metrics, HistogramBucketsAreCumulativeAndUpperBoundsInclusive) {
  MetricsRegistry registry;
  auto& h = registry.histogram("apiserver_admission_webhook_admission_duration_seconds", "d",
                               {"name"}, {0.005, 0.025, 0.1});
  h.observe({"w"}, 0.005);  // exactly on a bound counts in that bucket
  h.observe({"w"}, 0.05);
  h.observe({"w"}, 3);
  EXPECT_EQ(h.render(),
            "# HELP apiserver_admission_webhook_admission_duration_seconds d\n"
            "# TYPE apiserver_admission_webhook_admission_duration_seconds histogram\n"
            "apiserver_admission_webhook_admission_duration_seconds_bucket{name=\"w\",le=\"0.005\"} 1\n"
            "apiserver_admission_webhook_admission_duration_seconds_bucket{name=\"w\",le=\"0.025\"} 1\n"
            "apiserver_admission_webhook_admission_duration_seconds_bucket{name=\"w\",le=\"0.1\"} 2\n"
            "apiserver_admission_webhook_admission_duration_seconds_bucket{name=\"w\",le=\"+Inf\"} 3\n"
            "apiserver_admission_webhook_admission_duration_seconds_sum{name=\"w\"} 3.055\n"
            "apiserver_admission_webhook_admission_duration_seconds_count{name=\"w\"} 3\n");
  EXPECT_EQ(h.count({"w"}), 3u);
}

// Only the counter families under the prefix, as render() writes them: no histogram, no other
// counter, none that merely sorts after the prefix.
TEST(Metrics, RenderCountersTakesTheFamiliesUnderAPrefix) {
  MetricsRegistry registry;
  registry.counter("apiserver_admission_webhook_request_total", "r", {"name"}).add({"w"});
  registry.counter("apiserver_admission_webhook_rejection_count", "j", {"name"}).add({"w"}, 2);
  registry.counter("apiserver_admission_webhooks_total", "other", {}).add({});
  registry.counter("apiserver_admission_step_total", "before", {}).add({});
  registry.histogram("apiserver_admission_webhook_admission_duration_seconds", "d", {"name"},
                     {0.1})
      .observe({"w"}, 0.05);
  EXPECT_EQ(registry.renderCounters("apiserver_admission_webhook_"),
            "# HELP apiserver_admission_webhook_rejection_count j\n"
            "# TYPE apiserver_admission_webhook_rejection_count counter\n"
            "apiserver_admission_webhook_rejection_count{name=\"w\"} 2\n"
            "# HELP apiserver_admission_webhook_request_total r\n"
            "# TYPE apiserver_admission_webhook_request_total counter\n"
            "apiserver_admission_webhook_request_total{name=\"w\"} 1\n");
  EXPECT_EQ(registry.renderCounters("nothing_"), "");
}

TEST(Metrics, EmptyFamiliesRenderNothingAndRegistrationIsIdempotent) {
  MetricsRegistry registry;
  auto& a = registry.counter("x_total", "x", {"l"});
  auto& b = registry.counter("x_total", "x", {"l"});
  EXPECT_EQ(&a, &b);
  EXPECT_EQ(registry.render(), "");
  EXPECT_NE(registry.findCounter("x_total"), nullptr);
  EXPECT_EQ(registry.findHistogram("x_total"), nullptr);
}

TEST(Metrics, WrongLabelArityIsRejected) {
  MetricsRegistry registry;
  auto& c = registry.counter("y_total", "y", {"a", "b"});
  EXPECT_THROW(c.add({"only-one"}), std::invalid_argument);
}

TEST(Metrics, ConcurrentIncrementsAreAllCounted) {
  MetricsRegistry registry;
  auto& c = registry.counter("z_total", "z", {});
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) c.add({});
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(c.value({}), 40000);
}

TEST(Metrics, AFamilySlotRegistersOnceAndThenHandsOutTheSameFamily) {
  MetricsRegistry registry;
  FamilySlot<CounterFamily> slot;
  int registrations = 0;
  auto make = [&]() -> CounterFamily& {
    ++registrations;
    return registry.counter("slot_total", "s", {"l"});
  };
  slot.get(make).add({"a"});
  slot.get(make).add({"a"});
  EXPECT_EQ(registrations, 1);
  EXPECT_EQ(&slot.get(make), registry.findCounter("slot_total"));
  EXPECT_EQ(registry.findCounter("slot_total")->value({"a"}), 2);
}

TEST(Metrics, ThreadsRacingToRegisterASlotCountIntoOneFamily) {
  MetricsRegistry registry;
  FamilySlot<CounterFamily> slot;
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        slot.get([&]() -> CounterFamily& { return registry.counter("race_total", "r", {}); })
            .add({});
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(registry.findCounter("race_total")->value({}), 4000);
}

TEST(Metrics, SampleValuesFormatLikePrometheus) {
  EXPECT_EQ(formatSampleValue(3), "3");
  EXPECT_EQ(formatSampleValue(0.1), "0.1");
  EXPECT_EQ(formatSampleValue(2.5), "2.5");
  EXPECT_EQ(formatSampleValue(1.0 / 0.0), "+Inf");
}

}  // namespace
}  // namespace harness::core
