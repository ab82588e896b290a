// Request -> audit level, following kubernetes/apiserver pkg/audit/policy/checker.go
// (NewPolicyRuleEvaluator, EvaluatePolicyRule, ruleMatches, ruleMatchesResource,
// ruleMatchesNonResource, pathMatches, isOmitManagedFields).

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "harness/audit/policy.h"

namespace harness::audit {
namespace {

bool hasString(const std::vector<std::string>& list, std::string_view value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// unionStages: Go builds a map; we keep Stage order so the result is deterministic.
std::vector<Stage> unionStages(const std::vector<Stage>& a, const std::vector<Stage>& b) {
  std::vector<Stage> result;
  for (Stage stage : {Stage::kRequestReceived, Stage::kResponseStarted, Stage::kResponseComplete,
                      Stage::kPanic}) {
    const bool in_a = std::find(a.begin(), a.end(), stage) != a.end();
    const bool in_b = std::find(b.begin(), b.end(), stage) != b.end();
    if (in_a || in_b) result.push_back(stage);
  }
  return result;
}

bool pathMatches(std::string_view path, std::string_view spec) {
  if (spec == "*" || spec == path) return true;
  // A trailing "*" matches any path starting with the spec without its trailing stars
  // (strings.TrimRight(spec, "*")).
  if (!spec.empty() && spec.back() == '*') {
    std::string_view prefix = spec;
    while (!prefix.empty() && prefix.back() == '*') prefix.remove_suffix(1);
    return path.substr(0, prefix.size()) == prefix;
  }
  return false;
}

bool ruleMatchesNonResource(const PolicyRule& rule, const RequestAttributes& attrs) {
  if (attrs.resource_request) return false;
  return std::any_of(rule.non_resource_urls.begin(), rule.non_resource_urls.end(),
                     [&](const std::string& spec) { return pathMatches(attrs.path, spec); });
}

bool ruleMatchesResource(const PolicyRule& rule, const RequestAttributes& attrs) {
  if (!attrs.resource_request) return false;
  // Non-namespaced resources use the empty string.
  if (!rule.namespaces.empty() && !hasString(rule.namespaces, attrs.namespace_name)) return false;
  if (rule.resources.empty()) return true;

  const std::string& resource = attrs.resource;
  const std::string& subresource = attrs.subresource;
  std::string combined = resource;
  if (!subresource.empty()) combined += "/" + subresource;

  for (const auto& gr : rule.resources) {
    if (gr.group != attrs.api_group) continue;
    if (gr.resources.empty()) return true;
    for (const auto& res : gr.resources) {
      if (!gr.resource_names.empty() && !hasString(gr.resource_names, attrs.name)) continue;
      if (res == combined || res == "*") return true;  // "*" includes subresources
      // "*/subresource"
      if (!subresource.empty() && res.size() > 2 && res.compare(0, 2, "*/") == 0 &&
          std::string_view(res).substr(2) == subresource) {
        return true;
      }
      // "resource/*" also matches the resource itself (no subresource).
      if (res.size() >= 2 && res.compare(res.size() - 2, 2, "/*") == 0 &&
          std::string_view(res).substr(0, res.size() - 2) == resource) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace

bool RequestAuditConfig::omits(Stage stage) const {
  return std::find(omit_stages.begin(), omit_stages.end(), stage) != omit_stages.end();
}

bool ruleMatches(const PolicyRule& rule, const RequestAttributes& attrs) {
  if (!rule.users.empty()) {
    if (!attrs.has_user || !hasString(rule.users, attrs.user)) return false;
  }
  if (!rule.user_groups.empty()) {
    if (!attrs.has_user) return false;
    const bool matched =
        std::any_of(attrs.groups.begin(), attrs.groups.end(),
                    [&](const std::string& g) { return hasString(rule.user_groups, g); });
    if (!matched) return false;
  }
  if (!rule.verbs.empty() && !hasString(rule.verbs, attrs.verb)) return false;

  if (!rule.namespaces.empty() || !rule.resources.empty()) {
    return ruleMatchesResource(rule, attrs);
  }
  if (!rule.non_resource_urls.empty()) return ruleMatchesNonResource(rule, attrs);
  return true;
}

RequestAuditConfig evaluatePolicy(const Policy& policy, const RequestAttributes& attributes) {
  for (std::size_t i = 0; i < policy.rules.size(); ++i) {
    const PolicyRule& rule = policy.rules[i];
    if (!ruleMatches(rule, attributes)) continue;
    RequestAuditConfig config;
    config.level = rule.level;
    config.omit_stages = unionStages(policy.omit_stages, rule.omit_stages);
    config.omit_managed_fields = rule.omit_managed_fields.value_or(policy.omit_managed_fields);
    config.rule_index = i;
    return config;
  }
  RequestAuditConfig config;
  config.level = Level::kNone;  // DefaultAuditLevel
  config.omit_stages = unionStages(policy.omit_stages, {});
  config.omit_managed_fields = policy.omit_managed_fields;
  return config;
}

}  // namespace harness::audit
