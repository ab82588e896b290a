#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/webhook_config.h"

namespace harness::core {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr std::string_view kCaPem = R"(-----BEGIN CERTIFICATE-----
MIIBgTCCASegAwIBAgIUbwQqYYsAbjT6r7b93zBY+ppaN90wCgYIKoZIzj0EAwIw
FTETMBEGA1UEAwwKd2ViaG9vay1jYTAgFw0yNjExMjIwMzI3NTFaGA8yMTI2MTAy
OTAzMjc1MVowFTETMBEGA1UEAwwKd2ViaG9vay1jYTBZMBMGByqGSM49AgEGCCqG
SM49AwEHA0IABAVAcL3ee8LE6Td/0QF/6m1eCp6TkH6xbEd8pMaUGmFpYJfX5u+E
S+QaNexcx4SvfDf3EdKRB+n4wamTqETPYKujUzBRMB0GA1UdDgQWBBQfXOJ5q+Uk
idVD5ARNYNDXi5qKNjAfBgNVHSMEGDAWgBQfXOJ5q+UkidVD5ARNYNDXi5qKNjAP
BgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCIQD7qljEnRpWUA2buoCu
I7yey11QExHaEf1RjxvUzqKkhgIgStqqceBkYube+MhrL+V/y6M40/pOQT/GqA5u
6VjMQ0g=
-----END CERTIFICATE-----
)";

constexpr std::string_view kSubdomainMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
    "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

constexpr std::string_view kQualifiedNameMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";

Webhook validHook(std::string name = "sidecar-injector.example.com") {
  Webhook h;
  h.name = std::move(name);
  h.client_config.service = ServiceReference{"injector", "injector", "/inject", 443};
  RuleWithOperations rule;
  rule.operations = {"CREATE"};
  rule.api_groups = {""};
  rule.api_versions = {"v1"};
  rule.resources = {"pods"};
  h.rules.push_back(rule);
  h.side_effects = "None";
  h.admission_review_versions = {"v1"};
  return h;
}

WebhookConfiguration config(WebhookKind kind, std::vector<Webhook> hooks) {
  WebhookConfiguration c;
  c.kind = kind;
  c.name = "injector";
  c.metadata = {{"name", "injector"}};
  c.webhooks = std::move(hooks);
  applyV1Defaults(c);
  assignWebhookUids(c);
  return c;
}

// The messages of validating a mutating configuration holding one modified webhook.
template <class Edit>
std::vector<std::string> errorsFor(Edit edit, WebhookKind kind = WebhookKind::kMutating) {
  Webhook h = validHook();
  edit(h);
  std::vector<std::string> out;
  for (const auto& e : validateWebhookConfiguration(config(kind, {h}))) out.push_back(e.toString());
  return out;
}

std::vector<std::string> messages(const FieldErrors& errors) {
  std::vector<std::string> out;
  for (const auto& e : errors) out.push_back(e.toString());
  return out;
}

std::vector<std::string> rulesErrors(std::vector<std::string> ops, std::vector<std::string> groups,
                                     std::vector<std::string> versions,
                                     std::vector<std::string> resources) {
  return errorsFor([&](Webhook& h) {
    h.rules[0].operations = ops;
    h.rules[0].api_groups = groups;
    h.rules[0].api_versions = versions;
    h.rules[0].resources = resources;
  });
}

std::vector<std::string> urlErrors(std::string url) {
  return errorsFor([&](Webhook& h) {
    h.client_config.service.reset();
    h.client_config.url = url;
  });
}

std::vector<std::string> servicePathErrors(std::optional<std::string> path) {
  return errorsFor([&](Webhook& h) { h.client_config.service->path = path; });
}

// --- whole configurations ---

TEST(WebhookValidationTest, AcceptsAValidConfiguration) {
  EXPECT_THAT(errorsFor([](Webhook&) {}), IsEmpty());
  EXPECT_THAT(errorsFor([](Webhook&) {}, WebhookKind::kValidating), IsEmpty());
}

TEST(WebhookValidationTest, RequiresAMetadataName) {
  auto c = config(WebhookKind::kMutating, {validHook()});
  c.name.clear();
  EXPECT_THAT(messages(validateWebhookConfiguration(c)),
              ElementsAre("metadata.name: Required value: name or generateName is required"));
}

TEST(WebhookValidationTest, MetadataNameIsADnsSubdomain) {
  auto c = config(WebhookKind::kMutating, {validHook()});
  c.name = "Injector_1";
  EXPECT_THAT(
      messages(validateWebhookConfiguration(c)),
      ElementsAre("metadata.name: Invalid value: \"Injector_1\": " + std::string(kSubdomainMsg)));
}

TEST(WebhookValidationTest, GenerateNameMayEndWithADash) {
  auto c = config(WebhookKind::kMutating, {validHook()});
  c.metadata["generateName"] = "injector-";
  EXPECT_THAT(validateWebhookConfiguration(c), IsEmpty());
  c.metadata["generateName"] = "Bad-";
  EXPECT_THAT(
      messages(validateWebhookConfiguration(c)),
      ElementsAre("metadata.generateName: Invalid value: \"Bad-\": " + std::string(kSubdomainMsg)));
}

TEST(WebhookValidationTest, FullMessageNamesKindAndGroup) {
  Webhook h = validHook();
  h.side_effects.reset();
  h.admission_review_versions.clear();
  const auto c = config(WebhookKind::kValidating, {h});
  EXPECT_EQ(invalidConfigurationMessage(c, validateWebhookConfiguration(c)),
            "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"injector\" is invalid: "
            "[webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun, "
            "webhooks[0].admissionReviewVersions: Required value: must specify one of v1, "
            "v1beta1]");
  const auto status = invalidConfigurationStatus(c, validateWebhookConfiguration(c));
  EXPECT_EQ(status.code, 422);
  EXPECT_EQ(status.details->kind, "ValidatingWebhookConfiguration");
  EXPECT_EQ(status.details->causes.size(), 2u);
}

TEST(WebhookValidationTest, ReportsErrorsInGoOrder) {
  Webhook h = validHook("bad");
  h.rules[0].operations.clear();
  h.failure_policy = "Never";
  h.match_policy = "Fuzzy";
  h.side_effects = "Some";
  h.timeout_seconds = 0;
  h.reinvocation_policy = "Always";
  h.client_config.url = "https://x.example.com";
  h.match_conditions = {{"", ""}};
  h.admission_review_versions = {"v2"};
  const auto c = config(WebhookKind::kMutating, {h, validHook("bad")});
  std::vector<std::string> fields;
  for (const auto& e : validateWebhookConfiguration(c)) fields.push_back(e.field);
  EXPECT_THAT(
      fields,
      ElementsAre("webhooks[0].name", "webhooks[0].rules[0].operations",
                  "webhooks[0].failurePolicy", "webhooks[0].matchPolicy", "webhooks[0].sideEffects",
                  "webhooks[0].timeoutSeconds", "webhooks[0].reinvocationPolicy",
                  "webhooks[0].clientConfig", "webhooks[0].matchConditions[0].expression",
                  "webhooks[0].matchConditions[0].name", "webhooks[0].admissionReviewVersions",
                  "webhooks[1].name", "webhooks[1].name"));
}

// --- webhook name ---

TEST(WebhookValidationTest, WebhookNameIsRequired) {
  EXPECT_THAT(errorsFor([](Webhook& h) { h.name.clear(); }),
              ElementsAre("webhooks[0].name: Required value"));
}

TEST(WebhookValidationTest, WebhookNameNeedsThreeSegments) {
  EXPECT_THAT(errorsFor([](Webhook& h) { h.name = "injector.io"; }),
              ElementsAre("webhooks[0].name: Invalid value: \"injector.io\": should be a domain "
                          "with at least three segments separated by dots"));
}

TEST(WebhookValidationTest, WebhookNameIsADnsSubdomain) {
  EXPECT_THAT(errorsFor([](Webhook& h) { h.name = "removeLabel.example.com"; }),
              ElementsAre("webhooks[0].name: Invalid value: \"removeLabel.example.com\": " +
                          std::string(kSubdomainMsg)));
}

TEST(WebhookValidationTest, WebhookNameTooLongJoinsBothMessages) {
  const std::string name = std::string(250, 'a') + ".b.C";
  EXPECT_THAT(errorsFor([&](Webhook& h) { h.name = name; }),
              ElementsAre("webhooks[0].name: Invalid value: \"" + name +
                          "\": must be no more than 253 characters," + std::string(kSubdomainMsg)));
}

TEST(WebhookValidationTest, WebhookNamesAreUnique) {
  const auto c = config(WebhookKind::kMutating, {validHook("a.b.c"), validHook("a.b.c")});
  EXPECT_THAT(messages(validateWebhookConfiguration(c)),
              ElementsAre("webhooks[1].name: Duplicate value: \"a.b.c\""));
}

TEST(WebhookValidationTest, DuplicateNamesAllowedOnUpdateWhenAlreadyDuplicated) {
  const auto old = config(WebhookKind::kMutating, {validHook("a.b.c"), validHook("a.b.c")});
  const auto updated = config(WebhookKind::kMutating, {validHook("a.b.c"), validHook("a.b.c")});
  EXPECT_THAT(validateWebhookConfiguration(updated, ValidationMode::kUpdate, &old), IsEmpty());
  const auto unique_old = config(WebhookKind::kMutating, {validHook("a.b.c"), validHook("x.y.z")});
  EXPECT_THAT(messages(validateWebhookConfiguration(updated, ValidationMode::kUpdate, &unique_old)),
              ElementsAre("webhooks[1].name: Duplicate value: \"a.b.c\""));
}

// --- admissionReviewVersions ---

TEST(WebhookValidationTest, AdmissionReviewVersionsAreRequired) {
  EXPECT_THAT(errorsFor([](Webhook& h) { h.admission_review_versions.clear(); }),
              ElementsAre("webhooks[0].admissionReviewVersions: Required value: must specify one "
                          "of v1, v1beta1"));
}

TEST(WebhookValidationTest, AdmissionReviewVersionsMustIncludeAKnownVersion) {
  EXPECT_THAT(errorsFor([](Webhook& h) {
                h.admission_review_versions = {"v2", "v3"};
              }),
              ElementsAre("webhooks[0].admissionReviewVersions: Invalid value: []string{\"v2\", "
                          "\"v3\"}: must include at least one of v1, v1beta1"));
}

TEST(WebhookValidationTest, AdmissionReviewVersionsHaveNoDuplicates) {
  EXPECT_THAT(errorsFor([](Webhook& h) {
                h.admission_review_versions = {"v1", "v1"};
              }),
              ElementsAre("webhooks[0].admissionReviewVersions[1]: Invalid value: \"v1\": "
                          "duplicate version"));
}

TEST(WebhookValidationTest, AdmissionReviewVersionsAreDns1035Labels) {
  EXPECT_THAT(
      errorsFor([](Webhook& h) {
        h.admission_review_versions = {"V1", "v1"};
      }),
      ElementsAre("webhooks[0].admissionReviewVersions[0]: Invalid value: \"V1\": a DNS-1035 "
                  "label must consist of lower case alphanumeric characters or '-', start with "
                  "an alphabetic character, and end with an alphanumeric character (e.g. "
                  "'my-name',  or 'abc-123', regex used for validation is "
                  "'[a-z]([-a-z0-9]*[a-z0-9])?')"));
}

TEST(WebhookValidationTest, UnknownVersionsAllowedOnUpdateWhenOldHadNone) {
  Webhook old_hook = validHook();
  old_hook.admission_review_versions = {"v0"};
  const auto old = config(WebhookKind::kMutating, {old_hook});
  Webhook h = validHook();
  h.admission_review_versions = {"v2"};
  EXPECT_THAT(validateWebhookConfiguration(config(WebhookKind::kMutating, {h}),
                                           ValidationMode::kUpdate, &old),
              IsEmpty());
}

// --- sideEffects, timeout, policies ---

TEST(WebhookValidationTest, SideEffectsAreRequired) {
  EXPECT_THAT(errorsFor([](Webhook& h) { h.side_effects.reset(); }),
              ElementsAre("webhooks[0].sideEffects: Required value: must specify one of None, "
                          "NoneOnDryRun"));
}

TEST(WebhookValidationTest, SideEffectsSomeAndUnknownAreNotSupportedOnCreate) {
  EXPECT_THAT(errorsFor([](Webhook& h) { h.side_effects = "Some"; }),
              ElementsAre("webhooks[0].sideEffects: Unsupported value: \"Some\": supported "
                          "values: \"None\", \"NoneOnDryRun\""));
  EXPECT_THAT(errorsFor([](Webhook& h) { h.side_effects = "Unknown"; }, WebhookKind::kValidating),
              ElementsAre("webhooks[0].sideEffects: Unsupported value: \"Unknown\": supported "
                          "values: \"None\", \"NoneOnDryRun\""));
}

TEST(WebhookValidationTest, SideEffectsSomeAllowedOnUpdateWhenOldHadThem) {
  Webhook old_hook = validHook();
  old_hook.side_effects = "Unknown";
  const auto old = config(WebhookKind::kMutating, {old_hook});
  Webhook h = validHook();
  h.side_effects = "Some";
  const auto updated = config(WebhookKind::kMutating, {h});
  EXPECT_THAT(validateWebhookConfiguration(updated, ValidationMode::kUpdate, &old), IsEmpty());
  h.side_effects = "Maybe";
  EXPECT_THAT(messages(validateWebhookConfiguration(config(WebhookKind::kMutating, {h}),
                                                    ValidationMode::kUpdate, &old)),
              ElementsAre("webhooks[0].sideEffects: Unsupported value: \"Maybe\": supported "
                          "values: \"None\", \"NoneOnDryRun\", \"Some\", \"Unknown\""));
}

TEST(WebhookValidationTest, TimeoutBetween1And30) {
  EXPECT_THAT(errorsFor([](Webhook& h) { h.timeout_seconds = 31; }),
              ElementsAre("webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must "
                          "be between 1 and 30 seconds"));
  EXPECT_THAT(errorsFor([](Webhook& h) { h.timeout_seconds = 0; }),
              ElementsAre("webhooks[0].timeoutSeconds: Invalid value: 0: the timeout value must "
                          "be between 1 and 30 seconds"));
  EXPECT_THAT(errorsFor([](Webhook& h) { h.timeout_seconds = 30; }), IsEmpty());
  EXPECT_THAT(errorsFor([](Webhook& h) { h.timeout_seconds = 1; }), IsEmpty());
}

TEST(WebhookValidationTest, FailurePolicyValues) {
  EXPECT_THAT(errorsFor([](Webhook& h) { h.failure_policy = "fail"; }),
              ElementsAre("webhooks[0].failurePolicy: Unsupported value: \"fail\": supported "
                          "values: \"Fail\", \"Ignore\""));
}

TEST(WebhookValidationTest, MatchPolicyValues) {
  EXPECT_THAT(errorsFor([](Webhook& h) { h.match_policy = "Fuzzy"; }),
              ElementsAre("webhooks[0].matchPolicy: Unsupported value: \"Fuzzy\": supported "
                          "values: \"Equivalent\", \"Exact\""));
}

TEST(WebhookValidationTest, ReinvocationPolicyValues) {
  EXPECT_THAT(errorsFor([](Webhook& h) { h.reinvocation_policy = "Always"; }),
              ElementsAre("webhooks[0].reinvocationPolicy: Unsupported value: \"Always\": "
                          "supported values: \"IfNeeded\", \"Never\""));
}

TEST(WebhookValidationTest, ReinvocationPolicyIsNotCheckedForValidatingWebhooks) {
  EXPECT_THAT(
      errorsFor([](Webhook& h) { h.reinvocation_policy = "Always"; }, WebhookKind::kValidating),
      IsEmpty());
}

TEST(WebhookValidationTest, InvalidSelectorsAreReportedUnderTheirPath) {
  const auto errs = errorsFor([](Webhook& h) {
    h.namespace_selector = SelectorField::fromJson(
        nlohmann::json::parse(R"({"matchExpressions": [{"key": "a", "operator": "Near"}]})"));
  });
  ASSERT_FALSE(errs.empty());
  EXPECT_EQ(errs[0].rfind("webhooks[0].namespaceSelector.matchExpressions[0].operator", 0), 0u)
      << errs[0];
}

// --- rules ---

TEST(WebhookRuleValidationTest, OperationsAreRequired) {
  EXPECT_THAT(rulesErrors({}, {""}, {"v1"}, {"pods"}),
              ElementsAre("webhooks[0].rules[0].operations: Required value"));
}

TEST(WebhookRuleValidationTest, WildcardOperationMustBeAlone) {
  EXPECT_THAT(rulesErrors({"*", "CREATE"}, {""}, {"v1"}, {"pods"}),
              ElementsAre("webhooks[0].rules[0].operations: Invalid value: "
                          "[]admissionregistration.OperationType{\"*\", \"CREATE\"}: if '*' is "
                          "present, must not specify other operations"));
}

TEST(WebhookRuleValidationTest, UnknownOperationsAreNotSupported) {
  EXPECT_THAT(rulesErrors({"CREATE", "PATCH"}, {""}, {"v1"}, {"pods"}),
              ElementsAre("webhooks[0].rules[0].operations[1]: Unsupported value: \"PATCH\": "
                          "supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", "
                          "\"UPDATE\""));
}

TEST(WebhookRuleValidationTest, ApiGroupsAreRequiredAndWildcardAlone) {
  EXPECT_THAT(rulesErrors({"*"}, {}, {"v1"}, {"pods"}),
              ElementsAre("webhooks[0].rules[0].apiGroups: Required value"));
  EXPECT_THAT(rulesErrors({"*"}, {"apps", "*"}, {"v1"}, {"pods"}),
              ElementsAre("webhooks[0].rules[0].apiGroups: Invalid value: []string{\"apps\", "
                          "\"*\"}: if '*' is present, must not specify other API groups"));
}

TEST(WebhookRuleValidationTest, ApiVersionsAreRequiredNonEmptyAndWildcardAlone) {
  EXPECT_THAT(rulesErrors({"*"}, {""}, {}, {"pods"}),
              ElementsAre("webhooks[0].rules[0].apiVersions: Required value"));
  EXPECT_THAT(rulesErrors({"*"}, {""}, {"*", "v1"}, {"pods"}),
              ElementsAre("webhooks[0].rules[0].apiVersions: Invalid value: []string{\"*\", "
                          "\"v1\"}: if '*' is present, must not specify other API versions"));
  EXPECT_THAT(rulesErrors({"*"}, {""}, {"v1", ""}, {"pods"}),
              ElementsAre("webhooks[0].rules[0].apiVersions[1]: Required value"));
}

TEST(WebhookRuleValidationTest, ResourcesAreRequiredAndNonEmpty) {
  EXPECT_THAT(rulesErrors({"*"}, {""}, {"v1"}, {}),
              ElementsAre("webhooks[0].rules[0].resources: Required value"));
  EXPECT_THAT(rulesErrors({"*"}, {""}, {"v1"}, {"pods", ""}),
              ElementsAre("webhooks[0].rules[0].resources[1]: Required value"));
}

TEST(WebhookRuleValidationTest, DoubleWildcardMustBeAlone) {
  EXPECT_THAT(rulesErrors({"*"}, {""}, {"v1"}, {"*/*", "pods/status"}),
              ElementsAre("webhooks[0].rules[0].resources: Invalid value: []string{\"*/*\", "
                          "\"pods/status\"}: if '*/*' is present, must not specify other "
                          "resources"));
}

TEST(WebhookRuleValidationTest, SingleWildcardExcludesPlainResources) {
  EXPECT_THAT(rulesErrors({"*"}, {""}, {"v1"}, {"*", "pods"}),
              ElementsAre("webhooks[0].rules[0].resources: Invalid value: []string{\"*\", "
                          "\"pods\"}: if '*' is present, must not specify other resources "
                          "without subresources"));
  EXPECT_THAT(rulesErrors({"*"}, {""}, {"v1"}, {"*", "pods/status"}), IsEmpty());
}

TEST(WebhookRuleValidationTest, SingleWildcardCheckOnlySeesTheLastPlainResource) {
  // Upstream keeps overwriting hasResourceWithoutSubresource, so a trailing "*" hides "pods".
  EXPECT_THAT(rulesErrors({"*"}, {""}, {"v1"}, {"pods", "*"}), IsEmpty());
}

TEST(WebhookRuleValidationTest, ResourceWildcardSubresourceExcludesItsSubresources) {
  EXPECT_THAT(rulesErrors({"*"}, {""}, {"v1"}, {"pods/*", "pods/log"}),
              ElementsAre("webhooks[0].rules[0].resources[1]: Invalid value: \"pods/log\": if "
                          "'pods/*' is present, must not specify pods/log"));
  EXPECT_THAT(rulesErrors({"*"}, {""}, {"v1"}, {"pods/log", "pods/*"}), IsEmpty());
}

TEST(WebhookRuleValidationTest, WildcardResourceExcludesTheSameSubresource) {
  EXPECT_THAT(rulesErrors({"*"}, {""}, {"v1"}, {"*/scale", "deployments/scale"}),
              ElementsAre("webhooks[0].rules[0].resources[1]: Invalid value: "
                          "\"deployments/scale\": if '*/scale' is present, must not specify "
                          "deployments/scale"));
}

TEST(WebhookRuleValidationTest, ScopeValues) {
  EXPECT_THAT(errorsFor([](Webhook& h) { h.rules[0].scope = "Global"; }),
              ElementsAre("webhooks[0].rules[0].scope: Unsupported value: \"Global\": supported "
                          "values: \"*\", \"Cluster\", \"Namespaced\""));
}

// --- clientConfig ---

TEST(WebhookClientConfigValidationTest, ExactlyOneOfUrlOrService) {
  const std::string msg =
      "webhooks[0].clientConfig: Required value: exactly one of url or service is required";
  EXPECT_THAT(errorsFor([](Webhook& h) { h.client_config.url = "https://a.example.com"; }),
              ElementsAre(msg));
  EXPECT_THAT(errorsFor([](Webhook& h) { h.client_config.service.reset(); }), ElementsAre(msg));
}

TEST(WebhookClientConfigValidationTest, AcceptsHttpsUrls) {
  EXPECT_THAT(urlErrors("https://injector.example.com:8443/mutate/pods"), IsEmpty());
  EXPECT_THAT(urlErrors("https://10.0.0.1/"), IsEmpty());
  EXPECT_THAT(urlErrors("https://[::1]:443/x"), IsEmpty());
}

TEST(WebhookClientConfigValidationTest, UrlSchemeMustBeHttps) {
  EXPECT_THAT(urlErrors("http://injector.example.com/"),
              ElementsAre("webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the "
                          "only allowed URL scheme; desired format: https://host[/path]"));
}

TEST(WebhookClientConfigValidationTest, UrlNeedsAHost) {
  EXPECT_THAT(urlErrors("https:///path"),
              ElementsAre("webhooks[0].clientConfig.url: Invalid value: \"\": host must be "
                          "provided; desired format: https://host[/path]"));
}

TEST(WebhookClientConfigValidationTest, UrlWithoutSchemeHasNeitherSchemeNorHost) {
  EXPECT_THAT(urlErrors("injector.example.com/mutate"),
              ElementsAre("webhooks[0].clientConfig.url: Invalid value: \"\": 'https' is the "
                          "only allowed URL scheme; desired format: https://host[/path]",
                          "webhooks[0].clientConfig.url: Invalid value: \"\": host must be "
                          "provided; desired format: https://host[/path]"));
}

TEST(WebhookClientConfigValidationTest, UrlMayNotCarryUserInformation) {
  EXPECT_THAT(urlErrors("https://user:pa ss@injector.example.com/"),
              ElementsAre("webhooks[0].clientConfig.url: Required value: url must be a valid "
                          "URL: parse \"https://user:pa ss@injector.example.com/\": net/url: "
                          "invalid userinfo; desired format: https://host[/path]"));
  EXPECT_THAT(urlErrors("https://user:p@ss@injector.example.com/"),
              ElementsAre("webhooks[0].clientConfig.url: Invalid value: \"user:p%40ss\": user "
                          "information is not permitted in the URL"));
}

TEST(WebhookClientConfigValidationTest, UrlMayNotCarryAFragment) {
  EXPECT_THAT(urlErrors("https://injector.example.com/#top"),
              ElementsAre("webhooks[0].clientConfig.url: Invalid value: \"top\": fragments are "
                          "not permitted in the URL"));
}

TEST(WebhookClientConfigValidationTest, UrlMayNotCarryAQuery) {
  EXPECT_THAT(urlErrors("https://injector.example.com/?a=b"),
              ElementsAre("webhooks[0].clientConfig.url: Invalid value: \"a=b\": query "
                          "parameters are not permitted in the URL"));
  EXPECT_THAT(urlErrors("https://injector.example.com/?"), IsEmpty());
}

TEST(WebhookClientConfigValidationTest, UnparseableUrls) {
  EXPECT_THAT(urlErrors("https://in jector/"),
              ElementsAre("webhooks[0].clientConfig.url: Required value: url must be a valid "
                          "URL: parse \"https://in jector/\": invalid character \" \" in host "
                          "name; desired format: https://host[/path]"));
  EXPECT_THAT(urlErrors("https://injector:port/"),
              ElementsAre("webhooks[0].clientConfig.url: Required value: url must be a valid "
                          "URL: parse \"https://injector:port/\": invalid port \":port\" after "
                          "host; desired format: https://host[/path]"));
  EXPECT_THAT(urlErrors("://injector/"),
              ElementsAre("webhooks[0].clientConfig.url: Required value: url must be a valid "
                          "URL: parse \"://injector/\": missing protocol scheme; desired format: "
                          "https://host[/path]"));
  EXPECT_THAT(urlErrors("https://injector/%zz"),
              ElementsAre("webhooks[0].clientConfig.url: Required value: url must be a valid "
                          "URL: parse \"https://injector/%zz\": invalid URL escape \"%zz\"; "
                          "desired format: https://host[/path]"));
  EXPECT_THAT(urlErrors("https://inj\x01/"),
              ElementsAre("webhooks[0].clientConfig.url: Required value: url must be a valid "
                          "URL: parse \"https://inj\\x01/\": net/url: invalid control character "
                          "in URL; desired format: https://host[/path]"));
}

TEST(WebhookClientConfigValidationTest, ServiceNameAndNamespaceAreRequired) {
  EXPECT_THAT(errorsFor([](Webhook& h) {
                h.client_config.service->name.clear();
                h.client_config.service->namespace_name.clear();
              }),
              ElementsAre("webhooks[0].clientConfig.service.name: Required value: service name "
                          "is required",
                          "webhooks[0].clientConfig.service.namespace: Required value: service "
                          "namespace is required"));
}

TEST(WebhookClientConfigValidationTest, ServicePortRange) {
  EXPECT_THAT(errorsFor([](Webhook& h) { h.client_config.service->port = 0; }),
              ElementsAre("webhooks[0].clientConfig.service.port: Invalid value: 0: port is not "
                          "valid: must be between 1 and 65535, inclusive"));
  EXPECT_THAT(errorsFor([](Webhook& h) { h.client_config.service->port = 65536; }),
              ElementsAre("webhooks[0].clientConfig.service.port: Invalid value: 65536: port is "
                          "not valid: must be between 1 and 65535, inclusive"));
}

TEST(WebhookClientConfigValidationTest, ServicePathsThatAreAccepted) {
  EXPECT_THAT(servicePathErrors(std::nullopt), IsEmpty());
  EXPECT_THAT(servicePathErrors(""), IsEmpty());
  EXPECT_THAT(servicePathErrors("/"), IsEmpty());
  EXPECT_THAT(servicePathErrors("/mutate/pods/"), IsEmpty());
}

TEST(WebhookClientConfigValidationTest, ServicePathDoubleSlash) {
  EXPECT_THAT(servicePathErrors("//"),
              ElementsAre("webhooks[0].clientConfig.service.path: Invalid value: \"//\": "
                          "segment[0] may not be empty"));
}

TEST(WebhookClientConfigValidationTest, ServicePathMustStartWithSlash) {
  EXPECT_THAT(servicePathErrors("mutate"),
              ElementsAre("webhooks[0].clientConfig.service.path: Invalid value: \"mutate\": "
                          "must start with a '/'"));
}

TEST(WebhookClientConfigValidationTest, ServicePathSegmentsMayNotBeEmpty) {
  EXPECT_THAT(servicePathErrors("/a//b"),
              ElementsAre("webhooks[0].clientConfig.service.path: Invalid value: \"/a//b\": "
                          "segment[1] may not be empty"));
}

TEST(WebhookClientConfigValidationTest, ServicePathSegmentsAreDnsSubdomains) {
  EXPECT_THAT(servicePathErrors("/mutate/Pods_x"),
              ElementsAre("webhooks[0].clientConfig.service.path: Invalid value: "
                          "\"/mutate/Pods_x\": segment[1]: " +
                          std::string(kSubdomainMsg)));
}

// --- matchConditions ---

TEST(WebhookMatchConditionValidationTest, AtMost64) {
  EXPECT_THAT(errorsFor([](Webhook& h) {
                for (int i = 0; i < 65; ++i)
                  h.match_conditions.push_back({"c" + std::to_string(i), "true"});
              }),
              ElementsAre("webhooks[0].matchConditions: Too many: 65: must have at most 64 "
                          "items"));
}

TEST(WebhookMatchConditionValidationTest, ExpressionIsRequiredAndNotBlank) {
  EXPECT_THAT(errorsFor([](Webhook& h) {
                h.match_conditions = {{"a", ""}, {"b", " \n\t"}};
              }),
              ElementsAre("webhooks[0].matchConditions[0].expression: Required value",
                          "webhooks[0].matchConditions[1].expression: Required value"));
}

TEST(WebhookMatchConditionValidationTest, NameIsRequired) {
  EXPECT_THAT(errorsFor([](Webhook& h) {
                h.match_conditions = {{"", "true"}};
              }),
              ElementsAre("webhooks[0].matchConditions[0].name: Required value"));
}

TEST(WebhookMatchConditionValidationTest, NameIsAQualifiedName) {
  EXPECT_THAT(errorsFor([](Webhook& h) {
                h.match_conditions = {{"not system", "true"}};
              }),
              ElementsAre("webhooks[0].matchConditions[0].name: Invalid value: \"not system\": "
                          "name part " +
                          std::string(kQualifiedNameMsg)));
  EXPECT_THAT(errorsFor([](Webhook& h) {
                h.match_conditions = {{"example.com/MyName", "true"}};
              }),
              IsEmpty());
}

TEST(WebhookMatchConditionValidationTest, NameWithTooManySlashes) {
  EXPECT_THAT(errorsFor([](Webhook& h) {
                h.match_conditions = {{"a/b/c", "true"}};
              }),
              ElementsAre("webhooks[0].matchConditions[0].name: Invalid value: \"a/b/c\": a "
                          "valid label key " +
                          std::string(kQualifiedNameMsg) +
                          " with an optional DNS subdomain prefix and '/' (e.g. "
                          "'example.com/MyName')"));
}

TEST(WebhookMatchConditionValidationTest, NamesAreUnique) {
  EXPECT_THAT(errorsFor([](Webhook& h) {
                h.match_conditions = {{"a", "true"}, {"a", "false"}};
              }),
              ElementsAre("webhooks[0].matchConditions[1].name: Duplicate value: \"a\""));
}

TEST(WebhookMatchConditionValidationTest, UnchangedConditionsAreNotRevalidatedOnUpdate) {
  Webhook h = validHook();
  h.match_conditions = {{"", ""}};
  const auto old = config(WebhookKind::kMutating, {h});
  const auto updated = config(WebhookKind::kMutating, {h});
  EXPECT_THAT(validateWebhookConfiguration(updated, ValidationMode::kUpdate, &old), IsEmpty());
  EXPECT_EQ(validateWebhookConfiguration(updated).size(), 2u);
}

// The compiler hook (setMatchConditionCompiler): kube-cel in the simulator, a fake here.
class WithCompiler {
 public:
  explicit WithCompiler(MatchConditionCompiler compiler) {
    setMatchConditionCompiler(std::move(compiler));
  }
  ~WithCompiler() { setMatchConditionCompiler({}); }
  WithCompiler(const WithCompiler&) = delete;
  WithCompiler& operator=(const WithCompiler&) = delete;
};

TEST(WebhookMatchConditionValidationTest, CompileErrorsTakeTheirPlaceInGoOrder) {
  std::vector<std::string> seen;
  std::vector<std::string> seen_stored;
  WithCompiler fake([&](const std::vector<std::string>& expressions,
                        const std::vector<std::string>& stored) {
    seen = expressions;
    seen_stored = stored;
    std::vector<std::optional<ExpressionError>> out;
    for (const auto& e : expressions) {
      if (e == "ok") out.emplace_back(std::nullopt);
      else if (e == "typed") out.emplace_back(ExpressionError{FieldErrorType::kInvalid, "must evaluate to bool but got int"});
      else if (e == "req") out.emplace_back(ExpressionError{FieldErrorType::kRequired, "needs more"});
      else out.emplace_back(ExpressionError{FieldErrorType::kInternal, "boom"});
    }
    return out;
  });
  EXPECT_THAT(errorsFor([](Webhook& h) {
                h.match_conditions = {{"a", "  typed \n"}, {"bad name", "ok"}, {"c", " "},
                                      {"d", "req"}, {"d", "other"}};
              }),
              ElementsAre("webhooks[0].matchConditions[0].expression: Invalid value: \"typed\": "
                          "must evaluate to bool but got int",
                          "webhooks[0].matchConditions[1].name: Invalid value: \"bad name\": "
                          "name part " + std::string(kQualifiedNameMsg),
                          "webhooks[0].matchConditions[2].expression: Required value",
                          "webhooks[0].matchConditions[3].expression: Required value: needs more",
                          "webhooks[0].matchConditions[4].expression: Internal error: boom",
                          "webhooks[0].matchConditions[4].name: Duplicate value: \"d\""));
  // Trimmed and non-blank only; nothing stored on create.
  EXPECT_THAT(seen, ElementsAre("typed", "ok", "req", "other"));
  EXPECT_THAT(seen_stored, IsEmpty());
}

TEST(WebhookMatchConditionValidationTest, UpdatePassesTheOldExpressionsAsStored) {
  std::vector<std::string> seen_stored;
  WithCompiler fake([&](const std::vector<std::string>& expressions,
                        const std::vector<std::string>& stored) {
    seen_stored = stored;
    return std::vector<std::optional<ExpressionError>>(expressions.size());
  });
  Webhook h = validHook();
  h.match_conditions = {{"a", " old-a"}};
  Webhook h2 = validHook("second.example.com");
  h2.match_conditions = {{"b", "old-b"}};
  const auto old = config(WebhookKind::kMutating, {h, h2});
  h.match_conditions = {{"a", "new"}};
  const auto updated = config(WebhookKind::kMutating, {h, h2});
  EXPECT_THAT(validateWebhookConfiguration(updated, ValidationMode::kUpdate, &old), IsEmpty());
  // findMutatingPreexistingExpressions: every old webhook's expressions, untrimmed.
  EXPECT_THAT(seen_stored, ElementsAre(" old-a", "old-b"));
}

TEST(WebhookMatchConditionValidationTest, AFailingCompilerIsAnInternalErrorNotACrash) {
  WithCompiler throwing([](const std::vector<std::string>&, const std::vector<std::string>&)
                            -> std::vector<std::optional<ExpressionError>> {
    throw std::runtime_error("kube-cel exited");
  });
  EXPECT_THAT(errorsFor([](Webhook& h) { h.match_conditions = {{"a", "true"}}; }),
              ElementsAre("webhooks[0].matchConditions[0].expression: Internal error: kube-cel "
                          "exited"));
  WithCompiler short_answer([](const std::vector<std::string>&, const std::vector<std::string>&) {
    return std::vector<std::optional<ExpressionError>>{};
  });
  EXPECT_THAT(errorsFor([](Webhook& h) { h.match_conditions = {{"a", "true"}}; }),
              ElementsAre("webhooks[0].matchConditions[0].expression: Internal error: the CEL "
                          "compiler returned 0 results for 1 expressions"));
}

// --- caBundle ---

TEST(CaBundleTest, AcceptsAPemCertificate) { EXPECT_TRUE(checkCaBundle(kCaPem).ok()); }

TEST(CaBundleTest, EmptyBundleMeansSystemRoots) { EXPECT_TRUE(checkCaBundle("").ok()); }

TEST(CaBundleTest, AcceptsACertificateAmongOtherBlocks) {
  const std::string bundle =
      "junk\n-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n" + std::string(kCaPem);
  EXPECT_TRUE(checkCaBundle(bundle).ok());
}

TEST(CaBundleTest, RejectsTextThatIsNotPem) {
  const auto r = checkCaBundle("not a certificate");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "unable to load root certificates: unable to parse bytes as PEM block");
}

TEST(CaBundleTest, RejectsABundleWithoutCertificates) {
  const auto r = checkCaBundle("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "unable to load root certificates: no valid certificate authority data seen");
}

TEST(CaBundleTest, TrailingBlankLineAfterANonCertificateIsNotPem) {
  // The END line's own newline is consumed; the blank line after it is left over.
  const auto r = checkCaBundle("-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "unable to load root certificates: unable to parse bytes as PEM block");
}

TEST(CaBundleTest, RejectsACertificateBlockThatDoesNotParse) {
  const auto r = checkCaBundle("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "unable to load root certificates: failed to parse certificate: x509: malformed "
            "certificate");
}

}  // namespace
}  // namespace harness::core
