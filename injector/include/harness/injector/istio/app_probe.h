#pragma once

// Application probe rewriting: pkg/kube/inject/app_probe.go (DumpAppProbers,
// patchRewriteProbe, ShouldRewriteAppHTTPProbers) and webhook.go applyRewrite /
// mergeOrAppendProbers. See docs/istio-injector.md §2.6.

#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace harness::injector::istio {

inline constexpr char kKubeAppProberEnvName[] = "ISTIO_KUBE_APP_PROBERS";

// The annotation sidecar.istio.io/rewriteAppHTTPProbers when it parses as a bool, else
// `values_default` (sidecarInjectorWebhook.rewriteAppHTTPProbe).
bool shouldRewriteAppHTTPProbers(const std::map<std::string, std::string>& annotations,
                                 bool values_default);

// The ISTIO_KUBE_APP_PROBERS value for `pod` (initContainers + containers, istio-proxy
// excluded), Go's json.Marshal of the map: sorted keys, struct field order inside. "" when
// nothing is to be redirected.
std::string dumpAppProbers(const nlohmann::json& pod, int status_port);

// Rewrites the probes and lifecycle handlers of `pod` in place to go through the agent on the
// status port (the annotation status.sidecar.istio.io/port, else `mesh_status_port`).
void patchRewriteProbe(nlohmann::json& pod, int mesh_status_port);

// applyRewrite: both steps on the injected pod when an istio-proxy exists and rewriting is on.
// `previously_injected`: the pod had sidecar.istio.io/status (merge instead of append).
void applyRewrite(nlohmann::json& pod, bool values_rewrite_default, int mesh_status_port);

}  // namespace harness::injector::istio
