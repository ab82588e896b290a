#pragma once

// The sidecar injector's configuration: the `istio-sidecar-injector` ConfigMap (`config` and
// `values` keys) and the mesh config, loaded the way istiod loads them
// (pkg/kube/inject/inject.go UnmarshalConfig, webhook.go NewValuesConfig, pkg/config/mesh
// DefaultMeshConfig/DefaultProxyConfig). See docs/istio-injector.md §4.1.
// Pure: the caller reads the files; this parses text.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/label_selector.h"
#include "harness/core/result.h"
#include "harness/gotemplate/funcs.h"
#include "harness/gotemplate/template.h"

namespace harness::injector::istio {

using core::Error;
using core::Result;

inline constexpr std::string_view kPolicyEnabled = "enabled";
inline constexpr std::string_view kPolicyDisabled = "disabled";
inline constexpr std::string_view kSidecarTemplateName = "sidecar";

// One entry of alwaysInjectSelector / neverInjectSelector. A selector that fails to convert
// (metav1.LabelSelectorAsSelector) is kept with its error: injectRequired logs and skips it.
struct InjectSelector {
  nlohmann::json raw;
  Result<core::LabelSelector> selector = core::LabelSelector::nothing();
};

// inject.go Config.
struct InjectorConfig {
  std::string policy;  // "enabled", "disabled", or anything else (never inject)
  std::vector<std::string> default_templates;  // never empty after loading: [sidecar]
  std::map<std::string, std::string> raw_templates;
  std::map<std::string, std::vector<std::string>> aliases;
  std::vector<InjectSelector> never_inject_selector;
  std::vector<InjectSelector> always_inject_selector;
  std::map<std::string, std::string> injected_annotations;
  // Each raw template parsed as its own set named "inject" (parseDryTemplate).
  std::map<std::string, gotemplate::TemplateSet> templates;
  std::vector<std::string> warnings;  // e.g. "injection templates are empty..."
};

// The chart values (`values` key) as a map, plus the typed reads the Go code does on them.
struct ValuesConfig {
  nlohmann::json map = nlohmann::json::object();
};

// MeshConfig with DefaultMeshConfig() under it; defaultConfig is a full ProxyConfig
// (DefaultProxyConfig() overlaid with the file's defaultConfig).
struct MeshConfig {
  nlohmann::json config = nlohmann::json::object();

  [[nodiscard]] const nlohmann::json& defaultConfig() const;
  [[nodiscard]] int statusPort() const;  // defaultConfig.statusPort
};

// The Istio release the configuration comes from, for behaviour that changed between releases:
// the dumped istio-sidecar-injector ConfigMap's app.kubernetes.io/version label (the chart's
// istio.labels), else values.global.tag ("1.30.3", "1.31.0-beta.1", "1.30.3-distroless").
// Unknown (a master build's "latest", a hash, nothing) means the newest behaviour.
struct IstioVersion {
  bool known = false;
  int major = 0;
  int minor = 0;

  // "1.30" from "1.30.3..." or "v1.30..."; unknown otherwise.
  static IstioVersion parse(std::string_view text);
  // True when unknown or at least major.minor.
  [[nodiscard]] bool atLeast(int major, int minor) const;
  // How this release's template functions behave (unknown: the newest).
  [[nodiscard]] gotemplate::IstioFuncOptions funcOptions() const;
};

// Everything the injector needs besides the request.
struct InjectorSettings {
  InjectorConfig config;
  ValuesConfig values;
  MeshConfig mesh;
  gotemplate::Environment env;  // what the `env` template function reads
  std::string revision;         // istiod's revision ("" = default)
  IstioVersion version;
};

// UnmarshalConfig: YAML of Config. Unknown keys (the legacy `template`) are ignored.
// Errors: "failed to unmarshal injection template: <yaml error>", or the template's Go parse
// error prefixed with `template "<name>": ` (Go does not name it; we do).
// `version`: the release whose template functions parse it (IstioVersion::funcOptions).
Result<InjectorConfig> parseInjectorConfig(std::string_view yaml,
                                           const gotemplate::Environment& env = {},
                                           const IstioVersion& version = {});

// NewValuesConfig: JSON or YAML of the chart values. Error: "could not parse configuration
// values: <why>".
Result<ValuesConfig> parseValues(std::string_view text);

// The mesh config YAML (the `mesh` key of the `istio` ConfigMap); "" gives the defaults.
Result<MeshConfig> parseMeshConfig(std::string_view yaml);

// mesh.DefaultProxyConfig() as JSON (proto field names, durations as strings).
nlohmann::json defaultProxyConfig();
// mesh.DefaultMeshConfig() as JSON (without defaultConfig).
nlohmann::json defaultMeshConfig();

// The `data` of a ConfigMap dumped with `kubectl get cm -o yaml|json`, or the text itself when
// it is not a ConfigMap (kind != ConfigMap). Returns the value of `key`; a ConfigMap without
// the key is an error naming it.
Result<std::string> configMapValue(std::string_view text, std::string_view key);

// Loads all three. `injector_config` and `values` may each be the raw key contents or a
// dumped istio-sidecar-injector ConfigMap; `mesh` may be raw mesh YAML or a dumped `istio`
// ConfigMap (key `mesh`).
Result<InjectorSettings> loadSettings(std::string_view injector_config, std::string_view values,
                                      std::string_view mesh,
                                      const gotemplate::Environment& env = {});

// Merges `overlay` into `base` as ApplyMeshConfig/ApplyProxyConfig merge protos on JSON:
// messages field by field, maps by key, lists and scalars replaced; null fields skipped.
void mergeProtoJson(nlohmann::json& base, const nlohmann::json& overlay);

// Where this project's default data files live (injector/istio:
// sidecar-injector-config.yaml, values.json, mesh.yaml). The library never reads them.
std::string_view defaultDataDir();

}  // namespace harness::injector::istio
