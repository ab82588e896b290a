#pragma once

// Whether istio-proxy is injected as a native sidecar (an init container with restartPolicy
// Always): istiod's ENABLE_NATIVE_SIDECARS (pilot/pkg/features/pilot.go EnableNativeSidecars)
// and, in auto mode, the kubelet versions of the cluster's nodes (pkg/kube/inject/webhook.go
// DetectNativeSidecar). Pure: the caller reads the nodes through the Kubernetes API.

#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/injector/istio/config.h"
#include "harness/injector/istio/log.h"

namespace harness::injector::istio {

enum class NativeSidecarMode { kDisabled, kEnabled, kAuto };

// features.EnableNativeSidecars: exactly "true", "false" or "auto"; anything else is disabled,
// with istiod's warning.
NativeSidecarMode parseNativeSidecarMode(std::string_view value, std::vector<LogLine>* logs);

// The mode istiod runs with for this configuration: values.pilot.env.ENABLE_NATIVE_SIDECARS
// (the chart gives istiod its pilot.env, and copies it into the injector ConfigMap's values),
// else the release's default: "auto" since 1.27, "false" up to 1.26.
NativeSidecarMode nativeSidecarModeOf(const InjectorSettings& settings,
                                      std::vector<LogLine>* logs);

// The minor version of a kubelet version as hashicorp/go-version reads it ("v1.33.2-eks-1" ->
// 33, "1" -> 0); nullopt when it does not parse ("", "abc").
std::optional<int> kubeletMinor(std::string_view version);

// DetectNativeSidecar. `nodes` is nullopt without a node client (then auto is off); `pod_node`
// is the node named by the pod's spec.nodeName when that node exists. In auto mode: that node's
// kubelet must be 1.33 or newer, else every node's (an empty list passes).
bool detectNativeSidecar(NativeSidecarMode mode,
                         const std::optional<std::vector<nlohmann::json>>& nodes,
                         const nlohmann::json* pod_node, std::vector<LogLine>* logs);

}  // namespace harness::injector::istio
