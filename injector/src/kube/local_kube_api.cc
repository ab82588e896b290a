#include "harness/core/object.h"
#include "harness/injector/kube_api.h"

namespace harness::injector {

LocalKubeApi::LocalKubeApi(std::vector<nlohmann::json> objects) : objects_(std::move(objects)) {}

void LocalKubeApi::add(nlohmann::json object) {
  std::lock_guard lock(mutex_);
  objects_.push_back(std::move(object));
}

core::Result<std::optional<nlohmann::json>> LocalKubeApi::get(const ObjectRef& ref) {
  std::lock_guard lock(mutex_);
  // Later objects win, as a later `kubectl apply` of the same object would.
  for (auto it = objects_.rbegin(); it != objects_.rend(); ++it) {
    const auto& obj = *it;
    auto kind = core::kindOf(obj);
    auto name = core::nameOf(obj);
    auto ns = core::namespaceOf(obj);
    if (!kind || !name || !ns) continue;
    if (*kind != ref.kind || *name != ref.name) continue;
    if (ref.kind != "Namespace" && *ns != ref.namespace_name) continue;
    if (!ref.api_version.empty()) {
      auto av = core::apiVersionOf(obj);
      auto want = core::GroupVersion::parse(ref.api_version);
      auto have = av ? core::GroupVersion::parse(*av) : core::Result<core::GroupVersion>(av.error());
      // Objects of another version of the same group are the same object (the API converts).
      if (want && have && want->group != have->group) continue;
    }
    return std::optional<nlohmann::json>{obj};
  }
  return std::optional<nlohmann::json>{};
}

core::Result<void> LocalKubeApi::createEvent(const nlohmann::json& event) {
  std::lock_guard lock(mutex_);
  events_.push_back(event);
  return {};
}

std::string LocalKubeApi::describe() const {
  std::lock_guard lock(mutex_);
  return "local objects (" + std::to_string(objects_.size()) + ")";
}

std::vector<nlohmann::json> LocalKubeApi::events() const {
  std::lock_guard lock(mutex_);
  return events_;
}

}  // namespace harness::injector
