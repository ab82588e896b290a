#pragma once

// The request path of kube-apiserver for a write, from decoded body to stored object
// (docs/admission-chain.md §1.3-§1.6): defaulting, the mutating phase (in-tree plugins, then the
// mutating webhooks, with the reinvocation round of §6), object validation (422), the validating
// phase (in-tree validators, then the validating webhooks in parallel), storage, and one audit
// event. Every decision is recorded so that `--explain` can say why.
//
// Webhook configurations are read from the store (mutatingwebhookconfigurations and
// validatingwebhookconfigurations in admissionregistration.k8s.io), v1-defaulted, as the
// apiserver's informer-fed configuration manager sees them, so creating one through the chain
// affects the next request.

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/audit/annotations.h"
#include "harness/audit/event.h"
#include "harness/audit/policy.h"
#include "harness/core/admission_review.h"
#include "harness/core/metrics.h"
#include "harness/core/status.h"
#include "harness/core/webhook_config.h"
#include "harness/sim/admission_policy.h"
#include "harness/sim/attributes.h"
#include "harness/sim/builtin_plugins.h"
#include "harness/sim/caller.h"
#include "harness/sim/custom_resources.h"
#include "harness/sim/matching.h"
#include "harness/sim/store.h"

namespace harness::sim {

class AdmissionMetrics;

// What a client sends (one REST call that writes).
struct WriteRequest {
  std::string operation;                // CREATE, UPDATE, DELETE, CONNECT
  core::GroupVersionResource resource;  // as called, e.g. apps/v1 deployments
  std::string subresource;
  std::string namespace_name;
  std::string name;  // from the URL; for CREATE the body's name (may be "" with generateName)
  std::optional<nlohmann::json> object;  // the body (CREATE/UPDATE) or the connect options
  // UPDATE: when unset, the stored object is the old object. Set it to admit an update against a
  // given old object without a store lookup.
  std::optional<nlohmann::json> old_object;
  std::optional<nlohmann::json> options;  // Create/Update/DeleteOptions; defaulted when unset
  bool dry_run = false;
  core::UserInfo user_info;  // default: system:admin in system:masters (k3s)
  // Already authorized (the REST API does it before routing, as kube-apiserver's filter does):
  // the chain does not authorize it again (ChainOptions::authorize).
  bool authorized = false;
  // The client's ?timeout= (shortens the request deadline; default 60 s, --request-timeout).
  std::optional<std::chrono::milliseconds> timeout;
  // For the audit event.
  std::string verb;  // create, update, patch, delete; derived from the operation when empty
  std::string request_uri;
  std::string user_agent = "apiserver-sim";
  std::string source_ip = "127.0.0.1";
};

// Outcome of one webhook call attempt that got past matching.
enum class CallOutcome {
  kAllowed,             // allowed, no patch (or an empty one)
  kPatched,             // allowed with a non-empty patch applied
  kDenied,              // allowed: false
  kCallingError,        // calling error, failurePolicy Fail -> 500
  kFailedOpen,          // calling error, failurePolicy Ignore -> continued
  kDryRunUnsupported,   // dry-run request, sideEffects Unknown/Some -> 400, not called
  kApplyError,          // patch apply / decode / object-less patch -> 500 regardless of policy
  kRequestTimeout,      // request deadline exhausted -> 504
};
std::string_view toString(CallOutcome outcome);

struct CallRecord {
  core::WebhookKind kind = core::WebhookKind::kMutating;
  std::string configuration;
  std::string webhook;
  std::string uid;  // the webhook's reinvocation uid
  int round = 0;
  std::size_t index = 0;  // flattened index (mutating) or index among matching (validating)
  std::string failure_policy;
  CallOutcome outcome = CallOutcome::kAllowed;
  bool called = false;  // an HTTP request was sent (false for dry-run rejections)
  std::string url;
  std::string review_version;  // v1 / v1beta1
  std::string request_uid;
  std::string timeout_param;   // as sent ("10s")
  // On the request's simulated clock (caller.h): a stub's declared delay, a real webhook's
  // measured time, the whole budget on a timeout.
  std::chrono::nanoseconds latency{0};
  std::chrono::milliseconds timeout{0};         // the webhook's own timeoutSeconds
  Invocation invocation;
  nlohmann::json request_review;                // what was sent (null when not called)
  std::optional<nlohmann::json> response_review;  // decoded answer, when there was one
  std::optional<nlohmann::json> patch;          // decoded patch ops, when applied
  bool changed = false;                         // semantic change of the object
  std::optional<core::Status> status;           // denial / error Status
  std::string error;                            // calling / apply error text
  std::vector<std::string> warnings;
  std::map<std::string, std::string> audit_annotations;  // as returned by the webhook
  int attempts = 0;
};

// Why a webhook was or was not called (one per webhook per round considered).
struct MatchRecord {
  core::WebhookKind kind = core::WebhookKind::kMutating;
  std::string configuration;
  std::string webhook;
  int round = 0;
  std::size_t index = 0;
  MatchResult match;
  // Round 1 only: why the webhook was not reinvoked although it matched.
  std::string reinvocation_note;
};

// An in-tree plugin run.
struct PluginRecord {
  std::string name;
  int round = 0;                // 0, or 1 in the reinvocation pass
  bool validating = false;
  bool changed = false;
  std::optional<core::Status> rejection;
};

// The end of a request: what the client sees, plus everything --explain and the expectations
// need.
struct AdmissionResult {
  bool allowed = false;
  int code = 0;  // HTTP status: 201 created, 200 updated/deleted, or the error's code
  std::optional<core::Status> status;   // the error Status (with kind/apiVersion), when not allowed
  std::optional<nlohmann::json> object;  // the object as stored (or as it would be on dry run)
  // An allowed DELETE: the object is gone (false: it stays, marked as deleting, until its
  // finalizers are removed; a Namespace until the namespace controller has emptied it).
  bool deleted = false;
  std::vector<std::string> warnings;     // Warning headers' texts, deduplicated
  std::vector<MatchRecord> matches;
  std::vector<CallRecord> calls;
  std::vector<PluginRecord> plugins;
  bool reinvoked = false;  // a round 1 happened
  std::string audit_id;
  audit::AnnotationSet annotations;  // every admission annotation with its level
  std::optional<audit::Event> audit_event;  // the ResponseComplete event (none at level None)
  std::string stage;  // where it ended: "decode", "mutating", "validation", "validating", "storage", "done"
  std::chrono::nanoseconds duration{0};
};

struct ChainOptions {
  // In-tree admission plugins by upstream name (builtin_plugins.h); default: a k3s cluster's.
  std::vector<std::string> plugins = defaultPluginNames();
  // --request-timeout (default 60 s); a client's ?timeout= shortens it.
  std::chrono::milliseconds request_timeout{60'000};
  // Deadlines, ?timeout= and latencies are kept on a simulated clock per request (caller.h,
  // scenarios/FORMAT.md "Time"); this is the real time slept per simulated second of the waits
  // that are simulated (declared delays, Retry-After). It never changes an outcome.
  double time_scale = 1.0;
  // Audit policy; nullopt = no audit events.
  std::optional<audit::Policy> audit_policy;
  // Receives each audit event (ResponseComplete; RequestReceived too when not omitted).
  std::function<void(const audit::Event&)> audit_sink;
  // Evaluates matchConditions (CEL); without one, webhooks with matchConditions error when
  // matched (matching.h).
  MatchConditionEvaluator match_conditions;
  // The ValidatingAdmissionPolicy plugin's decision (CEL, by kube-cel); without one, a request
  // that finds policies and bindings in the store is answered 500 saying so.
  ValidatingPolicyDispatcher validating_policies;
  // The MutatingAdmissionPolicy plugin's pass (CEL, by kube-cel); without one, a request that
  // finds mutating policies and bindings in the store is answered 500 saying so.
  MutatingPolicyDispatcher mutating_policies;
  // Create/update of Validating/MutatingAdmissionPolicy(Binding) objects (validation, defaults); without
  // one they are stored unchecked.
  PolicyObjectAdmitter admit_policy_object;
  // CustomResourceDefinitions and custom resources by apiextensions-apiserver's code (kube-cel):
  // a CRD's validation, a custom resource's decoding, defaulting, validation and pruning. Without
  // it, writes of either are answered 500 naming what is missing.
  CustomResourceCode custom_resources;
  // Plays kube-controller-manager's serviceaccounts controller: a namespace created through the
  // chain gets its "default" ServiceAccount at once (on a cluster, a moment later), so that the
  // ServiceAccount plugin admits the pods a client creates there next.
  bool default_service_accounts = true;
  // Authorize each write as kube-apiserver's authorizer does (authorizer.h: system:masters, then
  // RBAC over the store), answering 403 Forbidden before admission. Set when the store holds
  // RBAC's bootstrap policy (seedBootstrapPolicy); false: every request is allowed.
  bool authorize = false;
};

class AdmissionChain {
 public:
  AdmissionChain(ObjectStore& store, WebhookCaller& caller, core::MetricsRegistry& metrics,
                 ChainOptions options);
  ~AdmissionChain();
  AdmissionChain(const AdmissionChain&) = delete;
  AdmissionChain& operator=(const AdmissionChain&) = delete;

  // Admits and, unless dry run or rejected, stores. Never throws.
  AdmissionResult handle(const WriteRequest& request);

  // A scenario's starting object as kube-apiserver stores a create made before any webhook or
  // admission policy exists (the real backend POSTs them first): defaulted, the in-tree mutating
  // plugins (ServiceAccount, DefaultTolerationSeconds, Priority...), then the strategy's
  // PrepareForCreate. Returned, not stored; no webhook, audit event or metric. A plugin's
  // rejection is the error, as the real backend's POST fails.
  core::Result<nlohmann::json> admitStartingObject(const core::GroupVersionResource& resource,
                                                   nlohmann::json object);

  // Records an audit event for a request that does not go through admission (GET, LIST from the
  // REST API), if the policy asks for one.
  void auditRead(const std::string& verb, const core::GroupVersionResource& resource,
                 const std::string& namespace_name, const std::string& name,
                 const core::UserInfo& user, const std::string& request_uri, int code,
                 const std::optional<nlohmann::json>& response_object);

  [[nodiscard]] const ChainOptions& options() const { return options_; }
  // Replaces the in-tree plugins (names as in ChainOptions::plugins).
  core::Result<void> setPlugins(const std::vector<std::string>& names);
  void setTimeScale(double scale) { options_.time_scale = scale; }

  // The ordered webhooks the next request would see, and the configuration errors met when
  // reading them from the store (an invalid stored configuration is skipped with an error here).
  [[nodiscard]] std::vector<HookEntry> mutatingHooks() const;
  [[nodiscard]] std::vector<HookEntry> validatingHooks() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
  ChainOptions options_;
};

// The default client identity: kubectl with the admin kubeconfig of a k3s cluster.
core::UserInfo defaultAdminUser();

// What the serviceaccounts controller does for a new namespace: creates its "default"
// ServiceAccount unless it exists.
void createDefaultServiceAccount(ObjectStore& store, const std::string& namespace_name);

}  // namespace harness::sim
