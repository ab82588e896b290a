// Go's fmt as printf/print use it (golang/go src/fmt/print.go, format.go).

#include <gtest/gtest.h>

#include "harness/gotemplate/go_fmt.h"
#include "render.h"

namespace harness::gotemplate {
namespace {

using nlohmann::json;

std::string printf(std::string_view format, std::vector<json> args) {
  std::vector<Value> values;
  for (auto& a : args) values.emplace_back(std::move(a));
  return goSprintf(format, values);
}

TEST(Fmt, StringAndIntegerVerbs) {
  EXPECT_EQ(printf("%s|%v|%d|%q", {"a", "b", 42, "c"}), "a|b|42|\"c\"");
}

TEST(Fmt, WidthsFlagsAndPrecision) {
  EXPECT_EQ(printf("%05d|%-4s|%4s|%+d|%.1s|%x", {42, "ab", "ab", 7, "xyz", 255}),
            "00042|ab  |  ab|+7|x|ff");
}

TEST(Fmt, IntegerBases) {
  EXPECT_EQ(printf("%x %X %o %b %#x %#o %c %U %q", {255, 255, 8, 5, 255, 8, 65, 65, 65}),
            "ff FF 10 101 0xff 010 A U+0041 'A'");
}

TEST(Fmt, FloatVerbs) {
  EXPECT_EQ(printf("%8.3f|%e|%g|%.2f|%v", {3.14159, 1234.5678, 0.000012345, 2.0, 2.0}),
            "   3.142|1.234568e+03|1.2345e-05|2.00|2");
}

TEST(Fmt, FloatDefaultFormIsShortestWithExponentFromAMillion) {
  EXPECT_EQ(printf("%v %v %v %v", {1000000.0, 100000.0, 0.00001, 1.5}), "1e+06 100000 1e-05 1.5");
}

TEST(Fmt, BoolAndNil) { EXPECT_EQ(printf("%5t|%v|%d", {true, nullptr, nullptr}), " true|<nil>|%!d(<nil>)"); }

TEST(Fmt, QuotedStringEscapes) {
  EXPECT_EQ(printf("%q", {"a\"b\n\t\\"}), R"("a\"b\n\t\\")");
}

TEST(Fmt, HexOfAString) { EXPECT_EQ(printf("%x|% x|%X", {"hi", "hi", "hi"}), "6869|68 69|6869"); }

TEST(Fmt, StarWidthTakesAnArgument) { EXPECT_EQ(printf("[%*d]", {5, 1}), "[    1]"); }

TEST(Fmt, PercentLiteral) { EXPECT_EQ(printf("100%%", {}), "100%"); }

TEST(Fmt, WrongVerbForTheType) {
  EXPECT_EQ(printf("%d|%s|%t", {"x", 3, 1.5}), "%!d(string=x)|%!s(int=3)|%!t(float64=1.5)");
}

TEST(Fmt, MissingArgument) { EXPECT_EQ(printf("%s %s", {"a"}), "a %!s(MISSING)"); }

TEST(Fmt, ExtraArguments) {
  EXPECT_EQ(printf("%s", {"a", 3, nullptr}), "a%!(EXTRA int=3, <nil>)");
}

TEST(Fmt, FormatEndingInPercentHasNoVerb) { EXPECT_EQ(printf("a%", {}), "a%!(NOVERB)"); }

TEST(Fmt, ExplicitArgumentIndexes) { EXPECT_EQ(printf("%[2]s %[1]s", {"a", "b"}), "b a"); }

TEST(Fmt, HugeWidthSwallowsTheRestOfTheFormat) {
  // parsenum gives up on a width beyond 1e6 and consumes the format; the operand is extra.
  EXPECT_EQ(printf("%99999999d", {1}), "%!(NOVERB)%!(EXTRA int=1)");
}

TEST(Fmt, MapsPrintSortedWithElementVerbs) {
  EXPECT_EQ(printf("%v", {json{{"b", json::array({1, nullptr})}, {"a", {{"c", "d"}}}}}),
            "map[a:map[c:d] b:[1 <nil>]]");
  EXPECT_EQ(printf("%s", {json{{"a", 1}}}), "map[a:%!s(int=1)]");
}

TEST(Fmt, GoSyntaxForm) {
  EXPECT_EQ(printf("%#v|%#v", {json{{"a", 1}}, "s"}), "map[string]interface {}{\"a\":1}|\"s\"");
}

TEST(Fmt, TypeVerb) {
  EXPECT_EQ(printf("%T %T %T %T %T", {1, 1.5, "s", json::array(), nullptr}),
            "int float64 string []interface {} <nil>");
}

TEST(Fmt, SprintSpacing) {
  EXPECT_EQ(goSprint({Value(json(1)), Value(json(2)), Value(json("a")), Value(json(3))}),
            "1 2a3");
}

TEST(Fmt, PrintfInATemplate) {
  EXPECT_EQ(testing::render("{{ printf \"istio.%s:%d\" .name .port }}",
                            json{{"name", "default"}, {"port", 15012}}),
            "istio.default:15012");
}

}  // namespace
}  // namespace harness::gotemplate
