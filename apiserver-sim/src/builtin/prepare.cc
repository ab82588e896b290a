// prepareForCreate / prepareForUpdate: the registry strategies' PrepareForCreate and
// PrepareForUpdate, plus the generic part of rest.BeforeUpdate.
//
// Followed: kubernetes/kubernetes pkg/registry/core/pod/strategy.go (status Pending + qosClass;
// pods get no generation before the PodObservedGenerationTracking gate of 1.34),
// pkg/apis/core/helper/qos/qos.go (ComputePodQOS), pkg/registry/apps/{deployment,replicaset,
// statefulset,daemonset}/strategy.go, pkg/registry/batch/{job,cronjob}/strategy.go
// (generateSelectorIfNeeded), pkg/registry/core/{replicationcontroller,service,namespace}/
// strategy.go, staging/src/k8s.io/apiserver/pkg/registry/rest/update.go (BeforeUpdate keeps
// generation, uid and creationTimestamp of the stored object).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "harness/core/quantity.h"
#include "harness/sim/defaulting.h"
#include "harness/sim/object_validation.h"
#include "json_access.h"

namespace harness::sim {
namespace {

using builtin_internal::ensureObject;
using builtin_internal::forEachObjectIn;
using builtin_internal::json;
using builtin_internal::member;
using builtin_internal::objectMember;
using builtin_internal::stringMember;

// The kinds whose strategies set generation 1 on create and bump it when the spec changes.
bool isWorkload(const std::string& type) {
  return type == "apps/v1/Deployment" || type == "apps/v1/ReplicaSet" ||
         type == "apps/v1/StatefulSet" || type == "apps/v1/DaemonSet" ||
         type == "v1/ReplicationController" || type == "batch/v1/Job" ||
         type == "batch/v1/CronJob";
}

// A quantity in milli-units, nullopt when it does not parse or overflows.
std::optional<std::int64_t> milliValue(const json& value) {
  std::string text;
  if (value.is_string()) {
    text = value.get<std::string>();
  } else if (value.is_number()) {
    text = value.dump();
  } else {
    return std::nullopt;
  }
  auto quantity = core::Quantity::parse(text);
  if (!quantity.ok()) return std::nullopt;
  return quantity->milliValue();
}

// JSON after normalisation, for the semantic comparisons of the strategies (nil == empty).
json semanticView(const json& object) {
  json copy = object;
  normalizeLikeGoEncoding(copy);
  return copy;
}

void generateJobSelector(json& job) {
  json* metadata = objectMember(job, "metadata");
  json* spec = objectMember(job, "spec");
  if (metadata == nullptr || spec == nullptr) return;
  if (builtin_internal::boolMember(*spec, "manualSelector").value_or(false)) return;
  const std::string name = stringMember(*metadata, "name");
  const std::string uid = stringMember(*metadata, "uid");
  json* tmpl = ensureObject(*spec, "template");
  if (tmpl == nullptr) return;
  json* tmpl_metadata = ensureObject(*tmpl, "metadata");
  if (tmpl_metadata == nullptr) return;
  // SetDefaults_Job copies the template's label map into the Job (the same Go map); the labels
  // added below then show in both. Equal maps stand for that sharing here.
  const json* job_labels = objectMember(*metadata, "labels");
  const json* old_template_labels = objectMember(*tmpl_metadata, "labels");
  const bool shared = job_labels != nullptr && old_template_labels != nullptr &&
                      *job_labels == *old_template_labels;
  json* labels = ensureObject(*tmpl_metadata, "labels");
  if (labels == nullptr) return;
  // batch.LegacyJobNameLabel, JobNameLabel, LegacyControllerUidLabel, ControllerUidLabel.
  for (const char* key : {"job-name", "batch.kubernetes.io/job-name"}) {
    if (!labels->contains(key)) (*labels)[key] = name;
  }
  for (const char* key : {"controller-uid", "batch.kubernetes.io/controller-uid"}) {
    if (!labels->contains(key)) (*labels)[key] = uid;
  }
  if (shared) (*metadata)["labels"] = *labels;
  json* selector = ensureObject(*spec, "selector");
  if (selector == nullptr) return;
  json* match_labels = ensureObject(*selector, "matchLabels");
  if (match_labels == nullptr) return;
  if (!match_labels->contains("batch.kubernetes.io/controller-uid")) {
    (*match_labels)["batch.kubernetes.io/controller-uid"] = uid;
  }
}

void prepareNamespaceForCreate(json& ns) {
  ns["status"] = json{{"phase", "Active"}};
  json* spec = ensureObject(ns, "spec");
  if (spec == nullptr) return;
  json* finalizers = builtin_internal::ensureArray(*spec, "finalizers");
  if (finalizers == nullptr) return;
  for (const auto& f : *finalizers) {
    if (f == "kubernetes") return;
  }
  finalizers->push_back("kubernetes");
}

void prepareForCreateUnchecked(json& object) {
  const std::string type = builtin_internal::typeKey(object);
  if (type == "v1/Pod") {
    object["status"] = json{{"phase", "Pending"}, {"qosClass", podQosClass(object)}};
    return;
  }
  if (isWorkload(type)) {
    if (json* metadata = ensureObject(object, "metadata")) (*metadata)["generation"] = 1;
    object["status"] = json::object();
    if (type == "batch/v1/Job") generateJobSelector(object);
    return;
  }
  if (type == "v1/Service") {
    object["status"] = json::object();
  } else if (type == "v1/Namespace") {
    prepareNamespaceForCreate(object);
  }
}

void prepareForUpdateUnchecked(json& object, const json& old_object, bool finalize) {
  const std::string type = builtin_internal::typeKey(object);
  json* metadata = ensureObject(object, "metadata");
  const json* old_metadata = objectMember(old_object, "metadata");
  if (metadata != nullptr && old_metadata != nullptr) {
    // rest.BeforeUpdate: requests cannot change generation; uid and creationTimestamp are kept.
    if (const json* generation = member(*old_metadata, "generation")) {
      (*metadata)["generation"] = *generation;
    } else {
      metadata->erase("generation");
    }
    if (stringMember(*metadata, "uid").empty()) {
      if (const json* uid = member(*old_metadata, "uid")) (*metadata)["uid"] = *uid;
    }
    if (const json* created = member(*old_metadata, "creationTimestamp");
        created != nullptr && !created->is_null()) {
      (*metadata)["creationTimestamp"] = *created;
    }
    // rest.BeforeUpdate: "an update can never remove/change a deletion timestamp", nor remove
    // the grace period.
    if (const json* deleted = member(*old_metadata, "deletionTimestamp");
        deleted != nullptr && !deleted->is_null()) {
      (*metadata)["deletionTimestamp"] = *deleted;
    }
    if (const json* grace = member(*old_metadata, "deletionGracePeriodSeconds");
        grace != nullptr && !grace->is_null()) {
      const json* now = member(*metadata, "deletionGracePeriodSeconds");
      if (now == nullptr || now->is_null()) (*metadata)["deletionGracePeriodSeconds"] = *grace;
    }
  }
  const json* old_status = member(old_object, "status");
  const bool known = type == "v1/Pod" || type == "v1/Service" || type == "v1/Namespace" ||
                     isWorkload(type);
  if (!known) return;
  if (old_status != nullptr) {
    object["status"] = *old_status;
  } else {
    object.erase("status");
  }
  if (type == "v1/Namespace") {
    if (finalize) return;
    json* spec = ensureObject(object, "spec");
    const json* old_spec = objectMember(old_object, "spec");
    if (spec != nullptr) {
      const json* old_finalizers = old_spec != nullptr ? member(*old_spec, "finalizers") : nullptr;
      if (old_finalizers != nullptr) {
        (*spec)["finalizers"] = *old_finalizers;
      } else {
        spec->erase("finalizers");
      }
    }
    return;
  }
  if (!isWorkload(type) || metadata == nullptr) return;
  json new_view = semanticView(object);
  json old_view = semanticView(old_object);
  bool changed = new_view.value("spec", json()) != old_view.value("spec", json());
  if (type == "apps/v1/Deployment") {
    // Annotation changes bump a Deployment's generation too: they are copied to ReplicaSets.
    const json* new_meta = objectMember(new_view, "metadata");
    const json* old_meta = objectMember(old_view, "metadata");
    json none;
    const json* new_annotations = new_meta != nullptr ? member(*new_meta, "annotations") : nullptr;
    const json* old_annotations = old_meta != nullptr ? member(*old_meta, "annotations") : nullptr;
    changed = changed || (new_annotations != nullptr ? *new_annotations : none) !=
                             (old_annotations != nullptr ? *old_annotations : none);
  }
  if (changed) {
    auto old_generation =
        old_metadata != nullptr ? builtin_internal::intMember(*old_metadata, "generation")
                                : std::nullopt;
    (*metadata)["generation"] = old_generation.value_or(0) + 1;
  }
}

}  // namespace

std::string podQosClass(const json& pod) {
  const json* spec = objectMember(pod, "spec");
  if (spec == nullptr) return "BestEffort";
  // Sums in milli-units of the positive cpu/memory requests and limits.
  std::map<std::string, std::int64_t> requests;
  std::map<std::string, std::int64_t> limits;
  bool guaranteed = true;
  auto visit = [&](const json& container) {
    const json* resources = objectMember(container, "resources");
    std::set<std::string> limits_found;
    for (const char* list : {"requests", "limits"}) {
      const json* values = resources != nullptr ? objectMember(*resources, list) : nullptr;
      if (values == nullptr) continue;
      for (auto it = values->begin(); it != values->end(); ++it) {
        if (it.key() != "cpu" && it.key() != "memory") continue;
        auto milli = milliValue(it.value());
        if (!milli || *milli <= 0) continue;
        auto& totals = std::string_view(list) == "requests" ? requests : limits;
        totals[it.key()] += *milli;
        if (std::string_view(list) == "limits") limits_found.insert(it.key());
      }
    }
    if (limits_found.size() != 2) guaranteed = false;
  };
  forEachObjectIn(*spec, "containers", visit);
  forEachObjectIn(*spec, "initContainers", visit);
  if (requests.empty() && limits.empty()) return "BestEffort";
  if (guaranteed) {
    for (const auto& [name, request] : requests) {
      auto limit = limits.find(name);
      if (limit == limits.end() || limit->second != request) {
        guaranteed = false;
        break;
      }
    }
  }
  return guaranteed && requests.size() == limits.size() ? "Guaranteed" : "Burstable";
}

void prepareForCreate(json& object) {
  if (!object.is_object()) return;
  json copy = object;
  try {
    prepareForCreateUnchecked(copy);
  } catch (const json::exception&) {
    return;
  }
  // The status PrepareForCreate resets is a Go struct value: encoded with its fields that have no
  // omitempty (a ReplicaSet's `status: {replicas: 0}`, a Service's `status: {loadBalancer: {}}`),
  // as kube-apiserver answers the create (found by `apiserver-sim compare --backend kube`).
  normalizeLikeGoEncoding(copy);
  object = std::move(copy);
}

void prepareForStatusUpdate(json& object, const json& old_object) {
  // The *StatusStrategy PrepareForUpdate of pkg/registry (e.g. core/pod/strategy.go
  // podStatusStrategy, apps/deployment/strategy.go deploymentStatusStrategy): the new status over
  // the old object, whose spec (and, for pods, ownerReferences) stays.
  if (!object.is_object() || !old_object.is_object()) return;
  json updated = old_object;
  if (object.contains("status")) {
    updated["status"] = object["status"];
  } else {
    updated.erase("status");
  }
  // podStatusStrategy.PrepareForUpdate: the QoS class is set at creation and backfilled when
  // the new status has none.
  if (builtin_internal::typeKey(old_object) == "v1/Pod" && old_object.contains("status") &&
      old_object["status"].is_object() && old_object["status"].contains("qosClass") &&
      updated.contains("status") && updated["status"].is_object() &&
      updated["status"].value("qosClass", json("")) == "") {
    updated["status"]["qosClass"] = old_object["status"]["qosClass"];
  }
  if (object.contains("metadata") && object["metadata"].is_object()) {
    // Labels and annotations may change through status like through the main resource, except
    // on the apps workloads, whose status strategies keep the old labels
    // (apps/deployment/strategy.go: newDeployment.Labels = oldDeployment.Labels).
    const std::string type = builtin_internal::typeKey(old_object);
    const bool keeps_labels = type.rfind("apps/", 0) == 0;
    for (const char* key : {"labels", "annotations", "resourceVersion"}) {
      if (keeps_labels && std::string_view(key) == "labels") continue;
      if (object["metadata"].contains(key)) {
        updated["metadata"][key] = object["metadata"][key];
      } else if (std::string_view(key) != "resourceVersion") {
        updated["metadata"].erase(key);
      }
    }
  }
  object = std::move(updated);
}

namespace {

void prepareForUpdateChecked(json& object, const json& old_object, bool finalize) {
  if (!object.is_object() || !old_object.is_object()) return;
  json copy = object;
  try {
    prepareForUpdateUnchecked(copy, old_object, finalize);
  } catch (const json::exception&) {
    return;
  }
  object = std::move(copy);
}

}  // namespace

void prepareForUpdate(json& object, const json& old_object) {
  prepareForUpdateChecked(object, old_object, false);
}

void prepareForFinalizeUpdate(json& object, const json& old_object) {
  prepareForUpdateChecked(object, old_object, true);
}

}  // namespace harness::sim
