#pragma once

// Go's encoding/json, the parts shared by every decoder and encoder here that words its errors or
// writes its numbers like Go.
//
// The word Go's encoding/json uses for a JSON value in an UnmarshalTypeError (Go
// src/encoding/json/decode.go: d.literalStore, d.array, d.object set UnmarshalTypeError.Value to
// "string", "bool", "number", "array" or "object"; a number that does not fit the integer type
// it is stored into is named with its literal, "number 1.5" or "number 99999999999"). Shared by
// every decoder here that words its errors like Go (core's typed decoding, the Istio profile's
// pod decoding, audit events).

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace harness::go {

// "string", "bool", "number", "array", "object" or "null"; with `number_literal`, a number is
// "number " followed by its JSON text, as decode.go words a number an integer cannot hold.
// For nlohmann::json and nlohmann::ordered_json.
template <class Json>
std::string jsonValueKind(const Json& value, bool number_literal = false) {
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

// The error json.Valid / json.Unmarshal reports for `text`, "" when `text` is valid JSON for Go:
// "invalid character 'x' looking for beginning of value", "unexpected end of JSON input", ...
// (scanner.go checkValid; Go validates the whole input before decoding, so a syntax error always
// wins over a type error).
std::string jsonSyntaxError(std::string_view text);

// How json.Marshal writes a string (encode.go appendString): '"' and '\\' escaped, \b \f \n \r \t
// in short form, other bytes below 0x20 as \u00XX, with `escape_html` '<' '>' '&' as \u003c
// \u003e \u0026, U+2028 and U+2029 as \u2028 \u2029, each byte of invalid UTF-8 (overlong forms
// and surrogates too) as \ufffd, everything else as it is.
void appendJsonString(std::string& out, std::string_view s, bool escape_html);

// json.Marshal(s) for a string: appendJsonString with HTML escaping, as Marshal's default.
std::string marshalString(std::string_view s);

// How json.Marshal writes a finite float64 (encode.go floatEncoder): "1", "0.5", "1e+21",
// "1e-7". Callers decide what a NaN or an infinity becomes (Marshal refuses them).
std::string jsonFloat(double f);

}  // namespace harness::go
