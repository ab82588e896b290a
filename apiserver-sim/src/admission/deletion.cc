// The registry's deletion life cycle (see deletion.h for the upstream functions followed).

#include "deletion.h"

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

}  // namespace

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

std::optional<json> deletionKeeps(const core::GroupResource& resource, const json& existing,
                                  const std::string& now) {
  if (isNamespaces(resource)) {
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
  }
  // Store.Delete through updateForGracefulDeletionAndFinalizers: with finalizers pending the
  // object is only marked (again: the timestamp stays).
  if (!finalizersOf(existing).empty()) return markAsDeleting(existing, now);
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
