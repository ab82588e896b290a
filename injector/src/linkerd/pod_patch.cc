#include "harness/injector/linkerd/pod_patch.h"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <optional>

#include <openssl/sha.h>

#include "harness/core/utf8.h"
#include "harness/go/strconv.h"
#include "harness/injector/linkerd/annotations.h"
#include "harness/injector/linkerd/overrides.h"
#include "harness/injector/linkerd/report.h"

// Followed (edge-26.x, see docs/linkerd-injector.md §2 for what could not be read directly):
// charts/patch/templates/patch.json (op order, $initIndex), charts/partials/templates/
// _proxy.tpl (env order), _proxy-init.tpl, _network-validator.tpl, _debug.tpl, _resources.tpl,
// _capabilities.tpl, _volumes.tpl, and pkg/inject/inject.go (GetPodPatch,
// injectPodAnnotations, injectObjectMeta, injectPodSpec, injectProxyInit). The env order was
// checked against controller/proxy-injector/fake/data/pod.nativesidecar.patch.json and
// pod-cpu-ratio.json.
//
// Upstream renders these values into a text template and parses the result; this builds the
// same JSON directly. Two template artefacts are kept on purpose:
//  * numbers pass through Helm values as float64, so a quoted number is formatted with %v
//    ("1e+06" for 1000000) — see helmNumber;
//  * annotation values are written with JSON escaping. Upstream inserts them into "..." without
//    escaping, so a value containing '"' or '\' yields invalid JSON; that bug is not copied.

namespace harness::injector::linkerd {

namespace {

using nlohmann::json;

constexpr char kServiceAccountTokenDir[] = "/var/run/secrets/tokens";
constexpr char kEndEntityDir[] = "/var/run/linkerd/identity/end-entity";
constexpr char kPodInfoDir[] = "/var/run/linkerd/podinfo";

// {{ x | quote }} of a number that went through Helm's values (float64, printed with %v).
std::string helmNumber(std::int64_t n) { return go::formatFloat(static_cast<double>(n)); }

// {{ x | quote }} of an arbitrary Helm value.
std::string helmString(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_number()) return go::formatFloat(v.get<double>());
  if (v.is_null()) return "";
  return v.dump();
}

std::string boolString(bool b) { return b ? "true" : "false"; }

std::string sha256Hex(std::string_view data) {
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(std::size_t{2} * SHA256_DIGEST_LENGTH);
  for (const unsigned char b : digest) {
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 0xF]);
  }
  return out;
}

// strings.TrimSpace (ASCII whitespace; PEM bundles carry nothing else).
std::string_view trimSpace(std::string_view s) {
  auto space = [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; };
  while (!s.empty() && space(s.front())) s.remove_prefix(1);
  while (!s.empty() && space(s.back())) s.remove_suffix(1);
  return s;
}

// sprig snakecase for the proxy parameter keys ("keepAliveInterval" -> "keep_alive_interval",
// "http2" -> "http2").
std::string snakeUpper(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (std::isupper(c) && i > 0) {
      const auto prev = static_cast<unsigned char>(s[i - 1]);
      if (std::islower(prev) || std::isdigit(prev)) out.push_back('_');
    }
    out.push_back(static_cast<char>(std::toupper(c)));
  }
  return out;
}

// Built member by member: nlohmann's initializer-list constructor builds and inspects a
// two-element array per member first, and the proxy has about thirty of these.
json env(std::string_view name, std::string_view value) {
  json e = json::object();
  e.emplace("name", name);
  e.emplace("value", value);
  return e;
}

json envField(std::string_view name, std::string_view field_path) {
  json ref = json::object();
  ref.emplace("fieldPath", field_path);
  json from = json::object();
  from.emplace("fieldRef", std::move(ref));
  json e = json::object();
  e.emplace("name", name);
  e.emplace("valueFrom", std::move(from));
  return e;
}

// partials.resources: null when nothing is set.
json resources(const Resources& r) {
  json limits = json::object();
  json requests = json::object();
  if (!r.cpu.limit.empty()) limits["cpu"] = r.cpu.limit;
  if (!r.memory.limit.empty()) limits["memory"] = r.memory.limit;
  if (!r.ephemeral_storage.limit.empty()) limits["ephemeral-storage"] = r.ephemeral_storage.limit;
  if (!r.cpu.request.empty()) requests["cpu"] = r.cpu.request;
  if (!r.memory.request.empty()) requests["memory"] = r.memory.request;
  if (!r.ephemeral_storage.request.empty()) {
    requests["ephemeral-storage"] = r.ephemeral_storage.request;
  }
  if (limits.empty() && requests.empty()) return nullptr;
  json out = json::object();
  if (!limits.empty()) out["limits"] = limits;
  if (!requests.empty()) out["requests"] = requests;
  return out;
}

std::string proxyImage(const Values& v) {
  return v.proxy.image.name + ":" +
         (v.proxy.image.version.empty() ? v.linkerd_version : v.proxy.image.version);
}

std::string proxyPullPolicy(const Values& v) {
  return v.proxy.image.pull_policy.empty() ? v.image_pull_policy : v.proxy.image.pull_policy;
}

std::string trustDomain(const Values& v) {
  return v.identity_trust_domain.empty() ? v.cluster_domain : v.identity_trust_domain;
}

// What injectPodSpec copies from containers[0].
struct AppContainerInfo {
  std::optional<json> sa_mount;  // {mountPath, name, readOnly}
  bool has_capabilities = false;
  std::vector<std::string> cap_add;
  std::vector<std::string> cap_drop;
};

AppContainerInfo appContainerInfo(const json& pod_spec) {
  AppContainerInfo info;
  if (auto m = serviceAccountVolumeMount(pod_spec)) {
    json mount = {{"mountPath", m->value("mountPath", "")},
                  {"name", m->value("name", "")},
                  {"readOnly", m->contains("readOnly") && (*m)["readOnly"].is_boolean() &&
                                   (*m)["readOnly"].get<bool>()}};
    info.sa_mount = mount;
  }
  auto containers = pod_spec.find("containers");
  if (containers == pod_spec.end() || !containers->is_array() || containers->empty()) return info;
  const json& first = containers->front();
  if (!first.is_object()) return info;
  auto sc = first.find("securityContext");
  if (sc == first.end() || !sc->is_object()) return info;
  auto caps = sc->find("capabilities");
  if (caps == sc->end() || !caps->is_object()) return info;
  info.has_capabilities = true;
  for (const auto& [key, dst] :
       {std::pair{"add", &info.cap_add}, std::pair{"drop", &info.cap_drop}}) {
    auto list = caps->find(key);
    if (list == caps->end() || !list->is_array()) continue;
    for (const auto& c : *list) dst->push_back(c.is_string() ? c.get<std::string>() : "");
  }
  return info;
}

core::Result<json> proxyInitContainer(const Values& v, const AppContainerInfo& app) {
  const ProxyInitValues& pi = v.proxy_init;
  json args = json::array();
  if (pi.iptables_mode == "nft") {
    for (const char* a :
         {"--firewall-bin-path", "iptables-nft", "--firewall-save-bin-path", "iptables-nft-save"}) {
      args.push_back(a);
    }
  } else if (pi.iptables_mode != "legacy") {
    return core::Error{"Unsupported value \"" + pi.iptables_mode +
                       "\" for proxyInit.iptablesMode\nValid values: [\"nft\", \"legacy\"]"};
  }
  if (v.disable_ipv6) args.push_back("--ipv6=false");
  args.push_back("--incoming-proxy-port");
  args.push_back(helmNumber(v.proxy.ports.inbound));
  args.push_back("--outgoing-proxy-port");
  args.push_back(helmNumber(v.proxy.ports.outbound));
  args.push_back("--proxy-uid");
  args.push_back(helmNumber(v.proxy.uid));
  if (v.proxy.gid >= 0) {
    args.push_back("--proxy-gid");
    args.push_back(helmNumber(v.proxy.gid));
  }
  args.push_back("--inbound-ports-to-ignore");
  std::string ignore_in = helmNumber(v.proxy.ports.control) + "," + helmNumber(v.proxy.ports.admin);
  if (!pi.ignore_inbound_ports.empty()) ignore_in += "," + pi.ignore_inbound_ports;
  args.push_back(ignore_in);
  if (!pi.ignore_outbound_ports.empty()) {
    args.push_back("--outbound-ports-to-ignore");
    args.push_back(pi.ignore_outbound_ports);
  }
  if (pi.close_wait_timeout_secs != 0) {
    if (!pi.run_as_root) {
      return core::Error{"proxyInit.runAsRoot must be set to use proxyInit.closeWaitTimeoutSecs"};
    }
    args.push_back("--timeout-close-wait-secs");
    args.push_back(helmNumber(pi.close_wait_timeout_secs));
  }
  if (!pi.log_format.empty()) {
    args.push_back("--log-format");
    args.push_back(pi.log_format);
  }
  if (!pi.log_level.empty()) {
    args.push_back("--log-level");
    args.push_back(pi.log_level);
  }
  if (!pi.skip_subnets.empty()) {
    args.push_back("--subnets-to-ignore");
    args.push_back(pi.skip_subnets);
  }

  const bool privileged = pi.close_wait_timeout_secs != 0 || pi.privileged;
  json caps = {{"add", {"NET_ADMIN", "NET_RAW"}}};
  if (app.has_capabilities) {
    for (const auto& c : app.cap_add) caps["add"].push_back(c);
    json drop = json::array();
    for (const auto& c : app.cap_drop) {
      // NET_RAW and NET_ADMIN are what proxy-init needs to set up iptables.
      if (c != "NET_RAW" && c != "NET_ADMIN") drop.push_back(c);
    }
    if (!drop.empty()) caps["drop"] = drop;
  }
  json sc = {{"allowPrivilegeEscalation", privileged},
             {"capabilities", caps},
             {"privileged", privileged},
             {"readOnlyRootFilesystem", true},
             {"seccompProfile", {{"type", "RuntimeDefault"}}}};
  if (pi.run_as_root) {
    sc["runAsGroup"] = 0;
    sc["runAsNonRoot"] = false;
    sc["runAsUser"] = 0;
  } else {
    sc["runAsNonRoot"] = true;
    sc["runAsUser"] = pi.run_as_user == 0 ? 65534 : pi.run_as_user;
    sc["runAsGroup"] = pi.run_as_group == 0 ? 65534 : pi.run_as_group;
  }
  json mounts = json::array();
  if (!v.cni_enabled)
    mounts.push_back({{"mountPath", pi.xt_mount_path}, {"name", pi.xt_mount_name}});
  if (app.sa_mount) mounts.push_back(*app.sa_mount);

  json c = {{"args", args},           {"command", {"/usr/lib/linkerd/linkerd2-proxy-init"}},
            {"image", proxyImage(v)}, {"imagePullPolicy", proxyPullPolicy(v)},
            {"name", "linkerd-init"}, {"resources", resources(v.proxy.resources)},
            {"securityContext", sc},  {"terminationMessagePolicy", "FallbackToLogsOnError"}};
  if (!mounts.empty()) c["volumeMounts"] = mounts;
  return c;
}

json networkValidatorContainer(const Values& v) {
  const NetworkValidatorValues& nv = v.network_validator;
  const std::string connect = !nv.connect_addr.empty() ? nv.connect_addr
                              : v.disable_ipv6         ? "1.1.1.1:20001"
                                                       : "[fd00::1]:20001";
  const std::string listen = !nv.listen_addr.empty() ? nv.listen_addr
                             : v.disable_ipv6        ? "0.0.0.0:4140"
                                                     : "[::]:4140";
  json c = {{"name", "linkerd-network-validator"},
            {"image", proxyImage(v)},
            {"imagePullPolicy", proxyPullPolicy(v)},
            {"resources", resources(v.proxy.resources)},
            {"command", {"/usr/lib/linkerd/linkerd2-network-validator"}},
            {"args",
             {"--log-format", nv.log_format, "--log-level", nv.log_level, "--connect-addr", connect,
              "--listen-addr", listen, "--timeout", nv.timeout}}};
  if (nv.enable_security_context) {
    c["securityContext"] = {{"allowPrivilegeEscalation", false},
                            {"capabilities", {{"drop", {"ALL"}}}},
                            {"readOnlyRootFilesystem", true},
                            {"runAsGroup", 65534},
                            {"runAsNonRoot", true},
                            {"runAsUser", 65534},
                            {"seccompProfile", {{"type", "RuntimeDefault"}}}};
  }
  return c;
}

json debugContainer(const Values& v) {
  const Image& img = v.debug_image;
  const json probe = {{"exec", {{"command", {"true"}}}}};
  return {{"image", img.name + ":" + (img.version.empty() ? v.linkerd_version : img.version)},
          {"imagePullPolicy", img.pull_policy.empty() ? v.image_pull_policy : img.pull_policy},
          {"name", "linkerd-debug"},
          {"terminationMessagePolicy", "FallbackToLogsOnError"},
          {"livenessProbe", probe},
          {"readinessProbe", probe}};
}

core::Result<json> proxyEnv(const PodPatchInput& in, const Values& v) {
  const ProxyValues& p = v.proxy;
  const std::string& ns = in.linkerd_namespace;
  const std::string& cd = v.cluster_domain;
  const std::string td = trustDomain(v);
  const std::string any = v.disable_ipv6 ? "0.0.0.0" : "[::]";
  json e = json::array();
  e.push_back(envField("_pod_name", "metadata.name"));
  e.push_back(envField("_pod_ns", "metadata.namespace"));
  e.push_back(envField("_pod_uid", "metadata.uid"));
  e.push_back(envField("_pod_ip", "status.podIP"));
  e.push_back(envField("_pod_nodeName", "spec.nodeName"));
  e.push_back(env("_pod_containerName", "linkerd-proxy"));
  // Runtime workers (proxy.cores is the deprecated fixed count).
  e.push_back(env("LINKERD2_PROXY_CORES", helmNumber(p.cores != 0 ? p.cores : p.workers.minimum)));
  e.push_back(env("LINKERD2_PROXY_CORES_MIN", helmNumber(p.workers.minimum)));
  if (p.workers.maximum != 0) {
    e.push_back(env("LINKERD2_PROXY_CORES_MAX", helmNumber(p.workers.maximum)));
  }
  if (p.workers.maximum_cpu_ratio && *p.workers.maximum_cpu_ratio != 0) {
    e.push_back(
        env("LINKERD2_PROXY_CORES_MAX_RATIO", go::formatFloat(*p.workers.maximum_cpu_ratio)));
  }
  if (!p.require_identity_on_inbound_ports.empty()) {
    e.push_back(
        env("LINKERD2_PROXY_INBOUND_PORTS_REQUIRE_IDENTITY", p.require_identity_on_inbound_ports));
  }
  if (!p.require_tls_on_inbound_ports.empty()) {
    e.push_back(env("LINKERD2_PROXY_INBOUND_PORTS_REQUIRE_TLS", p.require_tls_on_inbound_ports));
  }
  e.push_back(
      env("LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED", boolString(p.enable_shutdown_endpoint)));
  e.push_back(env(
      "LINKERD2_PROXY_LOG",
      p.log_level + (p.log_http_headers == "insecure" ? "" : ",[{headers}]=off,[{request}]=off")));
  e.push_back(env("LINKERD2_PROXY_LOG_FORMAT", p.log_format));
  e.push_back(env("LINKERD2_PROXY_DESTINATION_SVC_ADDR",
                  "linkerd-dst-headless." + ns + ".svc." + cd + ".:8086"));
  e.push_back(env("LINKERD2_PROXY_DESTINATION_PROFILE_NETWORKS", v.cluster_networks));
  e.push_back(
      env("LINKERD2_PROXY_POLICY_SVC_ADDR", "linkerd-policy." + ns + ".svc." + cd + ".:8090"));
  e.push_back(
      env("LINKERD2_PROXY_POLICY_WORKLOAD", "{\"ns\":\"$(_pod_ns)\", \"pod\":\"$(_pod_name)\"}\n"));
  e.push_back(env("LINKERD2_PROXY_INBOUND_DEFAULT_POLICY", p.default_inbound_policy));
  e.push_back(env("LINKERD2_PROXY_POLICY_CLUSTER_NETWORKS", v.cluster_networks));
  e.push_back(
      env("LINKERD2_PROXY_CONTROL_STREAM_INITIAL_TIMEOUT", p.control_stream_initial_timeout));
  e.push_back(env("LINKERD2_PROXY_CONTROL_STREAM_IDLE_TIMEOUT", p.control_stream_idle_timeout));
  e.push_back(env("LINKERD2_PROXY_CONTROL_STREAM_LIFETIME", p.control_stream_lifetime));
  if (!p.inbound_connect_timeout.empty()) {
    e.push_back(env("LINKERD2_PROXY_INBOUND_CONNECT_TIMEOUT", p.inbound_connect_timeout));
  }
  if (!p.outbound_connect_timeout.empty()) {
    e.push_back(env("LINKERD2_PROXY_OUTBOUND_CONNECT_TIMEOUT", p.outbound_connect_timeout));
  }
  if (!p.outbound_discovery_cache_unused_timeout.empty()) {
    e.push_back(env("LINKERD2_PROXY_OUTBOUND_DISCOVERY_IDLE_TIMEOUT",
                    p.outbound_discovery_cache_unused_timeout));
  }
  if (!p.inbound_discovery_cache_unused_timeout.empty()) {
    e.push_back(env("LINKERD2_PROXY_INBOUND_DISCOVERY_IDLE_TIMEOUT",
                    p.inbound_discovery_cache_unused_timeout));
  }
  if (p.disable_outbound_protocol_detect_timeout) {
    e.push_back(env("LINKERD2_PROXY_OUTBOUND_DETECT_TIMEOUT", "365d"));
  }
  if (p.disable_inbound_protocol_detect_timeout) {
    e.push_back(env("LINKERD2_PROXY_INBOUND_DETECT_TIMEOUT", "365d"));
  }
  e.push_back(env("LINKERD2_PROXY_CONTROL_LISTEN_ADDR", any + ":" + helmNumber(p.ports.control)));
  e.push_back(env("LINKERD2_PROXY_ADMIN_LISTEN_ADDR", any + ":" + helmNumber(p.ports.admin)));
  const std::string outbound = helmNumber(p.ports.outbound);
  e.push_back(env("LINKERD2_PROXY_OUTBOUND_LISTEN_ADDR", "127.0.0.1:" + outbound));
  e.push_back(env("LINKERD2_PROXY_OUTBOUND_LISTEN_ADDRS",
                  "127.0.0.1:" + outbound + (v.disable_ipv6 ? "" : ",[::1]:" + outbound)));
  e.push_back(env("LINKERD2_PROXY_INBOUND_LISTEN_ADDR", any + ":" + helmNumber(p.ports.inbound)));
  e.push_back(envField("LINKERD2_PROXY_INBOUND_IPS", "status.podIPs"));
  e.push_back(env("LINKERD2_PROXY_INBOUND_PORTS", p.pod_inbound_ports));
  if (p.is_gateway) e.push_back(env("LINKERD2_PROXY_INBOUND_GATEWAY_SUFFIXES", "svc." + cd + "."));
  if (p.is_ingress) e.push_back(env("LINKERD2_PROXY_INGRESS_MODE", "true"));
  e.push_back(env("LINKERD2_PROXY_DESTINATION_PROFILE_SUFFIXES",
                  p.enable_external_profiles ? "." : "svc." + cd + "."));
  e.push_back(env("LINKERD2_PROXY_INBOUND_ACCEPT_KEEPALIVE", "10000ms"));
  e.push_back(env("LINKERD2_PROXY_OUTBOUND_CONNECT_KEEPALIVE", "10000ms"));
  e.push_back(env("LINKERD2_PROXY_INBOUND_ACCEPT_USER_TIMEOUT", "30s"));
  e.push_back(env("LINKERD2_PROXY_OUTBOUND_CONNECT_USER_TIMEOUT", "30s"));
  e.push_back(env("LINKERD2_PROXY_OUTBOUND_METRICS_HOSTNAME_LABELS",
                  boolString(p.metrics_hostname_labels)));
  // range over (dict "inbound" .. "outbound" ..), each level in sorted key order.
  for (const auto& [dir, params] :
       {std::pair{"inbound", &p.inbound}, std::pair{"outbound", &p.outbound}}) {
    if (!params->is_object()) continue;
    for (const auto& [scope, protos] : params->items()) {
      if (!protos.is_object()) continue;
      for (const auto& [proto, kv] : protos.items()) {
        if (!kv.is_object()) continue;
        for (const auto& [param, value] : kv.items()) {
          e.push_back(env("LINKERD2_PROXY_" + snakeUpper(dir) + "_" + snakeUpper(scope) + "_" +
                              snakeUpper(proto) + "_" + snakeUpper(param),
                          helmString(value)));
        }
      }
    }
  }
  if (!p.opaque_ports.empty()) {
    e.push_back(env("LINKERD2_PROXY_INBOUND_PORTS_DISABLE_PROTOCOL_DETECTION", p.opaque_ports));
  }
  e.push_back(env("LINKERD2_PROXY_DESTINATION_CONTEXT",
                  "{\"ns\":\"$(_pod_ns)\", \"nodeName\":\"$(_pod_nodeName)\", "
                  "\"pod\":\"$(_pod_name)\"}\n"));
  e.push_back(envField("_pod_sa", "spec.serviceAccountName"));
  e.push_back(env("_l5d_ns", ns));
  e.push_back(env("_l5d_trustdomain", td));
  e.push_back(env("LINKERD2_PROXY_IDENTITY_DIR", kEndEntityDir));
  // The bundle reaches the chart through yaml.Marshal of the values (inject.go GetPodPatch), whose
  // encoding/json writes each byte that is not UTF-8 as U+FFFD.
  const std::string valid_pem = core::replaceInvalidUtf8(in.trust_anchors_pem);
  const std::string_view anchors = trimSpace(valid_pem);
  if (anchors.empty()) return core::Error{"Please provide the identity trust anchors"};
  e.push_back(env("LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS", std::string(anchors) + "\n"));
  e.push_back(env("LINKERD2_PROXY_IDENTITY_TOKEN_FILE",
                  v.service_account_token_projection
                      ? "/var/run/secrets/tokens/linkerd-identity-token"
                      : "/var/run/secrets/kubernetes.io/serviceaccount/token"));
  e.push_back(env("LINKERD2_PROXY_IDENTITY_SVC_ADDR",
                  "linkerd-identity-headless." + ns + ".svc." + cd + ".:8080"));
  const std::string identity_suffix = ".serviceaccount.identity." + ns + "." + td;
  e.push_back(env("LINKERD2_PROXY_IDENTITY_LOCAL_NAME", "$(_pod_sa).$(_pod_ns)" + identity_suffix));
  e.push_back(env("LINKERD2_PROXY_IDENTITY_SVC_NAME", "linkerd-identity." + ns + identity_suffix));
  e.push_back(
      env("LINKERD2_PROXY_DESTINATION_SVC_NAME", "linkerd-destination." + ns + identity_suffix));
  e.push_back(env("LINKERD2_PROXY_POLICY_SVC_NAME", "linkerd-destination." + ns + identity_suffix));
  if (!p.access_log.empty()) e.push_back(env("LINKERD2_PROXY_ACCESS_LOG", p.access_log));
  if (!p.shutdown_grace_period.empty()) {
    e.push_back(env("LINKERD2_PROXY_SHUTDOWN_GRACE_PERIOD", p.shutdown_grace_period));
  }
  if (p.tracing.enabled) {
    // Reconstructed from the reference's description; the edge-26.x template was not readable.
    if (p.tracing.collector_endpoint.empty() || p.tracing.mesh_identity_service_account.empty()) {
      return core::Error{
          "proxy.tracing.collector.endpoint and proxy.tracing.collector.meshIdentity must be "
          "set when proxy tracing is enabled"};
    }
    e.push_back(env("LINKERD2_PROXY_TRACE_ATTRIBUTES_PATH", std::string(kPodInfoDir) + "/labels"));
    e.push_back(env("LINKERD2_PROXY_TRACE_PROTOCOL", "opentelemetry"));
    const StringMap& labels = in.workload->pod_labels;
    auto instance = labels.find(std::string(label::kAppInstance));
    auto app_name = labels.find(std::string(label::kAppName));
    if (instance != labels.end()) {
      e.push_back(env("LINKERD2_PROXY_TRACE_SERVICE_NAME", instance->second));
    } else if (app_name != labels.end()) {
      e.push_back(env("LINKERD2_PROXY_TRACE_SERVICE_NAME", app_name->second));
    }
    e.push_back(env("LINKERD2_PROXY_TRACE_COLLECTOR_SVC_ADDR", p.tracing.collector_endpoint));
    const std::string sa_ns =
        p.tracing.mesh_identity_namespace.empty() ? ns : p.tracing.mesh_identity_namespace;
    e.push_back(env("LINKERD2_PROXY_TRACE_COLLECTOR_SVC_NAME",
                    p.tracing.mesh_identity_service_account + "." + sa_ns + identity_suffix));
    std::string attributes;
    const std::string_view prefix = annotation::kOpenTelemetryResourcePrefix;
    for (const auto& [k, val] : in.effective_annotations) {
      if (k.compare(0, prefix.size(), prefix) == 0) {
        attributes += k.substr(prefix.size()) + "=" + val + "\n";
      }
    }
    if (!attributes.empty()) e.push_back(env("LINKERD2_PROXY_TRACE_EXTRA_ATTRIBUTES", attributes));
  }
  if (p.additional_env.is_array()) {
    for (const auto& x : p.additional_env) e.push_back(normalizeEnvVar(x));
  }
  if (p.experimental_env.is_array()) {
    for (const auto& x : p.experimental_env) e.push_back(normalizeEnvVar(x));
  }
  return e;
}

json httpProbe(std::string_view path, std::int32_t port, const ProbeSettings& s, bool startup) {
  json probe = {{"httpGet", {{"path", path}, {"port", port}}},
                {"initialDelaySeconds", s.initial_delay_seconds}};
  if (startup) {
    probe["periodSeconds"] = s.period_seconds;
    probe["failureThreshold"] = s.failure_threshold;
  } else {
    probe["timeoutSeconds"] = s.timeout_seconds;
  }
  return probe;
}

core::Result<json> proxyContainer(const PodPatchInput& in, const Values& v,
                                  const AppContainerInfo& app) {
  const ProxyValues& p = v.proxy;
  if (p.log_http_headers != "insecure" && p.log_http_headers != "off" &&
      !p.log_http_headers.empty()) {
    return core::Error{"logHTTPHeaders must be one of: insecure | off"};
  }
  auto env_list = proxyEnv(in, v);
  if (!env_list.ok()) return env_list.error();
  json c = {{"env", *env_list},
            {"image", proxyImage(v)},
            {"imagePullPolicy", proxyPullPolicy(v)},
            {"livenessProbe", httpProbe("/live", p.ports.admin, p.liveness_probe, false)},
            {"name", "linkerd-proxy"},
            {"ports",
             {{{"containerPort", p.ports.inbound}, {"name", "linkerd-proxy"}},
              {{"containerPort", p.ports.admin}, {"name", "linkerd-admin"}}}},
            {"readinessProbe", httpProbe("/ready", p.ports.admin, p.readiness_probe, false)},
            {"resources", resources(p.resources)},
            {"terminationMessagePolicy", "FallbackToLogsOnError"}};
  if (p.native_sidecar && p.await) {
    c["startupProbe"] = httpProbe("/ready", p.ports.admin, p.startup_probe, true);
  }
  if (p.security_context.is_object() && !p.security_context.empty()) {
    c["securityContext"] = p.security_context;
  } else {
    json sc = {{"allowPrivilegeEscalation", false},
               {"readOnlyRootFilesystem", true},
               {"runAsNonRoot", true},
               {"runAsUser", p.uid},
               {"seccompProfile", {{"type", "RuntimeDefault"}}}};
    if (app.has_capabilities) {
      json caps = json::object();
      if (!app.cap_add.empty()) caps["add"] = app.cap_add;
      if (!app.cap_drop.empty()) caps["drop"] = app.cap_drop;
      sc["capabilities"] = caps.empty() ? json(nullptr) : caps;
    }
    if (p.gid >= 0) sc["runAsGroup"] = p.gid;
    c["securityContext"] = sc;
  }
  if (!p.native_sidecar && (p.await || p.wait_before_exit_seconds != 0)) {
    json lifecycle = json::object();
    if (p.await) {
      lifecycle["postStart"] = {{"exec",
                                 {{"command",
                                   {"/usr/lib/linkerd/linkerd-await", "--timeout=2m",
                                    "--port=" + helmNumber(p.ports.admin)}}}}};
    }
    if (p.wait_before_exit_seconds != 0) {
      lifecycle["preStop"] = {{"exec",
                               {{"command",
                                 {"/bin/sleep", go::formatFloat(static_cast<double>(
                                                    p.wait_before_exit_seconds))}}}}};
    }
    c["lifecycle"] = lifecycle;
  }
  json mounts = {{{"mountPath", kEndEntityDir}, {"name", "linkerd-identity-end-entity"}}};
  if (p.tracing.enabled)
    mounts.push_back({{"mountPath", kPodInfoDir}, {"name", "linkerd-podinfo"}});
  if (v.service_account_token_projection) {
    mounts.push_back({{"mountPath", kServiceAccountTokenDir}, {"name", "linkerd-identity-token"}});
  }
  if (app.sa_mount) mounts.push_back(*app.sa_mount);
  c["volumeMounts"] = mounts;
  if (p.native_sidecar) c["restartPolicy"] = "Always";
  return c;
}

json addOp(const std::string& path, json value) {
  json op = json::object();
  op.emplace("op", "add");
  op.emplace("path", path);
  op.emplace("value", std::move(value));
  return op;
}

bool emptyOrMissing(const json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return true;
  return (it->is_array() || it->is_object()) && it->empty();
}

bool parseIpv4(std::string_view s) {
  // netip.ParseAddr: four decimal fields, each 0-255, no leading zeros.
  int fields = 0;
  size_t i = 0;
  while (true) {
    size_t start = i;
    int value = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      value = value * 10 + (s[i] - '0');
      if (value > 255) return false;
      ++i;
    }
    const size_t len = i - start;
    if (len == 0 || len > 3 || (len > 1 && s[start] == '0')) return false;
    ++fields;
    if (i == s.size()) break;
    if (s[i] != '.' || fields == 4) return false;
    ++i;
  }
  return fields == 4;
}

}  // namespace

std::string escapePatchKey(std::string_view key) {
  std::string out;
  for (const char c : key) {
    if (c == '/') {
      out += "~1";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

bool isEmptyObjectMeta(const json& metadata) {
  if (metadata.is_null()) return true;
  if (!metadata.is_object()) return false;
  for (const auto& [key, value] : metadata.items()) {
    if (value.is_null()) continue;
    if (key == "annotations") {
      if (!value.empty()) return false;
    } else if (key == "name" || key == "generateName" || key == "namespace" || key == "selfLink" ||
               key == "uid" || key == "resourceVersion") {
      if (!value.is_string() || !value.get<std::string>().empty()) return false;
    } else if (key == "generation") {
      if (!value.is_number() || value.get<double>() != 0) return false;
    } else if (key == "creationTimestamp" || key == "deletionTimestamp" ||
               key == "deletionGracePeriodSeconds" || key == "labels" || key == "ownerReferences" ||
               key == "finalizers" || key == "managedFields") {
      // Any non-null value sets a non-zero field (an empty map or list is non-nil in Go).
      return false;
    }
  }
  return true;
}

bool isValidCidr(std::string_view cidr) {
  const size_t slash = cidr.find('/');
  if (slash == std::string_view::npos) return false;
  const std::string addr(cidr.substr(0, slash));
  const std::string_view mask = cidr.substr(slash + 1);
  int bits = 0;
  if (parseIpv4(addr)) {
    bits = 32;
  } else {
    if (addr.find('%') != std::string::npos) return false;  // zones are rejected
    unsigned char buf[16];
    if (inet_pton(AF_INET6, addr.c_str(), buf) != 1) return false;
    bits = 128;
  }
  // dtoi: decimal digits (leading zeros allowed), the whole rest of the string.
  if (mask.empty()) return false;
  long n = 0;
  for (const char c : mask) {
    if (c < '0' || c > '9') return false;
    n = n * 10 + (c - '0');
    if (n > 0xFFFFFF) return false;
  }
  return n <= bits;
}

core::Result<json> buildPodPatch(const PodPatchInput& in, std::vector<LogLine>* logs) {
  const Workload& w = *in.workload;
  const Values& v = *in.values;

  if (!v.cluster_networks.empty()) {
    std::string_view nets = v.cluster_networks;
    while (!nets.empty() && nets.front() == ',') nets.remove_prefix(1);  // strings.Trim(",")
    while (!nets.empty() && nets.back() == ',') nets.remove_suffix(1);
    for (const std::string& net : splitComma(nets)) {
      if (!isValidCidr(net)) {
        return core::Error{"cannot parse destination get networks: invalid CIDR address: " + net};
      }
    }
  }

  const std::string& prefix = w.template_pointer;
  const AppContainerInfo app = appContainerInfo(w.pod_spec);
  json ops = json::array();

  // injectPodAnnotations + injectObjectMeta.
  StringMap annotations = in.annotations;
  annotations[std::string(annotation::kProxyVersion)] =
      v.proxy.image.version.empty() ? v.linkerd_version : v.proxy.image.version;
  annotations[std::string(annotation::kTrustRootSha256)] = sha256Hex(in.trust_anchors_pem);

  if (isEmptyObjectMeta(w.pod_metadata)) ops.push_back(addOp(prefix + "/metadata", json::object()));
  if (w.pod_annotations.empty()) {
    ops.push_back(addOp(prefix + "/metadata/annotations", json::object()));
  }
  for (const auto& [k, val] : annotations) {  // std::map: sorted by key, like Go's range
    ops.push_back(addOp(prefix + "/metadata/annotations/" + escapePatchKey(k), val));
  }
  if (!in.labels.empty()) {
    if (w.pod_labels.empty()) ops.push_back(addOp(prefix + "/metadata/labels", json::object()));
    for (const auto& [k, val] : in.labels) {
      ops.push_back(addOp(prefix + "/metadata/labels/" + escapePatchKey(k), val));
    }
  }

  // injectPodSpec.
  const bool native = v.proxy.native_sidecar;
  int init_index = 0;  // $initIndex when native
  auto nextInitPath = [&]() {
    std::string path =
        prefix + "/spec/initContainers/" + (native ? std::to_string(init_index) : std::string("-"));
    ++init_index;
    return path;
  };
  if (emptyOrMissing(w.pod_spec, "volumes"))
    ops.push_back(addOp(prefix + "/spec/volumes", json::array()));
  if (emptyOrMissing(w.pod_spec, "initContainers")) {
    ops.push_back(addOp(prefix + "/spec/initContainers", json::array()));
  }
  if (!v.cni_enabled) {
    ops.push_back(addOp(prefix + "/spec/volumes/-",
                        {{"emptyDir", json::object()}, {"name", v.proxy_init.xt_mount_name}}));
    auto init = proxyInitContainer(v, app);
    if (!init.ok()) return init.error();
    ops.push_back(addOp(nextInitPath(), *init));
  } else {
    ops.push_back(addOp(nextInitPath(), networkValidatorContainer(v)));
  }

  auto debug = in.effective_annotations.find(std::string(annotation::kEnableDebugSidecar));
  if (debug != in.effective_annotations.end() && !debug->second.empty()) {
    auto enabled = go::parseBool(debug->second);
    if (!enabled.ok()) {
      if (logs != nullptr) {
        logs->push_back(
            {LogLine::Level::kWarning, "unrecognized value used for the " +
                                           std::string(annotation::kEnableDebugSidecar) +
                                           " annotation: " + debug->second});
      }
    } else if (*enabled) {
      if (logs != nullptr) logs->push_back({LogLine::Level::kInfo, "inject debug container"});
      ops.push_back(addOp(prefix + "/spec/containers/-", debugContainer(v)));
    }
  }

  ops.push_back(addOp(prefix + "/spec/volumes/-", {{"name", "linkerd-identity-end-entity"},
                                                   {"emptyDir", {{"medium", "Memory"}}}}));
  if (v.proxy.tracing.enabled) {
    ops.push_back(addOp(
        prefix + "/spec/volumes/-",
        {{"name", "linkerd-podinfo"},
         {"downwardAPI",
          {{"items", {{{"path", "labels"}, {"fieldRef", {{"fieldPath", "metadata.labels"}}}}}}}}}));
  }
  if (v.service_account_token_projection) {
    ops.push_back(
        addOp(prefix + "/spec/volumes/-", {{"name", "linkerd-identity-token"},
                                           {"projected",
                                            {{"sources",
                                              {{{"serviceAccountToken",
                                                 {{"audience", "identity.l5d.io"},
                                                  {"expirationSeconds", 86400},
                                                  {"path", "linkerd-identity-token"}}}}}}}}}));
  }
  auto proxy = proxyContainer(in, v, app);
  if (!proxy.ok()) return proxy.error();
  std::string proxy_path;
  if (native) {
    proxy_path = prefix + "/spec/initContainers/" + std::to_string(init_index);
  } else if (v.proxy.await) {
    proxy_path = prefix + "/spec/containers/0";
  } else {
    proxy_path = prefix + "/spec/containers/-";
  }
  ops.push_back(addOp(proxy_path, *proxy));
  return ops;
}

json buildOpaquePortsPatch(bool add_root_annotations, std::string_view ports) {
  // html/template escaping of the value (htmlReplacementTable for the attribute-free context).
  std::string escaped;
  for (const char c : ports) {
    switch (c) {
      case '\0':
        escaped += "\xEF\xBF\xBD";
        break;
      case '"':
        escaped += "&#34;";
        break;
      case '&':
        escaped += "&amp;";
        break;
      case '\'':
        escaped += "&#39;";
        break;
      case '+':
        escaped += "&#43;";
        break;
      case '<':
        escaped += "&lt;";
        break;
      case '>':
        escaped += "&gt;";
        break;
      default:
        escaped.push_back(c);
    }
  }
  json ops = json::array();
  if (add_root_annotations) ops.push_back(addOp("/metadata/annotations", json::object()));
  ops.push_back(addOp("/metadata/annotations/config.linkerd.io~1opaque-ports", escaped));
  return ops;
}

}  // namespace harness::injector::linkerd
