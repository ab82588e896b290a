#pragma once

// istiod on OpenShift (PLATFORM=openshift): the proxy's UID and GID come from the pod's
// Namespace, whose SCC annotations OpenShift fills with the namespace's preallocated ranges
// (pkg/kube/inject/inject.go GetProxyIDs, openshift.go getPreallocatedUIDRange and
// getPreallocatedSupplementalGroups, ParseBlock copied there from openshift/library-go), and an
// istio-proxy container given in the pod that runs as the application's user has that user
// dropped before injection (webhook.go inject, isSidecarUserMatchingAppUser). Pure: the caller
// reads the Namespace through the Kubernetes API.

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/injector/istio/config.h"
#include "harness/injector/istio/log.h"

namespace harness::injector::istio {

inline constexpr std::string_view kUidRangeAnnotation = "openshift.io/sa.scc.uid-range";
inline constexpr std::string_view kSupplementalGroupsAnnotation =
    "openshift.io/sa.scc.supplemental-groups";

// The platform istiod runs on: its PLATFORM env, which the chart sets from
// values.global.platform and then from values.pilot.env (the later entry wins); both are in
// the injector ConfigMap's values. `override_platform` (non-empty) replaces it.
bool isOpenShift(const InjectorSettings& settings, std::string_view override_platform = {});

// A block of IDs, "<start>/<size>" or "<start>-<end>", read as fmt.Sscanf reads it into
// uint32s (so "5/0" ends at 4 and "0/0" wraps to 4294967295, as in Go). Errors carry Go's text.
struct UidBlock {
  std::uint32_t start = 0;
  std::uint32_t end = 0;
};
core::Result<UidBlock> parseUidBlock(std::string_view text);

// GetProxyIDs: (uid, gid) for the template's .ProxyUID and .ProxyGID. 1337 each without a
// namespace (null); otherwise the uid is the end of the namespace's uid range, the gid the end
// of the first supplemental group block (the uid range when that annotation is missing), each
// left at 1337 when its annotation is missing, empty or does not parse.
std::pair<std::int64_t, std::int64_t> proxyIds(const nlohmann::json& namespace_object);

// The OpenShift step of webhook.go inject: when the pod already has an istio-proxy container
// with a securityContext and its runAsUser equals the application's (the last other container
// that sets one, istio-validation and istio-init aside; unset counts as 0), its runAsUser and
// runAsGroup are removed. Returns whether it did.
bool resetSidecarUserMatchingApp(nlohmann::json& pod, std::vector<LogLine>* logs);

}  // namespace harness::injector::istio
