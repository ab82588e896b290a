#pragma once

// Annotation validation before rendering: pkg/kube/inject/validate.go (validateAnnotations,
// AnnotationValidation) with Istio's messages. See docs/istio-injector.md §4.3.

#include <map>
#include <string>
#include <string_view>

#include "harness/core/result.h"

namespace harness::injector::istio {

// One annotation's check; the error is the inner text, e.g.
// "interceptionMode invalid, use REDIRECT,TPROXY,NONE: FOO".
core::Result<void> validateAnnotation(std::string_view name, std::string_view value);

// All of them, in annotation-name order (Go ranges over a map; we sort). The error is
// go-multierror's text: "1 error occurred:\n\t* invalid value 'v' for annotation 'k': <why>\n\n".
core::Result<void> validateAnnotations(const std::map<std::string, std::string>& annotations);

// parsePorts of validate.go: comma list of uint16 (spaces trimmed), "" -> none.
core::Result<void> validatePortList(std::string_view parameter, std::string_view ports);

}  // namespace harness::injector::istio
