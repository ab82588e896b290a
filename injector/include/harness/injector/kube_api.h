#pragma once

// The injector's view of the Kubernetes API: namespace and owner lookups, and Events. One
// interface, two implementations: a REST client (kubeconfig or in-cluster service account, as the
// real injector uses) that works against a real cluster and against apiserver-sim, and a local
// set of objects read from files for the offline `inject` command and tests.

#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/net/kubeconfig.h"

namespace harness::injector {

// What to look up: kind (e.g. "ReplicaSet"), its apiVersion when known ("apps/v1"; empty means
// the usual version of that kind), namespace ("" for cluster-scoped) and name.
struct ObjectRef {
  std::string api_version;
  std::string kind;
  std::string namespace_name;
  std::string name;
};

class KubeApi {
 public:
  virtual ~KubeApi() = default;
  // The object, null when it does not exist (404), or an error (unreachable, forbidden, ...).
  // Shared and immutable: the Linkerd webhook looks up a namespace and up to two owners per
  // request, and copying them out of an informer-like cache was a sixth of its cost.
  virtual core::Result<std::shared_ptr<const nlohmann::json>> get(const ObjectRef& ref) = 0;
  // Every object of a cluster-scoped kind ("Node"): the items of a GET on the collection.
  virtual core::Result<std::vector<nlohmann::json>> list(const std::string& kind) = 0;
  // Creates a core/v1 Event in the event's metadata.namespace.
  virtual core::Result<void> createEvent(const nlohmann::json& event) = 0;
  // For logs: "https://127.0.0.1:6443 (kubeconfig /root/.kube/config)".
  [[nodiscard]] virtual std::string describe() const = 0;
};

// Where a REST client connects and how it authenticates: the kubeconfig and in-cluster readers
// live in net/ (harness/net/kubeconfig.h), shared with apiserver-sim's live-cluster commands.
using net::inClusterConnection;
using net::KubeConnection;
using net::loadKubeconfig;

// The REST path of an object ("/api/v1/namespaces/x", "/apis/apps/v1/namespaces/ns/replicasets/r")
// for the kinds the injector looks up; an error for kinds it does not know.
core::Result<std::string> restPathOf(const ObjectRef& ref);

std::unique_ptr<KubeApi> makeRestKubeApi(KubeConnection connection);

// Objects held in memory (loaded from files by the caller); the latest Events are kept and can be
// listed. A cluster does not keep Events forever either: kube-apiserver stores them with a TTL
// (--event-ttl, 1h by default) and etcd compacts them away; `injector serve --objects` posts one
// per injected pod, so keeping them all grew without bound (about 3.2 kB per pod).
// Objects are indexed by kind, namespace and name, so that a lookup does not depend on how many
// objects there are (`inject` looks up a namespace and owners for every object it reads).
class LocalKubeApi : public KubeApi {
 public:
  // How many of the latest Events are kept by default.
  static constexpr std::size_t kDefaultMaxEvents = 1000;

  LocalKubeApi() = default;
  explicit LocalKubeApi(std::vector<nlohmann::json> objects);
  // Objects without a string kind and name, or with a malformed namespace, are kept (describe()
  // counts them) but never found. Pass an rvalue to keep the object without copying it.
  void add(nlohmann::json object);
  // The objects added, in order, for a caller that gave them away with add() (`inject` keeps
  // each input object once, here). The reference is valid until the next add().
  [[nodiscard]] std::size_t size() const;
  [[nodiscard]] const nlohmann::json& objectAt(std::size_t position) const;
  core::Result<std::shared_ptr<const nlohmann::json>> get(const ObjectRef& ref) override;
  core::Result<std::vector<nlohmann::json>> list(const std::string& kind) override;
  core::Result<void> createEvent(const nlohmann::json& event) override;
  [[nodiscard]] std::string describe() const override;
  // The latest Events, oldest first: at most maxEvents() of them.
  [[nodiscard]] std::vector<nlohmann::json> events() const;
  // Every Event created, the ones no longer kept included.
  [[nodiscard]] std::uint64_t eventsCreated() const;
  [[nodiscard]] std::size_t maxEvents() const;
  // At least 1; the oldest Events beyond it are dropped now.
  void setMaxEvents(std::size_t max_events);
  // The number of objects a get() of `ref` compares (the candidates of the same kind, namespace
  // and name), for tests of the lookup's cost.
  [[nodiscard]] std::size_t candidatesFor(const ObjectRef& ref) const;

 private:
  void indexLast();  // with mutex_ held

  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<const nlohmann::json>> objects_;
  // "kind\0namespace\0name" (namespace "" for Namespaces) -> positions in objects_, ascending.
  std::unordered_map<std::string, std::vector<std::size_t>> index_;
  std::deque<nlohmann::json> events_;
  std::size_t max_events_ = kDefaultMaxEvents;
  std::uint64_t events_created_ = 0;
};

}  // namespace harness::injector
