#pragma once

// Internal to harness::sim_builtin: reads and writes on untrusted JSON that never throw. A value
// of the wrong JSON type reads as absent (Go's typed decoding would have rejected the request
// before admission; here it is simply left alone).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace harness::sim::builtin_internal {

using nlohmann::json;

// The member `key` of an object, or nullptr (not an object, absent).
inline json* member(json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}
inline const json* member(const json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

// The member when it is an object / an array, else nullptr.
inline json* objectMember(json& object, std::string_view key) {
  json* m = member(object, key);
  return m != nullptr && m->is_object() ? m : nullptr;
}
inline const json* objectMember(const json& object, std::string_view key) {
  const json* m = member(object, key);
  return m != nullptr && m->is_object() ? m : nullptr;
}
inline json* arrayMember(json& object, std::string_view key) {
  json* m = member(object, key);
  return m != nullptr && m->is_array() ? m : nullptr;
}
inline const json* arrayMember(const json& object, std::string_view key) {
  const json* m = member(object, key);
  return m != nullptr && m->is_array() ? m : nullptr;
}

// A string member ("" when absent, null or not a string), as Go reads a string field.
inline std::string stringMember(const json& object, std::string_view key) {
  const json* m = member(object, key);
  return m != nullptr && m->is_string() ? m->get<std::string>() : std::string();
}
// An integer member (nullopt when absent, null or not an integral number).
inline std::optional<std::int64_t> intMember(const json& object, std::string_view key) {
  const json* m = member(object, key);
  if (m == nullptr) return std::nullopt;
  if (m->is_number_integer()) return m->get<std::int64_t>();
  if (m->is_number_unsigned()) {
    auto v = m->get<std::uint64_t>();
    if (v > static_cast<std::uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<std::int64_t>(v);
  }
  if (m->is_number_float()) {
    double d = m->get<double>();
    auto i = static_cast<std::int64_t>(d);
    if (static_cast<double>(i) == d) return i;
  }
  return std::nullopt;
}
// A boolean member (nullopt when absent, null or not a boolean).
inline std::optional<bool> boolMember(const json& object, std::string_view key) {
  const json* m = member(object, key);
  if (m == nullptr || !m->is_boolean()) return std::nullopt;
  return m->get<bool>();
}

// Absent or null: the zero value of a Go pointer, slice or map field.
inline bool isUnset(const json& object, std::string_view key) {
  const json* m = member(object, key);
  return m == nullptr || m->is_null();
}

// Go's `if obj.Field == "" { obj.Field = value }` for a string field; a present non-string is
// left alone.
inline void defaultString(json& object, std::string_view key, std::string_view value) {
  if (!object.is_object()) return;
  json* m = member(object, key);
  if (m == nullptr || m->is_null() || (m->is_string() && m->get_ref<const std::string&>().empty())) {
    object[std::string(key)] = std::string(value);
  }
}
// Go's `if obj.Field == nil { obj.Field = &value }` for a pointer field.
inline void defaultPointer(json& object, std::string_view key, json value) {
  if (!object.is_object()) return;
  if (isUnset(object, key)) object[std::string(key)] = std::move(value);
}
// Go's `if obj.Field == 0 { obj.Field = value }` for an integer field.
inline void defaultInt(json& object, std::string_view key, std::int64_t value) {
  if (!object.is_object()) return;
  json* m = member(object, key);
  if (m == nullptr || m->is_null() || (m->is_number() && *m == 0)) {
    object[std::string(key)] = value;
  }
}

// The object at `key`, created as {} when absent or null; nullptr when another type is there.
inline json* ensureObject(json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  json* m = member(object, key);
  if (m == nullptr || m->is_null()) {
    json& created = object[std::string(key)];
    created = json::object();
    return &created;
  }
  return m->is_object() ? m : nullptr;
}
// The array at `key`, created as [] when absent or null; nullptr when another type is there.
inline json* ensureArray(json& object, std::string_view key) {
  if (!object.is_object()) return nullptr;
  json* m = member(object, key);
  if (m == nullptr || m->is_null()) {
    json& created = object[std::string(key)];
    created = json::array();
    return &created;
  }
  return m->is_array() ? m : nullptr;
}

// Calls f(element) for each element of the array member `key` that is an object.
template <class F>
void forEachObjectIn(json& object, std::string_view key, F&& f) {
  json* a = arrayMember(object, key);
  if (a == nullptr) return;
  for (auto& element : *a) {
    if (element.is_object()) f(element);
  }
}
template <class F>
void forEachObjectIn(const json& object, std::string_view key, F&& f) {
  const json* a = arrayMember(object, key);
  if (a == nullptr) return;
  for (const auto& element : *a) {
    if (element.is_object()) f(element);
  }
}

// A string field of metadata ("" when absent).
inline std::string metadataString(const json& object, std::string_view key) {
  const json* metadata = objectMember(object, "metadata");
  return metadata != nullptr ? stringMember(*metadata, key) : std::string();
}

// "apps/v1" + "Deployment" -> "apps/v1/Deployment"; "v1" + "Pod" -> "v1/Pod".
inline std::string typeKey(const json& object) {
  return stringMember(object, "apiVersion") + "/" + stringMember(object, "kind");
}

}  // namespace harness::sim::builtin_internal
