// Policy loading: the seed tutorial's policy, the checks of pkg/audit/policy/reader.go and the
// field errors of pkg/apis/audit/validation/validation.go (cases from validation_test.go).

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/audit/policy.h"
#include "harness/testing/support.h"

namespace harness::audit {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr const char* kHeader = "apiVersion: audit.k8s.io/v1\nkind: Policy\n";

std::string errorOf(const std::string& text, const std::string& file = "p.yaml") {
  auto policy = parsePolicy(text, file);
  EXPECT_FALSE(policy.ok()) << "expected an error for:\n" << text;
  return policy.ok() ? std::string() : policy.error().message;
}

TEST(PolicyReader, ParsesTheSeedTutorialPolicy) {
  const auto path = testing::sourceDir() / "scenarios" / "seed-tutorial" / "audit-policy.yaml";
  auto policy = parsePolicy(testing::readFile(path), "audit-policy.yaml");
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  ASSERT_EQ(policy->rules.size(), 3u);
  EXPECT_EQ(policy->rules[0].level, Level::kRequestResponse);
  ASSERT_EQ(policy->rules[0].resources.size(), 1u);
  EXPECT_EQ(policy->rules[0].resources[0], (GroupResources{"", {"*"}, {}}));
  ASSERT_EQ(policy->rules[1].resources.size(), 3u);
  EXPECT_EQ(policy->rules[1].resources[1].group, "policy.linkerd.io");
  EXPECT_EQ(policy->rules[2].level, Level::kNone);
  EXPECT_TRUE(policy->rules[2].resources.empty());
  EXPECT_TRUE(policy->warnings.empty());
}

TEST(PolicyReader, ParsesEveryRuleField) {
  auto policy = parsePolicy(std::string(kHeader) + R"(omitStages: [RequestReceived]
omitManagedFields: true
rules:
  - level: Request
    users: [alice]
    userGroups: ["system:masters"]
    verbs: [create, update]
    namespaces: ["", kube-system]
    resources:
      - group: apps
        resources: [deployments, "deployments/scale"]
        resourceNames: [web]
    omitStages: [Panic, ResponseStarted]
    omitManagedFields: false
  - level: Metadata
    nonResourceURLs: ["/healthz*", "*"]
)",
                            "p.yaml");
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  EXPECT_EQ(policy->omit_stages, std::vector<Stage>{Stage::kRequestReceived});
  EXPECT_TRUE(policy->omit_managed_fields);
  const PolicyRule& rule = policy->rules[0];
  EXPECT_EQ(rule.level, Level::kRequest);
  EXPECT_EQ(rule.users, std::vector<std::string>{"alice"});
  EXPECT_EQ(rule.user_groups, std::vector<std::string>{"system:masters"});
  EXPECT_EQ(rule.verbs, (std::vector<std::string>{"create", "update"}));
  EXPECT_EQ(rule.namespaces, (std::vector<std::string>{"", "kube-system"}));
  EXPECT_EQ(rule.resources[0],
            (GroupResources{"apps", {"deployments", "deployments/scale"}, {"web"}}));
  EXPECT_EQ(rule.omit_stages, (std::vector<Stage>{Stage::kPanic, Stage::kResponseStarted}));
  EXPECT_EQ(rule.omit_managed_fields, std::optional<bool>(false));
  EXPECT_EQ(policy->rules[1].non_resource_urls, (std::vector<std::string>{"/healthz*", "*"}));
  EXPECT_EQ(policy->rules[1].omit_managed_fields, std::nullopt);
}

TEST(PolicyReader, ParsesJson) {
  auto policy = parsePolicy(
      R"({"apiVersion":"audit.k8s.io/v1","kind":"Policy","rules":[{"level":"Metadata"}]})",
      "p.json");
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  ASSERT_EQ(policy->rules.size(), 1u);
  EXPECT_EQ(policy->rules[0].level, Level::kMetadata);
}

TEST(PolicyReader, UnknownFieldsAreWarningsNotErrors) {
  auto policy = parsePolicy(std::string(kHeader) + "rules:\n  - level: Metadata\n    verb: [get]\n",
                            "p.yaml");
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  ASSERT_EQ(policy->warnings.size(), 1u);
  EXPECT_EQ(policy->warnings[0], "p.yaml:5:5: unknown field \"rules[0].verb\"");
  EXPECT_TRUE(policy->rules[0].verbs.empty());
}

TEST(PolicyReader, FieldNamesAreCaseSensitive) {
  EXPECT_EQ(errorOf(std::string(kHeader) + "rules:\n  - Level: Metadata\n"),
            "p.yaml:4:5: rules[0].level: Required value");
}

TEST(PolicyReader, UnknownLevelNamesFileLineColumnAndPath) {
  EXPECT_EQ(errorOf(std::string(kHeader) + R"(rules:
  - level: Metadata
  - level: Request
    verbs: [get]
  - level: Verbose
)",
                    "audit-policy.yaml"),
            "audit-policy.yaml:7:12: rules[2].level: Unsupported value: \"Verbose\": supported "
            "values: \"None\", \"Metadata\", \"Request\", \"RequestResponse\"");
}

// The field and the text without file and position are data beside the message: the scenario
// loader locates an inline policy's error in its own file with them.
TEST(PolicyReader, ErrorsCarryTheFieldAndTheirText) {
  auto policy = parsePolicy(std::string(kHeader) + "rules:\n  - level: Verbose\n", "p.yaml");
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.error().code, core::ErrorCode::kInvalid);
  EXPECT_EQ(policy.error().field, "rules[0].level");
  EXPECT_EQ(policy.error().text(),
            "Unsupported value: \"Verbose\": supported values: \"None\", \"Metadata\", "
            "\"Request\", \"RequestResponse\"");

  policy = parsePolicy(std::string(kHeader) + "rules:\n  - level: Metadata\n    verbs: get\n",
                       "p.yaml");
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.error().code, core::ErrorCode::kDecode);
  EXPECT_EQ(policy.error().field, "rules[0].verbs");
  EXPECT_EQ(policy.error().text(), "expected a list of strings, got string \"get\"");

  policy = parsePolicy(std::string(kHeader) + "rules: []\n", "p.yaml");
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.error().field, "");
  EXPECT_EQ(policy.error().text(), "loaded illegal policy with 0 rules");

  // Several errors: the first one's field, the text after it (the others with their places).
  policy = parsePolicy(
      std::string(kHeader) + "rules:\n  - level: Metadata\n  - {}\n  - level: Loud\n", "p.yaml");
  ASSERT_FALSE(policy.ok());
  EXPECT_EQ(policy.error().field, "rules[1].level");
  EXPECT_THAT(policy.error().text(), StartsWith("Required value; p.yaml:6:12: rules[2].level: "));
}

TEST(PolicyReader, MissingApiVersionIsRejected) {
  EXPECT_THAT(errorOf("kind: Policy\nrules:\n  - level: Metadata\n"),
              StartsWith("p.yaml:1:1: apiVersion: Required value"));
}

TEST(PolicyReader, OnlyAuditV1IsAccepted) {
  EXPECT_EQ(errorOf("apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n  - level: None\n"),
            "p.yaml:1:13: apiVersion: Unsupported value: \"audit.k8s.io/v1beta1\": supported "
            "values: \"audit.k8s.io/v1\"");
}

TEST(PolicyReader, MissingKindIsRejected) {
  EXPECT_THAT(errorOf("apiVersion: audit.k8s.io/v1\nrules:\n  - level: Metadata\n"),
              StartsWith("p.yaml:1:1: kind: Required value"));
}

TEST(PolicyReader, WrongKindIsRejected) {
  EXPECT_EQ(errorOf("apiVersion: audit.k8s.io/v1\nkind: Event\nrules:\n  - level: None\n"),
            "p.yaml:2:7: kind: Unsupported value: \"Event\": supported values: \"Policy\"");
}

TEST(PolicyReader, StringWhereListExpectedIsATypeError) {
  EXPECT_EQ(errorOf(std::string(kHeader) + "rules:\n  - level: Metadata\n    verbs: get\n"),
            "p.yaml:5:12: rules[0].verbs: expected a list of strings, got string \"get\"");
}

TEST(PolicyReader, NumberInAStringListIsATypeError) {
  EXPECT_EQ(
      errorOf(std::string(kHeader) + "rules:\n  - level: Metadata\n    namespaces: [a, 12]\n"),
      "p.yaml:5:21: rules[0].namespaces[1]: expected a string, got number 12");
}

TEST(PolicyReader, RulesMustBeAList) {
  EXPECT_EQ(errorOf(std::string(kHeader) + "rules:\n  level: Metadata\n"),
            "p.yaml:4:3: rules: expected a list of PolicyRule, got object");
}

TEST(PolicyReader, OmitManagedFieldsMustBeABoolean) {
  EXPECT_EQ(
      errorOf(std::string(kHeader) + "omitManagedFields: \"true\"\nrules:\n  - level: None\n"),
      "p.yaml:3:20: omitManagedFields: expected a boolean, got string \"true\"");
}

TEST(PolicyReader, BadYamlNamesLineAndColumn) {
  EXPECT_THAT(errorOf(std::string(kHeader) + "rules:\n  - level: [Metadata\n"),
              StartsWith("p.yaml: document 1, line "));
}

TEST(PolicyReader, ZeroRulesIsIllegal) {
  EXPECT_EQ(errorOf(kHeader), "p.yaml: loaded illegal policy with 0 rules");
  EXPECT_EQ(errorOf(std::string(kHeader) + "rules: []\n"),
            "p.yaml: loaded illegal policy with 0 rules");
}

TEST(PolicyReader, EmptyFileIsRejected) { EXPECT_THAT(errorOf(""), HasSubstr("empty document")); }

TEST(PolicyReader, NonObjectDocumentIsRejected) {
  EXPECT_EQ(errorOf("- level: None\n"), "p.yaml:1:1: expected a Policy object, got list");
}

TEST(PolicyReader, NullRuleIsAZeroRuleWithoutLevel) {
  EXPECT_EQ(errorOf(std::string(kHeader) + "rules:\n  - null\n"),
            "p.yaml:4:5: rules[0].level: Required value");
}

TEST(PolicyReader, ResourcesAndNonResourceUrlsCannotMix) {
  EXPECT_EQ(
      errorOf(std::string(kHeader) + "rules:\n  - level: Metadata\n    namespaces: [default]\n"
                                     "    nonResourceURLs: [\"/logs*\"]\n"),
      "p.yaml:6:22: rules[0].nonResourceURLs: Invalid value: []string{\"/logs*\"}: rules "
      "cannot apply to both regular resources and non-resource URLs");
}

TEST(PolicyReader, NonResourceUrlMustStartWithSlash) {
  EXPECT_EQ(errorOf(std::string(kHeader) +
                    "rules:\n  - level: Metadata\n    nonResourceURLs: [logs, \"/healthz*\"]\n"),
            "p.yaml:5:23: rules[0].nonResourceURLs[0]: Invalid value: \"logs\": non-resource URL "
            "rules must begin with a '/' character");
}

TEST(PolicyReader, NonResourceUrlWildcardMustBeLast) {
  EXPECT_THAT(errorOf(std::string(kHeader) +
                      "rules:\n  - level: Metadata\n    nonResourceURLs: [\"/logs/*.log\"]\n"),
              HasSubstr("rules[0].nonResourceURLs[0]: Invalid value: \"/logs/*.log\": "
                        "non-resource URL wildcards '*' must be the final character of the rule"));
}

TEST(PolicyReader, EmptyNonResourceUrlIsInvalid) {
  EXPECT_THAT(
      errorOf(std::string(kHeader) + "rules:\n  - level: Metadata\n    nonResourceURLs: [\"\"]\n"),
      HasSubstr("rules[0].nonResourceURLs[0]: Invalid value: \"\": non-resource URL "
                "rules must begin with a '/' character"));
}

TEST(PolicyReader, GroupMustBeADnsSubdomain) {
  EXPECT_THAT(errorOf(std::string(kHeader) + R"(rules:
  - level: Metadata
    resources:
      - group: rbac.authorization.k8s.io/v1beta1
        resources: [roles]
)"),
              StartsWith("p.yaml:6:16: rules[0].resources.group: Invalid value: "
                         "\"rbac.authorization.k8s.io/v1beta1\": a lowercase RFC 1123 subdomain"));
}

TEST(PolicyReader, ResourceNamesNeedResources) {
  EXPECT_EQ(errorOf(std::string(kHeader) + R"(rules:
  - level: Metadata
    resources:
      - resourceNames: [leader]
)"),
            "p.yaml:6:24: rules[0].resources.resourceNames: Invalid value: "
            "[]string{\"leader\"}: using resourceNames requires at least one resource");
}

TEST(PolicyReader, InvalidRuleOmitStage) {
  EXPECT_EQ(errorOf(std::string(kHeader) + "rules:\n  - level: Metadata\n    omitStages: [foo]\n"),
            "p.yaml:5:18: rules[0].omitStages[0]: Invalid value: \"foo\": allowed stages are "
            "RequestReceived,ResponseStarted,ResponseComplete,Panic");
}

TEST(PolicyReader, InvalidPolicyOmitStage) {
  EXPECT_EQ(errorOf(std::string(kHeader) + "omitStages: [foo]\nrules:\n  - level: Metadata\n"),
            "p.yaml:3:14: omitStages[0]: Invalid value: \"foo\": allowed stages are "
            "RequestReceived,ResponseStarted,ResponseComplete,Panic");
}

TEST(PolicyReader, ReportsEveryValidationError) {
  EXPECT_EQ(
      errorOf(std::string(kHeader) + "rules:\n  - level: Metadata\n  - {}\n  - level: Loud\n"),
      "p.yaml:5:5: rules[1].level: Required value; p.yaml:6:12: rules[2].level: "
      "Unsupported value: \"Loud\": supported values: \"None\", \"Metadata\", \"Request\", "
      "\"RequestResponse\"");
}

TEST(PolicyReader, ValidationErrorsComeBeforeTheRuleCount) {
  EXPECT_THAT(errorOf(std::string(kHeader) + "omitStages: [foo]\n"),
              HasSubstr("omitStages[0]: Invalid value"));
}

TEST(ValidatePolicy, AcceptsTheUpstreamValidRules) {
  Policy policy;
  policy.rules = {
      PolicyRule{.level = Level::kMetadata},
      PolicyRule{.level = Level::kNone, .user_groups = {"system:serviceaccounts", "system:nodes"}},
      PolicyRule{.level = Level::kRequestResponse,
                 .verbs = {"get"},
                 .resources = {{"rbac.authorization.k8s.io", {"roles", "rolebindings"}, {}}},
                 .namespaces = {"kube-system"}},
      PolicyRule{.level = Level::kMetadata,
                 .user_groups = {"developers"},
                 .non_resource_urls = {"/logs*", "/healthz*", "/metrics", "*"}},
      PolicyRule{.level = Level::kMetadata, .omit_stages = {Stage::kRequestReceived}},
  };
  EXPECT_TRUE(validatePolicy(policy).empty());
  EXPECT_TRUE(validatePolicy(Policy{}).empty());
}

TEST(ValidatePolicy, ReportsMixedResourceAndNonResourceRules) {
  Policy policy;
  policy.rules = {PolicyRule{.level = Level::kMetadata,
                             .resources = {{"", {"secrets"}, {}}},
                             .non_resource_urls = {"/logs*"}}};
  const auto errors = validatePolicy(policy);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].toString(),
            "rules[0].nonResourceURLs: Invalid value: []string{\"/logs*\"}: rules cannot apply to "
            "both regular resources and non-resource URLs");
}

}  // namespace
}  // namespace harness::audit
