#include "audit_recorder.h"

#include <chrono>
#include <utility>

#include "harness/audit/annotations.h"

namespace harness::sim {

namespace {

using audit::Level;
using audit::Stage;

std::string pathPrefix(const core::GroupVersionResource& resource) {
  return resource.group.empty() ? "/api/" + resource.version
                                : "/apis/" + resource.group + "/" + resource.version;
}

audit::RequestAttributes policyAttributes(const std::string& verb, const core::UserInfo& user,
                                          const core::GroupVersionResource& resource,
                                          const std::string& subresource, const std::string& ns,
                                          const std::string& name) {
  audit::RequestAttributes attributes;
  attributes.user = user.username;
  attributes.groups = user.groups;
  attributes.verb = verb;
  attributes.api_group = resource.group;
  attributes.api_version = resource.version;
  attributes.resource = resource.resource;
  attributes.subresource = subresource;
  attributes.namespace_name = ns;
  attributes.name = name;
  return attributes;
}

audit::HttpRequestInfo httpInfo(const std::string& audit_id, const std::string& request_uri,
                                const std::string& user_agent, const std::string& source_ip,
                                const core::UserInfo& user) {
  audit::HttpRequestInfo info;
  info.audit_id = audit_id;
  info.request_uri = request_uri;
  info.user_agent = user_agent;
  if (!source_ip.empty()) info.source_ips = {source_ip};
  info.user_uid = user.uid;
  info.user_extra = user.extra;
  info.received = std::chrono::system_clock::now();
  return info;
}

// Allowed, as the privileged-group authorizer allows system:masters (its reason is empty); the
// filter records both keys at Metadata. With ChainOptions::authorize the chain replaces them with
// the authorizer's decision (setAuthorization).
void logAuthorization(audit::Event& event) {
  audit::logAnnotation(event, audit::kAuthorizationDecisionAnnotation, "allow");
  audit::logAnnotation(event, audit::kAuthorizationReasonAnnotation, "");
}

void emit(const ChainOptions& options, const audit::RequestAuditConfig& config,
          const audit::Event& event) {
  if (options.audit_sink && !config.omits(event.stage)) options.audit_sink(event);
}

// The WithAudit filter's last word: the response status (the code only, unless a Status was
// logged) and the stage.
void complete(audit::Event& event, int code) {
  if (!event.response_status) {
    core::Status status;
    status.code = code;
    event.response_status = std::move(status);
  }
  event.stage = Stage::kResponseComplete;
  event.stage_timestamp = std::chrono::system_clock::now();
}

}  // namespace

std::string requestUriFor(const core::GroupVersionResource& resource, const std::string& ns,
                          const std::string& name, const std::string& subresource,
                          const std::string& operation, bool dry_run) {
  std::string uri = pathPrefix(resource);
  if (!ns.empty() && resource.resource != "namespaces") uri += "/namespaces/" + ns;
  uri += "/" + resource.resource;
  const bool collection = operation == kOperationCreate && subresource.empty();
  if (!collection && !name.empty()) uri += "/" + name;
  if (!subresource.empty()) uri += "/" + subresource;
  if (dry_run) uri += "?dryRun=All";
  return uri;
}

AuditRecorder::AuditRecorder(const ChainOptions& options, AdmissionResult& result,
                             const std::string& verb, const WriteRequest& request,
                             const AdmissionAttributes& attributes)
    : options_(options), result_(result) {
  if (!options.audit_policy) return;
  // RequestInfo has no name for a create on a collection; LogRequestObject fills it in later.
  const bool collection = request.operation == kOperationCreate && request.subresource.empty();
  const auto policy_attributes =
      policyAttributes(verb, attributes.user_info, request.resource, request.subresource,
                       request.namespace_name, collection ? std::string() : request.name);
  config_ = audit::evaluatePolicy(*options.audit_policy, policy_attributes);
  if (config_.level == Level::kNone) return;
  const std::string uri = !request.request_uri.empty()
                              ? request.request_uri
                              : requestUriFor(request.resource, request.namespace_name,
                                              request.name, request.subresource,
                                              request.operation, request.dry_run);
  event_ = audit::newEventFromRequest(
      httpInfo(result.audit_id, uri, request.user_agent, request.source_ip, attributes.user_info),
      config_.level, policy_attributes);
  api_group_ = request.resource.group;
  api_version_ = request.resource.version;
  resource_ = request.resource.resource;
  subresource_ = request.subresource;
}

void AuditRecorder::requestReceived() {
  if (!event_) return;
  emit(options_, config_, *event_);
  logAuthorization(*event_);
}

void AuditRecorder::setAuthorization(bool allowed, const std::string& reason) {
  if (!event_) return;
  event_->annotations.erase(std::string(audit::kAuthorizationDecisionAnnotation));
  event_->annotations.erase(std::string(audit::kAuthorizationReasonAnnotation));
  audit::logAnnotation(*event_, audit::kAuthorizationDecisionAnnotation,
                       allowed ? "allow" : "forbid");
  audit::logAnnotation(*event_, audit::kAuthorizationReasonAnnotation, reason);
}

void AuditRecorder::setRequestObject(const std::optional<nlohmann::json>& object) {
  if (!event_ || !object) return;
  audit::logRequestObject(*event_, nlohmann::ordered_json(*object), api_group_, api_version_,
                          resource_, subresource_, config_.omit_managed_fields);
}

void AuditRecorder::copyAnnotations() {
  if (!event_) return;
  audit::logAnnotations(*event_, result_.annotations);
}

void AuditRecorder::responseComplete(AdmissionResult& result) {
  if (!event_) return;
  if (!result.allowed && result.status) {
    audit::logResponseObject(*event_, nlohmann::ordered_json(core::toJson(*result.status)),
                             config_.omit_managed_fields);
  } else if (result.object) {
    audit::logResponseObject(*event_, nlohmann::ordered_json(*result.object),
                             config_.omit_managed_fields);
  }
  complete(*event_, result.code);
  emit(options_, config_, *event_);
  result.audit_event = std::move(*event_);
  event_.reset();
}

void auditReadRequest(const ChainOptions& options, const std::string& audit_id,
                      const std::string& verb, const core::GroupVersionResource& resource,
                      const std::string& namespace_name, const std::string& name,
                      const core::UserInfo& user, const std::string& request_uri, int code,
                      const std::optional<nlohmann::json>& response_object) {
  if (!options.audit_policy) return;
  const auto attributes = policyAttributes(verb, user, resource, "", namespace_name, name);
  const auto config = audit::evaluatePolicy(*options.audit_policy, attributes);
  if (config.level == Level::kNone) return;
  audit::Event event = audit::newEventFromRequest(
      httpInfo(audit_id, request_uri, "", "127.0.0.1", user), config.level, attributes);
  emit(options, config, event);
  logAuthorization(event);
  if (response_object) {
    audit::logResponseObject(event, nlohmann::ordered_json(*response_object),
                             config.omit_managed_fields);
  }
  complete(event, code);
  emit(options, config, event);
}

}  // namespace harness::sim
