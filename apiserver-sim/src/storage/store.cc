#include "harness/sim/store.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>

#include <fmt/format.h>

#include "harness/core/unstructured.h"

namespace harness::sim {
namespace {

std::uint64_t splitMix(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30U)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27U)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31U);
}

StoreKey keyOf(const core::GroupResource& resource, const nlohmann::json& object) {
  return StoreKey{resource.group, resource.resource,
                  core::nestedString(object, {"metadata", "namespace"}),
                  core::nestedString(object, {"metadata", "name"})};
}

nlohmann::json& metadataOf(nlohmann::json& object) {
  auto& metadata = object["metadata"];
  if (!metadata.is_object()) metadata = nlohmann::json::object();
  return metadata;
}

}  // namespace

std::string rfc3339Now() { return rfc3339(std::chrono::system_clock::now()); }

std::optional<std::chrono::system_clock::time_point> parseRfc3339(const std::string& text) {
  std::tm tm{};
  const char* end = strptime(text.c_str(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  if (end == nullptr || *end != '\0') return std::nullopt;
  return std::chrono::system_clock::from_time_t(timegm(&tm));
}

std::string rfc3339(std::chrono::system_clock::time_point time) {
  const std::time_t now = std::chrono::system_clock::to_time_t(time);
  std::tm tm{};
  gmtime_r(&now, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

ObjectStore::ObjectStore()
    : rng_state_(static_cast<std::uint64_t>(
          std::chrono::steady_clock::now().time_since_epoch().count())) {}

std::optional<nlohmann::json> ObjectStore::get(const core::GroupResource& resource,
                                               const std::string& namespace_name,
                                               const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto it = objects_.find(StoreKey{resource.group, resource.resource, namespace_name, name});
  if (it == objects_.end()) return std::nullopt;
  return *it->second;
}

std::vector<nlohmann::json> ObjectStore::list(const core::GroupResource& resource,
                                              const std::string& namespace_name) const {
  std::lock_guard lock(mutex_);
  std::vector<nlohmann::json> out;
  const StoreKey from{resource.group, resource.resource, namespace_name, ""};
  for (auto it = objects_.lower_bound(from); it != objects_.end(); ++it) {
    if (it->first.group != resource.group || it->first.resource != resource.resource) break;
    if (!namespace_name.empty() && it->first.namespace_name != namespace_name) break;
    out.push_back(*it->second);
  }
  return out;
}

StoreResult ObjectStore::create(const core::GroupResource& resource, nlohmann::json object) {
  StoreResult result;
  {
    std::lock_guard lock(mutex_);
    result = createLocked(resource, std::move(object));
  }
  if (std::holds_alternative<nlohmann::json>(result)) notify(resource);
  return result;
}

StoreResult ObjectStore::createLocked(const core::GroupResource& resource, nlohmann::json object) {
  auto& metadata = metadataOf(object);
  std::string name = core::nestedString(object, {"metadata", "name"});
  if (name.empty()) {
    // registry/rest/create.go BeforeCreate: names.SimpleNameGenerator (generateName + 5 chars).
    const std::string prefix = core::nestedString(object, {"metadata", "generateName"});
    name = prefix + randomSuffixLocked();
    metadata["name"] = name;
  }
  StoreKey key = keyOf(resource, object);
  if (objects_.count(key) != 0) return core::newAlreadyExists(resource, key.name);
  // The admission chain sets uid and creationTimestamp before admission, as BeforeCreate's
  // FillObjectMetaSystemFields does (the Job strategy's selector names the uid); they are kept.
  const auto uid = metadata.find("uid");
  if (uid == metadata.end() || !uid->is_string() || uid->get<std::string>().empty()) {
    metadata["uid"] = newUidLocked();
  }
  metadata["resourceVersion"] = std::to_string(++revision_);
  const auto created = metadata.find("creationTimestamp");
  if (created == metadata.end() || !created->is_string() || created->get<std::string>().empty()) {
    metadata["creationTimestamp"] = rfc3339Now();
  }
  auto stored = std::make_shared<const nlohmann::json>(std::move(object));
  objects_.emplace(std::move(key), stored);
  recordLocked({StoreEvent::Type::kAdded, resource, *stored, std::nullopt, revision_});
  return *stored;
}

StoreResult ObjectStore::update(const core::GroupResource& resource, nlohmann::json object) {
  StoreResult result;
  {
    std::lock_guard lock(mutex_);
    const StoreKey key = keyOf(resource, object);
    auto it = objects_.find(key);
    if (it == objects_.end()) return core::newNotFound(resource, key.name);
    const std::string given = core::nestedString(object, {"metadata", "resourceVersion"});
    const std::string stored = core::nestedString(*it->second, {"metadata", "resourceVersion"});
    if (!given.empty() && given != stored) {
      // registry/generic/registry/store.go: errors.NewConflict(qualifiedResource, name,
      // fmt.Errorf(OptimisticLockErrorMsg)).
      return core::newConflict(resource, key.name,
                               "the object has been modified; please apply your changes to the "
                               "latest version and try again");
    }
    auto& metadata = metadataOf(object);
    if (const auto old_metadata = it->second->find("metadata");
        old_metadata != it->second->end() && old_metadata->is_object()) {
      for (const char* kept : {"uid", "creationTimestamp"}) {
        if (const auto value = old_metadata->find(kept); value != old_metadata->end()) {
          metadata[kept] = *value;
        }
      }
    }
    metadata["resourceVersion"] = std::to_string(++revision_);
    const std::shared_ptr<const nlohmann::json> previous =
        std::exchange(it->second, std::make_shared<const nlohmann::json>(std::move(object)));
    recordLocked({StoreEvent::Type::kModified, resource, *it->second, *previous, revision_});
    result = *it->second;
  }
  notify(resource);
  return result;
}

StoreResult ObjectStore::remove(const core::GroupResource& resource,
                                const std::string& namespace_name, const std::string& name) {
  StoreResult result;
  {
    std::lock_guard lock(mutex_);
    auto it = objects_.find(StoreKey{resource.group, resource.resource, namespace_name, name});
    if (it == objects_.end()) return core::newNotFound(resource, name);
    ++revision_;
    const nlohmann::json& previous = *it->second;
    // etcd3 store conditionalDelete decodes the deleted object at the delete's revision: its
    // resourceVersion is the deletion's (so kubectl tells it from what it read before).
    nlohmann::json deleted = previous;
    metadataOf(deleted)["resourceVersion"] = std::to_string(revision_);
    recordLocked({StoreEvent::Type::kDeleted, resource, deleted, previous, revision_});
    result = std::move(deleted);
    objects_.erase(it);
  }
  notify(resource);
  return result;
}

nlohmann::json ObjectStore::put(const core::GroupResource& resource, nlohmann::json object) {
  nlohmann::json stored;
  {
    std::lock_guard lock(mutex_);
    auto& metadata = metadataOf(object);
    if (!metadata.contains("uid")) metadata["uid"] = newUidLocked();
    if (!metadata.contains("creationTimestamp")) metadata["creationTimestamp"] = rfc3339Now();
    metadata["resourceVersion"] = std::to_string(++revision_);
    StoreKey key = keyOf(resource, object);
    auto found = objects_.find(key);
    std::optional<nlohmann::json> previous;
    if (found != objects_.end()) previous = *found->second;
    stored = object;
    objects_[std::move(key)] = std::make_shared<const nlohmann::json>(std::move(object));
    const auto type = previous ? StoreEvent::Type::kModified : StoreEvent::Type::kAdded;
    recordLocked({type, resource, stored, std::move(previous), revision_});
  }
  notify(resource);
  return stored;
}

std::uint64_t ObjectStore::revision() const {
  std::lock_guard lock(mutex_);
  return revision_;
}

std::string ObjectStore::randomSuffix() {
  std::lock_guard lock(mutex_);
  return randomSuffixLocked();
}

std::string ObjectStore::randomSuffixLocked() {
  std::string out;
  for (int i = 0; i < kRandSuffixLength; ++i) {
    out.push_back(kRandAlphabet[splitMix(rng_state_) % kRandAlphabet.size()]);
  }
  return out;
}

void ObjectStore::seed(std::uint64_t seed) {
  std::lock_guard lock(mutex_);
  rng_state_ = seed;
}

std::string ObjectStore::newUid() {
  std::lock_guard lock(mutex_);
  return newUidLocked();
}

std::string ObjectStore::newUidLocked() {
  const std::uint64_t hi = splitMix(rng_state_);
  const std::uint64_t lo = splitMix(rng_state_);
  // RFC 4122 version 4, variant 10.
  const std::uint64_t h = (hi & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;
  const std::uint64_t l = (lo & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", h >> 32U, (h >> 16U) & 0xFFFFU,
                     h & 0xFFFFU, l >> 48U, l & 0xFFFFFFFFFFFFULL);
}

void ObjectStore::onChange(std::function<void(const core::GroupResource&)> listener) {
  std::lock_guard lock(mutex_);
  listeners_.push_back(std::move(listener));
}

void ObjectStore::notify(const core::GroupResource& resource) {
  std::vector<std::function<void(const core::GroupResource&)>> listeners;
  {
    std::lock_guard lock(mutex_);
    listeners = listeners_;
  }
  for (const auto& listener : listeners) listener(resource);
}

std::string_view eventTypeName(StoreEvent::Type type) {
  switch (type) {
    case StoreEvent::Type::kAdded:
      return "ADDED";
    case StoreEvent::Type::kModified:
      return "MODIFIED";
    case StoreEvent::Type::kDeleted:
      return "DELETED";
  }
  return "ADDED";
}

void ObjectStore::recordLocked(StoreEvent event) {
  auto shared = std::make_shared<const StoreEvent>(std::move(event));
  EventRing& ring = rings_[{shared->resource.group, shared->resource.resource}];
  ring.events.push_back(shared);
  while (ring.events.size() > event_capacity_) {
    ring.floor = ring.events.front()->revision;
    ring.events.pop_front();
  }
  for (const auto& subscriber : subscribers_) {
    for (const auto& r : subscriber.resources) {
      if (r.group == shared->resource.group && r.resource == shared->resource.resource) {
        subscriber.sink(shared);
        break;
      }
    }
  }
}

std::variant<WatchStart, core::Status> ObjectStore::watch(
    std::vector<core::GroupResource> resources, std::optional<std::uint64_t> since,
    std::function<void(const StoreEventPtr&)> sink) {
  std::lock_guard lock(mutex_);
  WatchStart start;
  start.revision = revision_;
  if (!since) {
    for (const auto& [key, object] : objects_) {
      for (const auto& r : resources) {
        if (key.group != r.group || key.resource != r.resource) continue;
        StoreEvent event{StoreEvent::Type::kAdded, r, *object, std::nullopt, 0};
        const std::string rv = core::nestedString(*object, {"metadata", "resourceVersion"});
        event.revision = std::strtoull(rv.c_str(), nullptr, 10);
        start.replay.push_back(std::make_shared<const StoreEvent>(std::move(event)));
      }
    }
  } else {
    for (const auto& r : resources) {
      auto it = rings_.find({r.group, r.resource});
      if (it == rings_.end()) continue;
      const EventRing& ring = it->second;
      // watch_cache_history.go GetIntervalLocked: the oldest event it can deliver is the first
      // one kept; a watch from before the one preceding it has missed events.
      if (ring.floor > 0 && !ring.events.empty() && *since < ring.events.front()->revision - 1) {
        return core::newResourceExpired(fmt::format("too old resource version: {} ({})", *since,
                                                    ring.events.front()->revision - 1));
      }
      for (const auto& event : ring.events) {
        if (event->revision > *since) start.replay.push_back(event);
      }
    }
    std::stable_sort(start.replay.begin(), start.replay.end(),
                     [](const auto& a, const auto& b) { return a->revision < b->revision; });
  }
  const std::uint64_t id = next_subscriber_++;
  subscribers_.push_back({id, std::move(resources), std::move(sink)});
  start.subscription = std::make_unique<StoreSubscription>(*this, id);
  return start;
}

void ObjectStore::unsubscribe(std::uint64_t id) {
  std::lock_guard lock(mutex_);
  std::erase_if(subscribers_, [id](const Subscriber& s) { return s.id == id; });
}

class ObjectStore::Snapshot {
 public:
  std::map<StoreKey, std::shared_ptr<const nlohmann::json>> objects;
  std::uint64_t revision = 0;
  std::map<std::pair<std::string, std::string>, EventRing> rings;
};

std::shared_ptr<const ObjectStore::Snapshot> ObjectStore::snapshot() const {
  auto out = std::make_shared<Snapshot>();
  std::lock_guard lock(mutex_);
  out->objects = objects_;
  out->revision = revision_;
  out->rings = rings_;
  return out;
}

void ObjectStore::restore(const Snapshot& snapshot) {
  std::lock_guard lock(mutex_);
  objects_ = snapshot.objects;
  revision_ = snapshot.revision;
  rings_ = snapshot.rings;
  for (auto& [key, ring] : rings_) {
    while (ring.events.size() > event_capacity_) {
      ring.floor = ring.events.front()->revision;
      ring.events.pop_front();
    }
  }
}

void ObjectStore::setEventCapacity(std::size_t capacity) {
  std::lock_guard lock(mutex_);
  event_capacity_ = std::max<std::size_t>(1, capacity);
  for (auto& [key, ring] : rings_) {
    while (ring.events.size() > event_capacity_) {
      ring.floor = ring.events.front()->revision;
      ring.events.pop_front();
    }
  }
}

}  // namespace harness::sim
