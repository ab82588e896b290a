// SelfSubjectAccessReview (`kubectl auth can-i`): POST
// /apis/authorization.k8s.io/v1/selfsubjectaccessreviews, answered as
// k8s.io/kubernetes pkg/registry/authorization/selfsubjectaccessreview/rest.go REST.Create does
// (validation: pkg/apis/authorization/validation ValidateSelfSubjectAccessReview; the review is
// answered with its status, 201), for the user of the request: the simulator's admin, or the user
// named by the impersonation headers (k8s.io/apiserver pkg/endpoints/filters/impersonation.go:
// the admin may impersonate anyone; the impersonated user gets the groups asked for, a service
// account its service account groups when none are, and system:authenticated).
//
// The simulator's authorizer is the one the CEL `authorizer` variable sees (kube-cel authz.go):
// the system:masters group is allowed everything (the privileged-group authorizer kube-apiserver
// runs first), every other user gets no opinion, which is RBAC's answer when no role grants the
// request: `kubectl auth can-i` prints "no". The simulator has no RBAC: roles and bindings are
// stored, never evaluated, and the bootstrap roles every user has on a cluster (discovery,
// /healthz, self reviews) are not granted either.

#include <algorithm>


#include "handler.h"
#include "responses.h"
#include "harness/core/json.h"
#include "harness/core/yaml.h"
#include "harness/go/strconv.h"
#include "harness/sim/admission_chain.h"

namespace harness::sim {
namespace {

constexpr std::string_view kServiceAccountPrefix = "system:serviceaccount:";

// The user a request acts as.
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

bool isMapping(const nlohmann::json& value) { return value.is_object(); }

}  // namespace

bool isAccessReview(const rest::RequestInfo& info) {
  return info.api_group == "authorization.k8s.io" && info.api_version == "v1" &&
         info.resource == "selfsubjectaccessreviews";
}

net::Response RestApiHandler::Impl::accessReview(const rest::Call& call) {
  const rest::RequestInfo& info = call.info;
  // A create-only resource: its collection path takes POST, there is no object path.
  if (!info.name.empty() || !info.subresource.empty()) {
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
  if (!review.is_object()) {
    return rest::statusResponse(core::newBadRequest(
        "the body of the request was not a SelfSubjectAccessReview object"));
  }
  const nlohmann::json spec = review.value("spec", nlohmann::json::object());
  const nlohmann::json resource = spec.is_object() ? spec.value("resourceAttributes",
                                                                nlohmann::json())
                                                   : nlohmann::json();
  const nlohmann::json non_resource =
      spec.is_object() ? spec.value("nonResourceAttributes", nlohmann::json()) : nlohmann::json();
  core::FieldErrors errors;
  if (isMapping(resource) == isMapping(non_resource)) {
    core::FieldError error = core::FieldError::invalid(
        "spec", "", "exactly one of nonResourceAttributes or resourceAttributes must be specified");
    // field.Error prints a nil pointer as null, a struct with %#v.
    error.bad_value = isMapping(non_resource)
                          ? "authorization.NonResourceAttributes{Path:" +
                                go::quote(non_resource.value("path", std::string())) + ", Verb:" +
                                go::quote(non_resource.value("verb", std::string())) + "}"
                          : std::string("null");
    errors.push_back(std::move(error));
  }
  const nlohmann::json metadata = review.value("metadata", nlohmann::json::object());
  if (metadata.is_object()) {
    for (const auto& [key, value] : metadata.items()) {
      if (key != "managedFields" && key != "creationTimestamp" && !value.is_null() &&
          value != "" && value != nlohmann::json::object()) {
        errors.push_back(core::FieldError{core::FieldErrorType::kInvalid, "metadata",
                                          metadata.dump(), "must be empty"});
        break;
      }
    }
  }
  if (!errors.empty()) return rest::statusResponse(core::newInvalid(kind, "", errors));

  const core::UserInfo user = requestUser(*call.http);
  const bool allowed = std::find(user.groups.begin(), user.groups.end(), "system:masters") !=
                       user.groups.end();
  review["apiVersion"] = "authorization.k8s.io/v1";
  review["kind"] = "SelfSubjectAccessReview";
  review["metadata"] = nlohmann::json::object();  // (no managedFields here)
  review["status"] = {{"allowed", allowed}};
  return rest::jsonResponse(201, review);
}

}  // namespace harness::sim
