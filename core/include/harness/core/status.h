#pragma once

// metav1.Status (k8s.io/apimachinery/pkg/apis/meta/v1/types.go) with Go encoding/json field names
// and omitempty rules, and the StatusError constructors of k8s.io/apimachinery/pkg/api/errors
// (errors.go) with their exact messages, reasons and codes. Also how client-go turns a webhook's
// non-2xx HTTP answer into a Status (client-go rest/request.go transformResponse,
// newUnstructuredResponseError, Result.Error). See docs/admission-chain.md §4.5.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/field_errors.h"
#include "harness/core/result.h"

namespace harness::core {

// metav1.StatusSuccess / StatusFailure.
inline constexpr std::string_view kStatusSuccess = "Success";
inline constexpr std::string_view kStatusFailure = "Failure";

// metav1.StatusReason values (types.go).
inline constexpr std::string_view kReasonUnknown = "";
inline constexpr std::string_view kReasonUnauthorized = "Unauthorized";
inline constexpr std::string_view kReasonForbidden = "Forbidden";
inline constexpr std::string_view kReasonNotFound = "NotFound";
inline constexpr std::string_view kReasonAlreadyExists = "AlreadyExists";
inline constexpr std::string_view kReasonConflict = "Conflict";
inline constexpr std::string_view kReasonGone = "Gone";
inline constexpr std::string_view kReasonInvalid = "Invalid";
inline constexpr std::string_view kReasonServerTimeout = "ServerTimeout";
inline constexpr std::string_view kReasonTimeout = "Timeout";
inline constexpr std::string_view kReasonTooManyRequests = "TooManyRequests";
inline constexpr std::string_view kReasonBadRequest = "BadRequest";
inline constexpr std::string_view kReasonMethodNotAllowed = "MethodNotAllowed";
inline constexpr std::string_view kReasonNotAcceptable = "NotAcceptable";
inline constexpr std::string_view kReasonRequestEntityTooLarge = "RequestEntityTooLarge";
inline constexpr std::string_view kReasonUnsupportedMediaType = "UnsupportedMediaType";
inline constexpr std::string_view kReasonInternalError = "InternalError";
inline constexpr std::string_view kReasonExpired = "Expired";
inline constexpr std::string_view kReasonServiceUnavailable = "ServiceUnavailable";

// metav1.CauseType for a response that was not a Status.
inline constexpr std::string_view kCauseUnexpectedServerResponse = "UnexpectedServerResponse";

// The message of the 504 the webhook dispatchers return once the request context is done
// (validating/dispatcher.go: NewTimeoutError("request did not complete within requested
// timeout", 0)).
inline constexpr std::string_view kRequestTimeoutMessage =
    "request did not complete within requested timeout";

// schema.GroupResource; String() is "<resource>" for the core group, else "<resource>.<group>".
struct GroupResource {
  std::string group;
  std::string resource;

  [[nodiscard]] bool empty() const { return group.empty() && resource.empty(); }
  [[nodiscard]] std::string toString() const;
};

// schema.GroupKind; String() is "<kind>" for the core group, else "<kind>.<group>".
struct GroupKind {
  std::string group;
  std::string kind;

  [[nodiscard]] bool empty() const { return group.empty() && kind.empty(); }
  [[nodiscard]] std::string toString() const;
};

// metav1.StatusCause. `type` is the Go field Type, JSON name "reason".
struct StatusCause {
  std::string type;
  std::string message;
  std::string field;

  bool operator==(const StatusCause&) const = default;
};

// metav1.StatusDetails.
struct StatusDetails {
  std::string name;
  std::string group;
  std::string kind;
  std::string uid;
  std::vector<StatusCause> causes;
  std::int32_t retry_after_seconds = 0;

  bool operator==(const StatusDetails&) const = default;
};

// metav1.Status. The constructors below leave kind/apiVersion empty, as the Go ones do; the API
// server sets them ("Status", "v1") when it writes a Status as a response body (withTypeMeta).
struct Status {
  std::string kind;
  std::string api_version;
  nlohmann::json metadata = nlohmann::json::object();  // metav1.ListMeta, always encoded
  std::string status;
  std::string message;
  std::string reason;
  std::optional<StatusDetails> details;  // a nil *StatusDetails is nullopt; non-nil encodes {}
  std::int32_t code = 0;

  bool operator==(const Status&) const = default;

  // The same Status with kind "Status" and apiVersion "v1", as responsewriters write it.
  [[nodiscard]] Status withTypeMeta() const;
};

// Go encoding/json of metav1.Status: kind, apiVersion, status, message, reason, details, code are
// omitempty; metadata is always present ({} when empty). Inside details every field is omitempty,
// and a cause's Type is written as "reason".
nlohmann::json toJson(const Status& status);

// Decodes a metav1.Status as encoding/json does (unknown keys ignored, null = zero value). Type
// errors use Go's text; `path` is the Status's dotted JSON path inside an enclosing document and
// `parent_struct` the Go struct holding it (e.g. "response.status" in "AdmissionResponse"), both
// empty for a top-level Status.
Result<Status> statusFromJson(const nlohmann::json& json, std::string_view path = {},
                              std::string_view parent_struct = {});

// --- k8s.io/apimachinery/pkg/api/errors/errors.go constructors ---

// 404 NotFound: `<resource>[.<group>] "<name>" not found`; details {name, group, kind=resource}.
Status newNotFound(const GroupResource& resource, std::string_view name);
// 409 AlreadyExists: `<gr> "<name>" already exists`.
Status newAlreadyExists(const GroupResource& resource, std::string_view name);
// 401 Unauthorized: the reason, or "not authorized" when empty.
Status newUnauthorized(std::string_view reason);
// 403 Forbidden: `forbidden: <err>` (empty resource), `<gr> is forbidden: <err>` (empty name),
// else `<gr> "<name>" is forbidden: <err>`.
Status newForbidden(const GroupResource& resource, std::string_view name, std::string_view err);
// 409 Conflict: `Operation cannot be fulfilled on <gr> "<name>": <err>`.
Status newConflict(const GroupResource& resource, std::string_view name, std::string_view err);
// 410 Gone (deprecated upstream in favour of newResourceExpired).
Status newGone(std::string_view message);
// 410 Expired.
Status newResourceExpired(std::string_view message);
// 422 Invalid: `<kind>[.<group>] "<name>" is invalid: <aggregate>` (no ": ..." without errors);
// one cause per field error {type FieldValue<Type>, message = error body, field}.
Status newInvalid(const GroupKind& kind, std::string_view name, const FieldErrors& errors);
// 400 BadRequest with the given message.
Status newBadRequest(std::string_view reason);
// 429 TooManyRequests with the given message; details {retryAfterSeconds}.
Status newTooManyRequests(std::string_view message, std::int32_t retry_after_seconds);
// 503 ServiceUnavailable with the given message.
Status newServiceUnavailable(std::string_view reason);
// 405 MethodNotAllowed: `<action> is not supported on resources of kind "<gr>"`.
Status newMethodNotSupported(const GroupResource& resource, std::string_view action);
// 500 ServerTimeout: `The <operation> operation against <gr> could not be completed at this time,
// please try again.`
Status newServerTimeout(const GroupResource& resource, std::string_view operation,
                        std::int32_t retry_after_seconds);
// 500 InternalError: `Internal error occurred: <err>`; details.causes[0].message = err.
Status newInternalError(std::string_view err);
// 504 Timeout: `Timeout: <message>`; details {retryAfterSeconds} (always present).
Status newTimeoutError(std::string_view message, std::int32_t retry_after_seconds);
// The dispatchers' 504: newTimeoutError(kRequestTimeoutMessage, 0).
Status newRequestTimeout();
// 429 TooManyRequests: `Too many requests: <message>`.
Status newTooManyRequestsError(std::string_view message);
// 413 RequestEntityTooLarge: `Request entity too large: <message>`.
Status newRequestEntityTooLargeError(std::string_view message);

// NewGenericServerResponse: the Status client-go builds for a response that is not a Status.
// Reason/message per code (409 AlreadyExists for POST else Conflict "the server reported a
// conflict"; 404; 400; 401; 403 = server message; 406; 415; 405; 422; 503; 504; 429; other >= 500
// InternalError `an error on the server ("<msg>") has prevented the request from succeeding`;
// anything else reason "" and `the server responded with the status code <n> but did not return
// more information`), plus ` (<verb> <gr>[ <name>])` when a resource is known. Details are always
// present; with `is_unexpected_response` causes = [{UnexpectedServerResponse, server message}].
Status newGenericServerResponse(int code, std::string_view verb, const GroupResource& resource,
                                std::string_view name, std::string_view server_message,
                                std::int32_t retry_after_seconds, bool is_unexpected_response);

// --- client-go: how a webhook's HTTP error answer becomes an error ---

// mime.ParseMediaType as client-go applies it to the Content-Type header: the lower-cased media
// type, or Go's error text ("mime: no media type", "mime: expected slash after first token",
// "mime: expected token after slash", "mime: unexpected content after media subtype",
// "mime: invalid media parameter").
Result<std::string> parseMediaType(std::string_view content_type);

// isTextResponse: an empty Content-Type, or a parseable one whose media type starts with "text/".
bool isTextResponse(std::string_view content_type);

// newUnstructuredResponseError for a request without a resource (webhook calls): the body is cut
// to 2048 bytes, then its text (strings.TrimSpace) is the server message when isTextResponse,
// otherwise "unknown"; NewGenericServerResponse(code, method, {}, "", message, retryAfter, true).
Status unstructuredResponseError(int code, std::string_view content_type, std::string_view body,
                                 std::int32_t retry_after_seconds,
                                 std::string_view method = "POST");

// The Status a failed (non-2xx) webhook answer turns into on the caller side (client-go
// transformResponse + Result.Error):
//   * a Content-Type that does not parse -> newInternalError(<mime error>);
//   * a body that decodes as a Status (kind "Status", apiVersion "v1" or absent) with status
//     "Failure" -> that Status as sent;
//   * otherwise unstructuredResponseError(...).
// `retry_after_seconds` is the Retry-After header as an integer (0 when absent or not a number).
Status statusFromErrorResponse(int code, std::string_view content_type, std::string_view body,
                               std::int32_t retry_after_seconds, std::string_view method = "POST");

}  // namespace harness::core
