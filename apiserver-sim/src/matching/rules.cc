// Rule matching: kubernetes/apiserver pkg/admission/plugin/webhook/predicates/rules/rules.go
// (Matcher.Matches = scope && operation && group && version && resource, splitResource with
// SplitN(x, "/", 2), IsExemptAdmissionConfigurationResource). See docs/admission-chain.md §2.4,
// §3.1.

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/field_errors.h"
#include "harness/go/strconv.h"
#include "harness/sim/matching.h"

namespace harness::sim {
namespace {

constexpr std::string_view kAll = "*";

bool exactOrWildcard(const std::vector<std::string>& items, std::string_view requested) {
  for (const auto& item : items) {
    if (item == kAll || item == requested) return true;
  }
  return false;
}

bool isNamespaceResource(const core::GroupVersionResource& resource) {
  return resource.group.empty() && resource.version == "v1" && resource.resource == "namespaces";
}

bool scopeMatches(const std::optional<std::string>& scope, const AdmissionAttributes& attributes) {
  if (!scope || *scope == core::kScopeAll) return true;
  // attributes.namespace_name is the namespace's own name for requests on namespaces, which are
  // nevertheless cluster-scoped.
  if (*scope == core::kScopeNamespaced) {
    return !isNamespaceResource(attributes.resource) && !attributes.namespace_name.empty();
  }
  if (*scope == core::kScopeCluster) {
    return isNamespaceResource(attributes.resource) || attributes.namespace_name.empty();
  }
  return false;
}

bool operationMatches(const std::vector<std::string>& operations, std::string_view operation) {
  for (const auto& op : operations) {
    if (op == kAll || op == operation) return true;
  }
  return false;
}

bool resourceMatches(const std::vector<std::string>& resources, std::string_view resource,
                     std::string_view subresource) {
  for (const auto& entry : resources) {
    const std::string_view text = entry;
    const auto slash = text.find('/');
    const std::string_view res = text.substr(0, slash);
    const std::string_view sub =
        slash == std::string_view::npos ? std::string_view{} : text.substr(slash + 1);
    const bool res_match = res == kAll || res == resource;
    const bool sub_match = sub == kAll || sub == subresource;
    if (res_match && sub_match) return true;
  }
  return false;
}

std::string list(const std::vector<std::string>& items, bool quoted) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ' ';
    out += quoted ? go::quote(items[i]) : items[i];
  }
  out += ']';
  return out;
}

}  // namespace

RuleEvaluation evaluateRule(const core::RuleWithOperations& rule,
                            const AdmissionAttributes& attributes) {
  RuleEvaluation out;
  out.scope = scopeMatches(rule.scope, attributes);
  out.operation = operationMatches(rule.operations, attributes.operation);
  out.group = exactOrWildcard(rule.api_groups, attributes.resource.group);
  out.version = exactOrWildcard(rule.api_versions, attributes.resource.version);
  out.resource =
      resourceMatches(rule.resources, attributes.resource.resource, attributes.subresource);
  return out;
}

std::string describeRule(const core::RuleWithOperations& rule) {
  std::string out = "operations ";
  out += list(rule.operations, false);
  out += " apiGroups ";
  out += list(rule.api_groups, true);
  out += " apiVersions ";
  out += list(rule.api_versions, false);
  out += " resources ";
  out += list(rule.resources, false);
  out += " scope ";
  out += rule.scope ? *rule.scope : std::string("<unset>");
  return out;
}

bool ruleMatches(const core::RuleWithOperations& rule, const AdmissionAttributes& attributes,
                 std::string* why) {
  const RuleEvaluation evaluation = evaluateRule(rule, attributes);
  if (why == nullptr) return evaluation.matches();

  std::string& text = *why;
  text.clear();
  if (evaluation.matches()) {
    text = describeRule(rule);
    text += ": matches";
  } else if (!evaluation.scope) {
    const std::string& scope = *rule.scope;  // scope() only fails for a set scope
    if (scope == core::kScopeNamespaced) {
      text = "scope Namespaced does not match a cluster-scoped request";
      if (isNamespaceResource(attributes.resource)) text += " (namespaces are cluster-scoped)";
    } else if (scope == core::kScopeCluster) {
      text = "scope Cluster does not match a request in namespace ";
      text += go::quote(attributes.namespace_name);
    } else {
      text = "scope ";
      text += go::quote(scope);
      text += " is not one of \"*\", \"Cluster\", \"Namespaced\"";
    }
  } else if (!evaluation.operation) {
    text = "operation ";
    text += attributes.operation;
    text += " not in ";
    text += list(rule.operations, false);
  } else if (!evaluation.group) {
    text = "apiGroup ";
    text += go::quote(attributes.resource.group);
    text += " not in ";
    text += list(rule.api_groups, true);
  } else if (!evaluation.version) {
    text = "apiVersion ";
    text += go::quote(attributes.resource.version);
    text += " not in ";
    text += list(rule.api_versions, false);
  } else {
    std::string requested = attributes.resource.resource;
    if (!attributes.subresource.empty()) {
      requested += '/';
      requested += attributes.subresource;
    }
    text = "resource ";
    text += go::quote(requested);
    text += " not in ";
    text += list(rule.resources, false);
  }
  return evaluation.matches();
}

bool isExemptFromWebhooks(const AdmissionAttributes& attributes) {
  static constexpr std::array<std::string_view, 6> kExemptKinds = {
      "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
      "ValidatingAdmissionPolicy",      "ValidatingAdmissionPolicyBinding",
      "MutatingAdmissionPolicy",        "MutatingAdmissionPolicyBinding",
  };
  if (attributes.kind.group != core::kAdmissionRegistrationGroup) return false;
  for (const auto kind : kExemptKinds) {
    if (attributes.kind.kind == kind) return true;
  }
  return false;
}

}  // namespace harness::sim
