#include "event_sink.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include <spdlog/spdlog.h>

namespace harness::injector {

namespace {

std::string rfc3339Now() {
  const std::time_t t = std::time(nullptr);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace

nlohmann::json makeEvent(const EventSpec& spec) {
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  char hex[32];
  std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(nanos));
  const auto& ref = spec.involved_object;
  const std::string ns = ref.value("namespace", "default");
  const std::string now = rfc3339Now();
  return {
      {"apiVersion", "v1"},
      {"kind", "Event"},
      {"metadata", {{"name", ref.value("name", "unknown") + "." + hex}, {"namespace", ns}}},
      {"involvedObject", ref},
      {"reason", spec.reason},
      {"message", spec.message},
      {"type", spec.type},
      {"source", {{"component", spec.component}}},
      {"firstTimestamp", now},
      {"lastTimestamp", now},
      {"count", 1},
      {"reportingComponent", spec.component},
      {"reportingInstance", ""},
  };
}

EventSink::EventSink(KubeApi& api, std::size_t max_queue)
    : api_(api), max_queue_(max_queue), worker_([this] { run(); }) {}

EventSink::~EventSink() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void EventSink::post(const EventSpec& spec) {
  auto event = makeEvent(spec);
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= max_queue_) {
      ++failed_;
      spdlog::warn("dropping event {}: queue full", spec.reason);
      return;
    }
    queue_.push_back(std::move(event));
  }
  cv_.notify_one();
}

void EventSink::flush() {
  std::unique_lock lock(mutex_);
  idle_cv_.wait(lock, [&] { return queue_.empty() && !busy_; });
}

std::uint64_t EventSink::posted() const {
  std::lock_guard lock(mutex_);
  return posted_;
}

std::uint64_t EventSink::failed() const {
  std::lock_guard lock(mutex_);
  return failed_;
}

void EventSink::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) {
      if (stopping_) return;
      continue;
    }
    auto event = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    auto result = api_.createEvent(event);
    lock.lock();
    busy_ = false;
    if (result) {
      ++posted_;
    } else {
      ++failed_;
      spdlog::warn("failed to post event {}/{}: {}", event["metadata"].value("namespace", ""),
                   event["metadata"].value("name", ""), result.error().message);
    }
    idle_cv_.notify_all();
  }
}

}  // namespace harness::injector
