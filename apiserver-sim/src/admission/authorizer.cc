// kube-apiserver's authorizer for the simulator (see the header). Followed, k8s.io/kubernetes
// v1.37.2:
//   plugin/pkg/auth/authorizer/rbac/rbac.go     RBACAuthorizer.Authorize, authorizingVisitor,
//                                               RuleAllows, RulesFor
//   pkg/apis/rbac/v1/evaluation_helpers.go      VerbMatches, APIGroupMatches, ResourceMatches
//                                               ("*", "pods/status", "*/scale"),
//                                               ResourceNameMatches, NonResourceURLMatches
//   pkg/registry/rbac/validation/rule.go        VisitRulesFor (ClusterRoleBindings, then the
//                                               RoleBindings of the namespace), appliesTo,
//                                               GetRoleReferenceRules, the describers
//   pkg/controller/clusterroleaggregation       syncClusterRole
// and k8s.io/apiserver pkg/endpoints/handlers/responsewriters/errors.go ForbiddenStatusError.

#include "harness/sim/authorizer.h"

#include <algorithm>
#include <set>
#include <variant>

#include <fmt/format.h>

#include "harness/core/label_selector.h"
#include "harness/go/strconv.h"
#include "harness/sim/store.h"

namespace harness::sim {
namespace {

using json = nlohmann::json;

const core::GroupResource kRoles{"rbac.authorization.k8s.io", "roles"};
const core::GroupResource kClusterRoles{"rbac.authorization.k8s.io", "clusterroles"};
const core::GroupResource kRoleBindings{"rbac.authorization.k8s.io", "rolebindings"};
const core::GroupResource kClusterRoleBindings{"rbac.authorization.k8s.io", "clusterrolebindings"};

std::vector<std::string> strings(const json& object, const char* key) {
  std::vector<std::string> out;
  if (!object.is_object()) return out;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_array()) return out;
  for (const auto& value : *it) {
    if (value.is_string()) out.push_back(value.get<std::string>());
  }
  return out;
}

std::string text(const json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string metadataField(const json& object, const char* key) {
  return object.is_object() ? text(object.value("metadata", json::object()), key) : std::string();
}

bool contains(const std::vector<std::string>& values, const std::string& value) {
  return std::find(values.begin(), values.end(), value) != values.end();
}

bool verbMatches(const json& rule, const std::string& verb) {
  const auto verbs = strings(rule, "verbs");
  return contains(verbs, "*") || contains(verbs, verb);
}

bool apiGroupMatches(const json& rule, const std::string& group) {
  const auto groups = strings(rule, "apiGroups");
  return contains(groups, "*") || contains(groups, group);
}

bool resourceMatches(const json& rule, const std::string& combined,
                     const std::string& subresource) {
  for (const auto& resource : strings(rule, "resources")) {
    if (resource == "*" || resource == combined) return true;
    if (subresource.empty()) continue;
    // "*/<subresource>"
    if (resource.size() == subresource.size() + 2 && resource.rfind("*/", 0) == 0 &&
        resource.compare(2, std::string::npos, subresource) == 0) {
      return true;
    }
  }
  return false;
}

bool resourceNameMatches(const json& rule, const std::string& name) {
  const auto names = strings(rule, "resourceNames");
  return names.empty() || contains(names, name);
}

bool nonResourceUrlMatches(const json& rule, const std::string& path) {
  for (const auto& url : strings(rule, "nonResourceURLs")) {
    if (url == "*" || url == path) return true;
    if (!url.empty() && url.back() == '*') {
      // strings.TrimRight(ruleURL, "*")
      const std::string prefix = url.substr(0, url.find_last_not_of('*') + 1);
      if (path.rfind(prefix, 0) == 0) return true;
    }
  }
  return false;
}

// appliesToUser: the index of the first subject naming the user, or -1.
int appliesTo(const core::UserInfo& user, const json& binding, const std::string& namespace_name) {
  const json subjects = binding.is_object() ? binding.value("subjects", json::array())
                                            : json::array();
  if (!subjects.is_array()) return -1;
  for (std::size_t i = 0; i < subjects.size(); ++i) {
    const json& subject = subjects[i];
    const std::string kind = text(subject, "kind");
    const std::string name = text(subject, "name");
    bool applies = false;
    if (kind == "User") {
      applies = user.username == name;
    } else if (kind == "Group") {
      applies = contains(user.groups, name);
    } else if (kind == "ServiceAccount") {
      // The binding's namespace when the subject names none (a RoleBinding's local accounts).
      std::string sa_namespace = text(subject, "namespace");
      if (sa_namespace.empty()) sa_namespace = namespace_name;
      applies = !sa_namespace.empty() &&
                user.username == fmt::format("system:serviceaccount:{}:{}", sa_namespace, name);
    }
    if (applies) return static_cast<int>(i);
  }
  return -1;
}

// describeSubject.
std::string describeSubject(const json& subject, const std::string& binding_namespace) {
  const std::string kind = text(subject, "kind");
  std::string name = text(subject, "name");
  if (kind == "ServiceAccount") {
    const std::string ns = text(subject, "namespace");
    name += "/" + (ns.empty() ? binding_namespace : ns);
  }
  return kind + " " + go::quote(name);
}

// One applying binding's rules, or the error resolving its roleRef.
struct BindingRules {
  std::string source;  // the describer's String()
  json rules = json::array();
  std::string error;
};

// GetRoleReferenceRules.
BindingRules roleReferenceRules(const ObjectStore& store, const json& binding,
                                const std::string& binding_namespace) {
  BindingRules out;
  const json ref = binding.value("roleRef", json::object());
  const std::string kind = text(ref, "kind");
  const std::string name = text(ref, "name");
  std::optional<json> role;
  if (kind == "Role") {
    role = store.get(kRoles, binding_namespace, name);
    if (!role) out.error = "role.rbac.authorization.k8s.io " + go::quote(name) + " not found";
  } else if (kind == "ClusterRole") {
    role = store.get(kClusterRoles, "", name);
    if (!role) {
      out.error = "clusterrole.rbac.authorization.k8s.io " + go::quote(name) + " not found";
    }
  } else {
    out.error = "unsupported role reference kind: " + go::quote(kind);
  }
  if (role && role->contains("rules") && (*role)["rules"].is_array()) out.rules = (*role)["rules"];
  return out;
}

// VisitRulesFor: `visit(source, rule)` for every rule that applies, ClusterRoleBindings first,
// then the namespace's RoleBindings; `fail(error)` for each binding whose role cannot be read.
// Stops when visit returns false.
template <class Visit, class Fail>
void visitRulesFor(const ObjectStore& store, const core::UserInfo& user,
                   const std::string& namespace_name, Visit&& visit, Fail&& fail) {
  for (const json& binding : store.list(kClusterRoleBindings)) {
    const int subject = appliesTo(user, binding, "");
    if (subject < 0) continue;
    BindingRules rules = roleReferenceRules(store, binding, "");
    if (!rules.error.empty()) {
      fail(rules.error);
      continue;
    }
    const json ref = binding.value("roleRef", json::object());
    const std::string source = fmt::format(
        "ClusterRoleBinding {} of {} {} to {}", go::quote(metadataField(binding, "name")),
        text(ref, "kind"), go::quote(text(ref, "name")),
        describeSubject(binding["subjects"][static_cast<std::size_t>(subject)], ""));
    for (const json& rule : rules.rules) {
      if (!visit(source, rule)) return;
    }
  }
  if (namespace_name.empty()) return;
  for (const json& binding : store.list(kRoleBindings, namespace_name)) {
    const int subject = appliesTo(user, binding, namespace_name);
    if (subject < 0) continue;
    BindingRules rules = roleReferenceRules(store, binding, namespace_name);
    if (!rules.error.empty()) {
      fail(rules.error);
      continue;
    }
    const json ref = binding.value("roleRef", json::object());
    const std::string binding_namespace = metadataField(binding, "namespace");
    const std::string source = fmt::format(
        "RoleBinding {} of {} {} to {}",
        go::quote(metadataField(binding, "name") + "/" + binding_namespace), text(ref, "kind"),
        go::quote(text(ref, "name")),
        describeSubject(binding["subjects"][static_cast<std::size_t>(subject)],
                        binding_namespace));
    for (const json& rule : rules.rules) {
      if (!visit(source, rule)) return;
    }
  }
}

// utilerrors.NewAggregate(errs).Error(): one message alone, several as "[a, b]" (duplicates
// dropped).
std::string aggregate(const std::vector<std::string>& errors) {
  std::vector<std::string> unique;
  for (const auto& error : errors) {
    if (!contains(unique, error)) unique.push_back(error);
  }
  if (unique.size() == 1) return unique.front();
  std::string out = "[";
  for (std::size_t i = 0; i < unique.size(); ++i) {
    if (i > 0) out += ", ";
    out += unique[i];
  }
  return out + "]";
}

// A PolicyRule without empty lists, for equality.Semantic (nil and empty slices are equal).
json normalizedRule(const json& rule) {
  json out = json::object();
  if (!rule.is_object()) return out;
  for (const auto& [key, value] : rule.items()) {
    if (value.is_null() || (value.is_array() && value.empty())) continue;
    out[key] = value;
  }
  return out;
}

std::string htmlEscaped(const std::string& in) {
  std::string out;
  for (char c : in) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '>') {
      out += "&gt;";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

bool ruleAllows(const AuthorizationAttributes& attributes, const json& rule) {
  if (attributes.resource_request) {
    std::string combined = attributes.resource;
    if (!attributes.subresource.empty()) combined += "/" + attributes.subresource;
    return verbMatches(rule, attributes.verb) && apiGroupMatches(rule, attributes.api_group) &&
           resourceMatches(rule, combined, attributes.subresource) &&
           resourceNameMatches(rule, attributes.name);
  }
  return verbMatches(rule, attributes.verb) && nonResourceUrlMatches(rule, attributes.path);
}

Authorization authorize(const ObjectStore& store, const AuthorizationAttributes& attributes) {
  // The privileged-group authorizer kube-apiserver puts first (no reason).
  if (contains(attributes.user.groups, "system:masters")) {
    return {Authorization::Decision::kAllow, ""};
  }
  Authorization out;
  std::vector<std::string> errors;
  visitRulesFor(
      store, attributes.user, attributes.namespace_name,
      [&](const std::string& source, const json& rule) {
        if (!ruleAllows(attributes, rule)) return true;
        out = {Authorization::Decision::kAllow, "RBAC: allowed by " + source};
        return false;
      },
      [&](const std::string& error) { errors.push_back(error); });
  if (out.allowed()) return out;
  // The union of kube-apiserver's authorizers names the authorizer of a no-opinion reason
  // (k8s.io/apiserver pkg/authorization/union/union.go: "<name>: <reason>", "rbac" here).
  if (!errors.empty()) out.reason = "rbac: RBAC: " + aggregate(errors);
  return out;
}

SubjectRules rulesFor(const ObjectStore& store, const core::UserInfo& user,
                      const std::string& namespace_name) {
  SubjectRules out;
  std::vector<std::string> errors;
  visitRulesFor(
      store, user, namespace_name,
      [&](const std::string&, const json& rule) {
        // authorizer.DefaultResourceRuleInfo / DefaultNonResourceRuleInfo, as the review's
        // status encodes them (resourceNames omitted when empty).
        if (!strings(rule, "resources").empty()) {
          json entry = {{"verbs", strings(rule, "verbs")},
                        {"apiGroups", strings(rule, "apiGroups")},
                        {"resources", strings(rule, "resources")}};
          if (auto names = strings(rule, "resourceNames"); !names.empty()) {
            entry["resourceNames"] = names;
          }
          out.resource_rules.push_back(std::move(entry));
        }
        if (auto urls = strings(rule, "nonResourceURLs"); !urls.empty()) {
          out.non_resource_rules.push_back(
              {{"verbs", strings(rule, "verbs")}, {"nonResourceURLs", urls}});
        }
        return true;
      },
      [&](const std::string& error) { errors.push_back(error); });
  if (!errors.empty()) out.evaluation_error = aggregate(errors);
  return out;
}

core::Status forbidden(const AuthorizationAttributes& attributes, const std::string& reason) {
  std::string message;
  const std::string& username = attributes.user.username;
  if (!attributes.resource_request) {
    message = fmt::format("User {} cannot {} path {}", go::quote(username), attributes.verb,
                          go::quote(attributes.path));
  } else {
    std::string resource = attributes.resource;
    if (!attributes.subresource.empty()) resource += "/" + attributes.subresource;
    if (!attributes.namespace_name.empty()) {
      message = fmt::format("User {} cannot {} resource {} in API group {} in the namespace {}",
                            go::quote(username), attributes.verb, go::quote(resource),
                            go::quote(attributes.api_group), go::quote(attributes.namespace_name));
    } else {
      message = fmt::format("User {} cannot {} resource {} in API group {} at the cluster scope",
                            go::quote(username), attributes.verb, go::quote(resource),
                            go::quote(attributes.api_group));
    }
  }
  message = htmlEscaped(message);
  if (!reason.empty()) message += ": " + reason;
  return core::newForbidden({attributes.api_group, attributes.resource}, attributes.name, message);
}

core::Result<std::size_t> seedBootstrapPolicy(ObjectStore& store, const json& policy) {
  if (!policy.is_object()) return core::makeError("bootstrapPolicy: the answer is not an object");
  std::size_t created = 0;
  const std::pair<const char*, const core::GroupResource*> parts[] = {
      {"clusterRoles", &kClusterRoles},
      {"clusterRoleBindings", &kClusterRoleBindings},
      {"roles", &kRoles},
      {"roleBindings", &kRoleBindings}};
  for (const auto& [field, resource] : parts) {
    const auto it = policy.find(field);
    if (it == policy.end() || it->is_null()) continue;
    if (!it->is_array()) {
      return core::makeError(fmt::format("bootstrapPolicy: {} is not a list", field));
    }
    for (std::size_t i = 0; i < it->size(); ++i) {
      const json& object = (*it)[i];
      const std::string name = metadataField(object, "name");
      if (name.empty()) {
        return core::makeError(fmt::format("bootstrapPolicy: {}[{}].metadata.name is missing",
                                           field, i));
      }
      json copy = object;
      copy["metadata"].erase("creationTimestamp");  // null in Go's encoding: the store sets it
      if (store.get(*resource, metadataField(object, "namespace"), name)) continue;
      if (std::holds_alternative<json>(store.create(*resource, std::move(copy)))) ++created;
    }
  }
  aggregateClusterRoles(store);
  return created;
}

std::size_t aggregateClusterRoles(ObjectStore& store) {
  // Worked out on one listing: the roles' labels and selectors do not change, only rules do.
  std::vector<json> roles = store.list(kClusterRoles);  // ordered by name (byName)
  struct Role {
    std::string name;
    core::Labels labels;
    std::vector<core::LabelSelector> selectors;  // aggregating roles only
    bool aggregates = false;
  };
  std::vector<Role> parsed;
  parsed.reserve(roles.size());
  for (const json& role : roles) {
    Role entry;
    entry.name = metadataField(role, "name");
    const json labels = role.value("metadata", json::object()).value("labels", json::object());
    if (labels.is_object()) {
      for (const auto& [key, value] : labels.items()) {
        if (value.is_string()) entry.labels[key] = value.get<std::string>();
      }
    }
    const json rule = role.value("aggregationRule", json());
    const json selectors =
        rule.is_object() ? rule.value("clusterRoleSelectors", json::array()) : json();
    if (selectors.is_array()) {
      entry.aggregates = true;
      for (const json& selector_json : selectors) {
        auto selector = core::LabelSelector::parse(selector_json);
        // The controller skips a selector it cannot parse.
        if (selector.ok()) entry.selectors.push_back(std::move(*selector));
      }
    }
    parsed.push_back(std::move(entry));
  }
  // A role that aggregates aggregated roles (admin takes edit's rules) settles in as many passes
  // as the chain is long; each pass reads the rules as the previous one left them.
  std::vector<bool> changed(roles.size(), false);
  for (std::size_t pass = 0; pass <= roles.size(); ++pass) {
    std::vector<std::pair<std::size_t, json>> updates;
    for (std::size_t r = 0; r < roles.size(); ++r) {
      if (!parsed[r].aggregates) continue;
      json rules = json::array();
      std::vector<json> seen;    // in the order taken
      std::set<json> seen_set;  // the same, for lookups (admin takes hundreds of rules)
      for (const auto& selector : parsed[r].selectors) {
        for (std::size_t o = 0; o < roles.size(); ++o) {
          if (parsed[o].name == parsed[r].name || !selector.matches(parsed[o].labels)) continue;
          const auto other_rules = roles[o].find("rules");
          if (other_rules == roles[o].end() || !other_rules->is_array()) continue;
          for (const json& candidate : *other_rules) {
            json normalized = normalizedRule(candidate);
            if (!seen_set.insert(normalized).second) continue;
            seen.push_back(std::move(normalized));
            rules.push_back(candidate);
          }
        }
      }
      std::vector<json> current;
      const auto current_rules = roles[r].find("rules");
      if (current_rules != roles[r].end() && current_rules->is_array()) {
        for (const json& rule : *current_rules) current.push_back(normalizedRule(rule));
      }
      if (current != seen) updates.emplace_back(r, std::move(rules));
    }
    if (updates.empty()) break;
    for (auto& [r, rules] : updates) {
      roles[r]["rules"] = std::move(rules);
      changed[r] = true;
    }
  }
  std::size_t rewritten = 0;
  for (std::size_t r = 0; r < roles.size(); ++r) {
    if (changed[r] && std::holds_alternative<json>(store.update(kClusterRoles, roles[r]))) {
      ++rewritten;
    }
  }
  return rewritten;
}

}  // namespace harness::sim
