#include "harness/sim/custom_resources.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "harness/sim/store.h"

namespace harness::sim {
namespace {

using nlohmann::json;

std::string stringAt(const json& object, const json::json_pointer& pointer) {
  if (!object.contains(pointer)) return {};
  const json& value = object.at(pointer);
  return value.is_string() ? value.get<std::string>() : std::string();
}

std::vector<std::string> stringsAt(const json& object, const json::json_pointer& pointer) {
  std::vector<std::string> out;
  if (!object.contains(pointer)) return out;
  const json& value = object.at(pointer);
  if (!value.is_array()) return out;
  for (const auto& item : value) {
    if (item.is_string()) out.push_back(item.get<std::string>());
  }
  return out;
}

}  // namespace

bool crdConditionTrue(const json& crd, std::string_view type) {
  const json::json_pointer pointer("/status/conditions");
  if (!crd.contains(pointer) || !crd.at(pointer).is_array()) return false;
  for (const auto& condition : crd.at(pointer)) {
    if (condition.is_object() && condition.value("type", "") == type) {
      return condition.value("status", "") == "True";
    }
  }
  return false;
}

void setCrdCondition(json& crd, std::string_view type, std::string_view status,
                     std::string_view reason, std::string_view message, const std::string& now) {
  if (!crd.contains("status") || !crd["status"].is_object()) crd["status"] = json::object();
  json& conditions = crd["status"]["conditions"];
  if (!conditions.is_array()) conditions = json::array();
  json condition = {{"type", type}, {"status", status}, {"reason", reason}, {"message", message}};
  for (auto& existing : conditions) {
    if (existing.is_object() && existing.value("type", "") == type) {
      // apihelpers.SetCRDCondition: the transition time moves only with the status.
      condition["lastTransitionTime"] = existing.value("status", "") == status
                                            ? existing.value("lastTransitionTime", json(now))
                                            : json(now);
      existing = std::move(condition);
      return;
    }
  }
  condition["lastTransitionTime"] = now;
  conditions.push_back(std::move(condition));
}

namespace {

void appendServed(const std::shared_ptr<const json>& crd, std::vector<ServedCustomResource>& out) {
  const json& definition = *crd;
  if (!crdConditionTrue(definition, "Established")) return;
  const std::string group = stringAt(definition, json::json_pointer("/spec/group"));
  const std::string plural = stringAt(definition, json::json_pointer("/status/acceptedNames/plural"));
  const std::string kind = stringAt(definition, json::json_pointer("/status/acceptedNames/kind"));
  if (group.empty() || plural.empty() || kind.empty()) return;
  const bool namespaced =
      stringAt(definition, json::json_pointer("/spec/scope")) != "Cluster";
  const bool terminating = crdConditionTrue(definition, "Terminating");
  const bool webhook_conversion =
      stringAt(definition, json::json_pointer("/spec/conversion/strategy")) == "Webhook";
  const json::json_pointer versions_pointer("/spec/versions");
  if (!definition.contains(versions_pointer) || !definition.at(versions_pointer).is_array()) return;
  for (const auto& version : definition.at(versions_pointer)) {
    if (!version.is_object() || !version.value("served", false)) continue;
    const std::string name = version.value("name", "");
    if (name.empty()) continue;
    ServedCustomResource served;
    served.info = {{group, name, plural}, "", {group, name, kind}, namespaced};
    served.singular = stringAt(definition, json::json_pointer("/status/acceptedNames/singular"));
    served.short_names = stringsAt(definition, json::json_pointer("/status/acceptedNames/shortNames"));
    served.categories = stringsAt(definition, json::json_pointer("/status/acceptedNames/categories"));
    served.list_kind = stringAt(definition, json::json_pointer("/status/acceptedNames/listKind"));
    served.verbs = terminating ? std::vector<std::string>{"delete", "deletecollection", "get",
                                                          "list", "watch"}
                               : std::vector<std::string>{"delete", "deletecollection", "get",
                                                          "list", "patch", "create", "update",
                                                          "watch"};
    served.definition = crd;
    served.needs_conversion_webhook = webhook_conversion && !version.value("storage", false);
    out.push_back(served);
    const json* subresources = version.contains("subresources") && version["subresources"].is_object()
                                   ? &version["subresources"]
                                   : nullptr;
    if (subresources != nullptr && subresources->contains("status")) {
      ServedCustomResource status = served;
      status.info.subresource = "status";
      status.verbs = {"get", "patch", "update"};
      status.short_names.clear();
      status.categories.clear();
      out.push_back(std::move(status));
    }
    if (subresources != nullptr && subresources->contains("scale")) {
      ServedCustomResource scale = served;
      scale.info.subresource = "scale";
      scale.info.kind = {"autoscaling", "v1", "Scale"};
      scale.verbs = {"get", "patch", "update"};
      scale.short_names.clear();
      scale.categories.clear();
      out.push_back(std::move(scale));
    }
  }
}

// k8s.io/apimachinery/pkg/version/helpers.go parseKubeVersion: v<major>[(alpha|beta)<minor>].
struct KubeVersion {
  bool ok = false;
  int major = 0;
  int kind = 2;  // 2 GA, 1 beta, 0 alpha
  int minor = 0;
};

KubeVersion parseKubeVersion(std::string_view v) {
  KubeVersion out;
  if (v.size() < 2 || v[0] != 'v') return out;
  std::size_t i = 1;
  auto number = [&](int& value) {
    const std::size_t start = i;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])) != 0) {
      value = value * 10 + (v[i] - '0');
      ++i;
    }
    // No leading zeros, at least one digit (the helper's regexp: [1-9][0-9]*).
    return i > start && v[start] != '0';
  };
  if (!number(out.major)) return out;
  if (i == v.size()) {
    out.ok = true;
    return out;
  }
  if (v.substr(i, 5) == "alpha") {
    out.kind = 0;
    i += 5;
  } else if (v.substr(i, 4) == "beta") {
    out.kind = 1;
    i += 4;
  } else {
    return out;
  }
  if (!number(out.minor) || i != v.size()) return out;
  out.ok = true;
  return out;
}

}  // namespace

bool kubeAwareVersionBefore(std::string_view a, std::string_view b) {
  // CompareKubeAwareVersionStrings: Kubernetes versions before the others; GA before beta before
  // alpha; higher major, then higher minor, first; the others alphabetically.
  const KubeVersion va = parseKubeVersion(a);
  const KubeVersion vb = parseKubeVersion(b);
  if (va.ok != vb.ok) return va.ok;
  if (!va.ok) return a < b;
  if (va.kind != vb.kind) return va.kind > vb.kind;
  if (va.major != vb.major) return va.major > vb.major;
  return va.minor > vb.minor;
}

std::vector<ServedCustomResource> servedCustomResources(const ObjectStore& store) {
  std::vector<ServedCustomResource> out;
  for (auto& crd : store.list(kCustomResourceDefinitions)) {
    appendServed(std::make_shared<const json>(std::move(crd)), out);
  }
  return out;
}

std::optional<ServedCustomResource> findCustomResource(const ObjectStore& store,
                                                       const core::GroupVersionResource& resource,
                                                       std::string_view subresource) {
  for (auto& served : servedCustomResources(store)) {
    if (served.info.resource == resource && served.info.subresource == subresource) {
      return std::move(served);
    }
  }
  return std::nullopt;
}

std::optional<nlohmann::json> customResourceDefinitionFor(const ObjectStore& store,
                                                          const core::GroupResource& resource) {
  // The CRD's name is <plural>.<group> (its validation says so); the accepted plural is the
  // one served.
  if (auto crd = store.get(kCustomResourceDefinitions, "", resource.resource + "." + resource.group)) {
    if (stringAt(*crd, json::json_pointer("/status/acceptedNames/plural")) == resource.resource) {
      return crd;
    }
  }
  for (auto& crd : store.list(kCustomResourceDefinitions)) {
    if (stringAt(crd, json::json_pointer("/spec/group")) == resource.group &&
        stringAt(crd, json::json_pointer("/status/acceptedNames/plural")) == resource.resource) {
      return std::move(crd);
    }
  }
  return std::nullopt;
}

}  // namespace harness::sim
