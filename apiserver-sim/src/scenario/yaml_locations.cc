#include "yaml_locations.h"

#include <exception>
#include <string>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace harness::sim::detail {
namespace {

// Aliases share nodes, so a small document can name millions of paths; stop indexing there.
constexpr std::size_t kMaxIndexedValues = 200'000;
constexpr int kMaxDepth = 200;

bool isPlainKey(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '$';
    if (!ok) return false;
  }
  return true;
}

Position positionOf(const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return {};
  return {mark.line + 1, mark.column + 1};
}

}  // namespace

std::string childPath(const std::string& parent, std::string_view key) {
  std::string path = parent;
  if (isPlainKey(key)) {
    if (!path.empty()) path += '.';
    path.append(key);
  } else {
    path += '[';
    path.append(key);
    path += ']';
  }
  return path;
}

std::string indexPath(const std::string& parent, std::size_t index) {
  std::string path = parent;
  path += '[';
  path += std::to_string(index);
  path += ']';
  return path;
}

std::string parentPath(const std::string& path) {
  if (path.empty()) return {};
  if (path.back() == ']') {
    const auto open = path.rfind('[');
    if (open == std::string::npos) return {};
    return path.substr(0, open);
  }
  const auto dot = path.find_last_of(".]");
  if (dot == std::string::npos) return {};
  if (path[dot] == ']') return path.substr(0, dot + 1);
  return path.substr(0, dot);
}

struct LocationIndexBuilder {
  LocationIndex& index;

  void walk(const YAML::Node& node, const std::string& path, int depth) {
    if (index.values_.size() >= kMaxIndexedValues || depth > kMaxDepth) return;
    index.values_.emplace(path, positionOf(node));
    if (node.IsMap()) {
      for (const auto& entry : node) {
        if (!entry.first.IsScalar()) continue;
        const std::string child = childPath(path, entry.first.Scalar());
        index.keys_.emplace(child, positionOf(entry.first));
        if (entry.first.Scalar() == "<<") continue;  // merge keys: positions of the anchor
        walk(entry.second, child, depth + 1);
      }
    } else if (node.IsSequence()) {
      std::size_t i = 0;
      for (const auto& item : node) walk(item, indexPath(path, i++), depth + 1);
    }
  }
};

LocationIndex LocationIndex::build(std::string_view text, std::size_t document) {
  // Callers build the index only for text core::parseYamlDocuments accepted (its nesting and
  // aliasing limits); the walk is bounded again by kMaxDepth and kMaxIndexedValues.
  LocationIndex index;
  try {
    const std::vector<YAML::Node> documents = YAML::LoadAll(std::string(text));
    std::size_t seen = 0;
    for (const auto& node : documents) {
      if (!node.IsDefined() || node.IsNull()) continue;
      if (seen++ != document) continue;
      LocationIndexBuilder{index}.walk(node, "", 0);
      break;
    }
  } catch (const std::exception&) {
    // Positions are a convenience: the values' own parser reports syntax errors.
  }
  return index;
}

Position LocationIndex::value(const std::string& path) const {
  std::string current = path;
  while (true) {
    if (auto it = values_.find(current); it != values_.end() && it->second.line > 0) {
      return it->second;
    }
    if (current.empty()) return {};
    current = parentPath(current);
  }
}

Position LocationIndex::key(const std::string& path) const {
  if (auto it = keys_.find(path); it != keys_.end() && it->second.line > 0) return it->second;
  return value(path);
}

}  // namespace harness::sim::detail
