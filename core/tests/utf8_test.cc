#include "harness/core/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace harness::core {
namespace {

void expectRune(const Rune& r, char32_t code_point, std::size_t length, bool valid) {
  EXPECT_EQ(r.code_point, code_point);
  EXPECT_EQ(r.length, length);
  EXPECT_EQ(r.valid, valid);
}

void expectInvalid(std::string_view s, Utf8Check check = Utf8Check::kGo) {
  SCOPED_TRACE(testing::PrintToString(std::string(s)));
  expectRune(decodeUtf8(s, 0, check), kRuneError, 1, false);
}

TEST(DecodeUtf8, DecodesAsciiAsOneByte) { expectRune(decodeUtf8("a", 0), 'a', 1, true); }

TEST(DecodeUtf8, DecodesEachSequenceLength) {
  expectRune(decodeUtf8("\xC2\x80", 0), 0x80, 2, true);
  expectRune(decodeUtf8("\xDF\xBF", 0), 0x7FF, 2, true);
  expectRune(decodeUtf8("\xE0\xA0\x80", 0), 0x800, 3, true);
  expectRune(decodeUtf8("\xE2\x82\xAC", 0), 0x20AC, 3, true);
  expectRune(decodeUtf8("\xF0\x90\x80\x80", 0), 0x10000, 4, true);
  expectRune(decodeUtf8("\xF4\x8F\xBF\xBF", 0), 0x10FFFF, 4, true);
}

TEST(DecodeUtf8, DecodesAtOffset) { expectRune(decodeUtf8("a\xC3\xA9", 1), 0xE9, 2, true); }

TEST(DecodeUtf8, ValidReplacementCharacterIsValid) {
  expectRune(decodeUtf8("\xEF\xBF\xBD", 0), kRuneError, 3, true);
}

TEST(DecodeUtf8, OffsetAtEndGivesRuneErrorOfLengthZero) {
  expectRune(decodeUtf8("ab", 2), kRuneError, 0, false);
  expectRune(decodeUtf8("", 0), kRuneError, 0, false);
}

TEST(DecodeUtf8, RejectsContinuationByteAsLead) { expectInvalid("\x80"); }

TEST(DecodeUtf8, RejectsLeadBytesGoNeverAccepts) {
  expectInvalid("\xC0\x80");
  expectInvalid("\xC1\xBF");
  expectInvalid("\xF5\x80\x80\x80");
  expectInvalid("\xF8\x80\x80\x80");
  expectInvalid("\xFF");
}

TEST(DecodeUtf8, RejectsTruncatedSequence) {
  expectInvalid("\xE2\x82");
  expectInvalid("\xF0\x90\x80");
}

TEST(DecodeUtf8, RejectsMissingContinuationByte) {
  expectInvalid("\xE2(\xAC");
  expectInvalid("\xC3" "a");
}

TEST(DecodeUtf8, RejectsOverlongForms) {
  expectInvalid("\xE0\x80\xAF");      // '/' in three bytes
  expectInvalid("\xE0\x9F\xBF");      // U+07FF in three bytes
  expectInvalid("\xF0\x8F\xBF\xBF");  // U+FFFF in four bytes
}

TEST(DecodeUtf8, RejectsSurrogates) {
  expectInvalid("\xED\xA0\x80");
  expectInvalid("\xED\xBF\xBF");
  expectRune(decodeUtf8("\xED\x9F\xBF", 0), 0xD7FF, 3, true);
}

TEST(DecodeUtf8, RejectsValuesAboveMaxRune) { expectInvalid("\xF4\x90\x80\x80"); }

TEST(DecodeUtf8LeadC2ToF4, AcceptsOverlongSurrogateAndOutOfRangeValues) {
  expectRune(decodeUtf8("\xE0\x80\xA0", 0, Utf8Check::kLeadC2ToF4), 0x20, 3, true);
  expectRune(decodeUtf8("\xED\xA0\x80", 0, Utf8Check::kLeadC2ToF4), 0xD800, 3, true);
  expectRune(decodeUtf8("\xF4\x90\x80\x80", 0, Utf8Check::kLeadC2ToF4), 0x110000, 4, true);
}

TEST(DecodeUtf8LeadC2ToF4, RejectsLeadBytesOutsideC2ToF4) {
  expectInvalid("\xC0\xA0", Utf8Check::kLeadC2ToF4);
  expectInvalid("\xF5\x80\x80\x80", Utf8Check::kLeadC2ToF4);
}

TEST(DecodeUtf8LeadC2ToF4, RejectsBadContinuationBytes) {
  expectInvalid("\xE2\x82", Utf8Check::kLeadC2ToF4);
  expectInvalid("\xE2\x82(", Utf8Check::kLeadC2ToF4);
}

TEST(DecodeUtf8LeadBits, AcceptsAnyLeadBitPattern) {
  expectRune(decodeUtf8("\xC0\x80", 0, Utf8Check::kLeadBits), 0, 2, true);
  expectRune(decodeUtf8("\xF7\xBF\xBF\xBF", 0, Utf8Check::kLeadBits), 0x1FFFFF, 4, true);
  expectRune(decodeUtf8("\xED\xA0\x80", 0, Utf8Check::kLeadBits), 0xD800, 3, true);
}

TEST(DecodeUtf8LeadBits, RejectsContinuationAndF8Leads) {
  expectInvalid("\x80", Utf8Check::kLeadBits);
  expectInvalid("\xF8\x80\x80\x80\x80", Utf8Check::kLeadBits);
  expectInvalid("\xC0", Utf8Check::kLeadBits);
}

TEST(IsValidUtf8, AcceptsValidText) {
  EXPECT_TRUE(isValidUtf8(""));
  EXPECT_TRUE(isValidUtf8("h\xC3\xA9llo \xF0\x9F\x98\x80"));
}

TEST(IsValidUtf8, RejectsAnyInvalidSequence) {
  EXPECT_FALSE(isValidUtf8("ok\xFF"));
  EXPECT_FALSE(isValidUtf8("\xED\xA0\x80"));
  EXPECT_FALSE(isValidUtf8("\xE2\x82"));
}

TEST(IsValidRune, RejectsSurrogatesAndValuesAboveMaxRune) {
  EXPECT_TRUE(isValidRune(0));
  EXPECT_TRUE(isValidRune(0xD7FF));
  EXPECT_FALSE(isValidRune(0xD800));
  EXPECT_FALSE(isValidRune(0xDFFF));
  EXPECT_TRUE(isValidRune(0xE000));
  EXPECT_TRUE(isValidRune(kMaxRune));
  EXPECT_FALSE(isValidRune(kMaxRune + 1));
}

TEST(ReplaceInvalidUtf8, ReplacesEachInvalidByte) {
  EXPECT_EQ(replaceInvalidUtf8("a\xFF\xFE" "b"), "a\xEF\xBF\xBD\xEF\xBF\xBD" "b");
  EXPECT_EQ(replaceInvalidUtf8("\xED\xA0\x80"), "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
}

TEST(ReplaceInvalidUtf8, KeepsValidText) {
  EXPECT_EQ(replaceInvalidUtf8("h\xC3\xA9\xEF\xBF\xBD"), "h\xC3\xA9\xEF\xBF\xBD");
}

TEST(EncodeUtf8, EncodesEachLength) {
  EXPECT_EQ(encodeUtf8('A'), "A");
  EXPECT_EQ(encodeUtf8(0xE9), "\xC3\xA9");
  EXPECT_EQ(encodeUtf8(0x20AC), "\xE2\x82\xAC");
  EXPECT_EQ(encodeUtf8(0x1F600), "\xF0\x9F\x98\x80");
}

TEST(EncodeUtf8, WritesReplacementForInvalidRunes) {
  EXPECT_EQ(encodeUtf8(0xD800), "\xEF\xBF\xBD");
  EXPECT_EQ(encodeUtf8(0x110000), "\xEF\xBF\xBD");
}

TEST(AppendUtf8, AppendsToExistingText) {
  std::string out = "x";
  appendUtf8(out, 0xE9);
  EXPECT_EQ(out, "x\xC3\xA9");
}

TEST(AppendUtf8Unchecked, WritesSurrogatesAsTheyAre) {
  std::string out;
  appendUtf8Unchecked(out, 0xD800);
  EXPECT_EQ(out, "\xED\xA0\x80");
}

TEST(AppendUtf8Unchecked, RoundTripsWhatLeadBitsDecodes) {
  for (const std::string s : {"\xF7\xBF\xBF\xBF", "\xED\xBF\xBF", "\xC3\xA9"}) {
    const Rune r = decodeUtf8(s, 0, Utf8Check::kLeadBits);
    std::string out;
    appendUtf8Unchecked(out, r.code_point);
    EXPECT_EQ(out, s);
  }
}

}  // namespace
}  // namespace harness::core
