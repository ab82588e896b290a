#pragma once

// Posts Kubernetes Events in the background, like client-go's event recorder: admission never
// waits for the API server, failures are logged, the queue is bounded.

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "harness/injector/kube_api.h"

namespace harness::injector {

struct EventSpec {
  std::string type;     // "Normal"
  std::string reason;   // "Injected"
  std::string message;
  nlohmann::json involved_object;  // ObjectReference
  std::string component;           // source.component
};

// core/v1 Event as client-go's recorder builds it (tools/record/event.go makeEvent): name
// "<object name>.<unix nanos in hex>", first/lastTimestamp, count 1, source.component.
nlohmann::json makeEvent(EventSpec spec);

// Events are written by one worker thread. Waking it for every event cost the request thread a
// futex call and the core two context switches per admission (about a tenth of a Linkerd
// request's CPU under load), so a wake starts a short window in which the burst queues up, and
// the worker takes the whole queue at once: at thousands of admissions a second, one wake per
// window instead of one per event. The window ends early when the queue is half full, on
// flush() and on destruction.
class EventSink {
 public:
  static constexpr std::chrono::milliseconds kDefaultCoalesce{5};
  explicit EventSink(KubeApi& api, std::size_t max_queue = 1000,
                     std::chrono::milliseconds coalesce = kDefaultCoalesce);
  ~EventSink();  // drains what is queued (bounded by the API client's timeouts)
  EventSink(const EventSink&) = delete;
  EventSink& operator=(const EventSink&) = delete;

  void post(EventSpec spec);
  // Blocks until every event posted before it is written and the worker waits for the next one
  // (tests, shutdown).
  void flush();
  [[nodiscard]] std::uint64_t posted() const;
  [[nodiscard]] std::uint64_t failed() const;
  // How many times the worker took events from the queue (each time after one wake).
  [[nodiscard]] std::uint64_t batches() const;

 private:
  void run();
  // A burst this large ends the coalescing window early (the caller holds mutex_).
  [[nodiscard]] bool halfFull() const { return queue_.size() >= max_queue_ / 2; }
  KubeApi& api_;
  std::size_t max_queue_;
  std::chrono::milliseconds coalesce_;
  mutable std::mutex mutex_;
  std::condition_variable cv_, idle_cv_;
  std::deque<nlohmann::json> queue_;
  bool stopping_ = false, busy_ = false;
  // The worker waits for a first event (`idle_`) or lets a burst queue up (`coalescing_`);
  // post() wakes it only in the first case, or in the second when the queue is half full.
  bool idle_ = false, coalescing_ = false;
  int flushing_ = 0;  // flush() calls waiting
  std::uint64_t posted_ = 0, failed_ = 0, batches_ = 0;
  std::thread worker_;
};

}  // namespace harness::injector
