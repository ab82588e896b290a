// The label selector agrees with a naive reference reading of apimachinery's semantics
// (docs/admission-chain.md §3.5) for every selector and label set.

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "harness/core/label_selector.h"

namespace harness::property {
namespace {

using nlohmann::json;

rc::Gen<std::string> genLabelKey() { return rc::gen::element<std::string>("app", "tier", "env"); }
rc::Gen<std::string> genLabelValue() {
  return rc::gen::element<std::string>("web", "db", "prod", "dev");
}

// Maps over a three-key alphabet: built from a list of pairs (later pairs win), since asking
// for a map of N distinct keys would give up for N > 3.
rc::Gen<std::map<std::string, std::string>> genLabelMap() {
  return rc::gen::map(
      rc::gen::container<std::vector<std::pair<std::string, std::string>>>(
          rc::gen::pair(genLabelKey(), genLabelValue())),
      [](const std::vector<std::pair<std::string, std::string>>& pairs) {
        std::map<std::string, std::string> m;
        for (const auto& [k, v] : pairs) m[k] = v;
        return m;
      });
}

struct Expr {
  std::string key, op;
  std::vector<std::string> values;
};

// The reference: each clause read literally from the documentation.
bool reference(const std::map<std::string, std::string>& match_labels,
               const std::vector<Expr>& exprs, const core::Labels& labels) {
  for (const auto& [k, v] : match_labels) {
    auto it = labels.find(k);
    if (it == labels.end() || it->second != v) return false;
  }
  for (const auto& e : exprs) {
    auto it = labels.find(e.key);
    const bool present = it != labels.end();
    const bool in = present && std::find(e.values.begin(), e.values.end(), it->second) != e.values.end();
    if (e.op == "In" && !in) return false;
    if (e.op == "NotIn" && in) return false;  // absent key matches NotIn
    if (e.op == "Exists" && !present) return false;
    if (e.op == "DoesNotExist" && present) return false;
  }
  return true;
}

RC_GTEST_PROP(SelectorLaws, AgreesWithTheReferenceSemantics, ()) {
  const auto match_labels = *genLabelMap();
  const auto exprs = *rc::gen::container<std::vector<Expr>>(rc::gen::exec([] {
    Expr e;
    e.key = *genLabelKey();
    e.op = *rc::gen::element<std::string>("In", "NotIn", "Exists", "DoesNotExist");
    if (e.op == "In" || e.op == "NotIn") {
      e.values = *rc::gen::nonEmpty(rc::gen::container<std::vector<std::string>>(genLabelValue()));
    }
    return e;
  }));
  const core::Labels labels = *genLabelMap();

  json selector = json::object();
  if (!match_labels.empty()) selector["matchLabels"] = match_labels;
  for (const auto& e : exprs) {
    json expr = {{"key", e.key}, {"operator", e.op}};
    if (!e.values.empty()) expr["values"] = e.values;
    selector["matchExpressions"].push_back(expr);
  }
  const auto parsed = core::LabelSelector::parse(selector);
  RC_ASSERT(parsed.ok());
  RC_ASSERT(parsed->matches(labels) == reference(match_labels, exprs, labels));
}

RC_GTEST_PROP(SelectorLaws, NilMatchesNothingAndEmptyMatchesEverything, ()) {
  const core::Labels labels = *genLabelMap();
  RC_ASSERT(!core::LabelSelector::parse(nullptr)->matches(labels));
  RC_ASSERT(core::LabelSelector::parse(json::object())->matches(labels));
}

}  // namespace
}  // namespace harness::property
