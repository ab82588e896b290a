#pragma once

// Internal to the controllers module: kube-controller-manager's namespace controller, which
// empties a Namespace being deleted and then finalizes it (k8s.io/kubernetes v1.37.2
// pkg/controller/namespace/namespace_controller.go syncNamespaceFromKey and
// pkg/controller/namespace/deletion/namespaced_resources_deleter.go Delete, deleteAllContent,
// estimateGracefulTermination, finalizeNamespace; status_condition_utils.go for the
// NamespaceDeletion* / NamespaceContentRemaining / NamespaceFinalizersRemaining conditions).
//
// Every write goes through the admission chain as system:serviceaccount:kube-system:
// namespace-controller. Differences: a resource's content is deleted one object at a time (the
// controller's DELETE of the collection is one request there; here each object is its own DELETE
// with verb deletecollection on the collection's URI, as the simulator's REST API does).

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/sim/admission_chain.h"
#include "harness/sim/store.h"

namespace harness::sim::controllers {

class NamespaceDeleter {
 public:
  using Clock = std::chrono::system_clock;

  NamespaceDeleter(ObjectStore& store, AdmissionChain& chain) : store_(store), chain_(chain) {}

  // One pass over the Namespaces being deleted whose requeue time has come; returns whether it
  // wrote anything. `now` stands for time.Now() (the grace-period estimate compares it with
  // deletionTimestamp).
  bool sync(Clock::time_point now);
  // The earliest time a Namespace with content remaining is to be looked at again
  // (nm.queue.AddAfter(key, estimate/2+1 seconds)).
  [[nodiscard]] std::optional<Clock::time_point> nextRequeue() const;

 private:
  // Delete(nsName) for one Namespace; true when it wrote.
  bool deleteNamespace(const nlohmann::json& ns, Clock::time_point now);
  AdmissionResult write(WriteRequest request);

  ObjectStore& store_;
  AdmissionChain& chain_;
  std::map<std::string, Clock::time_point> requeue_;  // by namespace uid
};

}  // namespace harness::sim::controllers
