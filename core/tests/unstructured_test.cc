#include "harness/core/unstructured.h"

#include <gtest/gtest.h>

namespace harness::core {
namespace {

TEST(NestedStringTest, ReadsAStringOrGivesEmpty) {
  const auto object = nlohmann::json::parse(
      R"({"metadata": {"name": "web", "labels": {"app": 1}}, "spec": "x"})");
  EXPECT_EQ(nestedString(object, {"metadata", "name"}), "web");
  EXPECT_EQ(nestedString(object, {"metadata", "namespace"}), "");        // absent
  EXPECT_EQ(nestedString(object, {"metadata", "labels", "app"}), "");    // not a string
  EXPECT_EQ(nestedString(object, {"spec", "containers"}), "");           // parent not an object
  EXPECT_EQ(nestedString(nlohmann::json::array(), {"metadata", "name"}), "");
}

}  // namespace
}  // namespace harness::core
