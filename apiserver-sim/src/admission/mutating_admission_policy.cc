// The MutatingAdmissionPolicy plugin's step of each mutating pass: after the in-tree mutating
// plugins and before MutatingAdmissionWebhook (k8s.io/kubernetes
// pkg/kubeapiserver/options/plugins.go AllOrderedPlugins: ..., MutatingAdmissionPolicy,
// MutatingAdmissionWebhook, ValidatingAdmissionPolicy, ValidatingAdmissionWebhook, ...). It runs
// in both passes of the reinvoker (k8s.io/apiserver pkg/admission/reinvocation.go: every plugin
// of the chain is admitted again); which policies run again is the plugin's own decision
// (mutating/dispatcher.go dispatchInvocations with reinvocationcontext.go: IfNeeded policies,
// when the object changed after their last invocation), taken in kube-cel. A policy that changes
// the object sets ShouldReinvoke, so the webhooks after it get their second pass as after a
// webhook's change. The plugin handles CREATE, UPDATE and CONNECT only (plugin.go NewPlugin:
// admission.NewHandler). Its informers' content is read from the store as for
// ValidatingAdmissionPolicy (validating_admission_policy.h).

#include "mutating_admission_policy.h"

#include "harness/sim/defaulting.h"
#include "validating_admission_policy.h"

namespace harness::sim::detail {

DispatchError dispatchMutatingPolicies(RequestState& state, const ObjectStore& store,
                                       const MutatingPolicyDispatcher& dispatcher,
                                       ReinvocationContext& context, const std::string& request,
                                       bool& evaluated, bool& changed) {
  evaluated = false;
  changed = false;
  AdmissionAttributes& attributes = state.attributes;
  if (attributes.operation != "CREATE" && attributes.operation != "UPDATE" &&
      attributes.operation != "CONNECT") {
    return std::nullopt;
  }
  if (excludedFromPolicies(attributes.resource)) return std::nullopt;
  PolicyInput input = readPolicyInput(store, attributes, kMutatingPolicyResources);
  if (input.policies.empty() || input.bindings.empty()) return std::nullopt;
  evaluated = true;
  if (!dispatcher) {
    return core::newInternalError(
        "MutatingAdmissionPolicy bindings exist, but the simulator has no CEL evaluator "
        "(kube-cel; bash scripts/build-kube.sh builds it)");
  }
  MutatingPolicyOutcome outcome;
  try {
    outcome = dispatcher.dispatch(input, attributes, {request, context.is_reinvoke});
  } catch (const std::exception& e) {
    return core::newInternalError(e.what());
  }
  addPolicyOutput(state, outcome.warnings, outcome.annotations);
  if (outcome.status) return outcome.status;
  if (outcome.object && attributes.object) {
    // kube-apiserver's object is typed: each mutation's result was decoded and defaulted
    // (dispatchOne); the JSON is the Go encoding of that object.
    nlohmann::json after = std::move(*outcome.object);
    applyDefaults(after);
    normalizeLikeGoEncoding(after);
    changed = !semanticEqual(*attributes.object, after);
    if (changed) attributes.object = std::move(after);
  }
  if (outcome.should_reinvoke) context.should_reinvoke = true;
  return std::nullopt;
}

}  // namespace harness::sim::detail
