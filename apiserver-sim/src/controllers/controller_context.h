#pragma once

// Internal to the controllers module: what every simulated kube-controller-manager controller
// shares. Reads come from the store (the controllers' informers); writes go through the admission
// chain as the controller's own service account (--use-service-account-credentials: each
// controller's client is ClientBuilder.ClientOrDie("<name>")), with the user agent and request
// URI a cluster's audit log shows; events are posted as client-go's tools/record posts them.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/sim/admission_chain.h"
#include "harness/sim/store.h"

namespace harness::sim::controllers {

// system:serviceaccount:kube-system:<controller> with its groups.
core::UserInfo serviceAccount(const std::string& controller);

// Field readers that answer "" / `dflt` for a missing field or one of another type.
std::string str(const nlohmann::json& object, const nlohmann::json::json_pointer& pointer);
std::int64_t integer(const nlohmann::json& object, const nlohmann::json::json_pointer& pointer,
                     std::int64_t dflt);
std::string uidOf(const nlohmann::json& object);
std::string nameOf(const nlohmann::json& object);
std::string namespaceOf(const nlohmann::json& object);
std::string resourceVersionOf(const nlohmann::json& object);
std::string annotation(const nlohmann::json& object, std::string_view key);
// metadata.deletionTimestamp is set.
bool terminating(const nlohmann::json& object);

// metav1.GetControllerOf: the ownerReference with controller: true.
std::optional<nlohmann::json> controllerOf(const nlohmann::json& object);
// metav1.IsControlledBy (by uid).
bool controlledBy(const nlohmann::json& object, const nlohmann::json& owner);
// metav1.NewControllerRef(owner, gvk): controller and blockOwnerDeletion true.
nlohmann::json controllerRef(const nlohmann::json& owner, const std::string& api_version,
                             const std::string& kind);

// The version a controller's client calls a resource at: v1 where the builtin table serves it,
// else the first version it lists (extensions/v1beta1 deployments).
std::string servedVersion(const core::GroupResource& resource);

// A controller's view of the cluster: the store and the chain it writes through.
class ControllerContext {
 public:
  ControllerContext(ObjectStore& store, AdmissionChain& chain) : store_(store), chain_(chain) {}

  [[nodiscard]] ObjectStore& store() const { return store_; }

  // One write as `controller`: operation CREATE, UPDATE or DELETE on `resource` (version v1),
  // the object's namespace and name ("" for a create), its subresource ("status"), `path` the
  // part of the URI after the namespace ("pods", "jobs/web/status"). `options` are the request's
  // Create/Update/DeleteOptions (defaulted when unset); `verb` the authorization verb when it is
  // not the operation's own ("patch" for an UPDATE sent as a PATCH, which RBAC tells apart).
  AdmissionResult write(std::string operation, const core::GroupResource& resource,
                        const std::string& path, const std::string& namespace_name,
                        const std::string& name, std::optional<nlohmann::json> object,
                        const std::string& controller, std::string subresource = {},
                        std::optional<nlohmann::json> options = std::nullopt,
                        std::string verb = {}) const;

  // client-go tools/record: an Event about `object` (its kind and apiVersion given) from
  // `controller`; the same event again (same object, type, reason, message and source) is
  // counted on the stored one (EventCorrelator: count and lastTimestamp, a PATCH).
  void event(const nlohmann::json& object, const std::string& kind,
             const std::string& api_version, const std::string& type, const std::string& reason,
             const std::string& message, const std::string& controller) const;

 private:
  ObjectStore& store_;
  AdmissionChain& chain_;
};

}  // namespace harness::sim::controllers
