#include "harness/core/go_strconv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace harness::core {
namespace {

TEST(GoParseBool, AcceptsGoSpellings) {
  for (const char* s : {"1", "t", "T", "TRUE", "true", "True"}) {
    auto r = goParseBool(s);
    ASSERT_TRUE(r.ok()) << s;
    EXPECT_TRUE(*r) << s;
  }
  for (const char* s : {"0", "f", "F", "FALSE", "false", "False"}) {
    auto r = goParseBool(s);
    ASSERT_TRUE(r.ok()) << s;
    EXPECT_FALSE(*r) << s;
  }
}

TEST(GoParseBool, RejectsOtherSpellingsWithGoError) {
  for (const char* s : {"yes", "on", "tRUE", "", " true", "enabled"}) {
    EXPECT_FALSE(goParseBool(s).ok()) << s;
  }
  EXPECT_EQ(goParseBool("yes").error().message,
            R"(strconv.ParseBool: parsing "yes": invalid syntax)");
}

TEST(GoParseInt, ParsesBase10With32BitRange) {
  EXPECT_EQ(*goParseInt("4191", 10, 32), 4191);
  EXPECT_EQ(*goParseInt("+7", 10, 32), 7);
  EXPECT_EQ(*goParseInt("-2147483648", 10, 32), -2147483648LL);
  auto r = goParseInt("2147483648", 10, 32);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, R"(strconv.ParseInt: parsing "2147483648": value out of range)");
}

TEST(GoParseInt, RejectsUnderscoresAndPrefixesOutsideBaseZero) {
  EXPECT_EQ(goParseInt("1_000", 10, 64).error().message,
            R"(strconv.ParseInt: parsing "1_000": invalid syntax)");
  EXPECT_FALSE(goParseInt("0x10", 10, 64).ok());
  EXPECT_FALSE(goParseInt(" 1", 10, 64).ok());
  EXPECT_FALSE(goParseInt("", 10, 64).ok());
  EXPECT_FALSE(goParseInt("-", 10, 64).ok());
}

TEST(GoParseInt, BaseZeroHonoursPrefixesAndUnderscores) {
  EXPECT_EQ(*goParseInt("0x1F", 0, 64), 31);
  EXPECT_EQ(*goParseInt("0o17", 0, 64), 15);
  EXPECT_EQ(*goParseInt("017", 0, 64), 15);
  EXPECT_EQ(*goParseInt("0b101", 0, 64), 5);
  EXPECT_EQ(*goParseInt("1_000", 0, 64), 1000);
  EXPECT_FALSE(goParseInt("1__000", 0, 64).ok());
  EXPECT_FALSE(goParseInt("_1000", 0, 64).ok());
  EXPECT_FALSE(goParseInt("08", 0, 64).ok());
}

TEST(GoParseInt, Int64Extremes) {
  EXPECT_EQ(*goParseInt("9223372036854775807", 10, 64), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(*goParseInt("-9223372036854775808", 10, 64), std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(goParseInt("9223372036854775808", 10, 64).ok());
  EXPECT_FALSE(goParseInt("99999999999999999999999", 10, 64).ok());
}

TEST(GoParseInt, InvalidBaseAndBitSizeErrors) {
  EXPECT_EQ(goParseInt("1", 1, 64).error().message,
            R"(strconv.ParseInt: parsing "1": invalid base 1)");
  EXPECT_EQ(goParseInt("1", 10, 65).error().message,
            R"(strconv.ParseInt: parsing "1": invalid bit size 65)");
}

TEST(GoParseUint, RejectsSignAndHonoursBitSize) {
  EXPECT_EQ(*goParseUint("300", 10, 64), 300u);
  EXPECT_EQ(goParseUint("-1", 10, 64).error().message,
            R"(strconv.ParseUint: parsing "-1": invalid syntax)");
  EXPECT_EQ(goParseUint("256", 10, 8).error().message,
            R"(strconv.ParseUint: parsing "256": value out of range)");
  EXPECT_EQ(*goParseUint("18446744073709551615", 10, 64),
            std::numeric_limits<std::uint64_t>::max());
}

TEST(GoAtoi, NamesAtoiInErrors) {
  EXPECT_EQ(*goAtoi("-42"), -42);
  EXPECT_EQ(goAtoi("4x").error().message, R"(strconv.Atoi: parsing "4x": invalid syntax)");
}

TEST(GoParseFloat, ParsesDecimalForms) {
  EXPECT_DOUBLE_EQ(*goParseFloat("0.10"), 0.1);
  EXPECT_DOUBLE_EQ(*goParseFloat(".5"), 0.5);
  EXPECT_DOUBLE_EQ(*goParseFloat("1."), 1.0);
  EXPECT_DOUBLE_EQ(*goParseFloat("+2e3"), 2000.0);
  EXPECT_DOUBLE_EQ(*goParseFloat("1_000.5"), 1000.5);
  EXPECT_DOUBLE_EQ(*goParseFloat("0x1.8p1"), 3.0);
}

TEST(GoParseFloat, ParsesSpecialValues) {
  EXPECT_TRUE(std::isinf(*goParseFloat("inf")));
  EXPECT_TRUE(std::isinf(*goParseFloat("-Infinity")));
  EXPECT_TRUE(std::isnan(*goParseFloat("NaN")));
  EXPECT_FALSE(goParseFloat("+nan").ok());
  EXPECT_FALSE(goParseFloat("infin").ok());
}

TEST(GoParseFloat, RejectsMalformedInput) {
  for (const char* s :
       {"", ".", "e5", "1e", "1e+", "0x1.8", "1_", "1__0", "abc", "1.2.3", " 1", "1 ", "0x"}) {
    EXPECT_FALSE(goParseFloat(s).ok()) << s;
  }
  EXPECT_EQ(goParseFloat("abc").error().message,
            R"(strconv.ParseFloat: parsing "abc": invalid syntax)");
}

TEST(GoParseFloat, OverflowIsARangeErrorUnderflowIsNot) {
  EXPECT_EQ(goParseFloat("1e400").error().message,
            R"(strconv.ParseFloat: parsing "1e400": value out of range)");
  auto tiny = goParseFloat("1e-400");
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ(*tiny, 0.0);
}

TEST(GoFormatFloat, ShortestGForm) {
  EXPECT_EQ(goFormatFloat(0.1), "0.1");
  EXPECT_EQ(goFormatFloat(*goParseFloat("0.10")), "0.1");
  EXPECT_EQ(goFormatFloat(0.0001), "0.0001");
  EXPECT_EQ(goFormatFloat(0.00001), "1e-05");
  EXPECT_EQ(goFormatFloat(100000), "100000");
  EXPECT_EQ(goFormatFloat(1000000), "1e+06");
  EXPECT_EQ(goFormatFloat(1234567), "1.234567e+06");
  EXPECT_EQ(goFormatFloat(1.5), "1.5");
  EXPECT_EQ(goFormatFloat(-0.25), "-0.25");
  EXPECT_EQ(goFormatFloat(0), "0");
  EXPECT_EQ(goFormatFloat(1e21), "1e+21");
  EXPECT_EQ(goFormatFloat(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(goFormatFloat(std::nan("")), "NaN");
}

TEST(GoParseDuration, ParsesUnitsAndFractions) {
  EXPECT_EQ(*goParseDuration("1001ms"), 1001000000);
  EXPECT_EQ(*goParseDuration("6s5000ms"), 11000000000);
  EXPECT_EQ(*goParseDuration("1.5h"), 5400000000000);
  EXPECT_EQ(*goParseDuration("-1m"), -60000000000);
  EXPECT_EQ(*goParseDuration("+.5s"), 500000000);
  EXPECT_EQ(*goParseDuration("1us"), 1000);
  EXPECT_EQ(*goParseDuration("1\xC2\xB5s"), 1000);
  EXPECT_EQ(*goParseDuration("1\xCE\xBCs"), 1000);
  EXPECT_EQ(*goParseDuration("0"), 0);
  EXPECT_EQ(*goParseDuration("-0"), 0);
  EXPECT_EQ(*goParseDuration("1h2m3s4ms5us6ns"), 3723004005006);
}

TEST(GoParseDuration, GoErrorTexts) {
  EXPECT_EQ(goParseDuration("").error().message, R"(time: invalid duration "")");
  EXPECT_EQ(goParseDuration("100").error().message, R"(time: missing unit in duration "100")");
  EXPECT_EQ(goParseDuration("1x").error().message, R"(time: unknown unit "x" in duration "1x")");
  EXPECT_EQ(goParseDuration(".s").error().message, R"(time: invalid duration ".s")");
  EXPECT_EQ(goParseDuration("s").error().message, R"(time: invalid duration "s")");
  EXPECT_EQ(goParseDuration("1d").error().message, R"(time: unknown unit "d" in duration "1d")");
  EXPECT_EQ(goParseDuration("1\xC3\xA9").error().message,
            R"(time: unknown unit "\xc3\xa9" in duration "1\xc3\xa9")");
}

TEST(GoParseDuration, OverflowIsInvalid) {
  EXPECT_EQ(*goParseDuration("9223372036854775807ns"), std::numeric_limits<std::int64_t>::max());
  EXPECT_FALSE(goParseDuration("9223372036854775808ns").ok());
  EXPECT_EQ(*goParseDuration("-9223372036854775808ns"), std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(goParseDuration("3000000h").ok());
}

TEST(GoDurationSeconds, TruncatedMillisecondsMatchGo) {
  // int(d.Seconds()*1000): 1001ms becomes 1000 because 1.001*1000 < 1001 in float64.
  EXPECT_EQ(static_cast<std::int64_t>(goDurationSeconds(1001000000) * 1000), 1000);
  EXPECT_EQ(static_cast<std::int64_t>(goDurationSeconds(1500000000)), 1);
  EXPECT_DOUBLE_EQ(goDurationSeconds(-1500000000), -1.5);
}

TEST(GoParseUintDetailed, ParsesBasePrefixes) {
  EXPECT_EQ(goParseUintDetailed("0x1F", 0, 64).value, 31u);
  EXPECT_EQ(goParseUintDetailed("0o17", 0, 64).value, 15u);
  EXPECT_EQ(goParseUintDetailed("017", 0, 64).value, 15u);
  EXPECT_EQ(goParseUintDetailed("0b101", 0, 64).value, 5u);
  EXPECT_EQ(goParseUintDetailed("0b101", 0, 64).error, GoNumError::kNone);
}

TEST(GoParseUintDetailed, ReportsSyntaxErrors) {
  EXPECT_EQ(goParseUintDetailed("", 0, 64).error, GoNumError::kSyntax);
  EXPECT_EQ(goParseUintDetailed("0x", 0, 64).error, GoNumError::kSyntax);
  EXPECT_EQ(goParseUintDetailed("-1", 0, 64).error, GoNumError::kSyntax);
  EXPECT_EQ(goParseUintDetailed("12", 2, 64).error, GoNumError::kSyntax);
}

TEST(GoParseUintDetailed, ReportsRangeErrorsWithGoClampedValue) {
  const GoUintParse p = goParseUintDetailed("18446744073709551616", 0, 64);
  EXPECT_EQ(p.error, GoNumError::kRange);
  EXPECT_EQ(p.value, std::numeric_limits<std::uint64_t>::max());
  const GoUintParse small = goParseUintDetailed("256", 10, 8);
  EXPECT_EQ(small.error, GoNumError::kRange);
  EXPECT_EQ(small.value, 255u);
}

TEST(GoParseUintDetailed, ReportsBadArguments) {
  EXPECT_EQ(goParseUintDetailed("1", 1, 64).error, GoNumError::kBase);
  EXPECT_EQ(goParseUintDetailed("1", 10, 65).error, GoNumError::kBitSize);
}

TEST(GoParseIntDetailed, ParsesSignedValues) {
  EXPECT_EQ(goParseIntDetailed("-0x10", 0, 64).value, -16);
  EXPECT_EQ(goParseIntDetailed("+7", 0, 64).value, 7);
  EXPECT_EQ(goParseIntDetailed("-9223372036854775808", 10, 64).value,
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(goParseIntDetailed("-9223372036854775808", 10, 64).error, GoNumError::kNone);
}

TEST(GoParseIntDetailed, ReportsRangeErrorsWithGoClampedValue) {
  const GoIntParse high = goParseIntDetailed("9223372036854775808", 10, 64);
  EXPECT_EQ(high.error, GoNumError::kRange);
  EXPECT_EQ(high.value, std::numeric_limits<std::int64_t>::max());
  const GoIntParse low = goParseIntDetailed("-129", 10, 8);
  EXPECT_EQ(low.error, GoNumError::kRange);
  EXPECT_EQ(low.value, -128);
}

TEST(GoParseIntDetailed, ReportsSyntaxErrors) {
  EXPECT_EQ(goParseIntDetailed("-", 0, 64).error, GoNumError::kSyntax);
  EXPECT_EQ(goParseIntDetailed("1.5", 0, 64).error, GoNumError::kSyntax);
}

}  // namespace
}  // namespace harness::core
