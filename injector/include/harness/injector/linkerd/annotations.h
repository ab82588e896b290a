#pragma once

// Annotation and label keys of Linkerd's injector (pkg/k8s/labels.go) and the lists the
// webhook iterates over (pkg/inject/inject.go ProxyAnnotations, ProxyAlphaConfigAnnotations).

#include <string>
#include <string_view>
#include <vector>

namespace harness::injector::linkerd {

namespace annotation {
inline constexpr std::string_view kInject = "linkerd.io/inject";
inline constexpr std::string_view kCreatedBy = "linkerd.io/created-by";
inline constexpr std::string_view kProxyVersion = "linkerd.io/proxy-version";
inline constexpr std::string_view kTrustRootSha256 = "linkerd.io/trust-root-sha256";

inline constexpr std::string_view kAdminPort = "config.linkerd.io/admin-port";
inline constexpr std::string_view kControlPort = "config.linkerd.io/control-port";
inline constexpr std::string_view kInboundPort = "config.linkerd.io/inbound-port";
inline constexpr std::string_view kOutboundPort = "config.linkerd.io/outbound-port";
inline constexpr std::string_view kPodInboundPorts = "config.linkerd.io/pod-inbound-ports";
inline constexpr std::string_view kEnableDebugSidecar = "config.linkerd.io/enable-debug-sidecar";
inline constexpr std::string_view kEnableExternalProfiles =
    "config.linkerd.io/enable-external-profiles";
inline constexpr std::string_view kImagePullPolicy = "config.linkerd.io/image-pull-policy";
inline constexpr std::string_view kProxyImage = "config.linkerd.io/proxy-image";
inline constexpr std::string_view kProxyVersionOverride = "config.linkerd.io/proxy-version";
inline constexpr std::string_view kProxyCpuRequest = "config.linkerd.io/proxy-cpu-request";
inline constexpr std::string_view kProxyCpuLimit = "config.linkerd.io/proxy-cpu-limit";
inline constexpr std::string_view kProxyCpuRatioLimit = "config.linkerd.io/proxy-cpu-ratio-limit";
inline constexpr std::string_view kProxyMemoryRequest = "config.linkerd.io/proxy-memory-request";
inline constexpr std::string_view kProxyMemoryLimit = "config.linkerd.io/proxy-memory-limit";
inline constexpr std::string_view kProxyEphemeralStorageRequest =
    "config.linkerd.io/proxy-ephemeral-storage-request";
inline constexpr std::string_view kProxyEphemeralStorageLimit =
    "config.linkerd.io/proxy-ephemeral-storage-limit";
inline constexpr std::string_view kProxyUid = "config.linkerd.io/proxy-uid";
inline constexpr std::string_view kProxyGid = "config.linkerd.io/proxy-gid";
inline constexpr std::string_view kProxyLogLevel = "config.linkerd.io/proxy-log-level";
inline constexpr std::string_view kProxyLogFormat = "config.linkerd.io/proxy-log-format";
inline constexpr std::string_view kProxyLogHttpHeaders = "config.linkerd.io/proxy-log-http-headers";
inline constexpr std::string_view kProxyRequireIdentityInboundPorts =
    "config.linkerd.io/proxy-require-identity-inbound-ports";
inline constexpr std::string_view kSkipInboundPorts = "config.linkerd.io/skip-inbound-ports";
inline constexpr std::string_view kSkipOutboundPorts = "config.linkerd.io/skip-outbound-ports";
inline constexpr std::string_view kSkipSubnets = "config.linkerd.io/skip-subnets";
inline constexpr std::string_view kOpaquePorts = "config.linkerd.io/opaque-ports";
inline constexpr std::string_view kProxyOutboundConnectTimeout =
    "config.linkerd.io/proxy-outbound-connect-timeout";
inline constexpr std::string_view kProxyInboundConnectTimeout =
    "config.linkerd.io/proxy-inbound-connect-timeout";
inline constexpr std::string_view kProxyOutboundDiscoveryCacheUnusedTimeout =
    "config.linkerd.io/proxy-outbound-discovery-cache-unused-timeout";
inline constexpr std::string_view kProxyInboundDiscoveryCacheUnusedTimeout =
    "config.linkerd.io/proxy-inbound-discovery-cache-unused-timeout";
inline constexpr std::string_view kProxyDisableOutboundProtocolDetectTimeout =
    "config.linkerd.io/proxy-disable-outbound-protocol-detect-timeout";
inline constexpr std::string_view kProxyDisableInboundProtocolDetectTimeout =
    "config.linkerd.io/proxy-disable-inbound-protocol-detect-timeout";
inline constexpr std::string_view kShutdownGracePeriod = "config.linkerd.io/shutdown-grace-period";
inline constexpr std::string_view kProxyAwait = "config.linkerd.io/proxy-await";
inline constexpr std::string_view kDefaultInboundPolicy =
    "config.linkerd.io/default-inbound-policy";
inline constexpr std::string_view kAccessLog = "config.linkerd.io/access-log";
inline constexpr std::string_view kProxyAdminShutdown = "config.linkerd.io/proxy-admin-shutdown";
inline constexpr std::string_view kProxyMetricsHostnameLabels =
    "config.linkerd.io/proxy-metrics-hostname-labels";
inline constexpr std::string_view kProxyAdditionalEnv = "config.linkerd.io/proxy-additional-env";
inline constexpr std::string_view kEnableGateway = "config.linkerd.io/enable-gateway";
inline constexpr std::string_view kCloseWaitTimeout = "config.linkerd.io/close-wait-timeout";
inline constexpr std::string_view kDebugImage = "config.linkerd.io/debug-image";
inline constexpr std::string_view kDebugImageVersion = "config.linkerd.io/debug-image-version";
inline constexpr std::string_view kDebugImagePullPolicy =
    "config.linkerd.io/debug-image-pull-policy";
inline constexpr std::string_view kNativeSidecar = "config.linkerd.io/proxy-enable-native-sidecar";
inline constexpr std::string_view kNativeSidecarBeta =
    "config.beta.linkerd.io/proxy-enable-native-sidecar";
inline constexpr std::string_view kNativeSidecarAlpha =
    "config.alpha.linkerd.io/proxy-enable-native-sidecar";
inline constexpr std::string_view kWaitBeforeExitSeconds =
    "config.alpha.linkerd.io/proxy-wait-before-exit-seconds";
inline constexpr std::string_view kOpenTelemetryResourcePrefix = "resource.opentelemetry.io/";
}  // namespace annotation

namespace label {
inline constexpr std::string_view kControlPlaneNs = "linkerd.io/control-plane-ns";
inline constexpr std::string_view kWorkloadNs = "linkerd.io/workload-ns";
inline constexpr std::string_view kAppInstance = "app.kubernetes.io/instance";
inline constexpr std::string_view kAppName = "app.kubernetes.io/name";
}  // namespace label

// inject.ProxyAnnotations: the 40 config.linkerd.io keys a namespace can pass down and the
// webhook exports as metric labels.
const std::vector<std::string_view>& proxyAnnotations();

// inject.ProxyAlphaConfigAnnotations: inheritable config.alpha.linkerd.io keys.
const std::vector<std::string_view>& proxyAlphaConfigAnnotations();

// The keys AppendNamespaceAnnotations copies: ProxyAnnotations, the alpha keys and
// linkerd.io/inject.
const std::vector<std::string_view>& inheritableAnnotations();

// The Prometheus label for an annotation: the part after the first '/', '-' turned into '_'
// ("config.linkerd.io/proxy-cpu-limit" -> "proxy_cpu_limit").
std::string metricLabelName(std::string_view annotation_key);

}  // namespace harness::injector::linkerd
