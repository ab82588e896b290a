#pragma once

// Istio decodes the AdmissionRequest's object with json.Unmarshal into a corev1.Pod
// (pkg/kube/inject/webhook.go inject) and answers a decoding error as allowed=false with
// err.Error(). This checks the JSON object the same way, with encoding/json's rules
// (src/encoding/json/decode.go):
//   * null is accepted anywhere (the field keeps its zero value; a nil slice is fine);
//   * unknown keys are ignored;
//   * a value of the wrong JSON type is an UnmarshalTypeError, "json: cannot unmarshal <value>
//     into Go struct field <Struct>.<path> of type <type>", where <Struct> is the innermost Go
//     struct and <path> the dotted JSON names from the Pod, without array indices; decoding goes
//     on and the first such error is reported (fields are visited in Go declaration order, which
//     is the order the API server writes them in);
//   * errors of types with their own UnmarshalJSON (resource.Quantity, intstr.IntOrString,
//     metav1.Time) stop decoding at once and carry no field context.

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::injector::istio {

core::Result<void> checkPodDecodes(const nlohmann::json& pod);

}  // namespace harness::injector::istio
