// Admission policies in live explain (live_policies.h). Nothing is evaluated here: whether a
// binding matches and what it decides are the plugins' own code (kube-cel runs
// k8s.io/apiserver pkg/admission/plugin/policy/validating and mutating Dispatch). Whether a
// binding matches is asked of the validating plugin's matcher with a probe: a
// ValidatingAdmissionPolicy with the policy's matchConstraints, matchConditions and paramKind,
// bound with the binding's matchResources and paramRef, whose one validation is `false` with a
// marker message: the request is denied with the marker exactly when the policy's matcher, the
// binding's and the matchConditions all admit it and a param is selected (policy_matcher.go
// DefinitionMatches, BindingMatches; generic/policy_dispatcher.go CollectParams).

#include "live_policies.h"

#include <algorithm>
#include <optional>
#include <variant>
#include <exception>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/object.h"
#include "harness/core/unstructured.h"
#include "harness/sim/defaulting.h"
#include "harness/sim/lint_input.h"
#include "harness/sim/matching.h"
#include "harness/sim/webhook_source.h"

namespace harness::sim::live::detail {

namespace {

using nlohmann::json;

constexpr char kGroupVersion[] = "admissionregistration.k8s.io/v1";
constexpr char kProbeMessage[] = "apiserver-sim explain: the binding matches";

struct PolicyKinds {
  const char* policy;
  const char* binding;
  const char* policy_resource;
  const char* binding_resource;
};
constexpr PolicyKinds kKinds[] = {
    {"MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding", "mutatingadmissionpolicies",
     "mutatingadmissionpolicybindings"},
    {"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
     "validatingadmissionpolicies", "validatingadmissionpolicybindings"},
};

const PolicyKinds& kindsOf(bool validating) { return kKinds[validating ? 1 : 0]; }

std::string nameOf(const json& object) { return core::nestedString(object, {"metadata", "name"}); }

const json& specOf(const json& object) {
  static const json kEmpty = json::object();
  auto it = object.find("spec");
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

json copyFields(const json& from, std::initializer_list<const char*> keys) {
  json out = json::object();
  for (const char* key : keys) {
    if (auto it = from.find(key); it != from.end() && !it->is_null()) out[key] = *it;
  }
  return out;
}

// The probe policy: `fields` of the policy's spec (a subset of matchConstraints,
// matchConditions, paramKind), and one validation that is always false with the marker.
json probePolicy(const json& policy, std::initializer_list<const char*> fields,
                 std::optional<json> match_conditions = std::nullopt) {
  json spec = copyFields(specOf(policy), fields);
  if (match_conditions) spec["matchConditions"] = std::move(*match_conditions);
  spec["failurePolicy"] = "Fail";
  spec["validations"] = json::array({{{"expression", "false"}, {"message", kProbeMessage}}});
  return {{"apiVersion", kGroupVersion},
          {"kind", "ValidatingAdmissionPolicy"},
          {"metadata", {{"name", nameOf(policy)}, {"generation", 1}}},
          {"spec", std::move(spec)}};
}

json probeBinding(const json& binding, const std::string& policy_name,
                  std::initializer_list<const char*> fields) {
  json spec = copyFields(specOf(binding), fields);
  spec["policyName"] = policy_name;
  spec["validationActions"] = json::array({"Deny"});
  return {{"apiVersion", kGroupVersion},
          {"kind", "ValidatingAdmissionPolicyBinding"},
          {"metadata", {{"name", nameOf(binding)}, {"generation", 1}}},
          {"spec", std::move(spec)}};
}

PolicyInput inputFor(const ClusterSnapshot& cluster, const AdmissionAttributes& attributes,
                     json policy, json binding) {
  PolicyInput input;
  input.policies.push_back(std::move(policy));
  input.bindings.push_back(std::move(binding));
  input.params = cluster.params;
  std::string namespace_name = attributes.namespace_name;
  if (attributes.kind.group.empty() && attributes.kind.kind == "Namespace") namespace_name.clear();
  if (auto ns = cluster.namespaces.find(namespace_name);
      !namespace_name.empty() && ns != cluster.namespaces.end()) {
    input.namespace_object = ns->second;
  }
  input.equivalents = core::equivalentResources(attributes.resource, attributes.subresource);
  return input;
}

std::string joinStrings(const json& list) {
  std::vector<std::string> out;
  if (list.is_array()) {
    for (const auto& item : list) {
      if (item.is_string()) out.push_back(item.get<std::string>());
    }
  }
  return fmt::format("{}", fmt::join(out, ", "));
}

// What excluded a binding that does not match: which part (the policy's matchConstraints, the
// binding's matchResources, a matchCondition, the paramRef) and the clause's lines.
struct Exclusion {
  std::string part;    // "matchConstraints", "matchResources", "matchConditions", "paramRef"
  std::string clause;  // namespaceSelector, objectSelector, excludeResourceRules, resourceRules,
                       // the matchCondition's name, or "" when not named
  std::string summary;
  std::vector<std::string> deciding;
};

// Whether the validating plugin's matcher admits the request through a probe (the marker's
// denial): the binding matches with these parts.
bool probeMatches(const json& probe_policy, const json& probe_binding,
                  const ClusterSnapshot& cluster, const AdmissionAttributes& attributes,
                  const LiveExplainOptions& options) {
  auto outcome = options.validating_policies(
      inputFor(cluster, attributes, probe_policy, probe_binding), attributes);
  return outcome.status.has_value();
}

// "rule[2]" of shouldCallHook's lines as the policy field's name and original index.
std::string renameRules(const std::string& line, const std::string& field,
                        const std::vector<std::size_t>& original) {
  static const std::regex kRule(R"(rule\[(\d+)\])");
  std::string out;
  auto begin = std::sregex_iterator(line.begin(), line.end(), kRule);
  std::size_t last = 0;
  for (auto it = begin; it != std::sregex_iterator(); ++it) {
    const std::size_t k = std::stoul((*it)[1].str());
    out += line.substr(last, static_cast<std::size_t>(it->position()) - last);
    out += fmt::format("{}[{}]", field, k < original.size() ? original[k] : k);
    last = static_cast<std::size_t>(it->position() + it->length());
  }
  return out + line.substr(last);
}

// The clause of a MatchResources (a policy's matchConstraints, a binding's matchResources) that
// excludes the request, in the order of k8s.io/apiserver pkg/admission/plugin/policy/matching
// matching.go Matches: namespaceSelector, objectSelector (the webhooks' own predicates, which
// it calls: shouldCallHook here), excludeResourceRules, then resourceRules (none: every
// resource) with their resourceNames and matchPolicy (unset: Exact). Empty when none excludes
// it by apiserver-sim's reading.
Exclusion excludingClause(const json& match_resources, const std::string& part,
                          const AdmissionAttributes& attributes,
                          const NamespaceLabelsLookup& lookup) {
  Exclusion out;
  out.part = part;
  const json resources = match_resources.is_object() ? match_resources : json::object();
  // Each rule without its resourceNames; a rule whose resourceNames do not name the request's
  // object cannot match it and is left out (its line says so).
  auto webhookFor = [&](const char* field, bool with_selectors, std::vector<std::size_t>& kept,
                        std::vector<std::string>& named_out) -> std::optional<HookEntry> {
    json rules = json::array();
    const json& listed = resources.value(field, json::array());
    for (std::size_t i = 0; listed.is_array() && i < listed.size(); ++i) {
      json rule = listed[i];
      if (!rule.is_object()) continue;
      const json names = rule.value("resourceNames", json::array());
      rule.erase("resourceNames");
      if (names.is_array() && !names.empty() &&
          std::find(names.begin(), names.end(), json(attributes.name)) == names.end()) {
        named_out.push_back(fmt::format(
            "{}[{}]: its resourceNames {} do not name {}", field, i, names.dump(),
            attributes.name.empty() ? std::string("the object (no name yet: generateName)")
                                    : "\"" + attributes.name + "\""));
        continue;
      }
      kept.push_back(i);
      rules.push_back(std::move(rule));
    }
    if (std::string(field) == "resourceRules" && (!listed.is_array() || listed.empty())) {
      // No resourceRules: every resource (matching.go: len(ResourceRules) == 0 matches).
      rules.push_back({{"operations", {"*"}}, {"apiGroups", {"*"}}, {"apiVersions", {"*"}},
                       {"resources", {"*/*"}}, {"scope", "*"}});
      kept.push_back(0);
    }
    json webhook = {{"name", "probe.apiserver-sim.invalid"},
                    {"clientConfig", {{"url", "https://probe.invalid"}}},
                    {"sideEffects", "None"},
                    {"admissionReviewVersions", {"v1"}},
                    {"rules", std::move(rules)},
                    {"matchPolicy", resources.value("matchPolicy", "Exact")},
                    {"namespaceSelector", json::object()},
                    {"objectSelector", json::object()}};
    if (with_selectors) {
      for (const char* selector : {"namespaceSelector", "objectSelector"}) {
        // A nil selector is {} for policies (policy_matcher.go DefinitionMatches, BindingMatches).
        if (auto it = resources.find(selector); it != resources.end() && !it->is_null()) {
          webhook[selector] = *it;
        }
      }
    }
    auto parsed = core::parseWebhookConfiguration(
        json{{"apiVersion", kGroupVersion},
             {"kind", "ValidatingWebhookConfiguration"},
             {"metadata", {{"name", part}}},
             {"webhooks", json::array({std::move(webhook)})}});
    if (!parsed.ok() || parsed->webhooks.empty()) return std::nullopt;
    core::applyV1Defaults(*parsed);
    return HookEntry{parsed->webhooks[0], part, core::WebhookKind::kValidating, 0};
  };
  std::vector<std::size_t> kept;
  std::vector<std::string> named;
  auto hook = webhookFor("resourceRules", true, kept, named);
  if (!hook) return out;
  const MatchResult match = shouldCallHook(*hook, attributes, lookup);
  if (match.outcome == MatchOutcome::kSkip &&
      (match.skipped_by == "namespaceSelector" || match.skipped_by == "objectSelector")) {
    out.clause = match.skipped_by;
    out.deciding = decidingClauses(match);
    return out;
  }
  std::vector<std::size_t> excluded_kept;
  std::vector<std::string> excluded_named;
  if (auto exclude = webhookFor("excludeResourceRules", false, excluded_kept, excluded_named)) {
    if (!exclude->webhook.rules.empty()) {
      const MatchResult excluded = shouldCallHook(*exclude, attributes, lookup);
      if (excluded.outcome == MatchOutcome::kCall) {
        out.clause = "excludeResourceRules";
        for (const auto& line : decidingClauses(excluded)) {
          if (line.starts_with("rule") || line.starts_with("matchPolicy")) {
            out.deciding.push_back(renameRules(line, "excludeResourceRules", excluded_kept));
          }
        }
        return out;
      }
    }
  }
  if (match.outcome == MatchOutcome::kSkip && match.skipped_by == "rules") {
    out.clause = "resourceRules";
    // With every rule left out for its resourceNames, those lines say it all.
    if (!hook->webhook.rules.empty()) {
      for (const auto& line : decidingClauses(match)) {
        out.deciding.push_back(renameRules(line, "resourceRules", kept));
      }
    }
    out.deciding.insert(out.deciding.end(), named.begin(), named.end());
  }
  return out;
}

// Which part of a binding that does not match excludes the request. Each part is asked of the
// validating plugin's matcher with one probe more than the last, in the plugin's order
// (generic/policy_dispatcher.go: DefinitionMatches, BindingMatches, CollectParams, then the
// matchConditions when the policy is evaluated): the policy's matchConstraints; its binding's
// matchResources; the paramRef (no param selected, parameterNotFoundAction Allow); each
// matchCondition on its own. The clause of a matchConstraints or matchResources is then named
// by excludingClause.
Exclusion excludedBy(const json& policy, const json& binding, const ClusterSnapshot& cluster,
                     const AdmissionAttributes& attributes, const LiveExplainOptions& options) {
  const std::string policy_name = nameOf(policy);
  const NamespaceLabelsLookup lookup = namespaceLabels(cluster);
  auto named = [&](Exclusion found, const std::string& what) {
    if (found.clause.empty()) {
      found.summary = what + " excludes this request (apiserver-sim's reading of its clauses "
                             "names none)";
    } else {
      found.summary = fmt::format("excluded by {}.{}", what, found.clause);
    }
    return found;
  };
  if (!probeMatches(probePolicy(policy, {"matchConstraints"}),
                    probeBinding(binding, policy_name, {}), cluster, attributes, options)) {
    return named(excludingClause(specOf(policy).value("matchConstraints", json::object()),
                                 "matchConstraints", attributes, lookup),
                 "the policy's matchConstraints");
  }
  if (!probeMatches(probePolicy(policy, {"matchConstraints"}),
                    probeBinding(binding, policy_name, {"matchResources"}), cluster, attributes,
                    options)) {
    return named(excludingClause(specOf(binding).value("matchResources", json::object()),
                                 "matchResources", attributes, lookup),
                 "the binding's matchResources");
  }
  if (!probeMatches(probePolicy(policy, {"matchConstraints", "paramKind"}),
                    probeBinding(binding, policy_name, {"matchResources", "paramRef"}), cluster,
                    attributes, options)) {
    Exclusion out;
    out.part = "paramRef";
    out.clause = "paramRef";
    out.summary = fmt::format(
        "its paramRef selects no {} (parameterNotFoundAction Allow: the policy is not "
        "evaluated)",
        core::nestedString(specOf(policy), {"paramKind", "kind"}));
    out.deciding.push_back("paramRef " + specOf(binding).value("paramRef", json()).dump());
    return out;
  }
  const json& conditions = specOf(policy).value("matchConditions", json::array());
  for (std::size_t i = 0; conditions.is_array() && i < conditions.size(); ++i) {
    if (!probeMatches(probePolicy(policy, {"matchConstraints", "paramKind"},
                                  json::array({conditions[i]})),
                      probeBinding(binding, policy_name, {"matchResources", "paramRef"}),
                      cluster, attributes, options)) {
      Exclusion out;
      out.part = "matchConditions";
      out.clause = core::nestedString(conditions[i], {"name"});
      out.summary = "excluded by the policy's matchCondition " + out.clause;
      out.deciding.push_back(fmt::format("matchCondition \"{}\": {}: false", out.clause,
                                         core::nestedString(conditions[i], {"expression"})));
      return out;
    }
  }
  Exclusion out;
  out.summary = "its matchConstraints, the binding's matchResources or matchConditions exclude "
                "this request (no part alone does)";
  return out;
}

// One binding of a policy against the request.
struct BindingDecision {
  Exclusion exclusion;  // not-matched: what excluded it
  bool matched = false;
  std::string decision;  // not-matched, error, deny, warn, admit, mutate, unchanged
  std::string message;
  int code = 0;  // deny: the rejection's HTTP code
  std::vector<std::string> warnings;
  json diff;  // mutate: the JSON patch from the object as sent to the mutated one
  std::string text;
};

BindingDecision decideBinding(bool validating, const json& policy, const json& binding,
                              const ClusterSnapshot& cluster, const AdmissionAttributes& attributes,
                              const LiveExplainOptions& options) {
  BindingDecision out;
  const std::string policy_name = nameOf(policy);
  // Does the binding match? The validating plugin's matcher, on a probe.
  auto probe = options.validating_policies(
      inputFor(cluster, attributes,
               probePolicy(policy, {"matchConstraints", "matchConditions", "paramKind"}),
               probeBinding(binding, policy_name, {"paramRef", "matchResources"})),
      attributes);
  if (!probe.status) {
    out.decision = "not-matched";
    out.exclusion = excludedBy(policy, binding, cluster, attributes, options);
    out.text = "not matched: " + out.exclusion.summary;
    if (!out.exclusion.deciding.empty()) {
      out.text += ": " + fmt::format("{}", fmt::join(out.exclusion.deciding, "; "));
    }
    return out;
  }
  // Denied without the marker: matched, but the binding cannot be evaluated (a param, a
  // matchCondition error); the policy's own failurePolicy decides that below.
  out.matched = true;
  if (validating) {
    auto outcome = options.validating_policies(inputFor(cluster, attributes, policy, binding),
                                               attributes);
    out.warnings = outcome.warnings;
    if (outcome.status) {
      out.decision = "deny";
      out.message = outcome.status->message;
      out.code = outcome.status->code;
      out.text = fmt::format("matched -> denied ({}): {}", outcome.status->code, out.message);
    } else if (!outcome.warnings.empty()) {
      out.decision = "warn";
      out.text = "matched -> admitted with a warning";
    } else {
      out.decision = "admit";
      out.text = "matched -> admitted (every validation passes, or its failures only audited)";
    }
  } else {
    const std::string request = "apiserver-sim-explain/" + policy_name + "/" + nameOf(binding);
    auto outcome = options.mutating_policies.dispatch(
        inputFor(cluster, attributes, policy, binding), attributes, {request, false});
    if (options.mutating_policies.release) options.mutating_policies.release(request);
    out.warnings = outcome.warnings;
    if (outcome.object) {
      // As the chain keeps it (mutating_admission_policy.cc): decoded, defaulted, Go-encoded.
      applyDefaults(*outcome.object);
      normalizeLikeGoEncoding(*outcome.object);
    }
    if (outcome.status) {
      out.decision = "deny";
      out.message = outcome.status->message;
      out.code = outcome.status->code;
      out.text = fmt::format("matched -> rejected ({}): {}", outcome.status->code, out.message);
    } else if (outcome.object && attributes.object && *outcome.object != *attributes.object) {
      out.decision = "mutate";
      out.diff = json::diff(*attributes.object, *outcome.object);
      out.text = "matched -> mutates the object:\n" +
                 indentText(explainPatch(*attributes.object, out.diff, options.explain.color), "  ");
    } else {
      out.decision = "unchanged";
      out.text = "matched -> its mutations leave the object as it is";
    }
  }
  for (const auto& warning : out.warnings) out.text += "\n  warning: " + warning;
  return out;
}

core::Result<std::vector<json>> listKind(const ClusterGet& get, const std::string& resource,
                                         const std::string& kind, const std::string& source) {
  const std::string path = std::string("/apis/") + kGroupVersion + "/" + resource;
  auto listed = get(path);
  if (!listed.ok()) return listed.error().within(source);
  std::vector<json> out;
  if (!*listed) return out;  // not served (a cluster older than the kind's GA)
  const json& items = (**listed).value("items", json::array());
  if (!items.is_array()) return core::makeError(source + ": GET " + path + ": items is not a list");
  for (json item : items) {
    item["apiVersion"] = kGroupVersion;
    item["kind"] = kind;
    out.push_back(std::move(item));
  }
  std::sort(out.begin(), out.end(),
            [](const json& a, const json& b) { return nameOf(a) < nameOf(b); });
  return out;
}

}  // namespace

NamespaceLabelsLookup namespaceLabels(const ClusterSnapshot& cluster) {
  return [&cluster](const std::string& name) -> std::variant<core::StringMap, core::Status> {
    auto it = cluster.namespaces.find(name);
    if (it == cluster.namespaces.end()) {
      return core::newNotFound(core::GroupResource{"", "namespaces"}, name);
    }
    auto labels = core::labelsOf(it->second);
    if (!labels.ok()) return core::newInternalError(labels.error().message);
    return core::StringMap(labels->begin(), labels->end());
  };
}

core::Result<void> readPolicies(const ClusterGet& get, ClusterSnapshot& snapshot) {
  for (const auto& kinds : kKinds) {
    for (const auto& [resource, kind] : {std::pair{kinds.policy_resource, kinds.policy},
                                         std::pair{kinds.binding_resource, kinds.binding}}) {
      auto items = listKind(get, resource, kind, snapshot.source);
      if (!items.ok()) return items.error();
      snapshot.policy_objects.insert(snapshot.policy_objects.end(), items->begin(), items->end());
    }
  }
  // The param informers: one per paramKind, all namespaces.
  for (const auto& object : snapshot.policy_objects) {
    const std::string kind = core::nestedString(object, {"spec", "paramKind", "kind"});
    const std::string api_version = core::nestedString(object, {"spec", "paramKind", "apiVersion"});
    if (kind.empty()) continue;
    if (std::any_of(snapshot.params.begin(), snapshot.params.end(), [&](const PolicyParamKind& p) {
          return p.api_version == api_version && p.kind == kind;
        })) {
      continue;
    }
    PolicyParamKind param{api_version, kind, std::nullopt, {}};
    // A built-in kind, or a custom resource through the cluster's discovery.
    auto gvk = core::GroupVersionKind::fromApiVersionKind(api_version, kind);
    if (gvk.ok()) {
      auto resource = lint::resourceForKind(get, *gvk);
      if (!resource.ok()) return resource.error().within(snapshot.source);
      param.resource = std::move(*resource);
    }
    if (param.resource) {
      const std::string path = lint::listPath(param.resource->resource);
      auto listed = get(path);
      if (!listed.ok()) return listed.error().within(snapshot.source);
      if (*listed) {
        const json& items = (**listed).value("items", json::array());
        if (!items.is_array()) {
          return core::makeError(snapshot.source + ": GET " + path + ": items is not a list");
        }
        for (json item : items) {
          item["apiVersion"] = api_version;
          item["kind"] = kind;
          param.objects.push_back(std::move(item));
        }
      }
    }
    snapshot.params.push_back(std::move(param));
  }
  return {};
}

PolicyNarration explainPolicies(bool validating, const ClusterSnapshot& cluster,
                                const AdmissionAttributes& sent,
                                const LiveExplainOptions& options) {
  PolicyNarration out;
  const auto& kinds = kindsOf(validating);
  const std::string word = validating ? "validating" : "mutating";
  // The plugins see the object as decoded: scheme defaults applied, Go's encoding.
  AdmissionAttributes attributes = sent;
  if (attributes.object) {
    applyDefaults(*attributes.object);
    normalizeLikeGoEncoding(*attributes.object);
  }
  const bool can_evaluate =
      validating ? static_cast<bool>(options.validating_policies)
                 : options.validating_policies && static_cast<bool>(options.mutating_policies);
  for (const auto& policy : cluster.policy_objects) {
    if (core::nestedString(policy, {"kind"}) != kinds.policy) continue;
    const std::string policy_name = nameOf(policy);
    const std::string failure_policy = [&] {
      std::string value = core::nestedString(specOf(policy), {"failurePolicy"});
      return value.empty() ? std::string("Fail") : value;
    }();
    std::vector<const json*> bindings;
    for (const auto& binding : cluster.policy_objects) {
      if (core::nestedString(binding, {"kind"}) == kinds.binding &&
          core::nestedString(specOf(binding), {"policyName"}) == policy_name) {
        bindings.push_back(&binding);
      }
    }
    auto shown = [&](const std::string& id, bool matched) {
      if (options.explain.only_called && !matched) return false;
      if (options.explain.webhook_filter.empty()) return true;
      try {
        return std::regex_search(id, std::regex(options.explain.webhook_filter));
      } catch (const std::regex_error&) {
        return true;
      }
    };
    if (bindings.empty()) {
      if (!shown(policy_name, false)) {
        ++out.hidden;
        continue;
      }
      out.text += fmt::format("{} admission policy {}: no {} names it: never evaluated\n", word,
                              policy_name, kinds.binding);
      out.entries.push_back({{"kind", kinds.policy},
                             {"policy", policy_name},
                             {"binding", nullptr},
                             {"decision", "unbound"}});
      continue;
    }
    for (const json* binding : bindings) {
      const std::string binding_name = nameOf(*binding);
      const std::string id = policy_name + "/" + binding_name;
      std::string header = fmt::format("{} admission policy {} (binding {}; failurePolicy {}", word,
                                       policy_name, binding_name, failure_policy);
      if (validating) {
        header += "; validationActions " +
                  joinStrings(specOf(*binding).value("validationActions", json::array()));
      }
      header += ")";
      json entry = {{"kind", kinds.policy},
                    {"policy", policy_name},
                    {"binding", binding_name},
                    {"failurePolicy", failure_policy}};
      if (!can_evaluate) {
        if (!shown(id, false)) {
          ++out.hidden;
          continue;
        }
        out.text += header + ": not evaluated (" + options.cel_unavailable_reason + ")\n";
        entry["decision"] = "not-evaluated";
        out.entries.push_back(std::move(entry));
        continue;
      }
      BindingDecision decision;
      try {
        decision = decideBinding(validating, policy, *binding, cluster, attributes, options);
      } catch (const std::exception& e) {
        decision.decision = "error";
        decision.message = e.what();
        decision.text = std::string("could not be evaluated: ") + e.what();
      }
      if (!shown(id, decision.matched)) {
        ++out.hidden;
        continue;
      }
      out.text += header + ": " + decision.text + "\n";
      if (decision.decision == "deny") out.denied = true;
      entry["matched"] = decision.matched;
      entry["decision"] = decision.decision;
      if (!decision.message.empty()) entry["message"] = decision.message;
      if (decision.code != 0) entry["code"] = decision.code;
      if (!decision.warnings.empty()) entry["warnings"] = decision.warnings;
      if (!decision.diff.is_null()) entry["patch"] = decision.diff;
      if (decision.decision == "not-matched") {
        entry["excludedBy"] = {{"part", decision.exclusion.part},
                               {"clause", decision.exclusion.clause},
                               {"deciding", decision.exclusion.deciding}};
      }
      out.entries.push_back(std::move(entry));
    }
  }
  return out;
}

}  // namespace harness::sim::live::detail
