
#include <string>

#include <gtest/gtest.h>

#include "harness/go/base64.h"

namespace harness::go {
namespace {

std::string decodeOk(std::string_view text) {
  auto r = go::base64Decode(text);
  EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().message);
  return r.ok() ? *r : std::string();
}

std::string decodeError(std::string_view text) {
  auto r = go::base64Decode(text);
  EXPECT_FALSE(r.ok()) << "decoded " << text;
  return r.ok() ? std::string() : r.error().message;
}

TEST(Base64Test, EncodesRfc4648Vectors) {
  EXPECT_EQ(go::base64Encode(""), "");
  EXPECT_EQ(go::base64Encode("f"), "Zg==");
  EXPECT_EQ(go::base64Encode("fo"), "Zm8=");
  EXPECT_EQ(go::base64Encode("foo"), "Zm9v");
  EXPECT_EQ(go::base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(go::base64Encode("fooba"), "Zm9vYmE=");
  EXPECT_EQ(go::base64Encode("foobar"), "Zm9vYmFy");
}

TEST(Base64Test, DecodesRfc4648Vectors) {
  EXPECT_EQ(decodeOk(""), "");
  EXPECT_EQ(decodeOk("Zg=="), "f");
  EXPECT_EQ(decodeOk("Zm8="), "fo");
  EXPECT_EQ(decodeOk("Zm9v"), "foo");
  EXPECT_EQ(decodeOk("Zm9vYg=="), "foob");
  EXPECT_EQ(decodeOk("Zm9vYmE="), "fooba");
  EXPECT_EQ(decodeOk("Zm9vYmFy"), "foobar");
}

TEST(Base64Test, UsesTheStandardAlphabetWithPlusAndSlash) {
  EXPECT_EQ(go::base64Encode(std::string("\xfb\xff\xbf", 3)), "+/+/");
  EXPECT_EQ(decodeOk("+/+/"), std::string("\xfb\xff\xbf", 3));
}

TEST(Base64Test, RoundTripsEveryLengthAndByteValue) {
  std::string bytes;
  for (int n = 0; n < 300; ++n) {
    ASSERT_EQ(decodeOk(go::base64Encode(bytes)), bytes) << "length " << n;
    bytes.push_back(static_cast<char>((n * 37 + 11) % 256));
  }
}

TEST(Base64Test, IgnoresCarriageReturnsAndNewlines) {
  EXPECT_EQ(decodeOk("Zm9v\r\nYmFy\n"), "foobar");
  EXPECT_EQ(decodeOk("Z\ng=\r="), "f");
  EXPECT_EQ(decodeOk("\n\n"), "");
}

TEST(Base64Test, AcceptsNonZeroTrailingBitsLikeGoNonStrictEncoding) {
  EXPECT_EQ(decodeOk("Zh=="), "f");
}

TEST(Base64Test, RejectsMissingPaddingAtTheQuantumStart) {
  EXPECT_EQ(decodeError("Zm9vYg"), "illegal base64 data at input byte 4");
  EXPECT_EQ(decodeError("Zm9"), "illegal base64 data at input byte 0");
  EXPECT_EQ(decodeError("Z"), "illegal base64 data at input byte 0");
}

TEST(Base64Test, RejectsCharactersOutsideTheAlphabet) {
  EXPECT_EQ(decodeError("Zm9v!mFy"), "illegal base64 data at input byte 4");
  EXPECT_EQ(decodeError("Zm9v YmFy"), "illegal base64 data at input byte 4");
  EXPECT_EQ(decodeError("Zm9v-_"), "illegal base64 data at input byte 4");  // URL alphabet
}

TEST(Base64Test, RejectsPaddingInTheWrongPlace) {
  EXPECT_EQ(decodeError("="), "illegal base64 data at input byte 0");
  EXPECT_EQ(decodeError("Z==="), "illegal base64 data at input byte 1");
  EXPECT_EQ(decodeError("Zg=a"), "illegal base64 data at input byte 2");
}

TEST(Base64Test, RejectsIncompletePadding) {
  EXPECT_EQ(decodeError("Zg="), "illegal base64 data at input byte 3");
}

TEST(Base64Test, RejectsDataAfterPadding) {
  EXPECT_EQ(decodeError("Zg==Zg=="), "illegal base64 data at input byte 4");
  EXPECT_EQ(decodeError("Zm8=\nx"), "illegal base64 data at input byte 5");
}

}  // namespace
}  // namespace harness::go
