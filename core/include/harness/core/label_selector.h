#pragma once

// Label selectors with apimachinery semantics (docs/admission-chain.md §3.5):
// matchLabels AND matchExpressions; nil selects nothing, {} selects everything.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/field_errors.h"
#include "harness/core/result.h"

namespace harness::core {

using Labels = std::map<std::string, std::string>;

// kEquals is what matchLabels entries become (selection.Equals): it matches like a one-value
// kIn but renders as "key=value".
enum class SelectorOperator { kIn, kNotIn, kExists, kDoesNotExist, kEquals };

struct SelectorRequirement {
  std::string key;
  SelectorOperator op = SelectorOperator::kExists;
  std::vector<std::string> values;  // sorted, as labels.NewRequirement keeps them
};

class LabelSelector {
 public:
  // The selector that matches nothing (a nil *metav1.LabelSelector).
  static LabelSelector nothing();
  // The selector that matches everything ({}).
  static LabelSelector everything();

  // metav1.LabelSelectorAsSelector: JSON null -> nothing(); {} -> everything(); an unknown
  // operator or invalid key/values -> an error with apimachinery's message, e.g.
  // `"Foo" is not a valid label selector operator` or
  // `values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be empty`.
  // JSON of the wrong shape (matchLabels not a map, ...) is an error naming the field.
  static Result<LabelSelector> parse(const nlohmann::json& selector);

  [[nodiscard]] bool matches(const Labels& labels) const;
  [[nodiscard]] bool matchesNothing() const { return nothing_; }
  [[nodiscard]] bool matchesEverything() const { return !nothing_ && requirements_.empty(); }
  [[nodiscard]] const std::vector<SelectorRequirement>& requirements() const {
    return requirements_;
  }

  // labels.Selector.String(): requirements sorted by key, e.g. "a=b,c in (d,e),!f".
  [[nodiscard]] std::string toString() const;

 private:
  bool nothing_ = false;
  std::vector<SelectorRequirement> requirements_;
};

// ValidateLabelSelector (apimachinery metav1validation) for API objects: field errors under
// `path` (e.g. "webhooks[0].namespaceSelector").
FieldErrors validateLabelSelector(const nlohmann::json& selector, const std::string& path);

// Labels from an object's metadata.labels; non-string values are an error naming the field.
Result<Labels> labelsOf(const nlohmann::json& object);

}  // namespace harness::core
