#include "harness/go/fmt.h"

#include <cstdint>
#include <limits>

#include "harness/go/strconv.h"

namespace harness::go {

std::string stringSliceGoSyntax(const std::vector<std::string>& values, EmptySlice empty,
                                std::string_view type) {
  if (values.empty() && empty == EmptySlice::kNil) return std::string(type) + "(nil)";
  std::string out = std::string(type) + "{";
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ", ";
    out += quote(values[i]);
  }
  return out + "}";
}

std::string stringMapGoSyntax(const nlohmann::json* map) {
  if (map == nullptr || !map->is_object()) return "map[string]string(nil)";
  std::string out = "map[string]string{";
  bool first = true;
  for (auto it = map->begin(); it != map->end(); ++it) {  // nlohmann objects iterate sorted
    if (!first) out += ", ";
    first = false;
    out += quote(it.key()) + ":" +
           quote(it.value().is_string() ? it.value().get<std::string>() : std::string());
  }
  return out + "}";
}

DecodedType decodedTypeOf(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::null:
      return DecodedType::kNil;
    case nlohmann::json::value_t::boolean:
      return DecodedType::kBool;
    case nlohmann::json::value_t::string:
      return DecodedType::kString;
    case nlohmann::json::value_t::number_integer:
      return DecodedType::kInt64;
    case nlohmann::json::value_t::number_unsigned:
      return v.get<std::uint64_t>() <=
                     static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                 ? DecodedType::kInt64
                 : DecodedType::kFloat64;
    case nlohmann::json::value_t::number_float:
      return DecodedType::kFloat64;
    case nlohmann::json::value_t::object:
      return DecodedType::kMap;
    case nlohmann::json::value_t::array:
      return DecodedType::kSlice;
    default:
      return DecodedType::kNil;
  }
}

std::string decodedTypeName(DecodedType type) {
  switch (type) {
    case DecodedType::kNil:
      return "%!s(<nil>)";
    case DecodedType::kBool:
      return "bool";
    case DecodedType::kString:
      return "string";
    case DecodedType::kInt64:
      return "int64";
    case DecodedType::kFloat64:
      return "float64";
    case DecodedType::kMap:
      return "map[string]interface {}";
    case DecodedType::kSlice:
      return "[]interface {}";
  }
  return "";
}

namespace {

std::string scalarV(const nlohmann::json& v) {
  switch (decodedTypeOf(v)) {
    case DecodedType::kNil:
      return "<nil>";
    case DecodedType::kBool:
      return v.get<bool>() ? "true" : "false";
    case DecodedType::kString:
      return v.get<std::string>();
    case DecodedType::kInt64:
      return v.dump();
    case DecodedType::kFloat64:
      return formatFloat(v.get<double>());
    default:
      return "";
  }
}

// fmt's walk of a decoded value: maps as map[k:v ...] (nlohmann keeps keys sorted, as fmt
// prints map keys), slices as [a b], each scalar by `scalar`.
template <typename Scalar>
std::string sprintComposite(const nlohmann::json& v, const Scalar& scalar) {
  if (v.is_object()) {
    std::string out = "map[";
    bool first = true;
    for (const auto& [key, member] : v.items()) {
      if (!first) out.push_back(' ');
      first = false;
      out += key + ":" + sprintComposite(member, scalar);
    }
    return out + "]";
  }
  if (v.is_array()) {
    std::string out = "[";
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) out.push_back(' ');
      out += sprintComposite(v[i], scalar);
    }
    return out + "]";
  }
  return scalar(v);
}

std::string sprintSScalar(const nlohmann::json& v) {
  const DecodedType type = decodedTypeOf(v);
  if (type == DecodedType::kString) return v.get<std::string>();
  if (type == DecodedType::kNil) return "%!s(<nil>)";
  return "%!s(" + decodedTypeName(type) + "=" + scalarV(v) + ")";
}

}  // namespace

std::string sprintV(const nlohmann::json& v) { return sprintComposite(v, scalarV); }

std::string sprintS(const nlohmann::json& v) { return sprintComposite(v, sprintSScalar); }

}  // namespace harness::go
