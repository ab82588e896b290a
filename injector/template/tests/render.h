#pragma once

// Test helper: parse + execute in one call, errors as text.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/gotemplate/funcs.h"
#include "harness/gotemplate/template.h"

namespace harness::gotemplate::testing {

// The rendered text, or "ERR: <message>" for a parse or execution error.
inline std::string render(std::string_view text, const nlohmann::json& data = nullptr,
                          const FuncMap& funcs = istioFuncMap(), const ExecOptions& options = {},
                          std::string_view name = "t") {
  auto set = parse(name, text, funcs);
  if (!set) return "ERR: " + set.error().message;
  auto out = execute(*set, name, data, options);
  if (!out) return "ERR: " + out.error().message;
  return *out;
}

}  // namespace harness::gotemplate::testing
