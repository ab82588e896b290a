#pragma once

// The AdmissionReview codec, admission.k8s.io v1 and v1beta1 (k8s.io/api admission/v1/types.go,
// admission/v1beta1/types.go: the same fields and JSON names), the version negotiation and the
// response verification of kubernetes/apiserver
// pkg/admission/plugin/webhook/request/admissionreview.go (CreateAdmissionObjects,
// VerifyAdmissionResponse). See docs/admission-chain.md §4.1 and §4.2.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/object.h"
#include "harness/core/result.h"
#include "harness/core/status.h"

namespace harness::core {

enum class ReviewVersion { kV1, kV1beta1 };

inline constexpr std::string_view kAdmissionGroup = "admission.k8s.io";
inline constexpr std::string_view kAdmissionReviewKind = "AdmissionReview";
inline constexpr std::string_view kPatchTypeJsonPatch = "JSONPatch";

// "admission.k8s.io/v1" / "admission.k8s.io/v1beta1".
std::string_view apiVersionOf(ReviewVersion version);
// "v1" / "v1beta1".
std::string_view versionNameOf(ReviewVersion version);
// The ReviewVersion for an apiVersion string; nullopt when it is neither.
std::optional<ReviewVersion> reviewVersionOf(std::string_view api_version);

// CreateAdmissionObjects: the first entry of the webhook's admissionReviewVersions that the server
// knows ("v1", "v1beta1"); unknown entries are skipped. None known -> the error
// "webhook does not accept known AdmissionReview versions (v1, v1beta1)" (the dispatcher wraps it
// as "could not create admission objects: <err>", a calling error).
Result<ReviewVersion> negotiateReviewVersion(
    const std::vector<std::string>& admission_review_versions);

// authentication/v1 UserInfo: every field omitempty.
struct UserInfo {
  std::string username;
  std::string uid;
  std::vector<std::string> groups;
  std::map<std::string, std::vector<std::string>> extra;

  bool operator==(const UserInfo&) const = default;
};

// AdmissionRequest. object/oldObject/options are runtime.RawExtension: nullopt encodes as JSON
// null (RawExtension.MarshalJSON), and null decodes to nullopt.
struct AdmissionRequest {
  std::string uid;  // "uid", always written
  // metav1.GroupVersionKind / GroupVersionResource (object.h): JSON {group, version,
  // kind|resource}, no omitempty.
  GroupVersionKind kind;                                 // "kind", always written
  GroupVersionResource resource;                         // "resource", always written
  std::string sub_resource;                              // "subResource", omitempty
  std::optional<GroupVersionKind> request_kind;          // "requestKind", omitempty pointer
  std::optional<GroupVersionResource> request_resource;  // "requestResource", omitempty pointer
  std::string request_sub_resource;                      // "requestSubResource", omitempty
  std::string name;                                      // omitempty
  std::string namespace_name;                            // "namespace", omitempty
  std::string operation;                     // CREATE, UPDATE, DELETE, CONNECT; always written
  UserInfo user_info;                        // "userInfo", always written ({} when empty)
  std::optional<nlohmann::json> object;      // "object", null when absent
  std::optional<nlohmann::json> old_object;  // "oldObject", null when absent
  std::optional<bool> dry_run;  // "dryRun", omitempty pointer (the apiserver always sets it)
  std::optional<nlohmann::json> options;  // "options", null when absent

  bool operator==(const AdmissionRequest&) const = default;
};

// AdmissionResponse.
struct AdmissionResponse {
  std::string uid;                        // always written
  bool allowed = false;                   // always written
  std::optional<Status> status;           // Go field Result, JSON "status", omitempty
  std::string patch;                      // raw patch bytes; base64 in JSON; omitted when empty
  std::optional<std::string> patch_type;  // pointer: null/absent = nullopt, "" is kept
  std::map<std::string, std::string> audit_annotations;  // omitempty
  std::vector<std::string> warnings;                     // omitempty

  bool operator==(const AdmissionResponse&) const = default;
};

// AdmissionReview: TypeMeta as written, plus request and/or response (both omitempty pointers).
struct AdmissionReview {
  std::string api_version;
  std::string kind;
  std::optional<AdmissionRequest> request;
  std::optional<AdmissionResponse> response;

  bool operator==(const AdmissionReview&) const = default;
};

// --- encoding (Go encoding/json of the typed review; both versions encode identically) ---
// Keys come out in nlohmann's sorted order rather than Go's struct order; the documents are
// equal as JSON.

nlohmann::json toJson(const AdmissionRequest& request);
nlohmann::json toJson(const AdmissionResponse& response);
nlohmann::json toJson(const AdmissionReview& review);
// The request body as sent: compact JSON; invalid UTF-8 becomes U+FFFD as in Go. Never throws.
std::string encodeAdmissionReview(const AdmissionReview& review);

// --- decoding ---

// Decodes a review as the apiserver decodes a webhook's answer: Go encoding/json semantics (null
// = zero value, unknown keys ignored, patch base64). Errors: "invalid JSON: <parse error at line
// L, column C ...>" for text that is not JSON; "json: cannot unmarshal <value> into Go value of
// type v1.AdmissionReview" for a non-object document; Go's type-error text naming the field
// (e.g. "json: cannot unmarshal string into Go struct field AdmissionResponse.response.allowed of
// type bool"); "illegal base64 data at input byte <n>" for a bad patch. Missing fields are not
// errors here: verifyAdmissionResponse decides what a response must contain.
Result<AdmissionReview> decodeAdmissionReview(std::string_view body);
Result<AdmissionReview> admissionReviewFromJson(const nlohmann::json& json);
// The same, moving the request's object, oldObject and options out of `json` instead of copying
// them (the rest of `json` is left as it was).
Result<AdmissionReview> admissionReviewFromJson(nlohmann::json&& json);

// Decodes what a webhook server receives: additionally requires kind "AdmissionReview", an
// apiVersion of admission.k8s.io/v1 or /v1beta1 and a request (with a uid), each with an error
// naming the field.
Result<AdmissionReview> decodeRequestReview(std::string_view body);
Result<AdmissionReview> requestReviewFromJson(const nlohmann::json& json);
Result<AdmissionReview> requestReviewFromJson(nlohmann::json&& json);  // moving, as above

// --- builders ---

// The review the apiserver sends: apiVersion of `version`, kind AdmissionReview, no response.
AdmissionReview makeRequestReview(ReviewVersion version, AdmissionRequest request);

// The review a webhook server answers with: the request review's apiVersion and kind, and
// `response`; an empty response.uid is filled with the request's uid.
AdmissionReview makeResponseReview(const AdmissionReview& request_review,
                                   AdmissionResponse response);

// --- verification (VerifyAdmissionResponse) ---

// What the dispatcher uses from a verified response.
struct VerifiedResponse {
  std::map<std::string, std::string> audit_annotations;
  bool allowed = false;
  std::string patch;       // raw bytes (a JSON patch document, decoded by the dispatcher)
  std::string patch_type;  // "" when no patch
  std::optional<Status> status;
  std::vector<std::string> warnings;

  bool operator==(const VerifiedResponse&) const = default;
};

// The prefix of the calling error for an invalid response.
inline constexpr std::string_view kInvalidWebhookResponsePrefix =
    "received invalid webhook response: ";

// Checks a decoded response review against the request that was sent (`request_version`,
// `request_uid`) for a mutating or validating webhook. On failure the error message is the bare
// text of VerifyAdmissionResponse, e.g. `expected response.uid="a", got "b"`:
//   v1: "webhook response was absent"; `expected response.uid="<uid>", got "<uid>"`;
//       "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got <g>/<v>,
//       Kind=<k>"; mutating: "webhook returned response.patch but not response.patchType",
//       "webhook returned response.patchType but not response.patch",
//       `webhook returned invalid response.patchType of ""`; validating: "validating webhook may
//       not return response.patch", "validating webhook may not return response.patchType".
//   v1beta1: only "webhook response was absent"; a validating patch is ignored; a mutating
//       non-empty patch is always JSONPatch.
// A patchType other than JSONPatch passes here (the dispatcher rejects it later).
Result<VerifiedResponse> verifyAdmissionResponse(ReviewVersion request_version,
                                                 std::string_view request_uid, bool mutating,
                                                 const AdmissionReview& response_review);

// "received invalid webhook response: <message>", the calling error's reason text.
std::string invalidWebhookResponseText(std::string_view message);

// schema.GroupVersionKind.String() of a review's TypeMeta ("<group>/<version>, Kind=<kind>"),
// with apiVersion parsed as schema.ParseGroupVersion does (an unparseable one gives "/").
std::string groupVersionKindString(std::string_view api_version, std::string_view kind);

}  // namespace harness::core
