#pragma once

// Posts Kubernetes Events in the background, like client-go's event recorder: admission never
// waits for the API server, failures are logged, the queue is bounded.

#include <condition_variable>
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
nlohmann::json makeEvent(const EventSpec& spec);

class EventSink {
 public:
  explicit EventSink(KubeApi& api, std::size_t max_queue = 1000);
  ~EventSink();  // drains what is queued (bounded by the API client's timeouts)
  EventSink(const EventSink&) = delete;
  EventSink& operator=(const EventSink&) = delete;

  void post(const EventSpec& spec);
  // Blocks until the queue is empty (tests, shutdown).
  void flush();
  [[nodiscard]] std::uint64_t posted() const;
  [[nodiscard]] std::uint64_t failed() const;

 private:
  void run();
  KubeApi& api_;
  std::size_t max_queue_;
  mutable std::mutex mutex_;
  std::condition_variable cv_, idle_cv_;
  std::deque<nlohmann::json> queue_;
  bool stopping_ = false, busy_ = false;
  std::uint64_t posted_ = 0, failed_ = 0;
  std::thread worker_;
};

}  // namespace harness::injector
