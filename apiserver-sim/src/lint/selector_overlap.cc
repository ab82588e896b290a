// Whether label selectors can match the same labels (selector_overlap.h).

#include "harness/sim/selector_overlap.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>

namespace harness::sim::lint {

namespace {

// Everything the requirements on one key say together.
struct KeyConstraint {
  bool must_exist = false;
  bool must_not_exist = false;
  std::optional<std::set<std::string>> allowed;  // intersection of the In/= value sets
  std::set<std::string> forbidden;               // union of the NotIn value sets
};

void add(KeyConstraint& constraint, const core::SelectorRequirement& requirement) {
  using core::SelectorOperator;
  switch (requirement.op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kEquals: {
      constraint.must_exist = true;
      std::set<std::string> values(requirement.values.begin(), requirement.values.end());
      if (!constraint.allowed) {
        constraint.allowed = std::move(values);
      } else {
        std::set<std::string> both;
        std::set_intersection(constraint.allowed->begin(), constraint.allowed->end(),
                              values.begin(), values.end(), std::inserter(both, both.end()));
        constraint.allowed = std::move(both);
      }
      break;
    }
    case SelectorOperator::kNotIn:
      constraint.forbidden.insert(requirement.values.begin(), requirement.values.end());
      break;
    case SelectorOperator::kExists:
      constraint.must_exist = true;
      break;
    case SelectorOperator::kDoesNotExist:
      constraint.must_not_exist = true;
      break;
  }
}

// A value for a key that must exist and avoid `forbidden` ("x", or "x-<n>" when taken).
std::string freeValue(const std::set<std::string>& forbidden) {
  std::string value = "x";
  for (int n = 1; forbidden.contains(value); ++n) value = "x-" + std::to_string(n);
  return value;
}

bool satisfiedBy(const KeyConstraint& constraint, const std::optional<std::string>& value) {
  if (!value) return !constraint.must_exist;
  if (constraint.must_not_exist) return false;
  if (constraint.allowed && !constraint.allowed->contains(*value)) return false;
  return !constraint.forbidden.contains(*value);
}

}  // namespace

std::optional<core::Labels> commonLabels(const std::vector<const core::LabelSelector*>& selectors,
                                         const core::Labels& fixed) {
  std::map<std::string, KeyConstraint> constraints;
  for (const auto* selector : selectors) {
    if (selector == nullptr || selector->matchesNothing()) return std::nullopt;
    for (const auto& requirement : selector->requirements()) {
      add(constraints[requirement.key], requirement);
    }
  }
  core::Labels labels = fixed;
  for (const auto& [key, constraint] : constraints) {
    if (auto it = fixed.find(key); it != fixed.end()) {
      if (!satisfiedBy(constraint, it->second)) return std::nullopt;
      continue;
    }
    if (!constraint.must_exist) continue;  // absent satisfies NotIn and DoesNotExist
    if (constraint.must_not_exist) return std::nullopt;
    if (constraint.allowed) {
      auto value = std::find_if(constraint.allowed->begin(), constraint.allowed->end(),
                                [&](const std::string& v) { return !constraint.forbidden.contains(v); });
      if (value == constraint.allowed->end()) return std::nullopt;
      labels[key] = *value;
    } else {
      labels[key] = freeValue(constraint.forbidden);
    }
  }
  // The witness is built from the constraints; check it with the selectors' own matcher.
  for (const auto* selector : selectors) {
    if (!selector->matches(labels)) return std::nullopt;
  }
  return labels;
}

std::string formatLabels(const core::Labels& labels) {
  if (labels.empty()) return "<none>";
  std::string out;
  for (const auto& [key, value] : labels) {
    if (!out.empty()) out += ",";
    out += key + "=" + value;
  }
  return out;
}

}  // namespace harness::sim::lint
