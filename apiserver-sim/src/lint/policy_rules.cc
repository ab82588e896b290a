// lint's rules on ValidatingAdmissionPolicy and MutatingAdmissionPolicy and their bindings
// (policy_rules.h). What kube-apiserver refuses is an error (its create-time validation,
// k8s.io/kubernetes pkg/apis/admissionregistration/validation/validation.go, run by kube-cel
// when it is built); what it accepts but never or wrongly evaluates is a hint, as the plugins
// evaluate it (k8s.io/apiserver pkg/admission/plugin/policy/generic/policy_dispatcher.go
// CollectParams; validating/dispatcher.go): a binding naming no policy is ignored, a policy no
// binding names is never evaluated, a paramRef selecting no param is the parameterNotFoundAction.

#include "policy_rules.h"

#include <algorithm>
#include <exception>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/label_selector.h"
#include "harness/core/object.h"
#include "harness/core/unstructured.h"

namespace harness::sim::lint::detail {

namespace {

using nlohmann::json;

const std::vector<RuleInfo> kPolicyRules = {
    {"policy-without-binding", "an admission policy no binding names: it is never evaluated"},
    {"binding-without-policy", "a binding naming a policy that does not exist: it does nothing"},
    {"policy-param-not-found", "a binding's paramRef selects no param object"},
    {"policy-params-unset", "a policy with paramKind bound without paramRef: `params` is null"},
    {"policy-fail-open", "an enforcing validating policy with failurePolicy Ignore"},
    {"policy-match-condition-namespace",
     "a policy's matchCondition reads namespaceObject, which is null there"},
};

struct PolicyObject {
  const SourcedPolicyObject* sourced = nullptr;
  std::string kind;
  std::string name;
  bool validating = true;
  bool binding = false;
  [[nodiscard]] const json& spec() const {
    static const json kEmpty = json::object();
    auto it = sourced->object.find("spec");
    return it != sourced->object.end() && it->is_object() ? *it : kEmpty;
  }
};

Finding findingFor(const PolicyObject& object, std::string rule, Severity severity) {
  Finding finding;
  finding.rule = std::move(rule);
  finding.severity = severity;
  finding.kind = object.validating ? core::WebhookKind::kValidating : core::WebhookKind::kMutating;
  finding.configuration = object.name;
  finding.source = object.sourced->source;
  finding.object_kind = object.kind;
  return finding;
}

std::string policyKindOf(bool validating) {
  return std::string(validating ? kValidatingAdmissionPolicyKind : kMutatingAdmissionPolicyKind);
}

std::vector<std::string> stringList(const json& list) {
  std::vector<std::string> out;
  if (!list.is_array()) return out;
  for (const auto& item : list) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

// The fields users most often get wrong, checked as validation.go checks them, for when
// kube-cel (which runs the whole validation) is not built.
std::vector<std::string> basicValidation(const PolicyObject& object) {
  std::vector<std::string> errors;
  if (!object.binding) return errors;
  const json& spec = object.spec();
  if (core::nestedString(spec, {"policyName"}).empty()) {
    errors.push_back("spec.policyName: Required value");
  }
  if (object.validating) {
    const auto actions = stringList(spec.value("validationActions", json()));
    const std::set<std::string> unique(actions.begin(), actions.end());
    if (unique.empty()) {
      errors.push_back("spec.validationActions: Required value: at least one validation action "
                       "is required");
    }
    if (unique.contains("Deny") && unique.contains("Warn")) {
      errors.push_back(fmt::format(
          "spec.validationActions: Invalid value: [{}]: must not contain both Deny and Warn "
          "(repeating the same validation failure information in the API response and headers "
          "serves no purpose)",
          fmt::join(actions, ", ")));
    }
  }
  if (auto ref = spec.find("paramRef"); ref != spec.end() && ref->is_object()) {
    const std::string action = core::nestedString(*ref, {"parameterNotFoundAction"});
    if (action.empty()) {
      errors.push_back("spec.paramRef.parameterNotFoundAction: Required value");
    } else if (action != "Deny" && action != "Allow") {
      errors.push_back(fmt::format("spec.paramRef.parameterNotFoundAction: Unsupported value: "
                                   "\"{}\": supported values: \"Deny\", \"Allow\"",
                                   action));
    }
  }
  return errors;
}

void checkValidation(const std::vector<PolicyObject>& objects, const LintOptions& options,
                     std::vector<Finding>& out) {
  for (const auto& object : objects) {
    std::vector<std::string> errors;
    if (options.validate_policy) {
      try {
        auto admitted = options.validate_policy(object.kind, object.sourced->object, nullptr,
                                               nullptr);
        if (auto* status = std::get_if<core::Status>(&admitted)) errors.push_back(status->message);
      } catch (const std::exception& e) {
        errors = basicValidation(object);
        if (errors.empty()) continue;
      }
    } else {
      errors = basicValidation(object);
    }
    if (errors.empty()) continue;
    Finding finding = findingFor(object, "invalid-configuration", Severity::kError);
    finding.message = fmt::format("kube-apiserver refuses this {}: {}", object.kind,
                                  fmt::join(errors, "; "));
    finding.fix = "correct the fields named; `kubectl apply --dry-run=server` shows the same errors";
    out.push_back(std::move(finding));
  }
}

// "<apiVersion>/<kind>" of a policy's paramKind, "" without one.
std::string paramKindOf(const PolicyObject& policy) {
  const std::string kind = core::nestedString(policy.spec(), {"paramKind", "kind"});
  if (kind.empty()) return "";
  return core::nestedString(policy.spec(), {"paramKind", "apiVersion"}) + "/" + kind;
}

// The param objects a paramRef can select among `facts.objects` ("<apiVersion>/<kind>/<ns>/<name>").
std::size_t selectedParams(const std::string& param_kind, const json& ref,
                           const ClusterFacts& facts) {
  const std::string name = core::nestedString(ref, {"name"});
  const std::string ns = core::nestedString(ref, {"namespace"});
  std::optional<core::LabelSelector> selector;
  if (name.empty()) {
    auto parsed = core::LabelSelector::parse(ref.value("selector", json()));
    if (!parsed.ok()) return 0;
    selector = *parsed;
  }
  std::size_t count = 0;
  const std::string prefix = param_kind + "/";
  for (auto it = facts.objects.lower_bound(prefix);
       it != facts.objects.end() && it->first.starts_with(prefix); ++it) {
    const std::string rest = it->first.substr(prefix.size());
    const auto slash = rest.find('/');
    const std::string object_ns = rest.substr(0, slash);
    const std::string object_name = rest.substr(slash + 1);
    // Without paramRef.namespace a namespaced param is looked up in the request's namespace,
    // which lint does not know: any namespace's counts.
    if (!ns.empty() && object_ns != ns) continue;
    if (selector ? selector->matches(it->second) : object_name == name) ++count;
  }
  return count;
}

void checkBindings(const std::vector<PolicyObject>& objects, const ClusterFacts& facts,
                   std::vector<Finding>& out) {
  std::map<std::pair<bool, std::string>, const PolicyObject*> policies;
  std::set<std::pair<bool, std::string>> bound;
  for (const auto& object : objects) {
    if (!object.binding) policies[{object.validating, object.name}] = &object;
  }
  for (const auto& binding : objects) {
    if (!binding.binding) continue;
    const std::string policy_name = core::nestedString(binding.spec(), {"policyName"});
    if (policy_name.empty()) continue;  // invalid-configuration
    bound.insert({binding.validating, policy_name});
    auto policy = policies.find({binding.validating, policy_name});
    if (policy == policies.end()) {
      Finding finding = findingFor(binding, "binding-without-policy", Severity::kWarning);
      finding.message = fmt::format(
          "it binds {} \"{}\", which {}: kube-apiserver accepts the binding and evaluates "
          "nothing for it, so whatever it was meant to enforce is not enforced",
          policyKindOf(binding.validating), policy_name,
          facts.complete ? "does not exist in the cluster" : "is not among the files read");
      finding.fix = fmt::format("create the {} \"{}\", or correct spec.policyName",
                                policyKindOf(binding.validating), policy_name);
      out.push_back(std::move(finding));
      continue;
    }
    const std::string param_kind = paramKindOf(*policy->second);
    const auto ref = binding.spec().find("paramRef");
    const bool has_ref = ref != binding.spec().end() && ref->is_object();
    if (!param_kind.empty() && !has_ref) {
      Finding finding = findingFor(binding, "policy-params-unset", Severity::kWarning);
      finding.related = {policy->second->kind + "/" + policy_name};
      finding.message = fmt::format(
          "its policy \"{}\" has paramKind {}, but the binding has no paramRef: the policy is "
          "evaluated with `params` null (generic/policy_dispatcher.go CollectParams), and an "
          "expression reading params fails, which its failurePolicy then decides",
          policy_name, param_kind);
      finding.fix = "add spec.paramRef (name or selector, and parameterNotFoundAction)";
      out.push_back(std::move(finding));
      continue;
    }
    if (param_kind.empty() || !has_ref) continue;
    if (selectedParams(param_kind, *ref, facts) > 0) continue;
    // A live cluster's params are all known: every paramKind it serves was listed (custom
    // resources through discovery, param_kinds_served); one it does not serve has none.
    const json& param_spec = policy->second->spec().at("paramKind");
    const auto served = facts.param_kinds_served.find(param_kind);
    const auto gvk = core::GroupVersionKind::fromApiVersionKind(
        core::nestedString(param_spec, {"apiVersion"}), core::nestedString(param_spec, {"kind"}));
    const bool complete = facts.complete && (served != facts.param_kinds_served.end() ||
                                             (gvk.ok() && core::findResourceForKind(*gvk)));
    const bool unserved = complete && served != facts.param_kinds_served.end() && !served->second;
    const bool deny = core::nestedString(*ref, {"parameterNotFoundAction"}) == "Deny";
    const bool fail_closed =
        core::nestedString(policy->second->spec(), {"failurePolicy"}) != "Ignore";
    const std::string name = core::nestedString(*ref, {"name"});
    const std::string what =
        name.empty() ? "no " + param_kind + " matches its paramRef.selector"
                     : fmt::format("{} \"{}\"{} {}", param_kind, name,
                                   core::nestedString(*ref, {"namespace"}).empty()
                                       ? ""
                                       : " in namespace " + core::nestedString(*ref, {"namespace"}),
                                   unserved   ? "does not exist: the cluster does not "
                                                "serve that kind (no API or "
                                                "CustomResourceDefinition defines it)"
                                   : complete ? "does not exist"
                                              : "is not among the files read");
    Finding finding = findingFor(
        binding, "policy-param-not-found",
        !complete ? Severity::kInfo
                        : (deny && fail_closed ? Severity::kError : Severity::kWarning));
    finding.related = {policy->second->kind + "/" + policy_name};
    if (unserved) {
      // policy_source.go calculatePolicyData: the RESTMapping fails, the policy has the
      // configuration error "failed to find resource referenced by paramKind", which its
      // failurePolicy decides for every request it meets.
      finding.severity = fail_closed ? Severity::kError : Severity::kWarning;
      finding.message = fmt::format(
          "{}: the policy cannot be evaluated (\"failed to find resource referenced by "
          "paramKind\"), and failurePolicy {} every request the binding matches",
          what, fail_closed ? "Fail denies" : "Ignore admits");
      finding.fix = fmt::format("install the API or CustomResourceDefinition serving {}, or "
                                "correct the policy's spec.paramKind", param_kind);
      out.push_back(std::move(finding));
      continue;
    }
    if (deny) {
      finding.message = fmt::format(
          "{}: with parameterNotFoundAction Deny every request the binding matches fails with "
          "\"no params found for policy binding with `Deny` parameterNotFoundAction\", and "
          "failurePolicy {} {}",
          what, fail_closed ? "Fail" : "Ignore",
          fail_closed ? "denies it" : "admits it unchecked");
    } else {
      finding.message = fmt::format(
          "{}: with parameterNotFoundAction Allow the policy is silently not evaluated", what);
    }
    finding.fix = fmt::format("create the {} the paramRef names, or correct spec.paramRef",
                              param_kind);
    out.push_back(std::move(finding));
  }
  for (const auto& [key, policy] : policies) {
    if (bound.contains(key)) continue;
    Finding finding = findingFor(*policy, "policy-without-binding", Severity::kWarning);
    finding.message = fmt::format(
        "no {}Binding names it{}: a policy is evaluated only through a binding, so this one "
        "never runs",
        policy->kind, facts.complete ? "" : " (among the files read)");
    finding.fix = fmt::format("create a {}Binding with spec.policyName: {}", policy->kind,
                              policy->name);
    out.push_back(std::move(finding));
  }
}

void checkFailOpen(const std::vector<PolicyObject>& objects, std::vector<Finding>& out) {
  for (const auto& policy : objects) {
    if (policy.binding || !policy.validating) continue;
    if (core::nestedString(policy.spec(), {"failurePolicy"}) != "Ignore") continue;
    std::vector<std::string> enforcing;
    for (const auto& binding : objects) {
      if (!binding.binding || !binding.validating ||
          core::nestedString(binding.spec(), {"policyName"}) != policy.name) {
        continue;
      }
      const auto actions = stringList(binding.spec().value("validationActions", json()));
      if (std::find(actions.begin(), actions.end(), "Deny") != actions.end()) {
        enforcing.push_back(binding.kind + "/" + binding.name);
      }
    }
    if (enforcing.empty()) continue;
    Finding finding = findingFor(policy, "policy-fail-open", Severity::kWarning);
    finding.related = enforcing;
    finding.message =
        "it is bound with validationActions Deny, but failurePolicy Ignore admits a request "
        "unchecked whenever the policy cannot be evaluated: an expression error (a missing "
        "field, a type error), the CEL cost budget exceeded, a missing param or a binding's "
        "misconfiguration";
    finding.fix =
        "set failurePolicy: Fail (the default) for a policy that enforces security, and guard "
        "expressions with has() for optional fields";
    out.push_back(std::move(finding));
  }
}

// Whether `expression` names the identifier `name` (not as part of a longer identifier).
bool namesIdentifier(const std::string& expression, std::string_view name) {
  auto identifierChar = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  for (auto at = expression.find(name); at != std::string::npos;
       at = expression.find(name, at + 1)) {
    const auto end = at + name.size();
    if ((at == 0 || !identifierChar(expression[at - 1])) &&
        (end == expression.size() || !identifierChar(expression[end]))) {
      return true;
    }
  }
  return false;
}

// The policy plugins evaluate matchConditions with no namespace: k8s.io/apiserver
// pkg/admission/plugin/webhook/matchconditions/matcher.go Match passes nil to the filter's
// ForInput, so `namespaceObject` is declared (it compiles) but null, and
// `namespaceObject.metadata...` is an evaluation error that the failurePolicy decides.
void checkMatchConditionNamespace(const std::vector<PolicyObject>& objects,
                                  std::vector<Finding>& out) {
  for (const auto& policy : objects) {
    if (policy.binding) continue;
    const json& conditions = policy.spec().value("matchConditions", json::array());
    if (!conditions.is_array()) continue;
    for (std::size_t i = 0; i < conditions.size(); ++i) {
      const std::string expression = core::nestedString(conditions[i], {"expression"});
      if (!namesIdentifier(expression, "namespaceObject")) continue;
      Finding finding = findingFor(policy, "policy-match-condition-namespace", Severity::kWarning);
      finding.message = fmt::format(
          "spec.matchConditions[{}] ({}) reads namespaceObject, but matchConditions are evaluated "
          "without the namespace: it is null there, so the condition fails and failurePolicy {} "
          "decides every request it meets",
          i, core::nestedString(conditions[i], {"name"}),
          core::nestedString(policy.spec(), {"failurePolicy"}).empty()
              ? std::string("Fail")
              : core::nestedString(policy.spec(), {"failurePolicy"}));
      finding.fix =
          "select namespaces with the binding's matchResources.namespaceSelector, or test "
          "namespaceObject in a validation or mutation, where it is set";
      out.push_back(std::move(finding));
    }
  }
}

}  // namespace

const std::vector<RuleInfo>& policyRules() { return kPolicyRules; }

void checkPolicies(const LintInput& input, const LintOptions& options, std::vector<Finding>& out) {
  std::vector<PolicyObject> objects;
  for (const auto& sourced : input.policies) {
    PolicyObject object;
    object.sourced = &sourced;
    object.kind = core::nestedString(sourced.object, {"kind"});
    object.name = core::nestedString(sourced.object, {"metadata", "name"});
    object.validating = object.kind.starts_with("Validating");
    object.binding = object.kind.ends_with("Binding");
    objects.push_back(std::move(object));
  }
  // A cluster's objects passed kube-apiserver's validation when they were stored.
  if (!input.facts.complete) checkValidation(objects, options, out);
  checkBindings(objects, input.facts, out);
  checkFailOpen(objects, out);
  checkMatchConditionNamespace(objects, out);
}

}  // namespace harness::sim::lint::detail
