#include "go_decode.h"

#include <charconv>
#include <cmath>
#include <limits>

namespace harness::injector::linkerd::detail {

namespace {

constexpr char kPrefix[] = "error unmarshaling JSON: while decoding JSON: ";

std::string describe(const nlohmann::json& v, bool integer_target) {
  switch (v.type()) {
    case nlohmann::json::value_t::string:
      return "string";
    case nlohmann::json::value_t::boolean:
      return "bool";
    case nlohmann::json::value_t::object:
      return "object";
    case nlohmann::json::value_t::array:
      return "array";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      // encoding/json names the literal when a number does not fit an integer field.
      return integer_target ? "number " + v.dump() : "number";
    default:
      return "null";
  }
}

}  // namespace

core::Error goTypeError(const nlohmann::json& value, const GoField& field,
                        std::string_view go_type) {
  const bool integer_target = go_type.find("int") != std::string_view::npos;
  std::string msg =
      std::string(kPrefix) + "json: cannot unmarshal " + describe(value, integer_target) + " into ";
  if (field.path.empty()) {
    msg += "Go value of type " + std::string(go_type);
  } else {
    msg += "Go struct field " + field.go_struct + "." + field.path + " of type " +
           std::string(go_type);
  }
  return core::Error{std::move(msg)};
}

core::Result<void> checkString(const nlohmann::json& value, const GoField& field) {
  if (value.is_null() || value.is_string()) return {};
  return goTypeError(value, field, "string");
}

core::Result<void> checkBool(const nlohmann::json& value, const GoField& field) {
  if (value.is_null() || value.is_boolean()) return {};
  return goTypeError(value, field, "bool");
}

core::Result<void> checkObject(const nlohmann::json& value, const GoField& field,
                               std::string_view go_type) {
  if (value.is_null() || value.is_object()) return {};
  return goTypeError(value, field, go_type);
}

core::Result<void> checkArray(const nlohmann::json& value, const GoField& field,
                              std::string_view go_type) {
  if (value.is_null() || value.is_array()) return {};
  return goTypeError(value, field, go_type);
}

core::Result<void> checkInteger(const nlohmann::json& value, const GoField& field,
                                std::string_view go_type) {
  if (value.is_null()) return {};
  if (value.is_number_unsigned()) {
    const auto u = value.get<std::uint64_t>();
    if (go_type == "uint64") return {};
    const std::uint64_t max =
        go_type == "int32" ? static_cast<std::uint64_t>(std::numeric_limits<std::int32_t>::max())
                           : static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (u <= max) return {};
    return goTypeError(value, field, go_type);
  }
  if (value.is_number_integer()) {
    const auto i = value.get<std::int64_t>();
    if (go_type == "uint64" && i < 0) return goTypeError(value, field, go_type);
    if (go_type == "int32" && (i < std::numeric_limits<std::int32_t>::min() ||
                               i > std::numeric_limits<std::int32_t>::max())) {
      return goTypeError(value, field, go_type);
    }
    return {};
  }
  return goTypeError(value, field, go_type);
}

core::Result<void> checkFloat(const nlohmann::json& value, const GoField& field) {
  if (value.is_null() || value.is_number()) return {};
  return goTypeError(value, field, "float64");
}

core::Result<void> checkStringMap(const nlohmann::json& value, const GoField& field) {
  if (value.is_null()) return {};
  if (!value.is_object()) return goTypeError(value, field, "map[string]string");
  for (const auto& [key, v] : value.items()) {
    if (!v.is_null() && !v.is_string()) {
      return goTypeError(v, {field.go_struct, field.path + "." + key}, "string");
    }
  }
  return {};
}

core::Result<void> checkIntOrString(const nlohmann::json& value, const GoField& /*field*/) {
  if (value.is_null() || value.is_string()) return {};
  // intstr.IntOrString.UnmarshalJSON decodes anything that is not a JSON string as an int32 and
  // reports the error without the struct context.
  if (value.is_number_integer() || value.is_number_unsigned()) {
    auto r = checkInteger(value, GoField{}, "int32");
    if (r.ok()) return {};
  }
  return goTypeError(value, GoField{}, "int32");
}

namespace {

// strconv.FormatFloat(v, 'g', -1, 32): the shortest digits that read back as the same float32,
// in %e form when the exponent is < -4 or >= 6 (the precision Go uses for shortest output), else
// in %f form with exactly those digits.
std::string formatFloat32(double v) {
  const auto f = static_cast<float>(v);
  if (std::isnan(f)) return "NaN";
  if (std::isinf(f)) return f > 0 ? "+Inf" : "-Inf";
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // [-]d[.ddd]e(+|-)XX, the exponent with at least 2 digits
  const auto e = sci.find('e');
  const int exp = std::stoi(sci.substr(e + 1));
  if (exp < -4 || exp >= 6) return sci;  // Go's %e has the same shape
  std::string sign;
  std::string digits;
  for (char c : sci.substr(0, e)) {
    if (c == '-') {
      sign = "-";
    } else if (c != '.') {
      digits += c;
    }
  }
  std::string out;
  if (exp < 0) {
    out = "0." + std::string(static_cast<std::size_t>(-exp - 1), '0') + digits;
  } else {
    const auto int_len = static_cast<std::size_t>(exp) + 1;
    if (digits.size() <= int_len) {
      out = digits + std::string(int_len - digits.size(), '0');
    } else {
      out = digits.substr(0, int_len) + "." + digits.substr(int_len);
    }
  }
  return sign + out;
}

}  // namespace

void coerceScalarToString(nlohmann::json& value) {
  if (value.is_boolean()) {
    value = value.get<bool>() ? "true" : "false";
  } else if (value.is_number_unsigned()) {
    value = std::to_string(value.get<std::uint64_t>());
  } else if (value.is_number_integer()) {
    value = std::to_string(value.get<std::int64_t>());
  } else if (value.is_number_float()) {
    value = formatFloat32(value.get<double>());
  }
}

}  // namespace harness::injector::linkerd::detail
