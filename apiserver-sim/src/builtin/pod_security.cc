// PodSecurity (kubernetes/kubernetes plugin/pkg/admission/security/podsecurity/admission.go,
// delegating to k8s.io/pod-security-admission admission/admission.go), validating only, on
// CREATE and UPDATE. What it does in a namespace whose pod-security.kubernetes.io/enforce,
// audit and warn labels are absent or "privileged" (kube-apiserver's default configuration:
// every level privileged, version latest), which is what the scenarios and a default cluster
// have:
//   * a Pod (not its ignored subresources exec, attach, binding, eviction, log, portforward,
//     proxy, status; an UPDATE only when isSignificantPodUpdate: the number of containers or an
//     image changed) is allowed with the audit annotation
//     pod-security.kubernetes.io/enforce-policy: privileged:latest
//     (ValidatePod's short-circuit returns sharedAllowedPrivilegedResponse, response.go; the
//     plugin prefixes the key with AuditAnnotationPrefix);
//   * pod controllers and namespaces are allowed without annotations (sharedAllowedResponse).
// Namespaces with a stricter level are not evaluated here (the policy checks of
// pod-security-admission/policy are not implemented): such requests get no annotation.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "plugins_internal.h"

namespace harness::sim::builtin_internal {
namespace {

using nlohmann::json;

constexpr std::string_view kEnforcePolicyAnnotation = "pod-security.kubernetes.io/enforce-policy";

bool ignoredPodSubresource(std::string_view subresource) {
  for (std::string_view ignored :
       {"exec", "attach", "binding", "eviction", "log", "portforward", "proxy", "status"}) {
    if (subresource == ignored) return true;
  }
  return false;
}

// Whether the namespace's labels leave enforce, audit and warn at "privileged"
// (PolicyToEvaluate, then Policy.FullyPrivileged; an invalid level is an error, not privileged).
bool fullyPrivileged(const json& ns) {
  const json* labels = nullptr;
  if (ns.contains("metadata") && ns["metadata"].is_object() && ns["metadata"].contains("labels")) {
    labels = &ns["metadata"]["labels"];
  }
  if (labels == nullptr || !labels->is_object()) return true;
  for (const char* mode : {"enforce", "audit", "warn"}) {
    const std::string key = std::string("pod-security.kubernetes.io/") + mode;
    if (auto it = labels->find(key); it != labels->end() && *it != "privileged") return false;
  }
  return true;
}

const json& containersOf(const json& pod, const char* field) {
  static const json kNone = json::array();
  if (!pod.is_object() || !pod.contains("spec") || !pod["spec"].is_object()) return kNone;
  auto it = pod["spec"].find(field);
  return it != pod["spec"].end() && it->is_array() ? *it : kNone;
}

// isSignificantPodUpdate: container counts, images, ephemeral containers added or changed.
bool significantPodUpdate(const json& pod, const json& old_pod) {
  for (const char* field : {"containers", "initContainers"}) {
    const json& now = containersOf(pod, field);
    const json& before = containersOf(old_pod, field);
    if (now.size() != before.size()) return true;
    for (std::size_t i = 0; i < now.size(); ++i) {
      if (now[i].value("image", json()) != before[i].value("image", json())) return true;
    }
  }
  const json& before = containersOf(old_pod, "ephemeralContainers");
  for (const auto& container : containersOf(pod, "ephemeralContainers")) {
    const json* old_container = nullptr;
    for (const auto& candidate : before) {
      if (candidate.value("name", "") == container.value("name", "")) old_container = &candidate;
    }
    if (old_container == nullptr ||
        container.value("image", json()) != old_container->value("image", json())) {
      return true;
    }
  }
  return false;
}

class PodSecurity final : public AdmissionPlugin {
 public:
  std::string_view name() const override { return "PodSecurity"; }
  bool mutating() const override { return false; }
  bool validating() const override { return true; }

  std::optional<core::Status> validate(const AdmissionAttributes& a,
                                       const PluginContext& context) const override {
    if (a.operation != "CREATE" && a.operation != "UPDATE") return std::nullopt;
    if (!isResource(a, "", "pods") || ignoredPodSubresource(a.subresource)) return std::nullopt;
    const auto ns = getObject(context, {"", "v1", "namespaces"}, "", a.namespace_name);
    // A missing namespace: NamespaceLifecycle has refused the request before.
    if (!ns || !fullyPrivileged(*ns) || !a.object) return std::nullopt;
    if (a.operation == "UPDATE" && a.old_object && !significantPodUpdate(*a.object, *a.old_object)) {
      return std::nullopt;
    }
    if (context.add_audit_annotation) {
      context.add_audit_annotation(std::string(kEnforcePolicyAnnotation), "privileged:latest");
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<AdmissionPlugin> makePodSecurity() { return std::make_unique<PodSecurity>(); }

}  // namespace harness::sim::builtin_internal
