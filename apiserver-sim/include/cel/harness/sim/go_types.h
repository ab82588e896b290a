#pragma once

// What only Kubernetes' Go types give the simulator besides CEL, through kube-cel (cel.h's
// KubeCel; kube/cmd/kube-cel/pod_update.go, strict_decode.go).

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/object.h"
#include "harness/core/result.h"
#include "harness/core/status.h"
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

// fieldValidation on a PATCH (op strictPatch: k8s.io/apiserver pkg/endpoints/handlers/patch.go's
// strict decoding of the patch and of the patched object): for `patch` (JSON, merge or strategic
// merge: `patch_type`) on `current` under `directive`, the Warnings (first) or the Status Strict
// answers (second). An error when kube-cel failed. (rest's field_validation.h
// StrictPatchChecker.)
std::function<core::Result<std::pair<std::vector<std::string>, std::optional<core::Status>>>(
    const nlohmann::json& current, const std::string& patch, std::string_view patch_type,
    std::string_view directive, const core::GroupVersionKind& kind)>
strictPatchChecker(std::shared_ptr<KubeCel> cel);

// The applied object (first) or the Status to answer (second): rest's field_manager.h.
using ApplyOutcome = std::pair<nlohmann::json, std::optional<core::Status>>;

// Kubernetes' field manager (ops applyFields and updateFields, kube/cmd/kube-cel/managed_fields.go;
// rest's field_manager.h FieldManager): server-side apply of `patch` by `manager` on `live`
// (nullopt: create), answering the applied object or the Status (409 conflict...); and the
// managedFields a create, update or non-apply patch records. An error when kube-cel failed.
std::function<core::Result<ApplyOutcome>(
    const std::optional<nlohmann::json>& live, const std::string& patch,
    const std::string& manager, bool force, const std::string& subresource,
    const core::GroupVersionKind& kind)>
fieldManagerApply(std::shared_ptr<KubeCel> cel);
std::function<core::Result<nlohmann::json>(
    const nlohmann::json& object, const std::optional<nlohmann::json>& live,
    const std::string& manager, const std::string& subresource,
    const core::GroupVersionKind& kind)>
fieldManagerUpdate(std::shared_ptr<KubeCel> cel);

}  // namespace harness::sim::cel
