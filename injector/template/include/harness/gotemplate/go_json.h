#pragma once

// Go's encoding/json for the values templates handle (golang/go src/encoding/json/encode.go,
// indent.go, decode.go): the exact bytes json.Marshal / json.MarshalIndent write for
// map[string]interface{}, []interface{}, string, float64, int, bool and nil, and what
// json.Unmarshal into an interface{} produces.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::gotemplate {

// Nesting deeper than this is refused by the decoders here (Go allows 10000; a smaller bound
// keeps recursive C++ walks far from the stack limit).
inline constexpr int kMaxJsonDepth = 1000;

struct GoJsonOptions {
  bool escape_html = true;  // json.Marshal escapes <, >, & as \u003c \u003e \u0026
  std::string indent;       // json.MarshalIndent(v, "", indent) when non-empty
};

// json.Marshal: map keys sorted, floats like Go (1e+21 -> 1e+21, 1e-7, 0.000001, 100),
// strings escaped like Go (\u2028, \ufffd for invalid UTF-8). NaN and infinities are Go's
// "json: unsupported value: NaN" errors.
core::Result<std::string> goJsonMarshal(const nlohmann::json& v, const GoJsonOptions& options = {});

// json.Unmarshal(text, &interface{}): every number becomes a float64.
core::Result<nlohmann::json> goJsonUnmarshal(std::string_view text);

// The JSON nlohmann would hold after a Go json round trip into interface{}: every number a
// float64. Useful to build template data shaped like Istio's .Values (decoded from JSON/YAML,
// so 15020 is a float64 and compares unequal to the int literal 15020, as in Go).
nlohmann::json goJsonNumbers(const nlohmann::json& v);

// The depth of nesting of a JSON value (0 for a scalar), computed without recursion.
int jsonDepth(const nlohmann::json& v);

}  // namespace harness::gotemplate
