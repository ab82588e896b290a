#pragma once

// Internal to the admission module: the ValidatingAdmissionPolicy step (see the .cc), and what
// both policy plugins share.

#include "dispatch.h"
#include "harness/sim/admission_policy.h"
#include "harness/sim/store.h"

namespace harness::sim::detail {

// The resources (of admissionregistration.k8s.io) a policy plugin's two informers watch.
struct PolicyResources {
  std::string_view policies;
  std::string_view bindings;
};
inline constexpr PolicyResources kValidatingPolicyResources{"validatingadmissionpolicies",
                                                            "validatingadmissionpolicybindings"};
inline constexpr PolicyResources kMutatingPolicyResources{"mutatingadmissionpolicies",
                                                          "mutatingadmissionpolicybindings"};

// What the plugin's informers hold for this request: every policy and binding, the objects of
// each paramKind, the request's namespace, the resources equivalent to the requested one.
PolicyInput readPolicyInput(const ObjectStore& store, const AdmissionAttributes& attributes,
                            const PolicyResources& resources);

// generic/plugin.go: requests no API-based policy evaluates (the policy resources themselves and
// the non-persisted review resources).
bool excludedFromPolicies(const core::GroupVersionResource& resource);

// A plugin's warnings and audit annotations, added to the request.
void addPolicyOutput(RequestState& state, const std::vector<std::string>& warnings,
                     const std::vector<PolicyAnnotation>& annotations);

// The plugin for one request: nullopt admitted, else its error. Without policies or bindings
// nothing is evaluated (`evaluated` false); with some and no dispatcher, a 500 saying kube-cel is missing.
DispatchError dispatchValidatingPolicies(RequestState& state, const ObjectStore& store,
                                         const ValidatingPolicyDispatcher& dispatcher,
                                         bool& evaluated);

}  // namespace harness::sim::detail
