#pragma once

// JSON Pointer (RFC 6901): parsing, escaping and resolution against nlohmann::json.
//
// This is the strict RFC grammar, used to build and read pointers in our own code and to name
// locations in error messages. The JSON Patch engine (json_patch.h) deliberately does NOT use it
// for the paths it applies: kube-apiserver's engine (evanphx/json-patch v4) splits paths its own,
// more lenient way, and that leniency is part of the behaviour we reproduce there.

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::core {

// "~" -> "~0", "/" -> "~1" (RFC 6901 §3).
std::string escapePointerToken(std::string_view token);

// "~1" -> "/", "~0" -> "~"; any other "~" is an error (RFC 6901 §3/§4).
Result<std::string> unescapePointerToken(std::string_view token);

// RFC 6901 §4 array index: "0" or a digit 1-9 followed by digits (no sign, no leading zero).
// "-" is not an index here; see JsonPointer::kAppendToken.
Result<std::size_t> parseArrayIndex(std::string_view token);

class JsonPointer {
 public:
  // The token RFC 6901 reserves for "the (nonexistent) member after the last array element".
  static constexpr std::string_view kAppendToken = "-";

  JsonPointer() = default;  // the root pointer ""

  // Parses "" or "/tok/tok...". Errors name the pointer and what is wrong with it.
  static Result<JsonPointer> parse(std::string_view text);
  // From unescaped reference tokens.
  static JsonPointer fromTokens(std::vector<std::string> tokens);

  [[nodiscard]] const std::vector<std::string>& tokens() const { return tokens_; }
  [[nodiscard]] bool isRoot() const { return tokens_.empty(); }
  [[nodiscard]] std::size_t size() const { return tokens_.size(); }
  // The last token; empty for the root.
  [[nodiscard]] std::string_view back() const;

  // The escaped textual form ("" for the root).
  [[nodiscard]] std::string toString() const;

  [[nodiscard]] JsonPointer child(std::string_view token) const;
  [[nodiscard]] JsonPointer child(std::size_t index) const;
  // The pointer without its last token; the root's parent is the root.
  [[nodiscard]] JsonPointer parent() const;
  // True when `this` is `other` or one of its ancestors.
  [[nodiscard]] bool isPrefixOf(const JsonPointer& other) const;

  friend bool operator==(const JsonPointer& a, const JsonPointer& b) {
    return a.tokens_ == b.tokens_;
  }

 private:
  explicit JsonPointer(std::vector<std::string> tokens) : tokens_(std::move(tokens)) {}
  std::vector<std::string> tokens_;
};

// Resolves `pointer` against `doc` (RFC 6901 §4). Errors say which prefix failed and why, e.g.
// `json pointer "/spec/containers/3": index 3 is out of range for the array at
// "/spec/containers" (size 2)`.
Result<const nlohmann::json*> resolvePointer(const nlohmann::json& doc, const JsonPointer& pointer);
Result<nlohmann::json*> resolvePointer(nlohmann::json& doc, const JsonPointer& pointer);

// Convenience: parses then resolves.
Result<const nlohmann::json*> resolvePointer(const nlohmann::json& doc, std::string_view pointer);

}  // namespace harness::core
