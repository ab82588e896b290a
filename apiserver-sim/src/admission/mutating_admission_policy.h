#pragma once

// Internal to the admission module: the MutatingAdmissionPolicy step (see the .cc).

#include <string>

#include "dispatch.h"
#include "harness/sim/admission_policy.h"
#include "harness/sim/store.h"
#include "reinvocation_context.h"

namespace harness::sim::detail {

// The plugin in one pass of the mutating chain (`context.is_reinvoke` says which): nullopt
// admitted, else its error. The object is replaced by what the mutations left (defaulted);
// `changed` says whether it changed, and a change sets `context.should_reinvoke` (the plugin's
// SetShouldReinvoke). `request` names the request to kube-cel, which keeps the plugin's
// reinvocation state under it. Nothing is evaluated (`evaluated` false) for a DELETE, an exempt
// resource or without policies and bindings; with some and no dispatcher, a 500 saying kube-cel
// is missing.
DispatchError dispatchMutatingPolicies(RequestState& state, const ObjectStore& store,
                                       const MutatingPolicyDispatcher& dispatcher,
                                       ReinvocationContext& context, const std::string& request,
                                       bool& evaluated, bool& changed);

}  // namespace harness::sim::detail
