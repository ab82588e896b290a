#include "harness/injector/istio/proxy_config.h"

#include <arpa/inet.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "harness/core/json.h"
#include "harness/core/yaml.h"
#include "harness/go/json.h"
#include "harness/go/strconv.h"
#include "harness/go/time.h"
#include "harness/injector/istio/config.h"

// Followed: istio/istio pkg/util/protomarshal/protomarshal.go (ApplyYAML, ApplyJSON),
// pkg/config/mesh/mesh.go (MergeProxyConfig, mergeMap), pkg/kube/inject/validate.go
// (validateProxyConfig), pkg/config/validation/agent/validation.go (ValidateMeshConfigProxyConfig,
// ValidateDrainDuration, ValidateDuration, ValidatePort, ValidateProxyAddress, ValidateFQDN,
// ValidateLightstepCollector, ValidateZipkinCollector, ValidateDatadogCollector,
// ValidateControlPlaneAuthPolicy); golang/protobuf jsonpb/decode.go (unmarshalMessage,
// unmarshalValue, unmarshalSingularValue, trimQuote) and encode.go (Duration output); Go's
// encoding/json UnmarshalTypeError texts; net.SplitHostPort; go-multierror Append/Prefix and
// ListFormatFunc; istio.io/api mesh/v1alpha1 proxy.proto (field names, numbers and enums).

namespace harness::injector::istio {

namespace {

using core::Error;
using core::Result;
using nlohmann::json;

// ---- Go-worded decoding errors -------------------------------------------------------------

std::string numberText(const json& v) {
  if (v.is_number_integer()) return std::to_string(v.get<std::int64_t>());
  if (v.is_number_unsigned()) return std::to_string(v.get<std::uint64_t>());
  return go::formatFloat(v.get<double>());
}

Error cannotUnmarshal(const std::string& what, const std::string& go_type) {
  return Error{"json: cannot unmarshal " + what + " into Go value of type " + go_type};
}

// json.Unmarshal of `text` (what trimQuote leaves of a quoted number) as a JSON value; the
// syntax errors are encoding/json's scanner's.
Result<json> goJsonParse(const std::string& text) {
  if (std::string syntax = go::jsonSyntaxError(text); !syntax.empty()) return Error{syntax};
  json v = core::parseJsonOrDiscarded(text);
  // Valid for Go but not for nlohmann: only invalid UTF-8 inside a string, which Go would
  // decode to U+FFFD and which is never a number.
  if (v.is_discarded()) return Error{"invalid UTF-8 in JSON string"};
  return v;
}

// ---- The ProxyConfig schema ----------------------------------------------------------------

enum class Kind {
  kString, kBool, kInt32, kUint32, kDouble, kEnum, kDuration,
  kBoolValue, kInt32Value, kUint32Value,  // wrappers: the bare value in JSON
  kStringMap, kStringList, kMessage,
};

struct EnumDef {
  const char* full_name;
  std::vector<std::pair<const char*, int>> values;
};

struct Field;
using Schema = std::vector<Field>;

struct Field {
  const char* json_name;
  const char* proto_name;
  Kind kind;
  const EnumDef* enum_def = nullptr;
  const Schema* message = nullptr;  // kMessage: nullptr keeps the object as given
  const char* oneof = nullptr;
};

const EnumDef kInterceptionMode{"istio.mesh.v1alpha1.ProxyConfig.InboundInterceptionMode",
                                {{"REDIRECT", 0}, {"TPROXY", 1}, {"NONE", 2}}};
const EnumDef kAuthenticationPolicy{"istio.mesh.v1alpha1.AuthenticationPolicy",
                                    {{"NONE", 0}, {"MUTUAL_TLS", 1}, {"INHERIT", 1000}}};
const EnumDef kTracingServiceName{
    "istio.mesh.v1alpha1.ProxyConfig.TracingServiceName",
    {{"APP_LABEL_AND_NAMESPACE", 0}, {"CANONICAL_NAME_ONLY", 1},
     {"CANONICAL_NAME_AND_NAMESPACE", 2}}};

const Schema kAddressOnly = {{"address", "address", Kind::kString}};
const Schema kLightstep = {{"address", "address", Kind::kString},
                           {"accessToken", "access_token", Kind::kString}};
const Schema kTracing = {
    {"zipkin", "zipkin", Kind::kMessage, nullptr, &kAddressOnly},
    {"lightstep", "lightstep", Kind::kMessage, nullptr, &kLightstep},
    {"datadog", "datadog", Kind::kMessage, nullptr, &kAddressOnly},
    {"stackdriver", "stackdriver", Kind::kMessage},
    {"openCensusAgent", "open_census_agent", Kind::kMessage},
    {"sampling", "sampling", Kind::kDouble},
    {"customTags", "custom_tags", Kind::kMessage},
    {"maxPathTagLength", "max_path_tag_length", Kind::kUint32},
    {"tlsSettings", "tls_settings", Kind::kMessage},
    {"enableIstioTags", "enable_istio_tags", Kind::kBoolValue},
};
const Schema kRemoteService = {{"address", "address", Kind::kString},
                               {"tlsSettings", "tls_settings", Kind::kMessage},
                               {"tcpKeepalive", "tcp_keepalive", Kind::kMessage}};
const Schema kProxyImage = {{"imageType", "image_type", Kind::kString}};

// proxy.proto ProxyConfig in field-number order (jsonpb visits fields in that order, so the
// first bad field in this order is the one reported).
const Schema kProxyConfig = {
    {"configPath", "config_path", Kind::kString},
    {"binaryPath", "binary_path", Kind::kString},
    {"serviceCluster", "service_cluster", Kind::kString, nullptr, nullptr, "cluster_name"},
    {"drainDuration", "drain_duration", Kind::kDuration},
    {"parentShutdownDuration", "parent_shutdown_duration", Kind::kDuration},
    {"discoveryAddress", "discovery_address", Kind::kString},
    {"statsdUdpAddress", "statsd_udp_address", Kind::kString},
    {"envoyMetricsServiceAddress", "envoy_metrics_service_address", Kind::kString},
    {"proxyAdminPort", "proxy_admin_port", Kind::kInt32},
    {"controlPlaneAuthPolicy", "control_plane_auth_policy", Kind::kEnum, &kAuthenticationPolicy},
    {"customConfigFile", "custom_config_file", Kind::kString},
    {"statNameLength", "stat_name_length", Kind::kInt32},
    {"concurrency", "concurrency", Kind::kInt32Value},
    {"proxyBootstrapTemplatePath", "proxy_bootstrap_template_path", Kind::kString},
    {"interceptionMode", "interception_mode", Kind::kEnum, &kInterceptionMode},
    {"tracing", "tracing", Kind::kMessage, nullptr, &kTracing},
    {"sds", "sds", Kind::kMessage},
    {"envoyAccessLogService", "envoy_access_log_service", Kind::kMessage, nullptr,
     &kRemoteService},
    {"envoyMetricsService", "envoy_metrics_service", Kind::kMessage, nullptr, &kRemoteService},
    {"proxyMetadata", "proxy_metadata", Kind::kStringMap},
    {"statusPort", "status_port", Kind::kInt32},
    {"extraStatTags", "extra_stat_tags", Kind::kStringList},
    {"gatewayTopology", "gateway_topology", Kind::kMessage},
    {"terminationDrainDuration", "termination_drain_duration", Kind::kDuration},
    {"meshId", "mesh_id", Kind::kString},
    {"readinessProbe", "readiness_probe", Kind::kMessage},
    {"proxyStatsMatcher", "proxy_stats_matcher", Kind::kMessage},
    {"holdApplicationUntilProxyStarts", "hold_application_until_proxy_starts",
     Kind::kBoolValue},
    {"caCertificatesPem", "ca_certificates_pem", Kind::kStringList},
    {"image", "image", Kind::kMessage, nullptr, &kProxyImage},
    {"privateKeyProvider", "private_key_provider", Kind::kMessage},
    {"proxyHeaders", "proxy_headers", Kind::kMessage},
    {"tracingServiceName", "tracing_service_name", Kind::kEnum, &kTracingServiceName,
     nullptr, "cluster_name"},
    {"fileFlushInterval", "file_flush_interval", Kind::kDuration},
    {"fileFlushMinSizeKb", "file_flush_min_size_kb", Kind::kUint32Value},
    {"runtimeValues", "runtime_values", Kind::kStringMap},
};

// ---- Decoding ------------------------------------------------------------------------------

Result<std::int64_t> goInteger(const json& raw, const char* go_type, std::int64_t lo,
                               std::int64_t hi) {
  json v = raw;
  if (raw.is_string()) {  // trimQuote, then json.Unmarshal of what is left
    auto parsed = goJsonParse(raw.get<std::string>());
    if (!parsed) return parsed.error();
    v = std::move(*parsed);
  }
  if (!v.is_number()) return cannotUnmarshal(go::jsonValueKind(v), go_type);
  if (v.is_number_integer() && v.get<std::int64_t>() >= lo && v.get<std::int64_t>() <= hi) {
    return v.get<std::int64_t>();
  }
  if (v.is_number_unsigned() && v.get<std::uint64_t>() <= static_cast<std::uint64_t>(hi)) {
    return static_cast<std::int64_t>(v.get<std::uint64_t>());
  }
  return cannotUnmarshal("number " + numberText(v), go_type);
}

Result<std::string> goString(const json& v) {
  if (v.is_null()) return std::string();
  if (!v.is_string()) return cannotUnmarshal(go::jsonValueKind(v), "string");
  return v.get<std::string>();
}

// jsonpb's Duration output: seconds with 0, 3, 6 or 9 fractional digits.
std::string jsonpbDuration(std::int64_t nanos) {
  std::string sign;
  std::uint64_t n = static_cast<std::uint64_t>(nanos);
  if (nanos < 0) {
    sign = "-";
    n = static_cast<std::uint64_t>(-(nanos + 1)) + 1;
  }
  char frac[16];
  std::snprintf(frac, sizeof(frac), "%09llu", static_cast<unsigned long long>(n % 1000000000));
  std::string x = sign + std::to_string(n / 1000000000) + "." + frac;
  for (const char* suffix : {"000", "000", ".000"}) {
    const std::string s(suffix);
    if (x.size() >= s.size() && x.compare(x.size() - s.size(), s.size(), s) == 0) {
      x.resize(x.size() - s.size());
    }
  }
  return x + "s";
}

Result<json> decodeMessage(const json& in, const Schema* schema, json base);

Result<json> decodeValue(const Field& f, const json& raw) {
  switch (f.kind) {
    case Kind::kString: {
      auto s = goString(raw);
      if (!s) return s.error();
      return json(*s);
    }
    case Kind::kBool:
    case Kind::kBoolValue:
      if (!raw.is_boolean()) return cannotUnmarshal(go::jsonValueKind(raw), "bool");
      return raw;
    case Kind::kInt32:
    case Kind::kInt32Value: {
      auto v = goInteger(raw, "int32", std::numeric_limits<std::int32_t>::min(),
                         std::numeric_limits<std::int32_t>::max());
      if (!v) return v.error();
      return json(*v);
    }
    case Kind::kUint32:
    case Kind::kUint32Value: {
      auto v = goInteger(raw, "uint32", 0, std::numeric_limits<std::uint32_t>::max());
      if (!v) return v.error();
      return json(*v);
    }
    case Kind::kDouble: {
      json v = raw;
      if (raw.is_string()) {
        auto parsed = goJsonParse(raw.get<std::string>());
        if (!parsed) return parsed.error();
        v = std::move(*parsed);
      }
      if (!v.is_number()) return cannotUnmarshal(go::jsonValueKind(v), "float64");
      return v;
    }
    case Kind::kEnum: {
      if (raw.is_string()) {
        const std::string name = raw.get<std::string>();
        for (const auto& [n, _] : f.enum_def->values) {
          if (name == n) return json(name);
        }
        // fmt %q of the raw JSON text, quotes included.
        return Error{"unknown value \"\\\"" + name + "\\\"\" for enum " +
                     f.enum_def->full_name};
      }
      auto v = goInteger(raw, "protoreflect.EnumNumber", std::numeric_limits<std::int32_t>::min(),
                         std::numeric_limits<std::int32_t>::max());
      if (!v) return v.error();
      for (const auto& [n, number] : f.enum_def->values) {
        if (number == *v) return json(n);
      }
      return json(*v);  // an open enum keeps unknown numbers
    }
    case Kind::kDuration: {
      if (!raw.is_string()) return cannotUnmarshal(go::jsonValueKind(raw), "string");
      auto d = go::parseDuration(raw.get<std::string>());
      if (!d) return Error{"bad Duration: " + d.error().message};
      return json(jsonpbDuration(*d));
    }
    case Kind::kStringMap: {
      if (!raw.is_object()) {
        return cannotUnmarshal(go::jsonValueKind(raw), "map[string]json.RawMessage");
      }
      json out = json::object();
      for (auto it = raw.begin(); it != raw.end(); ++it) {
        auto s = goString(*it);
        if (!s) return s.error();
        out[it.key()] = *s;
      }
      return out;
    }
    case Kind::kStringList: {
      if (!raw.is_array()) return cannotUnmarshal(go::jsonValueKind(raw), "[]json.RawMessage");
      json out = json::array();
      for (const auto& e : raw) {
        auto s = goString(e);
        if (!s) return s.error();
        out.push_back(*s);
      }
      return out;
    }
    case Kind::kMessage:
      if (!raw.is_object()) {
        return cannotUnmarshal(go::jsonValueKind(raw), "map[string]json.RawMessage");
      }
      if (f.message == nullptr) return raw;
      return decodeMessage(raw, f.message, json::object());
  }
  return raw;
}

// unmarshalMessage into `base`: every known field present replaces the base's (null is
// skipped), the JSON name winning over the proto name; unknown fields are dropped; opaque
// messages (no schema) are kept whole.
Result<json> decodeMessage(const json& in, const Schema* schema, json base) {
  if (in.is_null()) return base;
  if (!in.is_object()) return cannotUnmarshal(go::jsonValueKind(in), "map[string]json.RawMessage");
  if (!base.is_object()) base = json::object();
  for (const auto& f : *schema) {
    const json* raw = nullptr;
    if (auto it = in.find(f.proto_name); it != in.end()) raw = &*it;
    if (auto it = in.find(f.json_name); it != in.end()) raw = &*it;
    if (raw == nullptr || raw->is_null()) continue;
    auto v = decodeValue(f, *raw);
    if (!v) return v.error();
    if (f.oneof != nullptr) {
      for (const auto& other : *schema) {
        if (other.oneof != nullptr && std::string(other.oneof) == f.oneof) {
          base.erase(other.json_name);
        }
      }
    }
    base[f.json_name] = std::move(*v);
  }
  return base;
}

// ---- Validation ----------------------------------------------------------------------------

std::string str(const json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::int64_t integer(const json& obj, const char* key) {
  if (!obj.is_object()) return 0;
  auto it = obj.find(key);
  return it != obj.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

const json* object(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  return it != obj.end() && it->is_object() ? &*it : nullptr;
}

// net.SplitHostPort.
Result<std::pair<std::string, std::string>> splitHostPort(const std::string& hostport) {
  auto addrErr = [&](const char* why) {
    return Error{"address " + hostport + ": " + why};
  };
  const auto i = hostport.rfind(':');
  if (i == std::string::npos) return addrErr("missing port in address");
  std::string host;
  std::size_t j = 0, k = 0;
  if (!hostport.empty() && hostport[0] == '[') {
    const auto end = hostport.find(']');
    if (end == std::string::npos) return addrErr("missing ']' in address");
    if (end + 1 == hostport.size()) return addrErr("missing port in address");
    if (end + 1 != i) {
      if (hostport[end + 1] == ':') return addrErr("too many colons in address");
      return addrErr("missing port in address");
    }
    host = hostport.substr(1, end - 1);
    j = 1;
    k = end + 1;
  } else {
    host = hostport.substr(0, i);
    if (host.find(':') != std::string::npos) return addrErr("too many colons in address");
  }
  if (hostport.find('[', j) != std::string::npos) return addrErr("unexpected '[' in address");
  if (hostport.find(']', k) != std::string::npos) return addrErr("unexpected ']' in address");
  return std::pair{host, hostport.substr(i + 1)};
}

Result<void> validatePort(std::int64_t port) {
  if (port >= 1 && port <= 65535) return {};
  return Error{"port number " + std::to_string(port) + " must be in the range 1..65535"};
}

// labels.IsDNS1123Label as Istio defines it (mixed case allowed).
bool isDns1123Label(std::string_view s) {
  if (s.empty() || s.size() > 63) return false;
  auto alnum = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; };
  if (!alnum(s.front()) || !alnum(s.back())) return false;
  for (char c : s) {
    if (!alnum(c) && c != '-') return false;
  }
  return true;
}

Result<void> validateFqdn(const std::string& fqdn) {
  if (fqdn.size() > 255) return Error{"domain name " + go::quote(fqdn) + " too long (max 255)"};
  if (fqdn.empty()) return Error{"empty domain name not allowed"};
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto dot = fqdn.find('.', start);
    parts.push_back(fqdn.substr(start, dot == std::string::npos ? dot : dot - start));
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (go::atoi(parts.back())) {
    return Error{"domain name " + go::quote(fqdn) + " invalid (top level domain " +
                 go::quote(parts.back()) + " cannot be all-numeric)"};
  }
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i + 1 == parts.size() && parts[i].empty()) return {};
    if (!isDns1123Label(parts[i])) {
      return Error{"domain name " + go::quote(fqdn) + " invalid (label " + go::quote(parts[i]) +
                   " invalid)"};
    }
  }
  return {};
}

bool isIpAddress(const std::string& s) {
  unsigned char buf[16];
  return inet_pton(AF_INET, s.c_str(), buf) == 1 || inet_pton(AF_INET6, s.c_str(), buf) == 1;
}

Result<void> validateProxyAddress(const std::string& address) {
  auto hp = splitHostPort(address);
  if (!hp) return Error{"unable to split " + go::quote(address) + ": " + hp.error().message};
  const auto& [host, port_text] = *hp;
  auto port = go::atoi(port_text);
  if (!port) return Error{"port (" + port_text + ") is not a number: " + port.error().message};
  if (auto ok = validatePort(*port); !ok) return ok;
  if (!validateFqdn(host) && !isIpAddress(host)) {
    return Error{go::quote(host) + " is not a valid hostname or an IP address"};
  }
  return {};
}

std::string replaceHostIp(std::string address) {
  const std::string token = "$(HOST_IP)";
  if (auto pos = address.find(token); pos != std::string::npos) {
    address.replace(pos, token.size(), "127.0.0.1");
  }
  return address;
}

// go-multierror's ListFormatFunc.
std::string multiErrorText(const std::vector<std::string>& errors) {
  if (errors.size() == 1) return "1 error occurred:\n\t* " + errors[0] + "\n\n";
  std::string out = std::to_string(errors.size()) + " errors occurred:\n";
  for (const auto& e : errors) out += "\t* " + e + "\n";
  return out + "\n";
}

}  // namespace

Result<json> applyProxyConfigYaml(std::string_view yaml, json base) {
  // YAMLToJSON reads a flow mapping ("{a: 1}") as YAML, while core::parseYaml takes text
  // starting with '{' for JSON: an explicit document start keeps it YAML.
  const auto first = yaml.find_first_not_of(" \t\r\n");
  std::string text(yaml);
  if (first != std::string_view::npos && yaml[first] == '{') text.insert(0, "--- ");
  auto doc = core::parseYaml(text);
  if (!doc) return Error{"error converting YAML to JSON: " + doc.error().message};
  return decodeMessage(*doc, &kProxyConfig, std::move(base));
}

Result<json> mergeProxyConfig(std::string_view yaml, json base) {
  json original_metadata = base.is_object() && base.contains("proxyMetadata")
                               ? base["proxyMetadata"]
                               : json::object();
  auto applied = applyProxyConfigYaml(yaml, std::move(base));
  if (!applied) return Error{"could not parse proxy config: " + applied.error().message};
  // mergeMap(orig, new): the original keys, overridden by the new ones.
  json merged = original_metadata.is_object() ? original_metadata : json::object();
  if (const json* fresh = object(*applied, "proxyMetadata")) {
    for (auto it = fresh->begin(); it != fresh->end(); ++it) merged[it.key()] = *it;
  }
  if (merged.empty()) {
    applied->erase("proxyMetadata");
  } else {
    (*applied)["proxyMetadata"] = std::move(merged);
  }
  return applied;
}

Result<void> validateMeshConfigProxyConfig(const json& config) {
  std::vector<std::string> errs;
  auto add = [&errs](const std::string& prefix, const Result<void>& r) {
    if (!r) errs.push_back(prefix + r.error().message);
  };
  if (str(config, "configPath").empty()) errs.emplace_back("config path must be set");
  if (str(config, "binaryPath").empty()) errs.emplace_back("binary path must be set");
  if (config.contains("serviceCluster")) {
    if (str(config, "serviceCluster").empty()) {
      errs.emplace_back("service cluster must be specified");
    }
  } else if (!config.contains("tracingServiceName")) {
    errs.emplace_back("oneof service cluster or tracing service name must be specified");
  }
  {
    // ValidateDrainDuration: an unset duration is 0.
    std::int64_t drain = 0;
    if (auto d = go::parseDuration(str(config, "drainDuration")); d) drain = *d;
    if (drain < 1000000) {
      errs.emplace_back("invalid drain duration: duration must be greater than 1ms");
    } else if (drain % 1000000 != 0) {
      errs.emplace_back("invalid drain duration: only durations to ms precision are supported");
    } else if (drain % 1000000000 != 0) {
      errs.emplace_back("drain time only supports durations to seconds precision");
    }
  }
  const std::string discovery = str(config, "discoveryAddress");
  if (discovery.empty()) {
    errs.emplace_back("discovery address must be set to the proxy discovery service");
  } else {
    add("invalid discovery address: ", validateProxyAddress(discovery));
  }
  if (const json* tracing = object(config, "tracing")) {
    if (const json* ls = object(*tracing, "lightstep")) {
      const std::string prefix = "invalid lightstep config: ";
      if (str(*ls, "address").empty()) errs.push_back(prefix + "address is required");
      add(prefix + "invalid lightstep address: ", validateProxyAddress(str(*ls, "address")));
      if (str(*ls, "accessToken").empty()) errs.push_back(prefix + "access token is required");
    }
    if (const json* z = object(*tracing, "zipkin")) {
      add("invalid zipkin config: ", validateProxyAddress(replaceHostIp(str(*z, "address"))));
    }
    if (const json* dd = object(*tracing, "datadog")) {
      add("invalid datadog config: ", validateProxyAddress(replaceHostIp(str(*dd, "address"))));
    }
  }
  if (const std::string a = str(config, "statsdUdpAddress"); !a.empty()) {
    add("invalid statsd udp address " + go::quote(a) + ": ", validateProxyAddress(a));
  }
  if (const std::string a = str(config, "envoyMetricsServiceAddress"); !a.empty()) {
    add("invalid envoy metrics service address " + go::quote(a) + ": ", validateProxyAddress(a));
  }
  if (const json* s = object(config, "envoyMetricsService"); s && !str(*s, "address").empty()) {
    const std::string a = str(*s, "address");
    add("invalid envoy metrics service address " + go::quote(a) + ": ", validateProxyAddress(a));
  }
  if (const json* s = object(config, "envoyAccessLogService"); s && !str(*s, "address").empty()) {
    const std::string a = str(*s, "address");
    add("invalid envoy access log service address " + go::quote(a) + ": ", validateProxyAddress(a));
  }
  add("invalid proxy admin port: ", validatePort(integer(config, "proxyAdminPort")));
  {
    const json& policy = config.contains("controlPlaneAuthPolicy")
                             ? config["controlPlaneAuthPolicy"]
                             : json("NONE");
    if (policy != "NONE" && policy != "MUTUAL_TLS") {
      const std::string name = policy.is_string() ? policy.get<std::string>() : policy.dump();
      errs.push_back("invalid authentication policy: unrecognized control plane auth policy " +
                     go::quote(name));
    }
  }
  add("invalid status port: ", validatePort(integer(config, "statusPort")));
  if (errs.empty()) return {};
  return Error{multiErrorText(errs)};
}

Result<void> validateProxyConfigAnnotation(std::string_view value) {
  auto applied = applyProxyConfigYaml(value, defaultProxyConfig());
  if (!applied) return Error{"failed to convert to apply proxy config: " + applied.error().message};
  return validateMeshConfigProxyConfig(*applied);
}

}  // namespace harness::injector::istio
