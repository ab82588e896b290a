#pragma once

// Internal to the admission module: what the registry's storage does on DELETE beyond removing
// the object, and the deletion an UPDATE can finish (the "finalizer" life cycle), as
// kube-apiserver does it:
//   k8s.io/apiserver pkg/registry/generic/registry/store.go  Delete,
//     updateForGracefulDeletionAndFinalizers, markAsDeleting, ShouldDeleteDuringUpdate,
//     deletionFinalizersForGarbageCollection
//   k8s.io/kubernetes pkg/registry/core/namespace/storage/storage.go  REST.Delete (the first
//     DELETE of a Namespace marks it Terminating; it goes only once spec.finalizers is empty),
//     ShouldDeleteNamespaceDuringUpdate
// Graceful deletion (Pods bound to a node) does not exist here: no Pod is ever scheduled, and
// kube-apiserver deletes an unscheduled Pod at once too (pod strategy CheckGracefulDelete).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/status.h"

namespace harness::sim::detail {

// metadata.finalizers (strings only).
std::vector<std::string> finalizersOf(const nlohmann::json& object);

// The DELETE of `existing` as storage performs it: nullopt when the object is removed now, else
// the object as it stays (marked as deleting: deletionTimestamp, deletionGracePeriodSeconds 0,
// generation + 1 the first time; a Namespace is marked Terminating instead and stays while its
// spec.finalizers is not empty); `now` an RFC 3339 time. Every deletion propagates in the
// background here: the orphan and foregroundDeletion finalizers that DeleteOptions would add
// (deletionFinalizersForGarbageCollection) are not, because the simulator's garbage collector
// would never remove them.
std::optional<nlohmann::json> deletionKeeps(const core::GroupResource& resource,
                                            const nlohmann::json& existing,
                                            const std::string& now);

// ShouldDeleteDuringUpdate (ShouldDeleteNamespaceDuringUpdate for Namespaces): an UPDATE that
// leaves no finalizer on an object being deleted removes it.
bool shouldDeleteDuringUpdate(const core::GroupResource& resource, const nlohmann::json& updated,
                              const nlohmann::json& existing);

// k8s.io/apiserver pkg/storage/etcd3/store.go GuaranteedUpdate: an update whose object equals the
// stored one (resourceVersion aside, which storage does not keep in the data) is not written. Only
// when the update names no resourceVersion or the stored one (a stale one is the store's 409).
bool unchangedByUpdate(const nlohmann::json& updated, const nlohmann::json& existing);

}  // namespace harness::sim::detail
