// The access reviews of authorization.k8s.io/v1, answered as k8s.io/kubernetes
// pkg/registry/authorization/{selfsubjectaccessreview,subjectaccessreview,
// localsubjectaccessreview,selfsubjectrulesreview}/rest.go REST.Create do (validation:
// pkg/apis/authorization/validation; each review is answered with its status, 201):
//   SelfSubjectAccessReview (`kubectl auth can-i`), for the user of the request: the simulator's
//     admin, or the user named by the impersonation headers (k8s.io/apiserver
//     pkg/endpoints/filters/impersonation.go: the impersonated user gets the groups asked for, a
//     service account its service account groups when none are, and system:authenticated);
//   SubjectAccessReview and LocalSubjectAccessReview, for the user the spec names;
//   SelfSubjectRulesReview (`kubectl auth can-i --list`): the rules RBAC's rule resolver lists
//     for the user in spec.namespace.
// The decisions are the simulator's authorizer's (harness/sim/authorizer.h: system:masters, then
// RBAC over the store's roles and bindings); status.reason is its reason ("RBAC: allowed by
// ..."), as kube-apiserver's union authorizer passes it on.

#include <algorithm>

#include "handler.h"
#include "responses.h"
#include "harness/core/json.h"
#include "harness/core/yaml.h"
#include "harness/go/strconv.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/authorizer.h"

namespace harness::sim {
namespace {

constexpr std::string_view kServiceAccountPrefix = "system:serviceaccount:";

bool isMapping(const nlohmann::json& value) { return value.is_object(); }

}  // namespace

core::UserInfo requestUser(const net::Request& http) {
  const auto user = http.headers.get("Impersonate-User");
  if (!user) return defaultAdminUser();
  core::UserInfo out;
  out.username = *user;
  out.groups = http.headers.getAll("Impersonate-Group");
  if (auto uid = http.headers.get("Impersonate-Uid")) out.uid = *uid;
  if (out.groups.empty() && out.username.rfind(kServiceAccountPrefix, 0) == 0) {
    // system:serviceaccount:<namespace>:<name>
    const std::string rest = out.username.substr(kServiceAccountPrefix.size());
    const auto colon = rest.find(':');
    if (colon != std::string::npos) {
      out.groups = {"system:serviceaccounts", "system:serviceaccounts:" + rest.substr(0, colon)};
    }
  }
  if (out.username != "system:anonymous" &&
      std::find(out.groups.begin(), out.groups.end(), "system:authenticated") ==
          out.groups.end()) {
    out.groups.push_back("system:authenticated");
  }
  return out;
}

namespace {

constexpr std::string_view kSelfSubjectAccessReviews = "selfsubjectaccessreviews";
constexpr std::string_view kSubjectAccessReviews = "subjectaccessreviews";
constexpr std::string_view kLocalSubjectAccessReviews = "localsubjectaccessreviews";
constexpr std::string_view kSelfSubjectRulesReviews = "selfsubjectrulesreviews";

std::string kindOf(std::string_view resource) {
  if (resource == kSelfSubjectAccessReviews) return "SelfSubjectAccessReview";
  if (resource == kSubjectAccessReviews) return "SubjectAccessReview";
  if (resource == kLocalSubjectAccessReviews) return "LocalSubjectAccessReview";
  return "SelfSubjectRulesReview";
}

std::string stringAt(const nlohmann::json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// field.Error prints a nil pointer as null, a struct with %#v.
std::string nonResourceValue(const nlohmann::json& non_resource) {
  return isMapping(non_resource)
             ? "authorization.NonResourceAttributes{Path:" +
                   go::quote(stringAt(non_resource, "path")) +
                   ", Verb:" + go::quote(stringAt(non_resource, "verb")) + "}"
             : std::string("null");
}

// authorizationutil.AuthorizationAttributesFrom(spec), the user of a SelfSubjectAccessReview
// being the request's.
AuthorizationAttributes attributesFrom(const nlohmann::json& spec, core::UserInfo user) {
  AuthorizationAttributes attributes;
  attributes.user = std::move(user);
  const nlohmann::json resource = spec.value("resourceAttributes", nlohmann::json());
  if (isMapping(resource)) {
    attributes.verb = stringAt(resource, "verb");
    attributes.namespace_name = stringAt(resource, "namespace");
    attributes.api_group = stringAt(resource, "group");
    attributes.api_version = stringAt(resource, "version");
    attributes.resource = stringAt(resource, "resource");
    attributes.subresource = stringAt(resource, "subresource");
    attributes.name = stringAt(resource, "name");
  } else {
    const nlohmann::json non_resource = spec.value("nonResourceAttributes", nlohmann::json());
    attributes.resource_request = false;
    attributes.verb = stringAt(non_resource, "verb");
    attributes.path = stringAt(non_resource, "path");
  }
  return attributes;
}

std::vector<std::string> stringList(const nlohmann::json& object, const char* key) {
  std::vector<std::string> out;
  if (!object.is_object() || !object.contains(key) || !object[key].is_array()) return out;
  for (const auto& value : object[key]) {
    if (value.is_string()) out.push_back(value.get<std::string>());
  }
  return out;
}

}  // namespace

bool isAccessReview(const rest::RequestInfo& info) {
  return info.api_group == "authorization.k8s.io" && info.api_version == "v1" &&
         (info.resource == kSelfSubjectAccessReviews || info.resource == kSubjectAccessReviews ||
          info.resource == kLocalSubjectAccessReviews ||
          info.resource == kSelfSubjectRulesReviews);
}

net::Response RestApiHandler::Impl::accessReview(const rest::Call& call) {
  const rest::RequestInfo& info = call.info;
  const bool local = info.resource == kLocalSubjectAccessReviews;
  // Create-only resources: their collection path takes POST, there is no object path; the local
  // review is namespaced, the others are cluster-scoped.
  if (!info.name.empty() || !info.subresource.empty() ||
      local == info.namespace_name.empty()) {
    return rest::statusResponse(rest::routerError(404));
  }
  if (info.verb != "create") return rest::statusResponse(rest::routerError(405));
  // The registry names the kind of the decoded internal object, which has none: the 422 reads
  // `.authorization.k8s.io "" is invalid: ...` (as kube-apiserver v1.37.2 answers).
  const core::GroupKind kind{"authorization.k8s.io", ""};
  // kubectl's typed clients send built-in kinds as protobuf (client-go's default content type for
  // them), so `kubectl auth can-i` posts the review in protobuf when the server offers it.
  const ProtobufDecoder protobuf = protobufDecoder();
  const auto format =
      rest::negotiateInput(call.http->headers.get("Content-Type"), protobuf != nullptr);
  if (!format) {
    return rest::statusResponse(rest::unsupportedMediaType(
        protobuf ? std::vector<std::string>{"application/json", "application/yaml",
                                            "application/vnd.kubernetes.protobuf"}
                 : std::vector<std::string>{"application/json", "application/yaml"}));
  }
  auto body = *format == rest::BodyFormat::kProtobuf ? protobuf(call.http->body)
              : *format == rest::BodyFormat::kYaml   ? core::parseYaml(call.http->body)
                                                     : core::parseJson(call.http->body);
  if (!body.ok()) return rest::statusResponse(core::newBadRequest(body.error().message));
  nlohmann::json review = std::move(*body);
  const std::string review_kind = kindOf(info.resource);
  if (!review.is_object()) {
    return rest::statusResponse(core::newBadRequest(
        "the body of the request was not a " + review_kind + " object"));
  }
  nlohmann::json spec = review.value("spec", nlohmann::json::object());
  if (!spec.is_object()) spec = nlohmann::json::object();
  nlohmann::json metadata = review.value("metadata", nlohmann::json::object());
  if (!metadata.is_object()) metadata = nlohmann::json::object();
  if (local) {
    // EnsureObjectNamespaceMatchesRequestNamespace (the create handler, before the registry).
    const std::string object_namespace = stringAt(metadata, "namespace");
    if (object_namespace.empty()) {
      metadata["namespace"] = info.namespace_name;
    } else if (object_namespace != info.namespace_name) {
      return rest::statusResponse(core::newBadRequest(
          "the namespace of the provided object does not match the namespace sent on the "
          "request"));
    }
  }

  if (info.resource == kSelfSubjectRulesReviews) {
    const std::string namespace_name = stringAt(spec, "namespace");
    if (namespace_name.empty()) {
      return rest::statusResponse(core::newBadRequest("no namespace on request"));
    }
    const SubjectRules rules = rulesFor(store, call.user, namespace_name);
    nlohmann::json status = {{"resourceRules", rules.resource_rules},
                             {"nonResourceRules", rules.non_resource_rules},
                             {"incomplete", false}};
    if (!rules.evaluation_error.empty()) status["evaluationError"] = rules.evaluation_error;
    // The registry answers a new object: the spec is not echoed.
    return rest::jsonResponse(201, {{"kind", review_kind},
                                    {"apiVersion", "authorization.k8s.io/v1"},
                                    {"metadata", nlohmann::json::object()},
                                    {"spec", nlohmann::json::object()},
                                    {"status", std::move(status)}});
  }

  const nlohmann::json resource = spec.value("resourceAttributes", nlohmann::json());
  const nlohmann::json non_resource = spec.value("nonResourceAttributes", nlohmann::json());
  core::FieldErrors errors;
  if (isMapping(resource) == isMapping(non_resource)) {
    core::FieldError error = core::FieldError::invalid(
        "spec", "", "exactly one of nonResourceAttributes or resourceAttributes must be specified");
    error.bad_value = nonResourceValue(non_resource);
    errors.push_back(std::move(error));
  }
  const bool names_subject = info.resource != kSelfSubjectAccessReviews;
  if (names_subject && stringAt(spec, "user").empty() && stringList(spec, "groups").empty()) {
    core::FieldError error = core::FieldError::invalid(
        "spec.user", "", "at least one of user or group must be specified");
    error.bad_value = "\"\"";
    errors.push_back(std::move(error));
  }
  for (const auto& [key, value] : metadata.items()) {
    if (local && key == "namespace") continue;
    if (key != "managedFields" && key != "creationTimestamp" && !value.is_null() &&
        value != "" && value != nlohmann::json::object()) {
      errors.push_back(core::FieldError{
          core::FieldErrorType::kInvalid, "metadata", metadata.dump(),
          local ? "must be empty except for namespace" : "must be empty"});
      break;
    }
  }
  if (local) {
    if (isMapping(resource) &&
        stringAt(resource, "namespace") != stringAt(metadata, "namespace")) {
      errors.push_back(core::FieldError{core::FieldErrorType::kInvalid,
                                        "spec.resourceAttributes.namespace",
                                        go::quote(stringAt(resource, "namespace")),
                                        "must match metadata.namespace"});
    }
    if (isMapping(non_resource)) {
      errors.push_back(core::FieldError{core::FieldErrorType::kInvalid,
                                        "spec.nonResourceAttributes",
                                        nonResourceValue(non_resource),
                                        "disallowed on this kind of request"});
    }
  }
  if (!errors.empty()) return rest::statusResponse(core::newInvalid(kind, "", errors));

  core::UserInfo user = call.user;
  if (names_subject) {
    user = core::UserInfo{};
    user.username = stringAt(spec, "user");
    user.uid = stringAt(spec, "uid");
    user.groups = stringList(spec, "groups");
    const nlohmann::json extra = spec.value("extra", nlohmann::json::object());
    if (extra.is_object()) {
      for (const auto& item : extra.items()) {
        user.extra[item.key()] = stringList(extra, item.key().c_str());
      }
    }
  }
  const Authorization decision = authorize(store, attributesFrom(spec, std::move(user)));
  nlohmann::json status = {{"allowed", decision.allowed()}};
  if (decision.decision == Authorization::Decision::kDeny) status["denied"] = true;
  if (!decision.reason.empty()) status["reason"] = decision.reason;
  review["apiVersion"] = "authorization.k8s.io/v1";
  review["kind"] = review_kind;
  // (no managedFields here; a local review keeps its namespace)
  review["metadata"] = local ? nlohmann::json{{"namespace", info.namespace_name}}
                             : nlohmann::json::object();
  review["status"] = std::move(status);
  return rest::jsonResponse(201, review);
}

}  // namespace harness::sim
