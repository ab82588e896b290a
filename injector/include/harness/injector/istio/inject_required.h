#pragma once

// The injection decision, pkg/kube/inject/inject.go injectRequired (docs/istio-injector.md §1),
// with Istio 1.27+ value semantics for sidecar.istio.io/inject.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/injector/istio/config.h"
#include "harness/injector/istio/log.h"

namespace harness::injector::istio {

// initializer.go IgnoredNamespaces: exactly these four (istio-system is not ignored).
const std::vector<std::string>& ignoredNamespaces();

inline constexpr std::string_view kSidecarInjectKey = "sidecar.istio.io/inject";

struct InjectDecision {
  bool required = false;
  // Why, e.g. "host network enabled", "namespace kube-system is ignored", "label
  // sidecar.istio.io/inject=\"false\"", "policy enabled (default)".
  std::string reason;
  std::vector<LogLine> logs;  // the warnings/errors Istio logs on the way
};

// `pod_spec` and `metadata` are the pod's spec and metadata (absent/null fields are empty).
// `config` supplies policy and the never/always selectors.
InjectDecision injectRequired(const std::vector<std::string>& ignored, const InjectorConfig& config,
                              const nlohmann::json& pod_spec, const nlohmann::json& metadata);

}  // namespace harness::injector::istio
