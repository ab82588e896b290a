#include "crd_controllers.h"

#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "controller_context.h"
#include "harness/sim/custom_resources.h"

namespace harness::sim::controllers {
namespace {

using nlohmann::json;

bool hasFinalizer(const json& object, std::string_view finalizer) {
  const json::json_pointer pointer("/metadata/finalizers");
  if (!object.contains(pointer) || !object.at(pointer).is_array()) return false;
  const json& finalizers = object.at(pointer);
  return std::any_of(finalizers.begin(), finalizers.end(), [&](const json& f) {
    return f.is_string() && f.get<std::string>() == finalizer;
  });
}

// apihelpers.CRDRemoveFinalizer.
void removeFinalizer(json& object, std::string_view finalizer) {
  json& finalizers = object["metadata"]["finalizers"];
  json kept = json::array();
  for (const auto& f : finalizers) {
    if (!(f.is_string() && f.get<std::string>() == finalizer)) kept.push_back(f);
  }
  if (kept.empty()) {
    object["metadata"].erase("finalizers");
  } else {
    finalizers = std::move(kept);
  }
}

// kube-apiserver's loopback client (server/config.go: the privileged loopback token's user).
core::UserInfo loopbackUser() {
  core::UserInfo user;
  user.username = "system:apiserver";
  user.groups = {"system:authenticated", "system:masters"};
  return user;
}

}  // namespace

bool CustomResourceDefinitionControllers::sync(Clock::time_point now) {
  bool wrote = false;
  const std::vector<json> all = store_.list(kCustomResourceDefinitions);
  for (const auto& crd : all) {
    const std::string version = uidOf(crd) + "/" + resourceVersionOf(crd);
    if (failed_.contains(version)) continue;
    if (terminating(crd) && hasFinalizer(crd, kCustomResourceCleanupFinalizer)) {
      wrote |= finalize(crd, now);
    } else if (status_) {
      wrote |= name(crd, all);
    }
  }
  return wrote;
}

bool CustomResourceDefinitionControllers::name(const json& crd, const std::vector<json>& all) {
  // Settled: the names accepted as requested and Established (what both controllers check
  // before they compute anything).
  const json::json_pointer spec_names("/spec/names");
  const json::json_pointer accepted("/status/acceptedNames");
  if (crdConditionTrue(crd, "Established") && crd.contains(accepted) &&
      crd.at(accepted).value("plural", "") == str(crd, "/spec/names/plural"_json_pointer) &&
      crd.at(accepted).value("kind", "") == str(crd, "/spec/names/kind"_json_pointer) &&
      crd.at(accepted) == crd.value(spec_names, json::object())) {
    return false;
  }
  std::vector<json> others;
  for (const auto& other : all) {
    if (uidOf(other) != uidOf(crd)) others.push_back(other);
  }
  const std::string version = uidOf(crd) + "/" + resourceVersionOf(crd);
  std::vector<json> writes;
  try {
    writes = status_(crd, others);
  } catch (const std::exception& e) {
    std::cerr << "apiserver-sim: crd naming/establishing: " << nameOf(crd) << ": " << e.what()
              << "\n";
    failed_.insert(version);
    return false;
  }
  bool wrote = false;
  std::string resource_version = resourceVersionOf(crd);
  for (auto& next : writes) {
    // Each write follows the one before (UpdateStatus of the object the controller holds).
    next["metadata"]["resourceVersion"] = resource_version;
    const AdmissionResult result = writeStatus(next);
    if (!result.allowed || !result.object) {
      failed_.insert(version);
      return wrote;
    }
    wrote = true;
    resource_version = resourceVersionOf(*result.object);
  }
  if (writes.empty()) failed_.insert(version);  // nothing to write for this version
  return wrote;
}

AdmissionResult CustomResourceDefinitionControllers::writeStatus(json crd) {
  WriteRequest request;
  request.operation = "UPDATE";
  request.resource = {kCustomResourceDefinitions.group, "v1", kCustomResourceDefinitions.resource};
  request.subresource = "status";
  request.name = nameOf(crd);
  request.object = std::move(crd);
  request.user_info = loopbackUser();
  request.user_agent = "kube-apiserver/v1.37.2 (linux/amd64) kubernetes/$Format";
  request.request_uri = fmt::format(
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{}/status", request.name);
  return chain_.handle(request);
}

bool CustomResourceDefinitionControllers::finalize(json crd, Clock::time_point now) {
  const std::string version = uidOf(crd) + "/" + resourceVersionOf(crd);
  const std::string timestamp = rfc3339(now);
  setCrdCondition(crd, "Terminating", "True", "InstanceDeletionInProgress",
                  "CustomResource deletion is in progress", timestamp);
  const bool established = crdConditionTrue(crd, "Established");
  if (!writeStatus(crd).allowed) {
    failed_.insert(version);
    return false;
  }
  auto current = store_.get(kCustomResourceDefinitions, "", nameOf(crd));
  if (!current) return true;
  crd = std::move(*current);
  if (established) {
    // deleteInstances: every custom resource of the CRD, from storage.
    const core::GroupResource resource{str(crd, "/spec/group"_json_pointer),
                                       str(crd, "/status/acceptedNames/plural"_json_pointer)};
    for (const auto& object : store_.list(resource)) {
      store_.remove(resource, namespaceOf(object), nameOf(object));
    }
    setCrdCondition(crd, "Terminating", "False", "InstanceDeletionCompleted",
                    "removed all instances", timestamp);
  } else {
    setCrdCondition(crd, "Terminating", "False", "NeverEstablished",
                    "resource was never established", timestamp);
  }
  removeFinalizer(crd, kCustomResourceCleanupFinalizer);
  if (!writeStatus(std::move(crd)).allowed) failed_.insert(version);
  return true;
}

}  // namespace harness::sim::controllers
