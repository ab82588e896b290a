#pragma once

// Example mutating webhooks that compute their patch from the admitted object: the well-behaved
// mutators a cluster runs beside a sidecar injector, and deliberately non-idempotent ones that
// show what `apiserver-sim check-idempotence` catches. A stub behaviour names one with
// `mutator:` (scenarios/FORMAT.md "Example mutators"); the checker and the properties run them
// beside the webhook under test, as reinvocation would.
//
// Idempotent (a second call on their own output patches nothing):
//   add-annotation[=key:value]     sets an annotation (default example.com/audited: "true")
//   add-init-container[=name]      appends an init container unless one of that name exists
//                                  (default istio-validation-like "wait-for-config")
//   set-image-pull-policy[=policy] sets imagePullPolicy on every container that lacks it or has
//                                  another one (default IfNotPresent)
//   label-fighter=value            sets label example.com/owner to its value: two fighters with
//                                  different values undo each other (each is idempotent alone)
// Not idempotent (Kubernetes requires idempotence: "Idempotence" in the admission webhook docs):
//   append-sidecar                 appends a "logger" container without looking for one
//   timestamp-annotation           sets example.com/mutated-at to the time of the call
//                                  (RFC 3339 with nanoseconds; strictly increasing per process)
//   reorder-containers             moves the first container to the end (when there are >= 2)
//
// The pod spec and pod metadata are found by the object's kind (core/object.h podSpecPointer):
// Pods and every pod-template workload; annotations and labels go on the pod (template)
// metadata. Other kinds get no patch.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::sim {

struct Mutator {
  enum class Kind {
    kAddAnnotation,
    kAddInitContainer,
    kSetImagePullPolicy,
    kLabelFighter,
    kAppendSidecar,
    kTimestampAnnotation,
    kReorderContainers,
  };
  Kind kind = Kind::kAddAnnotation;
  std::string parameter;  // after "=", or the default
  std::string text;       // as written ("label-fighter=blue")

  // Whether the mutator, run again on its own output, changes nothing.
  [[nodiscard]] bool idempotent() const;
};

// Every mutator name, in the order above.
const std::vector<std::string>& mutatorNames();

// "name" or "name=parameter". Errors: `unknown mutator "x" (known: add-annotation, ...)`,
// `mutator "label-fighter" needs a value (label-fighter=VALUE)`, a parameter that would not make
// a valid patch (`add-annotation=key:value`).
core::Result<Mutator> parseMutator(std::string_view text);

// The JSON Patch (an array, possibly empty) the mutator answers for `object`.
nlohmann::json mutatorPatch(const Mutator& mutator, const nlohmann::json& object);

}  // namespace harness::sim
