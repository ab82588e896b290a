#pragma once

// Istio's sidecar injection as a pure function: the decision (inject.go injectRequired), the
// template rendering and strategic merge (inject.go RunTemplate), re-injection
// (stripPod/reinsertOverrides/reapplyOverwrittenContainers), post-processing (webhook.go
// postProcessPod) and the JSON patch (webhook.go createPatch). See docs/istio-injector.md §1-§4.
// The HTTP shell (AdmissionReview decoding, paths, response codes) is not here.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/json_patch.h"
#include "harness/injector/istio/config.h"
#include "harness/injector/istio/log.h"

namespace harness::injector::istio {

// The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant()
// into a throw it cannot reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct AdmissionInput {
  nlohmann::json pod;             // request.object
  std::string request_namespace;  // request.namespace, fills an empty metadata.namespace
  // parseInjectEnvs of the request path (ISTIO_META_CLUSTER_ID, ISTIO_META_NETWORK, ...).
  std::map<std::string, std::string> proxy_envs;
  // DetectNativeSidecar's answer for this pod (ENABLE_NATIVE_SIDECARS and the kubelets).
  bool native_sidecars = true;
  // istiod on OpenShift with a namespace client (webhook.go inject): the pod's Namespace as
  // read (null when not found) gives .ProxyUID/.ProxyGID, and a given istio-proxy running as
  // the application's user loses that user (openshift.h).
  bool openshift = false;
  nlohmann::json namespace_object = nullptr;
};

enum class Decision {
  kInject,  // allowed, JSONPatch
  kSkip,    // allowed, no patch (injection not required)
  kError,   // allowed=false with error_message (invalid annotation, unknown template, ...)
};

std::string_view decisionName(Decision decision);

// The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant()
// into a throw it cannot reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct Outcome {
  Decision decision = Decision::kSkip;
  std::string reason;  // injectRequired's reason
  core::JsonPatch patch;
  nlohmann::json injected_pod = nullptr;  // the final pod (kInject)
  std::string error_message;              // kError: AdmissionResponse.result.message
  std::vector<LogLine> logs;

  // A readable summary: every field above as JSON (the patch encoded).
  [[nodiscard]] nlohmann::json toJson() const;
};

// webhook.go inject: skip check, then injectPod.
Outcome admit(const InjectorSettings& settings, const AdmissionInput& input);

// What injectPod needs besides the settings.
// The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant()
// into a throw it cannot reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct InjectionParams {
  nlohmann::json pod;                // with namespace filled and managedFields removed
  nlohmann::json deploy_meta;        // {name, namespace}
  nlohmann::json type_meta;          // {kind, apiVersion}
  std::map<std::string, std::string> proxy_envs;
  bool native_sidecars = true;
  std::vector<std::string> default_templates;  // overrides config's when non-empty
  bool use_aliases = true;
  bool use_injected_annotations = true;
  // ProxyConfig CRs resolved by the caller (merged over mesh defaultConfig before the pod's
  // proxy.istio.io/config annotation); null = none.
  nlohmann::json proxy_config_overlay = nullptr;
  // The Namespace GetProxyIDs reads (OpenShift's webhook only; kube-inject never has one).
  nlohmann::json namespace_object = nullptr;
};

// The injected pod (before diffing). Errors carry Istio's texts, e.g.
// "failed to run injection template: requested template \"x\" not found; have sidecar".
core::Result<nlohmann::json> injectPod(const InjectorSettings& settings,
                                       const InjectionParams& params);

// kube.GetDeployMetaFromPod: ({name, namespace}, {kind, apiVersion}).
std::pair<nlohmann::json, nlohmann::json> deployMetaFromPod(const nlohmann::json& pod);

// istioctl kube-inject for one object (Pod, Deployment, DaemonSet, ReplicaSet, StatefulSet,
// Job, CronJob, ReplicationController): returns the object with its pod template injected,
// or unchanged (with a warning in `warnings`) when skipped. Other kinds come back unchanged.
core::Result<nlohmann::json> kubeInject(const InjectorSettings& settings,
                                        const nlohmann::json& object,
                                        std::vector<std::string>* warnings = nullptr,
                                        bool native_sidecars = false);

// The sidecar.istio.io/status value for a rendered template pod (getInjectionStatus).
std::string injectionStatus(const nlohmann::json& template_spec, const std::string& revision);

// The Go round trip through corev1.Pod that Istio does after every merge, as far as it shows
// in output: nulls dropped, omitempty empties dropped, env values "" dropped, quantities
// canonical.
nlohmann::json goPodRoundTrip(const nlohmann::json& pod);
// The same on the pod itself.
void goPodRoundTripInPlace(nlohmann::json& pod);

// resource.Quantity's canonical form ("2000m" -> "2", "1024Mi" -> "1Gi"); the input on error.
std::string canonicalQuantity(const std::string& text);

}  // namespace harness::injector::istio
