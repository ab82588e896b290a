#include "harness/core/json_pointer.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace harness::core {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::json;

// RFC 6901 §5.
const json kRfcDocument = json::parse(R"({
  "foo": ["bar", "baz"], "": 0, "a/b": 1, "c%d": 2, "e^f": 3, "g|h": 4, "i\\j": 5,
  "k\"l": 6, " ": 7, "m~n": 8
})");

TEST(JsonPointerTest, EmptyStringIsTheRoot) {
  auto pointer = JsonPointer::parse("");
  ASSERT_TRUE(pointer.ok());
  EXPECT_TRUE(pointer->isRoot());
  EXPECT_EQ(pointer->toString(), "");
}

TEST(JsonPointerTest, ParseSplitsAndUnescapesTokens) {
  auto pointer = JsonPointer::parse("/a~1b/m~0n/0");
  ASSERT_TRUE(pointer.ok());
  EXPECT_THAT(pointer->tokens(), ElementsAre("a/b", "m~n", "0"));
}

TEST(JsonPointerTest, TildeOneIsDecodedBeforeTildeZero) {
  // "~01" is "~1" (an escaped "~" followed by "1"), never "/".
  auto pointer = JsonPointer::parse("/~01");
  ASSERT_TRUE(pointer.ok());
  EXPECT_THAT(pointer->tokens(), ElementsAre("~1"));
}

TEST(JsonPointerTest, SlashAloneIsTheEmptyKey) {
  auto pointer = JsonPointer::parse("/");
  ASSERT_TRUE(pointer.ok());
  EXPECT_THAT(pointer->tokens(), ElementsAre(""));
  auto two = JsonPointer::parse("//");
  ASSERT_TRUE(two.ok());
  EXPECT_THAT(two->tokens(), ElementsAre("", ""));
}

TEST(JsonPointerTest, ParseRejectsTextWithoutLeadingSlash) {
  auto pointer = JsonPointer::parse("a/b");
  ASSERT_FALSE(pointer.ok());
  EXPECT_EQ(pointer.error().message,
            "invalid json pointer \"a/b\": it must be empty or start with \"/\"");
}

TEST(JsonPointerTest, ParseRejectsTildeNotFollowedByZeroOrOne) {
  auto bad = JsonPointer::parse("/a~2");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("\"~\" must be followed by \"0\" or \"1\""));
  EXPECT_FALSE(JsonPointer::parse("/a~").ok());
}

TEST(JsonPointerTest, ToStringEscapesTokens) {
  auto pointer = JsonPointer::fromTokens({"a/b", "m~n", ""});
  EXPECT_EQ(pointer.toString(), "/a~1b/m~0n/");
  auto reparsed = JsonPointer::parse(pointer.toString());
  ASSERT_TRUE(reparsed.ok());
  EXPECT_EQ(*reparsed, pointer);
}

TEST(JsonPointerTest, ChildParentAndBack) {
  const JsonPointer spec = JsonPointer{}.child("spec");
  const JsonPointer container = spec.child("containers").child(std::size_t{2});
  EXPECT_EQ(container.toString(), "/spec/containers/2");
  EXPECT_EQ(container.back(), "2");
  EXPECT_EQ(container.parent().toString(), "/spec/containers");
  EXPECT_EQ(JsonPointer{}.parent(), JsonPointer{});
  EXPECT_TRUE(spec.isPrefixOf(container));
  EXPECT_FALSE(container.isPrefixOf(spec));
  EXPECT_TRUE(JsonPointer{}.isPrefixOf(spec));
}

TEST(JsonPointerTest, ArrayIndexGrammar) {
  EXPECT_EQ(*parseArrayIndex("0"), 0u);
  EXPECT_EQ(*parseArrayIndex("17"), 17u);
  EXPECT_FALSE(parseArrayIndex("").ok());
  EXPECT_FALSE(parseArrayIndex("01").ok());
  EXPECT_FALSE(parseArrayIndex("-1").ok());
  EXPECT_FALSE(parseArrayIndex("+1").ok());
  EXPECT_FALSE(parseArrayIndex("1a").ok());
  EXPECT_FALSE(parseArrayIndex("-").ok());
  EXPECT_FALSE(parseArrayIndex("99999999999999999999999").ok());
}

TEST(JsonPointerTest, ResolvesTheRfcExamples) {
  const std::vector<std::pair<std::string, json>> cases = {
      {"", kRfcDocument}, {"/foo", json::array({"bar", "baz"})},
      {"/foo/0", "bar"},  {"/", 0},
      {"/a~1b", 1},       {"/c%d", 2},
      {"/e^f", 3},        {"/g|h", 4},
      {"/i\\j", 5},       {"/k\"l", 6},
      {"/ ", 7},          {"/m~0n", 8},
  };
  for (const auto& [text, expected] : cases) {
    auto resolved = resolvePointer(kRfcDocument, text);
    ASSERT_TRUE(resolved.ok()) << text << ": " << resolved.error().message;
    EXPECT_EQ(**resolved, expected) << text;
  }
}

TEST(JsonPointerTest, MissingMemberErrorNamesTheParent) {
  const json doc = {{"spec", {{"containers", json::array()}}}};
  auto resolved = resolvePointer(doc, "/spec/volumes");
  ASSERT_FALSE(resolved.ok());
  EXPECT_EQ(resolved.error().message,
            "json pointer \"/spec/volumes\": key \"volumes\" not found in the object at \"/spec\"");
}

TEST(JsonPointerTest, OutOfRangeIndexErrorGivesTheSize) {
  const json doc = {{"a", {1, 2}}};
  auto resolved = resolvePointer(doc, "/a/2");
  ASSERT_FALSE(resolved.ok());
  EXPECT_EQ(resolved.error().message,
            "json pointer \"/a/2\": index 2 is out of range for the array at \"/a\" (size 2)");
}

TEST(JsonPointerTest, DashNeverResolves) {
  const json doc = {{"a", {1}}};
  auto resolved = resolvePointer(doc, "/a/-");
  ASSERT_FALSE(resolved.ok());
  EXPECT_THAT(resolved.error().message, HasSubstr("nonexistent element after the last element"));
}

TEST(JsonPointerTest, LeadingZeroIndexIsRejected) {
  const json doc = {{"a", {1, 2}}};
  auto resolved = resolvePointer(doc, "/a/01");
  ASSERT_FALSE(resolved.ok());
  EXPECT_EQ(resolved.error().message,
            "json pointer \"/a/01\": invalid array index \"01\" for the array at \"/a\"");
}

TEST(JsonPointerTest, CannotDescendIntoAScalar) {
  const json doc = {{"a", "text"}};
  auto resolved = resolvePointer(doc, "/a/b");
  ASSERT_FALSE(resolved.ok());
  EXPECT_EQ(resolved.error().message,
            "json pointer \"/a/b\": the value at \"/a\" is a string, not an object or an array, "
            "so it has no member \"b\"");
}

TEST(JsonPointerTest, InvalidPointerTextIsReportedByResolve) {
  auto resolved = resolvePointer(kRfcDocument, "foo");
  ASSERT_FALSE(resolved.ok());
  EXPECT_THAT(resolved.error().message, HasSubstr("must be empty or start with"));
}

TEST(JsonPointerTest, MutableResolveGivesAWritableValue) {
  json doc = {{"a", {{"b", 1}}}};
  auto pointer = JsonPointer::parse("/a/b");
  ASSERT_TRUE(pointer.ok());
  auto resolved = resolvePointer(doc, *pointer);
  ASSERT_TRUE(resolved.ok());
  **resolved = 2;
  EXPECT_EQ(doc["a"]["b"], 2);
}

}  // namespace
}  // namespace harness::core
