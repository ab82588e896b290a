#include "harness/go/fmt.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

// fmt: %#v of a string slice and a string map; %v, %s and reflect type names of decoded JSON.

namespace harness::go {
namespace {

TEST(GoStringSliceGoSyntax, PrintsLikeSharpV) {
  EXPECT_EQ(stringSliceGoSyntax({"a", "b"}), R"([]string{"a", "b"})");
  EXPECT_EQ(stringSliceGoSyntax({"x\"y"}), R"([]string{"x\"y"})");
  EXPECT_EQ(stringSliceGoSyntax({}), "[]string(nil)");
  EXPECT_EQ(stringSliceGoSyntax({}, EmptySlice::kEmpty), "[]string{}");
  EXPECT_EQ(stringSliceGoSyntax({"CREATE"}, EmptySlice::kEmpty, "[]v1.OperationType"),
            R"([]v1.OperationType{"CREATE"})");
}

TEST(GoStringMapGoSyntax, PrintsLikeSharpVWithSortedKeys) {
  const auto m = nlohmann::json::parse(R"({"b": "2", "a": "x\"y", "c": 3})");
  EXPECT_EQ(stringMapGoSyntax(&m), R"(map[string]string{"a":"x\"y", "b":"2", "c":""})");
  EXPECT_EQ(stringMapGoSyntax(nullptr), "map[string]string(nil)");
  const auto not_a_map = nlohmann::json::array();
  EXPECT_EQ(stringMapGoSyntax(&not_a_map), "map[string]string(nil)");
  const auto empty = nlohmann::json::object();
  EXPECT_EQ(stringMapGoSyntax(&empty), "map[string]string{}");
}

TEST(GoDecodedValues, TypeNamesAsReflectPrintsThem) {
  using nlohmann::json;
  EXPECT_EQ(decodedTypeName(decodedTypeOf(json(1))), "int64");
  EXPECT_EQ(decodedTypeName(decodedTypeOf(json(1.5))), "float64");
  // Beyond int64, apimachinery's decoder gives float64.
  EXPECT_EQ(decodedTypeName(decodedTypeOf(json(18446744073709551615ULL))), "float64");
  EXPECT_EQ(decodedTypeName(decodedTypeOf(json("s"))), "string");
  EXPECT_EQ(decodedTypeName(decodedTypeOf(json(true))), "bool");
  EXPECT_EQ(decodedTypeName(decodedTypeOf(json::object())), "map[string]interface {}");
  EXPECT_EQ(decodedTypeName(decodedTypeOf(json::array())), "[]interface {}");
  EXPECT_EQ(decodedTypeName(decodedTypeOf(json())), "%!s(<nil>)");
}

TEST(GoDecodedValues, SprintVAndSprintS) {
  const auto v = nlohmann::json::parse(R"({"b": [1, 2.5, null], "a": {"x": true, "y": "s"}})");
  EXPECT_EQ(sprintV(v), "map[a:map[x:true y:s] b:[1 2.5 <nil>]]");
  EXPECT_EQ(sprintS(v), "map[a:map[x:%!s(bool=true) y:s] b:[%!s(int64=1) %!s(float64=2.5) "
                        "%!s(<nil>)]]");
  EXPECT_EQ(sprintV(nlohmann::json(1e21)), "1e+21");
  EXPECT_EQ(sprintS(nlohmann::json("plain")), "plain");
}

}  // namespace
}  // namespace harness::go
