#include "harness/core/object.h"

// Upstream facts followed here:
//   * k8s.io/apimachinery/pkg/runtime/schema/group_version.go: ParseGroupVersion and the
//     String() forms of GroupVersionKind / GroupVersionResource.
//   * k8s.io/apimachinery/pkg/apis/meta/v1/types.go (ObjectMeta, OwnerReference field names) and
//     controller_ref.go (GetControllerOf).
//   * kube-apiserver discovery for the built-in resources (kinds served by subresources, scope)
//     and the storage sharing behind matchPolicy: Equivalent (see docs/admission-chain.md §3.2).

#include <algorithm>
#include <utility>

namespace harness::core {

namespace {

using nlohmann::json;

std::string joinPath(const std::vector<std::string>& path, size_t count) {
  std::string out;
  for (size_t i = 0; i < count && i < path.size(); ++i) {
    if (i > 0) out.push_back('.');
    out += path[i];
  }
  return out;
}

Error typeError(const std::string& where, std::string_view expected, const json& got) {
  if (where.empty()) {
    return makeError("expected " + std::string(expected) + ", got " +
                     std::string(jsonTypeName(got)));
  }
  return makeError(where + ": expected " + std::string(expected) + ", got " +
                   std::string(jsonTypeName(got)));
}

template <class Json>
Result<Json*> walk(Json& object, const std::vector<std::string>& path) {
  Json* current = &object;
  for (size_t i = 0; i < path.size(); ++i) {
    if (current->is_null()) return static_cast<Json*>(nullptr);
    if (!current->is_object()) return typeError(joinPath(path, i), "object", *current);
    auto it = current->find(path[i]);
    if (it == current->end()) return static_cast<Json*>(nullptr);
    current = &*it;
  }
  if (current->is_null()) return static_cast<Json*>(nullptr);
  return current;
}

std::vector<std::string> splitPointer(std::string_view pointer) {
  std::vector<std::string> out;
  size_t pos = 0;
  while (pos < pointer.size()) {
    const size_t next = pointer.find('/', pos + 1);
    out.emplace_back(
        pointer.substr(pos + 1, next == std::string_view::npos ? next : next - pos - 1));
    pos = next == std::string_view::npos ? pointer.size() : next;
  }
  return out;
}

// The map at `path`, created (with its parents) when absent or null. Checks the whole path first
// so that an error leaves the object untouched.
Result<json*> ensureMap(json& object, const std::vector<std::string>& path) {
  const json* current = &object;
  for (size_t i = 0; i <= path.size(); ++i) {
    if (current == nullptr || current->is_null()) break;
    if (!current->is_object()) return typeError(joinPath(path, i), "object", *current);
    if (i == path.size()) break;
    auto it = current->find(path[i]);
    current = it == current->end() ? nullptr : &*it;
  }
  json* target = &object;
  for (const auto& key : path) {
    if (target->is_null()) *target = json::object();
    json& child = (*target)[key];
    if (child.is_null()) child = json::object();
    target = &child;
  }
  if (target->is_null()) *target = json::object();
  return target;
}

Result<void> setStringInMap(json& object, const std::vector<std::string>& map_path,
                            const std::string& key, const std::string& value) {
  auto map = ensureMap(object, map_path);
  if (!map.ok()) return map.error();
  (**map)[key] = value;
  return {};
}

Result<bool> removeFromMap(json& object, const std::vector<std::string>& map_path,
                           const std::string& key) {
  auto map = walk(object, map_path);
  if (!map.ok()) return map.error();
  if (*map == nullptr) return false;
  if (!(*map)->is_object()) return typeError(joinPath(map_path, map_path.size()), "object", **map);
  return (*map)->erase(key) > 0;
}

Result<std::optional<std::string>> stringInMap(const json& object,
                                               const std::vector<std::string>& map_path,
                                               std::string_view key) {
  auto map = stringMapAt(object, map_path);
  if (!map.ok()) return map.error();
  const auto it = map->find(std::string(key));
  if (it == map->end()) return std::optional<std::string>();
  return std::optional<std::string>(it->second);
}

const std::vector<std::string>& labelsPath() {
  static const std::vector<std::string> kPath = {"metadata", "labels"};
  return kPath;
}

const std::vector<std::string>& annotationsPath() {
  static const std::vector<std::string> kPath = {"metadata", "annotations"};
  return kPath;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Names

Result<GroupVersion> GroupVersion::parse(std::string_view api_version) {
  if (api_version.empty() || api_version == "/") return GroupVersion{};
  const size_t slashes =
      static_cast<size_t>(std::count(api_version.begin(), api_version.end(), '/'));
  if (slashes == 0) return GroupVersion{"", std::string(api_version)};
  if (slashes == 1) {
    const size_t i = api_version.find('/');
    return GroupVersion{std::string(api_version.substr(0, i)),
                        std::string(api_version.substr(i + 1))};
  }
  return makeError("unexpected GroupVersion string: " + std::string(api_version));
}

std::string GroupVersion::toString() const {
  if (group.empty()) return version;
  return group + "/" + version;
}

Result<GroupVersionKind> GroupVersionKind::fromApiVersionKind(std::string_view api_version,
                                                              std::string_view kind) {
  auto gv = GroupVersion::parse(api_version);
  if (!gv.ok()) return gv.error();
  return GroupVersionKind{gv->group, gv->version, std::string(kind)};
}

std::string GroupVersionKind::toString() const { return group + "/" + version + ", Kind=" + kind; }

std::string GroupVersionResource::toString() const {
  return group + "/" + version + ", Resource=" + resource;
}

// ---------------------------------------------------------------------------------------------
// Typed reads

std::string fieldPath(const std::vector<std::string>& path) { return joinPath(path, path.size()); }

std::string_view jsonTypeName(const json& value) {
  switch (value.type()) {
    case json::value_t::null:
      return "null";
    case json::value_t::object:
      return "object";
    case json::value_t::array:
      return "array";
    case json::value_t::string:
      return "string";
    case json::value_t::boolean:
      return "boolean";
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
    case json::value_t::number_float:
      return "number";
    case json::value_t::binary:
      return "binary";
    case json::value_t::discarded:
      return "discarded";
  }
  return "unknown";
}

Result<const json*> valueAt(const json& object, const std::vector<std::string>& path) {
  return walk(object, path);
}

Result<std::string> stringAt(const json& object, const std::vector<std::string>& path) {
  auto value = walk(object, path);
  if (!value.ok()) return value.error();
  if (*value == nullptr) return std::string();
  if (!(*value)->is_string()) return typeError(fieldPath(path), "string", **value);
  return (*value)->get<std::string>();
}

Result<StringMap> stringMapAt(const json& object, const std::vector<std::string>& path) {
  auto value = walk(object, path);
  if (!value.ok()) return value.error();
  StringMap out;
  if (*value == nullptr) return out;
  if (!(*value)->is_object()) return typeError(fieldPath(path), "object", **value);
  for (const auto& [k, v] : (*value)->items()) {
    if (v.is_null()) {
      out.emplace(k, std::string());
    } else if (v.is_string()) {
      out.emplace(k, v.get<std::string>());
    } else {
      return typeError(fieldPath(path) + "." + k, "string", v);
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// apiVersion, kind, ObjectMeta

Result<std::string> apiVersionOf(const json& object) { return stringAt(object, {"apiVersion"}); }
Result<std::string> kindOf(const json& object) { return stringAt(object, {"kind"}); }

Result<GroupVersionKind> groupVersionKindOf(const json& object) {
  auto api_version = apiVersionOf(object);
  if (!api_version.ok()) return api_version.error();
  auto kind = kindOf(object);
  if (!kind.ok()) return kind.error();
  auto gvk = GroupVersionKind::fromApiVersionKind(*api_version, *kind);
  if (!gvk.ok()) return gvk.error().within("apiVersion");
  return gvk;
}

Result<std::string> nameOf(const json& object) { return stringAt(object, {"metadata", "name"}); }
Result<std::string> generateNameOf(const json& object) {
  return stringAt(object, {"metadata", "generateName"});
}
Result<std::string> namespaceOf(const json& object) {
  return stringAt(object, {"metadata", "namespace"});
}
Result<std::string> uidOf(const json& object) { return stringAt(object, {"metadata", "uid"}); }
Result<std::string> resourceVersionOf(const json& object) {
  return stringAt(object, {"metadata", "resourceVersion"});
}

Result<StringMap> annotationsOf(const json& object) {
  return stringMapAt(object, annotationsPath());
}

Result<std::optional<std::string>> labelOf(const json& object, std::string_view key) {
  return stringInMap(object, labelsPath(), key);
}

Result<std::optional<std::string>> annotationOf(const json& object, std::string_view key) {
  return stringInMap(object, annotationsPath(), key);
}

Result<void> setName(json& object, const std::string& name) {
  auto metadata = ensureMap(object, {"metadata"});
  if (!metadata.ok()) return metadata.error();
  (**metadata)["name"] = name;
  return {};
}

Result<void> setNamespace(json& object, const std::string& ns) {
  auto metadata = ensureMap(object, {"metadata"});
  if (!metadata.ok()) return metadata.error();
  (**metadata)["namespace"] = ns;
  return {};
}

Result<void> setLabel(json& object, const std::string& key, const std::string& value) {
  return setStringInMap(object, labelsPath(), key, value);
}

Result<void> setAnnotation(json& object, const std::string& key, const std::string& value) {
  return setStringInMap(object, annotationsPath(), key, value);
}

Result<bool> removeLabel(json& object, const std::string& key) {
  return removeFromMap(object, labelsPath(), key);
}

Result<bool> removeAnnotation(json& object, const std::string& key) {
  return removeFromMap(object, annotationsPath(), key);
}

// ---------------------------------------------------------------------------------------------
// Owner references

Result<OwnerReference> OwnerReference::fromJson(const json& value, const std::string& path) {
  if (!value.is_object()) return typeError(path, "object", value);
  OwnerReference ref;
  const std::pair<const char*, std::string*> strings[] = {{"apiVersion", &ref.api_version},
                                                          {"kind", &ref.kind},
                                                          {"name", &ref.name},
                                                          {"uid", &ref.uid}};
  for (const auto& [field, target] : strings) {
    const auto it = value.find(field);
    if (it == value.end() || it->is_null()) continue;
    if (!it->is_string()) return typeError(path + "." + field, "string", *it);
    *target = it->get<std::string>();
  }
  const std::pair<const char*, std::optional<bool>*> booleans[] = {
      {"controller", &ref.controller}, {"blockOwnerDeletion", &ref.block_owner_deletion}};
  for (const auto& [field, target] : booleans) {
    const auto it = value.find(field);
    if (it == value.end() || it->is_null()) continue;
    if (!it->is_boolean()) return typeError(path + "." + field, "boolean", *it);
    *target = it->get<bool>();
  }
  return ref;
}

json OwnerReference::toJson() const {
  json out = {{"apiVersion", api_version}, {"kind", kind}, {"name", name}, {"uid", uid}};
  if (controller) out["controller"] = *controller;
  if (block_owner_deletion) out["blockOwnerDeletion"] = *block_owner_deletion;
  return out;
}

Result<std::vector<OwnerReference>> ownerReferencesOf(const json& object) {
  const std::vector<std::string> path = {"metadata", "ownerReferences"};
  auto value = walk(object, path);
  if (!value.ok()) return value.error();
  std::vector<OwnerReference> refs;
  if (*value == nullptr) return refs;
  if (!(*value)->is_array()) return typeError(fieldPath(path), "array", **value);
  for (size_t i = 0; i < (*value)->size(); ++i) {
    auto ref =
        OwnerReference::fromJson((**value)[i], fieldPath(path) + "[" + std::to_string(i) + "]");
    if (!ref.ok()) return ref.error();
    refs.push_back(std::move(*ref));
  }
  return refs;
}

std::optional<OwnerReference> controllerOf(const std::vector<OwnerReference>& references) {
  for (const auto& ref : references) {
    if (ref.controller.value_or(false)) return ref;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Pod templates

std::optional<std::string> podTemplatePointer(std::string_view kind) {
  if (kind == "Pod") return std::string();
  if (kind == "PodTemplate") return std::string("/template");
  if (kind == "Deployment" || kind == "StatefulSet" || kind == "DaemonSet" ||
      kind == "ReplicaSet" || kind == "ReplicationController" || kind == "Job") {
    return std::string("/spec/template");
  }
  if (kind == "CronJob") return std::string("/spec/jobTemplate/spec/template");
  return std::nullopt;
}

std::optional<std::string> podSpecPointer(std::string_view kind) {
  auto base = podTemplatePointer(kind);
  if (!base) return std::nullopt;
  return *base + "/spec";
}

std::optional<std::string> podMetadataPointer(std::string_view kind) {
  auto base = podTemplatePointer(kind);
  if (!base) return std::nullopt;
  return *base + "/metadata";
}

Result<const json*> podSpecOf(const json& object) {
  auto kind = kindOf(object);
  if (!kind.ok()) return kind.error();
  const auto pointer = podSpecPointer(*kind);
  if (!pointer) return makeError("kind \"" + *kind + "\" has no pod template");
  return walk(object, splitPointer(*pointer));
}

Result<json*> podSpecOf(json& object) {
  auto kind = kindOf(object);
  if (!kind.ok()) return kind.error();
  const auto pointer = podSpecPointer(*kind);
  if (!pointer) return makeError("kind \"" + *kind + "\" has no pod template");
  return walk(object, splitPointer(*pointer));
}

Result<const json*> podMetadataOf(const json& object) {
  auto kind = kindOf(object);
  if (!kind.ok()) return kind.error();
  const auto pointer = podMetadataPointer(*kind);
  if (!pointer) return makeError("kind \"" + *kind + "\" has no pod template");
  return walk(object, splitPointer(*pointer));
}

// ---------------------------------------------------------------------------------------------
// Built-in resources

namespace {

struct TableEntry {
  ResourceInfo info;
  std::string storage;  // resources with the same storage are equivalent
};

const std::vector<TableEntry>& table() {
  static const std::vector<TableEntry> kTable = [] {
    std::vector<TableEntry> t;
    auto add = [&t](std::string group, std::string version, std::string resource,
                    std::string subresource, GroupVersionKind kind, bool namespaced,
                    std::string storage = {}) {
      if (storage.empty()) storage = group + "/" + resource;
      t.push_back(
          {{{group, version, resource}, std::move(subresource), std::move(kind), namespaced},
           std::move(storage)});
    };
    const auto core = [](std::string kind) { return GroupVersionKind{"", "v1", std::move(kind)}; };
    const GroupVersionKind autoscaling_scale{"autoscaling", "v1", "Scale"};

    // Core (legacy) group, installed first.
    add("", "v1", "pods", "", core("Pod"), true);
    add("", "v1", "pods", "status", core("Pod"), true);
    add("", "v1", "pods", "binding", core("Binding"), true);
    add("", "v1", "pods", "eviction", {"policy", "v1", "Eviction"}, true);
    add("", "v1", "pods", "exec", core("PodExecOptions"), true);
    add("", "v1", "pods", "attach", core("PodAttachOptions"), true);
    add("", "v1", "pods", "portforward", core("PodPortForwardOptions"), true);
    add("", "v1", "pods", "proxy", core("PodProxyOptions"), true);
    add("", "v1", "pods", "log", core("Pod"), true);
    add("", "v1", "pods", "ephemeralcontainers", core("Pod"), true);
    add("", "v1", "services", "", core("Service"), true);
    add("", "v1", "services", "status", core("Service"), true);
    add("", "v1", "services", "proxy", core("ServiceProxyOptions"), true);
    add("", "v1", "namespaces", "", core("Namespace"), false);
    add("", "v1", "namespaces", "status", core("Namespace"), false);
    add("", "v1", "namespaces", "finalize", core("Namespace"), false);
    add("", "v1", "configmaps", "", core("ConfigMap"), true);
    add("", "v1", "secrets", "", core("Secret"), true);
    add("", "v1", "serviceaccounts", "", core("ServiceAccount"), true);
    add("", "v1", "serviceaccounts", "token", {"authentication.k8s.io", "v1", "TokenRequest"},
        true);
    add("", "v1", "events", "", core("Event"), true, "events");
    add("", "v1", "nodes", "", core("Node"), false);
    add("", "v1", "nodes", "status", core("Node"), false);
    add("", "v1", "nodes", "proxy", core("NodeProxyOptions"), false);
    add("", "v1", "persistentvolumeclaims", "", core("PersistentVolumeClaim"), true);
    add("", "v1", "persistentvolumeclaims", "status", core("PersistentVolumeClaim"), true);
    add("", "v1", "replicationcontrollers", "", core("ReplicationController"), true);
    add("", "v1", "replicationcontrollers", "status", core("ReplicationController"), true);
    add("", "v1", "replicationcontrollers", "scale", autoscaling_scale, true);

    // extensions/v1beta1 (installed before apps; see kube-apiserver's storage provider order).
    const GroupVersionKind ext_deployment{"extensions", "v1beta1", "Deployment"};
    add("extensions", "v1beta1", "deployments", "", ext_deployment, true, "deployments");
    add("extensions", "v1beta1", "deployments", "status", ext_deployment, true, "deployments");
    add("extensions", "v1beta1", "deployments", "scale", {"extensions", "v1beta1", "Scale"}, true,
        "deployments");

    // apps, preferred version first.
    for (const char* resource : {"deployments", "statefulsets", "daemonsets", "replicasets"}) {
      const std::string r = resource;
      const std::string kind = r == "deployments"    ? "Deployment"
                               : r == "statefulsets" ? "StatefulSet"
                               : r == "daemonsets"   ? "DaemonSet"
                                                     : "ReplicaSet";
      const std::string storage = r == "deployments" ? "deployments" : "apps/" + r;
      add("apps", "v1", r, "", {"apps", "v1", kind}, true, storage);
      add("apps", "v1", r, "status", {"apps", "v1", kind}, true, storage);
      if (r != "daemonsets") add("apps", "v1", r, "scale", autoscaling_scale, true, storage);
    }
    for (const char* version : {"v1beta2", "v1beta1"}) {
      const GroupVersionKind deployment{"apps", version, "Deployment"};
      add("apps", version, "deployments", "", deployment, true, "deployments");
      add("apps", version, "deployments", "status", deployment, true, "deployments");
      add("apps", version, "deployments", "scale", {"apps", version, "Scale"}, true, "deployments");
    }

    add("batch", "v1", "jobs", "", {"batch", "v1", "Job"}, true);
    add("batch", "v1", "jobs", "status", {"batch", "v1", "Job"}, true);
    add("batch", "v1", "cronjobs", "", {"batch", "v1", "CronJob"}, true);
    add("batch", "v1", "cronjobs", "status", {"batch", "v1", "CronJob"}, true);

    const std::string rbac = "rbac.authorization.k8s.io";
    add(rbac, "v1", "clusterrolebindings", "", {rbac, "v1", "ClusterRoleBinding"}, false);
    add(rbac, "v1", "clusterroles", "", {rbac, "v1", "ClusterRole"}, false);
    add(rbac, "v1", "rolebindings", "", {rbac, "v1", "RoleBinding"}, true);
    add(rbac, "v1", "roles", "", {rbac, "v1", "Role"}, true);

    const std::string admission = "admissionregistration.k8s.io";
    add(admission, "v1", "mutatingwebhookconfigurations", "",
        {admission, "v1", "MutatingWebhookConfiguration"}, false);
    add(admission, "v1", "validatingwebhookconfigurations", "",
        {admission, "v1", "ValidatingWebhookConfiguration"}, false);
    add(admission, "v1", "validatingadmissionpolicies", "",
        {admission, "v1", "ValidatingAdmissionPolicy"}, false);
    add(admission, "v1", "validatingadmissionpolicies", "status",
        {admission, "v1", "ValidatingAdmissionPolicy"}, false);
    add(admission, "v1", "validatingadmissionpolicybindings", "",
        {admission, "v1", "ValidatingAdmissionPolicyBinding"}, false);
    add(admission, "v1", "mutatingadmissionpolicies", "",
        {admission, "v1", "MutatingAdmissionPolicy"}, false);
    add(admission, "v1", "mutatingadmissionpolicybindings", "",
        {admission, "v1", "MutatingAdmissionPolicyBinding"}, false);

    // apiextensions-apiserver, delegated to after kube-apiserver's groups.
    const std::string apiextensions = "apiextensions.k8s.io";
    const GroupVersionKind crd{apiextensions, "v1", "CustomResourceDefinition"};
    add(apiextensions, "v1", "customresourcedefinitions", "", crd, false);
    add(apiextensions, "v1", "customresourcedefinitions", "status", crd, false);

    add("events.k8s.io", "v1", "events", "", {"events.k8s.io", "v1", "Event"}, true, "events");
    return t;
  }();
  return kTable;
}

}  // namespace

const std::vector<ResourceInfo>& builtinResources() {
  static const std::vector<ResourceInfo> kResources = [] {
    std::vector<ResourceInfo> out;
    for (const auto& entry : table()) out.push_back(entry.info);
    return out;
  }();
  return kResources;
}

std::optional<ResourceInfo> findResource(const GroupVersionResource& resource,
                                         std::string_view subresource) {
  for (const auto& entry : table()) {
    if (entry.info.resource == resource && entry.info.subresource == subresource) {
      return entry.info;
    }
  }
  return std::nullopt;
}

std::optional<ResourceInfo> findResourceForKind(const GroupVersionKind& kind) {
  for (const auto& entry : table()) {
    if (entry.info.subresource.empty() && entry.info.kind == kind) return entry.info;
  }
  return std::nullopt;
}

std::optional<std::string> resourceNameForKind(std::string_view group, std::string_view kind) {
  for (const auto& entry : table()) {
    if (entry.info.subresource.empty() && entry.info.kind.group == group &&
        entry.info.kind.kind == kind) {
      return entry.info.resource.resource;
    }
  }
  return std::nullopt;
}

std::vector<ResourceInfo> equivalentResources(const GroupVersionResource& resource,
                                              std::string_view subresource) {
  std::vector<ResourceInfo> out;
  const TableEntry* self = nullptr;
  for (const auto& entry : table()) {
    if (entry.info.resource == resource && entry.info.subresource.empty()) self = &entry;
  }
  if (self == nullptr) return out;
  for (const auto& entry : table()) {
    if (entry.storage == self->storage && entry.info.subresource == subresource) {
      out.push_back(entry.info);
    }
  }
  return out;
}

}  // namespace harness::core
