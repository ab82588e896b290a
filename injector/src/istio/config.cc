#include "harness/injector/istio/config.h"

#include "harness/core/yaml.h"

// Followed: istio/istio pkg/kube/inject/inject.go (Config, UnmarshalConfig, parseDryTemplate),
// pkg/kube/inject/webhook.go (NewValuesConfig), pkg/config/mesh/mesh.go (DefaultProxyConfig,
// DefaultMeshConfig, ApplyMeshConfig). See docs/istio-injector.md §4.1.

namespace harness::injector::istio {

namespace {

using nlohmann::json;


Result<std::vector<std::string>> stringList(const json& v, const std::string& where) {
  std::vector<std::string> out;
  if (v.is_null()) return out;
  if (!v.is_array()) return Error{where + ": expected a list of strings"};
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (!v[i].is_string()) {
      return Error{where + "[" + std::to_string(i) + "]: expected a string"};
    }
    out.push_back(v[i].get<std::string>());
  }
  return out;
}

Result<std::map<std::string, std::string>> stringMap(const json& v, const std::string& where) {
  std::map<std::string, std::string> out;
  if (v.is_null()) return out;
  if (!v.is_object()) return Error{where + ": expected a map of strings"};
  for (auto it = v.begin(); it != v.end(); ++it) {
    if (!it->is_string()) return Error{where + "." + it.key() + ": expected a string"};
    out[it.key()] = it->get<std::string>();
  }
  return out;
}

Result<std::vector<InjectSelector>> selectors(const json& v, const std::string& where) {
  std::vector<InjectSelector> out;
  if (v.is_null()) return out;
  if (!v.is_array()) return Error{where + ": expected a list of label selectors"};
  for (const auto& raw : v) {
    InjectSelector s;
    s.raw = raw;
    // A null entry decodes to an empty metav1.LabelSelector in Go.
    s.selector = core::LabelSelector::parse(raw.is_null() ? json::object() : raw);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace

// proto merge as ApplyMeshConfig/ApplyProxyConfig do it on JSON: messages merge field by
// field, maps merge by key, lists and scalars replace.
void mergeProtoJson(json& base, const json& overlay) {
  if (!overlay.is_object() || !base.is_object()) {
    base = overlay;
    return;
  }
  for (auto it = overlay.begin(); it != overlay.end(); ++it) {
    if (it->is_null()) continue;
    auto b = base.find(it.key());
    if (b != base.end() && b->is_object() && it->is_object()) {
      mergeProtoJson(*b, *it);
    } else {
      base[it.key()] = *it;
    }
  }
}

const json& MeshConfig::defaultConfig() const {
  static const json kEmpty = json::object();
  auto it = config.find("defaultConfig");
  return it != config.end() && it->is_object() ? *it : kEmpty;
}

int MeshConfig::statusPort() const {
  const auto& dc = defaultConfig();
  auto it = dc.find("statusPort");
  return it != dc.end() && it->is_number_integer() ? it->get<int>() : 0;
}

json defaultProxyConfig() {
  // mesh.DefaultProxyConfig (pkg/config/mesh/mesh.go).
  return json{
      {"configPath", "./etc/istio/proxy"},
      {"binaryPath", "/usr/local/bin/envoy"},
      {"serviceCluster", "istio-proxy"},
      {"drainDuration", "45s"},
      {"terminationDrainDuration", "5s"},
      {"proxyAdminPort", 15000},
      {"controlPlaneAuthPolicy", "MUTUAL_TLS"},
      {"discoveryAddress", "istiod.istio-system.svc:15012"},
      {"statNameLength", 189},
      {"statusPort", 15020},
      {"tracing", {{"zipkin", {{"address", "zipkin.istio-system:9411"}}}}},
  };
}

json defaultMeshConfig() {
  // mesh.DefaultMeshConfig, the fields the injector reads.
  return json{
      {"trustDomain", "cluster.local"},
      {"rootNamespace", "istio-system"},
      {"enablePrometheusMerge", true},
      {"inboundTrafficPolicy", {{"mode", "PASSTHROUGH"}}},
  };
}

Result<InjectorConfig> parseInjectorConfig(std::string_view yaml,
                                           const gotemplate::Environment& env,
                                           const IstioVersion& version) {
  auto doc = core::parseYaml(yaml);
  if (!doc) return Error{"failed to unmarshal injection template: " + doc.error().message};
  if (!doc->is_null() && !doc->is_object()) {
    return Error{"failed to unmarshal injection template: expected a mapping, got " +
                 std::string(doc->type_name())};
  }
  const json& d = doc->is_null() ? json::object() : *doc;
  auto field = [&](const char* key) -> const json& {
    static const json kNull;
    auto it = d.find(key);
    return it == d.end() ? kNull : *it;
  };
  auto wrap = [](const Error& e) {
    return Error{"failed to unmarshal injection template: " + e.message};
  };

  InjectorConfig c;
  if (const json& p = field("policy"); p.is_string()) {
    c.policy = p.get<std::string>();
  } else if (!p.is_null()) {
    return wrap(Error{"policy: expected a string"});
  }
  auto defaults = stringList(field("defaultTemplates"), "defaultTemplates");
  if (!defaults) return wrap(defaults.error());
  c.default_templates = std::move(*defaults);
  auto templates = stringMap(field("templates"), "templates");
  if (!templates) return wrap(templates.error());
  c.raw_templates = std::move(*templates);
  if (const json& a = field("aliases"); !a.is_null()) {
    if (!a.is_object()) return wrap(Error{"aliases: expected a map of string lists"});
    for (auto it = a.begin(); it != a.end(); ++it) {
      auto names = stringList(*it, "aliases." + it.key());
      if (!names) return wrap(names.error());
      c.aliases[it.key()] = std::move(*names);
    }
  }
  auto never = selectors(field("neverInjectSelector"), "neverInjectSelector");
  if (!never) return wrap(never.error());
  c.never_inject_selector = std::move(*never);
  auto always = selectors(field("alwaysInjectSelector"), "alwaysInjectSelector");
  if (!always) return wrap(always.error());
  c.always_inject_selector = std::move(*always);
  auto injected = stringMap(field("injectedAnnotations"), "injectedAnnotations");
  if (!injected) return wrap(injected.error());
  c.injected_annotations = std::move(*injected);

  if (c.default_templates.empty()) c.default_templates = {std::string(kSidecarTemplateName)};
  if (c.raw_templates.empty()) {
    c.warnings.push_back(
        "injection templates are empty. This may be caused by using an injection template from "
        "an older version of Istio. Please ensure the template is correct; mismatch template "
        "versions can lead to unexpected results, including pods not being injected.");
  }
  const auto funcs = gotemplate::istioFuncMap(env, version.funcOptions());
  for (const auto& [name, text] : c.raw_templates) {
    // parseDryTemplate: template.New("inject").Funcs(sprig).Funcs(InjectionFuncmap).Parse.
    auto set = gotemplate::parse("inject", text, funcs);
    if (!set) return Error{"template \"" + name + "\": " + set.error().message};
    c.templates.emplace(name, std::move(*set));
  }
  return c;
}

Result<ValuesConfig> parseValues(std::string_view text) {
  auto doc = core::parseYaml(text);
  if (!doc) return Error{"could not parse configuration values: " + doc.error().message};
  ValuesConfig v;
  if (doc->is_null()) return v;
  if (!doc->is_object()) {
    return Error{"could not parse configuration values: expected a mapping, got " +
                 std::string(doc->type_name())};
  }
  v.map = std::move(*doc);
  return v;
}

Result<MeshConfig> parseMeshConfig(std::string_view yaml) {
  auto doc = core::parseYaml(yaml);
  if (!doc) return Error{"failed to parse mesh config: " + doc.error().message};
  if (!doc->is_null() && !doc->is_object()) {
    return Error{"failed to parse mesh config: expected a mapping, got " +
                 std::string(doc->type_name())};
  }
  MeshConfig m;
  m.config = defaultMeshConfig();
  m.config["defaultConfig"] = defaultProxyConfig();
  if (doc->is_object()) mergeProtoJson(m.config, *doc);
  if (!m.config["defaultConfig"].is_object()) {
    return Error{"failed to parse mesh config: defaultConfig: expected a mapping"};
  }
  return m;
}

Result<std::string> configMapValue(std::string_view text, std::string_view key) {
  auto doc = core::parseYaml(text);
  if (!doc || !doc->is_object() || doc->value("kind", json()) != "ConfigMap") {
    return std::string(text);
  }
  const json& data = doc->value("data", json::object());
  auto it = data.is_object() ? data.find(std::string(key)) : data.end();
  if (!data.is_object() || it == data.end()) {
    return Error{"ConfigMap has no data." + std::string(key)};
  }
  if (!it->is_string()) return Error{"ConfigMap data." + std::string(key) + ": expected a string"};
  return it->get<std::string>();
}

namespace {

// The release the configuration says it is: the injector ConfigMap's
// app.kubernetes.io/version label, else values.global.tag.
IstioVersion configVersion(std::string_view injector_config, const ValuesConfig& values) {
  IstioVersion version;
  if (auto doc = core::parseYaml(injector_config); doc && doc->is_object()) {
    const json* label = &*doc;
    for (const char* key : {"metadata", "labels", "app.kubernetes.io/version"}) {
      const auto it = label->is_object() ? label->find(key) : label->end();
      label = label->is_object() && it != label->end() ? &*it : nullptr;
      if (label == nullptr) break;
    }
    // "1.0.0" is the version Chart.yaml carries in Istio's source tree (manifests/charts/
    // istio-control/istio-discovery/Chart.yaml); Istio's release build replaces it. A chart
    // rendered from a checkout therefore names no release, and the tag decides.
    if (label != nullptr && label->is_string() && label->get<std::string>() != "1.0.0") {
      version = IstioVersion::parse(label->get<std::string>());
    }
  }
  if (!version.known) {
    const json& global = values.map.value("global", json::object());
    const json tag = global.is_object() ? global.value("tag", json()) : json();
    if (tag.is_string()) version = IstioVersion::parse(tag.get<std::string>());
  }
  return version;
}

}  // namespace

Result<InjectorSettings> loadSettings(std::string_view injector_config, std::string_view values,
                                      std::string_view mesh, const gotemplate::Environment& env) {
  InjectorSettings s;
  s.env = env;
  auto values_text = configMapValue(values, "values");
  if (!values_text) return values_text.error().within("values");
  auto v = parseValues(*values_text);
  if (!v) return v.error().within("values");
  s.values = std::move(*v);
  // Before the templates parse: their functions behave as the release's did.
  s.version = configVersion(injector_config, s.values);
  auto config_text = configMapValue(injector_config, "config");
  if (!config_text) return config_text.error().within("config");
  auto config = parseInjectorConfig(*config_text, env, s.version);
  if (!config) return config.error().within("config");
  s.config = std::move(*config);
  auto mesh_text = configMapValue(mesh, "mesh");
  if (!mesh_text) return mesh_text.error().within("mesh");
  auto m = parseMeshConfig(*mesh_text);
  if (!m) return m.error().within("mesh");
  s.mesh = std::move(*m);
  if (const auto* rev = s.values.map.contains("revision") ? &s.values.map["revision"] : nullptr;
      rev != nullptr && rev->is_string()) {
    s.revision = rev->get<std::string>();
  }
  return s;
}

IstioVersion IstioVersion::parse(std::string_view text) {
  IstioVersion v;
  if (text.starts_with("v")) text.remove_prefix(1);
  auto number = [&](int* out) {
    std::size_t i = 0;
    int n = 0;
    while (i < text.size() && i < 4 && text[i] >= '0' && text[i] <= '9') {
      n = n * 10 + (text[i++] - '0');
    }
    if (i == 0) return false;
    *out = n;
    text.remove_prefix(i);
    return true;
  };
  if (!number(&v.major) || !text.starts_with(".")) return {};
  text.remove_prefix(1);
  if (!number(&v.minor)) return {};
  if (!text.empty() && text[0] != '.' && text[0] != '-') return {};
  v.known = true;
  return v;
}

bool IstioVersion::atLeast(int maj, int min) const {
  return !known || major > maj || (major == maj && minor >= min);
}

gotemplate::IstioFuncOptions IstioVersion::funcOptions() const {
  gotemplate::IstioFuncOptions o;
  // istio/istio#55000 reached master in February 2025 (1.25); the 1.23 and 1.24 patch releases
  // that took its cherry-pick cannot be told from earlier ones by major.minor.
  o.multus_namespace_split = atLeast(1, 25);
  return o;
}

std::string_view defaultDataDir() { return HARNESS_ISTIO_DATA_DIR; }

}  // namespace harness::injector::istio
