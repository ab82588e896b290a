#pragma once

// The injection templates' rendered text parsed as YAML, kept by that text. Istio renders each
// template for every pod and parses the result (inject.go RunTemplate: runTemplate, then
// yaml.Unmarshal in applyOverlayYAML / the strategic merge); the parse was a third of an
// injection. The text depends on the pod only through what the template reads (its labels,
// annotations, containers and ports, its owner's name), so the replicas of a workload render the
// same text, and parsing it again gives the same document: parseYaml is a pure function of the
// text. Bounded in entries and in the bytes of text kept; the oldest entry goes first. Errors
// are not kept. Thread-safe.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/injector/text_keyed_cache.h"

namespace harness::injector::istio {

class OverlayCache {
 public:
  static constexpr std::size_t kDefaultMaxEntries = 64;
  static constexpr std::size_t kDefaultMaxTextBytes = std::size_t{2} * 1024 * 1024;

  explicit OverlayCache(std::size_t max_entries = kDefaultMaxEntries,
                        std::size_t max_text_bytes = kDefaultMaxTextBytes);

  // core::parseYaml(text); the same document for the same text.
  core::Result<std::shared_ptr<const nlohmann::json>> parse(std::string_view text);

  [[nodiscard]] std::size_t size() const { return cache_.size(); }
  [[nodiscard]] std::size_t textBytes() const { return cache_.keyBytes(); }
  [[nodiscard]] std::uint64_t hits() const { return cache_.hits(); }
  [[nodiscard]] std::uint64_t misses() const { return cache_.misses(); }

  // The one the injector uses.
  static OverlayCache& shared();

 private:
  TextKeyedCache<nlohmann::json> cache_;
};

}  // namespace harness::injector::istio
