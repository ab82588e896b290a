#pragma once

// Kubernetes objects as nlohmann::json with typed helpers: group/version/kind/resource names,
// ObjectMeta accessors, owner references, the pod template of the workload kinds, and a small
// table of the built-in resources this project meets.
//
// Reads follow Go's typed decoding of ObjectMeta: an absent or null field reads as its zero value
// ("" or an empty map); a field of the wrong JSON type is an error naming its path, e.g.
// "metadata.labels.app: expected string, got number".

#include <compare>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::core {

using StringMap = std::map<std::string, std::string>;

// ---------------------------------------------------------------------------------------------
// Names (k8s.io/apimachinery/pkg/runtime/schema/group_version.go)

struct GroupVersion {
  std::string group;  // "" is the core (legacy) group
  std::string version;

  // schema.ParseGroupVersion: "apps/v1" -> {apps, v1}; "v1" -> {"", v1}; "" and "/" -> {};
  // more than one "/" is an error ("unexpected GroupVersion string: a/b/c").
  static Result<GroupVersion> parse(std::string_view api_version);
  // "apps/v1", or "v1" for the core group.
  [[nodiscard]] std::string toString() const;

  auto operator<=>(const GroupVersion&) const = default;
};

struct GroupVersionKind {
  std::string group;
  std::string version;
  std::string kind;

  static Result<GroupVersionKind> fromApiVersionKind(std::string_view api_version,
                                                     std::string_view kind);
  [[nodiscard]] GroupVersion groupVersion() const { return {group, version}; }
  // The apiVersion field value: "apps/v1", "v1".
  [[nodiscard]] std::string apiVersion() const { return groupVersion().toString(); }
  // Go's GroupVersionKind.String(): "apps/v1, Kind=Deployment", "/v1, Kind=Pod".
  [[nodiscard]] std::string toString() const;

  auto operator<=>(const GroupVersionKind&) const = default;
};

struct GroupVersionResource {
  std::string group;
  std::string version;
  std::string resource;  // plural, lower case: "deployments"

  [[nodiscard]] GroupVersion groupVersion() const { return {group, version}; }
  [[nodiscard]] std::string apiVersion() const { return groupVersion().toString(); }
  // Go's GroupVersionResource.String(): "apps/v1, Resource=deployments", "/v1, Resource=pods".
  [[nodiscard]] std::string toString() const;

  auto operator<=>(const GroupVersionResource&) const = default;
};

// ---------------------------------------------------------------------------------------------
// Typed reads and writes along a path of object keys

// "metadata.labels.app" for {"metadata", "labels", "app"}.
std::string fieldPath(const std::vector<std::string>& path);

// The JSON type name used in messages: "object", "array", "string", "number", "boolean", "null".
std::string_view jsonTypeName(const nlohmann::json& value);

// The value at `path`, or nullptr when it (or a parent) is absent or null; a parent that is not
// an object is an error naming it.
Result<const nlohmann::json*> valueAt(const nlohmann::json& object,
                                      const std::vector<std::string>& path);
// A string field ("" when absent or null).
Result<std::string> stringAt(const nlohmann::json& object, const std::vector<std::string>& path);
// A map of strings (empty when absent or null; a null value reads as "", as Go decodes it).
Result<StringMap> stringMapAt(const nlohmann::json& object, const std::vector<std::string>& path);

// ---------------------------------------------------------------------------------------------
// apiVersion, kind and ObjectMeta

Result<std::string> apiVersionOf(const nlohmann::json& object);
Result<std::string> kindOf(const nlohmann::json& object);
Result<GroupVersionKind> groupVersionKindOf(const nlohmann::json& object);
Result<std::string> nameOf(const nlohmann::json& object);
Result<std::string> generateNameOf(const nlohmann::json& object);
Result<std::string> namespaceOf(const nlohmann::json& object);
Result<std::string> uidOf(const nlohmann::json& object);
Result<std::string> resourceVersionOf(const nlohmann::json& object);

// metadata.annotations (labels: labelsOf in label_selector.h).
Result<StringMap> annotationsOf(const nlohmann::json& object);
// One label / annotation; nullopt when absent.
Result<std::optional<std::string>> labelOf(const nlohmann::json& object, std::string_view key);
Result<std::optional<std::string>> annotationOf(const nlohmann::json& object, std::string_view key);

// Writes create metadata and the labels/annotations maps when they are absent or null; a
// non-object in the way is an error and leaves the object unchanged.
Result<void> setName(nlohmann::json& object, const std::string& name);
Result<void> setNamespace(nlohmann::json& object, const std::string& ns);
Result<void> setLabel(nlohmann::json& object, const std::string& key, const std::string& value);
Result<void> setAnnotation(nlohmann::json& object, const std::string& key,
                           const std::string& value);
// True when the key was present. Removing the last entry leaves an empty map.
Result<bool> removeLabel(nlohmann::json& object, const std::string& key);
Result<bool> removeAnnotation(nlohmann::json& object, const std::string& key);

// ---------------------------------------------------------------------------------------------
// Owner references (metav1.OwnerReference)

struct OwnerReference {
  std::string api_version;
  std::string kind;
  std::string name;
  std::string uid;
  std::optional<bool> controller;
  std::optional<bool> block_owner_deletion;

  // Reads one reference; type errors name `path` + the field, e.g.
  // "metadata.ownerReferences[0].uid: expected string, got number".
  static Result<OwnerReference> fromJson(const nlohmann::json& value, const std::string& path);
  // JSON with the API field names; unset optional fields are omitted.
  [[nodiscard]] nlohmann::json toJson() const;

  bool operator==(const OwnerReference&) const = default;
};

// metadata.ownerReferences (empty when absent or null).
Result<std::vector<OwnerReference>> ownerReferencesOf(const nlohmann::json& object);
// metav1.GetControllerOf: the first reference with controller: true.
std::optional<OwnerReference> controllerOf(const std::vector<OwnerReference>& references);

// ---------------------------------------------------------------------------------------------
// Pod templates of the workload kinds

// RFC 6901 pointer to the pod template: "" for Pod (the object itself), "/template" for
// PodTemplate, "/spec/template" for Deployment, StatefulSet, DaemonSet, ReplicaSet,
// ReplicationController and Job, "/spec/jobTemplate/spec/template" for CronJob; nullopt for
// kinds without one.
std::optional<std::string> podTemplatePointer(std::string_view kind);
// Pointer to the pod spec: "/spec" for Pod, "<template>/spec" otherwise.
std::optional<std::string> podSpecPointer(std::string_view kind);
// Pointer to the pod metadata: "/metadata" for Pod, "<template>/metadata" otherwise.
std::optional<std::string> podMetadataPointer(std::string_view kind);

// The pod spec / pod (template) metadata of an object, by its kind. nullptr when absent or null;
// an error for a kind without a pod template or a non-object on the way.
Result<const nlohmann::json*> podSpecOf(const nlohmann::json& object);
Result<nlohmann::json*> podSpecOf(nlohmann::json& object);
Result<const nlohmann::json*> podMetadataOf(const nlohmann::json& object);

// ---------------------------------------------------------------------------------------------
// Built-in resources (discovery facts of kube-apiserver for the kinds this project meets)

struct ResourceInfo {
  GroupVersionResource resource;
  std::string subresource;  // "" for the resource itself
  GroupVersionKind kind;    // what the endpoint serves (deployments/scale: autoscaling/v1 Scale)
  bool namespaced = true;
};

// The table, in API installation order (core first; extensions before apps, as kube-apiserver
// installed them; events.k8s.io last).
const std::vector<ResourceInfo>& builtinResources();
std::optional<ResourceInfo> findResource(const GroupVersionResource& resource,
                                         std::string_view subresource = {});
// The main resource (no subresource) serving `kind`.
std::optional<ResourceInfo> findResourceForKind(const GroupVersionKind& kind);
// Plural resource name for a kind in any known group/version ("Deployment" -> "deployments").
std::optional<std::string> resourceNameForKind(std::string_view group, std::string_view kind);
// Resources stored together with `resource` (same storage, e.g. deployments in apps/v1,
// apps/v1beta2, apps/v1beta1 and extensions/v1beta1; events in core/v1 and events.k8s.io/v1),
// for the same subresource, in installation order, including `resource` itself
// (runtime.EquivalentResourceMapper.EquivalentResourcesFor).
std::vector<ResourceInfo> equivalentResources(const GroupVersionResource& resource,
                                              std::string_view subresource = {});

}  // namespace harness::core
