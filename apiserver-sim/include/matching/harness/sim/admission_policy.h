#pragma once

// ValidatingAdmissionPolicy and MutatingAdmissionPolicy: what the chain gives the policy
// evaluator and what it gets back.
// The evaluation itself is Kubernetes' own code (kube-cel, apiserver-sim/src/cel): the chain only
// reads the policies, bindings, params and namespace from its store, as the plugin's informers
// would (k8s.io/apiserver pkg/admission/plugin/policy/generic/policy_source.go), and applies the
// outcome (pkg/admission/plugin/policy/validating/dispatcher.go and mutating/dispatcher.go).

#include <functional>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/object.h"
#include "harness/core/status.h"
#include "harness/sim/attributes.h"

namespace harness::sim {

inline constexpr std::string_view kValidatingAdmissionPolicyKind = "ValidatingAdmissionPolicy";
inline constexpr std::string_view kValidatingAdmissionPolicyBindingKind =
    "ValidatingAdmissionPolicyBinding";
inline constexpr std::string_view kMutatingAdmissionPolicyKind = "MutatingAdmissionPolicy";
inline constexpr std::string_view kMutatingAdmissionPolicyBindingKind =
    "MutatingAdmissionPolicyBinding";

// The objects of one paramKind, as its informer would list them.
struct PolicyParamKind {
  std::string api_version;
  std::string kind;
  // The resource serving the kind (nullopt when the apiserver does not serve it: the policy then
  // has the configuration error "failed to find resource referenced by paramKind").
  std::optional<core::ResourceInfo> resource;
  std::vector<nlohmann::json> objects;
};

// What one policy plugin's informers hold for a request (either plugin: its own policies and
// bindings).
struct ValidatingPolicyInput {
  std::vector<nlohmann::json> policies;
  std::vector<nlohmann::json> bindings;
  std::vector<PolicyParamKind> params;
  std::optional<nlohmann::json> namespace_object;  // the request's namespace, when it exists
  std::vector<core::ResourceInfo> equivalents;     // for matchPolicy Equivalent
};

struct PolicyAnnotation {
  std::string key;
  std::string value;
  std::string level = "Metadata";  // the audit level that records it
};

struct ValidatingPolicyOutcome {
  std::optional<core::Status> status;  // the request's rejection
  std::vector<std::string> warnings;
  std::vector<PolicyAnnotation> annotations;
};

// Evaluates the ValidatingAdmissionPolicy plugin for one request. Throws when the evaluator
// itself fails (the chain answers 500 with the message).
using ValidatingPolicyDispatcher = std::function<ValidatingPolicyOutcome(
    const ValidatingPolicyInput&, const AdmissionAttributes&)>;

using PolicyInput = ValidatingPolicyInput;

// The MutatingAdmissionPolicy plugin's pass in one round of the mutating chain.
struct MutatingPolicyOutcome {
  std::optional<core::Status> status;      // the request's rejection
  std::optional<nlohmann::json> object;    // the object as the mutations left it
  bool should_reinvoke = false;            // a policy changed the object (SetShouldReinvoke)
  std::vector<std::string> warnings;
  std::vector<PolicyAnnotation> annotations;
};

// Which request and round: the plugin keeps its reinvocation state (reinvocationcontext.go)
// under `request` from round 0 until the reinvocation round or release().
struct MutatingPolicyRound {
  std::string request;
  bool is_reinvoke = false;
};

// Evaluates the MutatingAdmissionPolicy plugin (dispatch throws when the evaluator fails; the
// chain answers 500), and forgets a request's state when it made no reinvocation round.
struct MutatingPolicyDispatcher {
  std::function<MutatingPolicyOutcome(const PolicyInput&, const AdmissionAttributes&,
                                      const MutatingPolicyRound&)>
      dispatch;
  std::function<void(const std::string& request)> release;
  explicit operator bool() const { return static_cast<bool>(dispatch); }
};

// Who writes a policy object, for the registry strategies' authorization: the policies'
// paramKind check and the bindings' paramRef check ask the authorizer about `user`; a binding's
// check reads the policy its spec.policyName names (`bound_policy`, as stored; null when there is
// none, which upstream's check treats as "every resource").
struct PolicyObjectWriter {
  const core::UserInfo& user;
  const nlohmann::json* bound_policy = nullptr;
};

// Create/update of a policy or binding as the registry does it: the object to store (defaulted,
// generation set), or the 422 Status. `old_object` null on create. `writer` null for the starting
// state (no authorization check). Throws when it cannot tell.
using PolicyObjectAdmitter = std::function<std::variant<nlohmann::json, core::Status>(
    std::string_view kind, const nlohmann::json& object, const nlohmann::json* old_object,
    const PolicyObjectWriter* writer)>;

// Whether `object` is a Validating/MutatingAdmissionPolicy or its binding, of
// admissionregistration.k8s.io/v1.
inline bool isAdmissionPolicyObject(const nlohmann::json& object) {
  if (!object.is_object()) return false;
  const auto kind = object.find("kind");
  const auto api_version = object.find("apiVersion");
  return kind != object.end() && api_version != object.end() && kind->is_string() &&
         api_version->is_string() &&
         api_version->get<std::string>() == "admissionregistration.k8s.io/v1" &&
         (kind->get<std::string>() == kValidatingAdmissionPolicyKind ||
          kind->get<std::string>() == kValidatingAdmissionPolicyBindingKind ||
          kind->get<std::string>() == kMutatingAdmissionPolicyKind ||
          kind->get<std::string>() == kMutatingAdmissionPolicyBindingKind);
}

}  // namespace harness::sim
