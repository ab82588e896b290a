#include "harness/injector/linkerd/report.h"

#include "harness/injector/linkerd/annotations.h"

namespace harness::injector::linkerd {

namespace {

using nlohmann::json;

constexpr std::string_view kServiceAccountMountPath =
    "/var/run/secrets/kubernetes.io/serviceaccount";

std::string stringMember(const json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

bool boolMember(const json& obj, const char* key, bool* present) {
  *present = false;
  if (!obj.is_object()) return false;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_boolean()) return false;
  *present = true;
  return it->get<bool>();
}

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool isValidInjectValue(std::string_view v) {
  return v.empty() || v == "enabled" || v == "disabled" || v == "ingress";
}

bool isEnabling(std::string_view v) { return v == "enabled" || v == "ingress"; }

// report.go checkUDPPorts: regular containers only.
bool hasUdpPorts(const json& pod_spec) {
  auto it = pod_spec.find("containers");
  if (it == pod_spec.end() || !it->is_array()) return false;
  for (const auto& c : *it) {
    if (!c.is_object()) continue;
    auto ports = c.find("ports");
    if (ports == c.end() || !ports->is_array()) continue;
    for (const auto& p : *ports) {
      if (stringMember(p, "protocol") == "UDP") return true;
    }
  }
  return false;
}

}  // namespace

std::string_view reasonCode(Reason reason) {
  switch (reason) {
    case Reason::kHostNetworkEnabled:
      return "host_network_enabled";
    case Reason::kSidecarAlreadyExists:
      return "sidecar_already_exists";
    case Reason::kUnsupportedResource:
      return "unsupported_resource";
    case Reason::kInvalidInjectAnnotationAtNamespace:
      return "invalid_inject_annotation_at_ns";
    case Reason::kInvalidInjectAnnotationAtWorkload:
      return "invalid_inject_annotation_at_workload";
    case Reason::kInjectionDisableAnnotationPresent:
      return "injection_disable_annotation_present";
    case Reason::kInjectionEnableAnnotationAbsent:
      return "injection_enable_annotation_absent";
    case Reason::kDisabledAutomountServiceAccountToken:
      return "disabled_automount_service_account_token_account";
    case Reason::kUdpPortsEnabled:
      return "udp_ports_enabled";
  }
  return "";
}

std::string_view reasonText(Reason reason) {
  switch (reason) {
    case Reason::kHostNetworkEnabled:
      return "hostNetwork is enabled";
    case Reason::kSidecarAlreadyExists:
      return "pod has a sidecar injected already";
    case Reason::kUnsupportedResource:
      return "this resource kind is unsupported";
    case Reason::kInvalidInjectAnnotationAtNamespace:
      return R"(invalid value for annotation "linkerd.io/inject" at namespace)";
    case Reason::kInvalidInjectAnnotationAtWorkload:
      return R"(invalid value for annotation "linkerd.io/inject" at workload)";
    case Reason::kInjectionDisableAnnotationPresent:
      return R"(pod has the annotation "linkerd.io/inject:disabled")";
    case Reason::kInjectionEnableAnnotationAbsent:
      return R"(neither the namespace nor the pod have the annotation "linkerd.io/inject:enabled")";
    case Reason::kDisabledAutomountServiceAccountToken:
      return R"(automountServiceAccountToken set to "false", with )"
             R"(Values.identity.serviceAccountTokenProjection set to "false")";
    case Reason::kUdpPortsEnabled:
      return "UDP port(s) configured on pod spec";
  }
  return "";
}

std::vector<Reason> Report::reasons() const {
  std::vector<Reason> out;
  if (host_network) out.push_back(Reason::kHostNetworkEnabled);
  if (sidecar) out.push_back(Reason::kSidecarAlreadyExists);
  if (unsupported_resource) out.push_back(Reason::kUnsupportedResource);
  if (inject_disabled && inject_disabled_reason) out.push_back(*inject_disabled_reason);
  if (!automount_service_account_token)
    out.push_back(Reason::kDisabledAutomountServiceAccountToken);
  return out;
}

std::string Report::reasonCodes() const {
  std::string out;
  for (const Reason r : reasons()) {
    if (!out.empty()) out += ",";
    out += reasonCode(r);
  }
  return out;
}

std::string Report::readableReasons() const {
  std::string out;
  for (const Reason r : reasons()) {
    if (!out.empty()) out += ", ";
    out += reasonText(r);
  }
  return out;
}

bool hasExistingSidecars(const json& pod_spec) {
  for (const json* c : allContainers(pod_spec)) {
    const std::string image = stringMember(*c, "image");
    const std::string name = stringMember(*c, "name");
    if (startsWith(image, "cr.l5d.io/linkerd/proxy:") ||
        startsWith(image, "gcr.io/istio-release/proxyv2:") || name == "linkerd-proxy" ||
        name == "istio-proxy") {
      return true;
    }
  }
  auto init = pod_spec.find("initContainers");
  if (init != pod_spec.end() && init->is_array()) {
    for (const auto& c : *init) {
      const std::string image = stringMember(c, "image");
      const std::string name = stringMember(c, "name");
      if (startsWith(image, "cr.l5d.io/linkerd/proxy-init:") ||
          startsWith(image, "gcr.io/istio-release/proxy_init:") || name == "linkerd-init" ||
          name == "istio-init") {
        return true;
      }
    }
  }
  return false;
}

std::optional<json> serviceAccountVolumeMount(const json& pod_spec) {
  auto containers = pod_spec.find("containers");
  if (containers == pod_spec.end() || !containers->is_array() || containers->empty()) {
    return std::nullopt;
  }
  const json& first = containers->front();
  auto mounts = first.find("volumeMounts");
  if (!first.is_object() || mounts == first.end() || !mounts->is_array()) return std::nullopt;
  for (const auto& m : *mounts) {
    if (stringMember(m, "mountPath") == kServiceAccountMountPath) return m;
  }
  return std::nullopt;
}

Report makeReport(const Workload& workload, std::string_view namespace_inject,
                  bool service_account_token_projection) {
  Report r;
  r.kind = workload.kind;
  r.name = workload.name;
  if (workload.isPod() && r.name.empty()) r.name = workload.generate_name;
  if (!workload.has_pod_template) {
    r.unsupported_resource = true;
    return r;
  }
  // disabledByAnnotation, webhook origin.
  const auto it = workload.pod_annotations.find(std::string(annotation::kInject));
  const std::string pod_inject = it == workload.pod_annotations.end() ? "" : it->second;
  if (!isValidInjectValue(namespace_inject)) {
    r.inject_disabled = true;
    r.inject_disabled_reason = Reason::kInvalidInjectAnnotationAtNamespace;
  } else if (!isValidInjectValue(pod_inject)) {
    r.inject_disabled = true;
    r.inject_disabled_reason = Reason::kInvalidInjectAnnotationAtWorkload;
  } else if (isEnabling(namespace_inject)) {
    if (pod_inject == "disabled") {
      r.inject_disabled = true;
      r.inject_disabled_reason = Reason::kInjectionDisableAnnotationPresent;
      r.annotation_at = kAnnotationAtWorkload;
    } else {
      r.annotation_at = kAnnotationAtNamespace;
    }
  } else if (!isEnabling(pod_inject)) {
    r.inject_disabled = true;
    r.inject_disabled_reason = Reason::kInjectionEnableAnnotationAbsent;
  } else {
    r.annotation_at = kAnnotationAtWorkload;
  }

  const json& spec = workload.pod_spec;
  bool present = false;
  r.host_network = boolMember(spec, "hostNetwork", &present);
  r.sidecar = hasExistingSidecars(spec);
  r.udp = hasUdpPorts(spec);
  if (!service_account_token_projection) {
    const bool automount = boolMember(spec, "automountServiceAccountToken", &present);
    if (present && !automount) r.automount_service_account_token = false;
    if (!serviceAccountVolumeMount(spec)) r.automount_service_account_token = false;
  }
  return r;
}

}  // namespace harness::injector::linkerd
