#pragma once

// What the injector reads from disk besides its certificates: Kubernetes objects (the
// namespaces, owners and inputs of `serve --objects` and `inject`) and the Istio profile's three
// configuration files. Shared by the HTTPS shell and the offline command; no sockets here.

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/injector/istio/config.h"

namespace harness::injector {

// Flattens `kind: List` (and *List kinds with items) into their items.
std::vector<nlohmann::json> flattenLists(std::vector<nlohmann::json> documents);

// Loads objects (YAML/JSON, multi-document, Lists flattened) from files; errors name the file.
core::Result<std::vector<nlohmann::json>> loadObjectFiles(
    const std::vector<std::filesystem::path>& files);

struct IstioWebhookConfig {
  // The istio-sidecar-injector ConfigMap's `config` and `values` keys (raw or the dumped
  // ConfigMap) and the `istio` ConfigMap's mesh config.
  std::filesystem::path config_file, values_file, mesh_file;
  // ENABLE_NATIVE_SIDECARS: "true" or "false" override; "auto" reads the nodes' kubelet
  // versions through the Kubernetes API (off without a node client); "" is the configuration's
  // own mode (istio::nativeSidecarModeOf). --istio-native-sidecars is "true".
  std::string native_sidecars_mode;
  bool native_sidecars = false;
  // istiod's PLATFORM ("openshift" reads the pod's Namespace for the proxy's UID and GID); ""
  // is the configuration's own (istio::isOpenShift).
  std::string platform;
};

// Loads the three files into settings (each may be raw or a dumped ConfigMap); a file that
// cannot be read is an error worded as Go's os.ReadFile.
core::Result<istio::InjectorSettings> loadIstioSettings(const IstioWebhookConfig& config);

}  // namespace harness::injector
