// Annotation keys and values as the webhook dispatchers write them (docs/admission-chain.md §7.1,
// cases from mutating/dispatcher_test.go), level filtering (attributes.go getAnnotations) and the
// first-value-wins rule (AddAnnotationWithLevel).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/audit/annotations.h"

namespace harness::audit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;

TEST(AnnotationKeys, MutationPatchAndFailedOpenKeys) {
  EXPECT_EQ(mutationAnnotationKey(0, 1), "mutation.webhook.admission.k8s.io/round_0_index_1");
  EXPECT_EQ(patchAnnotationKey(1, 12), "patch.webhook.admission.k8s.io/round_1_index_12");
  EXPECT_EQ(failedOpenAnnotationKey(true, 1, 3),
            "failed-open.mutation.webhook.admission.k8s.io/round_1_index_3");
  EXPECT_EQ(failedOpenAnnotationKey(false, 0, 2),
            "failed-open.validating.webhook.admission.k8s.io/round_0_index_2");
}

TEST(AnnotationValues, MutationValueInStructOrder) {
  EXPECT_EQ(mutationAnnotationValue("cfg", "hook.example.com", true),
            R"({"configuration":"cfg","webhook":"hook.example.com","mutated":true})");
  EXPECT_EQ(mutationAnnotationValue("cfg", "hook.example.com", false),
            R"({"configuration":"cfg","webhook":"hook.example.com","mutated":false})");
}

TEST(AnnotationValues, MutationValueEscapesHtml) {
  EXPECT_EQ(mutationAnnotationValue("a<b>&c", "\"q\"", false),
            R"({"configuration":"a\u003cb\u003e\u0026c","webhook":"\"q\"","mutated":false})");
}

TEST(AnnotationValues, PatchValueIsCompactedWithSortedOpKeys) {
  const auto patch =
      nlohmann::json::parse(R"([{"op": "add", "path": "/metadata/labels/a", "value": "true"}])");
  EXPECT_EQ(
      patchAnnotationValue("cfg", "hook", patch),
      R"({"configuration":"cfg","webhook":"hook","patch":[{"op":"add","path":"/metadata/labels)"
      R"(/a","value":"true"}],"patchType":"JSONPatch"})");
}

TEST(AnnotationValues, EmptyPatchAndEmptyOperation) {
  EXPECT_EQ(patchAnnotationValue("cfg", "hook", nlohmann::json::array()),
            R"({"configuration":"cfg","webhook":"hook","patch":[],"patchType":"JSONPatch"})");
  EXPECT_EQ(patchAnnotationValue("cfg", "hook", nlohmann::json::parse("[{}]")),
            R"({"configuration":"cfg","webhook":"hook","patch":[{}],"patchType":"JSONPatch"})");
}

TEST(AnnotationValues, PatchValueEscapesHtmlInsideValues) {
  const auto patch =
      nlohmann::json::parse(R"([{"value": "<x> & y", "path": "/a", "op": "replace"}])");
  EXPECT_EQ(
      patchAnnotationValue("c", "w", patch),
      R"({"configuration":"c","webhook":"w","patch":[{"op":"replace","path":"/a","value":"\u00)"
      R"(3cx\u003e \u0026 y"}],"patchType":"JSONPatch"})");
}

TEST(AnnotationValues, RawPatchMatchesTheDispatcherTestCases) {
  auto value = rawPatchAnnotationValue(
      "cfg", "hook", R"([{"op": "add", "path": "/metadata/labels/a", "value": "true"}])");
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(
      *value,
      R"({"configuration":"cfg","webhook":"hook","patch":[{"op":"add","path":"/metadata/labels)"
      R"(/a","value":"true"}],"patchType":"JSONPatch"})");
  value = rawPatchAnnotationValue("cfg", "hook", " [ ] ");
  ASSERT_TRUE(value.ok());
  EXPECT_THAT(*value, HasSubstr(R"("patch":[],)"));
  value = rawPatchAnnotationValue("cfg", "hook", "[{}]");
  ASSERT_TRUE(value.ok());
  EXPECT_THAT(*value, HasSubstr(R"("patch":[{}],)"));
}

TEST(AnnotationValues, RawPatchKeepsNestedOrderAndNumberSpelling) {
  auto value = rawPatchAnnotationValue(
      "c", "w",
      "[{\"value\": {\"z\": 1.50, \"a\": [1e3, \"<&>\"]},\n \"path\": \"/x\", \"op\": \"add\"}, "
      "null]");
  ASSERT_TRUE(value.ok()) << value.error().message;
  EXPECT_EQ(
      *value,
      R"({"configuration":"c","webhook":"w","patch":[{"op":"add","path":"/x","value":{"z":1.50)"
      R"(,"a":[1e3,"\u003c\u0026\u003e"]}},null],"patchType":"JSONPatch"})");
}

TEST(AnnotationValues, RawPatchLastDuplicateMemberWins) {
  auto value = rawPatchAnnotationValue("c", "w", R"([{"op":"add","op":"remove","path":"/x"}])");
  ASSERT_TRUE(value.ok());
  EXPECT_THAT(*value, HasSubstr(R"([{"op":"remove","path":"/x"}])"));
}

TEST(AnnotationValues, RawPatchRejectsNonPatches) {
  EXPECT_FALSE(rawPatchAnnotationValue("c", "w", "{\"op\":\"add\"}").ok());
  EXPECT_FALSE(rawPatchAnnotationValue("c", "w", "[1]").ok());
  EXPECT_FALSE(rawPatchAnnotationValue("c", "w", "[{").ok());
}

TEST(AnnotationKeyFormat, WebhookKeysMustBeQualifiedNames) {
  EXPECT_EQ(webhookAnnotationKey("validator.example.com", "decision"),
            "validator.example.com/decision");
  EXPECT_TRUE(isValidWebhookAnnotationKey("validator.example.com/decision"));
  EXPECT_TRUE(isValidWebhookAnnotationKey("mutation.webhook.admission.k8s.io/round_0_index_0"));
  // Uppercase webhook names can never add annotations (DNS-1123 prefix).
  EXPECT_FALSE(isValidWebhookAnnotationKey("removeLabel/decision"));
  // A key with its own "/" makes two slashes.
  EXPECT_FALSE(isValidWebhookAnnotationKey("validator.example.com/a/b"));
  EXPECT_FALSE(isValidWebhookAnnotationKey("validator.example.com/-bad"));
  EXPECT_FALSE(isValidWebhookAnnotationKey("validator.example.com/"));
  EXPECT_FALSE(isValidWebhookAnnotationKey("noslash"));
  EXPECT_FALSE(isValidWebhookAnnotationKey("v.example.com/" + std::string(64, 'a')));
  EXPECT_TRUE(isValidWebhookAnnotationKey("v.example.com/" + std::string(63, 'a')));
}

TEST(AnnotationKeyFormat, ErrorTextsFollowCheckKeyFormat) {
  auto wrong_slashes = checkAnnotationKey("a/b/c");
  ASSERT_FALSE(wrong_slashes.ok());
  EXPECT_THAT(wrong_slashes.error().message,
              StartsWith("annotation key has invalid format, the right format is a DNS subdomain "
                         "prefix and '/' and key name."));
  auto upper = checkAnnotationKey("Upper.example.com/k");
  ASSERT_FALSE(upper.ok());
  EXPECT_THAT(upper.error().message, StartsWith("annotation key has invalid format prefix part "));
  EXPECT_THAT(upper.error().message,
              HasSubstr(". A qualified name like 'podsecuritypolicy.admission.k8s.io/"
                        "admit-policy' is required."));
}

TEST(AnnotationSet, FirstValueWins) {
  AnnotationSet set;
  EXPECT_TRUE(set.add("hook.example.com/decision", "allow"));
  EXPECT_FALSE(set.add("hook.example.com/decision", "deny"));
  EXPECT_EQ(set.value("hook.example.com/decision"), std::optional<std::string>("allow"));
}

TEST(AnnotationSet, SameValueAgainIsAccepted) {
  AnnotationSet set;
  EXPECT_TRUE(set.add("hook.example.com/decision", "allow"));
  EXPECT_TRUE(set.add("hook.example.com/decision", "allow"));
  EXPECT_EQ(set.size(), 1u);
}

TEST(AnnotationSet, SameValueAtAnotherLevelIsAnOverwrite) {
  AnnotationSet set;
  ASSERT_TRUE(set.add("hook.example.com/k", "v", Level::kMetadata));
  auto result = set.addWithLevel("hook.example.com/k", "v", Level::kRequest);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message,
            "admission annotations are not allowd to be overwritten, key:\"hook.example.com/k\", "
            "old value: {Metadata v}, new value: {Request v}");
}

TEST(AnnotationSet, LevelBelowMetadataIsRefused) {
  AnnotationSet set;
  auto result = set.addWithLevel("hook.example.com/k", "v", Level::kNone);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message,
            "admission annotations are not allowed to be set at audit level lower than Metadata, "
            "key: \"hook.example.com/k\", level: None");
  EXPECT_TRUE(set.empty());
}

TEST(AnnotationSet, InvalidKeysAreDropped) {
  AnnotationSet set;
  EXPECT_FALSE(set.add("removeLabel/k", "v"));
  EXPECT_TRUE(set.empty());
}

class AnnotationLevels : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(set_.add(mutationAnnotationKey(0, 0), mutationAnnotationValue("c", "w", true)));
    ASSERT_TRUE(set_.add(patchAnnotationKey(0, 0),
                         patchAnnotationValue("c", "w", nlohmann::json::array()), Level::kRequest));
    ASSERT_TRUE(set_.add("w.example.com/k", "v"));
  }
  AnnotationSet set_;
};

TEST_F(AnnotationLevels, NoneRecordsNothing) { EXPECT_TRUE(set_.forLevel(Level::kNone).empty()); }

TEST_F(AnnotationLevels, MetadataRecordsMutationButNotPatch) {
  const auto at = set_.forLevel(Level::kMetadata);
  EXPECT_THAT(at, ElementsAre(Pair(mutationAnnotationKey(0, 0), ::testing::_),
                              Pair("w.example.com/k", "v")));
}

TEST_F(AnnotationLevels, RequestAddsThePatch) {
  const auto at = set_.forLevel(Level::kRequest);
  EXPECT_EQ(at.size(), 3u);
  EXPECT_EQ(at.count(patchAnnotationKey(0, 0)), 1u);
}

TEST_F(AnnotationLevels, RequestResponseRecordsEverything) {
  EXPECT_EQ(set_.forLevel(Level::kRequestResponse), set_.forLevel(Level::kRequest));
}

}  // namespace
}  // namespace harness::audit
