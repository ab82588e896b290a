// Label selectors in both forms: the string form of a LIST's ?labelSelector= (labels.Parse,
// apiserver-sim/src/rest/selectors.h) with ?fieldSelector= (fields.ParseSelector), and the JSON
// form of webhook configurations and objects (metav1.LabelSelector, core::LabelSelector::parse
// and validateLabelSelector). Checked: no crash, and a parsed string selector prints
// (labels.Selector.String) to a text that parses back to the same selector.

#include "fuzz_support.h"
#include "harness/core/label_selector.h"
#include "selectors.h"

using namespace harness;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text = fuzz::asText(data, size);
  const core::Labels labels = {{"app", "web"}, {"tier", "frontend"}, {"version", "v1"}};

  auto selector = sim::rest::parseLabelSelector(text);
  if (selector.ok()) {
    const std::string printed = selector->toString();
    auto again = sim::rest::parseLabelSelector(printed);
    FUZZ_CHECK(again.ok(), printed + "\n" + again.error().message);
    FUZZ_CHECK(again->toString() == printed, printed + "\n" + again->toString());
    FUZZ_CHECK(again->matches(labels) == selector->matches(labels), printed);
  }

  auto fields = sim::rest::parseFieldSelector(text);
  if (fields.ok()) {
    (void)sim::rest::checkFieldLabels("", "Pod", *fields);
    (void)sim::rest::matchesFields(nlohmann::json::object(), *fields);
  }

  const nlohmann::json json = fuzz::parseJsonOrDiscarded(text);
  if (!json.is_discarded()) {
    auto parsed = core::LabelSelector::parse(json);
    if (parsed.ok()) {
      (void)parsed->matches(labels);
      (void)parsed->toString();
    }
    (void)core::validateLabelSelector(json, "spec.selector");
    (void)core::labelsOf(json);
  }
  return 0;
}
