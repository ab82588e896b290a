// ShouldCallHook: kubernetes/apiserver pkg/admission/plugin/webhook/generic/webhook.go
// (ShouldCallHook, Dispatch's IsExemptAdmissionConfigurationResource check) and
// pkg/admission/plugin/webhook/matchconditions/matcher.go (Match); error aggregation from
// apimachinery pkg/util/errors/errors.go. See docs/admission-chain.md §2.4, §3, §3.2, §3.6.

#include <exception>
#include <set>
#include <string>
#include <utility>

#include "harness/core/field_errors.h"
#include "harness/go/strconv.h"
#include "harness/sim/failure_policy.h"
#include "harness/sim/matching.h"

namespace harness::sim {
namespace {

// The simulator has no CEL: a webhook with matchConditions cannot be decided without the
// caller's evaluator, and silently calling or skipping it would misrepresent the cluster.
constexpr std::string_view kNoCelEvaluator =
    "matchConditions require a CEL evaluator, which the simulator does not have";

// "apps/v1beta1 deployments", "v1 pods/exec".
std::string resourceText(const core::GroupVersionResource& resource, std::string_view subresource) {
  std::string out = resource.apiVersion();
  out += ' ';
  out += resource.resource;
  if (!subresource.empty()) {
    out += '/';
    out += subresource;
  }
  return out;
}

// schema.GroupVersionKind.Empty().
bool emptyKind(const core::GroupVersionKind& kind) {
  return kind.group.empty() && kind.version.empty() && kind.kind.empty();
}

core::GroupResource groupResource(const core::GroupVersionResource& resource) {
  return core::GroupResource{resource.group, resource.resource};
}

// The Equivalent pass: rules in order, then equivalents in installation order, skipping the
// requested resource (already checked). Returns an error Status for an equivalent without kind.
std::optional<core::Status> matchEquivalent(const core::Webhook& webhook,
                                            const AdmissionAttributes& attributes,
                                            const EquivalentResourceLookup* equivalents,
                                            std::optional<Invocation>& invocation,
                                            std::vector<std::string>& explanation) {
  std::vector<core::ResourceInfo> found;
  try {
    if (equivalents != nullptr && *equivalents) {
      found = (*equivalents)(attributes.resource, attributes.subresource);
    } else {
      found = core::equivalentResources(attributes.resource, attributes.subresource);
    }
  } catch (const std::exception& e) {
    return core::newInternalError(e.what());
  }
  std::vector<core::ResourceInfo> others;
  for (auto& info : found) {
    if (info.resource != attributes.resource) others.push_back(std::move(info));
  }
  if (others.empty()) {
    std::string line = "matchPolicy Equivalent: no other resource is stored with ";
    line += resourceText(attributes.resource, attributes.subresource);
    explanation.push_back(std::move(line));
    return std::nullopt;
  }

  AdmissionAttributes overridden = attributes;
  for (std::size_t i = 0; i < webhook.rules.size(); ++i) {
    for (const auto& equivalent : others) {
      overridden.resource = equivalent.resource;
      if (!ruleMatches(webhook.rules[i], overridden)) continue;
      std::string line = "matchPolicy Equivalent: ";
      line += resourceText(equivalent.resource, attributes.subresource);
      line += " matches rule[";
      line += std::to_string(i);
      line += "]";
      if (emptyKind(equivalent.kind)) {
        std::string err = "unable to convert to ";
        err += equivalent.resource.toString();
        err += ": unknown kind";
        line += " but has no kind: ";
        line += err;
        explanation.push_back(std::move(line));
        return core::newInternalError(err);
      }
      line += " -> kind ";
      line += equivalent.kind.toString();
      explanation.push_back(std::move(line));
      invocation =
          Invocation{equivalent.resource, attributes.subresource, equivalent.kind, true, i};
      return std::nullopt;
    }
  }
  std::string line = "matchPolicy Equivalent: none of ";
  for (std::size_t i = 0; i < others.size(); ++i) {
    if (i > 0) line += ", ";
    line += resourceText(others[i].resource, attributes.subresource);
  }
  line += " matches any rule";
  explanation.push_back(std::move(line));
  return std::nullopt;
}

// What matchconditions.matcher.Match decided.
struct ConditionsVerdict {
  bool matches = true;
  std::optional<std::string> error;  // failurePolicy Fail
};

ConditionsVerdict evaluateConditions(const HookEntry& hook, const AdmissionAttributes& attributes,
                                     const core::GroupVersionKind& invocation_kind,
                                     const MatchConditionEvaluator& evaluator,
                                     std::vector<std::string>& explanation) {
  const auto& webhook = hook.webhook;
  // NewMatcher: a nil failurePolicy is Fail.
  const std::string policy = failurePolicyName(webhook);
  const FailurePolicyDecision decision = decideOnFailure(webhook);
  const bool fail = decision == FailurePolicyDecision::kFailClosed;
  const bool ignore = decision == FailurePolicyDecision::kFailOpen;

  std::optional<std::string> evaluator_error;
  std::vector<std::variant<bool, std::string>> results;
  try {
    results = evaluator(hook, attributes, invocation_kind);
    if (results.size() != webhook.match_conditions.size()) {
      evaluator_error = "match condition evaluator returned " + std::to_string(results.size()) +
                        " results for " + std::to_string(webhook.match_conditions.size()) +
                        " conditions";
    }
  } catch (const std::exception& e) {
    evaluator_error = std::string("match condition evaluator failed: ") + e.what();
  } catch (...) {
    evaluator_error = "match condition evaluator failed";
  }

  if (evaluator_error) {
    // The filter's own error (not an expression's): Fail -> error, Ignore -> no match.
    std::string line = "matchConditions: ";
    line += *evaluator_error;
    if (fail || ignore) {
      line += " (failurePolicy ";
      line += policy;
      line += ")";
    }
    explanation.push_back(std::move(line));
    if (fail) return {false, *evaluator_error};
    if (ignore) return {false, std::nullopt};
    results.clear();  // upstream ranges over no results and matches
  }

  std::vector<std::string> errors;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& condition = webhook.match_conditions[i];
    std::string line = "matchCondition ";
    line += go::quote(condition.name);
    line += ": ";
    if (const auto* text = std::get_if<std::string>(&results[i])) {
      errors.push_back(*text);
      line += "error: ";
      line += *text;
      explanation.push_back(std::move(line));
      continue;
    }
    const bool value = std::get<bool>(results[i]);
    line += value ? "true" : "false";
    explanation.push_back(std::move(line));
    // Any false skips the webhook, whatever errors came before.
    if (!value) return {false, std::nullopt};
  }
  if (!errors.empty()) {
    const std::string aggregate = aggregateErrorMessage(errors);
    std::string line = "matchConditions: evaluation failed";
    if (fail || ignore) {
      line += " with failurePolicy ";
      line += policy;
    }
    line += ": ";
    line += aggregate;
    explanation.push_back(std::move(line));
    if (fail) return {false, aggregate};
    if (ignore) return {false, std::nullopt};
  }
  return {true, std::nullopt};
}

}  // namespace

std::string_view toString(MatchOutcome outcome) {
  switch (outcome) {
    case MatchOutcome::kCall:
      return "call";
    case MatchOutcome::kSkip:
      return "skip";
    case MatchOutcome::kError:
      return "error";
  }
  return "unknown";
}

std::string aggregateErrorMessage(const std::vector<std::string>& errors) {
  if (errors.empty()) return {};
  if (errors.size() == 1) return errors.front();
  std::set<std::string> seen;
  std::string result;
  for (const auto& message : errors) {
    if (!seen.insert(message).second) continue;
    if (seen.size() > 1) result += ", ";
    result += message;
  }
  if (seen.size() == 1) return result;
  std::string out = "[";
  out += result;
  out += ']';
  return out;
}

MatchResult shouldCallHook(const HookEntry& hook, const AdmissionAttributes& attributes,
                           const NamespaceLabelsLookup& namespaces,
                           const MatchConditionEvaluator* conditions,
                           const EquivalentResourceLookup* equivalents) {
  MatchResult out;
  const auto& webhook = hook.webhook;
  auto skip = [&out](std::string_view clause) {
    out.outcome = MatchOutcome::kSkip;
    out.skipped_by = clause;
    return out;
  };
  auto fail = [&out](core::Status status) {
    out.outcome = MatchOutcome::kError;
    out.error = std::move(status);
    return out;
  };

  if (isExemptFromWebhooks(attributes)) {
    std::string line = "exempt: ";
    line += attributes.kind.toString();
    line += " requests are never sent to admission webhooks";
    out.explanation.push_back(std::move(line));
    return skip("exempt");
  }

  const SelectorMatch ns = matchNamespaceSelector(webhook, attributes, namespaces);
  out.explanation.push_back(ns.explanation);
  if (!ns.matches && !ns.error) return skip("namespaceSelector");

  const SelectorMatch obj = matchObjectSelector(webhook, attributes);
  out.explanation.push_back(obj.explanation);
  if (!obj.matches && !obj.error) return skip("objectSelector");

  std::optional<Invocation> invocation;
  if (webhook.rules.empty()) {
    out.explanation.emplace_back("rules: none (a webhook without rules matches nothing)");
  }
  for (std::size_t i = 0; i < webhook.rules.size(); ++i) {
    std::string why;
    const bool matched = ruleMatches(webhook.rules[i], attributes, &why);
    std::string line = "rule[";
    line += std::to_string(i);
    line += matched ? "] " : "]: ";
    line += why;
    out.explanation.push_back(std::move(line));
    if (matched) {
      invocation =
          Invocation{attributes.resource, attributes.subresource, attributes.kind, false, i};
      break;
    }
  }

  if (!invocation) {
    if (webhook.match_policy && *webhook.match_policy == core::kMatchPolicyEquivalent) {
      if (auto error =
              matchEquivalent(webhook, attributes, equivalents, invocation, out.explanation)) {
        return fail(std::move(*error));
      }
    } else if (webhook.match_policy) {
      std::string line = "matchPolicy ";
      line += *webhook.match_policy;
      line += ": equivalent resources are not considered";
      out.explanation.push_back(std::move(line));
    } else {
      out.explanation.emplace_back(
          "matchPolicy unset: equivalent resources are not considered (as Exact)");
    }
  }

  if (!invocation) {
    if (ns.error || obj.error) {
      out.explanation.emplace_back("selector errors are ignored: no rule matches");
    }
    return skip("rules");
  }
  // Selector errors surface only now, for a webhook that applies, and bypass failurePolicy.
  if (ns.error) {
    out.explanation.push_back("namespaceSelector error returned: " + ns.error->message);
    return fail(*ns.error);
  }
  if (obj.error) {
    out.explanation.push_back("objectSelector error returned: " + obj.error->message);
    return fail(*obj.error);
  }

  if (!webhook.match_conditions.empty()) {
    if (conditions == nullptr || !*conditions) {
      std::string line = "matchConditions [";
      for (std::size_t i = 0; i < webhook.match_conditions.size(); ++i) {
        if (i > 0) line += ", ";
        line += webhook.match_conditions[i].name;
      }
      line += "]: require a CEL evaluator, which the simulator does not have";
      out.explanation.push_back(std::move(line));
      return fail(core::newInternalError(kNoCelEvaluator));
    }
    const ConditionsVerdict verdict =
        evaluateConditions(hook, attributes, invocation->kind, *conditions, out.explanation);
    if (verdict.error) {
      return fail(
          core::newForbidden(groupResource(attributes.resource), attributes.name, *verdict.error));
    }
    if (!verdict.matches) return skip("matchConditions");
  }

  out.outcome = MatchOutcome::kCall;
  out.invocation = std::move(invocation);
  return out;
}

}  // namespace harness::sim
