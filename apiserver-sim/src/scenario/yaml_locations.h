#pragma once

// Internal to the scenario module: where each value of a YAML document sits (line and column),
// keyed by the field path the loader uses in its messages ("spec.steps[2].expect.code"). The
// values themselves come from core::parseYamlDocuments (Kubernetes scalar rules); this index
// only remembers positions, so that a loading error can name the line of the field.

#include <cstddef>
#include <string>
#include <string_view>
#include <unordered_map>

namespace harness::sim::detail {

struct Position {
  int line = 0;  // 1-based; 0 = unknown
  int column = 0;
};

// "spec" + "steps" -> "spec.steps"; keys that are not plain identifiers are bracketed like
// apimachinery's field.Path.Key: "callCounts" + "a.example.com" -> "callCounts[a.example.com]".
std::string childPath(const std::string& parent, std::string_view key);
// "spec.steps" + 2 -> "spec.steps[2]".
std::string indexPath(const std::string& parent, std::size_t index);
// The path one level up ("" for a top-level key).
std::string parentPath(const std::string& path);

class LocationIndex {
 public:
  // Indexes document `document` (0-based, counting non-empty documents) of `text`. Never throws:
  // text that yaml-cpp cannot read gives an empty index. Bounded in size (aliases are not
  // followed).
  static LocationIndex build(std::string_view text, std::size_t document = 0);

  // Position of the value at `path`, else of its nearest indexed ancestor.
  [[nodiscard]] Position value(const std::string& path) const;
  // Position of the key naming `path` (for unknown fields), else value(path).
  [[nodiscard]] Position key(const std::string& path) const;

 private:
  std::unordered_map<std::string, Position> values_;
  std::unordered_map<std::string, Position> keys_;
  friend struct LocationIndexBuilder;
};

}  // namespace harness::sim::detail
