#include "harness/core/label_selector.h"

// Upstream behaviour followed here (k8s.io/apimachinery):
//   * pkg/apis/meta/v1/helpers.go LabelSelectorAsSelector: nil -> Nothing, empty -> Everything,
//     matchLabels -> Equals requirements, operator mapping, "%q is not a valid label selector
//     operator".
//   * pkg/labels/selector.go NewRequirement (validation and its field errors), Requirement.Matches,
//     Requirement.String / internalSelector.String, requirements sorted by key.
//   * pkg/apis/meta/v1/validation/validation.go ValidateLabelSelector (default options: label
//     values in expressions are validated), ValidateLabelName, ValidateLabels.
//   * pkg/util/validation/field/errors.go for how bad values are printed (the label key and value
//     checks themselves are harness/validation's).

#include <algorithm>
#include <optional>
#include <utility>
#include <variant>

#include "harness/core/object.h"
#include "harness/go/fmt.h"
#include "harness/go/strconv.h"
#include "harness/validation/validation.h"

namespace harness::core {

namespace {

using nlohmann::json;

std::string joinMessages(const std::vector<std::string>& msgs) {
  std::string out;
  for (size_t i = 0; i < msgs.size(); ++i) {
    if (i > 0) out += "; ";
    out += msgs[i];
  }
  return out;
}

// field.Path helpers.
std::string child(const std::string& path, std::string_view name) {
  return path.empty() ? std::string(name) : path + "." + std::string(name);
}
std::string index(const std::string& path, size_t i) {
  return path + "[" + std::to_string(i) + "]";
}
std::string key(const std::string& path, std::string_view k) {
  return path + "[" + std::string(k) + "]";
}

// ---------------------------------------------------------------------------------------------
// The JSON shape of a metav1.LabelSelector

struct RawRequirement {
  std::string key;
  std::string op;
  std::vector<std::string> values;
};

struct RawSelector {
  std::vector<std::pair<std::string, std::string>> match_labels;  // sorted by key
  std::vector<RawRequirement> match_expressions;
};

FieldError typeInvalid(std::string field, std::string_view expected, const json& got) {
  return {FieldErrorType::kTypeInvalid, std::move(field), std::nullopt,
          "expected " + std::string(expected) + ", got " + std::string(jsonTypeName(got))};
}

// Decodes `selector` (not null) like Go's json.Unmarshal into metav1.LabelSelector would: null
// members read as empty; wrong types are errors naming the field under `path`.
std::variant<RawSelector, FieldError> decodeSelector(const json& selector,
                                                     const std::string& path) {
  if (!selector.is_object()) return typeInvalid(path, "object", selector);
  RawSelector raw;
  if (auto it = selector.find("matchLabels"); it != selector.end() && !it->is_null()) {
    const std::string labels_path = child(path, "matchLabels");
    if (!it->is_object()) return typeInvalid(labels_path, "object", *it);
    for (const auto& [k, v] : it->items()) {
      if (v.is_null()) {
        raw.match_labels.emplace_back(k, std::string());
      } else if (v.is_string()) {
        raw.match_labels.emplace_back(k, v.get<std::string>());
      } else {
        return typeInvalid(key(labels_path, k), "string", v);
      }
    }
  }
  if (auto it = selector.find("matchExpressions"); it != selector.end() && !it->is_null()) {
    const std::string exprs_path = child(path, "matchExpressions");
    if (!it->is_array()) return typeInvalid(exprs_path, "array", *it);
    for (size_t i = 0; i < it->size(); ++i) {
      const json& expr = (*it)[i];
      const std::string expr_path = index(exprs_path, i);
      if (!expr.is_object()) return typeInvalid(expr_path, "object", expr);
      RawRequirement req;
      for (const auto& [field, target] :
           {std::pair<const char*, std::string*>{"key", &req.key}, {"operator", &req.op}}) {
        const auto f = expr.find(field);
        if (f == expr.end() || f->is_null()) continue;
        if (!f->is_string()) return typeInvalid(child(expr_path, field), "string", *f);
        *target = f->get<std::string>();
      }
      if (auto v = expr.find("values"); v != expr.end() && !v->is_null()) {
        const std::string values_path = child(expr_path, "values");
        if (!v->is_array()) return typeInvalid(values_path, "array", *v);
        for (size_t k = 0; k < v->size(); ++k) {
          const json& value = (*v)[k];
          if (value.is_null()) {
            req.values.emplace_back();
          } else if (value.is_string()) {
            req.values.push_back(value.get<std::string>());
          } else {
            return typeInvalid(index(values_path, k), "string", value);
          }
        }
      }
      raw.match_expressions.push_back(std::move(req));
    }
  }
  return raw;
}

// labels.NewRequirement: the requirement, or its aggregated field errors (paths relative to the
// requirement: "key", "values", "values[0][<key>]").
std::variant<SelectorRequirement, std::string> newRequirement(std::string key_name,
                                                              SelectorOperator op,
                                                              std::vector<std::string> values) {
  FieldErrors errs;
  if (auto msgs = validation::isQualifiedName(key_name); !msgs.empty()) {
    errs.push_back(FieldError::invalid("key", key_name, joinMessages(msgs)));
  }
  switch (op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kNotIn:
      if (values.empty()) {
        errs.push_back({FieldErrorType::kInvalid, "values", go::stringSliceGoSyntax(values),
                        "for 'in', 'notin' operators, values set can't be empty"});
      }
      break;
    case SelectorOperator::kEquals:
      if (values.size() != 1) {
        errs.push_back({FieldErrorType::kInvalid, "values", go::stringSliceGoSyntax(values),
                        "exact-match compatibility requires one single value"});
      }
      break;
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      if (!values.empty()) {
        errs.push_back({FieldErrorType::kInvalid, "values", go::stringSliceGoSyntax(values),
                        "values set must be empty for exists and does not exist"});
      }
      break;
  }
  for (size_t i = 0; i < values.size(); ++i) {
    if (auto msgs = validation::isValidLabelValue(values[i]); !msgs.empty()) {
      errs.push_back(
          FieldError::invalid(key(index("values", i), key_name), values[i], joinMessages(msgs)));
    }
  }
  if (!errs.empty()) return aggregate(errs);
  std::sort(values.begin(), values.end());
  return SelectorRequirement{std::move(key_name), op, std::move(values)};
}

std::optional<SelectorOperator> operatorFromString(std::string_view op) {
  if (op == "In") return SelectorOperator::kIn;
  if (op == "NotIn") return SelectorOperator::kNotIn;
  if (op == "Exists") return SelectorOperator::kExists;
  if (op == "DoesNotExist") return SelectorOperator::kDoesNotExist;
  return std::nullopt;
}

bool requirementMatches(const SelectorRequirement& r, const Labels& labels) {
  const auto it = labels.find(r.key);
  const bool has = it != labels.end();
  auto has_value = [&] {
    return has && std::find(r.values.begin(), r.values.end(), it->second) != r.values.end();
  };
  switch (r.op) {
    case SelectorOperator::kIn:
    case SelectorOperator::kEquals:
      return has_value();
    case SelectorOperator::kNotIn:
      return !has || !has_value();
    case SelectorOperator::kExists:
      return has;
    case SelectorOperator::kDoesNotExist:
      return !has;
  }
  return false;
}

std::string requirementString(const SelectorRequirement& r) {
  std::string out;
  if (r.op == SelectorOperator::kDoesNotExist) out += "!";
  out += r.key;
  switch (r.op) {
    case SelectorOperator::kEquals:
      out += "=";
      break;
    case SelectorOperator::kIn:
      out += " in ";
      break;
    case SelectorOperator::kNotIn:
      out += " notin ";
      break;
    case SelectorOperator::kExists:
    case SelectorOperator::kDoesNotExist:
      return out;
  }
  const bool set = r.op == SelectorOperator::kIn || r.op == SelectorOperator::kNotIn;
  if (set) out += "(";
  std::vector<std::string> values = r.values;
  std::sort(values.begin(), values.end());
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) out += ",";
    out += values[i];
  }
  if (set) out += ")";
  return out;
}

}  // namespace

LabelSelector LabelSelector::nothing() {
  LabelSelector s;
  s.nothing_ = true;
  return s;
}

LabelSelector LabelSelector::everything() { return LabelSelector{}; }

Result<LabelSelector> LabelSelector::parse(const json& selector) {
  if (selector.is_null()) return nothing();
  auto decoded = decodeSelector(selector, "");
  if (auto* err = std::get_if<FieldError>(&decoded)) {
    return makeError(err->field.empty() ? err->detail : err->field + ": " + err->detail);
  }
  const auto& raw = std::get<RawSelector>(decoded);
  LabelSelector out;
  if (raw.match_labels.empty() && raw.match_expressions.empty()) return out;
  for (const auto& [k, v] : raw.match_labels) {
    auto req = newRequirement(k, SelectorOperator::kEquals, {v});
    if (auto* err = std::get_if<std::string>(&req)) return makeError(*err);
    out.requirements_.push_back(std::get<SelectorRequirement>(std::move(req)));
  }
  for (const auto& expr : raw.match_expressions) {
    const auto op = operatorFromString(expr.op);
    if (!op) return makeError(go::quote(expr.op) + " is not a valid label selector operator");
    auto req = newRequirement(expr.key, *op, expr.values);
    if (auto* err = std::get_if<std::string>(&req)) return makeError(*err);
    out.requirements_.push_back(std::get<SelectorRequirement>(std::move(req)));
  }
  // internalSelector.Add sorts by key (sort.Sort; a stable sort keeps same-key order defined).
  std::stable_sort(out.requirements_.begin(), out.requirements_.end(),
                   [](const auto& a, const auto& b) { return a.key < b.key; });
  return out;
}

bool LabelSelector::matches(const Labels& labels) const {
  if (nothing_) return false;
  return std::all_of(requirements_.begin(), requirements_.end(),
                     [&](const auto& r) { return requirementMatches(r, labels); });
}

std::string LabelSelector::toString() const {
  std::string out;
  for (size_t i = 0; i < requirements_.size(); ++i) {
    if (i > 0) out += ",";
    out += requirementString(requirements_[i]);
  }
  return out;
}

FieldErrors validateLabelSelector(const json& selector, const std::string& path) {
  FieldErrors errs;
  if (selector.is_null()) return errs;
  auto decoded = decodeSelector(selector, path);
  if (auto* err = std::get_if<FieldError>(&decoded)) {
    errs.push_back(*err);
    return errs;
  }
  const auto& raw = std::get<RawSelector>(decoded);
  const std::string labels_path = child(path, "matchLabels");
  for (const auto& [k, v] : raw.match_labels) {
    for (const auto& msg : validation::isQualifiedName(k))
      errs.push_back(FieldError::invalid(labels_path, k, msg));
    for (const auto& msg : validation::isValidLabelValue(v)) {
      errs.push_back(FieldError::invalid(labels_path, v, msg));
    }
  }
  const std::string exprs_path = child(path, "matchExpressions");
  for (size_t i = 0; i < raw.match_expressions.size(); ++i) {
    const auto& expr = raw.match_expressions[i];
    const std::string expr_path = index(exprs_path, i);
    const auto op = operatorFromString(expr.op);
    if (op == SelectorOperator::kIn || op == SelectorOperator::kNotIn) {
      if (expr.values.empty()) {
        errs.push_back(FieldError::required(
            child(expr_path, "values"), "must be specified when `operator` is 'In' or 'NotIn'"));
      }
    } else if (op == SelectorOperator::kExists || op == SelectorOperator::kDoesNotExist) {
      if (!expr.values.empty()) {
        errs.push_back(FieldError::forbidden(
            child(expr_path, "values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"));
      }
    } else {
      errs.push_back(FieldError::invalid(child(expr_path, "operator"), expr.op,
                                         "not a valid selector operator"));
    }
    for (const auto& msg : validation::isQualifiedName(expr.key)) {
      errs.push_back(FieldError::invalid(child(expr_path, "key"), expr.key, msg));
    }
    for (size_t k = 0; k < expr.values.size(); ++k) {
      for (const auto& msg : validation::isValidLabelValue(expr.values[k])) {
        errs.push_back(
            FieldError::invalid(index(child(expr_path, "values"), k), expr.values[k], msg));
      }
    }
  }
  return errs;
}

Result<Labels> labelsOf(const json& object) { return stringMapAt(object, {"metadata", "labels"}); }

}  // namespace harness::core
