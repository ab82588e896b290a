#pragma once

// `apiserver-sim lint`: checks a set of webhook configurations for the ways a webhook set goes
// wrong in a cluster (several injectors on the same pods, a webhook that can lock out its own
// pods or kube-system, timeouts adding up past the request deadline, side effects that make
// dry-run fail, order dependence between mutators, object-selector opt-outs, matchConditions that
// can never be true). Matching is the simulator's own (matching.h): a rule "covers pods" when
// ShouldCallHook's rule predicate matches a pod CREATE, and a selector "can match" when some set
// of labels satisfies it (selector_overlap.h).
//
// Pure apart from `evaluator`: the caller loads the inputs (lint_input.h) and gives CEL.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/label_selector.h"
#include "harness/core/webhook_config.h"
#include "harness/sim/admission_policy.h"
#include "harness/sim/matching.h"

namespace harness::sim::lint {

enum class Severity { kInfo, kWarning, kError };
std::string_view toString(Severity severity);
// "info", "warning", "error"; nullopt for anything else.
std::optional<Severity> parseSeverity(std::string_view text);

// One problem found. `configuration` and `webhook` name the webhook the finding is about
// (empty for findings about the whole set); `related` names the other webhooks involved.
struct Finding {
  std::string rule;  // e.g. "self-lockout"
  Severity severity = Severity::kWarning;
  core::WebhookKind kind = core::WebhookKind::kMutating;
  std::string configuration;
  std::string webhook;
  std::vector<std::string> related;  // "<configuration>/<webhook>"
  std::string message;               // what is wrong and why it matters
  std::string fix;                   // what to change
  std::string source;                // where the configuration came from (file, or the cluster)
  // For findings about an admission policy or binding: its kind ("ValidatingAdmissionPolicy",
  // "MutatingAdmissionPolicyBinding", ...); `configuration` is then its name.
  std::string object_kind;
};

// What lint knows about the cluster besides the configurations.
struct ClusterFacts {
  // Namespace labels as stored (kube-apiserver adds kubernetes.io/metadata.name=<name> to every
  // namespace; lint adds it too when missing).
  std::map<std::string, core::Labels> namespaces;
  // Labels of the pods behind a Service ("<namespace>/<name>": its spec.selector, which every pod
  // it routes to carries), from Services or the pod templates of Deployments that match them.
  std::map<std::string, core::Labels> service_pod_labels;
  // Every other object read, by "<apiVersion>/<kind>/<namespace>/<name>" (namespace empty when
  // cluster-scoped), with its labels: the params a policy binding's paramRef can select.
  std::map<std::string, core::Labels> objects;
  // True when the facts are a live cluster's: an object not in `objects` does not exist (from
  // files it may exist in the cluster the files are applied to).
  bool complete = false;
  // For a live cluster: every paramKind ("<apiVersion>/<kind>") a policy names, true when the
  // cluster serves it (its objects were all listed into `objects`), false when it does not.
  std::map<std::string, bool> param_kinds_served;
};

// An admission policy object (ValidatingAdmissionPolicy, MutatingAdmissionPolicy or a binding of
// either, admissionregistration.k8s.io/v1) and where it was read from.
struct SourcedPolicyObject {
  nlohmann::json object;
  std::string source;
};

// A configuration and where it was read from.
struct SourcedConfiguration {
  core::WebhookConfiguration configuration;
  std::string source;
};

struct LintInput {
  std::vector<SourcedConfiguration> configurations;
  std::vector<SourcedPolicyObject> policies;
  ClusterFacts facts;
};

struct LintOptions {
  // kube-apiserver's --request-timeout (default 1m0s): the deadline every webhook of a request
  // shares (docs/admission-chain.md §4.3).
  std::chrono::seconds request_timeout{60};
  // CEL for matchConditions (kube-cel); empty: the rule says it was skipped and why.
  MatchConditionEvaluator evaluator;
  std::string cel_unavailable_reason;
  // kube-apiserver's create-time validation of policy objects (kube-cel: the registry strategy
  // of k8s.io/kubernetes pkg/registry/admissionregistration); empty: the rule checks the fields
  // users most often get wrong (validationActions, parameterNotFoundAction) itself.
  PolicyObjectAdmitter validate_policy;
};

// Every rule of rules(), on the configurations after v1 defaulting (as the apiserver stores
// them). Findings are ordered by severity (errors first), then configuration order.
std::vector<Finding> lint(const LintInput& input, const LintOptions& options);

struct RuleInfo {
  std::string id;
  std::string summary;
};
// The rules, in the order lint runs them.
const std::vector<RuleInfo>& rules();

// The text report: one block per finding, then a summary line.
// `policies`: the admission policy objects read (policies and bindings), counted when any.
std::string renderText(const std::vector<Finding>& findings, std::size_t configurations,
                       std::size_t webhooks, std::size_t policies = 0);
// {"findings": [...], "summary": {"configurations", "webhooks", "error", "warning", "info"}}.
nlohmann::json renderJson(const std::vector<Finding>& findings, std::size_t configurations,
                          std::size_t webhooks, std::size_t policies = 0);

// 1 when any finding has at least `threshold`'s severity, else 0; `threshold` nullopt ("none")
// always gives 0.
int exitCode(const std::vector<Finding>& findings, std::optional<Severity> threshold);

}  // namespace harness::sim::lint
