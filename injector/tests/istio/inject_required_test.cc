// injectRequired as a table, modelled on istio/istio pkg/kube/inject/webhook_test.go
// TestInjectRequired, with 1.27+ value semantics (docs/istio-injector.md §1).

#include "harness/injector/istio/inject_required.h"

#include <gtest/gtest.h>

namespace harness::injector::istio {
namespace {

using nlohmann::json;

InjectorConfig configWith(const std::string& policy, const json& never = json::array(),
                          const json& always = json::array()) {
  std::string yaml = "policy: " + policy + "\nneverInjectSelector: " + never.dump() +
                     "\nalwaysInjectSelector: " + always.dump() + "\n";
  auto c = parseInjectorConfig(yaml);
  EXPECT_TRUE(c.ok()) << (c.ok() ? "" : c.error().message);
  return c.ok() ? *c : InjectorConfig{};
}

struct Case {
  const char* name;
  std::string policy;
  json spec;
  json meta;
  json never = json::array();
  json always = json::array();
  bool want;
};

const json kFooBar = json::array({{{"matchLabels", {{"foo", "bar"}}}}});
const json kFooExists =
    json::array({{{"matchExpressions", json::array({{{"key", "foo"}, {"operator", "Exists"}}})}}});

std::vector<Case> cases() {
  const json plain = {{"name", "p"}, {"namespace", "test"}};
  auto ann = [](const char* v) {
    return json{{"name", "p"}, {"namespace", "test"}, {"annotations", {{"sidecar.istio.io/inject", v}}}};
  };
  auto lbl = [](const char* v, json extra = json::object()) {
    json labels = std::move(extra);
    labels["sidecar.istio.io/inject"] = v;
    return json{{"name", "p"}, {"namespace", "test"}, {"labels", labels}};
  };
  return {
      {"enabled_default", "enabled", json::object(), plain, {}, {}, true},
      {"disabled_default", "disabled", json::object(), plain, {}, {}, false},
      {"enabled_annotation_false", "enabled", json::object(), ann("false"), {}, {}, false},
      {"disabled_annotation_true", "disabled", json::object(), ann("true"), {}, {}, true},
      {"enabled_label_false", "enabled", json::object(), lbl("false"), {}, {}, false},
      {"disabled_label_true", "disabled", json::object(), lbl("true"), {}, {}, true},
      {"yes_is_invalid_since_1_27_enabled", "enabled", json::object(), ann("yes"), {}, {}, true},
      {"yes_is_invalid_since_1_27_disabled", "disabled", json::object(), ann("yes"), {}, {}, false},
      {"capital_True_falls_back", "disabled", json::object(), lbl("True"), {}, {}, false},
      {"random_value_falls_back", "enabled", json::object(), ann("random"), {}, {}, true},
      {"host_network_beats_inject_true", "enabled", {{"hostNetwork", true}}, ann("true"), {},
       kFooBar, false},
      {"wrong_policy", "wrong_policy", json::object(), ann("true"), {}, {}, false},
      {"empty_policy", "\"\"", json::object(), plain, {}, {}, false},
      {"kube_system_ignored", "enabled", json::object(),
       {{"name", "p"}, {"namespace", "kube-system"}}, {}, {}, false},
      {"kube_node_lease_ignored", "enabled", json::object(),
       {{"name", "p"}, {"namespace", "kube-node-lease"}}, {}, {}, false},
      {"local_path_storage_ignored", "enabled", json::object(),
       {{"name", "p"}, {"namespace", "local-path-storage"}}, {}, {}, false},
      {"istio_system_not_ignored", "enabled", json::object(),
       {{"name", "p"}, {"namespace", "istio-system"}}, {}, {}, true},
      {"always_selector_disabled_policy", "disabled", json::object(),
       {{"name", "p"}, {"labels", {{"foo", "bar"}}}}, {}, kFooBar, true},
      {"always_selector_no_match", "disabled", json::object(),
       {{"name", "p"}, {"labels", {{"foo", "baz"}}}}, {}, kFooBar, false},
      {"always_selector_exists_empty_value", "disabled", json::object(),
       {{"name", "p"}, {"labels", {{"foo", ""}}}}, {}, kFooExists, true},
      {"never_selector_enabled_policy", "enabled", json::object(),
       {{"name", "p"}, {"labels", {{"foo", "bar"}}}}, kFooBar, {}, false},
      {"never_beats_always", "disabled", json::object(),
       {{"name", "p"}, {"labels", {{"foo", "bar"}}}}, kFooBar, kFooBar, false},
      {"never_does_not_override_explicit_true", "enabled", json::object(),
       {{"name", "p"}, {"labels", {{"foo", "bar"}}}, {"annotations", {{"sidecar.istio.io/inject", "true"}}}},
       kFooBar, {}, true},
      {"always_does_not_override_explicit_false", "enabled", json::object(),
       {{"name", "p"}, {"labels", {{"foo", "bar"}}}, {"annotations", {{"sidecar.istio.io/inject", "false"}}}},
       {}, kFooBar, false},
      {"empty_selector_skipped_never", "enabled", json::object(), plain,
       json::array({json::object()}), {}, true},
      {"empty_selector_skipped_always", "disabled", json::object(), plain, {},
       json::array({json::object()}), false},
      {"label_true_beats_annotation_false", "disabled", json::object(),
       {{"name", "p"}, {"labels", {{"sidecar.istio.io/inject", "true"}}},
        {"annotations", {{"sidecar.istio.io/inject", "false"}}}}, {}, {}, true},
      {"label_false_beats_annotation_true", "enabled", json::object(),
       {{"name", "p"}, {"labels", {{"sidecar.istio.io/inject", "false"}}},
        {"annotations", {{"sidecar.istio.io/inject", "true"}}}}, {}, {}, false},
      {"empty_label_beats_annotation_true", "disabled", json::object(),
       {{"name", "p"}, {"labels", {{"sidecar.istio.io/inject", ""}}},
        {"annotations", {{"sidecar.istio.io/inject", "true"}}}}, {}, {}, false},
      {"invalid_selector_skipped", "enabled", json::object(), {{"name", "p"}, {"labels", {{"foo", "bar"}}}},
       json::array({{{"matchExpressions", json::array({{{"key", "foo"}, {"operator", "Bogus"}}})}}}), {},
       true},
  };
}

TEST(InjectRequired, Table) {
  for (const auto& c : cases()) {
    auto config = configWith(c.policy, c.never.is_null() ? json::array() : c.never,
                             c.always.is_null() ? json::array() : c.always);
    auto d = injectRequired(ignoredNamespaces(), config, c.spec, c.meta);
    EXPECT_EQ(d.required, c.want) << c.name << ": " << d.reason;
    EXPECT_FALSE(d.reason.empty()) << c.name;
  }
}

TEST(InjectRequired, InvalidValueLogsAWarning) {
  auto d = injectRequired(ignoredNamespaces(), configWith("enabled"), json::object(),
                          {{"annotations", {{"sidecar.istio.io/inject", "yes"}}}});
  ASSERT_FALSE(d.logs.empty());
  EXPECT_EQ(d.logs[0].level, LogLine::Level::kWarning);
}

TEST(InjectRequired, WrongPolicyLogsIstiosError) {
  auto d = injectRequired(ignoredNamespaces(), configWith("bogus"), json::object(), json::object());
  ASSERT_EQ(d.logs.size(), 1u);
  EXPECT_EQ(d.logs[0].message,
            "Illegal value for autoInject:bogus, must be one of [disabled,enabled]. Auto injection "
            "disabled!");
}

TEST(InjectRequired, ReasonNamesTheDeciderForSelectors) {
  auto d = injectRequired(ignoredNamespaces(), configWith("enabled", kFooBar), json::object(),
                          {{"labels", {{"foo", "bar"}}}});
  EXPECT_EQ(d.reason, "neverInjectSelector foo=bar matches");
}

TEST(InjectRequired, IgnoredNamespacesAreExactlyFour) {
  EXPECT_EQ(ignoredNamespaces(), (std::vector<std::string>{"kube-system", "kube-public",
                                                           "kube-node-lease",
                                                           "local-path-storage"}));
}

}  // namespace
}  // namespace harness::injector::istio
