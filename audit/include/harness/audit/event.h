#pragma once

// The audit.k8s.io/v1 Event (kubernetes/apiserver pkg/apis/audit/v1/types.go) and the functions
// of pkg/audit/request.go that fill it (NewEventFromRequest, LogRequestObject, LogResponseObject,
// LogAnnotation), plus its JSON exactly as kube-apiserver's log backend writes it.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/audit/annotations.h"
#include "harness/audit/level.h"
#include "harness/audit/policy.h"
#include "harness/core/admission_review.h"
#include "harness/core/result.h"
#include "harness/core/status.h"

namespace harness::audit {

inline constexpr std::string_view kEventApiVersion = "audit.k8s.io/v1";
inline constexpr std::string_view kEventKind = "Event";

// audit ObjectReference: every field omitempty.
struct ObjectReference {
  std::string resource;
  std::string namespace_name;  // "namespace"
  std::string name;
  std::string uid;
  std::string api_group;    // "apiGroup"
  std::string api_version;  // "apiVersion"
  std::string resource_version;
  std::string subresource;

  bool operator==(const ObjectReference&) const = default;
};

using TimePoint = std::chrono::system_clock::time_point;

// The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant()
// into a throw it cannot reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct Event {
  Level level = Level::kNone;
  std::string audit_id;  // "auditID"
  Stage stage = Stage::kRequestReceived;
  std::string request_uri;  // "requestURI"
  std::string verb;
  core::UserInfo user;  // authentication/v1 UserInfo, always written ({} when empty)
  std::optional<core::UserInfo> impersonated_user;
  std::vector<std::string> source_ips;  // "sourceIPs", omitempty
  std::string user_agent;               // omitempty
  std::optional<ObjectReference> object_ref;
  std::optional<core::Status> response_status;
  // runtime.Unknown raw JSON; ordered_json keeps the member order the object came with.
  std::optional<nlohmann::ordered_json> request_object;
  std::optional<nlohmann::ordered_json> response_object;
  // metav1.MicroTime; nullopt is Go's zero time, written as null.
  std::optional<TimePoint> request_received_timestamp;
  std::optional<TimePoint> stage_timestamp;
  std::map<std::string, std::string> annotations;  // omitempty
  // Members of a read event this model does not know (e.g. authenticationMetadata of newer
  // servers), kept in order and written back after "annotations". An object or null.
  nlohmann::ordered_json unknown_fields;

  bool operator==(const Event&) const = default;
};

// "2026-11-22T10:00:00.123456Z": metav1.MicroTime (RFC3339Micro in UTC, always 6 fractional
// digits, truncated not rounded).
std::string formatMicroTime(TimePoint time);
// RFC 3339 with 0-9 fractional digits and "Z" or a "+hh:mm"/"-hh:mm" offset (MicroTime accepts
// what time.Parse(RFC3339Micro) does and more).
core::Result<TimePoint> parseMicroTime(std::string_view text);

// The event as an ordered JSON object in Go struct field order with types.go's omitempty rules:
// kind, apiVersion, level, auditID, stage, requestURI, verb, user, impersonatedUser?, sourceIPs?,
// userAgent?, objectRef?, responseStatus?, requestObject?, responseObject?,
// requestReceivedTimestamp, stageTimestamp, annotations?.
nlohmann::ordered_json toJson(const Event& event);

// One line of kube-apiserver's JSON log backend (plugin/pkg/audit/log/backend.go, legacy codec
// = encoding/json Encoder): compact, HTML-escaped (<>& as \u003c \u003e \u0026), the layout of
// toJson, ending in "\n".
std::string toJsonLine(const Event& event);

// Reads an Event from JSON (the log backend's or a webhook backend's): unknown members are kept in
// unknown_fields; kind and apiVersion, when present, must be "Event" and audit.k8s.io/*. Errors
// name the field: `stage: unknown stage "Done"`, `user.groups[1]: expected a string, got number`.
core::Result<Event> eventFromJson(const nlohmann::json& json);
core::Result<Event> eventFromJson(const nlohmann::ordered_json& json);
// The same, moving requestObject and responseObject (most of an event) instead of copying them.
core::Result<Event> eventFromJson(nlohmann::ordered_json&& json);

// --- filling an event (pkg/audit/request.go) ---

// What NewEventFromRequest reads from the HTTP request besides the authorizer attributes.
struct HttpRequestInfo {
  std::string audit_id;     // the Audit-ID header or a generated UUID
  std::string request_uri;  // req.URL.RequestURI(), e.g. /api/v1/namespaces/x/pods?dryRun=All
  std::string user_agent;   // truncated to 1024 bytes + "...TRUNCATED"
  std::vector<std::string> source_ips;
  std::string user_uid;
  std::map<std::string, std::vector<std::string>> user_extra;
  TimePoint received;
};

// NewEventFromRequest at `level`, stage RequestReceived: verb, requestURI, userAgent, auditID,
// sourceIPs, user (when attributes.has_user) and, for resource requests, objectRef {namespace,
// name, resource, subresource, apiGroup, apiVersion}.
Event newEventFromRequest(const HttpRequestInfo& request, Level level,
                          const RequestAttributes& attributes);

// LogRequestObject: at Metadata and above completes objectRef from the object's metadata
// (namespace, name, uid, resourceVersion when still empty) and the resource; at Request and above
// also records the object, without metadata.managedFields when `omit_managed_fields`.
void logRequestObject(Event& event, const nlohmann::ordered_json& object,
                      std::string_view api_group, std::string_view api_version,
                      std::string_view resource, std::string_view subresource,
                      bool omit_managed_fields);

// LogResponseObject: a Status response sets responseStatus to its status, reason and code only;
// at RequestResponse the object is recorded (managedFields dropped when `omit_managed_fields`).
void logResponseObject(Event& event, const nlohmann::ordered_json& object,
                       bool omit_managed_fields);

// audit.LogAnnotation: ignored below Metadata; a key already set to a different value keeps its
// first value (returns false).
bool logAnnotation(Event& event, std::string_view key, std::string_view value);

// auditHandler.logAnnotations (pkg/admission/audit.go): copies the annotations an event at its
// level records, each through logAnnotation. Called after the mutating and after the validating
// admission phase, also when the phase failed.
void logAnnotations(Event& event, const AnnotationSet& annotations);

}  // namespace harness::audit
