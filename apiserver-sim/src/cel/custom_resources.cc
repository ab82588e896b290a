// CustomResourceDefinitions and custom resources by apiextensions-apiserver's code, through
// kube-cel (kube/cmd/kube-cel/custom_resources.go): the CRD registry strategy, a custom
// resource's decode/default/validate/store steps, the naming and establishing controllers'
// status writes, and the printer columns' Table.

#include <stdexcept>

#include <fmt/format.h>

#include "harness/sim/cel.h"

namespace harness::sim::cel {
namespace {

// A list of strings kube-cel answered under `key` (none when absent); a mistyped one throws.
std::vector<std::string> stringsAt(const nlohmann::json& response, const char* key,
                                   const char* op) {
  std::vector<std::string> out;
  auto it = response.find(key);
  if (it == response.end()) return out;
  if (!it->is_array()) {
    throw std::runtime_error(fmt::format("kube-cel answered {} with {} that are no list", op, key));
  }
  for (const auto& value : *it) {
    if (!value.is_string()) {
      throw std::runtime_error(
          fmt::format("kube-cel answered {} with {} that are no strings", op, key));
    }
    out.push_back(value.get<std::string>());
  }
  return out;
}

CustomResourceOutcome outcomeOf(const core::Result<nlohmann::json>& response, const char* op) {
  if (!response) throw std::runtime_error(response.error().message);
  if (auto it = response->find("status"); it != response->end() && it->is_object()) {
    auto status = core::statusFromJson(*it, fmt::format("{}.status", op));
    if (!status.ok()) {
      throw std::runtime_error(fmt::format("kube-cel answered {} with a status that does not "
                                           "decode: {}",
                                           op, status.error().message));
    }
    return std::move(status).value();
  }
  auto it = response->find("object");
  if (it == response->end() || !it->is_object()) {
    throw std::runtime_error(fmt::format("kube-cel answered {} with neither an object nor a "
                                         "status",
                                         op));
  }
  CustomResourceAnswer answer;
  answer.object = *it;
  answer.warnings = stringsAt(*response, "warnings", op);
  answer.unknown_fields = stringsAt(*response, "unknownFields", op);
  return answer;
}

}  // namespace

CustomResourceCode customResourceCode(const std::shared_ptr<KubeCel>& cel) {
  CustomResourceCode code;
  code.definition = [cel](const nlohmann::json& object, const nlohmann::json* old,
                          const std::string& subresource) {
    return outcomeOf(cel->call({{"op", "admitCustomResourceDefinition"},
                                {"object", object},
                                {"oldObject", old ? *old : nlohmann::json()},
                                {"subresource", subresource}}),
                     "admitCustomResourceDefinition");
  };
  code.resource = [cel](std::string_view step, const nlohmann::json& crd,
                        const nlohmann::json& object, const nlohmann::json* old,
                        const std::string& subresource) {
    return outcomeOf(cel->call({{"op", "admitCustomResource"},
                                {"step", step},
                                {"crd", crd},
                                {"object", object},
                                {"oldObject", old ? *old : nlohmann::json()},
                                {"subresource", subresource}}),
                     "admitCustomResource");
  };
  code.definition_status = [cel](const nlohmann::json& crd,
                                 const std::vector<nlohmann::json>& others) {
    auto response = cel->call(
        {{"op", "customResourceDefinitionStatus"}, {"object", crd}, {"crds", others}});
    if (!response) throw std::runtime_error(response.error().message);
    auto it = response->find("writes");
    if (it == response->end() || !it->is_array()) {
      throw std::runtime_error("kube-cel answered customResourceDefinitionStatus without writes");
    }
    return it->get<std::vector<nlohmann::json>>();
  };
  code.table = [cel](const nlohmann::json& crd, const std::string& version,
                     const std::vector<nlohmann::json>& objects, bool single, bool no_headers,
                     const std::string& resource_version) {
    auto response = cel->call({{"op", "customResourceTable"},
                               {"crd", crd},
                               {"version", version},
                               {"objects", objects},
                               {"single", single},
                               {"noHeaders", no_headers},
                               {"resourceVersion", resource_version}});
    if (!response) throw std::runtime_error(response.error().message);
    auto it = response->find("table");
    if (it == response->end() || !it->is_object()) {
      throw std::runtime_error("kube-cel answered customResourceTable without a table");
    }
    return *it;
  };
  return code;
}

}  // namespace harness::sim::cel
