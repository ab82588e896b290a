#pragma once

// A value as Go's text/template sees it, over JSON data.
//
// Data model (the choice this library makes; see template.h for the whole picture):
//   * JSON objects are Go map[string]interface{}, arrays []interface{}, strings string, booleans
//     bool, integers int, other numbers float64 and null the nil interface.
//   * A value read out of a map or slice element is "boxed" in interface{} (reflect.Value of kind
//     Interface), exactly as Go's reflect returns it. Boxing matters for Go's error texts ("nil
//     pointer evaluating interface {}.x", "can't evaluate field y in type interface {}") and is
//     removed where Go removes it (at the end of every pipeline command).
//   * An invalid value is Go's zero reflect.Value: a missing map key, the result of a nil
//     pipeline. It prints as "<no value>".
//   * A map may be tagged as Go's map[string]string (annotations, labels, the results of
//     Istio's strdict/omit/mergeMaps): indexing a missing key then gives "" instead of nil.
//
// Values share storage: copying a Value is cheap, and a Value read from a map refers into the
// same storage, so Sprig's mutating functions (set, unset, merge) are visible through every
// reference to the mutated map, as they are in Go.

#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace harness::gotemplate {

// The Go kind of a value (reflect.Kind, reduced to what JSON data can hold).
enum class GoKind { kInvalid, kNil, kBool, kInt, kUint, kFloat, kString, kMap, kSlice };

class Value {
 public:
  // The invalid value ("<no value>").
  Value() = default;
  // A new value owning `j`.
  explicit Value(nlohmann::json j);

  [[nodiscard]] bool valid() const { return node_ != nullptr; }
  // A nil interface (JSON null).
  [[nodiscard]] bool isNil() const { return node_ != nullptr && node_->is_null(); }
  // Requires valid().
  [[nodiscard]] const nlohmann::json& json() const { return *node_; }

  [[nodiscard]] bool boxed() const { return boxed_; }
  [[nodiscard]] Value withBoxed(bool boxed) const;
  [[nodiscard]] bool stringMap() const { return string_map_; }
  [[nodiscard]] Value withStringMap(bool string_map) const;

  // The element `node`, which must live inside this value's storage; boxed as Go boxes map
  // and slice elements.
  [[nodiscard]] Value element(const nlohmann::json& node) const;

  // Replaces this value's content in place (Sprig's set/unset/merge mutate maps). Every Value
  // referring to the same node sees the change; Values referring to parts of the old content
  // keep seeing the old content.
  void replace(nlohmann::json content) const;

  // The unboxed Go kind.
  [[nodiscard]] GoKind kind() const;
  // The Go type name as reflect prints it: "interface {}" when boxed or nil, otherwise "string",
  // "int", "float64", "bool", "map[string]interface {}", "map[string]string", "[]interface {}".
  [[nodiscard]] std::string typeName() const;
  // The type of the value inside the box ("<nil>" for nil).
  [[nodiscard]] std::string concreteTypeName() const;

 private:
  struct Storage;
  std::shared_ptr<Storage> storage_;
  nlohmann::json* node_ = nullptr;
  bool boxed_ = false;
  bool string_map_ = false;
};

// Go's truth (text/template exec.go isTrue): false, 0, nil, "", and empty maps and slices are
// false; everything else, including invalid values, has a truth value. Invalid is false.
bool goTruth(const Value& v);

// The Go kind of a JSON value: integers that fit int64 are kInt, larger ones kUint.
GoKind goKindOf(const nlohmann::json& j);

}  // namespace harness::gotemplate
