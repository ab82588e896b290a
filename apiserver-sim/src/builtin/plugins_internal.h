#pragma once

// Internal to harness::sim_builtin: the plugin factories (one source file per plugin) and the
// request predicates they share.

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/object.h"
#include "harness/sim/builtin_plugins.h"

namespace harness::sim::builtin_internal {

std::unique_ptr<AdmissionPlugin> makeNamespaceLifecycle();
std::unique_ptr<AdmissionPlugin> makeLimitRanger();
std::unique_ptr<AdmissionPlugin> makeServiceAccount();
std::unique_ptr<AdmissionPlugin> makeTaintNodesByCondition();
std::unique_ptr<AdmissionPlugin> makeAlwaysPullImages();
std::unique_ptr<AdmissionPlugin> makePriority();
std::unique_ptr<AdmissionPlugin> makeDefaultTolerationSeconds();
std::unique_ptr<AdmissionPlugin> makeDefaultStorageClass();
std::unique_ptr<AdmissionPlugin> makeStorageObjectInUseProtection();
std::unique_ptr<AdmissionPlugin> makeAlwaysDeny();
std::unique_ptr<AdmissionPlugin> makePodSecurity();

// The request is on <group>/<resource> (any version).
inline bool isResource(const AdmissionAttributes& a, std::string_view group,
                       std::string_view resource) {
  return a.resource.group == group && a.resource.resource == resource;
}
// The object is a <group> <kind> (admission's type assertion on the internal object).
inline bool isKind(const AdmissionAttributes& a, std::string_view group, std::string_view kind) {
  return a.kind.group == group && a.kind.kind == kind;
}

// Store lookups through the context (nullopt when the function is unset or nothing is found).
std::optional<nlohmann::json> getObject(const PluginContext& context,
                                        const core::GroupVersionResource& resource,
                                        const std::string& ns, const std::string& name);
std::vector<nlohmann::json> listObjects(const PluginContext& context,
                                        const core::GroupVersionResource& resource,
                                        const std::string& ns);

// The 500 the API server answers for a plugin error that is not a Status (ErrorToAPIStatus:
// reason "" and the error text as message).
core::Status nonStatusError(std::string message);

// utilerrors.NewAggregate(...).Error(): one message as is, several as "[a, b]".
std::string aggregateMessages(const std::vector<std::string>& messages);

}  // namespace harness::sim::builtin_internal
