#include "harness/gotemplate/value.h"

#include <utility>
#include <vector>

namespace harness::gotemplate {

// Old contents of replaced nodes are kept here so that Values pointing into them stay valid:
// moving a json keeps its heap-allocated object/array storage at the same address. (The implicit
// move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant() into a throw
// it cannot reach.)
// NOLINTNEXTLINE(bugprone-exception-escape)
struct Value::Storage {
  nlohmann::json root;
  std::vector<nlohmann::json> graveyard;
};

Value::Value(nlohmann::json j) : storage_(std::make_shared<Storage>()) {
  storage_->root = std::move(j);
  node_ = &storage_->root;
}

Value Value::withBoxed(bool boxed) const {
  Value v = *this;
  v.boxed_ = boxed;
  return v;
}

Value Value::withStringMap(bool string_map) const {
  Value v = *this;
  v.string_map_ = string_map;
  return v;
}

Value Value::element(const nlohmann::json& node) const {
  Value v;
  v.storage_ = storage_;
  v.node_ = const_cast<nlohmann::json*>(&node);  // NOLINT: storage is owned and mutable
  v.boxed_ = true;
  return v;
}

void Value::replace(nlohmann::json content) const {
  if (node_ == nullptr) return;
  storage_->graveyard.push_back(std::move(*node_));
  *node_ = std::move(content);
}

GoKind goKindOf(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return GoKind::kNil;
    case nlohmann::json::value_t::boolean: return GoKind::kBool;
    case nlohmann::json::value_t::number_integer: return GoKind::kInt;
    case nlohmann::json::value_t::number_unsigned:
      return j.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX) ? GoKind::kUint
                                                                            : GoKind::kInt;
    case nlohmann::json::value_t::number_float: return GoKind::kFloat;
    case nlohmann::json::value_t::string: return GoKind::kString;
    case nlohmann::json::value_t::object: return GoKind::kMap;
    case nlohmann::json::value_t::array: return GoKind::kSlice;
    default: return GoKind::kInvalid;
  }
}

GoKind Value::kind() const { return node_ == nullptr ? GoKind::kInvalid : goKindOf(*node_); }

std::string Value::concreteTypeName() const {
  switch (kind()) {
    case GoKind::kInvalid: return "<invalid>";
    case GoKind::kNil: return "<nil>";
    case GoKind::kBool: return "bool";
    case GoKind::kInt: return "int";
    case GoKind::kUint: return "uint64";
    case GoKind::kFloat: return "float64";
    case GoKind::kString: return "string";
    case GoKind::kMap: return string_map_ ? "map[string]string" : "map[string]interface {}";
    case GoKind::kSlice: return "[]interface {}";
  }
  return "<invalid>";
}

std::string Value::typeName() const {
  if (boxed_ || isNil()) return "interface {}";
  return concreteTypeName();
}

bool goTruth(const Value& v) {
  if (!v.valid()) return false;
  const nlohmann::json& j = v.json();
  switch (goKindOf(j)) {
    case GoKind::kInvalid:
    case GoKind::kNil: return false;
    case GoKind::kBool: return j.get<bool>();
    case GoKind::kInt:
    case GoKind::kUint:
      return j.is_number_unsigned() ? j.get<std::uint64_t>() != 0 : j.get<std::int64_t>() != 0;
    case GoKind::kFloat: return j.get<double>() != 0;
    case GoKind::kString: return !j.get_ref<const std::string&>().empty();
    case GoKind::kMap:
    case GoKind::kSlice: return !j.empty();
  }
  return false;
}

}  // namespace harness::gotemplate
