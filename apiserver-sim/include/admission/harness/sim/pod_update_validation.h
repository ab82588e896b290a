#pragma once

// A Pod update's strategy validation by Kubernetes' own code (pkg/registry/core/pod/strategy.go
// ValidateUpdate, whose core is pkg/apis/core/validation ValidatePodUpdate). When the spec changes
// more than the updatable fields, its Forbidden error ends with apimachinery's diff of the two
// internal PodSpecs (Go field names), which only the Go types give: kube-cel runs it (op
// validatePodUpdate, cel::podUpdateValidator) and cel::install installs it for the process.
// Without one, the admission chain keeps validateObject's errors, whose spec error lists the
// changed fields instead (said once on stderr).

#include <functional>
#include <optional>

#include <nlohmann/json.hpp>

#include "harness/core/status.h"

namespace harness::sim {

// nullopt when `pod` is a valid update of `old_pod`, else the 422 Status kube-apiserver answers
// (it replaces validateObject's errors). Throws when it cannot tell.
using PodUpdateValidator = std::function<std::optional<core::Status>(
    const nlohmann::json& pod, const nlohmann::json& old_pod)>;

// Process-wide; empty (the default) uninstalls.
void setPodUpdateValidator(PodUpdateValidator validator);
PodUpdateValidator installedPodUpdateValidator();

}  // namespace harness::sim
