#pragma once

// Go's fmt package, the verbs the simulator's messages print with.
// Followed: go/src/fmt/print.go (printValue for a slice under %#v: the type name, then the
// elements in braces separated by ", ", a nil slice as "[]string(nil)").

#include <string>
#include <string_view>
#include <vector>

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

}  // namespace harness::go
