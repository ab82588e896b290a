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
//   k8s.io/apiserver pkg/registry/rest/delete.go  BeforeDelete (graceful deletion)
//   k8s.io/kubernetes pkg/registry/core/pod/strategy.go  podStrategy.CheckGracefulDelete (Pods,
//     the only graceful strategy)

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/object.h"
#include "harness/core/status.h"

namespace harness::sim::detail {

// metadata.finalizers (strings only).
std::vector<std::string> finalizersOf(const nlohmann::json& object);

// The finalizers the garbage collector's propagation puts on an object being deleted
// (store.go deletionFinalizersForGarbageCollection with shouldOrphanDependents and
// shouldDeleteDependents): "orphan" when DeleteOptions say orphanDependents: true or
// propagationPolicy Orphan, "foregroundDeletion" for Foreground; with neither option an existing
// one of the two stays, else the resource's DefaultGarbageCollectionPolicy decides (orphan for
// the versions kept for backward compatibility: core/v1 replicationcontrollers, batch/v1 jobs,
// the extensions and apps v1beta1/v1beta2 workloads, batch/v1beta1 cronjobs; events support no
// propagation). nullopt when the finalizers stay as they are; else the new list (the object's
// other finalizers first, in their order).
std::optional<std::vector<std::string>> deletionFinalizersForGarbageCollection(
    const core::GroupVersionResource& resource, const nlohmann::json& existing,
    const nlohmann::json& options);

// `object` with metadata.finalizers set to `finalizers` (the member removed when empty).
nlohmann::json withFinalizers(nlohmann::json object, const std::vector<std::string>& finalizers);

// The DELETE of `existing` as storage performs it: nullopt when the object is removed now, else
// the object as it stays (marked as deleting: deletionTimestamp, deletionGracePeriodSeconds 0,
// generation + 1 the first time; a Namespace is marked Terminating instead and stays while its
// spec.finalizers is not empty); `now` an RFC 3339 time; `options` the DeleteOptions. The
// finalizers of deletionFinalizersForGarbageCollection are set first
// (updateForGracefulDeletionAndFinalizers), so an Orphan or Foreground deletion keeps the object
// until the garbage collector removes its finalizer.
std::optional<nlohmann::json> deletionKeeps(const core::GroupVersionResource& resource,
                                            const nlohmann::json& existing,
                                            const nlohmann::json& options,
                                            const std::string& now);

// What BeforeDelete decides for an object of a graceful strategy (Pods).
// The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant()
// into a throw it cannot reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct GracefulDeletion {
  enum class Kind {
    kNotGraceful,  // not a graceful strategy, or being deleted with grace period 0 (unset)
    kPending,      // a graceful deletion is pending and not shortened: answered as stored
    kGraceful,     // updated first (marked), then deleted at once when the period is 0
  };
  Kind kind = Kind::kNotGraceful;
  nlohmann::json marked;    // kGraceful: with deletionTimestamp, deletionGracePeriodSeconds
  std::int64_t period = 0;  // kGraceful: the grace period in seconds
  // DeleteOptions.gracePeriodSeconds as BeforeDelete leaves it (the admission sees these
  // options): the period CheckGracefulDelete chose, a negative one as 1.
  std::optional<std::int64_t> options_period;
};

// BeforeDelete with the pod strategy's CheckGracefulDelete: the period is DeleteOptions'
// gracePeriodSeconds, else spec.terminationGracePeriodSeconds, else 0; 0 for a Pod not bound to
// a node (spec.nodeName) or Failed/Succeeded; negative ones count as 1. The first graceful delete
// sets deletionTimestamp to now + period and bumps a positive generation; a later one may only
// shorten the period (the timestamp moves back, never before now).
GracefulDeletion gracefulDeletion(const core::GroupResource& resource,
                                  const nlohmann::json& existing, const nlohmann::json& options,
                                  std::chrono::system_clock::time_point now);

// ShouldDeleteDuringUpdate (ShouldDeleteNamespaceDuringUpdate for Namespaces): an UPDATE that
// leaves no finalizer on an object being deleted removes it.
bool shouldDeleteDuringUpdate(const core::GroupResource& resource, const nlohmann::json& updated,
                              const nlohmann::json& existing);

// k8s.io/apiserver pkg/storage/etcd3/store.go GuaranteedUpdate: an update whose object equals the
// stored one (resourceVersion aside, which storage does not keep in the data) is not written. Only
// when the update names no resourceVersion or the stored one (a stale one is the store's 409).
bool unchangedByUpdate(const nlohmann::json& updated, const nlohmann::json& existing);

}  // namespace harness::sim::detail
