// The ValidatingAdmissionPolicy plugin's step of the validating phase: after the in-tree
// validating plugins and before ValidatingAdmissionWebhook (k8s.io/kubernetes
// pkg/kubeapiserver/options/plugins.go AllOrderedPlugins). What the plugin's informers would hold
// is read from the store (k8s.io/apiserver pkg/admission/plugin/policy/generic/policy_source.go:
// policies, bindings, the param objects of each paramKind; namespace/matcher.go: the request's
// namespace); the decision is Kubernetes' own (validating/dispatcher.go Dispatch, through
// kube-cel); its error is the request's, its warnings and audit annotations are added
// (generic/plugin.go Dispatch; validating/dispatcher.go publishes the annotations with
// AddAnnotation, level Metadata).

#include <fmt/format.h>

#include "dispatch.h"
#include "harness/core/object.h"
#include "harness/core/unstructured.h"
#include "harness/sim/admission_policy.h"
#include "validating_admission_policy.h"

namespace harness::sim::detail {

namespace {

const std::string kAdmissionGroup = "admissionregistration.k8s.io";

audit::Level levelOf(const std::string& text) {
  auto level = audit::parseLevel(text);
  return level.ok() ? *level : audit::Level::kMetadata;
}

}  // namespace

// generic/plugin.go: the admission configuration resources (admissionResources) are never
// evaluated by API-based policies, and the non-persisted review resources
// (SetExcludedAdmissionResources, from kube-apiserver's AdmissionOptions) are excluded from all.
bool excludedFromPolicies(const core::GroupVersionResource& resource) {
  if (resource.group == kAdmissionGroup) {
    return resource.resource == "validatingadmissionpolicies" ||
           resource.resource == "validatingadmissionpolicybindings" ||
           resource.resource == "mutatingadmissionpolicies" ||
           resource.resource == "mutatingadmissionpolicybindings";
  }
  if (resource.group == "authentication.k8s.io") {
    return resource.resource == "tokenreviews" || resource.resource == "selfsubjectreviews";
  }
  if (resource.group == "authorization.k8s.io") {
    return resource.resource == "subjectaccessreviews" ||
           resource.resource == "selfsubjectaccessreviews" ||
           resource.resource == "localsubjectaccessreviews" ||
           resource.resource == "selfsubjectrulesreviews";
  }
  return false;
}

void addPolicyOutput(RequestState& state, const std::vector<std::string>& warnings,
                     const std::vector<PolicyAnnotation>& annotations) {
  for (const auto& warning : warnings) state.addWarning(warning);
  for (const auto& annotation : annotations) {
    state.addAnnotation(annotation.key, annotation.value, levelOf(annotation.level));
  }
}

PolicyInput readPolicyInput(const ObjectStore& store, const AdmissionAttributes& attributes,
                            const PolicyResources& resources) {
  PolicyInput input;
  input.policies = store.list({kAdmissionGroup, std::string(resources.policies)});
  if (input.policies.empty()) return input;
  input.bindings = store.list({kAdmissionGroup, std::string(resources.bindings)});
  if (input.bindings.empty()) return input;
  // The param informers (ensureParamsForPolicyLocked): one per paramKind, by its REST mapping.
  for (const auto& policy : input.policies) {
    const std::string api_version =
        core::nestedString(policy, {"spec", "paramKind", "apiVersion"});
    const std::string kind = core::nestedString(policy, {"spec", "paramKind", "kind"});
    if (kind.empty()) continue;
    bool seen = false;
    for (const auto& p : input.params) seen = seen || (p.api_version == api_version && p.kind == kind);
    if (seen) continue;
    PolicyParamKind param{api_version, kind, std::nullopt, {}};
    const auto slash = api_version.find('/');
    const core::GroupVersionKind gvk{
        slash == std::string::npos ? std::string() : api_version.substr(0, slash),
        slash == std::string::npos ? api_version : api_version.substr(slash + 1), kind};
    param.resource = core::findResourceForKind(gvk);
    if (param.resource) {
      param.objects =
          store.list({param.resource->resource.group, param.resource->resource.resource});
    }
    input.params.push_back(std::move(param));
  }
  std::string namespace_name = attributes.namespace_name;
  if (attributes.kind.group.empty() && attributes.kind.kind == "Namespace") namespace_name.clear();
  if (!namespace_name.empty()) input.namespace_object = store.get({"", "namespaces"}, "", namespace_name);
  input.equivalents = core::equivalentResources(attributes.resource, attributes.subresource);
  return input;
}

DispatchError dispatchValidatingPolicies(RequestState& state, const ObjectStore& store,
                                         const ValidatingPolicyDispatcher& dispatcher,
                                         bool& evaluated) {
  evaluated = false;
  const AdmissionAttributes& attributes = state.attributes;
  if (excludedFromPolicies(attributes.resource)) return std::nullopt;
  ValidatingPolicyInput input = readPolicyInput(store, attributes, kValidatingPolicyResources);
  if (input.policies.empty() || input.bindings.empty()) return std::nullopt;
  evaluated = true;
  if (!dispatcher) {
    return core::newInternalError(
        "ValidatingAdmissionPolicy bindings exist, but the simulator has no CEL evaluator "
        "(kube-cel; bash scripts/build-kube.sh builds it)");
  }
  ValidatingPolicyOutcome outcome;
  try {
    outcome = dispatcher(input, attributes);
  } catch (const std::exception& e) {
    return core::newInternalError(e.what());
  }
  addPolicyOutput(state, outcome.warnings, outcome.annotations);
  return outcome.status;
}

}  // namespace harness::sim::detail
