#pragma once

// What only Kubernetes' Go types give the simulator besides CEL, through kube-cel (cel.h's
// KubeCel; kube/cmd/kube-cel/pod_update.go, strict_decode.go).

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "harness/core/object.h"
#include "harness/core/result.h"
#include "harness/sim/cel.h"
#include "harness/sim/pod_update_validation.h"

namespace harness::sim::cel {

// The pod registry strategy's update validation (op validatePodUpdate: rest.ValidateUpdate with
// pod.Strategy, on the internal types converted from the v1 objects as the apiserver's decoder
// does). What cel::install installs with setPodUpdateValidator. Throws when kube-cel fails.
PodUpdateValidator podUpdateValidator(std::shared_ptr<KubeCel> cel);

// fieldValidation's strict decoding (op strictDecode: legacyscheme's JSON StrictSerializer, as
// k8s.io/apiserver pkg/endpoints/handlers/create.go and update.go decode a body): the unknown and
// duplicate fields of `body` for the endpoint's `kind` (`unknown field "spec.foo"`), empty when
// there are none or when the body does not decode for another reason (the caller's decoder
// answers those). An error when kube-cel failed. (rest's field_validation.h StrictFieldChecker.)
std::function<core::Result<std::vector<std::string>>(const std::string& body,
                                                     const core::GroupVersionKind& kind)>
strictFieldChecker(std::shared_ptr<KubeCel> cel);

}  // namespace harness::sim::cel
