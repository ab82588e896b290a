#pragma once

// Internal to harness::core (not installed): decoding JSON into typed structs with the semantics
// of Go's encoding/json, which the apiserver uses through sigs.k8s.io/json (a fork of it):
//   * JSON null leaves the field at its zero value (pointers stay nil); unknown keys are ignored;
//   * a value of the wrong JSON type is an UnmarshalTypeError whose text is
//     "json: cannot unmarshal <value> into Go struct field <Struct>.<path> of type <type>"
//     (Go src/encoding/json/decode.go: UnmarshalTypeError.Error, addErrorContext), where <Struct>
//     is the innermost Go struct holding the field and <path> the dotted JSON field names from the
//     document root, without array indices;
//   * []byte is base64 (StdEncoding) in a JSON string.
// Go reports the first error in document order; we report the first one in struct field order.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/json.h"
#include "harness/core/result.h"
#include "harness/go/base64.h"
#include "harness/go/json.h"

namespace harness::core::go_json {

inline Error typeErrorWithValue(std::string_view value, std::string_view struct_name,
                                std::string_view path, std::string_view go_type) {
  std::string text = "json: cannot unmarshal " + std::string(value);
  if (struct_name.empty() && path.empty()) {
    text += " into Go value of type " + std::string(go_type);
  } else {
    text += " into Go struct field " + std::string(struct_name) + "." + std::string(path) +
            " of type " + std::string(go_type);
  }
  return Error{std::move(text)};
}

inline Error typeError(const nlohmann::json& v, std::string_view struct_name, std::string_view path,
                       std::string_view go_type) {
  return typeErrorWithValue(go::jsonValueKind(v), struct_name, path, go_type);
}

// Reads the fields of one JSON object that maps to one Go struct. Keeps the first error.
class Reader {
 public:
  // `path` is the dotted JSON path of `object` itself ("" at the document root).
  Reader(const nlohmann::json& object, std::string struct_name, std::string path)
      : object_(object), struct_name_(std::move(struct_name)), path_(std::move(path)) {}

  [[nodiscard]] bool ok() const { return !error_.has_value(); }
  [[nodiscard]] const Error& error() const { return error_.value(); }  // only after !ok()
  void fail(Error e) {
    if (!error_) error_ = std::move(e);
  }
  [[nodiscard]] const std::string& path() const { return path_; }

  [[nodiscard]] std::string fieldPath(std::string_view key) const {
    return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
  }

  // The value under `key`, or nullptr when absent or JSON null.
  [[nodiscard]] const nlohmann::json* find(std::string_view key) const {
    const auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  void mismatch(const nlohmann::json& v, std::string_view key, std::string_view go_type) {
    fail(typeError(v, struct_name_, fieldPath(key), go_type));
  }

  void readString(std::string_view key, std::string& out, std::string_view go_type = "string") {
    if (const auto* v = find(key)) {
      if (v->is_string()) {
        out = v->get<std::string>();
      } else {
        mismatch(*v, key, go_type);
      }
    }
  }

  void readOptionalString(std::string_view key, std::optional<std::string>& out,
                          std::string_view go_type = "string") {
    out.reset();
    if (const auto* v = find(key)) {
      if (v->is_string()) {
        out = v->get<std::string>();
      } else {
        mismatch(*v, key, go_type);
      }
    }
  }

  void readBool(std::string_view key, bool& out) {
    if (const auto* v = find(key)) {
      if (v->is_boolean()) {
        out = v->get<bool>();
      } else {
        mismatch(*v, key, "bool");
      }
    }
  }

  void readOptionalBool(std::string_view key, std::optional<bool>& out) {
    out.reset();
    if (const auto* v = find(key)) {
      if (v->is_boolean()) {
        out = v->get<bool>();
      } else {
        mismatch(*v, key, "bool");
      }
    }
  }

  void readInt32(std::string_view key, std::int32_t& out) {
    std::optional<std::int32_t> value;
    readOptionalInt32(key, value);
    if (value) out = *value;
  }

  void readOptionalInt32(std::string_view key, std::optional<std::int32_t>& out) {
    out.reset();
    const auto* v = find(key);
    if (v == nullptr) return;
    if (const auto n = int32Of(*v)) {
      out = *n;
      return;
    }
    if (v->is_number()) {
      // Fractional or out of range: Go names the literal ("number 1.5").
      fail(typeErrorWithValue("number " + v->dump(), struct_name_, fieldPath(key), "int32"));
    } else {
      mismatch(*v, key, "int32");
    }
  }

  void readStringList(std::string_view key, std::vector<std::string>& out,
                      std::string_view list_type = "[]string",
                      std::string_view element_type = "string") {
    out.clear();
    const auto* v = find(key);
    if (v == nullptr) return;
    if (!v->is_array()) {
      mismatch(*v, key, list_type);
      return;
    }
    for (const auto& item : *v) {
      if (item.is_string()) {
        out.push_back(item.get<std::string>());
      } else if (item.is_null()) {
        out.emplace_back();  // null leaves the element's zero value
      } else {
        mismatch(item, key, element_type);
        return;
      }
    }
  }

  void readStringMap(std::string_view key, std::map<std::string, std::string>& out,
                     std::string_view map_type = "map[string]string") {
    out.clear();
    const auto* v = find(key);
    if (v == nullptr) return;
    if (!v->is_object()) {
      mismatch(*v, key, map_type);
      return;
    }
    for (const auto& [k, item] : v->items()) {
      if (item.is_string()) {
        out[k] = item.get<std::string>();
      } else if (item.is_null()) {
        out[k];
      } else {
        mismatch(item, key, "string");
        return;
      }
    }
  }

  // []byte: a base64 string (or, as encoding/json also accepts, an array of numbers 0..255).
  void readBytes(std::string_view key, std::string& out) {
    out.clear();
    const auto* v = find(key);
    if (v == nullptr) return;
    if (v->is_string()) {
      auto decoded = go::base64Decode(v->get_ref<const std::string&>());
      if (decoded.ok()) {
        out = std::move(decoded).value();
      } else {
        fail(decoded.error());  // Go reports the bare CorruptInputError text
      }
      return;
    }
    if (!v->is_array()) {
      mismatch(*v, key, "[]uint8");
      return;
    }
    for (const auto& item : *v) {
      const auto n = int32Of(item);
      if (n && *n >= 0 && *n <= 255) {
        out.push_back(static_cast<char>(*n));
      } else if (item.is_number()) {
        fail(typeErrorWithValue("number " + item.dump(), struct_name_, fieldPath(key), "uint8"));
        return;
      } else if (item.is_null()) {
        out.push_back('\0');
      } else {
        mismatch(item, key, "uint8");
        return;
      }
    }
  }

  // A nested struct (or map): the object under `key`, nullptr when absent/null or mistyped (the
  // mismatch is recorded).
  const nlohmann::json* readObject(std::string_view key, std::string_view go_type) {
    const auto* v = find(key);
    if (v == nullptr) return nullptr;
    if (!v->is_object()) {
      mismatch(*v, key, go_type);
      return nullptr;
    }
    return v;
  }

  // A slice: the array under `key`, nullptr when absent/null or mistyped (recorded).
  const nlohmann::json* readArray(std::string_view key, std::string_view go_type) {
    const auto* v = find(key);
    if (v == nullptr) return nullptr;
    if (!v->is_array()) {
      mismatch(*v, key, go_type);
      return nullptr;
    }
    return v;
  }

  // Checks that each element of the array under `key` is an object (or null), reporting the Go
  // element type otherwise. Returns false after recording a mismatch.
  bool checkObjectElements(const nlohmann::json& array, std::string_view key,
                           std::string_view element_type) {
    for (const auto& item : array) {
      if (!item.is_object() && !item.is_null()) {
        mismatch(item, key, element_type);
        return false;
      }
    }
    return true;
  }

 private:
  static std::optional<std::int32_t> int32Of(const nlohmann::json& v) {
    if (v.is_number_integer()) {
      const auto n = v.get<std::int64_t>();
      if (n >= INT32_MIN && n <= INT32_MAX) return static_cast<std::int32_t>(n);
    } else if (v.is_number_unsigned()) {
      const auto n = v.get<std::uint64_t>();
      if (n <= static_cast<std::uint64_t>(INT32_MAX)) return static_cast<std::int32_t>(n);
    }
    return std::nullopt;
  }

  const nlohmann::json& object_;
  std::string struct_name_;
  std::string path_;
  std::optional<Error> error_;
};

// Parses JSON text; syntax errors name line and column, nesting deeper than kMaxJsonDepth is
// encoding/json's "invalid character '[' exceeded max depth".
inline Result<nlohmann::json> parseJsonText(std::string_view text) {
  auto parsed = parseJson(text);
  if (!parsed) return Error{"invalid JSON: " + parsed.error().message};
  return parsed;
}

}  // namespace harness::core::go_json
