#pragma once

// Internal to the admission module: the ValidatingAdmissionPolicy step (see the .cc).

#include "dispatch.h"
#include "harness/sim/admission_policy.h"
#include "harness/sim/store.h"

namespace harness::sim::detail {

// What the plugin's informers hold for this request: every policy and binding, the objects of
// each paramKind, the request's namespace, the resources equivalent to the requested one.
ValidatingPolicyInput readPolicyInput(const ObjectStore& store,
                                      const AdmissionAttributes& attributes);

// The plugin for one request: nullopt admitted, else its error. Without policies or bindings
// nothing is evaluated (`evaluated` false); with some and no dispatcher, a 500 saying kube-cel is missing.
DispatchError dispatchValidatingPolicies(RequestState& state, const ObjectStore& store,
                                         const ValidatingPolicyDispatcher& dispatcher,
                                         bool& evaluated);

}  // namespace harness::sim::detail
