#pragma once

// Results of a pure function kept by the text that determines them: the Istio profile's parsed
// rendered templates (istio::OverlayCache), the Linkerd profile's injection patches
// (linkerd::PatchCache). Bounded in entries and in the bytes of key text kept; the oldest entry
// goes first. Errors are not kept. Thread-safe: the value is computed without the lock, so two
// threads may compute the same one; the first to finish keeps its value.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include "harness/core/result.h"

namespace harness::injector {

template <class T>
class TextKeyedCache {
 public:
  TextKeyedCache(std::size_t max_entries, std::size_t max_key_bytes)
      : max_entries_(max_entries), max_key_bytes_(max_key_bytes) {}

  // The value kept for `key`, or compute() (a core::Result<T>), kept when it succeeds.
  template <class Compute>
  core::Result<std::shared_ptr<const T>> get(std::string_view key, Compute&& compute) {
    {
      std::lock_guard lock(mutex_);
      if (const auto found = entries_.find(key); found != entries_.end()) {
        ++hits_;
        return found->second;
      }
      ++misses_;
    }
    core::Result<T> computed = std::forward<Compute>(compute)();
    if (!computed) return computed.error();
    auto value = std::make_shared<const T>(std::move(*computed));
    if (max_entries_ == 0 || key.size() > max_key_bytes_) return value;
    std::lock_guard lock(mutex_);
    if (entries_.find(key) != entries_.end()) return value;
    while (!order_.empty() &&
           (entries_.size() >= max_entries_ || key_bytes_ + key.size() > max_key_bytes_)) {
      key_bytes_ -= order_.front().size();
      const auto oldest = entries_.find(order_.front());
      order_.pop_front();
      entries_.erase(oldest);
    }
    const auto added = entries_.emplace(std::string(key), value).first;
    order_.emplace_back(added->first);
    key_bytes_ += key.size();
    return value;
  }

  [[nodiscard]] std::size_t size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }
  [[nodiscard]] std::size_t keyBytes() const {
    std::lock_guard lock(mutex_);
    return key_bytes_;
  }
  [[nodiscard]] std::uint64_t hits() const {
    std::lock_guard lock(mutex_);
    return hits_;
  }
  [[nodiscard]] std::uint64_t misses() const {
    std::lock_guard lock(mutex_);
    return misses_;
  }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  const std::size_t max_entries_;
  const std::size_t max_key_bytes_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const T>, Hash, std::equal_to<>> entries_;
  std::deque<std::string_view> order_;  // the keys of entries_ (stable), oldest first
  std::size_t key_bytes_ = 0;
  std::uint64_t hits_ = 0;
  std::uint64_t misses_ = 0;
};

}  // namespace harness::injector
