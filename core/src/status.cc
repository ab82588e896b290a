#include "harness/core/status.h"

#include <cctype>
#include <set>
#include <utility>

#include "go_json.h"
#include "harness/core/json.h"
#include "harness/core/utf8.h"
#include "harness/go/strconv.h"
#include "harness/go/strings.h"

namespace harness::core {

namespace {

constexpr std::size_t kMaxUnstructuredResponseTextBytes = 2048;  // client-go rest/request.go

// field.ErrorType strings (apimachinery pkg/util/validation/field/errors.go), used as CauseType.
std::string causeTypeOf(FieldErrorType type) {
  switch (type) {
    case FieldErrorType::kNotFound:
      return "FieldValueNotFound";
    case FieldErrorType::kRequired:
      return "FieldValueRequired";
    case FieldErrorType::kDuplicate:
      return "FieldValueDuplicate";
    case FieldErrorType::kInvalid:
      return "FieldValueInvalid";
    case FieldErrorType::kNotSupported:
      return "FieldValueNotSupported";
    case FieldErrorType::kForbidden:
      return "FieldValueForbidden";
    case FieldErrorType::kTooLong:
      return "FieldValueTooLong";
    case FieldErrorType::kTooMany:
      return "FieldValueTooMany";
    case FieldErrorType::kInternal:
      return "InternalError";
    case FieldErrorType::kTypeInvalid:
      return "FieldValueTypeInvalid";
  }
  return "FieldValueInvalid";
}

// field.Error.ErrorBody(): the text after "<field>: ".
std::string errorBody(const FieldError& e) {
  std::string text = e.toString();
  const std::string prefix = e.field + ": ";
  if (text.rfind(prefix, 0) == 0) text.erase(0, prefix.size());
  return text;
}

Status failure(std::int32_t code, std::string_view reason, std::string message) {
  Status s;
  s.status = std::string(kStatusFailure);
  s.code = code;
  s.reason = std::string(reason);
  s.message = std::move(message);
  return s;
}

StatusDetails resourceDetails(const GroupResource& resource, std::string_view name) {
  StatusDetails d;
  d.group = resource.group;
  d.kind = resource.resource;
  d.name = std::string(name);
  return d;
}


// mime: RFC 1521 tspecials and token characters.
bool isTSpecial(char c) {
  return std::string_view("()<>@,;:\\\"/[]?=").find(c) != std::string_view::npos;
}
bool isTokenChar(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u > 0x20 && u < 0x7f && !isTSpecial(c);
}

std::pair<std::string_view, std::string_view> consumeToken(std::string_view v) {
  std::size_t i = 0;
  while (i < v.size() && isTokenChar(v[i])) ++i;
  return {v.substr(0, i), v.substr(i)};
}

std::string_view trimLeftSpace(std::string_view v) {
  std::size_t i = 0;
  while (i < v.size() && std::isspace(static_cast<unsigned char>(v[i])) != 0) ++i;
  return v.substr(i);
}

std::string asciiLower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// consumeValue: a token or a quoted-string. Returns {found, value, rest}.
struct Consumed {
  bool found = false;
  std::string value;
  std::string_view rest;
};

Consumed consumeValue(std::string_view v) {
  if (v.empty()) return {false, {}, v};
  if (v.front() != '"') {
    auto [token, rest] = consumeToken(v);
    return {!token.empty(), std::string(token), rest};
  }
  std::string buffer;
  for (std::size_t i = 1; i < v.size(); ++i) {
    const char r = v[i];
    if (r == '"') return {true, buffer, v.substr(i + 1)};
    if (r == '\\' && i + 1 < v.size() && isTSpecial(v[i + 1])) {
      buffer.push_back(v[i + 1]);
      ++i;
      continue;
    }
    if (r == '\r' || r == '\n') return {false, {}, v};
    buffer.push_back(r);
  }
  return {false, {}, v};
}

// consumeMediaParam: returns {found, key, rest}.
std::pair<std::string, std::string_view> consumeMediaParam(std::string_view v, bool& found) {
  found = false;
  std::string_view rest = trimLeftSpace(v);
  if (rest.empty() || rest.front() != ';') return {{}, v};
  rest = trimLeftSpace(rest.substr(1));
  auto [param, after] = consumeToken(rest);
  if (param.empty()) return {{}, v};
  rest = trimLeftSpace(after);
  if (rest.empty() || rest.front() != '=') return {{}, v};
  rest = trimLeftSpace(rest.substr(1));
  auto value = consumeValue(rest);
  if (!value.found) return {{}, v};
  found = true;
  return {asciiLower(param), value.rest};
}

Error mimeError(std::string text) { return Error{"mime: " + std::move(text)}; }

}  // namespace

std::string GroupResource::toString() const {
  return group.empty() ? resource : resource + "." + group;
}

std::string GroupKind::toString() const { return group.empty() ? kind : kind + "." + group; }

Status Status::withTypeMeta() const {
  Status s = *this;
  s.kind = "Status";
  s.api_version = "v1";
  return s;
}

nlohmann::json toJson(const Status& status) {
  nlohmann::json j = nlohmann::json::object();
  if (!status.kind.empty()) j["kind"] = status.kind;
  if (!status.api_version.empty()) j["apiVersion"] = status.api_version;
  j["metadata"] = status.metadata.is_object() ? status.metadata : nlohmann::json::object();
  if (!status.status.empty()) j["status"] = status.status;
  if (!status.message.empty()) j["message"] = status.message;
  if (!status.reason.empty()) j["reason"] = status.reason;
  if (status.details) {
    const auto& d = *status.details;
    nlohmann::json details = nlohmann::json::object();
    if (!d.name.empty()) details["name"] = d.name;
    if (!d.group.empty()) details["group"] = d.group;
    if (!d.kind.empty()) details["kind"] = d.kind;
    if (!d.uid.empty()) details["uid"] = d.uid;
    if (!d.causes.empty()) {
      nlohmann::json causes = nlohmann::json::array();
      for (const auto& c : d.causes) {
        nlohmann::json cause = nlohmann::json::object();
        if (!c.type.empty()) cause["reason"] = c.type;
        if (!c.message.empty()) cause["message"] = c.message;
        if (!c.field.empty()) cause["field"] = c.field;
        causes.push_back(std::move(cause));
      }
      details["causes"] = std::move(causes);
    }
    if (d.retry_after_seconds != 0) details["retryAfterSeconds"] = d.retry_after_seconds;
    j["details"] = std::move(details);
  }
  if (status.code != 0) j["code"] = status.code;
  return j;
}

Result<Status> statusFromJson(const nlohmann::json& json, std::string_view path,
                              std::string_view parent_struct) {
  if (!json.is_object()) {
    return go_json::typeError(json, parent_struct, path, "v1.Status");
  }
  Status s;
  go_json::Reader r(json, "Status", std::string(path));
  r.readString("kind", s.kind);
  r.readString("apiVersion", s.api_version);
  if (const auto* meta = r.readObject("metadata", "v1.ListMeta")) s.metadata = *meta;
  r.readString("status", s.status);
  r.readString("message", s.message);
  r.readString("reason", s.reason, "v1.StatusReason");
  if (const auto* details = r.readObject("details", "v1.StatusDetails")) {
    StatusDetails d;
    go_json::Reader dr(*details, "StatusDetails", r.fieldPath("details"));
    dr.readString("name", d.name);
    dr.readString("group", d.group);
    dr.readString("kind", d.kind);
    dr.readString("uid", d.uid, "types.UID");
    if (const auto* causes = dr.readArray("causes", "[]v1.StatusCause")) {
      if (dr.checkObjectElements(*causes, "causes", "v1.StatusCause")) {
        for (const auto& item : *causes) {
          StatusCause c;
          if (item.is_object()) {
            go_json::Reader cr(item, "StatusCause", dr.fieldPath("causes"));
            cr.readString("reason", c.type, "v1.CauseType");
            cr.readString("message", c.message);
            cr.readString("field", c.field);
            if (!cr.ok()) {
              dr.fail(cr.error());
              break;
            }
          }
          d.causes.push_back(std::move(c));
        }
      }
    }
    dr.readInt32("retryAfterSeconds", d.retry_after_seconds);
    if (!dr.ok()) r.fail(dr.error());
    s.details = std::move(d);
  }
  r.readInt32("code", s.code);
  if (!r.ok()) return r.error();
  return s;
}

Status newNotFound(const GroupResource& resource, std::string_view name) {
  Status s =
      failure(404, kReasonNotFound, resource.toString() + " " + go::quote(name) + " not found");
  s.details = resourceDetails(resource, name);
  return s;
}

Status newAlreadyExists(const GroupResource& resource, std::string_view name) {
  Status s = failure(409, kReasonAlreadyExists,
                     resource.toString() + " " + go::quote(name) + " already exists");
  s.details = resourceDetails(resource, name);
  return s;
}

Status newUnauthorized(std::string_view reason) {
  return failure(401, kReasonUnauthorized,
                 reason.empty() ? std::string("not authorized") : std::string(reason));
}

Status newForbidden(const GroupResource& resource, std::string_view name, std::string_view err) {
  std::string message;
  if (resource.empty()) {
    message = "forbidden: " + std::string(err);
  } else if (name.empty()) {
    message = resource.toString() + " is forbidden: " + std::string(err);
  } else {
    message = resource.toString() + " " + go::quote(name) + " is forbidden: " + std::string(err);
  }
  Status s = failure(403, kReasonForbidden, std::move(message));
  s.details = resourceDetails(resource, name);
  return s;
}

Status newConflict(const GroupResource& resource, std::string_view name, std::string_view err) {
  Status s = failure(409, kReasonConflict,
                     "Operation cannot be fulfilled on " + resource.toString() + " " +
                         go::quote(name) + ": " + std::string(err));
  s.details = resourceDetails(resource, name);
  return s;
}

Status newGone(std::string_view message) { return failure(410, kReasonGone, std::string(message)); }

Status newResourceExpired(std::string_view message) {
  return failure(410, kReasonExpired, std::string(message));
}

Status newInvalid(const GroupKind& kind, std::string_view name, const FieldErrors& errors) {
  StatusDetails d;
  d.group = kind.group;
  d.kind = kind.kind;
  d.name = std::string(name);
  for (const auto& e : errors) {
    d.causes.push_back(StatusCause{causeTypeOf(e.type), errorBody(e), e.field});
  }
  std::string message = kind.toString() + " " + go::quote(name) + " is invalid";
  if (!errors.empty()) message += ": " + aggregate(errors);
  Status s = failure(422, kReasonInvalid, std::move(message));
  s.details = std::move(d);
  return s;
}

Status newBadRequest(std::string_view reason) {
  return failure(400, kReasonBadRequest, std::string(reason));
}

Status newTooManyRequests(std::string_view message, std::int32_t retry_after_seconds) {
  Status s = failure(429, kReasonTooManyRequests, std::string(message));
  s.details = StatusDetails{};
  s.details->retry_after_seconds = retry_after_seconds;
  return s;
}

Status newServiceUnavailable(std::string_view reason) {
  return failure(503, kReasonServiceUnavailable, std::string(reason));
}

Status newMethodNotSupported(const GroupResource& resource, std::string_view action) {
  Status s = failure(405, kReasonMethodNotAllowed,
                     std::string(action) + " is not supported on resources of kind " +
                         go::quote(resource.toString()));
  s.details = resourceDetails(resource, "");
  return s;
}

Status newServerTimeout(const GroupResource& resource, std::string_view operation,
                        std::int32_t retry_after_seconds) {
  Status s = failure(500, kReasonServerTimeout,
                     "The " + std::string(operation) + " operation against " + resource.toString() +
                         " could not be completed at this time, please try again.");
  s.details = resourceDetails(resource, operation);
  s.details->retry_after_seconds = retry_after_seconds;
  return s;
}

Status newInternalError(std::string_view err) {
  Status s = failure(500, kReasonInternalError, "Internal error occurred: " + std::string(err));
  s.details = StatusDetails{};
  s.details->causes.push_back(StatusCause{"", std::string(err), ""});
  return s;
}

Status newTimeoutError(std::string_view message, std::int32_t retry_after_seconds) {
  Status s = failure(504, kReasonTimeout, "Timeout: " + std::string(message));
  s.details = StatusDetails{};
  s.details->retry_after_seconds = retry_after_seconds;
  return s;
}

Status newRequestTimeout() { return newTimeoutError(kRequestTimeoutMessage, 0); }

Status newTooManyRequestsError(std::string_view message) {
  return failure(429, kReasonTooManyRequests, "Too many requests: " + std::string(message));
}

Status newRequestEntityTooLargeError(std::string_view message) {
  return failure(413, kReasonRequestEntityTooLarge,
                 "Request entity too large: " + std::string(message));
}

Status newGenericServerResponse(int code, std::string_view verb, const GroupResource& resource,
                                std::string_view name, std::string_view server_message,
                                std::int32_t retry_after_seconds, bool is_unexpected_response) {
  std::string_view reason = kReasonUnknown;
  std::string message = "the server responded with the status code " + std::to_string(code) +
                        " but did not return more information";
  switch (code) {
    case 409:
      reason = verb == "POST" ? kReasonAlreadyExists : kReasonConflict;
      message = "the server reported a conflict";
      break;
    case 404:
      reason = kReasonNotFound;
      message = "the server could not find the requested resource";
      break;
    case 400:
      reason = kReasonBadRequest;
      message = "the server rejected our request for an unknown reason";
      break;
    case 401:
      reason = kReasonUnauthorized;
      message = "the server has asked for the client to provide credentials";
      break;
    case 403:
      reason = kReasonForbidden;
      message = std::string(server_message);  // names who tried what: kept as sent
      break;
    case 406:
      reason = kReasonNotAcceptable;
      if (server_message.empty() || server_message == "unknown") {
        message = "the server was unable to respond with a content type that the client supports";
      } else {
        message = std::string(server_message);
      }
      break;
    case 415:
      reason = kReasonUnsupportedMediaType;
      message = std::string(server_message);
      break;
    case 405:
      reason = kReasonMethodNotAllowed;
      message = "the server does not allow this method on the requested resource";
      break;
    case 422:
      reason = kReasonInvalid;
      message = "the server rejected our request due to an error in our request";
      break;
    case 503:
      reason = kReasonServiceUnavailable;
      message = "the server is currently unable to handle the request";
      break;
    case 504:
      reason = kReasonTimeout;
      message =
          "the server was unable to return a response in the time allotted, but may still be "
          "processing the request";
      break;
    case 429:
      reason = kReasonTooManyRequests;
      message = "the server has received too many requests and has asked us to try again later";
      break;
    default:
      if (code >= 500) {
        reason = kReasonInternalError;
        message = "an error on the server (" + go::quote(server_message) +
                  ") has prevented the request from succeeding";
      }
  }
  if (!resource.empty()) {
    message += " (" + asciiLower(verb) + " " + resource.toString();
    if (!name.empty()) message += " " + std::string(name);
    message += ")";
  }
  Status s = failure(code, reason, std::move(message));
  s.details = resourceDetails(resource, name);
  s.details->retry_after_seconds = retry_after_seconds;
  if (is_unexpected_response) {
    s.details->causes.push_back(
        StatusCause{std::string(kCauseUnexpectedServerResponse), std::string(server_message), ""});
  }
  return s;
}

Result<std::string> parseMediaType(std::string_view content_type) {
  // Go mime.ParseMediaType (src/mime/mediatype.go).
  const auto semicolon = content_type.find(';');
  const std::string_view base = content_type.substr(0, semicolon);
  const std::string media_type = go::trimSpace(asciiLower(base));
  {
    auto [type, rest] = consumeToken(media_type);
    if (type.empty()) return mimeError("no media type");
    if (!rest.empty()) {
      if (rest.front() != '/') return mimeError("expected slash after first token");
      auto [subtype, after] = consumeToken(rest.substr(1));
      if (subtype.empty()) return mimeError("expected token after slash");
      if (!after.empty()) return mimeError("unexpected content after media subtype");
    }
  }
  std::set<std::string> seen;
  std::string_view v = content_type.substr(base.size());
  while (!v.empty()) {
    v = trimLeftSpace(v);
    if (v.empty()) break;
    bool found = false;
    auto [key, rest] = consumeMediaParam(v, found);
    if (!found) {
      if (go::trimSpace(rest) == ";") break;  // trailing semicolons are ignored
      return mimeError("invalid media parameter");
    }
    if (!seen.insert(key).second) return mimeError("duplicate parameter name");
    v = rest;
  }
  return media_type;
}

bool isTextResponse(std::string_view content_type) {
  if (content_type.empty()) return true;
  const auto media = parseMediaType(content_type);
  return media.ok() && media->rfind("text/", 0) == 0;
}

Status unstructuredResponseError(int code, std::string_view content_type, std::string_view body,
                                 std::int32_t retry_after_seconds, std::string_view method) {
  if (body.size() > kMaxUnstructuredResponseTextBytes) {
    body = body.substr(0, kMaxUnstructuredResponseTextBytes);
  }
  const std::string message = isTextResponse(content_type) ? go::trimSpace(body) : "unknown";
  return newGenericServerResponse(code, method, GroupResource{}, "", message, retry_after_seconds,
                                  true);
}

Status statusFromErrorResponse(int code, std::string_view content_type, std::string_view body,
                               std::int32_t retry_after_seconds, std::string_view method) {
  // transformResponse: an empty header falls back to the client's content type (JSON), so only
  // a present, unparseable header fails here.
  if (!content_type.empty()) {
    const auto media = parseMediaType(content_type);
    if (!media.ok()) return newInternalError(media.error().message);
  }
  // Result.Error: the webhook client's decoder accepts any media type, so a JSON Status body is
  // recognised whatever the Content-Type says.
  if (!body.empty()) {
    // Text that is not JSON falls through to the generic error.
    if (const auto j = parseJson(body); j && j->is_object() &&
                                        j->value("kind", nlohmann::json()) == "Status") {
      const auto api_version = j->value("apiVersion", nlohmann::json(""));
      if (api_version == "" || api_version == "v1") {
        auto decoded = statusFromJson(*j);
        if (decoded.ok() && decoded->status == kStatusFailure) return std::move(decoded).value();
      }
    }
  }
  return unstructuredResponseError(code, content_type, body, retry_after_seconds, method);
}

}  // namespace harness::core
