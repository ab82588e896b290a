#include "harness/go/regexp.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

// regexp: Compile errors, MatchString, FindString, FindStringSubmatch, FindAllString,
// ReplaceAllString (Expand templates), ReplaceAllLiteralString, Split. The expected values are
// what Go 1.26's regexp returns for the same calls.

namespace harness::go {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

Regexp must(std::string_view expr) {
  auto re = Regexp::compile(expr);
  EXPECT_TRUE(re.ok()) << expr << ": " << (re.ok() ? "" : re.error().message);
  return std::move(re).value();
}

TEST(GoRegexpCompile, ErrorsReadAsGos) {
  EXPECT_EQ(Regexp::compile("(a").error().message,
            "error parsing regexp: missing closing ): `(a`");
  EXPECT_EQ(Regexp::compile("a)").error().message, "error parsing regexp: unexpected ): `a)`");
  EXPECT_EQ(Regexp::compile("[a").error().message,
            "error parsing regexp: missing closing ]: `[a`");
  EXPECT_EQ(Regexp::compile("*a").error().message,
            "error parsing regexp: missing argument to repetition operator: `*`");
  EXPECT_EQ(Regexp::compile("a**").error().message,
            "error parsing regexp: invalid nested repetition operator: `**`");
  EXPECT_EQ(Regexp::compile("a{1001}").error().message,
            "error parsing regexp: invalid repeat count: `{1001}`");
  EXPECT_EQ(Regexp::compile("\\8").error().message,
            "error parsing regexp: invalid escape sequence: `\\8`");
  // Perl's lookaround and backreferences are not Go syntax (std::regex accepted them).
  EXPECT_EQ(Regexp::compile("a(?=b)").error().message,
            "error parsing regexp: invalid or unsupported Perl syntax: `(?=`");
  EXPECT_FALSE(Regexp::compile("(a)\\1").ok());
}

TEST(GoRegexpSyntax, AcceptsGoOnlyConstructs) {
  // Named groups, Unicode classes and flags: Go syntax std::regex (ECMAScript) rejected.
  EXPECT_THAT(must("(?P<year>\\d{4})-(?P<month>\\d{2})").findStringSubmatch("on 2026-11-26"),
              ElementsAre("2026-11", "2026", "11"));
  EXPECT_EQ(must("\\pL+").findString("42 Größe!"), "Größe");
  EXPECT_EQ(must("\\p{Greek}+").findString("alpha αβγ"), "αβγ");
  EXPECT_TRUE(must("(?i)istio").matchString("ISTIO-proxy"));
  EXPECT_TRUE(must("(?s)a.b").matchString("a\nb"));
  EXPECT_FALSE(must("a.b").matchString("a\nb"));
  EXPECT_TRUE(must("\\Qa.b\\E").matchString("xa.by"));
  EXPECT_FALSE(must("\\Qa.b\\E").matchString("axb"));
  EXPECT_TRUE(must("[[:alpha:]]+").matchString("abc"));
}

TEST(GoRegexpLinearTime, PathologicalPatternsFinishOnLargeInputs) {
  // Nested quantifiers that make a backtracking engine (std::regex) take exponential time or
  // overflow its stack; RE2 is linear in the input, which is why no input cap is needed.
  const std::string as(1 << 20, 'a');
  EXPECT_FALSE(must("(a*)*b").matchString(as));
  EXPECT_FALSE(must("(a|aa)+$x").matchString(as));
  EXPECT_FALSE(must("^(a+)+$").matchString(as + "!"));
  EXPECT_EQ(must("(x+x+)+y").replaceAllString(std::string(100000, 'x'), "z"),
            std::string(100000, 'x'));
  EXPECT_EQ(must("a").findAllString(as, -1).size(), as.size());
}

TEST(GoRegexpFindAll, SkipsAnEmptyMatchAfterAMatch) {
  EXPECT_THAT(must("a*").findAllString("baaab", -1), ElementsAre("", "aaa", ""));
  EXPECT_THAT(must("a*").findAllString("", -1), ElementsAre(""));
  EXPECT_THAT(must("a.").findAllString("a1a2a3", 2), ElementsAre("a1", "a2"));
  EXPECT_THAT(must("x").findAllString("abc", -1), IsEmpty());
  EXPECT_THAT(must("").findAllString("ñb", -1), ElementsAre("", "", ""));  // steps by rune
}

TEST(GoRegexpReplaceAll, ExpandsTemplatesAsGoDoes) {
  const Regexp re = must("(?P<key>\\w+)=(\\w+)");
  EXPECT_EQ(re.replaceAllString("a=1 b=2", "$2:$1"), "1:a 2:b");
  EXPECT_EQ(re.replaceAllString("a=1", "${key}!"), "a!");
  EXPECT_EQ(re.replaceAllString("a=1", "$key!"), "a!");
  EXPECT_EQ(re.replaceAllString("a=1", "$1x"), "");         // $1x names group "1x": empty
  EXPECT_EQ(re.replaceAllString("a=1", "${1}x"), "ax");
  EXPECT_EQ(re.replaceAllString("a=1", "$$1"), "$1");
  EXPECT_EQ(re.replaceAllString("a=1", "$9|$nosuch|$"), "||$");
  EXPECT_EQ(re.replaceAllString("a=1", "${1"), "${1");        // malformed: the $ is text
  EXPECT_EQ(re.replaceAllString("a=1", "$01"), "");           // leading zero: a name
  EXPECT_EQ(re.replaceAllLiteralString("a=1", "$1"), "$1");
  // No replacement for an empty match right after a match.
  EXPECT_EQ(must("a*").replaceAllString("baaac", "-"), "-b-c-");
  EXPECT_EQ(must("").replaceAllString("ab", "-"), "-a-b-");
}

TEST(GoRegexpSplit, SplitsAsGoDoes) {
  EXPECT_THAT(must(",").split("a,b,c", -1), ElementsAre("a", "b", "c"));
  EXPECT_THAT(must(",").split("a,b,c", 2), ElementsAre("a", "b,c"));
  EXPECT_THAT(must(",").split("a,b,c", 0), IsEmpty());
  EXPECT_THAT(must(",").split("", -1), ElementsAre(""));
  EXPECT_THAT(must("a*").split("abaabaccadaaae", 5), ElementsAre("", "b", "b", "c", "cadaaae"));
  EXPECT_THAT(must("").split("abc", -1), ElementsAre("a", "b", "c"));
  EXPECT_THAT(must("x*").split("xxaxx", -1), ElementsAre("", "a", ""));
}

}  // namespace
}  // namespace harness::go
