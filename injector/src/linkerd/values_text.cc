#include "harness/injector/linkerd/values_text.h"

#include <nlohmann/json.hpp>

#include "harness/core/yaml.h"

namespace harness::injector::linkerd {

core::Result<Values> parseValuesText(const std::string& text, const std::string& where) {
  auto doc = core::parseYaml(text);
  if (!doc) return doc.error().within(where);
  nlohmann::json values = std::move(*doc);
  if (values.is_object() && values.value("kind", "") == "ConfigMap") {
    const auto data = values.find("data");
    if (data == values.end() || !data->is_object() || !data->contains("values") ||
        !(*data)["values"].is_string()) {
      return core::makeError(where + ": data.values: the linkerd-config ConfigMap has no values");
    }
    auto inner = core::parseYaml((*data)["values"].get<std::string>());
    if (!inner) return inner.error().within(where + ": data.values");
    values = std::move(*inner);
  }
  if (values.is_null()) values = nlohmann::json::object();
  auto parsed = parseValues(values);
  if (!parsed) return parsed.error().within(where);
  return parsed;
}

}  // namespace harness::injector::linkerd
