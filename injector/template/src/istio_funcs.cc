// Istio's injection template functions: istio/istio pkg/kube/inject/template.go
// (InjectionFuncmap: formatDuration, isset, excludeInboundPort, includeInboundPorts,
// kubevirtInterfaces, excludeInterfaces, applicationPorts, annotation, valueOrDefault, toJSON,
// fromJSON, structToJSON, protoToJSON + cleanProxyConfig, toYaml, indent, directory, contains,
// toLower, appendMultusNetwork, env, omit, strdict, toJsonMap, mergeMaps, omitNil,
// otelResourceAttributes) with pkg/config/mesh/mesh.go DefaultProxyConfig for the defaults
// protoToJSON drops, and Go's time.Duration.String for formatDuration.

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "funcs_common.h"
#include "harness/core/json.h"
#include "harness/core/yaml.h"
#include "harness/go/strconv.h"
#include "harness/go/time.h"
#include "harness/gotemplate/funcs.h"
#include "harness/gotemplate/go_fmt.h"
#include "harness/gotemplate/go_json.h"

namespace harness::gotemplate {
namespace {

using detail::str;
using detail::structMember;

Function fn(std::vector<ParamType> params, FunctionBody body, bool variadic = false) {
  return Function{std::move(params), variadic, std::move(body)};
}

// time.Duration.String (golang/go src/time/time.go format/fmtFrac/fmtInt).
std::string durationString(std::int64_t d) {
  if (d == 0) return "0s";
  const bool neg = d < 0;
  std::uint64_t u = neg ? ~static_cast<std::uint64_t>(d) + 1 : static_cast<std::uint64_t>(d);
  std::string out;  // built right to left
  auto frac = [&](int prec) {
    bool print = false;
    std::string digits;
    for (int i = 0; i < prec; ++i) {
      const auto digit = static_cast<char>('0' + u % 10);
      print = print || digit != '0';
      if (print) digits.insert(digits.begin(), digit);
      u /= 10;
    }
    if (print) out.insert(0, "." + digits);
  };
  auto integer = [&](std::uint64_t v) { out.insert(0, std::to_string(v)); };
  if (u < 1000000000ULL) {
    int prec = 0;
    std::string unit;
    if (u < 1000ULL) {
      unit = "ns";
    } else if (u < 1000000ULL) {
      prec = 3;
      unit = "\xC2\xB5s";  // µs
    } else {
      prec = 6;
      unit = "ms";
    }
    out = unit;
    frac(prec);
    integer(u);
  } else {
    out = "s";
    frac(9);
    integer(u % 60);
    u /= 60;
    if (u > 0) {
      out.insert(0, "m");
      integer(u % 60);
      u /= 60;
      if (u > 0) {
        out.insert(0, "h");
        integer(u);
      }
    }
  }
  if (neg) out.insert(0, "-");
  return out;
}

// Nanoseconds of a protobuf Duration in JSON: "1.5s" (protojson) or {seconds, nanos}.
Result<std::int64_t> durationNanos(const Value& v) {
  if (!v.valid() || v.isNil()) return std::int64_t{0};
  const auto& j = v.json();
  if (j.is_string()) return go::parseDuration(j.get<std::string>());
  if (j.is_object()) {
    auto num = [&](const char* key) -> std::int64_t {
      const nlohmann::json* m = structMember(j, key);
      if (m == nullptr) return 0;
      if (m->is_string()) {
        auto r = go::parseInt(m->get<std::string>(), 10, 64);
        return r.ok() ? *r : 0;
      }
      if (m->is_number()) return m->get<std::int64_t>();
      return 0;
    };
    const std::int64_t secs = num("Seconds");
    const std::int64_t nanos = num("Nanos");
    if (secs > INT64_MAX / 1000000000 || secs < INT64_MIN / 1000000000) {
      return secs < 0 ? INT64_MIN : INT64_MAX;
    }
    return secs * 1000000000 + nanos;
  }
  return Error{"wrong type for value; expected *durationpb.Duration; got " + v.typeName()};
}

std::string trimSpace(const std::string& s) {
  const std::size_t b = s.find_first_not_of(" \t\n\v\f\r");
  if (b == std::string::npos) return "";
  const std::size_t e = s.find_last_not_of(" \t\n\v\f\r");
  return s.substr(b, e - b + 1);
}

std::vector<std::string> splitComma(const std::string& s) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  for (;;) {
    const std::size_t c = s.find(',', pos);
    out.push_back(s.substr(pos, c == std::string::npos ? std::string::npos : c - pos));
    if (c == std::string::npos) return out;
    pos = c + 1;
  }
}

std::string joinComma(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out.push_back(',');
    out += parts[i];
  }
  return out;
}

// getContainerPorts: the TCP container ports of the selected containers.
std::string containerPorts(const Value& containers, bool skip_proxy) {
  std::vector<std::string> parts;
  if (!containers.valid() || containers.isNil()) return "";
  for (const auto& c : containers.json()) {
    if (skip_proxy) {
      const nlohmann::json* name = structMember(c, "Name");
      if (name != nullptr && name->is_string() && name->get<std::string>() == "istio-proxy") {
        continue;
      }
    }
    const nlohmann::json* ports = structMember(c, "Ports");
    if (ports == nullptr || !ports->is_array()) continue;
    for (const auto& p : *ports) {
      const nlohmann::json* protocol = structMember(p, "Protocol");
      if (protocol != nullptr && protocol->is_string()) {
        const std::string proto = protocol->get<std::string>();
        if (proto == "UDP" || proto == "SCTP") continue;
      }
      const nlohmann::json* port = structMember(p, "ContainerPort");
      std::int64_t n = 0;
      if (port != nullptr && port->is_number()) {
        n = port->is_number_float() ? static_cast<std::int64_t>(port->get<double>())
                                    : port->get<std::int64_t>();
      }
      parts.push_back(std::to_string(static_cast<std::int32_t>(n)));
    }
  }
  return joinComma(parts);
}

bool isContainerPort(const nlohmann::json& j) {
  if (!j.is_object() || j.empty()) return false;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k != "name" && k != "hostPort" && k != "containerPort" && k != "protocol" &&
        k != "hostIP") {
      return false;
    }
  }
  return j.contains("containerPort");
}

// json.Marshal of the value; a corev1.ContainerPort keeps its struct field order and
// omitempty rules (name, hostPort, containerPort, protocol, hostIP).
Result<std::string> marshalStruct(const nlohmann::json& j) {
  if (!isContainerPort(j)) return goJsonMarshal(j);
  std::string out = "{";
  bool first = true;
  for (const char* key : {"name", "hostPort", "containerPort", "protocol", "hostIP"}) {
    const auto it = j.find(key);
    if (it == j.end()) continue;
    const std::string k = key;
    const bool omitempty = k != "containerPort";
    if (omitempty && ((it->is_string() && it->get_ref<const std::string&>().empty()) ||
                      (it->is_number() && it->get<double>() == 0) || it->is_null())) {
      continue;
    }
    auto v = goJsonMarshal(*it);
    if (!v) return v.error();
    if (!first) out.push_back(',');
    first = false;
    out += "\"" + k + "\":" + *v;
  }
  return out + "}";
}


// ProxyConfig's enum fields and their zero values (istio.io/api mesh/v1alpha1 proxy.proto).
const std::map<std::string, std::string, std::less<>>& proxyConfigEnumZeros() {
  static const std::map<std::string, std::string, std::less<>> kZeros = {
      {"interceptionMode", "REDIRECT"},
      {"controlPlaneAuthPolicy", "NONE"},
      {"tracingServiceName", "APP_LABEL_AND_NAMESPACE"},
  };
  return kZeros;
}

// protojson (protomarshal.ToJSON) writes a proto3 scalar, enum, repeated or map field only when
// it differs from its zero value, whether or not the YAML spelled it out. Kept: wrappers
// (concurrency, holdApplicationUntilProxyStarts, fileFlushMinSizeKb: set pointers), messages
// (objects; durations are strings that are never empty), and the cluster_name oneof
// (serviceCluster, tracingServiceName), which is written whenever it is set.
nlohmann::json omitProto3Defaults(nlohmann::json pc) {
  static const std::set<std::string, std::less<>> kKept = {
      "concurrency", "holdApplicationUntilProxyStarts", "fileFlushMinSizeKb", "serviceCluster",
      "tracingServiceName"};
  static const std::set<std::string, std::less<>> kMessages = {
      "tracing", "sds", "envoyAccessLogService", "envoyMetricsService", "gatewayTopology",
      "readinessProbe", "proxyStatsMatcher", "image", "privateKeyProvider", "proxyHeaders"};
  if (!pc.is_object()) return pc;
  for (auto it = pc.begin(); it != pc.end();) {
    const std::string& k = it.key();
    const nlohmann::json& v = it.value();
    bool zero = v.is_null();
    if (!kKept.contains(k) && !zero) {
      const auto e = proxyConfigEnumZeros().find(k);
      if (e != proxyConfigEnumZeros().end()) {
        zero = (v.is_string() && v.get<std::string>() == e->second) ||
               (v.is_number() && v.get<double>() == 0);
      } else if (v.is_string()) {
        zero = v.get_ref<const std::string&>().empty();
      } else if (v.is_boolean()) {
        zero = !v.get<bool>();
      } else if (v.is_number()) {
        zero = v.get<double>() == 0;
      } else if (v.is_array()) {
        zero = v.empty();
      } else if (v.is_object()) {
        zero = v.empty() && !kMessages.contains(k);  // an empty map, not a set message
      }
    }
    it = zero ? pc.erase(it) : std::next(it);
  }
  return pc;
}

// cleanProxyConfig: drops fields equal to mesh.DefaultProxyConfig().
nlohmann::json cleanProxyConfig(nlohmann::json pc) {
  if (!pc.is_object()) return pc;
  auto drop_if = [&](const char* key, const nlohmann::json& def) {
    const auto it = pc.find(key);
    if (it != pc.end() && *it == def) pc.erase(it);
  };
  auto drop_duration_if = [&](const char* key, std::int64_t nanos) {
    const auto it = pc.find(key);
    if (it == pc.end()) return;
    auto d = durationNanos(Value(*it));
    if (d.ok() && *d == nanos) pc.erase(it);
  };
  drop_if("configPath", "./etc/istio/proxy");
  drop_if("binaryPath", "/usr/local/bin/envoy");
  drop_if("controlPlaneAuthPolicy", "MUTUAL_TLS");
  drop_if("controlPlaneAuthPolicy", 1);
  drop_if("serviceCluster", "istio-proxy");
  drop_duration_if("drainDuration", 45000000000LL);
  drop_duration_if("terminationDrainDuration", 5000000000LL);
  drop_duration_if("parentShutdownDuration", 60000000000LL);
  drop_if("discoveryAddress", "istiod.istio-system.svc:15012");
  drop_if("tracing", nlohmann::json{{"zipkin", {{"address", "zipkin.istio-system:9411"}}}});
  drop_if("proxyAdminPort", 15000);
  drop_if("statNameLength", 189);
  drop_if("statusPort", 15020);
  drop_if("concurrency", 2);
  if (const auto it = pc.find("proxyMetadata");
      it != pc.end() && (it->is_null() || (it->is_object() && it->empty()))) {
    pc.erase(it);
  }
  return omitProto3Defaults(std::move(pc));
}


// golang/protobuf jsonpb (protomarshal.ToJSON) writes a message's fields in their declaration
// order in the .proto, a oneof at the place of its first member (ProxyConfig in istio.io/api
// mesh/v1alpha1 proxy.proto); map keys sorted. Fields not declared here follow, sorted.
Result<std::string> proxyConfigJson(const nlohmann::json& pc) {
  static const std::vector<std::vector<std::string>> kOrder = {
      {"configPath"}, {"binaryPath"}, {"serviceCluster", "tracingServiceName"},
      {"drainDuration"}, {"discoveryAddress"}, {"discoveryRefreshDelay"}, {"zipkinAddress"},
      {"statsdUdpAddress"}, {"envoyMetricsServiceAddress"}, {"proxyAdminPort"},
      {"availabilityZone"}, {"controlPlaneAuthPolicy"}, {"customConfigFile"},
      {"statNameLength"}, {"concurrency"}, {"proxyBootstrapTemplatePath"}, {"interceptionMode"},
      {"tracing"}, {"sds"}, {"envoyAccessLogService"}, {"envoyMetricsService"},
      {"proxyMetadata"}, {"runtimeValues"}, {"statusPort"}, {"extraStatTags"},
      {"gatewayTopology"}, {"terminationDrainDuration"}, {"meshId"}, {"readinessProbe"},
      {"proxyStatsMatcher"}, {"holdApplicationUntilProxyStarts"}, {"caCertificatesPem"},
      {"image"}, {"privateKeyProvider"}, {"proxyHeaders"}, {"fileFlushInterval"},
      {"fileFlushMinSizeKb"}, {"statsCompression"}, {"connectionSettings"}};
  if (!pc.is_object()) return goJsonMarshal(pc, GoJsonOptions{false, ""});
  std::string out = "{";
  std::set<std::string, std::less<>> written;
  auto write = [&](const std::string& key, const nlohmann::json& value) -> Result<void> {
    auto v = goJsonMarshal(value, GoJsonOptions{false, ""});
    if (!v) return v.error();
    auto k = goJsonMarshal(nlohmann::json(key), GoJsonOptions{false, ""});
    if (!k) return k.error();
    if (out.size() > 1) out.push_back(',');
    out += *k + ":" + *v;
    written.insert(key);
    return {};
  };
  for (const auto& group : kOrder) {
    for (const std::string& key : group) {  // at most one member of a oneof is set
      if (const auto it = pc.find(key); it != pc.end()) {
        if (auto w = write(key, *it); !w) return w.error();
        break;
      }
    }
  }
  for (auto it = pc.begin(); it != pc.end(); ++it) {
    if (written.contains(it.key())) continue;
    if (auto w = write(it.key(), it.value()); !w) return w.error();
  }
  return out + "}";
}

// omitNil: nils removed from maps and slices, recursively; an emptied map or slice is nil.
nlohmann::json omitNil(const nlohmann::json& v, int depth) {
  if (depth > kMaxJsonDepth) return v;
  if (v.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = v.begin(); it != v.end(); ++it) {
      nlohmann::json c = omitNil(it.value(), depth + 1);
      if (!c.is_null()) out[it.key()] = std::move(c);
    }
    return out.empty() ? nlohmann::json(nullptr) : out;
  }
  if (v.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : v) {
      nlohmann::json c = omitNil(e, depth + 1);
      if (!c.is_null()) out.push_back(std::move(c));
    }
    return out.empty() ? nlohmann::json(nullptr) : out;
  }
  return v;
}

nlohmann::json mergeStringMaps(const std::vector<Value>& maps) {
  if (maps.empty()) return nullptr;
  nlohmann::json out = nlohmann::json::object();
  for (const Value& m : maps) {
    if (m.isNil()) continue;
    for (auto it = m.json().begin(); it != m.json().end(); ++it) out[it.key()] = it.value();
  }
  return out;
}


// The value of a map[string]string argument at `key`, or nullptr (nil map, missing key).
const std::string* stringAt(const Value& m, const std::string& key) {
  if (!m.valid() || m.isNil() || !m.json().is_object()) return nullptr;
  const auto it = m.json().find(key);
  return it != m.json().end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

// MeshConfig_ExtensionProvider_OTEL_SEMANTIC_CONVENTIONS (istio.io/api mesh/v1alpha1
// config.proto, ServiceAttributeEnrichment: ISTIO_CANONICAL = 0, OTEL_SEMANTIC_CONVENTIONS = 1),
// as protojson writes it (the name) or as a number.
bool otelSemanticConventions(const nlohmann::json& provider) {
  const nlohmann::json* otel = structMember(provider, "Opentelemetry");
  if (otel == nullptr || !otel->is_object()) return false;
  const nlohmann::json* e = structMember(*otel, "ServiceAttributeEnrichment");
  if (e == nullptr) return false;
  return (e->is_string() && e->get<std::string>() == "OTEL_SEMANTIC_CONVENTIONS") ||
         (e->is_number_integer() && e->get<std::int64_t>() == 1);
}

// parseImageTagDigest: the digest after the first "@", the tag after the last ":" that follows
// the last "/".
std::pair<std::string, std::string> imageTagDigest(std::string image) {
  std::string digest;
  if (const std::size_t at = image.find('@'); at != std::string::npos) {
    digest = image.substr(at + 1);
    image.resize(at);
  }
  std::string tag;
  const std::size_t slash = image.rfind('/');
  const std::size_t colon = image.rfind(':');
  if (colon != std::string::npos && (slash == std::string::npos || colon > slash)) {
    tag = image.substr(colon + 1);
  }
  return {tag, digest};
}

// otelResourceAttributes (pkg/kube/inject/template.go, istio/istio#59207): the
// OTEL_RESOURCE_ATTRIBUTES value when an extension provider's opentelemetry block asks for
// OTEL_SEMANTIC_CONVENTIONS, else "". service.namespace: the resource.opentelemetry.io/
// annotation, else the namespace; service.version: the annotation, else the
// app.kubernetes.io/version label, else the image tag@digest of a single container;
// service.instance.id: the annotation, else <namespace>.$(POD_NAME).<first container>.
std::string otelResourceAttributes(const Value& mesh, const Value& annotations,
                                   const Value& labels, const std::string& ns,
                                   const Value& containers) {
  bool enabled = false;
  if (mesh.valid() && !mesh.isNil()) {
    const nlohmann::json* providers = structMember(mesh.json(), "ExtensionProviders");
    if (providers != nullptr && providers->is_array()) {
      for (const auto& p : *providers) {
        if (otelSemanticConventions(p)) {
          enabled = true;
          break;
        }
      }
    }
  }
  if (!enabled) return "";
  const nlohmann::json no_containers = nlohmann::json::array();
  const nlohmann::json& list =
      containers.valid() && containers.json().is_array() ? containers.json() : no_containers;
  std::vector<std::string> attrs;
  auto annotation = [&](const char* key) -> const std::string* {
    const std::string* v = stringAt(annotations, std::string("resource.opentelemetry.io/") + key);
    return v != nullptr && !v->empty() ? v : nullptr;
  };
  if (const std::string* v = annotation("service.namespace")) {
    attrs.push_back("service.namespace=" + *v);
  } else if (!ns.empty()) {
    attrs.push_back("service.namespace=" + ns);
  }
  const std::string* label = stringAt(labels, "app.kubernetes.io/version");
  if (const std::string* v = annotation("service.version")) {
    attrs.push_back("service.version=" + *v);
  } else if (label != nullptr && !label->empty()) {
    attrs.push_back("service.version=" + *label);
  } else if (list.size() == 1) {
    const nlohmann::json* image = structMember(list[0], "Image");
    const auto [tag, digest] =
        imageTagDigest(image != nullptr && image->is_string() ? image->get<std::string>() : "");
    if (!tag.empty() && !digest.empty()) {
      attrs.push_back("service.version=" + tag + "@" + digest);
    } else if (!digest.empty() || !tag.empty()) {
      attrs.push_back("service.version=" + (digest.empty() ? tag : digest));
    }
  }
  if (const std::string* v = annotation("service.instance.id")) {
    attrs.push_back("service.instance.id=" + *v);
  } else if (!list.empty()) {
    const nlohmann::json* name = structMember(list[0], "Name");
    attrs.push_back("service.instance.id=" + ns + ".$(POD_NAME)." +
                    (name != nullptr && name->is_string() ? name->get<std::string>() : ""));
  }
  return joinComma(attrs);
}

// template.go appendMultusNetwork: the istio-cni network added to a pod's
// k8s.v1.cni.cncf.io/networks value, flat ("a, b") or JSON ('[{"name": "a"}]'), unless it is
// there. `split`: "<ns>/<name>" as k8s.io/utils/strings SplitQualifiedName splits it (before
// the first "/", up to the second), written and matched as name and namespace (a missing
// namespace matching ""); else the whole network as the name. Written with fmt's %s: no JSON
// escaping, as Istio.
std::string appendMultusNetwork(const std::string& existing, const std::string& network,
                                bool split) {
  if (existing.empty()) return network;
  const std::size_t i = existing.rfind(']');
  if (i == std::string::npos) {
    for (const std::string& net : splitComma(existing)) {
      if (trimSpace(net) == network) return existing;
    }
    return existing + ", " + network;
  }
  // json.Unmarshal into []map[string]any: anything but an array of objects (or nulls) fails.
  const nlohmann::json nets = core::parseJsonOrDiscarded(existing);
  if (nets.is_discarded() || !nets.is_array()) return existing;
  for (const auto& n : nets) {
    if (!n.is_object() && !n.is_null()) return existing;
  }
  std::string ns;
  std::string name = network;
  if (const std::size_t slash = network.find('/'); split && slash != std::string::npos) {
    ns = network.substr(0, slash);
    const std::size_t next = network.find('/', slash + 1);
    name = network.substr(slash + 1, next == std::string::npos ? std::string::npos
                                                                : next - slash - 1);
  }
  for (const auto& n : nets) {
    if (!n.is_object()) continue;
    const auto it = n.find("name");
    if (it == n.end() || !it->is_string() || it->get<std::string>() != name) continue;
    if (!split) return existing;
    const auto nit = n.find("namespace");
    // net["namespace"] == ns: a missing one counts as ""; a non-string never equals.
    if (nit == n.end() || nit->is_null() ? ns.empty() : (nit->is_string() && *nit == ns)) {
      return existing;
    }
  }
  const std::string entry = ns.empty() ? ", {\"name\": \"" + name + "\"}"
                                       : ", {\"name\": \"" + name + "\", \"namespace\": \"" +
                                             ns + "\"}";
  return existing.substr(0, i) + entry + existing.substr(i);
}

}  // namespace

FuncMap istioInjectionFuncMap(Environment env, IstioFuncOptions options) {
  FuncMap m;
  const ParamType any = ParamType::any();
  const ParamType string = ParamType::string();
  const ParamType string_map = ParamType::stringMap();
  const ParamType containers = ParamType::structSlice("[]v1.Container");

  m["formatDuration"] = fn({ParamType::pointer("*durationpb.Duration")},
                           [](std::vector<Value>& a) -> Result<Value> {
                             auto d = durationNanos(a[0]);
                             if (!d) return d.error();
                             return Value(durationString(*d));
                           });
  m["isset"] = fn({string_map, string}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(!a[0].isNil() && a[0].json().contains(str(a[1])));
  });
  m["excludeInboundPort"] = fn({any, string}, [](std::vector<Value>& a) -> Result<Value> {
    const std::string port = trimSpace(goSprint({a[0]}));
    const std::string& excluded = str(a[1]);
    if (port.empty() || port == "0") return Value(excluded);
    std::vector<std::string> out;
    for (const std::string& p : splitComma(excluded)) {
      if (p == port) return Value(excluded);  // already excluded
      const std::string t = trimSpace(p);
      if (!t.empty()) out.push_back(t);
    }
    out.push_back(port);
    return Value(joinComma(out));
  });
  m["includeInboundPorts"] = fn({containers}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(containerPorts(a[0], false));
  });
  m["applicationPorts"] = fn({containers}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(containerPorts(a[0], true));
  });
  const auto identity = [](std::vector<Value>& a) -> Result<Value> { return a[0]; };
  m["kubevirtInterfaces"] = fn({string}, identity);
  m["excludeInterfaces"] = fn({string}, identity);
  m["annotation"] = fn({ParamType::structNamed("v1.ObjectMeta"), string, any},
                       [](std::vector<Value>& a) -> Result<Value> {
                         const nlohmann::json* annotations =
                             structMember(a[0].json(), "Annotations");
                         if (annotations != nullptr && annotations->is_object()) {
                           const auto it = annotations->find(str(a[1]));
                           if (it != annotations->end()) {
                             return Value(it->is_string() ? it->get<std::string>()
                                                          : goPrintValue(Value(*it)));
                           }
                         }
                         return Value(goSprint({a[2]}));
                       });
  m["valueOrDefault"] = fn({any, any}, [](std::vector<Value>& a) -> Result<Value> {
    const Value& v = a[0];
    if (v.isNil() || (v.kind() == GoKind::kString && str(v).empty())) return a[1];
    return v;
  });
  m["toJSON"] = fn({string_map}, [](std::vector<Value>& a) -> Result<Value> {
    if (a[0].isNil()) return Value(std::string("{}"));
    auto r = goJsonMarshal(a[0].json());
    return Value(r.ok() ? *r : std::string("{}"));
  });
  m["fromJSON"] = fn({string}, [](std::vector<Value>& a) -> Result<Value> {
    auto r = goJsonUnmarshal(str(a[0]));
    if (!r) return Value(std::string("{}"));
    return Value(std::move(*r));
  });
  m["structToJSON"] = fn({any}, [](std::vector<Value>& a) -> Result<Value> {
    if (a[0].isNil()) return Value(std::string("{}"));
    auto r = marshalStruct(a[0].json());
    return Value(r.ok() ? *r : std::string("{}"));
  });
  m["protoToJSON"] = fn({ParamType::pointer("proto.Message")},
                        [](std::vector<Value>& a) -> Result<Value> {
                          if (!a[0].valid() || a[0].isNil()) return Value(std::string("{}"));
                          auto r = proxyConfigJson(cleanProxyConfig(a[0].json()));
                          return Value(r.ok() ? *r : std::string("{}"));
                        });
  m["toYaml"] = fn({any}, [](std::vector<Value>& a) -> Result<Value> {
    // sigs.k8s.io/yaml.Marshal: json.Marshal, then the JSON re-read and written as YAML (go-yaml
    // v2 folds long strings at column 80).
    const nlohmann::json& j = a[0].valid() ? a[0].json() : nlohmann::json(nullptr);
    auto text = goJsonMarshal(j);
    if (!text) return Value(std::string());
    const nlohmann::json reread = core::parseJsonOrDiscarded(*text);
    if (reread.is_discarded()) return Value(std::string());
    return Value(core::toYaml(reread, core::kGoYamlMarshal));
  });
  m["indent"] = fn({ParamType::integer(), string}, [](std::vector<Value>& a) -> Result<Value> {
    std::int64_t spaces = a[0].json().get<std::int64_t>();
    if (spaces < 0) spaces = -spaces;  // fmt "% -Ns" pads to N on the right
    const std::string& source = str(a[1]);
    const auto lines = static_cast<std::uint64_t>(std::count(source.begin(), source.end(), '\n'));
    if (static_cast<std::uint64_t>(spaces) * lines + source.size() > (64u << 20)) {
      return Error{"result exceeds 67108864 bytes"};
    }
    const std::string pad(static_cast<std::size_t>(spaces), ' ');
    std::string out;
    for (const char c : source) {
      out.push_back(c);
      if (c == '\n') out += pad;
    }
    return Value(out);
  });
  m["directory"] = fn({string}, [](std::vector<Value>& a) -> Result<Value> {
    const std::string& p = str(a[0]);
    const std::size_t slash = p.rfind('/');
    return Value(slash == std::string::npos ? std::string() : p.substr(0, slash + 1));
  });
  m["contains"] = fn({string, string}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(str(a[1]).find(str(a[0])) != std::string::npos);  // contains needle haystack
  });
  m["toLower"] = fn({string}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(detail::asciiLower(str(a[0])));
  });
  m["appendMultusNetwork"] = fn({string, string}, [options](std::vector<Value>& a)
                                                        -> Result<Value> {
    return Value(appendMultusNetwork(str(a[0]), str(a[1]), options.multus_namespace_split));
  });
  m["env"] = fn({string, string}, [env = std::move(env)](std::vector<Value>& a) -> Result<Value> {
    const auto it = env.find(str(a[0]));
    if (it == env.end() || it->second.empty()) return a[1];
    return Value(it->second);
  });
  m["omit"] = fn({string_map, string}, [](std::vector<Value>& a) -> Result<Value> {
    nlohmann::json out = a[0].isNil() ? nlohmann::json::object() : a[0].json();
    for (std::size_t i = 1; i < a.size(); ++i) out.erase(str(a[i]));
    return Value(std::move(out)).withStringMap(true);
  }, true);
  m["strdict"] = fn({string}, [](std::vector<Value>& a) -> Result<Value> {
    nlohmann::json out = nlohmann::json::object();
    for (std::size_t i = 0; i < a.size(); i += 2) {
      out[str(a[i])] = i + 1 < a.size() ? str(a[i + 1]) : std::string();
    }
    return Value(std::move(out)).withStringMap(true);
  }, true);
  m["mergeMaps"] = fn({string_map}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(mergeStringMaps(a)).withStringMap(true);
  }, true);
  m["toJsonMap"] = fn({string_map}, [](std::vector<Value>& a) -> Result<Value> {
    auto r = goJsonMarshal(mergeStringMaps(a));
    return Value(r.ok() ? *r : std::string());
  }, true);
  m["omitNil"] = fn({any}, [](std::vector<Value>& a) -> Result<Value> {
    return Value(omitNil(a[0].json(), 0));
  });
  m["otelResourceAttributes"] =
      fn({ParamType::pointer("*v1alpha1.MeshConfig"), string_map, string_map, string, containers},
         [](std::vector<Value>& a) -> Result<Value> {
           return Value(otelResourceAttributes(a[0], a[1], a[2], str(a[3]), a[4]));
         });
  return m;
}

FuncMap istioFuncMap(Environment env, IstioFuncOptions options) {
  FuncMap m = sprigFuncMap();
  for (auto& [name, f] : istioInjectionFuncMap(std::move(env), options)) m[name] = std::move(f);
  return m;
}

ExecOptions istioExecOptions() {
  ExecOptions options;
  options.struct_fields = true;
  options.field_types = istioFieldTypes();
  // A Go enum field always holds a value: unset prints the name of 0 (proxy.proto, and
  // MeshConfig's ExtensionProvider.OpenTelemetryTracingProvider.ServiceAttributeEnrichment).
  options.enum_zeros = {{"InterceptionMode", "REDIRECT"},
                        {"ControlPlaneAuthPolicy", "NONE"},
                        {"TracingServiceName", "APP_LABEL_AND_NAMESPACE"},
                        {"ServiceAttributeEnrichment", "ISTIO_CANONICAL"}};
  // Wrapper messages: X.GetValue on an unset (nil) wrapper is the wrapped type's zero.
  options.wrapper_zeros = {{"HoldApplicationUntilProxyStarts", false},
                           {"Concurrency", 0},
                           {"FileFlushMinSizeKb", 0},
                           {"EnableIstioTags", false}};
  return options;
}

std::map<std::string, ExecOptions::FieldType, std::less<>> istioFieldTypes() {
  using FT = ExecOptions::FieldType;
  return {
      // map[string]string fields.
      {"Annotations", FT::kStringMap},
      {"Labels", FT::kStringMap},
      {"ProxyMetadata", FT::kStringMap},
      {"InfrastructureLabels", FT::kStringMap},
      {"InfrastructureAnnotations", FT::kStringMap},
      {"NodeSelector", FT::kStringMap},
      // string fields (SidecarTemplateData, ObjectMeta, TypeMeta, PodSpec, DeploymentMeta).
      {"Name", FT::kString},
      {"Namespace", FT::kString},
      {"GenerateName", FT::kString},
      {"APIVersion", FT::kString},
      {"Kind", FT::kString},
      {"ServiceAccountName", FT::kString},
      {"Revision", FT::kString},
      {"ProxyImage", FT::kString},
      {"ProxyInitImage", FT::kString},
      {"InboundTrafficPolicyMode", FT::kString},
      {"CompliancePolicy", FT::kString},
      {"TrustDomain", FT::kString},
      {"CaCertificates", FT::kString},
      // bool fields.
      {"HostNetwork", FT::kBool},
      {"NativeSidecars", FT::kBool},
      // int fields.
      {"ProxyListenPort", FT::kInt},
      {"ProxyInboundListenPort", FT::kInt},
      {"EstimatedConcurrency", FT::kInt},
      // messages (pointers in Go: nil, not an interface, when unset).
      {"ProxyConfig", FT::kStruct},
      {"MeshConfig", FT::kStruct},
      // slices.
      {"Containers", FT::kSlice},
      {"InitContainers", FT::kSlice},
      {"Ports", FT::kSlice},
      {"Volumes", FT::kSlice},
      {"ImagePullSecrets", FT::kSlice},
  };
}

}  // namespace harness::gotemplate
