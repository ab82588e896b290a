#pragma once

// Reading fields of an object held as JSON without a schema, like apimachinery's
// pkg/apis/meta/v1/unstructured helpers (helpers.go: NestedFieldNoCopy, NestedString).

#include <initializer_list>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace harness::core {

// unstructured.NestedString without its error: the string at `path`, "" when it or a parent is
// absent or of another type (for code that reads metadata of an object already decoded and
// validated, such as the object store's key and the admission chain's attributes).
std::string nestedString(const nlohmann::json& object,
                         std::initializer_list<std::string_view> path);

}  // namespace harness::core
