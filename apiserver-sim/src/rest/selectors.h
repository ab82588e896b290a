#pragma once

// The labelSelector and fieldSelector query parameters of a LIST (k8s.io/apimachinery
// pkg/labels/selector.go Parse, pkg/fields/selector.go ParseSelector) and the field labels each
// resource accepts (the ConvertFieldLabel functions registered per kind). Pure.

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/label_selector.h"
#include "harness/core/result.h"

namespace harness::sim::rest {

// labels.Parse: "a=b,c!=d,e in (f,g),h notin (i),j,!k". The empty string selects everything.
// Errors carry upstream's texts ("unable to parse requirement: ...", "found ',', expected:
// identifier after ','"...); the numeric operators gt/lt are parsed but refused.
core::Result<core::LabelSelector> parseLabelSelector(std::string_view text);

struct FieldRequirement {
  std::string field;
  bool equals = true;  // false for "!="
  std::string value;
};

// fields.ParseSelector: terms "f=v", "f==v", "f!=v" separated by commas, with "\," "\=" "\\"
// escapes. Errors: "invalid selector: '<s>'; can't understand '<term>'", "invalid escape
// sequence: ...".
core::Result<std::vector<FieldRequirement>> parseFieldSelector(std::string_view text);

// Checks that every field is a label the kind supports (metadata.name and metadata.namespace for
// all; a few more for pods, events, secrets, namespaces, nodes, jobs, replicasets and
// replicationcontrollers), with upstream's error texts: `"x" is not a known field selector: only
// "metadata.name", "metadata.namespace"` or `field label not supported: x`.
core::Result<void> checkFieldLabels(std::string_view group, std::string_view kind,
                                    const std::vector<FieldRequirement>& requirements);

// True when `object` satisfies every requirement (the field's value as the registry's
// GetAttrs/ToSelectableFields render it: strings as is, booleans "true"/"false", integers in
// decimal, absent fields "").
bool matchesFields(const nlohmann::json& object, const std::vector<FieldRequirement>& requirements);

}  // namespace harness::sim::rest
