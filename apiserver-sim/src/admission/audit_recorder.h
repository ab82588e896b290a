#pragma once

// Internal to the admission module: the audit event of one request, as kube-apiserver's WithAudit
// filter and the admission audit decorator build it (docs/admission-chain.md §7).
// Followed: apiserver pkg/endpoints/filters/audit.go (RequestReceived and ResponseComplete
// stages, the response code when no Status was logged), pkg/endpoints/filters/authorization.go
// (the decision annotations), pkg/endpoints/handlers/create.go (LogRequestObject after decoding),
// pkg/admission/audit.go (annotations copied after each phase), pkg/audit/request.go.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/audit/event.h"
#include "harness/audit/policy.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/attributes.h"

namespace harness::sim {

// The request URI a client (kubectl) calls for a write: /api/v1/namespaces/<ns>/<resource>
// [/<name>[/<subresource>]] or /apis/<group>/<version>/..., with ?dryRun=All on dry run.
// CREATE posts to the collection (no name) unless it is a subresource.
std::string requestUriFor(const core::GroupVersionResource& resource, const std::string& ns,
                          const std::string& name, const std::string& subresource,
                          const std::string& operation, bool dry_run);

// One write request's audit event. Without a policy, or at level None, it records nothing.
class AuditRecorder {
 public:
  AuditRecorder(const ChainOptions& options, AdmissionResult& result, const std::string& verb,
                const WriteRequest& request, const AdmissionAttributes& attributes);

  // The RequestReceived stage (sent to the sink unless the policy omits the stage).
  void requestReceived();
  // The authorizer's decision (ChainOptions::authorize): "allow" or "forbid" and its reason.
  void setAuthorization(bool allowed, const std::string& reason);
  // LogRequestObject: the decoded (and defaulted) body; objectRef completed from its metadata.
  void setRequestObject(const std::optional<nlohmann::json>& object);
  // Admission annotations of the phase that just ended, at the event's level.
  void copyAnnotations();
  // The ResponseComplete stage: response status and object; stored in result.audit_event.
  void responseComplete(AdmissionResult& result);

 private:
  const ChainOptions& options_;
  AdmissionResult& result_;
  std::optional<audit::Event> event_;  // nullopt: not audited
  audit::RequestAuditConfig config_;
  std::string api_group_, api_version_, resource_, subresource_;
};

// A request that does not go through admission (GET, LIST): both stages at once.
void auditReadRequest(const ChainOptions& options, const std::string& audit_id,
                      const std::string& verb, const core::GroupVersionResource& resource,
                      const std::string& namespace_name, const std::string& name,
                      const core::UserInfo& user, const std::string& request_uri, int code,
                      const std::optional<nlohmann::json>& response_object);

}  // namespace harness::sim
