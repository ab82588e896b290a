#pragma once

// Type checks worded like Go's encoding/json UnmarshalTypeError, as surfaced by
// sigs.k8s.io/yaml.Unmarshal ("error unmarshaling JSON: while decoding JSON: json: cannot
// unmarshal string into Go struct field Pod.spec.hostNetwork of type bool").

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::injector::linkerd::detail {

// A decoding position: the Go type of the innermost struct and the JSON field path from the
// decoded root (Go >= 1.20 reports the full path).
struct GoField {
  std::string go_struct;
  std::string path;

  [[nodiscard]] GoField child(std::string_view go_struct_name, std::string_view key) const {
    return {std::string(go_struct_name),
            path.empty() ? std::string(key) : path + "." + std::string(key)};
  }
};

core::Error goTypeError(const nlohmann::json& value, const GoField& field,
                        std::string_view go_type);

// Each check succeeds for null (Go leaves the field unset) and for the right JSON type.
core::Result<void> checkString(const nlohmann::json& value, const GoField& field);
core::Result<void> checkBool(const nlohmann::json& value, const GoField& field);
core::Result<void> checkObject(const nlohmann::json& value, const GoField& field,
                               std::string_view go_type);
core::Result<void> checkArray(const nlohmann::json& value, const GoField& field,
                              std::string_view go_type);
// An integer that fits the Go type: "int32", "int64" or "uint64".
core::Result<void> checkInteger(const nlohmann::json& value, const GoField& field,
                                std::string_view go_type);
core::Result<void> checkFloat(const nlohmann::json& value, const GoField& field);
// map[string]string: an object whose values are strings (or null).
core::Result<void> checkStringMap(const nlohmann::json& value, const GoField& field);
// intstr.IntOrString: a string or an int32.
core::Result<void> checkIntOrString(const nlohmann::json& value, const GoField& field);

// sigs.k8s.io/yaml convertToJSONableObject, for a YAML scalar whose Go target is a string: a
// number or a boolean becomes its string (strconv.FormatInt / FormatUint, FormatFloat(v, 'g',
// -1, 32), "true" / "false"); anything else is left as it is.
void coerceScalarToString(nlohmann::json& value);

}  // namespace harness::injector::linkerd::detail
