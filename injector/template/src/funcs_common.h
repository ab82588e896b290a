#pragma once

// Internal helpers shared by the Sprig and Istio function maps.

#include <cctype>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/gotemplate/go_fmt.h"
#include "harness/gotemplate/value.h"

namespace harness::gotemplate::detail {

// The string inside a Value already converted to a Go string parameter.
inline const std::string& str(const Value& v) { return v.json().get_ref<const std::string&>(); }

// Sprig's strval: strings as they are, anything else as fmt %v ("<nil>" for nil).
inline std::string strval(const Value& v) {
  if (!v.valid() || v.isNil()) return "<nil>";
  if (v.kind() == GoKind::kString) return v.json().get<std::string>();
  return goPrintValue(v);
}

// reflect.Kind's name.
inline std::string kindName(const Value& v) {
  switch (v.kind()) {
    case GoKind::kInvalid:
    case GoKind::kNil: return "invalid";
    case GoKind::kBool: return "bool";
    case GoKind::kInt: return "int";
    case GoKind::kUint: return "uint64";
    case GoKind::kFloat: return "float64";
    case GoKind::kString: return "string";
    case GoKind::kMap: return "map";
    case GoKind::kSlice: return "slice";
  }
  return "invalid";
}

// strings.ToLower for ASCII; other bytes are kept as they are.
inline std::string asciiLower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// The member of a JSON object standing for a Go struct field: the JSON name (first letter
// lower-cased), the Go name itself, or a case-insensitive match.
inline const nlohmann::json* structMember(const nlohmann::json& obj, std::string_view go_name) {
  if (!obj.is_object() || go_name.empty()) return nullptr;
  std::string json_name(go_name);
  json_name[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(json_name[0])));
  if (auto it = obj.find(json_name); it != obj.end()) return &*it;
  if (auto it = obj.find(go_name); it != obj.end()) return &*it;
  for (auto it = obj.begin(); it != obj.end(); ++it) {
    const std::string& k = it.key();
    if (k.size() != go_name.size()) continue;
    bool same = true;
    for (std::size_t i = 0; i < k.size() && same; ++i) {
      same = std::tolower(static_cast<unsigned char>(k[i])) ==
             std::tolower(static_cast<unsigned char>(go_name[i]));
    }
    if (same) return &it.value();
  }
  return nullptr;
}

}  // namespace harness::gotemplate::detail
