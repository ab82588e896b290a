#include "harness/go/fmt.h"

#include <gtest/gtest.h>

// fmt: %#v of a string slice.

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

}  // namespace
}  // namespace harness::go
