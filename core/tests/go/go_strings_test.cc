#include "harness/go/strings.h"

#include <gtest/gtest.h>

// strings.TrimSpace, unicode.IsSpace.

namespace harness::go {
namespace {

TEST(GoTrimSpaceTest, TrimsUnicodeWhiteSpaceOnly) {
  EXPECT_EQ(trimSpace(" \t\n\v\f\r x y \r\n"), "x y");
  EXPECT_EQ(trimSpace("\xc2\xa0x\xe2\x80\x83"), "x");  // NBSP, EM SPACE
  EXPECT_EQ(trimSpace("\xff x \xff"), "\xff x \xff");  // invalid UTF-8 is not space
  EXPECT_EQ(trimSpace("   "), "");
}

TEST(GoIsSpace, FollowsUnicodeIsSpace) {
  for (char32_t r : {U'\t', U'\n', U'\v', U'\f', U'\r', U' ', U'\u0085', U'\u00a0', U'\u2000',
                     U'\u200a', U'\u3000'}) {
    EXPECT_TRUE(isSpace(r)) << static_cast<std::uint32_t>(r);
  }
  for (char32_t r : {U'x', U'\u200b', U'\ufeff', U'\u0000'}) {
    EXPECT_FALSE(isSpace(r)) << static_cast<std::uint32_t>(r);
  }
}

}  // namespace
}  // namespace harness::go
