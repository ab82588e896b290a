#pragma once

// fieldValidation's strict decoding of create and update bodies (k8s.io/apiserver
// pkg/endpoints/handlers/create.go, update.go: with Strict, or Warn, the server's default
// (rest.go fieldValidation), the body is decoded by the content type's StrictSerializer).

#include <functional>
#include <string>
#include <vector>

#include "harness/core/object.h"
#include "harness/core/result.h"

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

}  // namespace harness::sim
