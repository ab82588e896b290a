#include "harness/injector/linkerd/values.h"

#include "go_decode.h"

// Field names and Go types follow pkg/charts/linkerd2/values.go; defaults follow
// charts/linkerd-control-plane/values.yaml (with the edge-26.x changes listed in
// docs/linkerd-injector.md: nativeSidecar true, iptablesMode nft).

namespace harness::injector::linkerd {

namespace {

using detail::GoField;
using nlohmann::json;

// One Go struct being decoded: its JSON object, its Go type name and its path.
class StructReader {
 public:
  StructReader(const json& object, std::string go_struct, GoField at)
      : object_(object), go_struct_(std::move(go_struct)), at_(std::move(at)) {}

  [[nodiscard]] GoField field(std::string_view key) const { return at_.child(go_struct_, key); }

  const json* find(std::string_view key) const {
    auto it = object_.find(std::string(key));
    if (it == object_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  core::Result<void> str(std::string_view key, std::string* dst) const {
    const json* v = find(key);
    if (v == nullptr) return {};
    HARNESS_TRY(detail::checkString(*v, field(key)));
    *dst = v->get<std::string>();
    return {};
  }

  core::Result<void> boolean(std::string_view key, bool* dst) const {
    const json* v = find(key);
    if (v == nullptr) return {};
    HARNESS_TRY(detail::checkBool(*v, field(key)));
    *dst = v->get<bool>();
    return {};
  }

  template <class Int>
  core::Result<void> integer(std::string_view key, std::string_view go_type, Int* dst) const {
    const json* v = find(key);
    if (v == nullptr) return {};
    HARNESS_TRY(detail::checkInteger(*v, field(key), go_type));
    *dst = v->get<Int>();
    return {};
  }

  core::Result<void> floating(std::string_view key, std::optional<double>* dst) const {
    auto it = object_.find(std::string(key));
    if (it == object_.end()) return {};
    if (it->is_null()) {  // a nil *float64
      dst->reset();
      return {};
    }
    HARNESS_TRY(detail::checkFloat(*it, field(key)));
    *dst = it->get<double>();
    return {};
  }

  // A nested struct; returns nullptr (and no error) when absent or null.
  core::Result<const json*> object(std::string_view key, std::string_view go_type) const {
    const json* v = find(key);
    if (v == nullptr) return static_cast<const json*>(nullptr);
    HARNESS_TRY(detail::checkObject(*v, field(key), go_type));
    return v;
  }

  [[nodiscard]] StructReader nested(const json& object, std::string_view key,
                                    std::string go_type) const {
    GoField f = field(key);
    return StructReader(object, std::move(go_type), std::move(f));
  }

 private:
  const json& object_;
  std::string go_struct_;
  GoField at_;
};

core::Result<void> readImage(const StructReader& parent, std::string_view key, Image* image) {
  auto obj = parent.object(key, "linkerd2.Image");
  if (!obj.ok()) return obj.error();
  if (*obj == nullptr) return {};
  StructReader r = parent.nested(**obj, key, "Image");
  HARNESS_TRY(r.str("name", &image->name));
  HARNESS_TRY(r.str("pullPolicy", &image->pull_policy));
  HARNESS_TRY(r.str("version", &image->version));
  return {};
}

core::Result<void> readProbe(const StructReader& parent, std::string_view key,
                             ProbeSettings* probe) {
  auto obj = parent.object(key, "linkerd2.Probe");
  if (!obj.ok()) return obj.error();
  if (*obj == nullptr) return {};
  StructReader r = parent.nested(**obj, key, "Probe");
  HARNESS_TRY(r.integer("initialDelaySeconds", "int32", &probe->initial_delay_seconds));
  HARNESS_TRY(r.integer("timeoutSeconds", "int32", &probe->timeout_seconds));
  HARNESS_TRY(r.integer("periodSeconds", "int32", &probe->period_seconds));
  HARNESS_TRY(r.integer("failureThreshold", "int32", &probe->failure_threshold));
  return {};
}

core::Result<void> readResources(const StructReader& parent, Resources* res) {
  auto obj = parent.object("resources", "linkerd2.Resources");
  if (!obj.ok()) return obj.error();
  if (*obj == nullptr) return {};
  StructReader r = parent.nested(**obj, "resources", "Resources");
  const std::pair<const char*, Constraints*> parts[] = {
      {"cpu", &res->cpu}, {"memory", &res->memory}, {"ephemeral-storage", &res->ephemeral_storage}};
  for (const auto& [key, constraints] : parts) {
    auto c = r.object(key, "linkerd2.Constraints");
    if (!c.ok()) return c.error();
    if (*c == nullptr) continue;
    StructReader cr = r.nested(**c, key, "Constraints");
    HARNESS_TRY(cr.str("limit", &constraints->limit));
    HARNESS_TRY(cr.str("request", &constraints->request));
  }
  return {};
}

// []corev1.EnvVar: objects with a string name, a string value and an object valueFrom.
core::Result<void> readEnvList(const StructReader& parent, std::string_view key, json* dst) {
  const json* v = parent.find(key);
  if (v == nullptr) return {};
  const GoField f = parent.field(key);
  HARNESS_TRY(detail::checkArray(*v, f, "[]v1.EnvVar"));
  for (const auto& item : *v) {
    HARNESS_TRY(detail::checkObject(item, f, "v1.EnvVar"));
    if (item.is_null()) continue;
    const GoField name = f.child("EnvVar", "name");
    if (auto it = item.find("name"); it != item.end()) HARNESS_TRY(detail::checkString(*it, name));
    if (auto it = item.find("value"); it != item.end()) {
      HARNESS_TRY(detail::checkString(*it, f.child("EnvVar", "value")));
    }
    if (auto it = item.find("valueFrom"); it != item.end()) {
      HARNESS_TRY(detail::checkObject(*it, f.child("EnvVar", "valueFrom"), "v1.EnvVarSource"));
    }
  }
  *dst = *v;
  return {};
}

// proxy.inbound / proxy.outbound: map[string]map[string]map[string]interface{}.
core::Result<void> readProxyParams(const StructReader& parent, std::string_view key, json* dst) {
  const json* v = parent.find(key);
  if (v == nullptr) return {};
  const GoField f = parent.field(key);
  HARNESS_TRY(detail::checkObject(*v, f, "linkerd2.ProxyParams"));
  for (const auto& [scope, protos] : v->items()) {
    HARNESS_TRY(detail::checkObject(protos, f, "linkerd2.ProxyScopeParams"));
    if (protos.is_null()) continue;
    for (const auto& [proto, params] : protos.items()) {
      HARNESS_TRY(detail::checkObject(params, f, "linkerd2.ProxyProtoParams"));
    }
  }
  *dst = *v;
  return {};
}

core::Result<void> readProxy(const StructReader& top, ProxyValues* p) {
  auto obj = top.object("proxy", "linkerd2.Proxy");
  if (!obj.ok()) return obj.error();
  if (*obj == nullptr) return {};
  StructReader r = top.nested(**obj, "proxy", "Proxy");
  HARNESS_TRY(readImage(r, "image", &p->image));
  HARNESS_TRY(r.str("logLevel", &p->log_level));
  HARNESS_TRY(r.str("logFormat", &p->log_format));
  HARNESS_TRY(r.str("logHTTPHeaders", &p->log_http_headers));
  if (auto ports = r.object("ports", "linkerd2.Ports"); !ports.ok()) {
    return ports.error();
  } else if (*ports != nullptr) {
    StructReader pr = r.nested(**ports, "ports", "Ports");
    HARNESS_TRY(pr.integer("admin", "int32", &p->ports.admin));
    HARNESS_TRY(pr.integer("control", "int32", &p->ports.control));
    HARNESS_TRY(pr.integer("inbound", "int32", &p->ports.inbound));
    HARNESS_TRY(pr.integer("outbound", "int32", &p->ports.outbound));
  }
  HARNESS_TRY(r.integer("cores", "int64", &p->cores));
  if (auto runtime = r.object("runtime", "linkerd2.ProxyRuntime"); !runtime.ok()) {
    return runtime.error();
  } else if (*runtime != nullptr) {
    StructReader rr = r.nested(**runtime, "runtime", "ProxyRuntime");
    auto workers = rr.object("workers", "linkerd2.RuntimeWorkers");
    if (!workers.ok()) return workers.error();
    if (*workers != nullptr) {
      StructReader wr = rr.nested(**workers, "workers", "RuntimeWorkers");
      HARNESS_TRY(wr.integer("minimum", "int64", &p->workers.minimum));
      HARNESS_TRY(wr.integer("maximum", "int64", &p->workers.maximum));
      HARNESS_TRY(wr.floating("maximumCPURatio", &p->workers.maximum_cpu_ratio));
    }
  }
  HARNESS_TRY(readResources(r, &p->resources));
  HARNESS_TRY(r.integer("uid", "int64", &p->uid));
  HARNESS_TRY(r.integer("gid", "int64", &p->gid));
  HARNESS_TRY(r.integer("waitBeforeExitSeconds", "uint64", &p->wait_before_exit_seconds));
  HARNESS_TRY(r.boolean("await", &p->await));
  HARNESS_TRY(r.boolean("nativeSidecar", &p->native_sidecar));
  HARNESS_TRY(r.str("requireIdentityOnInboundPorts", &p->require_identity_on_inbound_ports));
  HARNESS_TRY(r.str("requireTLSOnInboundPorts", &p->require_tls_on_inbound_ports));
  HARNESS_TRY(r.str("opaquePorts", &p->opaque_ports));
  HARNESS_TRY(r.str("shutdownGracePeriod", &p->shutdown_grace_period));
  HARNESS_TRY(r.str("defaultInboundPolicy", &p->default_inbound_policy));
  HARNESS_TRY(r.str("outboundConnectTimeout", &p->outbound_connect_timeout));
  HARNESS_TRY(r.str("inboundConnectTimeout", &p->inbound_connect_timeout));
  HARNESS_TRY(
      r.str("outboundDiscoveryCacheUnusedTimeout", &p->outbound_discovery_cache_unused_timeout));
  HARNESS_TRY(
      r.str("inboundDiscoveryCacheUnusedTimeout", &p->inbound_discovery_cache_unused_timeout));
  HARNESS_TRY(r.boolean("disableOutboundProtocolDetectTimeout",
                        &p->disable_outbound_protocol_detect_timeout));
  HARNESS_TRY(r.boolean("disableInboundProtocolDetectTimeout",
                        &p->disable_inbound_protocol_detect_timeout));
  HARNESS_TRY(r.boolean("enableExternalProfiles", &p->enable_external_profiles));
  HARNESS_TRY(r.boolean("enableShutdownEndpoint", &p->enable_shutdown_endpoint));
  HARNESS_TRY(r.str("accessLog", &p->access_log));
  if (auto metrics = r.object("metrics", "linkerd2.ProxyMetrics"); !metrics.ok()) {
    return metrics.error();
  } else if (*metrics != nullptr) {
    HARNESS_TRY(r.nested(**metrics, "metrics", "ProxyMetrics")
                    .boolean("hostnameLabels", &p->metrics_hostname_labels));
  }
  HARNESS_TRY(readProbe(r, "livenessProbe", &p->liveness_probe));
  HARNESS_TRY(readProbe(r, "readinessProbe", &p->readiness_probe));
  HARNESS_TRY(readProbe(r, "startupProbe", &p->startup_probe));
  if (auto control = r.object("control", "linkerd2.ProxyControl"); !control.ok()) {
    return control.error();
  } else if (*control != nullptr) {
    StructReader cr = r.nested(**control, "control", "ProxyControl");
    auto streams = cr.object("streams", "linkerd2.ProxyControlStreams");
    if (!streams.ok()) return streams.error();
    if (*streams != nullptr) {
      StructReader sr = cr.nested(**streams, "streams", "ProxyControlStreams");
      HARNESS_TRY(sr.str("initialTimeout", &p->control_stream_initial_timeout));
      HARNESS_TRY(sr.str("idleTimeout", &p->control_stream_idle_timeout));
      HARNESS_TRY(sr.str("lifetime", &p->control_stream_lifetime));
    }
  }
  HARNESS_TRY(readProxyParams(r, "inbound", &p->inbound));
  HARNESS_TRY(readProxyParams(r, "outbound", &p->outbound));
  HARNESS_TRY(readEnvList(r, "additionalEnv", &p->additional_env));
  HARNESS_TRY(readEnvList(r, "experimentalEnv", &p->experimental_env));
  if (auto sc = r.object("securityContext", "v1.SecurityContext"); !sc.ok()) {
    return sc.error();
  } else if (*sc != nullptr) {
    p->security_context = **sc;
  }
  if (auto tracing = r.object("tracing", "linkerd2.Tracing"); !tracing.ok()) {
    return tracing.error();
  } else if (*tracing != nullptr) {
    StructReader tr = r.nested(**tracing, "tracing", "Tracing");
    HARNESS_TRY(tr.boolean("enabled", &p->tracing.enabled));
    auto collector = tr.object("collector", "linkerd2.TracingCollector");
    if (!collector.ok()) return collector.error();
    if (*collector != nullptr) {
      StructReader cr = tr.nested(**collector, "collector", "TracingCollector");
      HARNESS_TRY(cr.str("endpoint", &p->tracing.collector_endpoint));
      auto identity = cr.object("meshIdentity", "linkerd2.MeshIdentity");
      if (!identity.ok()) return identity.error();
      if (*identity != nullptr) {
        StructReader ir = cr.nested(**identity, "meshIdentity", "MeshIdentity");
        HARNESS_TRY(ir.str("serviceAccountName", &p->tracing.mesh_identity_service_account));
        HARNESS_TRY(ir.str("namespace", &p->tracing.mesh_identity_namespace));
      }
    }
  }
  return {};
}

core::Result<void> readProxyInit(const StructReader& top, ProxyInitValues* p) {
  auto obj = top.object("proxyInit", "linkerd2.ProxyInit");
  if (!obj.ok()) return obj.error();
  if (*obj == nullptr) return {};
  StructReader r = top.nested(**obj, "proxyInit", "ProxyInit");
  HARNESS_TRY(r.str("iptablesMode", &p->iptables_mode));
  HARNESS_TRY(r.str("ignoreInboundPorts", &p->ignore_inbound_ports));
  HARNESS_TRY(r.str("ignoreOutboundPorts", &p->ignore_outbound_ports));
  HARNESS_TRY(r.str("skipSubnets", &p->skip_subnets));
  HARNESS_TRY(r.str("logLevel", &p->log_level));
  HARNESS_TRY(r.str("logFormat", &p->log_format));
  HARNESS_TRY(r.integer("closeWaitTimeoutSecs", "int64", &p->close_wait_timeout_secs));
  HARNESS_TRY(r.boolean("privileged", &p->privileged));
  HARNESS_TRY(r.boolean("runAsRoot", &p->run_as_root));
  HARNESS_TRY(r.integer("runAsUser", "int64", &p->run_as_user));
  HARNESS_TRY(r.integer("runAsGroup", "int64", &p->run_as_group));
  auto xt = r.object("xtMountPath", "linkerd2.VolumeMountPath");
  if (!xt.ok()) return xt.error();
  if (*xt != nullptr) {
    StructReader xr = r.nested(**xt, "xtMountPath", "VolumeMountPath");
    HARNESS_TRY(xr.str("mountPath", &p->xt_mount_path));
    HARNESS_TRY(xr.str("name", &p->xt_mount_name));
  }
  return {};
}

core::Result<void> readNetworkValidator(const StructReader& top, NetworkValidatorValues* n) {
  auto obj = top.object("networkValidator", "linkerd2.NetworkValidator");
  if (!obj.ok()) return obj.error();
  if (*obj == nullptr) return {};
  StructReader r = top.nested(**obj, "networkValidator", "NetworkValidator");
  HARNESS_TRY(r.str("logLevel", &n->log_level));
  HARNESS_TRY(r.str("logFormat", &n->log_format));
  HARNESS_TRY(r.str("connectAddr", &n->connect_addr));
  HARNESS_TRY(r.str("listenAddr", &n->listen_addr));
  HARNESS_TRY(r.str("timeout", &n->timeout));
  HARNESS_TRY(r.boolean("enableSecurityContext", &n->enable_security_context));
  return {};
}

}  // namespace

bool Resources::empty() const {
  return cpu.limit.empty() && cpu.request.empty() && memory.limit.empty() &&
         memory.request.empty() && ephemeral_storage.limit.empty() &&
         ephemeral_storage.request.empty();
}

core::Result<Values> parseValues(const json& values) {
  Values out;
  if (values.is_null()) return out;
  HARNESS_TRY(detail::checkObject(values, GoField{}, "linkerd2.Values"));
  StructReader top(values, "Values", GoField{});
  HARNESS_TRY(top.str("clusterDomain", &out.cluster_domain));
  HARNESS_TRY(top.str("clusterNetworks", &out.cluster_networks));
  HARNESS_TRY(top.str("identityTrustDomain", &out.identity_trust_domain));
  HARNESS_TRY(top.str("imagePullPolicy", &out.image_pull_policy));
  HARNESS_TRY(top.str("linkerdVersion", &out.linkerd_version));
  HARNESS_TRY(top.boolean("cniEnabled", &out.cni_enabled));
  HARNESS_TRY(top.boolean("disableIPv6", &out.disable_ipv6));
  if (auto identity = top.object("identity", "linkerd2.Identity"); !identity.ok()) {
    return identity.error();
  } else if (*identity != nullptr) {
    HARNESS_TRY(
        top.nested(**identity, "identity", "Identity")
            .boolean("serviceAccountTokenProjection", &out.service_account_token_projection));
  }
  HARNESS_TRY(readProxy(top, &out.proxy));
  HARNESS_TRY(readProxyInit(top, &out.proxy_init));
  HARNESS_TRY(readNetworkValidator(top, &out.network_validator));
  if (auto debug = top.object("debugContainer", "linkerd2.DebugContainer"); !debug.ok()) {
    return debug.error();
  } else if (*debug != nullptr) {
    HARNESS_TRY(readImage(top.nested(**debug, "debugContainer", "DebugContainer"), "image",
                          &out.debug_image));
  }
  return out;
}

}  // namespace harness::injector::linkerd
