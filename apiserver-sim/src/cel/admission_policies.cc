// Admission policies through kube-cel: create/update of policies and bindings, the
// ValidatingAdmissionPolicy plugin's decision and the MutatingAdmissionPolicy plugin's pass per
// request (kube/cmd/kube-cel/policies.go, mutating_policies.go, policy_objects.go); and the other
// registry strategy run by Kubernetes' code, a Pod update's validation (pod_update.go).

#include <stdexcept>

#include <fmt/format.h>

#include "harness/core/object.h"
#include "harness/sim/cel.h"
#include "harness/sim/go_types.h"

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

namespace {

nlohmann::json policyRequest(std::string_view op, const PolicyInput& input,
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
  return {{"op", op},
          {"policies", input.policies},
          {"bindings", input.bindings},
          {"params", std::move(params)},
          {"namespace", input.namespace_object.value_or(nullptr)},
          {"equivalents", std::move(equivalents)},
          {"attributes", attributesJson(attributes)}};
}

core::Status decodeStatus(const nlohmann::json& json) {
  auto status = core::statusFromJson(json);
  if (!status.ok()) {
    throw std::runtime_error("kube-cel answered a status that does not decode: " +
                             status.error().message);
  }
  return std::move(status).value();
}

// The warnings and audit annotations both plugins answer with.
void readWarningsAndAnnotations(const nlohmann::json& response, std::vector<std::string>& warnings,
                                std::vector<PolicyAnnotation>& annotations) {
  if (auto it = response.find("warnings"); it != response.end() && it->is_array()) {
    for (const auto& w : *it) {
      if (w.is_string()) warnings.push_back(w.get<std::string>());
    }
  }
  if (auto it = response.find("annotations"); it != response.end() && it->is_array()) {
    for (const auto& a : *it) {
      if (!a.is_object()) continue;
      annotations.push_back({a.value("key", ""), a.value("value", ""), a.value("level", "Metadata")});
    }
  }
}

// The resources kube-cel's REST mapper and resource resolver map kinds to (kube-apiserver's
// discovery): the built-in resources, subresources left out.
nlohmann::json servedResources() {
  nlohmann::json resources = nlohmann::json::array();
  for (const auto& info : core::builtinResources()) {
    if (!info.subresource.empty()) continue;
    resources.push_back({{"group", info.resource.group},
                         {"version", info.resource.version},
                         {"resource", info.resource.resource},
                         {"kind", info.kind.kind},
                         {"namespaced", info.namespaced}});
  }
  return resources;
}

}  // namespace

nlohmann::json validatingPolicyRequest(const ValidatingPolicyInput& input,
                                       const AdmissionAttributes& attributes) {
  return policyRequest("dispatchValidatingPolicies", input, attributes);
}

nlohmann::json mutatingPolicyRequest(const PolicyInput& input,
                                     const AdmissionAttributes& attributes,
                                     const MutatingPolicyRound& round) {
  nlohmann::json request = policyRequest("dispatchMutatingPolicies", input, attributes);
  request["reinvocation"] = {{"request", round.request}, {"isReinvoke", round.is_reinvoke}};
  return request;
}

ValidatingPolicyDispatcher validatingPolicyDispatcher(std::shared_ptr<KubeCel> cel) {
  return [cel = std::move(cel)](const ValidatingPolicyInput& input,
                                const AdmissionAttributes& attributes) {
    auto response = cel->call(validatingPolicyRequest(input, attributes));
    if (!response) throw std::runtime_error(response.error().message);
    ValidatingPolicyOutcome outcome;
    if (auto it = response->find("status"); it != response->end() && it->is_object()) {
      outcome.status = decodeStatus(*it);
    }
    readWarningsAndAnnotations(*response, outcome.warnings, outcome.annotations);
    return outcome;
  };
}

MutatingPolicyDispatcher mutatingPolicyDispatcher(const std::shared_ptr<KubeCel>& cel) {
  MutatingPolicyDispatcher dispatcher;
  dispatcher.dispatch = [cel](const PolicyInput& input, const AdmissionAttributes& attributes,
                              const MutatingPolicyRound& round) {
    auto response = cel->call(mutatingPolicyRequest(input, attributes, round));
    if (!response) throw std::runtime_error(response.error().message);
    MutatingPolicyOutcome outcome;
    if (auto it = response->find("status"); it != response->end() && it->is_object()) {
      outcome.status = decodeStatus(*it);
    }
    if (auto it = response->find("object"); it != response->end() && it->is_object()) {
      outcome.object = *it;
    }
    outcome.should_reinvoke = response->value("shouldReinvoke", false);
    readWarningsAndAnnotations(*response, outcome.warnings, outcome.annotations);
    return outcome;
  };
  dispatcher.release = [cel](const std::string& request) {
    // Only frees kube-cel's state early (it bounds what it keeps): a failure changes nothing.
    (void)cel->call({{"op", "releaseMutatingPolicies"}, {"reinvocation", {{"request", request}}}});
  };
  return dispatcher;
}

PolicyObjectAdmitter policyObjectAdmitter(std::shared_ptr<KubeCel> cel) {
  return [cel = std::move(cel), resources = servedResources()](
             std::string_view kind, const nlohmann::json& object,
             const nlohmann::json* old_object,
             const PolicyObjectWriter* writer) -> std::variant<nlohmann::json, core::Status> {
    nlohmann::json request = {{"op", "admitPolicyObject"},
                              {"kind", kind},
                              {"object", object},
                              {"oldObject", old_object ? *old_object : nlohmann::json()}};
    if (writer) {
      // The policies' paramKind and the bindings' paramRef authorization (the registry
      // strategies' authz.go) need the user, the resource the paramKind is served as and, for a
      // binding, the bound policy.
      request["userInfo"] = userInfoJson(writer->user);
      request["resources"] = resources;
      if (writer->bound_policy) request["policy"] = *writer->bound_policy;
    }
    auto response = cel->call(request);
    if (!response) throw std::runtime_error(response.error().message);
    if (auto it = response->find("status"); it != response->end() && it->is_object()) {
      return decodeStatus(*it);
    }
    if (auto it = response->find("object"); it != response->end() && it->is_object()) return *it;
    throw std::runtime_error("kube-cel answered neither an object nor a status");
  };
}

std::function<std::optional<nlohmann::json>(const nlohmann::json& policy)> policyStatusWriter(
    std::shared_ptr<KubeCel> cel) {
  // The REST mapper's resources (the controller's comes from discovery), sent once per policy
  // version the controller reconciles.
  return [cel = std::move(cel), resources = servedResources()](
             const nlohmann::json& policy) -> std::optional<nlohmann::json> {
    auto response = cel->call(
        {{"op", "typeCheckValidatingPolicy"}, {"object", policy}, {"resources", resources}});
    if (!response) throw std::runtime_error(response.error().message);
    if (auto it = response->find("status"); it != response->end() && it->is_object()) return *it;
    return std::nullopt;
  };
}

std::function<std::string()> policyMetricsText(std::shared_ptr<KubeCel> cel) {
  return [cel = std::move(cel)]() -> std::string {
    auto response = cel->call({{"op", "policyMetrics"}});
    if (!response) return {};
    return response->value("text", "");
  };
}

PolicyObjectAdmitter unavailablePolicyAdmitter(std::string reason) {
  return [reason = std::move(reason)](std::string_view kind, const nlohmann::json&,
                                      const nlohmann::json*, const PolicyObjectWriter*)
             -> std::variant<nlohmann::json, core::Status> {
    throw std::runtime_error(fmt::format("a {} needs CEL: {}", kind, reason));
  };
}

PodUpdateValidator podUpdateValidator(std::shared_ptr<KubeCel> cel) {
  return [cel = std::move(cel)](const nlohmann::json& pod,
                                const nlohmann::json& old_pod) -> std::optional<core::Status> {
    auto response =
        cel->call({{"op", "validatePodUpdate"}, {"object", pod}, {"oldObject", old_pod}});
    if (!response) throw std::runtime_error(response.error().message);
    if (auto it = response->find("status"); it != response->end()) {
      if (!it->is_object()) throw std::runtime_error("kube-cel answered a status that is no object");
      return decodeStatus(*it);
    }
    return std::nullopt;
  };
}

}  // namespace harness::sim::cel
