#pragma once

// Which webhooks are called for a request, with which resource and kind, and why
// (docs/admission-chain.md §2.4, §3). A port of kubernetes/apiserver
// pkg/admission/plugin/webhook/generic/webhook.go ShouldCallHook and its predicates
// (predicates/rules, predicates/namespace, predicates/object, matchconditions).
//
// Attribute conventions (as the apiserver's RequestInfo fills them): for requests on the
// `namespaces` resource, AdmissionAttributes::namespace_name is the namespace's own name (it may
// be empty on CREATE); for other cluster-scoped resources it is empty.
//
// Pure: no I/O. Namespace labels come from the caller's NamespaceLabelsLookup; CEL is the
// caller's MatchConditionEvaluator.

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/object.h"
#include "harness/core/status.h"
#include "harness/core/webhook_config.h"
#include "harness/sim/attributes.h"
#include "harness/sim/webhook_source.h"

namespace harness::sim {

// Labels of a namespace from the store. On failure returns a Status: a NotFound (404,
// `namespaces "x" not found`) is returned to the client as-is; any other Status is treated as the
// lookup's error and wrapped in a 500 InternalError with its message, as upstream does.
using NamespaceLabelsLookup =
    std::function<std::variant<core::StringMap, core::Status>(const std::string& name)>;

// CEL is not implemented here. The caller may evaluate a webhook's matchConditions (against the
// attributes' objects converted to `invocation_kind`) and return one entry per condition, in
// order: true/false, or the evaluation error text (upstream: "expression '<expr>' resulted in
// error: <cel error>"). A result list whose length differs from the number of conditions is an
// evaluator failure (handled like upstream's filter error: failurePolicy Fail -> 403, Ignore ->
// skip).
using MatchConditionEvaluator = std::function<std::vector<std::variant<bool, std::string>>(
    const HookEntry&, const AdmissionAttributes&, const core::GroupVersionKind& invocation_kind)>;

// The resources stored together with a resource, for one subresource, in API installation order
// (runtime.EquivalentResourceMapper EquivalentResourcesFor + KindFor); may include the resource
// itself. Default: core::equivalentResources (the built-in table).
using EquivalentResourceLookup = std::function<std::vector<core::ResourceInfo>(
    const core::GroupVersionResource& resource, std::string_view subresource)>;

// generic.WebhookInvocation.
struct Invocation {
  core::GroupVersionResource resource;  // what the webhook receives as request.resource
  std::string subresource;
  core::GroupVersionKind kind;  // request.kind (the equivalent kind under Equivalent)
  bool equivalent = false;      // matched through matchPolicy Equivalent
  std::size_t rule_index = 0;   // which rule matched

  bool operator==(const Invocation&) const = default;
};

enum class MatchOutcome { kCall, kSkip, kError };
std::string_view toString(MatchOutcome outcome);

struct MatchResult {
  MatchOutcome outcome = MatchOutcome::kSkip;
  std::optional<Invocation> invocation;  // kCall
  // kError: the Status returned to the client, not subject to failurePolicy: the namespace
  // lookup's 404/500, a 500 for a selector that does not parse, a 500 for an equivalent resource
  // without a kind, a 500 for matchConditions without an evaluator, a 403 for matchConditions
  // errors under failurePolicy Fail.
  std::optional<core::Status> error;
  // For --explain: one line per clause evaluated, in evaluation order.
  std::vector<std::string> explanation;
  // The clause that decided a skip: "exempt", "namespaceSelector", "objectSelector", "rules",
  // "matchConditions"; empty when called or on error.
  std::string skipped_by;
};

// ShouldCallHook for one webhook, in upstream order:
//   0. requests whose kind is exempt (isExemptFromWebhooks) are skipped ("exempt"; upstream
//      Dispatch returns before any webhook);
//   1. namespaceSelector: no match (without error) -> skip;
//   2. objectSelector: no match (without error) -> skip;
//   3. rules, in order, against the request as made;
//   4. matchPolicy Equivalent (only): rules in order x equivalent resources in order (the
//      requested resource excluded); an equivalent without a kind is a 500
//      `Internal error occurred: unable to convert to <gvr>: unknown kind`;
//   5. no rule matched -> skip ("rules"), swallowing any selector error;
//   6. the namespaceSelector's error, then the objectSelector's, returned as-is;
//   7. matchConditions: with no evaluator, a 500 InternalError "matchConditions require a CEL
//      evaluator, which the simulator does not have" (the simulator's own limitation); with one,
//      any false -> skip; else errors -> failurePolicy Fail (or unset) -> 403
//      `<resource>[.<group>] "<name>" is forbidden: <errors>`, Ignore -> skip.
// `conditions` may be null or empty; `equivalents` null means core::equivalentResources.
// Never throws (exceptions from the callbacks become errors).
MatchResult shouldCallHook(const HookEntry& hook, const AdmissionAttributes& attributes,
                           const NamespaceLabelsLookup& namespaces,
                           const MatchConditionEvaluator* conditions = nullptr,
                           const EquivalentResourceLookup* equivalents = nullptr);

// --- rules (predicates/rules/rules.go) ---

// The five clauses of rules.Matcher, each evaluated on its own.
struct RuleEvaluation {
  bool scope = false;
  bool operation = false;
  bool group = false;
  bool version = false;
  bool resource = false;

  [[nodiscard]] bool matches() const { return scope && operation && group && version && resource; }
};

// Evaluates a rule against the request's resource GVR (not its kind), subresource, operation and
// namespace. `*` in resources excludes subresources, `pods/*` also matches `pods`, `*/*` matches
// everything; scope Cluster covers `namespaces` (any subresource) and requests without namespace.
RuleEvaluation evaluateRule(const core::RuleWithOperations& rule,
                            const AdmissionAttributes& attributes);
// All five clauses hold. `why`, when given, receives "<rule>: matches" or the first failing
// clause in upstream order (scope, operation, group, version, resource), e.g.
// `resource "deployments" not in [pods]`.
bool ruleMatches(const core::RuleWithOperations& rule, const AdmissionAttributes& attributes,
                 std::string* why = nullptr);
// `operations [CREATE] apiGroups ["" "apps"] apiVersions [v1] resources [pods] scope *`.
std::string describeRule(const core::RuleWithOperations& rule);

// IsExemptAdmissionConfigurationResource: the request's kind (not resource) is one of the
// admissionregistration.k8s.io webhook configuration or admission policy kinds.
bool isExemptFromWebhooks(const AdmissionAttributes& attributes);

// --- selectors (predicates/namespace/matcher.go, predicates/object/matcher.go) ---

struct SelectorMatch {
  bool matches = false;
  std::optional<core::Status> error;  // surfaced by shouldCallHook only when the rules match
  std::string explanation;            // one line
};

// GetNamespaceLabels: for CREATE/UPDATE of `namespaces` (no subresource), the labels of the
// object itself; otherwise the labels of the namespace named by attributes.namespace_name, from
// `lookup`. Errors: the lookup's NotFound as-is, anything else as a 500 InternalError.
std::variant<core::StringMap, core::Status> namespaceLabelsFor(
    const AdmissionAttributes& attributes, const NamespaceLabelsLookup& lookup);

// MatchNamespaceSelector: cluster-scoped requests other than on `namespaces` always match (the
// selector is ignored); a selector that does not parse is a 500; `{}` matches without a lookup;
// otherwise (including a nil selector, which matches nothing) the namespace labels are looked up.
SelectorMatch matchNamespaceSelector(const core::Webhook& webhook,
                                     const AdmissionAttributes& attributes,
                                     const NamespaceLabelsLookup& lookup);

// MatchObjectSelector: a selector that does not parse is a 500; `{}` matches everything; nil
// matches nothing; otherwise object || oldObject, where an absent object or one without
// ObjectMeta never matches.
SelectorMatch matchObjectSelector(const core::Webhook& webhook,
                                  const AdmissionAttributes& attributes);

// Whether an object (as JSON) has ObjectMeta, i.e. meta.Accessor succeeds: a JSON object whose
// kind is not one of the option kinds without metadata (PodExecOptions, NodeProxyOptions,
// DeleteOptions, ...).
bool hasObjectMeta(const nlohmann::json& object);

// --- matchConditions ---

// utilerrors.NewAggregate(errs).Error(): "" for none, the message for one, otherwise
// "[e1, e2]" with duplicate messages collapsed (and no brackets if only one distinct message).
std::string aggregateErrorMessage(const std::vector<std::string>& errors);

}  // namespace harness::sim
