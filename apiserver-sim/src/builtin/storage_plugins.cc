// The storage plugins that are on by default:
//   DefaultStorageClass (kubernetes/kubernetes plugin/pkg/admission/storage/storageclass/
//   setdefault/admission.go): a PersistentVolumeClaim CREATE without spec.storageClassName and
//   without the volume.beta.kubernetes.io/storage-class annotation gets the default
//   StorageClass (annotation storageclass.kubernetes.io/is-default-class or its beta form set to
//   "true"; the newest one when several are, then by name: pkg/volume/util GetDefaultClass).
//   k3s ships local-path as the default class.
//   StorageObjectInUseProtection (plugin/pkg/admission/storage/storageobjectinuseprotection/
//   admission.go): CREATE of a PersistentVolume / PersistentVolumeClaim adds the finalizer
//   kubernetes.io/pv-protection / kubernetes.io/pvc-protection.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "json_access.h"
#include "plugins_internal.h"

namespace harness::sim::builtin_internal {
namespace {

bool isDefaultClass(const nlohmann::json& storage_class) {
  const nlohmann::json* metadata = objectMember(storage_class, "metadata");
  const nlohmann::json* annotations =
      metadata != nullptr ? objectMember(*metadata, "annotations") : nullptr;
  if (annotations == nullptr) return false;
  return stringMember(*annotations, "storageclass.kubernetes.io/is-default-class") == "true" ||
         stringMember(*annotations, "storageclass.beta.kubernetes.io/is-default-class") == "true";
}

class DefaultStorageClass final : public AdmissionPlugin {
 public:
  std::string_view name() const override { return "DefaultStorageClass"; }
  bool mutating() const override { return true; }
  bool validating() const override { return false; }

  std::optional<core::Status> admit(AdmissionAttributes& a,
                                    const PluginContext& context) const override {
    if (a.operation != kOperationCreate || !a.subresource.empty()) return std::nullopt;
    if (!isResource(a, "", "persistentvolumeclaims") || !a.object || !a.object->is_object()) {
      return std::nullopt;
    }
    nlohmann::json& claim = *a.object;
    nlohmann::json* spec = ensureObject(claim, "spec");
    if (spec == nullptr || !isUnset(*spec, "storageClassName")) return std::nullopt;
    const nlohmann::json* metadata = objectMember(claim, "metadata");
    const nlohmann::json* annotations =
        metadata != nullptr ? objectMember(*metadata, "annotations") : nullptr;
    if (annotations != nullptr && annotations->contains("volume.beta.kubernetes.io/storage-class")) {
      return std::nullopt;
    }
    std::optional<nlohmann::json> chosen;
    for (const auto& storage_class :
         listObjects(context, {"storage.k8s.io", "v1", "storageclasses"}, "")) {
      if (!isDefaultClass(storage_class)) continue;
      if (!chosen) {
        chosen = storage_class;
        continue;
      }
      const std::string created = metadataString(storage_class, "creationTimestamp");
      const std::string chosen_created = metadataString(*chosen, "creationTimestamp");
      if (created > chosen_created ||
          (created == chosen_created &&
           metadataString(storage_class, "name") < metadataString(*chosen, "name"))) {
        chosen = storage_class;
      }
    }
    if (chosen) (*spec)["storageClassName"] = metadataString(*chosen, "name");
    return std::nullopt;
  }
};

class StorageObjectInUseProtection final : public AdmissionPlugin {
 public:
  std::string_view name() const override { return "StorageObjectInUseProtection"; }
  bool mutating() const override { return true; }
  bool validating() const override { return false; }

  std::optional<core::Status> admit(AdmissionAttributes& a,
                                    const PluginContext& /*context*/) const override {
    if (a.operation != kOperationCreate || !a.subresource.empty()) return std::nullopt;
    if (!a.object || !a.object->is_object()) return std::nullopt;
    std::string finalizer;
    if (isResource(a, "", "persistentvolumes") && isKind(a, "", "PersistentVolume")) {
      finalizer = "kubernetes.io/pv-protection";
    } else if (isResource(a, "", "persistentvolumeclaims") &&
               isKind(a, "", "PersistentVolumeClaim")) {
      finalizer = "kubernetes.io/pvc-protection";
    } else {
      return std::nullopt;
    }
    nlohmann::json* metadata = ensureObject(*a.object, "metadata");
    nlohmann::json* finalizers = metadata != nullptr ? ensureArray(*metadata, "finalizers") : nullptr;
    if (finalizers == nullptr) return std::nullopt;
    for (const auto& f : *finalizers) {
      if (f == finalizer) return std::nullopt;
    }
    finalizers->push_back(finalizer);
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<AdmissionPlugin> makeDefaultStorageClass() {
  return std::make_unique<DefaultStorageClass>();
}
std::unique_ptr<AdmissionPlugin> makeStorageObjectInUseProtection() {
  return std::make_unique<StorageObjectInUseProtection>();
}

}  // namespace harness::sim::builtin_internal
