// Followed: kubernetes/apiserver pkg/apis/audit/v1/types.go (Event, ObjectReference: JSON names,
// field order, omitempty), apimachinery pkg/apis/meta/v1/micro_time.go (MicroTime JSON: UTC
// RFC3339Micro, zero time as null), meta/v1/types.go (Status, StatusDetails, StatusCause order),
// k8s.io/api authentication/v1 UserInfo, pkg/audit/request.go (NewEventFromRequest,
// LogRequestObject, LogResponseObject, LogAnnotation, maybeTruncateUserAgent,
// copyWithoutManagedFields), pkg/admission/audit.go (logAnnotations).

#include "harness/audit/event.h"

#include <cstdint>
#include <cstdio>
#include <utility>

#include "go_json_writer.h"
#include "harness/core/field_errors.h"
#include "harness/go/json.h"
#include "harness/go/strconv.h"

namespace harness::audit {
namespace {

using ordered_json = nlohmann::ordered_json;

constexpr std::size_t kMaxUserAgentLength = 1024;
constexpr std::string_view kUserAgentTruncateSuffix = "...TRUNCATED";

ordered_json userInfoJson(const core::UserInfo& user) {
  ordered_json out = ordered_json::object();
  if (!user.username.empty()) out["username"] = user.username;
  if (!user.uid.empty()) out["uid"] = user.uid;
  if (!user.groups.empty()) out["groups"] = user.groups;
  if (!user.extra.empty()) {
    ordered_json extra = ordered_json::object();
    for (const auto& [key, values] : user.extra) extra[key] = values;
    out["extra"] = std::move(extra);
  }
  return out;
}

ordered_json objectRefJson(const ObjectReference& ref) {
  ordered_json out = ordered_json::object();
  auto put = [&](const char* key, const std::string& value) {
    if (!value.empty()) out[key] = value;
  };
  put("resource", ref.resource);
  put("namespace", ref.namespace_name);
  put("name", ref.name);
  put("uid", ref.uid);
  put("apiGroup", ref.api_group);
  put("apiVersion", ref.api_version);
  put("resourceVersion", ref.resource_version);
  put("subresource", ref.subresource);
  return out;
}

// metav1.Status in struct order: TypeMeta (kind, apiVersion), metadata (ListMeta, always
// written), status, message, reason, details, code.
ordered_json statusJson(const core::Status& status) {
  ordered_json out = ordered_json::object();
  if (!status.kind.empty()) out["kind"] = status.kind;
  if (!status.api_version.empty()) out["apiVersion"] = status.api_version;
  out["metadata"] =
      status.metadata.is_object() ? ordered_json(status.metadata) : ordered_json::object();
  if (!status.status.empty()) out["status"] = status.status;
  if (!status.message.empty()) out["message"] = status.message;
  if (!status.reason.empty()) out["reason"] = status.reason;
  if (status.details) {
    const core::StatusDetails& d = *status.details;
    ordered_json details = ordered_json::object();
    if (!d.name.empty()) details["name"] = d.name;
    if (!d.group.empty()) details["group"] = d.group;
    if (!d.kind.empty()) details["kind"] = d.kind;
    if (!d.uid.empty()) details["uid"] = d.uid;
    if (!d.causes.empty()) {
      ordered_json causes = ordered_json::array();
      for (const auto& cause : d.causes) {
        ordered_json c = ordered_json::object();
        if (!cause.type.empty()) c["reason"] = cause.type;
        if (!cause.message.empty()) c["message"] = cause.message;
        if (!cause.field.empty()) c["field"] = cause.field;
        causes.push_back(std::move(c));
      }
      details["causes"] = std::move(causes);
    }
    if (d.retry_after_seconds != 0) details["retryAfterSeconds"] = d.retry_after_seconds;
    out["details"] = std::move(details);
  }
  if (status.code != 0) out["code"] = status.code;
  return out;
}

ordered_json timeJson(const std::optional<TimePoint>& time) {
  if (!time) return nullptr;
  return formatMicroTime(*time);
}

// Reads the members of one object with encoding/json's rules (null = zero value); keeps the
// first error.
template <class J>
class Reader {
 public:
  std::optional<core::Error> error;

  void fail(const std::string& path, const std::string& message) {
    if (!error) error = core::Error{path + ": " + message};
  }
  void mismatch(const std::string& path, const J& v, const char* expected) {
    fail(path, std::string("expected ") + expected + ", got " + go::jsonValueKind(v));
  }

  static const J* find(const J& object, const char* key) {
    const auto it = object.find(key);
    if (it == object.end() || it->is_null()) return nullptr;
    return &*it;
  }

  void string(const J& object, const char* key, const std::string& path,
              std::string& out) {
    if (const auto* v = find(object, key)) {
      if (v->is_string()) {
        out = v->template get<std::string>();
      } else {
        mismatch(path, *v, "a string");
      }
    }
  }

  void strings(const J& object, const char* key, const std::string& path,
               std::vector<std::string>& out) {
    const auto* v = find(object, key);
    if (v == nullptr) return;
    if (!v->is_array()) {
      mismatch(path, *v, "a list of strings");
      return;
    }
    for (std::size_t i = 0; i < v->size(); ++i) {
      const auto& item = (*v)[i];
      if (item.is_string()) {
        out.push_back(item.template get<std::string>());
      } else if (item.is_null()) {
        out.emplace_back();
      } else {
        mismatch(path + "[" + std::to_string(i) + "]", item, "a string");
        return;
      }
    }
  }

  const J* object(const J& parent, const char* key, const std::string& path) {
    const auto* v = find(parent, key);
    if (v != nullptr && !v->is_object()) {
      mismatch(path, *v, "an object");
      return nullptr;
    }
    return v;
  }

  void userInfo(const J& user, const std::string& path, core::UserInfo& out) {
    string(user, "username", path + ".username", out.username);
    string(user, "uid", path + ".uid", out.uid);
    strings(user, "groups", path + ".groups", out.groups);
    if (const auto* extra = object(user, "extra", path + ".extra")) {
      for (const auto& [key, values] : extra->items()) {
        std::vector<std::string> list;
        if (!values.is_null()) {
          J holder = J::object();
          holder["v"] = values;
          strings(holder, "v", std::string(path).append(".extra.").append(key), list);
        }
        out.extra[key] = std::move(list);
      }
    }
  }

  void time(const J& object, const char* key, std::optional<TimePoint>& out) {
    const auto* v = find(object, key);
    if (v == nullptr) return;
    if (!v->is_string()) {
      mismatch(key, *v, "a string");
      return;
    }
    auto parsed = parseMicroTime(v->template get_ref<const std::string&>());
    if (!parsed.ok()) {
      fail(key, parsed.error().message);
      return;
    }
    out = *parsed;
  }
};

template <class J>
core::Result<Event> readEvent(const J& json) {
  if (!json.is_object()) {
    return core::Error{"expected an audit Event object, got " + go::jsonValueKind(json)};
  }
  Event event;
  Reader<J> r;

  std::string kind;
  std::string api_version;
  r.string(json, "kind", "kind", kind);
  r.string(json, "apiVersion", "apiVersion", api_version);
  if (r.error) return *r.error;
  if (!kind.empty() && kind != kEventKind) {
    return core::Error{"kind: " + go::quote(kind) + " is not an audit Event"};
  }
  if (!api_version.empty() && api_version.rfind("audit.k8s.io/", 0) != 0) {
    return core::Error{"apiVersion: " + go::quote(api_version) +
                       " is not an audit.k8s.io version"};
  }

  std::string level;
  r.string(json, "level", "level", level);
  if (r.error) return *r.error;
  auto parsed_level = parseLevel(level);
  if (!parsed_level.ok()) return parsed_level.error().within("level");
  event.level = *parsed_level;

  r.string(json, "auditID", "auditID", event.audit_id);
  std::string stage;
  r.string(json, "stage", "stage", stage);
  if (r.error) return *r.error;
  auto parsed_stage = parseStage(stage);
  if (!parsed_stage.ok()) return parsed_stage.error().within("stage");
  event.stage = *parsed_stage;

  r.string(json, "requestURI", "requestURI", event.request_uri);
  r.string(json, "verb", "verb", event.verb);
  if (const auto* user = r.object(json, "user", "user")) r.userInfo(*user, "user", event.user);
  if (const auto* user = r.object(json, "impersonatedUser", "impersonatedUser")) {
    event.impersonated_user.emplace();
    r.userInfo(*user, "impersonatedUser", *event.impersonated_user);
  }
  r.strings(json, "sourceIPs", "sourceIPs", event.source_ips);
  r.string(json, "userAgent", "userAgent", event.user_agent);
  if (const auto* ref = r.object(json, "objectRef", "objectRef")) {
    ObjectReference& o = event.object_ref.emplace();
    r.string(*ref, "resource", "objectRef.resource", o.resource);
    r.string(*ref, "namespace", "objectRef.namespace", o.namespace_name);
    r.string(*ref, "name", "objectRef.name", o.name);
    r.string(*ref, "uid", "objectRef.uid", o.uid);
    r.string(*ref, "apiGroup", "objectRef.apiGroup", o.api_group);
    r.string(*ref, "apiVersion", "objectRef.apiVersion", o.api_version);
    r.string(*ref, "resourceVersion", "objectRef.resourceVersion", o.resource_version);
    r.string(*ref, "subresource", "objectRef.subresource", o.subresource);
  }
  if (const auto* status = r.object(json, "responseStatus", "responseStatus")) {
    auto parsed = core::statusFromJson(nlohmann::json(*status), "responseStatus", "Event");
    if (!parsed.ok()) return parsed.error();
    event.response_status = std::move(*parsed);
  }
  if (const auto* v = Reader<J>::find(json, "requestObject")) event.request_object = *v;
  if (const auto* v = Reader<J>::find(json, "responseObject")) event.response_object = *v;
  r.time(json, "requestReceivedTimestamp", event.request_received_timestamp);
  r.time(json, "stageTimestamp", event.stage_timestamp);
  if (const auto* annotations = r.object(json, "annotations", "annotations")) {
    for (const auto& [key, value] : annotations->items()) {
      if (value.is_string()) {
        event.annotations[key] = value.template get<std::string>();
      } else if (value.is_null()) {
        event.annotations[key];
      } else {
        r.mismatch("annotations." + key, value, "a string");
      }
    }
  }
  if (r.error) return *r.error;

  static const char* const kKnown[] = {"kind",
                                       "apiVersion",
                                       "level",
                                       "auditID",
                                       "stage",
                                       "requestURI",
                                       "verb",
                                       "user",
                                       "impersonatedUser",
                                       "sourceIPs",
                                       "userAgent",
                                       "objectRef",
                                       "responseStatus",
                                       "requestObject",
                                       "responseObject",
                                       "requestReceivedTimestamp",
                                       "stageTimestamp",
                                       "annotations"};
  for (auto it = json.begin(); it != json.end(); ++it) {
    bool known = false;
    for (const char* k : kKnown) known = known || it.key() == k;
    if (known) continue;
    if (event.unknown_fields.is_null()) event.unknown_fields = ordered_json::object();
    event.unknown_fields[it.key()] = ordered_json(it.value());
  }
  return event;
}

// Two-digit field of a timestamp; -1 when not digits.
int digits(std::string_view s, std::size_t pos, std::size_t count) {
  if (pos + count > s.size()) return -1;
  int value = 0;
  for (std::size_t i = pos; i < pos + count; ++i) {
    if (s[i] < '0' || s[i] > '9') return -1;
    value = value * 10 + (s[i] - '0');
  }
  return value;
}

ordered_json withoutManagedFields(const ordered_json& object) {
  ordered_json copy = object;
  auto strip = [](ordered_json& o) {
    if (!o.is_object()) return;
    const auto metadata = o.find("metadata");
    if (metadata != o.end() && metadata->is_object()) metadata->erase("managedFields");
  };
  strip(copy);
  // Lists (meta.IsListType): every item too.
  if (copy.is_object()) {
    const auto items = copy.find("items");
    if (items != copy.end() && items->is_array()) {
      for (auto& item : *items) strip(item);
    }
  }
  return copy;
}

std::string stringMember(const ordered_json& object, const char* key) {
  const auto value = object.find(key);
  if (value == object.end() || !value->is_string()) return "";
  return value->get<std::string>();
}

std::string metadataString(const ordered_json& object, const char* key) {
  if (!object.is_object()) return "";
  const auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return "";
  const auto value = metadata->find(key);
  if (value == metadata->end() || !value->is_string()) return "";
  return value->get<std::string>();
}

}  // namespace

std::string formatMicroTime(TimePoint time) {
  using namespace std::chrono;
  const auto micros = floor<microseconds>(time);
  const auto day = floor<days>(micros);
  const year_month_day ymd{day};
  const hh_mm_ss<microseconds> tod{micros - day};
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%04d-%02u-%02uT%02d:%02d:%02d.%06lldZ",
                static_cast<int>(ymd.year()), static_cast<unsigned>(ymd.month()),
                static_cast<unsigned>(ymd.day()), static_cast<int>(tod.hours().count()),
                static_cast<int>(tod.minutes().count()), static_cast<int>(tod.seconds().count()),
                static_cast<long long>(tod.subseconds().count()));
  return buffer;
}

core::Result<TimePoint> parseMicroTime(std::string_view text) {
  using namespace std::chrono;
  const auto bad = [&] {
    return core::Error{"cannot parse " + go::quote(text) +
                       " as an RFC 3339 time (2006-01-02T15:04:05.000000Z07:00)"};
  };
  const int y = digits(text, 0, 4);
  const int mo = digits(text, 5, 2);
  const int d = digits(text, 8, 2);
  const int h = digits(text, 11, 2);
  const int mi = digits(text, 14, 2);
  const int s = digits(text, 17, 2);
  if (y < 0 || mo < 0 || d < 0 || h < 0 || mi < 0 || s < 0 || text[4] != '-' || text[7] != '-' ||
      text[10] != 'T' || text[13] != ':' || text[16] != ':') {
    return bad();
  }
  const year_month_day ymd{year{y}, month{static_cast<unsigned>(mo)},
                           day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || s > 59) return bad();
  std::size_t pos = 19;
  std::int64_t nanos = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    int count = 0;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      if (count < 9) {
        nanos = nanos * 10 + (text[pos] - '0');
        ++count;
      } else {
        return bad();
      }
      ++pos;
    }
    if (count == 0) return bad();
    for (int i = count; i < 9; ++i) nanos *= 10;
  }
  int offset_minutes = 0;
  if (pos < text.size() && text[pos] == 'Z') {
    ++pos;
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int oh = digits(text, pos + 1, 2);
    const int om = digits(text, pos + 4, 2);
    if (oh < 0 || om < 0 || text[pos + 3] != ':' || oh > 23 || om > 59) return bad();
    offset_minutes = (text[pos] == '+' ? 1 : -1) * (oh * 60 + om);
    pos += 6;
  } else {
    return bad();
  }
  if (pos != text.size()) return bad();
  const auto local = sys_days{ymd} + hours{h} + minutes{mi} + seconds{s} + nanoseconds{nanos};
  return time_point_cast<system_clock::duration>(local - minutes{offset_minutes});
}

nlohmann::ordered_json toJson(const Event& event) {
  ordered_json out = ordered_json::object();
  out["kind"] = kEventKind;
  out["apiVersion"] = kEventApiVersion;
  out["level"] = toString(event.level);
  out["auditID"] = event.audit_id;
  out["stage"] = toString(event.stage);
  out["requestURI"] = event.request_uri;
  out["verb"] = event.verb;
  out["user"] = userInfoJson(event.user);
  if (event.impersonated_user) out["impersonatedUser"] = userInfoJson(*event.impersonated_user);
  if (!event.source_ips.empty()) out["sourceIPs"] = event.source_ips;
  if (!event.user_agent.empty()) out["userAgent"] = event.user_agent;
  if (event.object_ref) out["objectRef"] = objectRefJson(*event.object_ref);
  if (event.response_status) out["responseStatus"] = statusJson(*event.response_status);
  if (event.request_object) out["requestObject"] = *event.request_object;
  if (event.response_object) out["responseObject"] = *event.response_object;
  out["requestReceivedTimestamp"] = timeJson(event.request_received_timestamp);
  out["stageTimestamp"] = timeJson(event.stage_timestamp);
  if (!event.annotations.empty()) {
    ordered_json annotations = ordered_json::object();
    for (const auto& [key, value] : event.annotations) annotations[key] = value;
    out["annotations"] = std::move(annotations);
  }
  if (event.unknown_fields.is_object()) {
    for (auto it = event.unknown_fields.begin(); it != event.unknown_fields.end(); ++it) {
      if (!out.contains(it.key())) out[it.key()] = it.value();
    }
  }
  return out;
}

std::string toJsonLine(const Event& event) {
  std::string line = go_json::encode(toJson(event));
  line.push_back('\n');
  return line;
}

core::Result<Event> eventFromJson(const nlohmann::ordered_json& json) { return readEvent(json); }

core::Result<Event> eventFromJson(nlohmann::ordered_json&& json) {
  std::optional<ordered_json> request_object;
  std::optional<ordered_json> response_object;
  if (json.is_object()) {
    // Left as null members, which readEvent skips as it skips absent ones.
    auto take = [&json](const char* key, std::optional<ordered_json>& out) {
      const auto it = json.find(key);
      if (it != json.end() && !it->is_null()) out = std::exchange(*it, nullptr);
    };
    take("requestObject", request_object);
    take("responseObject", response_object);
  }
  auto event = readEvent(json);
  if (!event.ok()) return event;
  event->request_object = std::move(request_object);
  event->response_object = std::move(response_object);
  return event;
}

// Read as it is: converting to ordered_json first would copy the whole event, and the result is
// the same (a json iterates its members in key order, which the copy would keep).
core::Result<Event> eventFromJson(const nlohmann::json& json) { return readEvent(json); }

Event newEventFromRequest(const HttpRequestInfo& request, Level level,
                          const RequestAttributes& attributes) {
  Event event;
  event.level = level;
  event.stage = Stage::kRequestReceived;
  event.request_received_timestamp = request.received;
  event.verb = attributes.verb;
  event.request_uri = request.request_uri;
  event.user_agent = request.user_agent;
  if (event.user_agent.size() > kMaxUserAgentLength) {
    event.user_agent.resize(kMaxUserAgentLength);
    event.user_agent += kUserAgentTruncateSuffix;
  }
  event.audit_id = request.audit_id;
  event.source_ips = request.source_ips;
  if (attributes.has_user) {
    event.user.username = attributes.user;
    event.user.extra = request.user_extra;
    event.user.groups = attributes.groups;
    event.user.uid = request.user_uid;
  }
  if (attributes.resource_request) {
    ObjectReference& ref = event.object_ref.emplace();
    ref.namespace_name = attributes.namespace_name;
    ref.name = attributes.name;
    ref.resource = attributes.resource;
    ref.subresource = attributes.subresource;
    ref.api_group = attributes.api_group;
    ref.api_version = attributes.api_version;
  }
  return event;
}

void logRequestObject(Event& event, const nlohmann::ordered_json& object,
                      std::string_view api_group, std::string_view api_version,
                      std::string_view resource, std::string_view subresource,
                      bool omit_managed_fields) {
  if (less(event.level, Level::kMetadata)) return;
  ObjectReference& ref = event.object_ref ? *event.object_ref : event.object_ref.emplace();
  if (ref.namespace_name.empty()) ref.namespace_name = metadataString(object, "namespace");
  if (ref.name.empty()) ref.name = metadataString(object, "name");
  if (ref.uid.empty()) ref.uid = metadataString(object, "uid");
  if (ref.resource_version.empty())
    ref.resource_version = metadataString(object, "resourceVersion");
  if (ref.api_version.empty()) {
    ref.api_group = std::string(api_group);
    ref.api_version = std::string(api_version);
  }
  if (ref.resource.empty()) ref.resource = std::string(resource);
  if (ref.subresource.empty()) ref.subresource = std::string(subresource);
  if (less(event.level, Level::kRequest)) return;
  event.request_object = omit_managed_fields ? withoutManagedFields(object) : object;
}

void logResponseObject(Event& event, const nlohmann::ordered_json& object,
                       bool omit_managed_fields) {
  if (less(event.level, Level::kMetadata)) return;
  if (object.is_object() && stringMember(object, "kind") == "Status") {
    // "selectively copy the bounded fields": Status, Message, Reason, Details and Code
    // (k8s.io/apiserver v0.37.2 pkg/audit/context.go LogResponseObject).
    core::Status status;
    if (auto parsed = core::statusFromJson(nlohmann::json(object)); parsed.ok()) {
      status = std::move(*parsed);
      status.kind.clear();
      status.api_version.clear();
      status.metadata = nlohmann::json::object();
    } else {
      status.status = stringMember(object, "status");
      status.message = stringMember(object, "message");
      status.reason = stringMember(object, "reason");
      if (const auto code = object.find("code");
          code != object.end() && code->is_number_integer()) {
        status.code = code->get<std::int32_t>();
      }
    }
    event.response_status = std::move(status);
  }
  if (less(event.level, Level::kRequestResponse)) return;
  event.response_object = omit_managed_fields ? withoutManagedFields(object) : object;
}

bool logAnnotation(Event& event, std::string_view key, std::string_view value) {
  if (less(event.level, Level::kMetadata)) return false;
  const auto it = event.annotations.find(std::string(key));
  if (it != event.annotations.end()) return it->second == value;
  event.annotations.emplace(std::string(key), std::string(value));
  return true;
}

void logAnnotations(Event& event, const AnnotationSet& annotations) {
  for (const auto& [key, value] : annotations.forLevel(event.level)) {
    logAnnotation(event, key, value);
  }
}

}  // namespace harness::audit
