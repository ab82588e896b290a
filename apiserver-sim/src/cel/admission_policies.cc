// ValidatingAdmissionPolicy through kube-cel: create/update of policies and bindings, and the
// plugin's decision per request (kube/cmd/kube-cel/policies.go, policy_objects.go).

#include <stdexcept>

#include <fmt/format.h>

#include "harness/sim/cel.h"

namespace harness::sim::cel {

namespace {

nlohmann::json resourceJson(const core::ResourceInfo& info) {
  return {{"group", info.resource.group},
          {"version", info.resource.version},
          {"resource", info.resource.resource},
          {"kind",
           {{"group", info.kind.group}, {"version", info.kind.version}, {"kind", info.kind.kind}}}};
}

}  // namespace

nlohmann::json validatingPolicyRequest(const ValidatingPolicyInput& input,
                                       const AdmissionAttributes& attributes) {
  nlohmann::json params = nlohmann::json::array();
  for (const auto& p : input.params) {
    params.push_back({{"apiVersion", p.api_version},
                      {"kind", p.kind},
                      {"resource", p.resource ? p.resource->resource.resource : std::string()},
                      {"namespaced", p.resource && p.resource->namespaced},
                      {"objects", p.objects}});
  }
  nlohmann::json equivalents = nlohmann::json::array();
  for (const auto& e : input.equivalents) equivalents.push_back(resourceJson(e));
  return {{"op", "dispatchValidatingPolicies"},
          {"policies", input.policies},
          {"bindings", input.bindings},
          {"params", std::move(params)},
          {"namespace", input.namespace_object.value_or(nullptr)},
          {"equivalents", std::move(equivalents)},
          {"attributes", attributesJson(attributes)}};
}

ValidatingPolicyDispatcher validatingPolicyDispatcher(std::shared_ptr<KubeCel> cel) {
  return [cel = std::move(cel)](const ValidatingPolicyInput& input,
                                const AdmissionAttributes& attributes) {
    auto response = cel->call(validatingPolicyRequest(input, attributes));
    if (!response) throw std::runtime_error(response.error().message);
    ValidatingPolicyOutcome outcome;
    if (auto it = response->find("status"); it != response->end() && it->is_object()) {
      auto status = core::statusFromJson(*it);
      if (!status.ok()) {
        throw std::runtime_error("kube-cel answered a status that does not decode: " +
                                 status.error().message);
      }
      outcome.status = std::move(status).value();
    }
    if (auto it = response->find("warnings"); it != response->end() && it->is_array()) {
      for (const auto& w : *it) {
        if (w.is_string()) outcome.warnings.push_back(w.get<std::string>());
      }
    }
    if (auto it = response->find("annotations"); it != response->end() && it->is_array()) {
      for (const auto& a : *it) {
        if (!a.is_object()) continue;
        outcome.annotations.push_back(
            {a.value("key", ""), a.value("value", ""), a.value("level", "Metadata")});
      }
    }
    return outcome;
  };
}

PolicyObjectAdmitter policyObjectAdmitter(std::shared_ptr<KubeCel> cel) {
  return [cel = std::move(cel)](std::string_view kind, const nlohmann::json& object,
                                const nlohmann::json* old_object)
             -> std::variant<nlohmann::json, core::Status> {
    auto response = cel->call({{"op", "admitPolicyObject"},
                               {"kind", kind},
                               {"object", object},
                               {"oldObject", old_object ? *old_object : nlohmann::json()}});
    if (!response) throw std::runtime_error(response.error().message);
    if (auto it = response->find("status"); it != response->end() && it->is_object()) {
      auto status = core::statusFromJson(*it);
      if (!status.ok()) {
        throw std::runtime_error("kube-cel answered a status that does not decode: " +
                                 status.error().message);
      }
      return std::move(status).value();
    }
    if (auto it = response->find("object"); it != response->end() && it->is_object()) return *it;
    throw std::runtime_error("kube-cel answered neither an object nor a status");
  };
}

PolicyObjectAdmitter unavailablePolicyAdmitter(std::string reason) {
  return [reason = std::move(reason)](std::string_view kind, const nlohmann::json&,
                                      const nlohmann::json*)
             -> std::variant<nlohmann::json, core::Status> {
    throw std::runtime_error(fmt::format("a {} needs CEL: {}", kind, reason));
  };
}

}  // namespace harness::sim::cel
