#pragma once

// The word Go's encoding/json uses for a JSON value in an UnmarshalTypeError (Go
// src/encoding/json/decode.go: d.literalStore, d.array, d.object set UnmarshalTypeError.Value to
// "string", "bool", "number", "array" or "object"; a number that does not fit the integer type
// it is stored into is named with its literal, "number 1.5" or "number 99999999999"). Shared by
// every decoder here that words its errors like Go (core's typed decoding, the Istio profile's
// pod decoding, audit events).

#include <string>

#include <nlohmann/json.hpp>

namespace harness::core {

// "string", "bool", "number", "array", "object" or "null"; with `number_literal`, a number is
// "number " followed by its JSON text, as decode.go words a number an integer cannot hold.
// For nlohmann::json and nlohmann::ordered_json.
template <class Json>
std::string goJsonValueKind(const Json& value, bool number_literal = false) {
  switch (value.type()) {
    case Json::value_t::string:
      return "string";
    case Json::value_t::boolean:
      return "bool";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return number_literal ? "number " + value.dump() : "number";
    case Json::value_t::array:
      return "array";
    case Json::value_t::object:
      return "object";
    default:
      return "null";
  }
}

}  // namespace harness::core
