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
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::injector::istio {

class OverlayCache {
 public:
  static constexpr std::size_t kDefaultMaxEntries = 64;
  static constexpr std::size_t kDefaultMaxTextBytes = 2 * 1024 * 1024;

  explicit OverlayCache(std::size_t max_entries = kDefaultMaxEntries,
                        std::size_t max_text_bytes = kDefaultMaxTextBytes);

  // core::parseYaml(text); the same document for the same text.
  core::Result<std::shared_ptr<const nlohmann::json>> parse(std::string_view text);

  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] std::size_t textBytes() const;
  [[nodiscard]] std::uint64_t hits() const;
  [[nodiscard]] std::uint64_t misses() const;

  // The one the injector uses.
  static OverlayCache& shared();

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };

  const std::size_t max_entries_;
  const std::size_t max_text_bytes_;
  mutable std::mutex mutex_;
  std::unordered_map<std::string, std::shared_ptr<const nlohmann::json>, Hash, std::equal_to<>>
      entries_;
  std::deque<std::string_view> order_;  // the keys of entries_ (stable), oldest first
  std::size_t text_bytes_ = 0;
  std::uint64_t hits_ = 0;
  std::uint64_t misses_ = 0;
};

}  // namespace harness::injector::istio
