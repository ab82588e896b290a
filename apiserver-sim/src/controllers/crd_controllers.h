#pragma once

// Internal to the controllers module: the controllers apiextensions-apiserver runs inside
// kube-apiserver for CustomResourceDefinitions (k8s.io/apiextensions-apiserver v0.37.2):
//   pkg/controller/status/naming_controller.go      the accepted names and NamesAccepted
//   pkg/controller/establish/establishing_controller.go  Established
//   pkg/controller/finalizer/crd_finalizer.go      a CRD being deleted: its custom resources
//                                                   are deleted, then its finalizer removed
// The status each writes is computed by Kubernetes' code (kube-cel: ControllerOptions::
// crd_status); the writes go through the admission chain as the loopback client,
// system:apiserver in system:masters, with kube-apiserver's user agent. The finalizer deletes
// the custom resources in storage (crd_finalizer.go deleteInstances: "we go directly to the
// storage instead"), without admission.

#include <chrono>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/sim/admission_chain.h"
#include "harness/sim/store.h"

namespace harness::sim::controllers {

using CrdStatusFunction = std::function<std::vector<nlohmann::json>(
    const nlohmann::json& crd, const std::vector<nlohmann::json>& others)>;

class CustomResourceDefinitionControllers {
 public:
  using Clock = std::chrono::system_clock;

  CustomResourceDefinitionControllers(ObjectStore& store, AdmissionChain& chain,
                                      CrdStatusFunction status)
      : store_(store), chain_(chain), status_(std::move(status)) {}

  // One pass over the CRDs; returns whether it wrote anything. Without a status function
  // (no kube-cel) nothing is named or established, and a CRD being deleted is still finalized.
  bool sync(Clock::time_point now);

 private:
  bool name(const nlohmann::json& crd, const std::vector<nlohmann::json>& all);
  bool finalize(nlohmann::json crd, Clock::time_point now);
  // An UpdateStatus of `crd` as the loopback client.
  AdmissionResult writeStatus(nlohmann::json crd);

  ObjectStore& store_;
  AdmissionChain& chain_;
  CrdStatusFunction status_;
  // CRD versions (uid/resourceVersion) whose status could not be computed or written: not tried
  // again until the CRD changes, so that a failure cannot spin the loop.
  std::set<std::string> failed_;
};

}  // namespace harness::sim::controllers
