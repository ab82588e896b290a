#include "json_fields.h"

#include <fmt/format.h>

namespace harness::sim::detail {

std::string jsonTypeName(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "object";
    case nlohmann::json::value_t::array:
      return "array";
    case nlohmann::json::value_t::string:
      return "string";
    case nlohmann::json::value_t::boolean:
      return "boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "number";
    default:
      return "binary";
  }
}

core::Error typeError(std::string_view path, std::string_view what, const nlohmann::json& value) {
  return invalidField(std::string(path),
                      fmt::format("must be {}, got {}", what, jsonTypeName(value)));
}

core::Error invalidField(std::string path, std::string detail) {
  return core::fieldError(core::ErrorCode::kInvalid, std::move(path), std::move(detail));
}

core::Result<ObjectFields> ObjectFields::open(const nlohmann::json& value, std::string path) {
  if (!value.is_object()) return typeError(path, "an object", value);
  return ObjectFields(value, std::move(path));
}

std::string ObjectFields::pathOf(std::string_view key) const {
  return fmt::format("{}.{}", path_, key);
}

const nlohmann::json* ObjectFields::get(std::string_view key) {
  known_.emplace(key);
  auto it = object_->find(key);
  return it == object_->end() ? nullptr : &*it;
}

core::Result<std::optional<std::string>> ObjectFields::string(std::string_view key) {
  const auto* value = get(key);
  if (!value || value->is_null()) return std::optional<std::string>();
  if (!value->is_string()) return typeError(pathOf(key), "a string", *value);
  return std::optional<std::string>(value->get<std::string>());
}

core::Result<std::optional<bool>> ObjectFields::boolean(std::string_view key) {
  const auto* value = get(key);
  if (!value || value->is_null()) return std::optional<bool>();
  if (!value->is_boolean()) return typeError(pathOf(key), "a boolean", *value);
  return std::optional<bool>(value->get<bool>());
}

core::Result<std::optional<std::int64_t>> ObjectFields::integer(std::string_view key) {
  const auto* value = get(key);
  if (!value || value->is_null()) return std::optional<std::int64_t>();
  if (value->is_number_integer() && !value->is_number_unsigned()) {
    return std::optional<std::int64_t>(value->get<std::int64_t>());
  }
  if (value->is_number_unsigned() &&
      value->get<std::uint64_t>() <= static_cast<std::uint64_t>(INT64_MAX)) {
    return std::optional<std::int64_t>(static_cast<std::int64_t>(value->get<std::uint64_t>()));
  }
  return typeError(pathOf(key), "an integer", *value);
}

core::Result<std::optional<std::vector<std::string>>> ObjectFields::stringList(
    std::string_view key) {
  using Out = std::optional<std::vector<std::string>>;
  const auto* value = get(key);
  if (!value || value->is_null()) return Out();
  if (!value->is_array()) return typeError(pathOf(key), "a list of strings", *value);
  std::vector<std::string> out;
  for (std::size_t i = 0; i < value->size(); ++i) {
    const auto& item = (*value)[i];
    if (!item.is_string()) {
      return typeError(fmt::format("{}[{}]", pathOf(key), i), "a string", item);
    }
    out.push_back(item.get<std::string>());
  }
  return Out(std::move(out));
}

std::vector<std::string> ObjectFields::unknownKeys() const {
  std::vector<std::string> out;
  for (auto it = object_->begin(); it != object_->end(); ++it) {
    if (!known_.contains(it.key())) out.push_back(it.key());
  }
  return out;
}

core::Result<void> ObjectFields::rejectUnknown() const {
  auto unknown = unknownKeys();
  if (unknown.empty()) return {};
  return invalidField(path_, fmt::format("unknown field \"{}\"", unknown.front()));
}

std::vector<std::string> ObjectFields::presentKeys() const {
  std::vector<std::string> out;
  for (auto it = object_->begin(); it != object_->end(); ++it) out.push_back(it.key());
  return out;
}

}  // namespace harness::sim::detail
