#include "harness/injector/istio/overlay_cache.h"

#include "harness/core/yaml.h"

namespace harness::injector::istio {

OverlayCache::OverlayCache(std::size_t max_entries, std::size_t max_text_bytes)
    : max_entries_(max_entries), max_text_bytes_(max_text_bytes) {}

core::Result<std::shared_ptr<const nlohmann::json>> OverlayCache::parse(std::string_view text) {
  {
    std::lock_guard lock(mutex_);
    if (const auto found = entries_.find(text); found != entries_.end()) {
      ++hits_;
      return found->second;
    }
    ++misses_;
  }
  // Parsed without the lock: another thread may parse the same text meanwhile; the first to
  // finish keeps its document.
  auto parsed = core::parseYaml(text);
  if (!parsed) return parsed.error();
  auto document = std::make_shared<const nlohmann::json>(std::move(*parsed));
  if (max_entries_ == 0 || text.size() > max_text_bytes_) return document;
  std::lock_guard lock(mutex_);
  if (entries_.find(text) != entries_.end()) return document;
  while (!order_.empty() &&
         (entries_.size() >= max_entries_ || text_bytes_ + text.size() > max_text_bytes_)) {
    text_bytes_ -= order_.front().size();
    const auto oldest = entries_.find(order_.front());
    order_.pop_front();
    entries_.erase(oldest);
  }
  const auto added = entries_.emplace(std::string(text), document).first;
  order_.emplace_back(added->first);
  text_bytes_ += text.size();
  return document;
}

std::size_t OverlayCache::size() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

std::size_t OverlayCache::textBytes() const {
  std::lock_guard lock(mutex_);
  return text_bytes_;
}

std::uint64_t OverlayCache::hits() const {
  std::lock_guard lock(mutex_);
  return hits_;
}

std::uint64_t OverlayCache::misses() const {
  std::lock_guard lock(mutex_);
  return misses_;
}

OverlayCache& OverlayCache::shared() {
  static OverlayCache cache;
  return cache;
}

}  // namespace harness::injector::istio
