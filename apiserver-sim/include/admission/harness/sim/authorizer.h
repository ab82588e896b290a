#pragma once

// The simulator's authorizer: kube-apiserver's chain for --authorization-mode=Node,RBAC as it
// decides for the users a simulator sees. The privileged-group authorizer first (the
// system:masters group is allowed everything; pkg/kubeapiserver/authorizer/config.go), then RBAC
// over the Roles, ClusterRoles, RoleBindings and ClusterRoleBindings in the store, as
// k8s.io/kubernetes plugin/pkg/auth/authorizer/rbac/rbac.go (RBACAuthorizer.Authorize, RuleAllows)
// and pkg/registry/rbac/validation/rule.go (DefaultRuleResolver.VisitRulesFor, appliesTo) do it.
// The Node authorizer has no opinion on anyone but kubelets, which the simulator has none of.
//
// Used by the admission chain (every write, when ChainOptions::authorize is set), the REST API
// (reads, watches, non-resource paths, impersonation) and the access reviews.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/admission_review.h"
#include "harness/core/object.h"
#include "harness/core/result.h"
#include "harness/core/status.h"

namespace harness::sim {

class ObjectStore;

// authorizer.Attributes.
struct AuthorizationAttributes {
  core::UserInfo user;
  std::string verb;
  bool resource_request = true;
  // A resource request's.
  std::string namespace_name;
  std::string api_group;
  std::string api_version;
  std::string resource;
  std::string subresource;
  std::string name;
  // A non-resource request's.
  std::string path;
};

struct Authorization {
  enum class Decision { kAllow, kDeny, kNoOpinion };
  Decision decision = Decision::kNoOpinion;
  // "RBAC: allowed by ClusterRoleBinding ..." / "RBAC: <resolution errors>" / "".
  std::string reason;
  [[nodiscard]] bool allowed() const { return decision == Decision::kAllow; }
};

Authorization authorize(const ObjectStore& store, const AuthorizationAttributes& attributes);

// RuleAllows: whether one rbac.authorization.k8s.io/v1 PolicyRule grants the request.
bool ruleAllows(const AuthorizationAttributes& attributes, const nlohmann::json& rule);

// The rules a user has in a namespace, as SelfSubjectRulesReview's status lists them (the RBAC
// authorizer's RulesFor: every rule of every binding that applies, ClusterRoleBindings first, a
// rule with resources in resourceRules, one with nonResourceURLs in nonResourceRules), and the
// resolution errors (a binding to a missing role) as evaluationError.
struct SubjectRules {
  nlohmann::json resource_rules = nlohmann::json::array();
  nlohmann::json non_resource_rules = nlohmann::json::array();
  std::string evaluation_error;
};
SubjectRules rulesFor(const ObjectStore& store, const core::UserInfo& user,
                      const std::string& namespace_name);

// The 403 kube-apiserver answers for a request its authorizer did not allow
// (k8s.io/apiserver pkg/endpoints/handlers/responsewriters/errors.go Forbidden):
// `pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace
// "default"`, with ": <reason>" when the authorizer gave one.
core::Status forbidden(const AuthorizationAttributes& attributes, const std::string& reason);

// --- the bootstrap policy (what kube-apiserver creates at start) ---

// Stores the objects of kube-cel's bootstrapPolicy answer ({"clusterRoles", "clusterRoleBindings",
// "roles", "roleBindings"}), skipping any already stored, then aggregates the cluster roles.
// Returns how many objects were created, or an error naming the field that is not a list of
// objects.
core::Result<std::size_t> seedBootstrapPolicy(ObjectStore& store, const nlohmann::json& policy);

// The clusterrole-aggregation controller (k8s.io/kubernetes
// pkg/controller/clusterroleaggregation syncClusterRole): every ClusterRole with an
// aggregationRule gets the rules of the ClusterRoles its selectors match (by name, each rule
// once), until nothing changes. Returns how many roles it rewrote.
std::size_t aggregateClusterRoles(ObjectStore& store);

}  // namespace harness::sim
