#include "harness/audit/level.h"

#include <gtest/gtest.h>

namespace harness::audit {
namespace {

TEST(Level, NamesRoundTrip) {
  for (Level level : {Level::kNone, Level::kMetadata, Level::kRequest, Level::kRequestResponse}) {
    auto parsed = parseLevel(toString(level));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, level);
  }
  EXPECT_EQ(toString(Level::kRequestResponse), "RequestResponse");
}

TEST(Level, ParseIsCaseSensitive) {
  auto parsed = parseLevel("metadata");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "unknown level \"metadata\"");
}

TEST(Level, UnknownLevelIsAnError) {
  auto parsed = parseLevel("Verbose");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "unknown level \"Verbose\"");
}

TEST(Level, OrderingFollowsHelpersLess) {
  EXPECT_TRUE(less(Level::kNone, Level::kMetadata));
  EXPECT_TRUE(less(Level::kMetadata, Level::kRequest));
  EXPECT_TRUE(less(Level::kRequest, Level::kRequestResponse));
  EXPECT_FALSE(less(Level::kRequest, Level::kRequest));
  EXPECT_TRUE(greaterOrEqual(Level::kRequest, Level::kRequest));
  EXPECT_FALSE(greaterOrEqual(Level::kMetadata, Level::kRequest));
}

TEST(Stage, NamesRoundTrip) {
  for (Stage stage : {Stage::kRequestReceived, Stage::kResponseStarted, Stage::kResponseComplete,
                      Stage::kPanic}) {
    auto parsed = parseStage(toString(stage));
    ASSERT_TRUE(parsed.ok());
    EXPECT_EQ(*parsed, stage);
  }
}

TEST(Stage, UnknownStageIsAnError) {
  auto parsed = parseStage("Done");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "unknown stage \"Done\"");
}

}  // namespace
}  // namespace harness::audit
