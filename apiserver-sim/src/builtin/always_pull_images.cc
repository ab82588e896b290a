// AlwaysPullImages (kubernetes/kubernetes plugin/pkg/admission/alwayspullimages/admission.go):
// pods, CREATE and UPDATE, not subresources; an UPDATE that brings no new image is ignored.
//   Admit: every init, regular and ephemeral container gets imagePullPolicy: Always.
//   Validate: any other policy -> the aggregate of 403s "pods "<name>" is forbidden:
//   spec.containers[0].imagePullPolicy: Unsupported value: "IfNotPresent": supported values:
//   "Always"", which is not a Status error and so reaches the client as a 500 with that text.

#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/field_errors.h"
#include "json_access.h"
#include "plugins_internal.h"

namespace harness::sim::builtin_internal {
namespace {

// pods.VisitContainersWithPath order.
constexpr std::string_view kContainerLists[] = {"initContainers", "containers",
                                                "ephemeralContainers"};

std::set<std::string> imagesOf(const nlohmann::json& pod) {
  std::set<std::string> images;
  const nlohmann::json* spec = objectMember(pod, "spec");
  if (spec == nullptr) return images;
  for (auto list : kContainerLists) {
    forEachObjectIn(*spec, list,
                    [&](const nlohmann::json& c) { images.insert(stringMember(c, "image")); });
  }
  return images;
}

bool shouldIgnore(const AdmissionAttributes& a) {
  if (a.operation != kOperationCreate && a.operation != kOperationUpdate) return true;
  if (!a.subresource.empty() || !isResource(a, "", "pods")) return true;
  if (!a.object || !a.object->is_object()) return true;
  if (a.operation == kOperationUpdate && a.old_object) {
    // isUpdateWithNoNewImages
    std::set<std::string> old_images = imagesOf(*a.old_object);
    for (const auto& image : imagesOf(*a.object)) {
      if (old_images.count(image) == 0) return false;
    }
    return true;
  }
  return false;
}

class AlwaysPullImages final : public AdmissionPlugin {
 public:
  std::string_view name() const override { return "AlwaysPullImages"; }
  bool mutating() const override { return true; }
  bool validating() const override { return true; }

  std::optional<core::Status> admit(AdmissionAttributes& a,
                                    const PluginContext& /*context*/) const override {
    if (shouldIgnore(a)) return std::nullopt;
    nlohmann::json* spec = objectMember(*a.object, "spec");
    if (spec == nullptr) return std::nullopt;
    for (auto list : kContainerLists) {
      forEachObjectIn(*spec, list, [](nlohmann::json& c) { c["imagePullPolicy"] = "Always"; });
    }
    return std::nullopt;
  }

  std::optional<core::Status> validate(const AdmissionAttributes& a,
                                       const PluginContext& /*context*/) const override {
    if (shouldIgnore(a)) return std::nullopt;
    const nlohmann::json* spec = objectMember(*a.object, "spec");
    if (spec == nullptr) return std::nullopt;
    std::vector<std::string> errors;
    for (auto list : kContainerLists) {
      const nlohmann::json* containers = arrayMember(*spec, list);
      if (containers == nullptr) continue;
      for (std::size_t i = 0; i < containers->size(); ++i) {
        const nlohmann::json& c = (*containers)[i];
        if (!c.is_object()) continue;
        const std::string policy = stringMember(c, "imagePullPolicy");
        if (policy == "Always") continue;
        std::string path = "spec.";
        path += list;
        path += "[" + std::to_string(i) + "].imagePullPolicy";
        errors.push_back(
            admissionForbidden(a, core::FieldError::notSupported(path, policy, {"Always"}).toString())
                .message);
      }
    }
    if (errors.empty()) return std::nullopt;
    return nonStatusError(aggregateMessages(errors));
  }
};

}  // namespace

std::unique_ptr<AdmissionPlugin> makeAlwaysPullImages() {
  return std::make_unique<AlwaysPullImages>();
}

}  // namespace harness::sim::builtin_internal
