#include "harness/injector/linkerd/annotations.h"

namespace harness::injector::linkerd {

// The reference counts 40 ProxyAnnotations keys at edge-26.8.3. The list below is
// pkg/inject/inject.go's list as of the 2.14-2.18 releases without the init-image keys
// (proxy-init now runs from the proxy image) plus the three keys added since
// (proxy-admin-shutdown, proxy-metrics-hostname-labels, proxy-additional-env).
// Order only affects the order of metric labels, which Prometheus does not care about.
const std::vector<std::string_view>& proxyAnnotations() {
  static const std::vector<std::string_view> kKeys = {
      annotation::kAdminPort,
      annotation::kControlPort,
      annotation::kEnableDebugSidecar,
      annotation::kEnableExternalProfiles,
      annotation::kImagePullPolicy,
      annotation::kInboundPort,
      annotation::kOutboundPort,
      annotation::kPodInboundPorts,
      annotation::kProxyCpuLimit,
      annotation::kProxyCpuRequest,
      annotation::kProxyImage,
      annotation::kProxyLogFormat,
      annotation::kProxyLogLevel,
      annotation::kProxyLogHttpHeaders,
      annotation::kProxyMemoryLimit,
      annotation::kProxyMemoryRequest,
      annotation::kProxyEphemeralStorageLimit,
      annotation::kProxyEphemeralStorageRequest,
      annotation::kProxyUid,
      annotation::kProxyGid,
      annotation::kProxyVersionOverride,
      annotation::kProxyRequireIdentityInboundPorts,
      annotation::kSkipInboundPorts,
      annotation::kOpaquePorts,
      annotation::kSkipOutboundPorts,
      annotation::kProxyOutboundConnectTimeout,
      annotation::kProxyInboundConnectTimeout,
      annotation::kProxyAwait,
      annotation::kDefaultInboundPolicy,
      annotation::kSkipSubnets,
      annotation::kAccessLog,
      annotation::kShutdownGracePeriod,
      annotation::kProxyOutboundDiscoveryCacheUnusedTimeout,
      annotation::kProxyInboundDiscoveryCacheUnusedTimeout,
      annotation::kProxyDisableOutboundProtocolDetectTimeout,
      annotation::kProxyDisableInboundProtocolDetectTimeout,
      annotation::kNativeSidecar,
      annotation::kProxyAdminShutdown,
      annotation::kProxyMetricsHostnameLabels,
      annotation::kProxyAdditionalEnv,
  };
  return kKeys;
}

const std::vector<std::string_view>& proxyAlphaConfigAnnotations() {
  static const std::vector<std::string_view> kKeys = {
      annotation::kWaitBeforeExitSeconds,
      annotation::kNativeSidecarAlpha,
  };
  return kKeys;
}

const std::vector<std::string_view>& inheritableAnnotations() {
  static const std::vector<std::string_view> kKeys = [] {
    std::vector<std::string_view> keys = proxyAnnotations();
    const auto& alpha = proxyAlphaConfigAnnotations();
    keys.insert(keys.end(), alpha.begin(), alpha.end());
    keys.push_back(annotation::kInject);
    return keys;
  }();
  return kKeys;
}

std::string metricLabelName(std::string_view annotation_key) {
  const size_t slash = annotation_key.find('/');
  std::string name(slash == std::string_view::npos ? annotation_key
                                                   : annotation_key.substr(slash + 1));
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

}  // namespace harness::injector::linkerd
