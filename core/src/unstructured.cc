#include "harness/core/unstructured.h"

namespace harness::core {

std::string nestedString(const nlohmann::json& object,
                         std::initializer_list<std::string_view> path) {
  const nlohmann::json* at = &object;
  for (const std::string_view field : path) {
    if (!at->is_object()) return {};
    const auto it = at->find(std::string(field));
    if (it == at->end()) return {};
    at = &*it;
  }
  return at->is_string() ? at->get<std::string>() : std::string();
}

}  // namespace harness::core
