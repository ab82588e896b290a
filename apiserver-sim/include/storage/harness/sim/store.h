#pragma once

// The simulator's object store: what etcd plus the registry give kube-apiserver, reduced to what
// admission and the REST API need. Objects are kept as written (the versioned JSON of the version
// they were created in), keyed by group, resource, namespace and name; every write bumps one
// global resourceVersion, as etcd's revision does. Thread-safe: the REST API, the injector's
// lookups and the scenario runner use it concurrently.

#include <chrono>
#include <cstdint>
#include <functional>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/status.h"

namespace harness::sim {

// utilrand's alphabet (k8s.io/apimachinery/pkg/util/rand/rand.go: no vowels, no confusable
// characters) and the length of the suffix utilrand.String(5) draws from it. Names made from
// metadata.generateName (k8s.io/apiserver pkg/storage/names/generate.go) and the ServiceAccount
// plugin's kube-api-access-<suffix> volume end in one: the store makes them, the scenario
// comparisons recognise them.
inline constexpr std::string_view kRandAlphabet = "bcdfghjklmnpqrstvwxz2456789";
inline constexpr int kRandSuffixLength = 5;
// An ECMAScript regular expression for one such suffix: "[bcdf...789]{5}".
inline std::string randSuffixPattern() {
  return "[" + std::string(kRandAlphabet) + "]{" + std::to_string(kRandSuffixLength) + "}";
}

// An object, or the Status the API server answers with (404 NotFound, 409 AlreadyExists...).
using StoreResult = std::variant<nlohmann::json, core::Status>;

struct StoreKey {
  std::string group;
  std::string resource;  // plural: "pods"
  std::string namespace_name;
  std::string name;

  auto operator<=>(const StoreKey&) const = default;
};

// One change of one object, as the watch cache keeps it (k8s.io/apiserver pkg/storage/cacher
// watch_cache.go watchCacheEvent): the object after the change (for a deletion its last state
// with the deletion's resourceVersion), the state before it (MODIFIED and DELETED), and the
// store revision the change made.
struct StoreEvent {
  enum class Type { kAdded, kModified, kDeleted };
  Type type = Type::kAdded;
  core::GroupResource resource;
  nlohmann::json object;
  std::optional<nlohmann::json> previous;
  std::uint64_t revision = 0;
};
using StoreEventPtr = std::shared_ptr<const StoreEvent>;
// "ADDED", "MODIFIED", "DELETED" (watch.EventType).
std::string_view eventTypeName(StoreEvent::Type type);

// A watch's start, from ObjectStore::watch: the events to send first, then `sink` gets each new
// one until the subscription is destroyed.
class StoreSubscription;
struct WatchStart {
  std::vector<StoreEventPtr> replay;  // in revision order
  std::uint64_t revision = 0;         // the store revision the replay reaches
  std::unique_ptr<StoreSubscription> subscription;
};

class ObjectStore {
 public:
  ObjectStore();

  // A copy of the stored object, or nullopt.
  [[nodiscard]] std::optional<nlohmann::json> get(const core::GroupResource& resource,
                                                  const std::string& namespace_name,
                                                  const std::string& name) const;
  // Objects of a resource in a namespace ("" = every namespace), ordered by namespace and name.
  [[nodiscard]] std::vector<nlohmann::json> list(const core::GroupResource& resource,
                                                 const std::string& namespace_name = {}) const;

  // Stores a new object. Server-set fields are filled as the registry does: metadata.name from
  // generateName plus 5 random characters when name is empty (BeforeCreate), uid (UUID v4) and
  // creationTimestamp (RFC 3339, seconds) unless set (the admission chain sets both before
  // admission, as BeforeCreate does), resourceVersion, generation 1 for objects with a spec
  // other than Pods/Namespaces-less kinds (see store.cc). 409 AlreadyExists when the key exists.
  StoreResult create(const core::GroupResource& resource, nlohmann::json object);
  // Replaces a stored object (uid, creationTimestamp kept; resourceVersion bumped). 404 NotFound
  // when absent; 409 Conflict when the object carries a resourceVersion that is not the stored
  // one ("the object has been modified; please apply your changes to the latest version and try
  // again").
  StoreResult update(const core::GroupResource& resource, nlohmann::json object);
  // Removes and returns the stored object, or 404 NotFound.
  StoreResult remove(const core::GroupResource& resource, const std::string& namespace_name,
                     const std::string& name);
  // Stores without server-set field handling except a missing uid/resourceVersion (scenario seed
  // state); replaces an existing object.
  nlohmann::json put(const core::GroupResource& resource, nlohmann::json object);

  // The store's current revision (the last resourceVersion handed out).
  [[nodiscard]] std::uint64_t revision() const;
  // kRandSuffixLength characters of kRandAlphabet, from the store's generator (seedable for
  // reproducible runs).
  std::string randomSuffix();
  void seed(std::uint64_t seed);
  // A random UUID v4 from the same generator.
  std::string newUid();

  // Called after every successful write with the resource and the new object state (nullopt for
  // a deletion); used to invalidate caches. Not called under the store's lock.
  void onChange(std::function<void(const core::GroupResource&)> listener);

  // --- watch: a ring of recent events per resource, as kube-apiserver's watch cache ---
  // Events of `resources` (one storage may be served under several: apps and extensions
  // deployments) from a point, then live. `since` nullopt: the current objects as ADDED events
  // (the watch cache's initial events); a revision: the events after it, or 410 Expired "too old
  // resource version: <since> (<oldest-1>)" when the ring no longer holds them (watch_cache.go
  // getAllEventsSinceLocked). `sink` runs on the writer's thread with the store locked, in
  // revision order: it must only queue the event (no store calls).
  std::variant<WatchStart, core::Status> watch(std::vector<core::GroupResource> resources,
                                               std::optional<std::uint64_t> since,
                                               std::function<void(const StoreEventPtr&)> sink);
  // Events kept per resource (default kDefaultEventCapacity; at least 1). Shrinking drops the
  // oldest.
  void setEventCapacity(std::size_t capacity);
  static constexpr std::size_t kDefaultEventCapacity = 1024;

  // --- snapshots: a store's contents to start other stores from ---
  // The objects, the revision and the watch cache's events at one point. The scenario runner
  // stores RBAC's bootstrap policy once per process and starts every scenario's store from it:
  // about 150 objects shared instead of 150 creates and the aggregation controller's pass.
  class Snapshot;
  [[nodiscard]] std::shared_ptr<const Snapshot> snapshot() const;
  // Replaces the contents and the revision with the snapshot's (objects and events are shared,
  // not copied). For a store no one has written to or watched yet (the generator's state and the
  // change listeners are kept; they are not told).
  void restore(const Snapshot& snapshot);

 private:
  friend class StoreSubscription;
  struct Subscriber {
    std::uint64_t id;
    std::vector<core::GroupResource> resources;
    std::function<void(const StoreEventPtr&)> sink;
  };
  struct EventRing {
    std::deque<StoreEventPtr> events;
    // Revisions up to this one can no longer be replayed (an event was dropped).
    std::uint64_t floor = 0;
  };
  // Appends to the resource's ring and hands the event to its subscribers (lock held).
  void recordLocked(StoreEvent event);
  void unsubscribe(std::uint64_t id);

  StoreResult createLocked(const core::GroupResource& resource, nlohmann::json object);
  std::string randomSuffixLocked();
  std::string newUidLocked();
  void notify(const core::GroupResource& resource);

  mutable std::mutex mutex_;
  // Immutable once stored (a write stores a new one), so that snapshots share them.
  std::map<StoreKey, std::shared_ptr<const nlohmann::json>> objects_;
  std::uint64_t revision_ = 0;
  std::uint64_t rng_state_;
  std::vector<std::function<void(const core::GroupResource&)>> listeners_;
  std::map<std::pair<std::string, std::string>, EventRing> rings_;  // by group, resource
  std::size_t event_capacity_ = kDefaultEventCapacity;
  std::vector<Subscriber> subscribers_;
  std::uint64_t next_subscriber_ = 0;
};

// Unsubscribes when destroyed; the store must outlive it.
class StoreSubscription {
 public:
  StoreSubscription(ObjectStore& store, std::uint64_t id) : store_(store), id_(id) {}
  ~StoreSubscription() { store_.unsubscribe(id_); }
  StoreSubscription(const StoreSubscription&) = delete;
  StoreSubscription& operator=(const StoreSubscription&) = delete;

 private:
  ObjectStore& store_;
  std::uint64_t id_;
};

// RFC 3339 UTC timestamp with seconds, as metav1.Time marshals ("2026-11-22T10:00:00Z").
std::string rfc3339Now();
std::string rfc3339(std::chrono::system_clock::time_point time);
// metav1.Time's text (RFC 3339 in UTC, whole seconds) as a time point; nullopt for other text.
std::optional<std::chrono::system_clock::time_point> parseRfc3339(const std::string& text);

}  // namespace harness::sim
