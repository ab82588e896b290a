#pragma once

// MutatingWebhookConfiguration / ValidatingWebhookConfiguration, admissionregistration.k8s.io/v1
// (k8s.io/api admissionregistration/v1/types.go), as typed structs parsed from JSON with Go
// encoding/json semantics, v1 defaulting (kubernetes pkg/apis/admissionregistration/v1/
// defaults.go), serialization back to JSON, and validation (kubernetes
// pkg/apis/admissionregistration/validation/validation.go, apiserver pkg/util/webhook/
// validation.go, apimachinery pkg/util/validation). See docs/admission-chain.md §2.1, §9.
//
// Optional fields keep "absent" (a nil Go pointer) apart from set values until applyV1Defaults
// runs, so a simulator can show both the object as written and as stored.

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/field_errors.h"
#include "harness/core/label_selector.h"
#include "harness/core/result.h"
#include "harness/core/status.h"

namespace harness::core {

enum class WebhookKind { kMutating, kValidating };

inline constexpr std::string_view kAdmissionRegistrationGroup = "admissionregistration.k8s.io";
inline constexpr std::string_view kAdmissionRegistrationV1 = "admissionregistration.k8s.io/v1";

// "MutatingWebhookConfiguration" / "ValidatingWebhookConfiguration".
std::string_view kindName(WebhookKind kind);

// Enum values of admissionregistration/v1.
inline constexpr std::string_view kFailurePolicyFail = "Fail";
inline constexpr std::string_view kFailurePolicyIgnore = "Ignore";
inline constexpr std::string_view kMatchPolicyExact = "Exact";
inline constexpr std::string_view kMatchPolicyEquivalent = "Equivalent";
inline constexpr std::string_view kReinvocationNever = "Never";
inline constexpr std::string_view kReinvocationIfNeeded = "IfNeeded";
inline constexpr std::string_view kScopeAll = "*";
inline constexpr std::string_view kScopeCluster = "Cluster";
inline constexpr std::string_view kScopeNamespaced = "Namespaced";
inline constexpr std::string_view kSideEffectsNone = "None";
inline constexpr std::string_view kSideEffectsNoneOnDryRun = "NoneOnDryRun";
inline constexpr std::string_view kSideEffectsSome = "Some";
inline constexpr std::string_view kSideEffectsUnknown = "Unknown";

// ServiceReference: namespace and name always written; path, port omitempty pointers.
struct ServiceReference {
  std::string namespace_name;
  std::string name;
  std::optional<std::string> path;
  std::optional<std::int32_t> port;

  bool operator==(const ServiceReference&) const = default;
};

// WebhookClientConfig: exactly one of url/service (checked by validation).
struct WebhookClientConfig {
  std::optional<std::string> url;
  std::optional<ServiceReference> service;
  std::string ca_bundle;  // raw bytes (PEM), base64 in JSON; empty = none (omitempty)

  bool operator==(const WebhookClientConfig&) const = default;
};

// RuleWithOperations (with the inline Rule); every field omitempty.
struct RuleWithOperations {
  std::vector<std::string> operations;
  std::vector<std::string> api_groups;
  std::vector<std::string> api_versions;
  std::vector<std::string> resources;
  std::optional<std::string> scope;

  bool operator==(const RuleWithOperations&) const = default;
};

struct MatchCondition {
  std::string name;
  std::string expression;

  bool operator==(const MatchCondition&) const = default;
};

// A namespaceSelector/objectSelector: the JSON as written and its parsed form.
struct SelectorField {
  std::optional<nlohmann::json> json;  // nullopt: absent or null (a nil *LabelSelector)
  // LabelSelectorAsSelector(json): nothing() for nil, everything() for {}; when the selector does
  // not parse, `parse_error` holds apimachinery's message (the dispatcher turns it into a 500 when
  // the webhook is matched) and `selector` matches nothing.
  LabelSelector selector = LabelSelector::nothing();
  std::optional<std::string> parse_error;

  // Builds the field from JSON (nullopt or null = nil).
  static SelectorField fromJson(const std::optional<nlohmann::json>& json);
  [[nodiscard]] bool isNil() const { return !json.has_value(); }
};

// One webhook of either kind. `reinvocation_policy` exists only on MutatingWebhook: it is not read
// from, defaulted in or written for a validating configuration.
struct Webhook {
  std::string name;
  WebhookClientConfig client_config;
  std::vector<RuleWithOperations> rules;
  std::optional<std::string> failure_policy;
  std::optional<std::string> match_policy;
  SelectorField namespace_selector;
  SelectorField object_selector;
  std::optional<std::string> side_effects;  // JSON "sideEffects", written as null when absent
  std::optional<std::int32_t> timeout_seconds;
  std::vector<std::string> admission_review_versions;  // written as null when empty
  std::optional<std::string> reinvocation_policy;
  std::vector<MatchCondition> match_conditions;

  // Not part of the API object: "<configName>/<webhookName>/<n>", n counting earlier webhooks of
  // the same name in the same configuration (configuration/mutating_webhook_manager.go); the
  // reinvocation key.
  std::string uid;
};

struct WebhookConfiguration {
  WebhookKind kind = WebhookKind::kMutating;
  nlohmann::json metadata = nlohmann::json::object();  // ObjectMeta as written
  std::string name;                                    // metadata.name
  std::vector<Webhook> webhooks;
};

// Parses a configuration object: kind must be MutatingWebhookConfiguration or
// ValidatingWebhookConfiguration and apiVersion admissionregistration.k8s.io/v1. Errors:
//   * "Object 'Kind' is missing in '<json>'" without kind;
//   * `no matches for kind "<kind>" in version "<apiVersion>"` for any other kind/apiVersion;
//   * Go's type-error text naming the field, e.g. "json: cannot unmarshal string into Go struct
//     field MutatingWebhook.webhooks.timeoutSeconds of type int32";
//   * "illegal base64 data at input byte <n>" for a bad caBundle.
// Webhook UIDs are assigned. No defaulting, no validation.
Result<WebhookConfiguration> parseWebhookConfiguration(const nlohmann::json& json);
Result<WebhookConfiguration> parseWebhookConfiguration(std::string_view json_text);

// Assigns Webhook::uid for every webhook (parse does this; call it after editing names).
void assignWebhookUids(WebhookConfiguration& config);

// SetDefaults_MutatingWebhook / SetDefaults_ValidatingWebhook / SetDefaults_Rule /
// SetDefaults_ServiceReference (v1): failurePolicy Fail, matchPolicy Equivalent,
// namespaceSelector {}, objectSelector {}, timeoutSeconds 10, reinvocationPolicy Never (mutating
// only), rule scope "*", service port 443. Nothing for sideEffects, admissionReviewVersions or the
// service path.
void applyV1Defaults(WebhookConfiguration& config);

// The configuration as Go encoding/json writes the v1 object (apiVersion, kind, metadata as
// stored, webhooks with omitempty rules; sideEffects and admissionReviewVersions always present).
nlohmann::json toJson(const WebhookConfiguration& config);

// --- validation (webhook_validation.cc) ---

enum class ValidationMode { kCreate, kUpdate };

// ValidateMutatingWebhookConfiguration / ValidateValidatingWebhookConfiguration (kCreate) or the
// *Update variants (kUpdate, with `old`): every check in the order Go appends them. The apiserver
// validates the defaulted object, so call applyV1Defaults first to reproduce it. On update a rule
// is relaxed when the old object already broke it: side effects (Unknown/Some allowed if any old
// webhook had them), recognized admissionReviewVersions, unique webhook names, and match
// conditions (not re-checked when unchanged). Label-value relaxation on update is not modelled.
// Metadata: name/generateName are checked (DNS-1123 subdomain); labels, annotations, owner
// references and other ObjectMeta rules are not. A match condition's expression must be
// non-blank, and compile when a MatchConditionCompiler is set (setMatchConditionCompiler).
FieldErrors validateWebhookConfiguration(const WebhookConfiguration& config,
                                         ValidationMode mode = ValidationMode::kCreate,
                                         const WebhookConfiguration* old = nullptr);

// Compiles match-condition expressions as kube-apiserver does when a configuration is created or
// updated (k8s.io/kubernetes pkg/apis/admissionregistration/validation/validation.go
// validateMatchConditionsExpression, convertCELErrorToValidationError). It gets the trimmed,
// non-blank expressions in order, and `stored`: the expressions the old object already had (on
// update), which compile in the more lenient StoredExpressions environment. It returns one
// entry per expression: nullopt when it compiles, else the error (kInvalid, whose value is the
// expression; kRequired; or kInternal). Thrown exceptions become Internal errors.
struct ExpressionError {
  FieldErrorType type = FieldErrorType::kInvalid;
  std::string detail;
};
using MatchConditionCompiler = std::function<std::vector<std::optional<ExpressionError>>(
    const std::vector<std::string>& expressions, const std::vector<std::string>& stored)>;

// The compiler validateWebhookConfiguration uses, for the whole process (CEL lives outside this
// library: apiserver-sim sets one backed by Kubernetes' own CEL code). Set it at start-up,
// before validation runs on other threads; an empty function removes it.
void setMatchConditionCompiler(MatchConditionCompiler compiler);

// `<Kind>.admissionregistration.k8s.io "<name>" is invalid: <errors>` (422 message).
std::string invalidConfigurationMessage(const WebhookConfiguration& config,
                                        const FieldErrors& errors);
// The full 422 Status (errors.NewInvalid) for those errors.
Status invalidConfigurationStatus(const WebhookConfiguration& config, const FieldErrors& errors);

// IsFullyQualifiedName: required, DNS-1123 subdomain, at least three dot-separated segments.
FieldErrors validateFullyQualifiedName(const std::string& path, std::string_view name);

// apiserver pkg/util/webhook ValidateWebhookURL / ValidateWebhookService.
FieldErrors validateWebhookUrl(const std::string& path, std::string_view url, bool force_https);
FieldErrors validateWebhookService(const std::string& path, std::string_view namespace_name,
                                   std::string_view name,
                                   const std::optional<std::string>& url_path, std::int32_t port);

// Whether a caBundle can serve as roots for the webhook client (client-go transport
// rootCertPool): at least one parseable PEM "CERTIFICATE" block. Errors with client-go's text:
// "unable to load root certificates: unable to parse bytes as PEM block" / "... failed to parse
// certificate: <x509 error>" / "... no valid certificate authority data seen". Upstream reports
// this when the webhook is called ("could not get REST client: ..."), not when the configuration
// is created: validation.go does not inspect caBundle.
Result<void> checkCaBundle(std::string_view pem);

}  // namespace harness::core
