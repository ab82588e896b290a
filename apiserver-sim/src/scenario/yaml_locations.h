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
  // Indexes document `document` (0-based, counting non-empty documents) of `text`, read by
  // libfyaml with yaml-cpp's node positions (a node starts at its anchor or tag; an empty node
  // where the next token starts). Never throws: text that neither libfyaml nor yaml-cpp can read
  // gives an empty index. Bounded in size (kMaxIndexedValues, kMaxDepth).
  static LocationIndex build(std::string_view text, std::size_t document = 0);
  // The same index read by yaml-cpp: build's fallback, and the reference its test compares.
  static LocationIndex buildWithYamlCpp(std::string_view text, std::size_t document = 0);

  [[nodiscard]] const std::unordered_map<std::string, Position>& values() const {
    return values_;
  }
  [[nodiscard]] const std::unordered_map<std::string, Position>& keys() const { return keys_; }

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
