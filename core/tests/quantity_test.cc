#include "harness/core/quantity.h"

#include <gtest/gtest.h>

#include <limits>

namespace harness::core {
namespace {

constexpr char kFormatError[] =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

std::int64_t milli(std::string_view s) {
  auto q = Quantity::parse(s);
  EXPECT_TRUE(q.ok()) << s;
  auto v = q->milliValue();
  EXPECT_TRUE(v.has_value()) << s;
  return v.value_or(-1);
}

TEST(Quantity, ParsesDecimalSuffixesToMilli) {
  EXPECT_EQ(milli("1"), 1000);
  EXPECT_EQ(milli("100m"), 100);
  EXPECT_EQ(milli("1.5"), 1500);
  EXPECT_EQ(milli("0.15"), 150);
  EXPECT_EQ(milli("2k"), 2000000);
  EXPECT_EQ(milli("1M"), 1000000000);
  EXPECT_EQ(milli("500u"), 1);  // a fraction of a milli-unit rounds up
  EXPECT_EQ(milli("0"), 0);
  EXPECT_EQ(milli("-1.5"), -1500);
}

TEST(Quantity, ParsesBinarySuffixes) {
  EXPECT_EQ(milli("1Ki"), 1024000);
  EXPECT_EQ(milli("128Mi"), 134217728000);
  auto q = Quantity::parse("1.5Gi");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->roundedUp(0), 1610612736);
  EXPECT_EQ(q->format(), Quantity::Format::kBinarySI);
}

TEST(Quantity, ParsesExponentSuffixes) {
  EXPECT_EQ(milli("1e3"), 1000000);
  EXPECT_EQ(milli("12E-3"), 12);
  EXPECT_EQ(Quantity::parse("1e3")->format(), Quantity::Format::kDecimalExponent);
}

TEST(Quantity, WholeUnitsRoundAwayFromZero) {
  EXPECT_EQ(Quantity::parse("1001m")->roundedUp(0), 2);
  EXPECT_EQ(Quantity::parse("1000m")->roundedUp(0), 1);
  EXPECT_EQ(Quantity::parse("1.5")->roundedUp(0), 2);
  EXPECT_EQ(Quantity::parse("1n")->roundedUp(0), 1);
  EXPECT_EQ(Quantity::parse("-0.5")->roundedUp(0), -1);
  EXPECT_EQ(Quantity::parse("3")->roundedUp(0), 3);
}

TEST(Quantity, KeepsApimachineryQuirks) {
  // Signs, dots and empty numerators parse as zero; "1." is accepted.
  for (const char* s : {"+", "-", ".", "+.", "0.0", "000"}) {
    auto q = Quantity::parse(s);
    ASSERT_TRUE(q.ok()) << s;
    EXPECT_TRUE(q->isZero()) << s;
  }
  EXPECT_EQ(milli("1."), 1000);
  EXPECT_EQ(milli("1.G"), 1000000000000);
}

TEST(Quantity, RejectsMalformedWithFormatError) {
  for (const char* s : {"", "abc", "1.5.5", "1MiB", "1KiB0", "1 ", " 1", "1+a"}) {
    auto q = Quantity::parse(s);
    ASSERT_FALSE(q.ok()) << s;
    EXPECT_EQ(q.error().message, kFormatError) << s;
  }
}

TEST(Quantity, RejectsUnknownSuffix) {
  for (const char* s : {"1m5", "1Ki5", "1k1", "1mm", "--1", "1e", "1m+"}) {
    auto q = Quantity::parse(s);
    ASSERT_FALSE(q.ok()) << s;
    EXPECT_EQ(q.error().message, "unable to parse quantity's suffix") << s;
  }
}

TEST(Quantity, ExponentIsTruncatedToInt32LikeGo) {
  // int32(4294967296) == 0, so 1e4294967296 is 1.
  EXPECT_EQ(milli("1e4294967296"), 1000);
}

TEST(Quantity, SubNanoValuesRoundUpToOneNano) {
  auto q = Quantity::parse("1e-12");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->roundedUp(-9), 1);
  EXPECT_EQ(q->milliValue(), 1);
}

TEST(Quantity, OverflowGivesNoValue) {
  EXPECT_FALSE(Quantity::parse("1E")->milliValue().has_value());
  EXPECT_EQ(Quantity::parse("9223372036854775807")->roundedUp(0),
            std::numeric_limits<std::int64_t>::max());
  EXPECT_FALSE(Quantity::parse("9223372036854775808")->roundedUp(0).has_value());
  EXPECT_EQ(Quantity::parse("-9223372036854775808")->roundedUp(0),
            std::numeric_limits<std::int64_t>::min());
}

TEST(Quantity, BinaryAmountsAreCappedAtMaxInt64) {
  auto q = Quantity::parse("16Ei");
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(q->roundedUp(0), std::numeric_limits<std::int64_t>::max());
}

}  // namespace
}  // namespace harness::core
