#pragma once

// The resources CustomResourceDefinitions add to the API, read from the stored CRDs as
// apiextensions-apiserver's crdHandler reads them (k8s.io/apiextensions-apiserver v0.37.2
// pkg/apiserver/customresource_handler.go ServeHTTP): a CRD serves its versions with `served:
// true` once its Established condition is True, under the names in status.acceptedNames, with
// the status and scale subresources each version declares. Discovery
// (pkg/apiserver/customresource_discovery_controller.go sync) lists the same: a group's
// versions sorted by version priority (version.CompareKubeAwareVersionStrings), the resources
// of each version with their short names, categories and verbs.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/object.h"
#include "harness/core/result.h"
#include "harness/core/status.h"

namespace harness::sim {

class ObjectStore;

inline const core::GroupResource kCustomResourceDefinitions{"apiextensions.k8s.io",
                                                             "customresourcedefinitions"};

// The finalizer of a CustomResourceDefinition being deleted (apiextensions.
// CustomResourceCleanupFinalizer): its custom resources are deleted before it goes.
inline constexpr std::string_view kCustomResourceCleanupFinalizer =
    "customresourcecleanup.apiextensions.k8s.io";

// apihelpers.SetCRDCondition: the condition of `type` set in `crd`'s status (added when absent);
// its lastTransitionTime is `now` (RFC 3339) unless the status stays the same.
void setCrdCondition(nlohmann::json& crd, std::string_view type, std::string_view status,
                     std::string_view reason, std::string_view message, const std::string& now);
// apihelpers.IsCRDConditionTrue.
bool crdConditionTrue(const nlohmann::json& crd, std::string_view type);

// One resource (or subresource) a CRD serves at one version.
struct ServedCustomResource {
  core::ResourceInfo info;  // subresource "status" or "scale": kind Scale of autoscaling/v1
  std::string singular;
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
  std::string list_kind;
  // Discovery's verbs, in its order: delete, deletecollection, get, list, patch, create, update,
  // watch (while the CRD is Terminating: delete, deletecollection, get, list, watch); get,
  // patch, update for a subresource.
  std::vector<std::string> verbs;
  // The CRD as stored (shared by every entry it serves).
  std::shared_ptr<const nlohmann::json> definition;
  // spec.conversion.strategy is Webhook and this is not the storage version: objects are stored
  // in another version and only a conversion webhook could convert them.
  bool needs_conversion_webhook = false;
};

// Every resource the established CRDs serve: per CRD (by name), per served version in the
// CRD's order, the resource then its subresources.
std::vector<ServedCustomResource> servedCustomResources(const ObjectStore& store);

// The resource or subresource at `resource` (its group, version and plural), or nullopt.
std::optional<ServedCustomResource> findCustomResource(const ObjectStore& store,
                                                       const core::GroupVersionResource& resource,
                                                       std::string_view subresource = {});

// The stored CRD whose accepted plural and group are `resource`'s (established or not), or
// nullopt: the definition a write to that resource is admitted against.
std::optional<nlohmann::json> customResourceDefinitionFor(const ObjectStore& store,
                                                          const core::GroupResource& resource);

// version.CompareKubeAwareVersionStrings(a, b) > 0: `a` sorts before `b`.
bool kubeAwareVersionBefore(std::string_view a, std::string_view b);

// What apiextensions-apiserver's own code answers for one step of a write (kube-cel's
// admitCustomResourceDefinition and admitCustomResource): the object as the step leaves it, with
// the strategy's warnings and the paths of the unknown fields the step pruned. (The implicit move
// of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant() into a throw it
// cannot reach.)
// NOLINTNEXTLINE(bugprone-exception-escape)
struct CustomResourceAnswer {
  nlohmann::json object;
  std::vector<std::string> warnings;
  std::vector<std::string> unknown_fields;
};
using CustomResourceOutcome = std::variant<CustomResourceAnswer, core::Status>;

// CustomResourceDefinitions and custom resources by Kubernetes' code. Each function throws when
// it cannot tell (kube-cel failed); unset functions mean no kube-cel (`unavailable` says why).
struct CustomResourceCode {
  // The CRD registry strategy for a create (`old` null), an update or a /status update: the CRD
  // to store, or the 422.
  std::function<CustomResourceOutcome(const nlohmann::json& object, const nlohmann::json* old,
                                      const std::string& subresource)>
      definition;
  // One step of a custom resource's write against its CRD (as stored): "decode" (the request
  // body: pruned, ObjectMeta coerced, defaulted; a 400 when it cannot be decoded), "default" (a
  // webhook's patched object), "validate" (the strategy: PrepareForCreate/Update, then the
  // schema, CEL rules and metadata; the 422), "store" (what storage keeps and a read returns).
  std::function<CustomResourceOutcome(std::string_view step, const nlohmann::json& crd,
                                      const nlohmann::json& object, const nlohmann::json* old,
                                      const std::string& subresource)>
      resource;
  // The status writes of the naming and establishing controllers for `crd`, given the other
  // stored CRDs: each the whole CRD to write to /status, in order (none: nothing to write).
  std::function<std::vector<nlohmann::json>(const nlohmann::json& crd,
                                            const std::vector<nlohmann::json>& others)>
      definition_status;
  // The meta.k8s.io/v1 Table of `objects` (one version's printer columns).
  std::function<nlohmann::json(const nlohmann::json& crd, const std::string& version,
                               const std::vector<nlohmann::json>& objects, bool single,
                               bool no_headers, const std::string& resource_version)>
      table;
  // Why the functions are unset ("kube-cel is not built (...)"), when they are.
  std::string unavailable;
};

}  // namespace harness::sim
