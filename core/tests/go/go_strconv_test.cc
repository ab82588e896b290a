#include "harness/go/strconv.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

// strconv: ParseBool, ParseInt, ParseUint, Atoi, ParseFloat, FormatFloat, Quote.

namespace harness::go {
namespace {

TEST(GoParseBool, AcceptsGoSpellings) {
  for (const char* s : {"1", "t", "T", "TRUE", "true", "True"}) {
    auto r = parseBool(s);
    ASSERT_TRUE(r.ok()) << s;
    EXPECT_TRUE(*r) << s;
  }
  for (const char* s : {"0", "f", "F", "FALSE", "false", "False"}) {
    auto r = parseBool(s);
    ASSERT_TRUE(r.ok()) << s;
    EXPECT_FALSE(*r) << s;
  }
}

TEST(GoParseBool, RejectsOtherSpellingsWithGoError) {
  for (const char* s : {"yes", "on", "tRUE", "", " true", "enabled"}) {
    EXPECT_FALSE(parseBool(s).ok()) << s;
  }
  EXPECT_EQ(parseBool("yes").error().message,
            R"(strconv.ParseBool: parsing "yes": invalid syntax)");
}

TEST(GoParseInt, ParsesBase10With32BitRange) {
  EXPECT_EQ(*parseInt("4191", 10, 32), 4191);
  EXPECT_EQ(*parseInt("+7", 10, 32), 7);
  EXPECT_EQ(*parseInt("-2147483648", 10, 32), -2147483648LL);
  auto r = parseInt("2147483648", 10, 32);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, R"(strconv.ParseInt: parsing "2147483648": value out of range)");
}

TEST(GoParseInt, RejectsUnderscoresAndPrefixesOutsideBaseZero) {
  EXPECT_EQ(parseInt("1_000", 10, 64).error().message,
            R"(strconv.ParseInt: parsing "1_000": invalid syntax)");
  EXPECT_FALSE(parseInt("0x10", 10, 64).ok());
  EXPECT_FALSE(parseInt(" 1", 10, 64).ok());
  EXPECT_FALSE(parseInt("", 10, 64).ok());
  EXPECT_FALSE(parseInt("-", 10, 64).ok());
}

TEST(GoParseInt, BaseZeroHonoursPrefixesAndUnderscores) {
  EXPECT_EQ(*parseInt("0x1F", 0, 64), 31);
  EXPECT_EQ(*parseInt("0o17", 0, 64), 15);
  EXPECT_EQ(*parseInt("017", 0, 64), 15);
  EXPECT_EQ(*parseInt("0b101", 0, 64), 5);
  EXPECT_EQ(*parseInt("1_000", 0, 64), 1000);
  EXPECT_FALSE(parseInt("1__000", 0, 64).ok());
  EXPECT_FALSE(parseInt("_1000", 0, 64).ok());
  EXPECT_FALSE(parseInt("08", 0, 64).ok());
}

TEST(GoParseInt, Int64Extremes) {
  EXPECT_EQ(*parseInt("9223372036854775807", 10, 64), std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(*parseInt("-9223372036854775808", 10, 64), std::numeric_limits<std::int64_t>::min());
  EXPECT_FALSE(parseInt("9223372036854775808", 10, 64).ok());
  EXPECT_FALSE(parseInt("99999999999999999999999", 10, 64).ok());
}

TEST(GoParseInt, InvalidBaseAndBitSizeErrors) {
  EXPECT_EQ(parseInt("1", 1, 64).error().message,
            R"(strconv.ParseInt: parsing "1": invalid base 1)");
  EXPECT_EQ(parseInt("1", 10, 65).error().message,
            R"(strconv.ParseInt: parsing "1": invalid bit size 65)");
}

TEST(GoParseUint, RejectsSignAndHonoursBitSize) {
  EXPECT_EQ(*parseUint("300", 10, 64), 300u);
  EXPECT_EQ(parseUint("-1", 10, 64).error().message,
            R"(strconv.ParseUint: parsing "-1": invalid syntax)");
  EXPECT_EQ(parseUint("256", 10, 8).error().message,
            R"(strconv.ParseUint: parsing "256": value out of range)");
  EXPECT_EQ(*parseUint("18446744073709551615", 10, 64),
            std::numeric_limits<std::uint64_t>::max());
}

TEST(GoAtoi, NamesAtoiInErrors) {
  EXPECT_EQ(*atoi("-42"), -42);
  EXPECT_EQ(atoi("4x").error().message, R"(strconv.Atoi: parsing "4x": invalid syntax)");
}

TEST(GoParseFloat, ParsesDecimalForms) {
  EXPECT_DOUBLE_EQ(*parseFloat("0.10"), 0.1);
  EXPECT_DOUBLE_EQ(*parseFloat(".5"), 0.5);
  EXPECT_DOUBLE_EQ(*parseFloat("1."), 1.0);
  EXPECT_DOUBLE_EQ(*parseFloat("+2e3"), 2000.0);
  EXPECT_DOUBLE_EQ(*parseFloat("1_000.5"), 1000.5);
  EXPECT_DOUBLE_EQ(*parseFloat("0x1.8p1"), 3.0);
}

TEST(GoParseFloat, ParsesSpecialValues) {
  EXPECT_TRUE(std::isinf(*parseFloat("inf")));
  EXPECT_TRUE(std::isinf(*parseFloat("-Infinity")));
  EXPECT_TRUE(std::isnan(*parseFloat("NaN")));
  EXPECT_FALSE(parseFloat("+nan").ok());
  EXPECT_FALSE(parseFloat("infin").ok());
}

TEST(GoParseFloat, RejectsMalformedInput) {
  for (const char* s :
       {"", ".", "e5", "1e", "1e+", "0x1.8", "1_", "1__0", "abc", "1.2.3", " 1", "1 ", "0x"}) {
    EXPECT_FALSE(parseFloat(s).ok()) << s;
  }
  EXPECT_EQ(parseFloat("abc").error().message,
            R"(strconv.ParseFloat: parsing "abc": invalid syntax)");
}

TEST(GoParseFloat, OverflowIsARangeErrorUnderflowIsNot) {
  EXPECT_EQ(parseFloat("1e400").error().message,
            R"(strconv.ParseFloat: parsing "1e400": value out of range)");
  auto tiny = parseFloat("1e-400");
  ASSERT_TRUE(tiny.ok());
  EXPECT_EQ(*tiny, 0.0);
}

TEST(GoFormatFloat, ShortestGForm) {
  EXPECT_EQ(formatFloat(0.1), "0.1");
  EXPECT_EQ(formatFloat(*parseFloat("0.10")), "0.1");
  EXPECT_EQ(formatFloat(0.0001), "0.0001");
  EXPECT_EQ(formatFloat(0.00001), "1e-05");
  EXPECT_EQ(formatFloat(100000), "100000");
  EXPECT_EQ(formatFloat(1000000), "1e+06");
  EXPECT_EQ(formatFloat(1234567), "1.234567e+06");
  EXPECT_EQ(formatFloat(1.5), "1.5");
  EXPECT_EQ(formatFloat(-0.25), "-0.25");
  EXPECT_EQ(formatFloat(0), "0");
  EXPECT_EQ(formatFloat(1e21), "1e+21");
  EXPECT_EQ(formatFloat(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(formatFloat(std::nan("")), "NaN");
}

TEST(GoParseUintDetailed, ParsesBasePrefixes) {
  EXPECT_EQ(parseUintDetailed("0x1F", 0, 64).value, 31u);
  EXPECT_EQ(parseUintDetailed("0o17", 0, 64).value, 15u);
  EXPECT_EQ(parseUintDetailed("017", 0, 64).value, 15u);
  EXPECT_EQ(parseUintDetailed("0b101", 0, 64).value, 5u);
  EXPECT_EQ(parseUintDetailed("0b101", 0, 64).error, NumError::kNone);
}

TEST(GoParseUintDetailed, ReportsSyntaxErrors) {
  EXPECT_EQ(parseUintDetailed("", 0, 64).error, NumError::kSyntax);
  EXPECT_EQ(parseUintDetailed("0x", 0, 64).error, NumError::kSyntax);
  EXPECT_EQ(parseUintDetailed("-1", 0, 64).error, NumError::kSyntax);
  EXPECT_EQ(parseUintDetailed("12", 2, 64).error, NumError::kSyntax);
}

TEST(GoParseUintDetailed, ReportsRangeErrorsWithGoClampedValue) {
  const UintParse p = parseUintDetailed("18446744073709551616", 0, 64);
  EXPECT_EQ(p.error, NumError::kRange);
  EXPECT_EQ(p.value, std::numeric_limits<std::uint64_t>::max());
  const UintParse small = parseUintDetailed("256", 10, 8);
  EXPECT_EQ(small.error, NumError::kRange);
  EXPECT_EQ(small.value, 255u);
}

TEST(GoParseUintDetailed, ReportsBadArguments) {
  EXPECT_EQ(parseUintDetailed("1", 1, 64).error, NumError::kBase);
  EXPECT_EQ(parseUintDetailed("1", 10, 65).error, NumError::kBitSize);
}

TEST(GoParseIntDetailed, ParsesSignedValues) {
  EXPECT_EQ(parseIntDetailed("-0x10", 0, 64).value, -16);
  EXPECT_EQ(parseIntDetailed("+7", 0, 64).value, 7);
  EXPECT_EQ(parseIntDetailed("-9223372036854775808", 10, 64).value,
            std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(parseIntDetailed("-9223372036854775808", 10, 64).error, NumError::kNone);
}

TEST(GoParseIntDetailed, ReportsRangeErrorsWithGoClampedValue) {
  const IntParse high = parseIntDetailed("9223372036854775808", 10, 64);
  EXPECT_EQ(high.error, NumError::kRange);
  EXPECT_EQ(high.value, std::numeric_limits<std::int64_t>::max());
  const IntParse low = parseIntDetailed("-129", 10, 8);
  EXPECT_EQ(low.error, NumError::kRange);
  EXPECT_EQ(low.value, -128);
}

TEST(GoParseIntDetailed, ReportsSyntaxErrors) {
  EXPECT_EQ(parseIntDetailed("-", 0, 64).error, NumError::kSyntax);
  EXPECT_EQ(parseIntDetailed("1.5", 0, 64).error, NumError::kSyntax);
}


TEST(GoQuote, EscapesLikeStrconvQuote) {
  EXPECT_EQ(quote("plain"), "\"plain\"");
  EXPECT_EQ(quote("a\"b\\c"), R"("a\"b\\c")");
  EXPECT_EQ(quote("\a\b\f\n\r\t\v"), R"("\a\b\f\n\r\t\v")");
  EXPECT_EQ(quote(std::string("\x00\x1f\x7f", 3)), R"("\x00\x1f\x7f")");
  EXPECT_EQ(quote("caf\xc3\xa9"), "\"caf\xc3\xa9\"");  // printable UTF-8 is kept
  EXPECT_EQ(quote("\xff"), R"("\xff")");                  // a byte that is not UTF-8
}

}  // namespace
}  // namespace harness::go
