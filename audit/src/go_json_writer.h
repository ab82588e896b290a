#pragma once

// Internal to harness::audit: JSON text exactly as Go's encoding/json writes it with HTML escaping
// on (json.Marshal, and json.Encoder as kube-apiserver's serializer uses it). Followed: Go
// src/encoding/json/encode.go (appendString, floatEncoder) and indent.go (appendCompact).
//   * strings: `"` `\` as \" \\; \b \f \n \r \t short forms (Go 1.22+); other bytes < 0x20 as
//     \u00XX; `<` `>` `&` as \u003c \u003e \u0026; U+2028/U+2029 as \u2028/\u2029; each byte of
//     invalid UTF-8 as \ufffd; everything else (including DEL and non-ASCII) as is;
//   * floats: shortest round-trip, fixed notation for 1e-6 <= |f| < 1e21 else exponent
//     notation with a 1-2 digit exponent ("1e+21", "1e-7");
//   * objects in the iteration order of the value given (nlohmann::json is sorted by key bytes,
//     like Go map keys; nlohmann::ordered_json keeps struct or document order).

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::audit::go_json {

void appendString(std::string& out, std::string_view s);
void appendFloat(std::string& out, double f);

template <class Json>
void appendValue(std::string& out, const Json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (auto it = v.begin(); it != v.end(); ++it) {
        if (!first) out.push_back(',');
        first = false;
        appendString(out, it.key());
        out.push_back(':');
        appendValue(out, it.value());
      }
      out.push_back('}');
      return;
    }
    case nlohmann::json::value_t::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& item : v) {
        if (!first) out.push_back(',');
        first = false;
        appendValue(out, item);
      }
      out.push_back(']');
      return;
    }
    case nlohmann::json::value_t::string:
      appendString(out, v.template get_ref<const std::string&>());
      return;
    case nlohmann::json::value_t::boolean:
      out += v.template get<bool>() ? "true" : "false";
      return;
    case nlohmann::json::value_t::number_integer:
      out += std::to_string(v.template get<std::int64_t>());
      return;
    case nlohmann::json::value_t::number_unsigned:
      out += std::to_string(v.template get<std::uint64_t>());
      return;
    case nlohmann::json::value_t::number_float:
      appendFloat(out, v.template get<double>());
      return;
    default:  // null, discarded, binary
      out += "null";
      return;
  }
}

template <class Json>
std::string encode(const Json& v) {
  std::string out;
  appendValue(out, v);
  return out;
}

// json.Compact with HTML escaping, as encoding/json writes a json.RawMessage: insignificant
// whitespace removed, `<` `>` `&` U+2028 U+2029 escaped, everything else byte for byte. The text
// must already be valid JSON (the caller parses it first).
std::string compact(std::string_view valid_json);

}  // namespace harness::audit::go_json
