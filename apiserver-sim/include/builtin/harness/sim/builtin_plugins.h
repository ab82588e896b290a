#pragma once

// The in-tree admission plugins of kube-apiserver that matter to a sidecar injector
// (docs/admission-chain.md §1.1-§1.2, §6): they run in AllOrderedPlugins order, the mutating ones
// before the mutating webhooks and again in the reinvocation round, the validating ones before
// the validating webhooks. Each acts only on the resources and operations its upstream code
// does, with upstream's rejection texts:
//   NamespaceLifecycle        apiserver pkg/admission/plugin/namespace/lifecycle/admission.go
//   LimitRanger               plugin/pkg/admission/limitranger/admission.go
//   ServiceAccount            plugin/pkg/admission/serviceaccount/admission.go
//   AlwaysPullImages          plugin/pkg/admission/alwayspullimages/admission.go
//   Priority                  plugin/pkg/admission/priority/admission.go
//   DefaultTolerationSeconds  plugin/pkg/admission/defaulttolerationseconds/admission.go
//   DefaultStorageClass       plugin/pkg/admission/storage/storageclass/setdefault/admission.go
//   StorageObjectInUseProtection
//                             plugin/pkg/admission/storage/storageobjectinuseprotection/admission.go
//   TaintNodesByCondition     plugin/pkg/admission/nodetaint/admission.go
//   PodSecurity               plugin/pkg/admission/security/podsecurity/admission.go and
//                             k8s.io/pod-security-admission admission/admission.go (the
//                             privileged namespace only: see pod_security.cc)
//   AlwaysDeny                plugin/pkg/admission/deny/admission.go
// Plugins work on the versioned JSON of AdmissionAttributes::object (upstream works on the
// internal object; the JSON they produce is what the conversion back to the version gives).

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/object.h"
#include "harness/core/result.h"
#include "harness/core/status.h"
#include "harness/sim/attributes.h"

namespace harness::sim {

struct PluginContext {
  // Store lookup (ServiceAccounts, PriorityClasses, Namespaces...). nullopt = not found.
  std::function<std::optional<nlohmann::json>(const core::GroupVersionResource&,
                                              const std::string& ns, const std::string& name)>
      get_object;
  // Every object of a resource in a namespace ("" = all namespaces, or cluster-scoped), as the
  // plugins' informer listers see them (PriorityClasses, LimitRanges, StorageClasses). Unset =
  // nothing listed.
  std::function<std::vector<nlohmann::json>(const core::GroupVersionResource&,
                                            const std::string& ns)>
      list_objects;
  // Random 5-char suffix source (utilrand.String(5)); tests inject a deterministic one.
  std::function<std::string()> random_suffix;
  // audit.AddAuditAnnotations on the request's audit context (Metadata level); unset: dropped.
  std::function<void(const std::string& key, const std::string& value)> add_audit_annotation;
};

class AdmissionPlugin {
 public:
  virtual ~AdmissionPlugin() = default;
  virtual std::string_view name() const = 0;  // upstream plugin name, e.g. "ServiceAccount"
  virtual bool mutating() const = 0;
  virtual bool validating() const = 0;
  // Mutates attributes.object in place; a rejection is returned as the Status the client gets.
  virtual std::optional<core::Status> admit(AdmissionAttributes& /*attributes*/,
                                            const PluginContext& /*context*/) const {
    return std::nullopt;
  }
  virtual std::optional<core::Status> validate(const AdmissionAttributes& /*attributes*/,
                                               const PluginContext& /*context*/) const {
    return std::nullopt;
  }
};

// The plugins by upstream name, returned in AllOrderedPlugins order whatever the input order;
// duplicates collapse; an unknown name -> error listing the known ones.
core::Result<std::vector<std::unique_ptr<AdmissionPlugin>>> makePlugins(
    const std::vector<std::string>& names);

// What a default k3s cluster enables among the plugins implemented here (kube-apiserver's
// default-on set, pkg/kubeapiserver/options/plugins.go DefaultOffAdmissionPlugins; k3s only adds
// NodeRestriction, which is not implemented: it only concerns kubelet identities).
std::vector<std::string> defaultPluginNames();
// Every plugin implemented here, in AllOrderedPlugins order.
std::vector<std::string> knownPluginNames();

// AllOrderedPlugins of pkg/kubeapiserver/options/plugins.go, including the webhook and policy
// plugins and those not implemented here.
const std::vector<std::string>& allOrderedPluginNames();
// Position of a plugin in allOrderedPluginNames(); nullopt when unknown.
std::optional<std::size_t> pluginOrderIndex(std::string_view name);
// True for the plugins ordered after MutatingAdmissionWebhook (ResourceQuota, AlwaysDeny): the
// chain runs them after the webhooks of the same phase.
bool runsAfterWebhooks(std::string_view name);

// admission.NewForbidden (apiserver pkg/admission/errors.go): 403 on the request's resource,
// named by the request's name, else the object's name, else its generateName, else "Unknown".
core::Status admissionForbidden(const AdmissionAttributes& attributes, std::string_view err);

}  // namespace harness::sim
