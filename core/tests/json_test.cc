#include "harness/core/json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace harness::core {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string nestedArrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string nestedObjects(int depth) {
  std::string text;
  for (int i = 1; i < depth; ++i) text += "{\"a\":";
  text += "{}";
  text += std::string(depth - 1, '}');
  return text;
}

int depthOf(const nlohmann::json& value) {
  int depth = 0;
  for (const nlohmann::json* v = &value; v->is_structured(); ++depth) {
    if (v->empty()) return depth + 1;
    v = v->is_array() ? &v->front() : &v->begin().value();
  }
  return depth;
}

// encoding/json scanner.go: maxNestingDepth = 10000, checked after the push, so the 10,000th
// bracket is accepted and the 10,001st refused.
TEST(ParseJson, AcceptsGoMaximumNestingDepth) {
  auto arrays = parseJson(nestedArrays(kMaxJsonDepth));
  ASSERT_TRUE(arrays.ok()) << arrays.error().message;
  EXPECT_EQ(depthOf(*arrays), 10000);
  auto objects = parseJson(nestedObjects(kMaxJsonDepth));
  ASSERT_TRUE(objects.ok()) << objects.error().message;
  EXPECT_EQ(depthOf(*objects), 10000);
}

TEST(ParseJson, RefusesOneLevelMoreWithGoSyntaxError) {
  JsonError detail;
  auto arrays = parseJson(nestedArrays(kMaxJsonDepth + 1), &detail);
  ASSERT_FALSE(arrays.ok());
  EXPECT_EQ(arrays.error().message, "invalid character '[' exceeded max depth");
  EXPECT_TRUE(detail.too_deep);
  EXPECT_EQ(detail.offset, 10000u);  // the 10,001st '['

  auto objects = parseJson(" " + nestedObjects(kMaxJsonDepth + 1), &detail);
  ASSERT_FALSE(objects.ok());
  EXPECT_EQ(objects.error().message, "invalid character '{' exceeded max depth");
  EXPECT_EQ(detail.offset, 1u + 10000u * 5u);
}

TEST(ParseJson, RefusesHostileDepthWithoutBuildingIt) {
  // 100,000 levels: a recursive copy or dump of such a value overflows the stack.
  auto parsed = parseJson(nestedArrays(100000));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "invalid character '[' exceeded max depth");
  auto ordered = parseOrderedJson("{\"x\":" + nestedArrays(100000) + "}");
  ASSERT_FALSE(ordered.ok());
  EXPECT_EQ(ordered.error().message, "invalid character '[' exceeded max depth");
  EXPECT_TRUE(parseJsonOrDiscarded(nestedArrays(70000)).is_discarded());
}

TEST(ParseJson, BracketsInsideStringsDoNotCount) {
  const std::string text = "[\"" + std::string(20000, '[') + "\\\"\"]";
  auto parsed = parseJson(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ((*parsed)[0].get<std::string>().size(), 20001u);
  EXPECT_EQ(tooDeepOffset(text), std::string_view::npos);
}

TEST(ParseJson, SyntaxErrorsBeforeTheLimitWin) {
  // The scanner stops at the first problem in text order, as Go's does.
  JsonError detail;
  auto parsed = parseJson("[x" + nestedArrays(20000), &detail);
  ASSERT_FALSE(parsed.ok());
  EXPECT_FALSE(detail.too_deep);
  EXPECT_EQ(detail.offset, 1u);
  EXPECT_THAT(parsed.error().message, StartsWith("parse error at line 1, column 2: "));
}

TEST(ParseJson, WholeTextOnly) {
  EXPECT_THAT(parseJson("{} {}").error().message, HasSubstr("end of input"));
  EXPECT_EQ(*parseJson("  {\"a\": [1, 2.5, \"x\", null, true]}\n"),
            nlohmann::json::parse(R"({"a": [1, 2.5, "x", null, true]})"));
  EXPECT_TRUE(parseJsonOrDiscarded("").is_discarded());
  // ordered_json keeps member order.
  EXPECT_EQ(parseOrderedJson(R"({"b":1,"a":2})")->begin().key(), "b");
}

TEST(FindTooDeep, FindsTheFirstContainerBeyondTheLimitInMemberOrder) {
  nlohmann::json value = {{"a", nlohmann::json::array({nlohmann::json::array()})},
                          {"b", {{"c", nlohmann::json::object()}}}};
  EXPECT_EQ(findTooDeep(value, 3), nullptr);
  const nlohmann::json* found = findTooDeep(value, 2);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found, &value["a"][0]);
  EXPECT_EQ(findTooDeep(value["b"], 1), &value["b"]["c"]);
  EXPECT_EQ(findTooDeep(nlohmann::json(1), 0), nullptr);
  auto deep = parseJson(nestedArrays(kMaxJsonDepth));
  ASSERT_TRUE(deep.ok());
  EXPECT_EQ(findTooDeep(*deep), nullptr);
  EXPECT_NE(findTooDeep(*deep, kMaxJsonDepth - 1), nullptr);
}

TEST(ParseJsonAt, ReadsAStreamOfValues) {
  const std::string text = "{\"a\":1}\n{\"b\":2} [3]";
  std::size_t offset = 0;
  auto first = parseJsonAt(text, offset);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)["a"], 1);
  EXPECT_EQ(offset, 7u);
  auto second = parseJsonAt(text, offset);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)["b"], 2);
  auto third = parseJsonAt(text, offset);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(*third, nlohmann::json::array({3}));

  const std::string deep = "{} " + nestedArrays(kMaxJsonDepth + 1);
  offset = 0;
  ASSERT_TRUE(parseJsonAt(deep, offset).ok());
  JsonError detail;
  auto refused = parseJsonAt(deep, offset, &detail);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(detail.too_deep);
  EXPECT_EQ(detail.offset, 3u + 10000u);
}

}  // namespace
}  // namespace harness::core
