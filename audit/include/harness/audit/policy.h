#pragma once

// The audit Policy (audit.k8s.io/v1 Policy, kubernetes/apiserver pkg/apis/audit/v1/types.go):
// loading it like kube-apiserver's --audit-policy-file (pkg/audit/policy/reader.go,
// pkg/apis/audit/validation/validation.go) and deciding the audit level of a request like the
// policy rule evaluator (pkg/audit/policy/checker.go).

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/audit/level.h"
#include "harness/core/field_errors.h"
#include "harness/core/result.h"

namespace harness::audit {

inline constexpr std::string_view kPolicyApiVersion = "audit.k8s.io/v1";
inline constexpr std::string_view kPolicyKind = "Policy";

// GroupResources: resources of one API group ("" = core). `resources` entries may be "pods",
// "pods/log", "*" (every resource and subresource), "pods/*" (pods and all its subresources) or
// "*/scale" (that subresource of any resource). Empty `resources` = everything in the group.
struct GroupResources {
  std::string group;
  std::vector<std::string> resources;
  std::vector<std::string> resource_names;

  bool operator==(const GroupResources&) const = default;
};

struct PolicyRule {
  Level level = Level::kNone;
  std::vector<std::string> users;
  std::vector<std::string> user_groups;
  std::vector<std::string> verbs;
  std::vector<GroupResources> resources;
  std::vector<std::string> namespaces;  // "" matches non-namespaced resources
  std::vector<std::string> non_resource_urls;
  std::vector<Stage> omit_stages;
  std::optional<bool> omit_managed_fields;  // unset: the policy-wide default

  bool operator==(const PolicyRule&) const = default;
};

struct Policy {
  std::vector<PolicyRule> rules;
  std::vector<Stage> omit_stages;
  bool omit_managed_fields = false;
  // Unknown fields, which kube-apiserver accepts after a strict decode fails (it logs "Audit
  // policy contains errors, falling back to lenient decoding"), e.g.
  // `audit-policy.yaml:5:5: unknown field "rules[0].verb"`. Not part of the policy's identity.
  std::vector<std::string> warnings;

  bool operator==(const Policy& other) const {
    return rules == other.rules && omit_stages == other.omit_stages &&
           omit_managed_fields == other.omit_managed_fields;
  }
};

// Parses a Policy from YAML or JSON text (Kubernetes YAML scalar rules, core/yaml.h). Checks, in
// the order kube-apiserver does: decoding (field types), apiVersion audit.k8s.io/v1 and kind
// Policy (the only version kube-apiserver still loads), ValidatePolicy, at least one rule.
// Errors start with the file name and, where a field is concerned, line:column and the field
// path, with apimachinery's field error text, e.g.
//   audit-policy.yaml:9:12: rules[2].level: Unsupported value: "Verbose": supported values:
//       "None", "Metadata", "Request", "RequestResponse"
//   audit-policy.yaml:4:10: rules[0].verbs: expected a list of strings, got string "get"
//   audit-policy.yaml: loaded illegal policy with 0 rules
// Several validation errors are joined with "; ". Never throws.
core::Result<Policy> parsePolicy(std::string_view text, std::string_view file_name);

// ValidatePolicy (validation.go): policy-wide omitStages, then each rule's level,
// nonResourceURLs, resources and omitStages, and resources/namespaces mixed with
// nonResourceURLs. Field paths as Go writes them ("rules[1].resources.group").
core::FieldErrors validatePolicy(const Policy& policy);

// authorizer.Attributes as the policy checker reads them.
struct RequestAttributes {
  std::string user;
  std::vector<std::string> groups;
  // False models a request without user info (attrs.GetUser() == nil): rules with users or
  // userGroups never match it.
  bool has_user = true;
  std::string verb;
  bool resource_request = true;
  std::string api_group, api_version, resource, subresource, namespace_name, name, path;
};

// audit.RequestAuditConfig plus which rule decided.
struct RequestAuditConfig {
  Level level = Level::kNone;
  // Union of the policy's and the matching rule's omitStages (the policy's alone when no rule
  // matched), without duplicates, in Stage order.
  std::vector<Stage> omit_stages;
  // The rule's omitManagedFields when set, else the policy's.
  bool omit_managed_fields = false;
  std::optional<std::size_t> rule_index;  // nullopt: no rule matched

  [[nodiscard]] bool omits(Stage stage) const;
  bool operator==(const RequestAuditConfig&) const = default;
};

// EvaluatePolicyRule: the first matching rule decides; no match gives level None.
RequestAuditConfig evaluatePolicy(const Policy& policy, const RequestAttributes& attributes);

// ruleMatches for one rule (exposed for tests and tools that explain a decision).
bool ruleMatches(const PolicyRule& rule, const RequestAttributes& attributes);

}  // namespace harness::audit
