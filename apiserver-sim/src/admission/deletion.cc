// The registry's deletion life cycle (see deletion.h for the upstream functions followed).

#include "deletion.h"

#include <algorithm>
#include <ctime>
#include <set>
#include <string_view>

#include "harness/sim/custom_resources.h"
#include "harness/sim/store.h"

namespace harness::sim::detail {
namespace {

using json = nlohmann::json;

bool isNamespaces(const core::GroupResource& resource) {
  return resource.group.empty() && resource.resource == "namespaces";
}

const json* metadataOf(const json& object) {
  if (!object.is_object()) return nullptr;
  auto it = object.find("metadata");
  return it != object.end() && it->is_object() ? &*it : nullptr;
}

bool hasDeletionTimestamp(const json& object) {
  const json* metadata = metadataOf(object);
  if (metadata == nullptr) return false;
  auto it = metadata->find("deletionTimestamp");
  return it != metadata->end() && !it->is_null();
}

// The namespace's spec.finalizers (finalizer names such as "kubernetes").
bool hasSpecFinalizers(const json& object) {
  if (!object.is_object()) return false;
  auto spec = object.find("spec");
  if (spec == object.end() || !spec->is_object()) return false;
  auto finalizers = spec->find("finalizers");
  return finalizers != spec->end() && finalizers->is_array() && !finalizers->empty();
}

// store.go markAsDeleting.
json markAsDeleting(json object, const std::string& now) {
  json& metadata = object["metadata"];
  if (!hasDeletionTimestamp(object)) {
    auto generation = metadata.find("generation");
    if (generation != metadata.end() && generation->is_number_integer() &&
        generation->get<std::int64_t>() > 0) {
      *generation = generation->get<std::int64_t>() + 1;
    }
    metadata["deletionTimestamp"] = now;
  }
  metadata["deletionGracePeriodSeconds"] = 0;
  return object;
}

// An integer member of a mapping, or nullopt.
std::optional<std::int64_t> integerAt(const json* object, const char* key) {
  if (object == nullptr || !object->is_object()) return std::nullopt;
  auto it = object->find(key);
  if (it == object->end() || !it->is_number_integer()) return std::nullopt;
  return it->get<std::int64_t>();
}

std::string stringAt(const json* object, const char* key) {
  if (object == nullptr || !object->is_object()) return {};
  auto it = object->find(key);
  return it != object->end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json* memberOf(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it != object.end() && it->is_object() ? &*it : nullptr;
}


}  // namespace

GracefulDeletion gracefulDeletion(const core::GroupResource& resource, const json& existing,
                                  const json& options, std::chrono::system_clock::time_point now) {
  GracefulDeletion out;
  if (!resource.group.empty() || resource.resource != "pods" || metadataOf(existing) == nullptr) {
    return out;
  }
  // BeforeDelete: negative periods (the options' and the object's) count as 1 s.
  std::optional<std::int64_t> requested = integerAt(&options, "gracePeriodSeconds");
  if (requested && *requested < 0) requested = 1;
  out.options_period = requested;
  json marked = existing;
  json& metadata = marked["metadata"];
  std::optional<std::int64_t> current = integerAt(&metadata, "deletionGracePeriodSeconds");
  if (current && *current < 0) {
    current = 1;
    metadata["deletionGracePeriodSeconds"] = 1;
  }
  if (hasDeletionTimestamp(existing)) {
    // Being deleted: with no (or a zero) period the deletion goes on as for other kinds; else
    // only a shorter period is taken, anything else leaves the pending deletion alone.
    if (!current || *current == 0) return out;
    if (!requested || *requested >= *current) {
      out.kind = GracefulDeletion::Kind::kPending;
      return out;
    }
    std::int64_t period = *requested;
    auto timestamp = parseRfc3339(stringAt(&metadata, "deletionTimestamp")).value_or(now) -
                     std::chrono::seconds(*current) + std::chrono::seconds(period);
    if (timestamp < now) {
      timestamp = now;
      if (period != 0) period = 1;
    }
    metadata["deletionTimestamp"] = rfc3339(timestamp);
    metadata["deletionGracePeriodSeconds"] = period;
    out.kind = GracefulDeletion::Kind::kGraceful;
    out.marked = std::move(marked);
    out.period = period;
    return out;
  }
  // podStrategy.CheckGracefulDelete.
  const json* spec = memberOf(existing, "spec");
  std::int64_t period =
      requested.value_or(integerAt(spec, "terminationGracePeriodSeconds").value_or(0));
  if (stringAt(spec, "nodeName").empty()) period = 0;
  const std::string phase = stringAt(memberOf(existing, "status"), "phase");
  if (phase == "Failed" || phase == "Succeeded") period = 0;
  if (period < 0) period = 1;
  out.options_period = period;
  metadata["deletionTimestamp"] = rfc3339(now + std::chrono::seconds(period));
  metadata["deletionGracePeriodSeconds"] = period;
  if (auto generation = integerAt(&metadata, "generation"); generation && *generation > 0) {
    metadata["generation"] = *generation + 1;
  }
  out.kind = GracefulDeletion::Kind::kGraceful;
  out.marked = std::move(marked);
  out.period = period;
  return out;
}

std::vector<std::string> finalizersOf(const json& object) {
  std::vector<std::string> out;
  const json* metadata = metadataOf(object);
  if (metadata == nullptr) return out;
  auto finalizers = metadata->find("finalizers");
  if (finalizers == metadata->end() || !finalizers->is_array()) return out;
  for (const auto& f : *finalizers) {
    if (f.is_string()) out.push_back(f.get<std::string>());
  }
  return out;
}

namespace {

constexpr std::string_view kOrphanFinalizer = "orphan";
constexpr std::string_view kForegroundFinalizer = "foregroundDeletion";

enum class GcPolicy { kDeleteDependents, kOrphanDependents, kUnsupported };

// The strategies' DefaultGarbageCollectionPolicy for the version called (RequestInfo's group and
// version): pkg/registry/core/replicationcontroller, batch/job, batch/cronjob, apps/deployment,
// apps/replicaset, apps/daemonset, apps/statefulset strategy.go; core/event strategy.go.
GcPolicy defaultGcPolicy(const core::GroupVersionResource& r) {
  const std::string& g = r.group;
  const std::string& v = r.version;
  const std::string& res = r.resource;
  if (g.empty() && res == "events") return GcPolicy::kUnsupported;
  if (g.empty() && v == "v1" && res == "replicationcontrollers") return GcPolicy::kOrphanDependents;
  if (g == "batch" && v == "v1" && res == "jobs") return GcPolicy::kOrphanDependents;
  if (g == "batch" && v == "v1beta1" && res == "cronjobs") return GcPolicy::kOrphanDependents;
  const bool workload = res == "deployments" || res == "replicasets" || res == "daemonsets" ||
                        res == "statefulsets" || res == "replicationcontrollers";
  if (workload && (g == "extensions" || (g == "apps" && (v == "v1beta1" || v == "v1beta2")))) {
    return GcPolicy::kOrphanDependents;
  }
  return GcPolicy::kDeleteDependents;
}

std::optional<bool> booleanAt(const json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_boolean()) return std::nullopt;
  return it->get<bool>();
}

}  // namespace

std::optional<std::vector<std::string>> deletionFinalizersForGarbageCollection(
    const core::GroupVersionResource& resource, const json& existing, const json& options) {
  const GcPolicy policy = defaultGcPolicy(resource);
  if (policy == GcPolicy::kUnsupported) return std::nullopt;
  const std::vector<std::string> finalizers = finalizersOf(existing);
  auto has = [&](std::string_view f) {
    return std::find(finalizers.begin(), finalizers.end(), f) != finalizers.end();
  };
  const std::optional<bool> orphan_dependents = booleanAt(options, "orphanDependents");
  const std::string propagation = stringAt(&options, "propagationPolicy");
  // shouldOrphanDependents: the options first, then an existing finalizer, then the default.
  bool orphan = policy == GcPolicy::kOrphanDependents;
  if (orphan_dependents) {
    orphan = *orphan_dependents;
  } else if (propagation == "Orphan") {
    orphan = true;
  } else if (propagation == "Background" || propagation == "Foreground") {
    orphan = false;
  } else {
    for (const auto& f : finalizers) {
      if (f == kOrphanFinalizer || f == kForegroundFinalizer) {
        orphan = f == kOrphanFinalizer;
        break;
      }
    }
  }
  // shouldDeleteDependents.
  bool foreground = false;
  if (!orphan_dependents) {
    if (propagation == "Foreground") {
      foreground = true;
    } else if (propagation.empty()) {
      foreground = has(kForegroundFinalizer);
    }
  }
  std::vector<std::string> out;
  for (const auto& f : finalizers) {
    if (f != kOrphanFinalizer && f != kForegroundFinalizer) out.push_back(f);
  }
  if (orphan) out.emplace_back(kOrphanFinalizer);
  if (foreground) out.emplace_back(kForegroundFinalizer);
  // Compared as sets (sets.NewString(...).Equal).
  const std::set<std::string> before(finalizers.begin(), finalizers.end());
  const std::set<std::string> after(out.begin(), out.end());
  if (before == after) return std::nullopt;
  return out;
}

json withFinalizers(json object, const std::vector<std::string>& finalizers) {
  if (finalizers.empty()) {
    if (object.contains("metadata") && object["metadata"].is_object()) {
      object["metadata"].erase("finalizers");
    }
  } else {
    object["metadata"]["finalizers"] = finalizers;
  }
  return object;
}

std::optional<json> deletionKeeps(const core::GroupVersionResource& resource,
                                  const json& existing, const json& options,
                                  const std::string& now) {
  if (isNamespaces({resource.group, resource.resource})) {
    // namespace storage REST.Delete: the first DELETE sets deletionTimestamp and phase
    // Terminating and answers the namespace; later ones answer it unchanged while
    // spec.finalizers is not empty (the namespace controller empties it through /finalize).
    if (!hasDeletionTimestamp(existing)) {
      json marked = existing;
      marked["metadata"]["deletionTimestamp"] = now;
      if (!marked.contains("status") || !marked["status"].is_object()) {
        marked["status"] = json::object();
      }
      marked["status"]["phase"] = "Terminating";
      return marked;
    }
    if (hasSpecFinalizers(existing)) return existing;
    if (!finalizersOf(existing).empty()) return markAsDeleting(existing, now);
    return std::nullopt;
  }
  if (resource.group == kCustomResourceDefinitions.group &&
      resource.resource == kCustomResourceDefinitions.resource && !hasDeletionTimestamp(existing)) {
    // customresourcedefinition/etcd.go REST.Delete: the first DELETE sets deletionTimestamp,
    // the customresourcecleanup finalizer and the Terminating condition, and answers the CRD;
    // the finalizer's controller deletes the custom resources, then removes it.
    json marked = existing;
    marked["metadata"]["deletionTimestamp"] = now;
    std::vector<std::string> finalizers = finalizersOf(existing);
    if (std::find(finalizers.begin(), finalizers.end(), kCustomResourceCleanupFinalizer) ==
        finalizers.end()) {
      finalizers.emplace_back(kCustomResourceCleanupFinalizer);
    }
    marked = withFinalizers(std::move(marked), finalizers);
    setCrdCondition(marked, "Terminating", "True", "InstanceDeletionPending",
                    "CustomResourceDefinition marked for deletion; CustomResource deletion will "
                    "begin soon",
                    now);
    return marked;
  }
  // Store.Delete through updateForGracefulDeletionAndFinalizers: the propagation's finalizers
  // are set; with finalizers pending the object is only marked (again: the timestamp stays).
  json updated = existing;
  if (auto finalizers = deletionFinalizersForGarbageCollection(resource, existing, options)) {
    updated = withFinalizers(std::move(updated), *finalizers);
  }
  if (!finalizersOf(updated).empty()) return markAsDeleting(std::move(updated), now);
  return std::nullopt;
}

bool shouldDeleteDuringUpdate(const core::GroupResource& resource, const json& updated,
                              const json& existing) {
  if (isNamespaces(resource) && hasSpecFinalizers(updated)) return false;
  if (!finalizersOf(updated).empty()) return false;
  if (!hasDeletionTimestamp(existing)) return false;
  const json* metadata = metadataOf(existing);
  auto grace = metadata->find("deletionGracePeriodSeconds");
  return grace == metadata->end() || grace->is_null() ||
         (grace->is_number_integer() && grace->get<std::int64_t>() == 0);
}

bool unchangedByUpdate(const json& updated, const json& existing) {
  const json* new_metadata = metadataOf(updated);
  const json* old_metadata = metadataOf(existing);
  if (new_metadata == nullptr || old_metadata == nullptr) return false;
  const std::string old_version = old_metadata->value("resourceVersion", json("")).is_string()
                                      ? old_metadata->value("resourceVersion", std::string())
                                      : std::string();
  const json new_version = new_metadata->value("resourceVersion", json(""));
  if (!new_version.is_string() ||
      (!new_version.get<std::string>().empty() && new_version.get<std::string>() != old_version)) {
    return false;
  }
  json a = updated;
  json b = existing;
  a["metadata"].erase("resourceVersion");
  b["metadata"].erase("resourceVersion");
  return a == b;
}

}  // namespace harness::sim::detail
