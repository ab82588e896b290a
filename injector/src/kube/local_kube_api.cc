#include <algorithm>
#include <string_view>

#include "harness/core/object.h"
#include "harness/injector/kube_api.h"

namespace harness::injector {

namespace {

// Namespaces are looked up by name only, whatever metadata.namespace they carry.
std::string indexKey(std::string_view kind, std::string_view namespace_name,
                     std::string_view name) {
  std::string key;
  key.reserve(kind.size() + namespace_name.size() + name.size() + 2);
  key.append(kind).push_back('\0');
  if (kind != "Namespace") key.append(namespace_name);
  key.push_back('\0');
  key.append(name);
  return key;
}

}  // namespace

LocalKubeApi::LocalKubeApi(std::vector<nlohmann::json> objects) {
  objects_.reserve(objects.size());
  for (auto& object : objects) add(std::move(object));
}

void LocalKubeApi::indexLast() {
  const auto& obj = *objects_.back();
  auto kind = core::kindOf(obj);
  auto name = core::nameOf(obj);
  auto ns = core::namespaceOf(obj);
  if (!kind || !name || !ns) return;
  index_[indexKey(*kind, *ns, *name)].push_back(objects_.size() - 1);
}

void LocalKubeApi::add(nlohmann::json object) {
  std::lock_guard lock(mutex_);
  objects_.push_back(std::make_shared<const nlohmann::json>(std::move(object)));
  indexLast();
}

std::size_t LocalKubeApi::size() const {
  std::lock_guard lock(mutex_);
  return objects_.size();
}

const nlohmann::json& LocalKubeApi::objectAt(std::size_t position) const {
  std::lock_guard lock(mutex_);
  return *objects_.at(position);
}

core::Result<std::shared_ptr<const nlohmann::json>> LocalKubeApi::get(const ObjectRef& ref) {
  std::lock_guard lock(mutex_);
  const auto found = index_.find(indexKey(ref.kind, ref.namespace_name, ref.name));
  if (found == index_.end()) return std::shared_ptr<const nlohmann::json>{};
  // Later objects win, as a later `kubectl apply` of the same object would.
  for (auto it = found->second.rbegin(); it != found->second.rend(); ++it) {
    const auto& obj = *objects_[*it];
    if (!ref.api_version.empty()) {
      auto av = core::apiVersionOf(obj);
      auto want = core::GroupVersion::parse(ref.api_version);
      auto have =
          av ? core::GroupVersion::parse(*av) : core::Result<core::GroupVersion>(av.error());
      // Objects of another version of the same group are the same object (the API converts).
      if (want && have && want->group != have->group) continue;
    }
    return objects_[*it];
  }
  return std::shared_ptr<const nlohmann::json>{};
}

core::Result<std::vector<nlohmann::json>> LocalKubeApi::list(const std::string& kind) {
  std::lock_guard lock(mutex_);
  // The latest object of each name, in the order names first appeared.
  std::vector<nlohmann::json> out;
  for (std::size_t i = 0; i < objects_.size(); ++i) {
    auto k = core::kindOf(*objects_[i]);
    auto name = core::nameOf(*objects_[i]);
    if (!k || *k != kind || !name) continue;
    const auto found = index_.find(indexKey(kind, "", *name));
    if (found == index_.end() || found->second.front() != i) continue;
    out.push_back(*objects_[found->second.back()]);
  }
  return out;
}

std::size_t LocalKubeApi::candidatesFor(const ObjectRef& ref) const {
  std::lock_guard lock(mutex_);
  const auto found = index_.find(indexKey(ref.kind, ref.namespace_name, ref.name));
  return found == index_.end() ? 0 : found->second.size();
}

core::Result<void> LocalKubeApi::createEvent(const nlohmann::json& event) {
  std::lock_guard lock(mutex_);
  ++events_created_;
  if (events_.size() >= max_events_) events_.pop_front();
  events_.push_back(event);
  return {};
}

std::uint64_t LocalKubeApi::eventsCreated() const {
  std::lock_guard lock(mutex_);
  return events_created_;
}

std::size_t LocalKubeApi::maxEvents() const {
  std::lock_guard lock(mutex_);
  return max_events_;
}

void LocalKubeApi::setMaxEvents(std::size_t max_events) {
  std::lock_guard lock(mutex_);
  max_events_ = std::max<std::size_t>(max_events, 1);
  while (events_.size() > max_events_) events_.pop_front();
}

std::string LocalKubeApi::describe() const {
  std::lock_guard lock(mutex_);
  return "local objects (" + std::to_string(objects_.size()) + ")";
}

std::vector<nlohmann::json> LocalKubeApi::events() const {
  std::lock_guard lock(mutex_);
  return {events_.begin(), events_.end()};
}

}  // namespace harness::injector
