#include "harness/core/webhook_config.h"

#include <string>

#include <gtest/gtest.h>

namespace harness::core {
namespace {

using nlohmann::json;

WebhookConfiguration parseOk(std::string_view text) {
  auto parsed = parseWebhookConfiguration(text);
  EXPECT_TRUE(parsed.ok()) << parsed.error().message;
  return parsed.ok() ? std::move(parsed).value() : WebhookConfiguration{};
}

std::string parseError(std::string_view text) {
  auto parsed = parseWebhookConfiguration(text);
  EXPECT_FALSE(parsed.ok());
  return parsed.ok() ? std::string() : parsed.error().message;
}

std::string mutating(std::string_view webhooks) {
  return R"({"apiVersion": "admissionregistration.k8s.io/v1",
             "kind": "MutatingWebhookConfiguration", "metadata": {"name": "cfg"},
             "webhooks": )" +
         std::string(webhooks) + "}";
}

std::string validating(std::string_view webhooks) {
  return R"({"apiVersion": "admissionregistration.k8s.io/v1",
             "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "vcfg"},
             "webhooks": )" +
         std::string(webhooks) + "}";
}

constexpr std::string_view kInjector = R"([{
  "name": "sidecar-injector.linkerd.io",
  "clientConfig": {"service": {"namespace": "linkerd", "name": "linkerd-proxy-injector",
                               "path": "/"},
                   "caBundle": "Y2E="},
  "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
             "resources": ["pods"]}],
  "namespaceSelector": {"matchExpressions": [{"key": "config.linkerd.io/admission-webhooks",
                                              "operator": "NotIn", "values": ["disabled"]}]},
  "sideEffects": "None",
  "admissionReviewVersions": ["v1", "v1beta1"]}])";

TEST(WebhookConfigParseTest, ReadsEveryField) {
  const auto config = parseOk(mutating(R"([{
    "name": "a.example.com",
    "clientConfig": {"url": "https://example.com/mutate", "caBundle": "Y2E="},
    "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
               "resources": ["deployments", "deployments/scale"], "scope": "Namespaced"}],
    "failurePolicy": "Ignore", "matchPolicy": "Exact",
    "namespaceSelector": {"matchLabels": {"a": "b"}}, "objectSelector": {},
    "sideEffects": "NoneOnDryRun", "timeoutSeconds": 5,
    "admissionReviewVersions": ["v1"], "reinvocationPolicy": "IfNeeded",
    "matchConditions": [{"name": "not-system", "expression": "true"}]}])"));
  EXPECT_EQ(config.kind, WebhookKind::kMutating);
  EXPECT_EQ(config.name, "cfg");
  ASSERT_EQ(config.webhooks.size(), 1u);
  const auto& h = config.webhooks[0];
  EXPECT_EQ(h.name, "a.example.com");
  EXPECT_EQ(h.client_config.url, "https://example.com/mutate");
  EXPECT_FALSE(h.client_config.service);
  EXPECT_EQ(h.client_config.ca_bundle, "ca");
  ASSERT_EQ(h.rules.size(), 1u);
  EXPECT_EQ(h.rules[0].operations, (std::vector<std::string>{"CREATE", "UPDATE"}));
  EXPECT_EQ(h.rules[0].api_groups, (std::vector<std::string>{"apps"}));
  EXPECT_EQ(h.rules[0].api_versions, (std::vector<std::string>{"v1"}));
  EXPECT_EQ(h.rules[0].resources, (std::vector<std::string>{"deployments", "deployments/scale"}));
  EXPECT_EQ(h.rules[0].scope, "Namespaced");
  EXPECT_EQ(h.failure_policy, "Ignore");
  EXPECT_EQ(h.match_policy, "Exact");
  EXPECT_EQ(h.namespace_selector.json, json::parse(R"({"matchLabels": {"a": "b"}})"));
  EXPECT_EQ(h.object_selector.json, json::object());
  EXPECT_EQ(h.side_effects, "NoneOnDryRun");
  EXPECT_EQ(h.timeout_seconds, 5);
  EXPECT_EQ(h.admission_review_versions, (std::vector<std::string>{"v1"}));
  EXPECT_EQ(h.reinvocation_policy, "IfNeeded");
  EXPECT_EQ(h.match_conditions, (std::vector<MatchCondition>{{"not-system", "true"}}));
}

TEST(WebhookConfigParseTest, AbsentOptionalFieldsStayUnset) {
  const auto config = parseOk(mutating(R"([{"name": "a.b.c", "clientConfig": {}}])"));
  const auto& h = config.webhooks[0];
  EXPECT_FALSE(h.failure_policy);
  EXPECT_FALSE(h.match_policy);
  EXPECT_FALSE(h.side_effects);
  EXPECT_FALSE(h.timeout_seconds);
  EXPECT_FALSE(h.reinvocation_policy);
  EXPECT_TRUE(h.namespace_selector.isNil());
  EXPECT_TRUE(h.object_selector.isNil());
  EXPECT_TRUE(h.admission_review_versions.empty());
}

TEST(WebhookConfigParseTest, NullSelectorIsNilAndEmptySelectorIsNot) {
  const auto config =
      parseOk(mutating(R"([{"name": "a.b.c", "namespaceSelector": null, "objectSelector": {}}])"));
  EXPECT_TRUE(config.webhooks[0].namespace_selector.isNil());
  EXPECT_FALSE(config.webhooks[0].object_selector.isNil());
}

TEST(WebhookConfigParseTest, NilSelectorMatchesNothingAndEmptySelectorEverything) {
  const auto config = parseOk(mutating(R"([{"name": "a.b.c", "objectSelector": {}}])"));
  const Labels labels{{"app", "web"}};
  EXPECT_FALSE(config.webhooks[0].namespace_selector.selector.matches(labels));
  EXPECT_TRUE(config.webhooks[0].object_selector.selector.matches(labels));
}

TEST(WebhookConfigParseTest, ParsesSelectors) {
  const auto config = parseOk(mutating(kInjector));
  const auto& selector = config.webhooks[0].namespace_selector;
  EXPECT_FALSE(selector.parse_error);
  EXPECT_TRUE(selector.selector.matches(Labels{}));
  EXPECT_FALSE(
      selector.selector.matches(Labels{{"config.linkerd.io/admission-webhooks", "disabled"}}));
}

TEST(WebhookConfigParseTest, KeepsSelectorParseErrorsForMatchTime) {
  const auto config = parseOk(mutating(R"([{"name": "a.b.c", "objectSelector":
      {"matchExpressions": [{"key": "a", "operator": "Near"}]}}])"));
  EXPECT_TRUE(config.webhooks[0].object_selector.parse_error.has_value());
  EXPECT_FALSE(config.webhooks[0].object_selector.selector.matches(Labels{{"a", "b"}}));
}

TEST(WebhookConfigParseTest, ReadsServiceReference) {
  const auto config = parseOk(mutating(kInjector));
  const auto& svc = config.webhooks[0].client_config.service;
  ASSERT_TRUE(svc);
  EXPECT_EQ(svc->namespace_name, "linkerd");
  EXPECT_EQ(svc->name, "linkerd-proxy-injector");
  EXPECT_EQ(svc->path, "/");
  EXPECT_FALSE(svc->port);
}

TEST(WebhookConfigParseTest, ValidatingConfigurationHasNoReinvocationPolicy) {
  const auto config =
      parseOk(validating(R"([{"name": "a.b.c", "reinvocationPolicy": "IfNeeded"}])"));
  EXPECT_EQ(config.kind, WebhookKind::kValidating);
  EXPECT_FALSE(config.webhooks[0].reinvocation_policy);
}

TEST(WebhookConfigParseTest, AssignsWebhookUids) {
  const auto config =
      parseOk(mutating(R"([{"name": "a.b.c"}, {"name": "x.y.z"}, {"name": "a.b.c"}])"));
  EXPECT_EQ(config.webhooks[0].uid, "cfg/a.b.c/0");
  EXPECT_EQ(config.webhooks[1].uid, "cfg/x.y.z/0");
  EXPECT_EQ(config.webhooks[2].uid, "cfg/a.b.c/1");
}

TEST(WebhookConfigParseTest, NoWebhooksIsFine) {
  const auto config = parseOk(R"({"apiVersion": "admissionregistration.k8s.io/v1",
      "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "empty"}})");
  EXPECT_TRUE(config.webhooks.empty());
}

TEST(WebhookConfigParseTest, RequiresKind) {
  EXPECT_EQ(parseError(R"({"apiVersion": "admissionregistration.k8s.io/v1"})"),
            R"(Object 'Kind' is missing in '{"apiVersion":"admissionregistration.k8s.io/v1"}')");
}

TEST(WebhookConfigParseTest, RejectsOtherKindsAndVersions) {
  EXPECT_EQ(parseError(R"({"apiVersion": "v1", "kind": "Pod"})"),
            R"(no matches for kind "Pod" in version "v1")");
  EXPECT_EQ(parseError(R"({"apiVersion": "admissionregistration.k8s.io/v1beta1",
                           "kind": "MutatingWebhookConfiguration"})"),
            R"(no matches for kind "MutatingWebhookConfiguration" in version )"
            R"("admissionregistration.k8s.io/v1beta1")");
}

TEST(WebhookConfigParseTest, RejectsNonObjects) {
  EXPECT_EQ(parseError("[1]"),
            "couldn't get version/kind; json parse error: json: cannot unmarshal array into Go "
            "value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind "
            "string \"json:\\\"kind,omitempty\\\"\" }");
  EXPECT_EQ(parseError(R"({"kind": 5})"),
            "couldn't get version/kind; json parse error: json: cannot unmarshal number into Go "
            "struct field .kind of type string");
}

TEST(WebhookConfigParseTest, RejectsInvalidJsonText) {
  EXPECT_EQ(parseError("{").rfind("invalid JSON: parse error at line 1, column 2", 0), 0u);
}

TEST(WebhookConfigParseTest, NamesTheFieldOfAWrongType) {
  EXPECT_EQ(parseError(mutating(R"([{"name": "a.b.c", "timeoutSeconds": "10"}])")),
            "json: cannot unmarshal string into Go struct field "
            "MutatingWebhook.webhooks.timeoutSeconds of type int32");
  EXPECT_EQ(parseError(validating(R"([{"name": "a.b.c", "timeoutSeconds": 2.5}])")),
            "json: cannot unmarshal number 2.5 into Go struct field "
            "ValidatingWebhook.webhooks.timeoutSeconds of type int32");
  EXPECT_EQ(parseError(mutating(R"({"name": "a.b.c"})")),
            "json: cannot unmarshal object into Go struct field "
            "MutatingWebhookConfiguration.webhooks of type []v1.MutatingWebhook");
  EXPECT_EQ(parseError(mutating(R"(["a.b.c"])")),
            "json: cannot unmarshal string into Go struct field "
            "MutatingWebhookConfiguration.webhooks of type v1.MutatingWebhook");
  EXPECT_EQ(parseError(mutating(R"([{"sideEffects": false}])")),
            "json: cannot unmarshal bool into Go struct field MutatingWebhook.webhooks.sideEffects "
            "of type v1.SideEffectClass");
}

TEST(WebhookConfigParseTest, NamesNestedFieldsOfAWrongType) {
  EXPECT_EQ(parseError(mutating(R"([{"rules": [{"operations": [1]}]}])")),
            "json: cannot unmarshal number into Go struct field "
            "RuleWithOperations.webhooks.rules.operations of type v1.OperationType");
  EXPECT_EQ(parseError(mutating(R"([{"rules": [{"apiGroups": ""}]}])")),
            "json: cannot unmarshal string into Go struct field "
            "RuleWithOperations.webhooks.rules.apiGroups of type []string");
  EXPECT_EQ(parseError(mutating(R"([{"clientConfig": {"service": {"port": "443"}}}])")),
            "json: cannot unmarshal string into Go struct field "
            "ServiceReference.webhooks.clientConfig.service.port of type int32");
  EXPECT_EQ(
      parseError(mutating(R"([{"clientConfig": "https://x"}])")),
      "json: cannot unmarshal string into Go struct field MutatingWebhook.webhooks.clientConfig "
      "of type v1.WebhookClientConfig");
  EXPECT_EQ(parseError(mutating(R"([{"namespaceSelector": {"matchLabels": {"a": 1}}}])")),
            "json: cannot unmarshal number into Go struct field "
            "LabelSelector.webhooks.namespaceSelector.matchLabels of type string");
  EXPECT_EQ(
      parseError(mutating(R"([{"objectSelector": {"matchExpressions": [{"values": "x"}]}}])")),
      "json: cannot unmarshal string into Go struct field "
      "LabelSelectorRequirement.webhooks.objectSelector.matchExpressions.values of type "
      "[]string");
  EXPECT_EQ(parseError(mutating(R"([{"matchConditions": [{"name": 1}]}])")),
            "json: cannot unmarshal number into Go struct field "
            "MatchCondition.webhooks.matchConditions.name of type string");
  EXPECT_EQ(parseError(R"({"apiVersion": "admissionregistration.k8s.io/v1",
      "kind": "MutatingWebhookConfiguration", "metadata": {"name": 1}})"),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type "
            "string");
}

TEST(WebhookConfigParseTest, RejectsInvalidBase64CaBundle) {
  EXPECT_EQ(parseError(mutating(R"([{"clientConfig": {"caBundle": "not base64!"}}])")),
            "illegal base64 data at input byte 3");
}

// --- defaulting ---

TEST(WebhookConfigDefaultsTest, FillsV1Defaults) {
  auto config = parseOk(mutating(kInjector));
  applyV1Defaults(config);
  const auto& h = config.webhooks[0];
  EXPECT_EQ(h.failure_policy, "Fail");
  EXPECT_EQ(h.match_policy, "Equivalent");
  EXPECT_EQ(h.object_selector.json, json::object());
  EXPECT_TRUE(h.object_selector.selector.matchesEverything());
  EXPECT_EQ(h.timeout_seconds, 10);
  EXPECT_EQ(h.reinvocation_policy, "Never");
  EXPECT_EQ(h.rules[0].scope, "*");
  EXPECT_EQ(h.client_config.service->port, 443);
}

TEST(WebhookConfigDefaultsTest, KeepsValuesThatAreSet) {
  auto config = parseOk(mutating(R"([{"name": "a.b.c", "failurePolicy": "Ignore",
      "matchPolicy": "Exact", "timeoutSeconds": 3, "reinvocationPolicy": "IfNeeded",
      "namespaceSelector": {"matchLabels": {"a": "b"}},
      "clientConfig": {"service": {"namespace": "n", "name": "s", "port": 8443}},
      "rules": [{"scope": "Cluster"}]}])"));
  applyV1Defaults(config);
  const auto& h = config.webhooks[0];
  EXPECT_EQ(h.failure_policy, "Ignore");
  EXPECT_EQ(h.match_policy, "Exact");
  EXPECT_EQ(h.timeout_seconds, 3);
  EXPECT_EQ(h.reinvocation_policy, "IfNeeded");
  EXPECT_EQ(h.namespace_selector.json, json::parse(R"({"matchLabels": {"a": "b"}})"));
  EXPECT_EQ(h.client_config.service->port, 8443);
  EXPECT_EQ(h.rules[0].scope, "Cluster");
}

TEST(WebhookConfigDefaultsTest, LeavesSideEffectsVersionsAndPathAlone) {
  auto config = parseOk(mutating(
      R"([{"name": "a.b.c", "clientConfig": {"service": {"namespace": "n", "name": "s"}}}])"));
  applyV1Defaults(config);
  const auto& h = config.webhooks[0];
  EXPECT_FALSE(h.side_effects);
  EXPECT_TRUE(h.admission_review_versions.empty());
  EXPECT_FALSE(h.client_config.service->path);
}

TEST(WebhookConfigDefaultsTest, ValidatingWebhooksGetNoReinvocationPolicy) {
  auto config = parseOk(validating(R"([{"name": "a.b.c"}])"));
  applyV1Defaults(config);
  EXPECT_FALSE(config.webhooks[0].reinvocation_policy);
  EXPECT_EQ(config.webhooks[0].timeout_seconds, 10);
}

// --- serialization ---

TEST(WebhookConfigJsonTest, WritesTheDefaultedObject) {
  auto config = parseOk(mutating(kInjector));
  applyV1Defaults(config);
  EXPECT_EQ(toJson(config), json::parse(R"({
    "apiVersion": "admissionregistration.k8s.io/v1", "kind": "MutatingWebhookConfiguration",
    "metadata": {"name": "cfg"},
    "webhooks": [{
      "name": "sidecar-injector.linkerd.io",
      "clientConfig": {"service": {"namespace": "linkerd", "name": "linkerd-proxy-injector",
                                   "path": "/", "port": 443},
                       "caBundle": "Y2E="},
      "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                 "resources": ["pods"], "scope": "*"}],
      "failurePolicy": "Fail", "matchPolicy": "Equivalent",
      "namespaceSelector": {"matchExpressions": [{"key": "config.linkerd.io/admission-webhooks",
                                                  "operator": "NotIn", "values": ["disabled"]}]},
      "objectSelector": {},
      "sideEffects": "None", "timeoutSeconds": 10,
      "admissionReviewVersions": ["v1", "v1beta1"],
      "reinvocationPolicy": "Never"}]})"));
}

TEST(WebhookConfigJsonTest, WritesNullForAbsentSideEffectsAndVersions) {
  const auto config = parseOk(validating(R"([{"name": "a.b.c"}])"));
  EXPECT_EQ(toJson(config)["webhooks"][0], json::parse(R"({"name": "a.b.c", "clientConfig": {},
    "sideEffects": null, "admissionReviewVersions": null})"));
}

TEST(WebhookConfigJsonTest, OmitsEmptyWebhookList) {
  constexpr std::string_view kText = R"({"apiVersion": "admissionregistration.k8s.io/v1",
      "kind": "ValidatingWebhookConfiguration",
      "metadata": {"name": "e", "labels": {"a": "b"}}})";
  EXPECT_EQ(toJson(parseOk(kText)), json::parse(kText));
}

TEST(WebhookConfigJsonTest, RoundTripsThroughParse) {
  auto config = parseOk(mutating(kInjector));
  applyV1Defaults(config);
  const auto again = parseWebhookConfiguration(toJson(config));
  ASSERT_TRUE(again.ok()) << again.error().message;
  EXPECT_EQ(toJson(*again), toJson(config));
  EXPECT_EQ(again->webhooks[0].uid, "cfg/sidecar-injector.linkerd.io/0");
}

}  // namespace
}  // namespace harness::core
