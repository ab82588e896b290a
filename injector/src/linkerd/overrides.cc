#include "harness/injector/linkerd/overrides.h"

#include <algorithm>
#include <optional>
#include <set>

#include "harness/core/json.h"
#include "harness/core/quantity.h"
#include "harness/go/strconv.h"
#include "harness/go/time.h"
#include "harness/injector/linkerd/annotations.h"

// Followed: pkg/inject/inject.go ApplyAnnotationOverrides / MergeAdditionalEnv /
// getPodInboundPorts / FilterPodOpaquePorts, pkg/util/parsing.go (ParseContainerOpaquePorts,
// GetPortRanges), linkerd2-proxy-init ports.ParsePortRange and the semantics listed in
// docs/linkerd-injector.md §3.1. Warning texts are the upstream ones where known.

namespace harness::injector::linkerd {

namespace {

using nlohmann::json;
namespace ann = annotation;

std::string_view trimSpace(std::string_view s) {
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

void warn(std::vector<LogLine>* logs, std::string message) {
  if (logs != nullptr) logs->push_back({LogLine::Level::kWarning, std::move(message)});
}

class Annotations {
 public:
  explicit Annotations(const StringMap& map) : map_(map) {}
  [[nodiscard]] std::optional<std::string> get(std::string_view key) const {
    auto it = map_.find(std::string(key));
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }

 private:
  const StringMap& map_;
};

struct PortRange {
  std::int64_t lower = 0;
  std::int64_t upper = 0;
  [[nodiscard]] std::string toString() const {
    return lower == upper ? std::to_string(lower)
                          : std::to_string(lower) + "-" + std::to_string(upper);
  }
};

core::Result<std::int64_t> parsePort(std::string_view s) {
  auto n = go::atoi(s);
  if (!n.ok()) return n.error();
  if (*n < 0 || *n > 65535) return core::Error{"not a valid port number: " + std::to_string(*n)};
  return *n;
}

core::Result<PortRange> parsePortRange(std::string_view s) {
  std::vector<std::string> bounds;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == '-') {
      bounds.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  if (bounds.size() > 2) return core::Error{"ranges expected as <lower>-<upper>"};
  auto upper = parsePort(bounds.back());
  if (!upper.ok()) return core::Error{"could not parse upper bound: " + upper.error().message};
  auto lower = parsePort(bounds.front());
  if (!lower.ok()) return core::Error{"could not parse lower bound: " + lower.error().message};
  if (*upper < *lower) {
    return core::Error{"upper-bound must be greater than or equal to lower-bound"};
  }
  return PortRange{*lower, *upper};
}

// Go's time.Duration formatted the way ApplyAnnotationOverrides writes it back.
std::optional<std::int64_t> durationNanos(const std::string& value, std::string* error) {
  auto d = go::parseDuration(value);
  if (!d.ok()) {
    *error = d.error().message;
    return std::nullopt;
  }
  return *d;
}

// fmt.Sprintf("%dms", int(d.Seconds()*1000)): float, truncated.
std::string truncatedMillis(std::int64_t nanos) {
  return std::to_string(static_cast<std::int64_t>(go::durationSeconds(nanos) * 1000)) + "ms";
}

// fmt.Sprintf("%ds", int(d.Seconds())).
std::string truncatedSeconds(std::int64_t nanos) {
  return std::to_string(static_cast<std::int64_t>(go::durationSeconds(nanos))) + "s";
}

// ToWholeCPUCores: RoundUp(0) then AsInt64; 0 (and a warning) when it does not fit.
std::int64_t wholeCores(const core::Quantity& q, std::string_view text, std::string_view key,
                        std::vector<LogLine>* logs) {
  auto n = q.roundedUp(0);
  if (!n) {
    warn(logs, "could not parse cores: " + std::string(text) + " (" + std::string(key) + ")");
    return 0;
  }
  return *n;
}

// Parses a []EnvVar JSON document; nullopt when it is not one.
std::optional<json> parseEnvList(const std::string& text) {
  json doc = core::parseJsonOrDiscarded(text);
  if (doc.is_discarded()) return std::nullopt;
  if (doc.is_null()) return json::array();
  if (!doc.is_array()) return std::nullopt;
  for (const auto& e : doc) {
    if (e.is_null()) continue;
    if (!e.is_object()) return std::nullopt;
    auto name = e.find("name");
    if (name != e.end() && !name->is_null() && !name->is_string()) return std::nullopt;
    auto value = e.find("value");
    if (value != e.end() && !value->is_null() && !value->is_string()) return std::nullopt;
    auto from = e.find("valueFrom");
    if (from != e.end() && !from->is_null() && !from->is_object()) return std::nullopt;
  }
  return doc;
}

// Merge by name: a matching name is replaced in place, a new name is appended.
void mergeEnv(json* base, const json& layer) {
  for (const auto& e : layer) {
    json env = normalizeEnvVar(e);
    bool replaced = false;
    for (auto& existing : *base) {
      if (existing.value("name", "") == env.value("name", "")) {
        existing = env;
        replaced = true;
        break;
      }
    }
    if (!replaced) base->push_back(std::move(env));
  }
}

void mergeEnvLayer(json* base, const std::optional<std::string>& text, std::string_view origin,
                   std::vector<LogLine>* logs) {
  if (!text) return;
  auto list = parseEnvList(*text);
  if (!list) {
    warn(logs, "failed to unmarshal " + std::string(ann::kProxyAdditionalEnv) + " annotation on " +
                   std::string(origin) + ": " + *text);
    return;
  }
  mergeEnv(base, *list);
}

std::int32_t httpGetPort(const json& probe, bool* ok) {
  *ok = false;
  if (!probe.is_object()) return 0;
  auto http = probe.find("httpGet");
  if (http == probe.end() || !http->is_object()) return 0;
  auto port = http->find("port");
  if (port == http->end() || !port->is_number_integer()) return 0;
  *ok = true;
  return port->get<std::int32_t>();
}

}  // namespace

std::vector<std::string> splitComma(std::string_view s) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == ',') {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

json normalizeEnvVar(const json& env) {
  json out = json::object();
  out["name"] = env.is_object() && env.contains("name") && env["name"].is_string()
                    ? env["name"].get<std::string>()
                    : "";
  if (env.is_object()) {
    if (auto v = env.find("value");
        v != env.end() && v->is_string() && !v->get<std::string>().empty()) {
      out["value"] = *v;
    }
    if (auto v = env.find("valueFrom"); v != env.end() && v->is_object()) out["valueFrom"] = *v;
  }
  return out;
}

NamedPorts namedPorts(const json& pod_spec) {
  NamedPorts out;
  for (const json* c : allContainers(pod_spec)) {
    auto ports = c->find("ports");
    if (ports == c->end() || !ports->is_array()) continue;
    for (const auto& p : *ports) {
      if (!p.is_object()) continue;
      auto name = p.find("name");
      if (name == p.end() || !name->is_string() || name->get<std::string>().empty()) continue;
      auto port = p.find("containerPort");
      out[name->get<std::string>()] =
          port != p.end() && port->is_number_integer() ? port->get<std::int32_t>() : 0;
    }
  }
  return out;
}

std::string resolveOpaquePorts(std::string_view annotation_value, const NamedPorts& named_ports,
                               std::vector<LogLine>* logs) {
  std::string_view value = annotation_value;
  if (!value.empty() && value.back() == ',') value.remove_suffix(1);  // strings.TrimSuffix
  std::string out;
  for (const std::string& raw : splitComma(value)) {
    const std::string entry(trimSpace(raw));
    std::string resolved;
    if (auto it = named_ports.find(entry); it != named_ports.end()) {
      resolved = std::to_string(it->second);
    } else {
      auto range = parsePortRange(entry);
      if (!range.ok()) {
        warn(logs, "Invalid port range [" + entry + "]: " + range.error().message);
        continue;
      }
      resolved = range->toString();
    }
    if (!out.empty()) out += ",";
    out += resolved;
  }
  return out;
}

std::string podInboundPorts(const json& pod_spec) {
  std::set<std::int64_t> ports;
  for (const json* c : allContainers(pod_spec)) {
    if (auto list = c->find("ports"); list != c->end() && list->is_array()) {
      for (const auto& p : *list) {
        if (!p.is_object()) continue;
        auto port = p.find("containerPort");
        ports.insert(port != p.end() && port->is_number_integer() ? port->get<std::int64_t>() : 0);
      }
    }
    for (const char* probe : {"readinessProbe", "livenessProbe"}) {
      if (auto it = c->find(probe); it != c->end()) {
        bool ok = false;
        const std::int32_t port = httpGetPort(*it, &ok);
        if (ok) ports.insert(port);
      }
    }
  }
  std::vector<std::string> list;
  list.reserve(ports.size());
  for (const std::int64_t p : ports) list.push_back(std::to_string(p));
  std::sort(list.begin(), list.end());  // sort.Strings: "11211" < "80"
  std::string out;
  for (const auto& p : list) {
    if (!out.empty()) out += ",";
    out += p;
  }
  return out;
}

std::vector<std::string> filterPodOpaquePorts(const json& pod_spec,
                                              const std::vector<std::string>& default_ports) {
  std::vector<std::string> out;
  for (const json* c : allContainers(pod_spec)) {
    auto list = c->find("ports");
    if (list == c->end() || !list->is_array()) continue;
    for (const auto& p : *list) {
      if (!p.is_object()) continue;
      auto port = p.find("containerPort");
      const std::string s = std::to_string(
          port != p.end() && port->is_number_integer() ? port->get<std::int64_t>() : 0);
      if (std::find(default_ports.begin(), default_ports.end(), s) != default_ports.end()) {
        out.push_back(s);
      }
    }
  }
  return out;
}

std::vector<std::string> filterServiceOpaquePorts(const json& service_spec,
                                                  const std::vector<std::string>& default_ports) {
  std::vector<std::string> out;
  if (!service_spec.is_object()) return out;
  auto list = service_spec.find("ports");
  if (list == service_spec.end() || !list->is_array()) return out;
  auto isDefault = [&](std::int64_t v) {
    return std::find(default_ports.begin(), default_ports.end(), std::to_string(v)) !=
           default_ports.end();
  };
  for (const auto& p : *list) {
    if (!p.is_object()) continue;
    auto port_it = p.find("port");
    const std::int64_t port =
        port_it != p.end() && port_it->is_number_integer() ? port_it->get<std::int64_t>() : 0;
    // IntOrString: a string targetPort has IntVal 0; an unset one is Int 0.
    std::int64_t target = 0;
    bool target_is_string = false;
    if (auto t = p.find("targetPort"); t != p.end()) {
      if (t->is_number_integer()) target = t->get<std::int64_t>();
      if (t->is_string()) target_is_string = true;
    }
    const bool unset = !target_is_string && target == 0;
    if ((unset && isDefault(port)) || (!target_is_string && target != 0 && isDefault(target))) {
      out.push_back(std::to_string(port));
    }
  }
  return out;
}

Values overriddenValues(const Values& base, const StringMap& annotations,
                        const StringMap& namespace_annotations, const json& pod_spec,
                        std::vector<LogLine>* logs) {
  Values v = base;
  ProxyValues& p = v.proxy;
  const Annotations a(annotations);
  std::string err;

  if (auto o = a.get(ann::kInject); o && *o == "ingress") p.is_ingress = true;
  if (auto o = a.get(ann::kProxyImage)) p.image.name = *o;
  if (auto o = a.get(ann::kProxyVersionOverride)) p.image.version = *o;
  if (auto o = a.get(ann::kImagePullPolicy)) p.image.pull_policy = *o;

  const std::pair<std::string_view, std::int32_t*> ports[] = {
      {ann::kControlPort, &p.ports.control},
      {ann::kInboundPort, &p.ports.inbound},
      {ann::kAdminPort, &p.ports.admin},
      {ann::kOutboundPort, &p.ports.outbound},
  };
  for (const auto& [key, dst] : ports) {
    if (auto o = a.get(key)) {
      if (auto n = go::parseInt(*o, 10, 32); n.ok()) *dst = static_cast<std::int32_t>(*n);
    }
  }
  if (auto o = a.get(ann::kPodInboundPorts)) p.pod_inbound_ports = *o;  // overwritten below

  if (auto o = a.get(ann::kProxyAdminShutdown)) {
    if (*o == "enabled" || *o == "disabled") {
      p.enable_shutdown_endpoint = *o == "enabled";
    } else {
      warn(logs, "unrecognized value used for the " + std::string(ann::kProxyAdminShutdown) +
                     " annotation, valid values are: [enabled, disabled]");
    }
  }
  if (auto o = a.get(ann::kProxyLogLevel)) p.log_level = *o;
  if (auto o = a.get(ann::kProxyLogFormat)) p.log_format = *o;
  if (auto o = a.get(ann::kProxyLogHttpHeaders)) p.log_http_headers = *o;
  if (auto o = a.get(ann::kProxyRequireIdentityInboundPorts)) {
    p.require_identity_on_inbound_ports = *o;
  }
  if (auto o = a.get(ann::kProxyMetricsHostnameLabels)) {
    if (auto b = go::parseBool(*o); b.ok()) p.metrics_hostname_labels = *b;
  }

  if (auto o = a.get(ann::kProxyOutboundConnectTimeout)) {
    if (auto d = durationNanos(*o, &err)) {
      p.outbound_connect_timeout = truncatedMillis(*d);
    } else {
      warn(logs,
           "unrecognized proxy-outbound-connect-timeout duration value found on pod "
           "annotation: " +
               err);
    }
  }
  if (auto o = a.get(ann::kProxyInboundConnectTimeout)) {
    if (auto d = durationNanos(*o, &err)) {
      p.inbound_connect_timeout = truncatedMillis(*d);
    } else {
      warn(logs,
           "unrecognized proxy-inbound-connect-timeout duration value found on pod "
           "annotation: " +
               err);
    }
  }
  const std::pair<std::string_view, std::string*> discovery[] = {
      {ann::kProxyOutboundDiscoveryCacheUnusedTimeout, &p.outbound_discovery_cache_unused_timeout},
      {ann::kProxyInboundDiscoveryCacheUnusedTimeout, &p.inbound_discovery_cache_unused_timeout},
  };
  for (const auto& [key, dst] : discovery) {
    if (auto o = a.get(key)) {
      if (auto d = durationNanos(*o, &err)) {
        *dst = truncatedSeconds(*d);
      } else {
        warn(logs,
             "unrecognized duration value used on pod annotation " + std::string(key) + ": " + err);
      }
    }
  }
  const std::pair<std::string_view, bool*> detect[] = {
      {ann::kProxyDisableOutboundProtocolDetectTimeout,
       &p.disable_outbound_protocol_detect_timeout},
      {ann::kProxyDisableInboundProtocolDetectTimeout, &p.disable_inbound_protocol_detect_timeout},
  };
  for (const auto& [key, dst] : detect) {
    if (auto o = a.get(key)) {
      if (auto b = go::parseBool(*o); b.ok()) {
        *dst = *b;
      } else {
        warn(logs, "unrecognised value used on pod annotation " + std::string(key) + ": " +
                       b.error().message);
      }
    }
  }
  if (auto o = a.get(ann::kShutdownGracePeriod)) {
    if (auto d = durationNanos(*o, &err)) {
      p.shutdown_grace_period = truncatedMillis(*d);
    } else {
      warn(logs,
           "unrecognized proxy-shutdown-grace-period duration value found on pod "
           "annotation: " +
               err);
    }
  }
  if (auto o = a.get(ann::kEnableGateway)) {
    if (auto b = go::parseBool(*o); b.ok()) p.is_gateway = *b;
  }
  if (auto o = a.get(ann::kWaitBeforeExitSeconds)) {
    if (auto n = go::parseUint(*o, 10, 64); n.ok()) {
      p.wait_before_exit_seconds = *n;
    } else {
      warn(logs, "unrecognized value used for the " + std::string(ann::kWaitBeforeExitSeconds) +
                     " annotation, uint64 is expected: " + *o);
    }
  }
  // The first native-sidecar key present wins, even when it does not parse.
  for (const auto key : {ann::kNativeSidecar, ann::kNativeSidecarBeta, ann::kNativeSidecarAlpha}) {
    if (auto o = a.get(key)) {
      if (auto b = go::parseBool(*o); b.ok()) p.native_sidecar = *b;
      break;
    }
  }

  // Resources: validated as Quantities, the raw string kept; CPU values also size the
  // proxy runtime (whole cores, rounded up).
  struct QuantityOverride {
    std::string_view key;
    std::string* dst;
    std::int64_t* cores;
  };
  const QuantityOverride quantities[] = {
      {ann::kProxyCpuRequest, &p.resources.cpu.request, &p.workers.minimum},
      {ann::kProxyMemoryRequest, &p.resources.memory.request, nullptr},
      {ann::kProxyEphemeralStorageRequest, &p.resources.ephemeral_storage.request, nullptr},
      {ann::kProxyCpuLimit, &p.resources.cpu.limit, &p.workers.maximum},
      {ann::kProxyMemoryLimit, &p.resources.memory.limit, nullptr},
      {ann::kProxyEphemeralStorageLimit, &p.resources.ephemeral_storage.limit, nullptr},
  };
  for (const auto& q : quantities) {
    auto o = a.get(q.key);
    if (!o) continue;
    auto parsed = core::Quantity::parse(*o);
    if (!parsed.ok()) {
      warn(logs, parsed.error().message + " (" + std::string(q.key) + ")");
      continue;
    }
    *q.dst = *o;
    if (q.cores != nullptr) *q.cores = wholeCores(*parsed, *o, q.key, logs);
  }
  if (auto o = a.get(ann::kProxyCpuRatioLimit)) {
    auto r = go::parseFloat(*o);
    if (r.ok() && *r > 0 && *r < 1) {
      p.workers.maximum_cpu_ratio = *r;
    } else {
      warn(logs, "unrecognized value used for the " + std::string(ann::kProxyCpuRatioLimit) +
                     " annotation, a float between 0 and 1 is expected: " + *o);
    }
  }

  if (auto o = a.get(ann::kProxyUid)) {
    if (auto n = go::parseInt(*o, 10, 64); n.ok()) p.uid = *n;
  }
  if (auto o = a.get(ann::kProxyGid)) {
    if (auto n = go::parseInt(*o, 10, 64); n.ok()) p.gid = *n;
  }
  if (auto o = a.get(ann::kEnableExternalProfiles)) {
    if (auto b = go::parseBool(*o); b.ok()) p.enable_external_profiles = *b;
  }
  if (auto o = a.get(ann::kSkipInboundPorts)) v.proxy_init.ignore_inbound_ports = *o;
  if (auto o = a.get(ann::kSkipOutboundPorts)) v.proxy_init.ignore_outbound_ports = *o;
  if (auto o = a.get(ann::kSkipSubnets)) v.proxy_init.skip_subnets = *o;
  if (auto o = a.get(ann::kOpaquePorts)) {
    p.opaque_ports = resolveOpaquePorts(*o, namedPorts(pod_spec), logs);
  }
  if (auto o = a.get(ann::kDebugImage)) v.debug_image.name = *o;
  if (auto o = a.get(ann::kDebugImageVersion)) v.debug_image.version = *o;
  if (auto o = a.get(ann::kDebugImagePullPolicy)) v.debug_image.pull_policy = *o;
  if (auto o = a.get(ann::kProxyAwait)) {
    if (*o == "enabled" || *o == "disabled") {
      p.await = *o == "enabled";
    } else {
      warn(logs, "unrecognized value used for the " + std::string(ann::kProxyAwait) +
                     " annotation, valid values are: [enabled, disabled]");
    }
  }
  if (auto o = a.get(ann::kDefaultInboundPolicy)) {
    static const std::vector<std::string> kPolicies = {"all-unauthenticated",
                                                       "all-authenticated",
                                                       "cluster-unauthenticated",
                                                       "cluster-authenticated",
                                                       "deny",
                                                       "audit"};
    if (std::find(kPolicies.begin(), kPolicies.end(), *o) != kPolicies.end()) {
      p.default_inbound_policy = *o;
    } else {
      warn(logs, "unrecognized value used for the " + std::string(ann::kDefaultInboundPolicy) +
                     " annotation, valid values are: [all-unauthenticated, all-authenticated, "
                     "cluster-unauthenticated, cluster-authenticated, deny, audit]");
    }
  }
  if (auto o = a.get(ann::kAccessLog)) p.access_log = *o;
  if (auto o = a.get(ann::kCloseWaitTimeout)) {
    if (auto d = durationNanos(*o, &err)) {
      v.proxy_init.close_wait_timeout_secs = static_cast<std::int64_t>(go::durationSeconds(*d));
    } else {
      warn(logs, "invalid duration value used for the " + std::string(ann::kCloseWaitTimeout) +
                     " annotation: " + *o);
    }
  }

  // MergeAdditionalEnv: Helm values < namespace annotation < workload annotation.
  json env = json::array();
  if (p.additional_env.is_array()) mergeEnv(&env, p.additional_env);
  mergeEnvLayer(&env, Annotations(namespace_annotations).get(ann::kProxyAdditionalEnv), "namespace",
                logs);
  mergeEnvLayer(&env, a.get(ann::kProxyAdditionalEnv), "workload", logs);
  p.additional_env = std::move(env);

  // GetPodPatch overwrites whatever pod-inbound-ports said with the computed list.
  p.pod_inbound_ports = podInboundPorts(pod_spec);
  return v;
}

}  // namespace harness::injector::linkerd
