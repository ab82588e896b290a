#pragma once

// Whether label selectors can all match the same object, and a set of labels that shows it.
// Requirements are combined key by key (apimachinery labels.Requirement semantics: In/= need the
// key with one of the values, NotIn matches a missing key or another value, Exists/DoesNotExist
// the key's presence), so the answer is exact: no label set satisfies them all when this says so.

#include <optional>
#include <vector>

#include "harness/core/label_selector.h"

namespace harness::sim::lint {

// Labels that every selector of `selectors` matches, or nullopt when none exist (a nil selector
// matches nothing). `fixed` are labels the object already has and cannot drop (a namespace's
// kubernetes.io/metadata.name); nullopt then means no labels added to `fixed` are enough.
std::optional<core::Labels> commonLabels(const std::vector<const core::LabelSelector*>& selectors,
                                         const core::Labels& fixed = {});

// kubectl's rendering of a label set: "a=b,c=d", "<none>" when empty.
std::string formatLabels(const core::Labels& labels);

}  // namespace harness::sim::lint
