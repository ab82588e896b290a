#include "harness/go/time.h"

#include <gtest/gtest.h>

// time: ParseDuration, Duration.Seconds, Duration.String, the package's own quote.

namespace harness::go {
namespace {

TEST(GoParseDuration, ParsesUnitsAndFractions) {
  EXPECT_EQ(*parseDuration("1001ms"), 1001000000);
  EXPECT_EQ(*parseDuration("6s5000ms"), 11000000000);
  EXPECT_EQ(*parseDuration("1.5h"), 5400000000000);
  EXPECT_EQ(*parseDuration("-1m"), -60000000000);
  EXPECT_EQ(*parseDuration("+.5s"), 500000000);
  EXPECT_EQ(*parseDuration("1us"), 1000);
  EXPECT_EQ(*parseDuration("1\xC2\xB5s"), 1000);
  EXPECT_EQ(*parseDuration("1\xCE\xBCs"), 1000);
  EXPECT_EQ(*parseDuration("0"), 0);
  EXPECT_EQ(*parseDuration("-0"), 0);
  EXPECT_EQ(*parseDuration("1h2m3s4ms5us6ns"), 3723004005006);
}

TEST(GoParseDuration, GoErrorTexts) {
  EXPECT_EQ(parseDuration("").error().message, R"(time: invalid duration "")");
  EXPECT_EQ(parseDuration("100").error().message, R"(time: missing unit in duration "100")");
  EXPECT_EQ(parseDuration("1x").error().message, R"(time: unknown unit "x" in duration "1x")");
  EXPECT_EQ(parseDuration(".s").error().message, R"(time: invalid duration ".s")");
  EXPECT_EQ(parseDuration("s").error().message, R"(time: invalid duration "s")");
  EXPECT_EQ(parseDuration("1d").error().message, R"(time: unknown unit "d" in duration "1d")");
  EXPECT_EQ(parseDuration("1\xC3\xA9").error().message,
            R"(time: unknown unit "\xc3\xa9" in duration "1\xc3\xa9")");
}

TEST(GoParseDuration, OverflowIsInvalid) {
  EXPECT_EQ(*parseDuration("9223372036854775807ns"), std::numeric_limits<std::int64_t>::max());
  EXPECT_FALSE(parseDuration("9223372036854775808ns").ok());
  EXPECT_EQ(*parseDuration("-9223372036854775808ns"), std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(parseDuration("3000000h").ok());
}

TEST(GoDurationSeconds, TruncatedMillisecondsMatchGo) {
  // int(d.Seconds()*1000): 1001ms becomes 1000 because 1.001*1000 < 1001 in float64.
  EXPECT_EQ(static_cast<std::int64_t>(durationSeconds(1001000000) * 1000), 1000);
  EXPECT_EQ(static_cast<std::int64_t>(durationSeconds(1500000000)), 1);
  EXPECT_DOUBLE_EQ(durationSeconds(-1500000000), -1.5);
}

TEST(GoDurationString, FormatsWholeSecondsLikeTimeDuration) {
  using namespace std::chrono_literals;
  EXPECT_EQ(durationString(0s), "0s");
  EXPECT_EQ(durationString(10s), "10s");
  EXPECT_EQ(durationString(60s), "1m0s");
  EXPECT_EQ(durationString(61s), "1m1s");
  EXPECT_EQ(durationString(3600s), "1h0m0s");
  EXPECT_EQ(durationString(3723s), "1h2m3s");
  EXPECT_EQ(durationString(-90s), "-1m30s");
}

}  // namespace
}  // namespace harness::go
