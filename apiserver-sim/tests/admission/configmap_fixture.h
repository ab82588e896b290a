#pragma once

// What the admission tests admit: a ConfigMap CREATE in namespace "demo", webhooks whose one rule
// matches it, and the configurations that hold them. Shared by chain_test.cc and
// webhook_admission_test.cc.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/admission_review.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/store.h"

namespace harness::sim::fixture {

// The namespace the ConfigMap is created in (Active).
inline void putDemoNamespace(ObjectStore& store) {
  store.put({"", "namespaces"}, {{"apiVersion", "v1"},
                                 {"kind", "Namespace"},
                                 {"metadata", {{"name", "demo"}}},
                                 {"status", {{"phase", "Active"}}}});
}

// CREATE of ConfigMap demo/settings, labelled app=web.
inline WriteRequest configMapCreate(std::optional<std::chrono::milliseconds> timeout) {
  WriteRequest request;
  request.operation = "CREATE";
  request.resource = {"", "v1", "configmaps"};
  request.namespace_name = "demo";
  request.name = "settings";
  request.object = nlohmann::json{
      {"apiVersion", "v1"},
      {"kind", "ConfigMap"},
      {"metadata", {{"name", "settings"}, {"labels", {{"app", "web"}}}}},
      {"data", {{"k", "v"}}}};
  request.timeout = timeout;
  return request;
}

// A v1 webhook called at https://<name>/ for ConfigMap CREATEs, sideEffects None.
inline nlohmann::json configMapWebhook(const std::string& name, int timeout_seconds) {
  return {{"name", name},
          {"clientConfig", {{"url", "https://" + name + "/"}}},
          {"rules",
           nlohmann::json::array({{{"operations", {"CREATE"}},
                                   {"apiGroups", {""}},
                                   {"apiVersions", {"v1"}},
                                   {"resources", {"configmaps"}}}})},
          {"sideEffects", "None"},
          {"admissionReviewVersions", {"v1"}},
          {"timeoutSeconds", timeout_seconds}};
}

// A MutatingWebhookConfiguration or ValidatingWebhookConfiguration holding `hooks`.
inline nlohmann::json configuration(const std::string& kind, const std::string& name,
                                    nlohmann::json hooks) {
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", kind},
          {"metadata", {{"name", name}}},
          {"webhooks", std::move(hooks)}};
}

// An answer to `review`: allowed, or denied with `deny` as a 403 Status's message.
inline core::AdmissionReview answerTo(const core::AdmissionReview& review,
                                      const std::string& deny) {
  core::AdmissionResponse response;
  response.uid = review.request->uid;
  response.allowed = deny.empty();
  if (!deny.empty()) {
    core::Status status;
    status.status = std::string(core::kStatusFailure);
    status.message = deny;
    status.code = 403;
    response.status = status;
  }
  return core::AdmissionReview{review.api_version, review.kind, std::nullopt, response};
}

}  // namespace harness::sim::fixture
