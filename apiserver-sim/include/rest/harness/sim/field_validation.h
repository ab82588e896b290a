#pragma once

// fieldValidation's strict decoding of create and update bodies (k8s.io/apiserver
// pkg/endpoints/handlers/create.go, update.go: with Strict, or Warn, the server's default
// (rest.go fieldValidation), the body is decoded by the content type's StrictSerializer).

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/object.h"
#include "harness/core/result.h"
#include "harness/core/status.h"

namespace harness::sim {

// The unknown and duplicate fields of a JSON body as Kubernetes' Go type of `kind` sees them
// (`unknown field "spec.foo"`, `duplicate field "metadata.name"`), none when it has none; an
// error when the checker failed (answered 500). With Strict they are the 400 `<Kind> in version
// "<v>" cannot be handled as a <Kind>: strict decoding error: ...` (transformDecodeError), with
// Warn one Warning each. The simulator installs kube-cel's (cel::strictFieldChecker) when it
// runs; without a checker (the default) fields are not checked, which is said once on stderr.
using StrictFieldChecker = std::function<core::Result<std::vector<std::string>>(
    const std::string& body, const core::GroupVersionKind& kind)>;
// Process-wide; empty uninstalls.
void setStrictFieldChecker(StrictFieldChecker checker);

// fieldValidation on a PATCH (k8s.io/apiserver pkg/endpoints/handlers/patch.go: Strict or Warn
// decode the patch strictly, then the patched object; the texts are Go's): what kube-apiserver
// answers for the JSON, merge or strategic merge `patch` (the body, of `patch_type`, its
// Content-Type) on `current` (the stored object in the endpoint's version `kind`) under
// `directive`: Warnings (first), or the Status (second: a 422 Invalid of the field "patch", a
// 400 for a patch that does not decode strictly), or neither.
using PatchFieldCheck = std::pair<std::vector<std::string>, std::optional<core::Status>>;
using StrictPatchChecker = std::function<core::Result<PatchFieldCheck>(
    const nlohmann::json& current, const std::string& patch, std::string_view patch_type,
    std::string_view directive, const core::GroupVersionKind& kind)>;
// Process-wide; empty uninstalls (then patches are not checked, said once on stderr as above).
void setStrictPatchChecker(StrictPatchChecker checker);

}  // namespace harness::sim
