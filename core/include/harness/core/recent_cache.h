#pragma once

// A bounded, thread-safe map of the values most recently used: what a process keeps of the things
// OpenSSL makes at great cost (TLS contexts, certificate stores, issued certificates, caBundle
// verdicts) so that scenario after scenario, and client after client, reuse them. When full, the
// entry used least recently goes. Values are handed out by copy (a shared_ptr, a small struct), so
// an eviction never changes what a caller holds.
//
// A value is made outside the lock (it may take milliseconds): two threads that miss the same key
// at once both make it, and the second insert keeps the newer one. A function-local static is the
// form the project uses for a process-wide one:
//   core::RecentCache<std::string, Verdict>& verdicts() {
//     static core::RecentCache<std::string, Verdict> cache(64);
//     return cache;
//   }

#include <cstddef>
#include <functional>
#include <list>
#include <map>
#include <mutex>
#include <optional>
#include <utility>

namespace harness::core {

template <typename Key, typename Value>
class RecentCache {
 public:
  explicit RecentCache(std::size_t capacity) : capacity_(capacity == 0 ? 1 : capacity) {}
  RecentCache(const RecentCache&) = delete;
  RecentCache& operator=(const RecentCache&) = delete;

  // The value kept for `key`, now the most recently used; nullopt when none is kept.
  [[nodiscard]] std::optional<Value> find(const Key& key) {
    std::lock_guard lock(mutex_);
    const auto it = index_.find(key);
    if (it == index_.end()) return std::nullopt;
    entries_.splice(entries_.begin(), entries_, it->second);
    return it->second->second;
  }

  // Keeps `value` for `key` (replacing what was kept), evicting the least recently used entry
  // when the cache is full.
  void insert(const Key& key, Value value) {
    std::lock_guard lock(mutex_);
    if (const auto it = index_.find(key); it != index_.end()) {
      it->second->second = std::move(value);
      entries_.splice(entries_.begin(), entries_, it->second);
      return;
    }
    if (entries_.size() >= capacity_) {
      index_.erase(entries_.back().first);
      entries_.pop_back();
    }
    entries_.emplace_front(key, std::move(value));
    index_.emplace(key, entries_.begin());
  }

  // The value kept for `key`, or `make()`'s, kept when `keep(value)` says so (an error is not
  // worth keeping when the next try may succeed). `make` runs without the lock held.
  template <typename Make, typename Keep>
  Value findOrMake(const Key& key, Make&& make, Keep&& keep) {
    if (std::optional<Value> kept = find(key)) return std::move(*kept);
    Value made = std::forward<Make>(make)();
    if (std::forward<Keep>(keep)(made)) insert(key, made);
    return made;
  }
  template <typename Make>
  Value findOrMake(const Key& key, Make&& make) {
    return findOrMake(key, std::forward<Make>(make), [](const Value&) { return true; });
  }

  // Drops every entry whose value `stale(value)` calls stale (a context whose certificate's owner
  // is gone); how many went.
  template <typename Stale>
  std::size_t eraseIf(Stale&& stale) {
    std::lock_guard lock(mutex_);
    std::size_t erased = 0;
    for (auto it = entries_.begin(); it != entries_.end();) {
      if (!stale(std::as_const(it->second))) {
        ++it;
        continue;
      }
      index_.erase(it->first);
      it = entries_.erase(it);
      ++erased;
    }
    return erased;
  }

  [[nodiscard]] std::size_t size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }

 private:
  using Entries = std::list<std::pair<Key, Value>>;  // most recently used first

  const std::size_t capacity_;
  mutable std::mutex mutex_;
  Entries entries_;
  std::map<Key, typename Entries::iterator> index_;
};

}  // namespace harness::core
