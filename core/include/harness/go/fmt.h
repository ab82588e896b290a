#pragma once

// Go's fmt package, the verbs the simulator's messages print with.
// Followed: go/src/fmt/print.go (printValue for a slice under %#v: the type name, then the
// elements in braces separated by ", ", a nil slice as "[]string(nil)"; printValue for a map
// under %v: "map[" then sorted key:value pairs separated by spaces; badVerb for %s of a
// non-string: "%!s(int64=1)").

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace harness::go {

// Whether an empty vector stands for a nil slice (a list absent from the decoded object) or for
// an empty one: %#v prints them differently.
enum class EmptySlice { kNil, kEmpty };

// fmt.Sprintf("%#v", values) for a slice of a string type named `type` ("[]string",
// "[]v1.OperationType"), as field.Invalid prints a list value: []string{"a", "b"}; an empty
// vector is "[]string(nil)" (kNil) or "[]string{}" (kEmpty).
std::string stringSliceGoSyntax(const std::vector<std::string>& values,
                                EmptySlice empty = EmptySlice::kNil,
                                std::string_view type = "[]string");

// fmt.Sprintf("%#v", m) for a map[string]string held in JSON (nullptr or not an object: a nil
// map), keys sorted as fmt sorts them: map[string]string{"a":"b", "c":"d"}; a value that is not a
// string prints as "".
std::string stringMapGoSyntax(const nlohmann::json* map);

// The dynamic Go type of a JSON value decoded into interface{} as apimachinery decodes it
// (sigs.k8s.io/json: integers int64, other numbers float64, an integer beyond int64 float64).
enum class DecodedType { kNil, kBool, kString, kInt64, kFloat64, kMap, kSlice };
DecodedType decodedTypeOf(const nlohmann::json& v);

// reflect.TypeOf(v).String(): "bool", "string", "int64", "float64", "map[string]interface {}",
// "[]interface {}"; nil prints as fmt's "%!s(<nil>)".
std::string decodedTypeName(DecodedType type);

// fmt.Sprintf("%v", v) of a decoded value: map[k:v ...] with sorted keys, [a b], <nil>, floats
// as strconv's 'g' shortest form.
std::string sprintV(const nlohmann::json& v);

// fmt.Sprintf("%s", v) of a decoded value: strings raw, other scalars as %!s(int64=1), nil as
// %!s(<nil>), maps and slices element by element.
std::string sprintS(const nlohmann::json& v);

}  // namespace harness::go
