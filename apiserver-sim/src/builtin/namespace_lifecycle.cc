// NamespaceLifecycle (staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/
// admission.go): a mutating plugin (Admit) for CREATE, UPDATE and DELETE.
//   * deleting default, kube-system or kube-public -> 403 "this namespace may not be deleted";
//   * requests on Namespaces themselves, cluster-scoped resources, deletions and
//     localsubjectaccessreviews pass;
//   * a missing namespace -> the 404 of the namespace lookup: namespaces "<ns>" not found;
//   * CREATE in a Terminating namespace -> 403 "unable to create new content in namespace <ns>
//     because it is being terminated", with a NamespaceTerminating cause.
// The informer-cache wait and live-lookup retries do not exist here: the store is consulted
// directly. Without a get_object function every namespace is taken to exist.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "json_access.h"
#include "plugins_internal.h"

namespace harness::sim::builtin_internal {
namespace {

class NamespaceLifecycle final : public AdmissionPlugin {
 public:
  std::string_view name() const override { return "NamespaceLifecycle"; }
  bool mutating() const override { return true; }
  bool validating() const override { return false; }

  std::optional<core::Status> admit(AdmissionAttributes& a,
                                    const PluginContext& context) const override {
    if (a.operation != kOperationCreate && a.operation != kOperationUpdate &&
        a.operation != kOperationDelete) {
      return std::nullopt;
    }
    const bool is_namespace = isKind(a, "", "Namespace");
    if (a.operation == kOperationDelete && is_namespace &&
        (a.name == "default" || a.name == "kube-system" || a.name == "kube-public")) {
      return core::newForbidden({a.resource.group, a.resource.resource}, a.name,
                                "this namespace may not be deleted");
    }
    if (a.namespace_name.empty() && !is_namespace) return std::nullopt;
    if (is_namespace) return std::nullopt;
    if (a.operation == kOperationDelete) return std::nullopt;
    if (isResource(a, "authorization.k8s.io", "localsubjectaccessreviews")) return std::nullopt;
    if (!context.get_object) return std::nullopt;

    auto ns = context.get_object({"", "v1", "namespaces"}, "", a.namespace_name);
    if (!ns) return core::newNotFound({"", "namespaces"}, a.namespace_name);
    if (a.operation != kOperationCreate) return std::nullopt;
    const nlohmann::json* status = objectMember(*ns, "status");
    if (status == nullptr || stringMember(*status, "phase") != "Terminating") return std::nullopt;
    core::Status forbidden = admissionForbidden(
        a, "unable to create new content in namespace " + a.namespace_name +
               " because it is being terminated");
    if (!forbidden.details) forbidden.details = core::StatusDetails{};
    forbidden.details->causes.push_back(
        {"NamespaceTerminating", "namespace " + a.namespace_name + " is being terminated",
         "metadata.namespace"});
    return forbidden;
  }
};

}  // namespace

std::unique_ptr<AdmissionPlugin> makeNamespaceLifecycle() {
  return std::make_unique<NamespaceLifecycle>();
}

}  // namespace harness::sim::builtin_internal
