#pragma once

// The audit annotations admission writes (docs/admission-chain.md §7.1, §4.7):
//   * the annotation store of admission.Attributes with a level per key
//     (kubernetes/apiserver pkg/admission/attributes.go: AddAnnotationWithLevel, getAnnotations,
//     checkKeyFormat) and how the audit decorator copies it into the event
//     (pkg/admission/audit.go logAnnotations);
//   * the keys and values of the mutating and validating webhook dispatchers
//     (pkg/admission/plugin/webhook/mutating/dispatcher.go: webhookAnnotator,
//     MutationAuditAnnotation, PatchAuditAnnotation; validating/dispatcher.go failed-open key),
//     encoded like Go's encoding/json: compact, HTML-escaped, struct field order.

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/audit/level.h"
#include "harness/core/result.h"

namespace harness::audit {

inline constexpr std::string_view kMutationAnnotationPrefix = "mutation.webhook.admission.k8s.io/";
inline constexpr std::string_view kPatchAnnotationPrefix = "patch.webhook.admission.k8s.io/";
inline constexpr std::string_view kMutationFailedOpenAnnotationPrefix =
    "failed-open.mutation.webhook.admission.k8s.io/";
inline constexpr std::string_view kValidatingFailedOpenAnnotationPrefix =
    "failed-open.validating.webhook.admission.k8s.io/";
// Added by the authorization filter (pkg/endpoints/filters/authorization.go).
inline constexpr std::string_view kAuthorizationDecisionAnnotation =
    "authorization.k8s.io/decision";
inline constexpr std::string_view kAuthorizationReasonAnnotation = "authorization.k8s.io/reason";

// mutation.webhook.admission.k8s.io/round_0_index_1
std::string mutationAnnotationKey(int round, std::size_t index);
// {"configuration":"<cfg>","webhook":"<name>","mutated":<bool>}
std::string mutationAnnotationValue(std::string_view configuration, std::string_view webhook,
                                    bool mutated);

// patch.webhook.admission.k8s.io/round_0_index_1
std::string patchAnnotationKey(int round, std::size_t index);
// {"configuration":"<cfg>","webhook":"<name>","patch":<ops>,"patchType":"JSONPatch"}, where <ops>
// is the decoded patch ([]map[string]*json.RawMessage) marshalled again: the keys of each
// operation sorted, values compacted. Nested objects inside a value come out in nlohmann's
// (sorted) order; use rawPatchAnnotationValue to keep them as the webhook sent them.
std::string patchAnnotationValue(std::string_view configuration, std::string_view webhook,
                                 const nlohmann::json& patch_ops);
// The same from the patch bytes the webhook returned (AdmissionResponse.patch, base64-decoded):
// each value is compacted byte for byte (its key order and number spelling kept), as Go
// re-marshals a json.RawMessage. Errors when the text is not a JSON array of objects/nulls.
core::Result<std::string> rawPatchAnnotationValue(std::string_view configuration,
                                                  std::string_view webhook,
                                                  std::string_view patch_json);

// failed-open.mutation.webhook.admission.k8s.io/round_{round}_index_{index} (mutating) or
// failed-open.validating.webhook.admission.k8s.io/round_{round}_index_{index} (validating: the
// dispatcher always passes round 0 and the index among the matching webhooks). The value is the
// webhook name.
std::string failedOpenAnnotationKey(bool mutating, int round, std::size_t index);

// The key a webhook's response.auditAnnotations[key] is recorded under: "<webhook name>/<key>".
std::string webhookAnnotationKey(std::string_view webhook_name, std::string_view key);

// checkKeyFormat (attributes.go): exactly one "/" and a qualified name (lowercase DNS-1123
// subdomain prefix, name part <= 63 characters of [A-Za-z0-9_.-] starting and ending
// alphanumeric). Keys failing it are dropped by the dispatchers.
bool isValidWebhookAnnotationKey(std::string_view key);
// The error checkKeyFormat returns, with Go's text; ok for a valid key.
core::Result<void> checkAnnotationKey(std::string_view key);

struct LeveledAnnotation {
  std::string value;
  Level level = Level::kMetadata;

  bool operator==(const LeveledAnnotation&) const = default;
};

// The annotations admission plugins add to a request, each with the lowest audit level at which
// it is recorded. Not synchronised: callers that add from several threads (the validating
// webhooks run in parallel) hold their own lock, as Go's attributesRecord does internally.
class AnnotationSet {
 public:
  // AddAnnotationWithLevel. Errors, with Go's texts: an invalid key (checkAnnotationKey); a level
  // below Metadata ("admission annotations are not allowed to be set at audit level lower than
  // Metadata, key: "k", level: None"); a key already present with a different value or level
  // ("admission annotations are not allowd to be overwritten, key:"k", old value: {Metadata a},
  // new value: {Metadata b}") -- the first value stays. Re-adding the same value and level is ok.
  core::Result<void> addWithLevel(std::string_view key, std::string_view value, Level level);

  // The same as a yes/no: false when the annotation was not (and will never be) stored as given.
  bool add(std::string_view key, std::string_view value, Level level = Level::kMetadata);

  // getAnnotations(maxLevel): the annotations whose level is <= `event_level`, i.e. those an
  // audit event at that level records (Metadata: mutation/failed-open/webhook keys; Request and
  // RequestResponse: also patch keys; None: nothing).
  [[nodiscard]] std::map<std::string, std::string> forLevel(Level event_level) const;

  [[nodiscard]] std::optional<std::string> value(std::string_view key) const;
  [[nodiscard]] const std::map<std::string, LeveledAnnotation, std::less<>>& entries() const {
    return entries_;
  }
  [[nodiscard]] bool empty() const { return entries_.empty(); }
  [[nodiscard]] std::size_t size() const { return entries_.size(); }

 private:
  std::map<std::string, LeveledAnnotation, std::less<>> entries_;
};

}  // namespace harness::audit
