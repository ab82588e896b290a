#include "harness/core/label_selector.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace harness::core {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;

LabelSelector selector(const char* text) {
  auto parsed = LabelSelector::parse(json::parse(text));
  EXPECT_TRUE(parsed.ok()) << text << ": " << (parsed.ok() ? "" : parsed.error().message);
  return parsed.ok() ? *parsed : LabelSelector::nothing();
}

std::string parseError(const char* text) {
  auto parsed = LabelSelector::parse(json::parse(text));
  EXPECT_FALSE(parsed.ok()) << text;
  return parsed.ok() ? std::string() : parsed.error().message;
}

std::vector<std::string> validationMessages(const char* text) {
  std::vector<std::string> out;
  for (const auto& e : validateLabelSelector(json::parse(text), "spec.selector")) {
    out.push_back(e.toString());
  }
  return out;
}

const std::string kNameRegexMessage =
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
    "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
    "validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const std::string kValueRegexMessage =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or "
    "'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

// ---------------------------------------------------------------------------------------------
// nil vs empty

TEST(LabelSelectorTest, NullSelectorMatchesNothing) {
  auto s = LabelSelector::parse(json(nullptr));
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->matchesNothing());
  EXPECT_FALSE(s->matches({}));
  EXPECT_FALSE(s->matches({{"app", "web"}}));
  EXPECT_EQ(s->toString(), "");
}

TEST(LabelSelectorTest, EmptySelectorMatchesEverything) {
  for (const char* text : {"{}", R"({"matchLabels": {}, "matchExpressions": []})",
                           R"({"matchLabels": null, "matchExpressions": null})"}) {
    const LabelSelector s = selector(text);
    EXPECT_TRUE(s.matchesEverything()) << text;
    EXPECT_TRUE(s.matches({})) << text;
    EXPECT_TRUE(s.matches({{"app", "web"}})) << text;
  }
}

// ---------------------------------------------------------------------------------------------
// Matching

TEST(LabelSelectorTest, MatchLabelsNeedsKeyWithThatValue) {
  const LabelSelector s = selector(R"({"matchLabels": {"app": "web"}})");
  EXPECT_TRUE(s.matches({{"app", "web"}, {"tier", "front"}}));
  EXPECT_FALSE(s.matches({{"app", "api"}}));
  EXPECT_FALSE(s.matches({}));
}

TEST(LabelSelectorTest, MatchLabelsAndExpressionsAreAnded) {
  const LabelSelector s = selector(R"({"matchLabels": {"app": "web"},
      "matchExpressions": [{"key": "tier", "operator": "In", "values": ["front"]}]})");
  EXPECT_TRUE(s.matches({{"app", "web"}, {"tier", "front"}}));
  EXPECT_FALSE(s.matches({{"app", "web"}, {"tier", "back"}}));
  EXPECT_FALSE(s.matches({{"tier", "front"}}));
}

TEST(LabelSelectorTest, InNeedsThePresentKeyToHaveAListedValue) {
  const LabelSelector s =
      selector(R"({"matchExpressions": [{"key": "env", "operator": "In", "values": ["a", "b"]}]})");
  EXPECT_TRUE(s.matches({{"env", "b"}}));
  EXPECT_FALSE(s.matches({{"env", "c"}}));
  EXPECT_FALSE(s.matches({}));
}

TEST(LabelSelectorTest, NotInMatchesWhenTheKeyIsAbsent) {
  const LabelSelector s = selector(
      R"({"matchExpressions": [{"key": "inject", "operator": "NotIn", "values": ["disabled"]}]})");
  EXPECT_TRUE(s.matches({}));
  EXPECT_TRUE(s.matches({{"inject", "enabled"}}));
  EXPECT_FALSE(s.matches({{"inject", "disabled"}}));
}

TEST(LabelSelectorTest, ExistsAndDoesNotExistLookOnlyAtTheKey) {
  const LabelSelector exists =
      selector(R"({"matchExpressions": [{"key": "a", "operator": "Exists"}]})");
  EXPECT_TRUE(exists.matches({{"a", ""}}));
  EXPECT_FALSE(exists.matches({{"b", "a"}}));
  const LabelSelector absent =
      selector(R"({"matchExpressions": [{"key": "a", "operator": "DoesNotExist"}]})");
  EXPECT_TRUE(absent.matches({{"b", "a"}}));
  EXPECT_FALSE(absent.matches({{"a", "x"}}));
}

TEST(LabelSelectorTest, EmptyValueIsAValidValue) {
  const LabelSelector s = selector(R"({"matchLabels": {"a": ""}})");
  EXPECT_TRUE(s.matches({{"a", ""}}));
  EXPECT_FALSE(s.matches({{"a", "x"}}));
}

// ---------------------------------------------------------------------------------------------
// Parse errors (LabelSelectorAsSelector / NewRequirement)

TEST(LabelSelectorTest, UnknownOperatorIsAnError) {
  EXPECT_EQ(parseError(R"({"matchExpressions": [{"key": "a", "operator": "Foo"}]})"),
            "\"Foo\" is not a valid label selector operator");
  EXPECT_EQ(
      parseError(R"({"matchExpressions": [{"key": "a", "operator": "in", "values": ["x"]}]})"),
      "\"in\" is not a valid label selector operator");
  EXPECT_EQ(parseError(R"({"matchExpressions": [{"key": "a"}]})"),
            "\"\" is not a valid label selector operator");
}

TEST(LabelSelectorTest, InAndNotInWithoutValuesAreErrors) {
  EXPECT_EQ(
      parseError(R"({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})"),
      "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be "
      "empty");
  EXPECT_EQ(
      parseError(R"({"matchExpressions": [{"key": "a", "operator": "NotIn"}]})"),
      "values: Invalid value: []string(nil): for 'in', 'notin' operators, values set can't be "
      "empty");
}

TEST(LabelSelectorTest, ExistsWithValuesIsAnError) {
  EXPECT_EQ(
      parseError(
          R"({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x", "y"]}]})"),
      "values: Invalid value: []string{\"x\", \"y\"}: values set must be empty for exists and does "
      "not exist");
}

TEST(LabelSelectorTest, InvalidKeyIsAnError) {
  EXPECT_EQ(parseError(R"({"matchLabels": {"bad key": "x"}})"),
            "key: Invalid value: \"bad key\": " + kNameRegexMessage);
  EXPECT_EQ(parseError(R"({"matchExpressions": [{"key": "/a", "operator": "Exists"}]})"),
            "key: Invalid value: \"/a\": prefix part must be non-empty");
  EXPECT_EQ(
      parseError(R"({"matchExpressions": [{"key": "Example.com/a", "operator": "Exists"}]})"),
      // apimachinery v0.37 pkg/api/validate/content/dns.go (dns1123SubdomainErrorMsg): "a lowercase
      // RFC 1123 subdomain", which kube-apiserver prints; this copy said "a DNS-1123 subdomain".
      "key: Invalid value: \"Example.com/a\": prefix part a lowercase RFC 1123 subdomain must "
      "consist of lower case alphanumeric characters, '-' or '.', and must start and end with an "
      "alphanumeric character (e.g. 'example.com', regex used for validation is "
      "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')");
}

TEST(LabelSelectorTest, EmptyKeyReportsBothNamePartMessages) {
  EXPECT_EQ(parseError(R"({"matchExpressions": [{"key": "", "operator": "Exists"}]})"),
            "key: Invalid value: \"\": name part must be non-empty; " + kNameRegexMessage);
}

TEST(LabelSelectorTest, InvalidValueIsAnErrorNamingIndexAndKey) {
  EXPECT_EQ(parseError(R"({"matchLabels": {"app": "bad value"}})"),
            "values[0][app]: Invalid value: \"bad value\": " + kValueRegexMessage);
  EXPECT_EQ(parseError(R"({"matchExpressions": [{"key": "a", "operator": "In",
                                                   "values": ["ok", "-no"]}]})"),
            "values[1][a]: Invalid value: \"-no\": " + kValueRegexMessage);
}

TEST(LabelSelectorTest, SeveralProblemsInOneRequirementAreAggregated) {
  EXPECT_EQ(parseError(R"({"matchExpressions": [{"key": "a b", "operator": "In"}]})"),
            "[key: Invalid value: \"a b\": " + kNameRegexMessage +
                ", values: Invalid value: []string(nil): for 'in', 'notin' operators, values set "
                "can't be empty]");
}

TEST(LabelSelectorTest, WrongJsonShapeNamesTheField) {
  EXPECT_EQ(parseError(R"({"matchLabels": ["a"]})"), "matchLabels: expected object, got array");
  EXPECT_EQ(parseError(R"({"matchLabels": {"a": 1}})"),
            "matchLabels[a]: expected string, got number");
  EXPECT_EQ(parseError(R"({"matchExpressions": [{"key": "a", "operator": "In", "values": "x"}]})"),
            "matchExpressions[0].values: expected array, got string");
  EXPECT_EQ(parseError(R"("app=web")"), "expected object, got string");
}

// ---------------------------------------------------------------------------------------------
// String()

TEST(LabelSelectorTest, ToStringSortsByKeyAndUsesSelectorSyntax) {
  const LabelSelector s = selector(R"({"matchLabels": {"b": "2", "a": "1"},
      "matchExpressions": [{"key": "f", "operator": "DoesNotExist"},
                           {"key": "c", "operator": "In", "values": ["y", "x"]},
                           {"key": "e", "operator": "Exists"},
                           {"key": "d", "operator": "NotIn", "values": ["z"]},
                           {"key": "g", "operator": "In", "values": ["only"]}]})");
  EXPECT_EQ(s.toString(), "a=1,b=2,c in (x,y),d notin (z),e,!f,g in (only)");
}

TEST(LabelSelectorTest, RequirementsAreSortedByKeyWithSortedValues) {
  const LabelSelector s = selector(R"({"matchLabels": {"z": "1"},
      "matchExpressions": [{"key": "a", "operator": "In", "values": ["q", "p"]}]})");
  ASSERT_EQ(s.requirements().size(), 2u);
  EXPECT_EQ(s.requirements()[0].key, "a");
  EXPECT_EQ(s.requirements()[0].op, SelectorOperator::kIn);
  EXPECT_THAT(s.requirements()[0].values, ElementsAre("p", "q"));
  EXPECT_EQ(s.requirements()[1].key, "z");
  EXPECT_EQ(s.requirements()[1].op, SelectorOperator::kEquals);
}

// ---------------------------------------------------------------------------------------------
// ValidateLabelSelector

TEST(ValidateLabelSelectorTest, ValidAndNullSelectorsHaveNoErrors) {
  EXPECT_TRUE(validationMessages("null").empty());
  EXPECT_TRUE(validationMessages(R"({"matchLabels": {"app.kubernetes.io/name": "web"},
      "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["", "x"]}]})")
                  .empty());
}

TEST(ValidateLabelSelectorTest, OperatorProblems) {
  EXPECT_THAT(
      validationMessages(R"({"matchExpressions": [
          {"key": "a", "operator": "Foo"},
          {"key": "b", "operator": "In"},
          {"key": "c", "operator": "DoesNotExist", "values": ["x"]}]})"),
      ElementsAre("spec.selector.matchExpressions[0].operator: Invalid value: \"Foo\": not a valid "
                  "selector operator",
                  "spec.selector.matchExpressions[1].values: Required value: must be specified "
                  "when `operator` is 'In' or 'NotIn'",
                  "spec.selector.matchExpressions[2].values: Forbidden: may not be specified when "
                  "`operator` is 'Exists' or 'DoesNotExist'"));
}

TEST(ValidateLabelSelectorTest, KeyAndValueProblemsInExpressions) {
  EXPECT_THAT(
      validationMessages(R"({"matchExpressions": [
          {"key": "a b", "operator": "In", "values": ["ok", "not ok"]}]})"),
      ElementsAre(
          "spec.selector.matchExpressions[0].key: Invalid value: \"a b\": " + kNameRegexMessage,
          "spec.selector.matchExpressions[0].values[1]: Invalid value: \"not ok\": " +
              kValueRegexMessage));
}

TEST(ValidateLabelSelectorTest, MatchLabelsProblemsUseTheMapPath) {
  const std::string long_value(64, 'v');
  const std::string text = R"({"matchLabels": {"-x": "ok", "y": ")" + long_value + R"("}})";
  std::vector<std::string> messages;
  for (const auto& e : validateLabelSelector(json::parse(text), "spec.selector")) {
    messages.push_back(e.toString());
  }
  EXPECT_THAT(messages,
              ElementsAre("spec.selector.matchLabels: Invalid value: \"-x\": " + kNameRegexMessage,
                          "spec.selector.matchLabels: Invalid value: \"" + long_value +
                              "\": must be no more than 63 characters"));
}

TEST(ValidateLabelSelectorTest, EachKeyMessageIsItsOwnError) {
  EXPECT_THAT(validationMessages(R"({"matchExpressions": [{"key": "", "operator": "Exists"}]})"),
              ElementsAre("spec.selector.matchExpressions[0].key: Invalid value: \"\": name part "
                          "must be non-empty",
                          "spec.selector.matchExpressions[0].key: Invalid value: \"\": " +
                              kNameRegexMessage));
}

TEST(ValidateLabelSelectorTest, QualifiedNameWithTwoSlashes) {
  EXPECT_THAT(
      validationMessages(R"({"matchExpressions": [{"key": "a/b/c", "operator": "Exists"}]})"),
      // apimachinery v0.37 pkg/api/validate/content/kube.go IsLabelKey (what IsQualifiedName
      // is): "a valid label key"; this copy said "a qualified name".
      ElementsAre("spec.selector.matchExpressions[0].key: Invalid value: \"a/b/c\": a valid label "
                  "key must consist of alphanumeric characters, '-', '_' or '.', and must start "
                  "and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or "
                  "'123-abc', regex used for validation is "
                  "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain "
                  "prefix and '/' (e.g. 'example.com/MyName')"));
}

TEST(ValidateLabelSelectorTest, WrongJsonShapeIsReported) {
  EXPECT_THAT(validationMessages(R"({"matchExpressions": {}})"),
              ElementsAre("spec.selector.matchExpressions: Invalid value: expected array, got "
                          "object"));
}

// ---------------------------------------------------------------------------------------------
// labelsOf

TEST(LabelsOfTest, ReadsMetadataLabels) {
  EXPECT_EQ(*labelsOf(json::parse(R"({"metadata": {"labels": {"a": "1", "b": "2"}}})")),
            (Labels{{"a", "1"}, {"b", "2"}}));
  EXPECT_TRUE(labelsOf(json::object())->empty());
  EXPECT_TRUE(labelsOf(json::parse(R"({"metadata": {"labels": null}})"))->empty());
}

TEST(LabelsOfTest, WrongTypesAreErrorsNamingThePath) {
  auto number = labelsOf(json::parse(R"({"metadata": {"labels": {"app": 1}}})"));
  ASSERT_FALSE(number.ok());
  EXPECT_EQ(number.error().message, "metadata.labels.app: expected string, got number");
  auto list = labelsOf(json::parse(R"({"metadata": {"labels": []}})"));
  ASSERT_FALSE(list.ok());
  EXPECT_EQ(list.error().message, "metadata.labels: expected object, got array");
}

}  // namespace
}  // namespace harness::core
