#include "harness/injector/istio/overlay_cache.h"

#include "harness/core/yaml.h"

namespace harness::injector::istio {

OverlayCache::OverlayCache(std::size_t max_entries, std::size_t max_text_bytes)
    : cache_(max_entries, max_text_bytes) {}

core::Result<std::shared_ptr<const nlohmann::json>> OverlayCache::parse(std::string_view text) {
  return cache_.get(text, [text] { return core::parseYaml(text); });
}

OverlayCache& OverlayCache::shared() {
  static OverlayCache cache;
  return cache;
}

}  // namespace harness::injector::istio
