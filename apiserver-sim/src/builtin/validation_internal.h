#pragma once

// Internal to harness::sim_builtin: the pieces of apimachinery / pkg/apis/core validation shared
// by the kind validators (object_validation.cc) and the pod spec validator (pod_validation.cc).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/field_errors.h"

namespace harness::sim::builtin_internal {

// "<path>[<i>]" and "<path>.<child>" (field.Path Index / Child), "<path>[<key>]" (Key).
std::string indexPath(const std::string& path, std::size_t i);
std::string childPath(const std::string& path, std::string_view child);
std::string keyPath(const std::string& path, std::string_view key);

// A name validator: apimachinery NameIsDNSSubdomain & co (prefix = validating a generateName,
// whose trailing dash is masked).
using NameValidator = std::vector<std::string> (*)(std::string_view name, bool prefix);
std::vector<std::string> nameIsDnsSubdomain(std::string_view name, bool prefix);
std::vector<std::string> nameIsDnsLabel(std::string_view name, bool prefix);
std::vector<std::string> nameIsDns1035Label(std::string_view name, bool prefix);

// validation.IsValidLabelValue.
std::vector<std::string> labelValueErrors(std::string_view value);
// validation.IsValidPortNum / IsValidPortName.
std::vector<std::string> portNumErrors(std::int64_t port);
std::vector<std::string> portNameErrors(std::string_view port);

// Go's %#v of a metav1.LabelSelector held in JSON.
std::string goLabelSelectorLiteral(const nlohmann::json& selector);

// ValidateLabels / ValidateAnnotations of apimachinery (map order: sorted keys).
core::FieldErrors validateLabels(const nlohmann::json* labels, const std::string& path);
core::FieldErrors validateAnnotations(const nlohmann::json* annotations, const std::string& path);

// ValidatePodTemplateSpec: template labels and annotations, then the pod spec under
// "<path>.spec".
core::FieldErrors validatePodTemplateSpec(const nlohmann::json& tmpl, const std::string& path);
// ValidatePodSpec (the subset listed in object_validation.h).
core::FieldErrors validatePodSpec(const nlohmann::json& spec, const std::string& path);
// ValidatePodUpdate's spec rule: only the updatable fields may change.
core::FieldErrors validatePodSpecUpdate(const nlohmann::json& spec, const nlohmann::json& old_spec);

inline void append(core::FieldErrors& to, core::FieldErrors from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

}  // namespace harness::sim::builtin_internal
