// The plugin registry: AllOrderedPlugins and DefaultOffAdmissionPlugins of kubernetes/kubernetes
// pkg/kubeapiserver/options/plugins.go, the plugins implemented here, and admission.NewForbidden
// (staging/src/k8s.io/apiserver/pkg/admission/errors.go: extractResourceName).

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness/sim/builtin_plugins.h"
#include "json_access.h"
#include "plugins_internal.h"

namespace harness::sim {
namespace builtin_internal {

std::optional<nlohmann::json> getObject(const PluginContext& context,
                                        const core::GroupVersionResource& resource,
                                        const std::string& ns, const std::string& name) {
  if (!context.get_object) return std::nullopt;
  return context.get_object(resource, ns, name);
}

std::vector<nlohmann::json> listObjects(const PluginContext& context,
                                        const core::GroupVersionResource& resource,
                                        const std::string& ns) {
  if (!context.list_objects) return {};
  return context.list_objects(resource, ns);
}

core::Status nonStatusError(std::string message) {
  core::Status status;
  status.status = std::string(core::kStatusFailure);
  status.code = 500;
  status.message = std::move(message);
  return status;
}

std::string aggregateMessages(const std::vector<std::string>& messages) {
  if (messages.size() == 1) return messages.front();
  std::string out = "[";
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (i > 0) out += ", ";
    out += messages[i];
  }
  return out + "]";
}

}  // namespace builtin_internal

namespace {

using Factory = std::unique_ptr<AdmissionPlugin> (*)();

// The implemented plugins and their factories.
const std::map<std::string, Factory, std::less<>>& factories() {
  static const std::map<std::string, Factory, std::less<>> table = {
      {"NamespaceLifecycle", builtin_internal::makeNamespaceLifecycle},
      {"LimitRanger", builtin_internal::makeLimitRanger},
      {"ServiceAccount", builtin_internal::makeServiceAccount},
      {"TaintNodesByCondition", builtin_internal::makeTaintNodesByCondition},
      {"AlwaysPullImages", builtin_internal::makeAlwaysPullImages},
      {"Priority", builtin_internal::makePriority},
      {"DefaultTolerationSeconds", builtin_internal::makeDefaultTolerationSeconds},
      {"DefaultStorageClass", builtin_internal::makeDefaultStorageClass},
      {"StorageObjectInUseProtection", builtin_internal::makeStorageObjectInUseProtection},
      {"AlwaysDeny", builtin_internal::makeAlwaysDeny},
      {"PodSecurity", builtin_internal::makePodSecurity},
  };
  return table;
}

// DefaultOffAdmissionPlugins' default-on set.
bool isDefaultOn(std::string_view name) {
  static const std::vector<std::string_view> kDefaultOn = {
      "NamespaceLifecycle", "LimitRanger", "ServiceAccount", "DefaultStorageClass",
      "PersistentVolumeClaimResize", "DefaultTolerationSeconds", "MutatingAdmissionWebhook",
      "ValidatingAdmissionWebhook", "ResourceQuota", "StorageObjectInUseProtection", "Priority",
      "TaintNodesByCondition", "RuntimeClass", "CertificateApproval", "CertificateSigning",
      "ClusterTrustBundleAttest", "CertificateSubjectRestriction", "DefaultIngressClass",
      "PodSecurity", "MutatingAdmissionPolicy", "ValidatingAdmissionPolicy"};
  return std::find(kDefaultOn.begin(), kDefaultOn.end(), name) != kDefaultOn.end();
}

}  // namespace

const std::vector<std::string>& allOrderedPluginNames() {
  static const std::vector<std::string> kOrdered = {
      "AlwaysAdmit",
      "NamespaceAutoProvision",
      "NamespaceLifecycle",
      "NamespaceExists",
      "LimitPodHardAntiAffinityTopology",
      "LimitRanger",
      "ServiceAccount",
      "NodeRestriction",
      "TaintNodesByCondition",
      "AlwaysPullImages",
      "ImagePolicyWebhook",
      "PodSecurity",
      "PodNodeSelector",
      "Priority",
      "DefaultTolerationSeconds",
      "PodTolerationRestriction",
      "EventRateLimit",
      "ExtendedResourceToleration",
      "DefaultStorageClass",
      "StorageObjectInUseProtection",
      "OwnerReferencesPermissionEnforcement",
      "PersistentVolumeClaimResize",
      "RuntimeClass",
      "CertificateApproval",
      "CertificateSigning",
      "ClusterTrustBundleAttest",
      "CertificateSubjectRestriction",
      "DefaultIngressClass",
      "DenyServiceExternalIPs",
      "PodTopologyLabels",
      "MutatingAdmissionPolicy",
      "MutatingAdmissionWebhook",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionWebhook",
      "ResourceQuota",
      "AlwaysDeny",
  };
  return kOrdered;
}

std::optional<std::size_t> pluginOrderIndex(std::string_view name) {
  const auto& ordered = allOrderedPluginNames();
  auto it = std::find(ordered.begin(), ordered.end(), name);
  if (it == ordered.end()) return std::nullopt;
  return static_cast<std::size_t>(it - ordered.begin());
}

bool runsAfterWebhooks(std::string_view name) {
  auto index = pluginOrderIndex(name);
  auto webhook = pluginOrderIndex("MutatingAdmissionWebhook");
  return index && webhook && *index > *webhook;
}

std::vector<std::string> knownPluginNames() {
  std::vector<std::string> names;
  for (const auto& name : allOrderedPluginNames()) {
    if (factories().count(name) > 0) names.push_back(name);
  }
  return names;
}

std::vector<std::string> defaultPluginNames() {
  std::vector<std::string> names;
  for (const auto& name : knownPluginNames()) {
    if (isDefaultOn(name)) names.push_back(name);
  }
  return names;
}

core::Result<std::vector<std::unique_ptr<AdmissionPlugin>>> makePlugins(
    const std::vector<std::string>& names) {
  for (const auto& name : names) {
    if (factories().count(name) == 0) {
      std::string known;
      for (const auto& k : knownPluginNames()) {
        if (!known.empty()) known += ", ";
        known += k;
      }
      return core::makeError(
          fmt::format("admission plugin \"{}\" is unknown; known plugins: {}", name, known));
    }
  }
  std::vector<std::unique_ptr<AdmissionPlugin>> plugins;
  for (const auto& name : knownPluginNames()) {
    if (std::find(names.begin(), names.end(), name) != names.end()) {
      plugins.push_back(factories().find(name)->second());
    }
  }
  return plugins;
}

core::Status admissionForbidden(const AdmissionAttributes& attributes, std::string_view err) {
  std::string name = attributes.name;
  if (name.empty()) {
    name = "Unknown";
    if (attributes.object && attributes.object->is_object()) {
      const nlohmann::json* metadata = builtin_internal::objectMember(*attributes.object, "metadata");
      if (metadata != nullptr) {
        std::string object_name = builtin_internal::stringMember(*metadata, "name");
        std::string generate_name = builtin_internal::stringMember(*metadata, "generateName");
        if (!object_name.empty()) {
          name = object_name;
        } else if (!generate_name.empty()) {
          name = generate_name;
        }
      }
    }
  }
  return core::newForbidden({attributes.resource.group, attributes.resource.resource}, name, err);
}

}  // namespace harness::sim
