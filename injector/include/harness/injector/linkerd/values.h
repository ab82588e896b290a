#pragma once

// The Helm values of linkerd-control-plane as the proxy injector reads them from the
// linkerd-config ConfigMap (`values` key), limited to what the injection patch uses.
// Defaults follow charts/linkerd-control-plane/values.yaml at the reference commit
// (see docs/linkerd-injector.md): native sidecars on (edge-26.5.2+),
// iptablesMode nft, proxy-init running from the proxy image.

#include <cstdint>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::injector::linkerd {

// The release whose chart defaults these are (the chart's `linkerdVersion` placeholder is
// replaced by the release tag when the chart is built).
inline constexpr char kDefaultLinkerdVersion[] = "edge-26.8.3";

struct Image {
  std::string name;
  std::string pull_policy;
  std::string version;
};

struct Constraints {
  std::string limit;
  std::string request;
};

struct Resources {
  Constraints cpu;
  Constraints memory;
  Constraints ephemeral_storage;

  [[nodiscard]] bool empty() const;
};

struct ProbeSettings {
  std::int64_t initial_delay_seconds = 0;
  std::int64_t timeout_seconds = 0;
  std::int64_t period_seconds = 0;
  std::int64_t failure_threshold = 0;
};

struct Ports {
  std::int32_t admin = 4191;
  std::int32_t control = 4190;
  std::int32_t inbound = 4143;
  std::int32_t outbound = 4140;
};

struct Workers {
  std::int64_t minimum = 1;
  std::int64_t maximum = 0;  // 0: unset
  std::optional<double> maximum_cpu_ratio;
};

struct Tracing {
  bool enabled = false;
  std::string collector_endpoint;
  std::string mesh_identity_service_account;
  std::string mesh_identity_namespace;
};

struct ProxyValues {
  Image image{"cr.l5d.io/linkerd/proxy", "", ""};
  std::string log_level = "warn,linkerd=info,hickory=error";
  std::string log_format = "plain";
  std::string log_http_headers = "off";
  Ports ports;
  std::int64_t cores = 0;  // deprecated fixed core count; 0 means "use runtime.workers"
  Workers workers;
  Resources resources;
  std::int64_t uid = 2102;
  std::int64_t gid = -1;
  std::uint64_t wait_before_exit_seconds = 0;
  bool await = true;
  bool native_sidecar = true;
  std::string require_identity_on_inbound_ports;
  std::string require_tls_on_inbound_ports;
  std::string opaque_ports = "25,587,3306,4444,5432,6379,9300,11211";
  std::string shutdown_grace_period;
  std::string default_inbound_policy = "all-unauthenticated";
  std::string outbound_connect_timeout = "1000ms";
  std::string inbound_connect_timeout = "100ms";
  std::string outbound_discovery_cache_unused_timeout = "5s";
  std::string inbound_discovery_cache_unused_timeout = "90s";
  bool disable_outbound_protocol_detect_timeout = false;
  bool disable_inbound_protocol_detect_timeout = false;
  bool enable_external_profiles = false;
  bool enable_shutdown_endpoint = false;
  bool metrics_hostname_labels = false;
  std::string access_log;
  ProbeSettings liveness_probe{10, 1, 0, 0};
  ProbeSettings readiness_probe{2, 1, 0, 0};
  ProbeSettings startup_probe{0, 0, 1, 120};
  std::string control_stream_initial_timeout = "3s";
  std::string control_stream_idle_timeout = "5m";
  std::string control_stream_lifetime = "1h";
  // proxy.inbound / proxy.outbound: {scope: {protocol: {param: value}}}, rendered as
  // LINKERD2_PROXY_<DIR>_<SCOPE>_<PROTO>_<PARAM> env vars in sorted key order.
  nlohmann::json inbound = {
      {"server", {{"http2", {{"keepAliveInterval", "10s"}, {"keepAliveTimeout", "3s"}}}}}};
  nlohmann::json outbound = {
      {"server", {{"http2", {{"keepAliveInterval", "10s"}, {"keepAliveTimeout", "3s"}}}}}};
  nlohmann::json additional_env = nlohmann::json::array();     // []EnvVar
  nlohmann::json experimental_env = nlohmann::json::array();   // []EnvVar
  nlohmann::json security_context = nlohmann::json::object();  // replaces the default if set
  Tracing tracing;

  // Set by annotation overrides, never read from the ConfigMap.
  bool is_ingress = false;
  bool is_gateway = false;
  std::string pod_inbound_ports;
};

struct ProxyInitValues {
  std::string iptables_mode = "nft";
  std::string ignore_inbound_ports = "4567,4568";
  std::string ignore_outbound_ports = "4567,4568";
  std::string skip_subnets;
  std::string log_level;
  std::string log_format;
  std::int64_t close_wait_timeout_secs = 0;
  bool privileged = false;
  bool run_as_root = false;
  std::int64_t run_as_user = 65534;
  std::int64_t run_as_group = 65534;
  std::string xt_mount_path = "/run";
  std::string xt_mount_name = "linkerd-proxy-init-xtables-lock";
};

struct NetworkValidatorValues {
  std::string log_level = "debug";
  std::string log_format = "plain";
  std::string connect_addr;
  std::string listen_addr;
  std::string timeout = "10s";
  bool enable_security_context = true;
};

struct Values {
  std::string cluster_domain = "cluster.local";
  std::string cluster_networks = "10.0.0.0/8,100.64.0.0/10,172.16.0.0/12,192.168.0.0/16,fd00::/8";
  std::string identity_trust_domain;  // empty: clusterDomain
  std::string image_pull_policy = "IfNotPresent";
  std::string linkerd_version = kDefaultLinkerdVersion;
  bool cni_enabled = false;
  bool disable_ipv6 = true;
  bool service_account_token_projection = true;  // identity.serviceAccountTokenProjection
  ProxyValues proxy;
  ProxyInitValues proxy_init;
  NetworkValidatorValues network_validator;
  Image debug_image{"cr.l5d.io/linkerd/debug", "", ""};  // debugContainer.image
};

// Reads the JSON form of the ConfigMap's `values` YAML on top of the chart defaults. Unknown
// keys are ignored and null keeps the default, as Go's json decoding does; a value of the
// wrong type is an error worded like Go's:
//   error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go struct
//   field Ports.proxy.ports.admin of type int32
// (Upstream decodes into a zero Values, not the chart defaults; the ConfigMap always carries
// the full rendered values, so starting from the defaults only matters for partial inputs.)
core::Result<Values> parseValues(const nlohmann::json& values);

}  // namespace harness::injector::linkerd
