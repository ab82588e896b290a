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

nlohmann::json makeEvent(EventSpec spec) {
  const auto nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
  char hex[32];
  std::snprintf(hex, sizeof hex, "%llx", static_cast<unsigned long long>(nanos));
  const auto& ref = spec.involved_object;
  const std::string now = rfc3339Now();
  // Member by member, the spec's values moved in: a braced initializer list copies every value
  // twice (nlohmann's json_ref), and this runs for every injected pod.
  nlohmann::json metadata = nlohmann::json::object();
  metadata.emplace("name", ref.value("name", "unknown") + "." + hex);
  metadata.emplace("namespace", ref.value("namespace", "default"));
  nlohmann::json source = nlohmann::json::object();
  source.emplace("component", spec.component);
  nlohmann::json event = nlohmann::json::object();
  event.emplace("apiVersion", "v1");
  event.emplace("kind", "Event");
  event.emplace("metadata", std::move(metadata));
  event.emplace("involvedObject", std::move(spec.involved_object));
  event.emplace("reason", std::move(spec.reason));
  event.emplace("message", std::move(spec.message));
  event.emplace("type", std::move(spec.type));
  event.emplace("source", std::move(source));
  event.emplace("firstTimestamp", now);
  event.emplace("lastTimestamp", now);
  event.emplace("count", 1);
  event.emplace("reportingComponent", std::move(spec.component));
  event.emplace("reportingInstance", "");
  return event;
}

EventSink::EventSink(KubeApi& api, std::size_t max_queue, std::chrono::milliseconds coalesce)
    : api_(api), max_queue_(max_queue), coalesce_(coalesce), worker_([this] { run(); }) {}

EventSink::~EventSink() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  worker_.join();
}

void EventSink::post(EventSpec spec) {
  const std::string reason = spec.reason;
  auto event = makeEvent(std::move(spec));
  bool wake = false;
  {
    std::lock_guard lock(mutex_);
    if (queue_.size() >= max_queue_) {
      ++failed_;
      spdlog::warn("dropping event {}: queue full", reason);
      return;
    }
    queue_.push_back(std::move(event));
    wake = idle_ || (coalescing_ && halfFull());
    if (wake) idle_ = coalescing_ = false;  // one wake is enough
  }
  if (wake) cv_.notify_one();
}

void EventSink::flush() {
  std::unique_lock lock(mutex_);
  ++flushing_;
  cv_.notify_all();  // ends a coalescing window now
  idle_cv_.wait(lock, [&] { return queue_.empty() && !busy_ && (idle_ || stopping_); });
  --flushing_;
}

std::uint64_t EventSink::posted() const {
  std::lock_guard lock(mutex_);
  return posted_;
}

std::uint64_t EventSink::failed() const {
  std::lock_guard lock(mutex_);
  return failed_;
}

std::uint64_t EventSink::batches() const {
  std::lock_guard lock(mutex_);
  return batches_;
}

void EventSink::run() {
  std::unique_lock lock(mutex_);
  for (;;) {
    if (queue_.empty()) {
      if (stopping_) return;
      idle_ = true;
      if (flushing_ > 0) idle_cv_.notify_all();
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      idle_ = false;
      if (queue_.empty()) continue;
      // Let the burst this event belongs to queue up behind it.
      coalescing_ = true;
      cv_.wait_for(lock, coalesce_, [&] {
        return stopping_ || flushing_ > 0 || halfFull();
      });
      coalescing_ = false;
    }
    std::deque<nlohmann::json> batch;
    batch.swap(queue_);
    ++batches_;
    busy_ = true;
    lock.unlock();
    std::uint64_t posted = 0;
    std::uint64_t failed = 0;
    for (const auto& event : batch) {
      auto result = api_.createEvent(event);
      if (result) {
        ++posted;
      } else {
        ++failed;
        spdlog::warn("failed to post event {}/{}: {}", event["metadata"].value("namespace", ""),
                     event["metadata"].value("name", ""), result.error().message);
      }
    }
    batch.clear();  // freed before the lock is taken again
    lock.lock();
    busy_ = false;
    posted_ += posted;
    failed_ += failed;
  }
}

}  // namespace harness::injector
