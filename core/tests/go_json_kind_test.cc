#include "harness/core/go_json_kind.h"

#include <gtest/gtest.h>

namespace harness::core {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

TEST(GoJsonValueKind, NamesEachJsonTypeAsEncodingJsonDoes) {
  EXPECT_EQ(goJsonValueKind(json("x")), "string");
  EXPECT_EQ(goJsonValueKind(json(true)), "bool");
  EXPECT_EQ(goJsonValueKind(json(-3)), "number");
  EXPECT_EQ(goJsonValueKind(json(3u)), "number");
  EXPECT_EQ(goJsonValueKind(json(1.5)), "number");
  EXPECT_EQ(goJsonValueKind(json::array()), "array");
  EXPECT_EQ(goJsonValueKind(json::object()), "object");
  EXPECT_EQ(goJsonValueKind(json(nullptr)), "null");
}

TEST(GoJsonValueKind, NamesANumberWithItsLiteralForIntegerTargets) {
  // decode.go: UnmarshalTypeError{Value: "number " + string(item)} for a number an integer type
  // cannot hold.
  EXPECT_EQ(goJsonValueKind(json(1.5), true), "number 1.5");
  EXPECT_EQ(goJsonValueKind(json(99999999999), true), "number 99999999999");
  EXPECT_EQ(goJsonValueKind(json("1"), true), "string");
}

TEST(GoJsonValueKind, ReadsOrderedJsonToo) {
  EXPECT_EQ(goJsonValueKind(ordered_json::parse(R"({"b":1,"a":2})")), "object");
  EXPECT_EQ(goJsonValueKind(ordered_json::parse("[1]")), "array");
  EXPECT_EQ(goJsonValueKind(ordered_json(-7), true), "number -7");
}

}  // namespace
}  // namespace harness::core
