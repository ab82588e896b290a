#pragma once

// Reading the endpoint definitions of a scenario (YAML converted to JSON): typed fields of one
// object, errors that name the field path ("stub.responses[1].respond.delay: ..."), and unknown
// fields reported rather than ignored, so that a misspelt key never silently changes a test.
// Private to the endpoints module.

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::sim::detail {

// "string", "number", "boolean", "null", "array", "object".
std::string jsonTypeName(const nlohmann::json& value);

// `<path>: <detail>` with code kInvalid and `path` as the field, so that the scenario loader
// locates it without reading the message.
core::Error invalidField(std::string path, std::string detail);

// `<path>: must be <what>, got <type>`.
core::Error typeError(std::string_view path, std::string_view what, const nlohmann::json& value);

class ObjectFields {
 public:
  // Fails unless `value` is an object.
  static core::Result<ObjectFields> open(const nlohmann::json& value, std::string path);

  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] std::string pathOf(std::string_view key) const;

  // The raw value of `key` (null included), or nullptr when absent. Marks the key as known.
  const nlohmann::json* get(std::string_view key);
  // Typed accessors: absent or null -> nullopt; another type -> an error naming the field.
  core::Result<std::optional<std::string>> string(std::string_view key);
  core::Result<std::optional<bool>> boolean(std::string_view key);
  core::Result<std::optional<std::int64_t>> integer(std::string_view key);
  core::Result<std::optional<std::vector<std::string>>> stringList(std::string_view key);

  // The keys present (in document order of nlohmann, i.e. sorted) that were not asked for.
  [[nodiscard]] std::vector<std::string> unknownKeys() const;
  // `<path>: unknown field "<key>"` for the first unknown key.
  [[nodiscard]] core::Result<void> rejectUnknown() const;
  // The keys present, whatever their value.
  [[nodiscard]] std::vector<std::string> presentKeys() const;

 private:
  ObjectFields(const nlohmann::json& object, std::string path)
      : object_(&object), path_(std::move(path)) {}

  const nlohmann::json* object_;
  std::string path_;
  std::set<std::string, std::less<>> known_;
};

}  // namespace harness::sim::detail
