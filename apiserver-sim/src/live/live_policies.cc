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
#include <exception>
#include <regex>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/object.h"
#include "harness/core/unstructured.h"
#include "harness/sim/defaulting.h"

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

json probePolicy(const json& policy) {
  json spec = copyFields(specOf(policy), {"matchConstraints", "matchConditions", "paramKind"});
  spec["failurePolicy"] = "Fail";
  spec["validations"] = json::array({{{"expression", "false"}, {"message", kProbeMessage}}});
  return {{"apiVersion", kGroupVersion},
          {"kind", "ValidatingAdmissionPolicy"},
          {"metadata", {{"name", nameOf(policy)}, {"generation", 1}}},
          {"spec", std::move(spec)}};
}

json probeBinding(const json& binding, const std::string& policy_name) {
  json spec = copyFields(specOf(binding), {"paramRef", "matchResources"});
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

// One binding of a policy against the request.
struct BindingDecision {
  bool matched = false;
  std::string decision;  // not-matched, error, deny, warn, admit, mutate, unchanged
  std::string message;
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
      inputFor(cluster, attributes, probePolicy(policy), probeBinding(binding, policy_name)),
      attributes);
  if (!probe.status) {
    out.decision = "not-matched";
    const bool allow_missing = core::nestedString(specOf(binding),
                                                  {"paramRef", "parameterNotFoundAction"}) ==
                               "Allow";
    out.text = allow_missing
                   ? "not matched (its matchConstraints, the binding's matchResources or "
                     "matchConditions exclude this request), or no param selected "
                     "(parameterNotFoundAction Allow)"
                   : "not matched: its matchConstraints, the binding's matchResources or "
                     "matchConditions exclude this request";
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
    const auto slash = api_version.find('/');
    PolicyParamKind param{api_version, kind, std::nullopt, {}};
    param.resource = core::findResourceForKind(core::GroupVersionKind{
        slash == std::string::npos ? std::string() : api_version.substr(0, slash),
        slash == std::string::npos ? api_version : api_version.substr(slash + 1), kind});
    if (param.resource) {
      const auto& r = param.resource->resource;
      const std::string path = r.group.empty()
                                   ? fmt::format("/api/{}/{}", r.version, r.resource)
                                   : fmt::format("/apis/{}/{}/{}", r.group, r.version, r.resource);
      auto listed = get(path);
      if (!listed.ok()) return listed.error().within(snapshot.source);
      if (*listed) {
        for (json item : (**listed).value("items", json::array())) {
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
      if (!decision.warnings.empty()) entry["warnings"] = decision.warnings;
      if (!decision.diff.is_null()) entry["patch"] = decision.diff;
      out.entries.push_back(std::move(entry));
    }
  }
  return out;
}

}  // namespace harness::sim::live::detail
