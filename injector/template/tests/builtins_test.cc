// Go's builtin template functions (golang/go src/text/template/funcs.go) and the argument
// checks of exec.go (arity, types). Rendered with no user functions, so "slice" is Go's.

#include <gtest/gtest.h>

#include "render.h"

namespace harness::gotemplate {
namespace {

using nlohmann::json;

std::string run(std::string_view text, const json& data = nullptr) {
  return testing::render(text, data, FuncMap{});
}

const json kData = {
    {"s", "x"},
    {"a", 1},
    {"l", {1, 2, 3}},
    {"m", {{"k", "v"}}},
    {"nested", {{"a", {10, 20}}}},
};

TEST(Builtins, AndReturnsTheFirstFalsyArgumentOrTheLast) {
  EXPECT_EQ(run("{{ and 1 0 \"x\" }}|{{ and 1 \"x\" }}"), "0|x");
}

TEST(Builtins, OrReturnsTheFirstTruthyArgumentOrTheLast) {
  EXPECT_EQ(run("{{ or 0 \"\" \"y\" }}|{{ or 0 \"\" }}|"), "y||");
}

TEST(Builtins, AndShortCircuits) {
  EXPECT_EQ(run("{{ and false (index .l 99) }}", kData), "false");
}

TEST(Builtins, OrShortCircuits) { EXPECT_EQ(run("{{ or 1 (index .l 99) }}", kData), "1"); }

TEST(Builtins, AndTakesThePipelineValueLast) { EXPECT_EQ(run("{{ \"z\" | and 1 }}"), "z"); }

TEST(Builtins, NotNegatesTruth) { EXPECT_EQ(run("{{ not 0 }} {{ not \"a\" }}"), "true false"); }

TEST(Builtins, LenOfStringsMapsAndSlices) {
  EXPECT_EQ(run("{{ len .s }} {{ len .m }} {{ len .l }}", kData), "1 1 3");
}

TEST(Builtins, LenOfAnIntIsAnError) {
  EXPECT_EQ(run("{{ len .a }}", kData),
            "ERR: template: t:1:3: executing \"t\" at <len .a>: error calling len: len of type int");
}

TEST(Builtins, LenOfAMissingValueIsGosReflectError) {
  EXPECT_EQ(run("{{ len .nope }}", kData),
            "ERR: template: t:1:3: executing \"t\" at <len .nope>: error calling len: reflect: "
            "call of reflect.Value.Type on zero Value");
}

TEST(Builtins, IndexIntoMapsAndNestedSlices) {
  EXPECT_EQ(run("{{ index .m \"k\" }} {{ index .nested \"a\" 1 }}", kData), "v 20");
}

TEST(Builtins, IndexOfAMissingMapKeyIsNoValue) {
  EXPECT_EQ(run("{{ index .m \"zz\" }}", kData), "<no value>");
}

TEST(Builtins, IndexOutOfRangeIsAnError) {
  EXPECT_EQ(run("{{ index .l 3 }}", kData),
            "ERR: template: t:1:3: executing \"t\" at <index .l 3>: error calling index: reflect: "
            "slice index out of range");
  EXPECT_EQ(run("{{ index .l 9 }}", kData),
            "ERR: template: t:1:3: executing \"t\" at <index .l 9>: error calling index: index out "
            "of range: 9");
}

TEST(Builtins, IndexOfNilIsAnError) {
  EXPECT_EQ(run("{{ index nil 1 }}"),
            "ERR: template: t:1:3: executing \"t\" at <index nil 1>: error calling index: index of "
            "untyped nil");
}

TEST(Builtins, IndexWithAWrongKeyType) {
  EXPECT_EQ(run("{{ index .m 1 }}", kData),
            "ERR: template: t:1:3: executing \"t\" at <index .m 1>: error calling index: value has "
            "type int; should be string");
}

TEST(Builtins, SliceOfStringsAndLists) {
  EXPECT_EQ(run("{{ slice \"abcdef\" 1 3 }} {{ slice .l 1 }} {{ slice .l }}", kData),
            "bc [2 3] [1 2 3]");
}

TEST(Builtins, SliceWithInvertedIndexesIsAnError) {
  EXPECT_EQ(run("{{ slice .l 2 1 }}", kData),
            "ERR: template: t:1:3: executing \"t\" at <slice .l 2 1>: error calling slice: invalid "
            "slice index: 2 > 1");
}

TEST(Builtins, PrintSpacesOnlyBetweenNonStrings) {
  EXPECT_EQ(run("{{ print 1 2 \"a\" \"b\" 3 }}"), "1 2ab3");
}

TEST(Builtins, PrintlnSpacesEverythingAndEndsTheLine) {
  EXPECT_EQ(run("{{ println 1 \"a\" }}"), "1 a\n");
}

TEST(Builtins, PrintOfAMissingValueIsNil) { EXPECT_EQ(run("{{ print .nope }}", kData), "<nil>"); }

TEST(Builtins, HtmlEscapes) {
  EXPECT_EQ(run(R"({{ html "<a href='x'>&\"" }})"), "&lt;a href=&#39;x&#39;&gt;&amp;&#34;");
}

TEST(Builtins, JsEscapes) {
  EXPECT_EQ(run(R"({{ js "a'b\"<c>=&" }})"), R"(a\'b\"\u003Cc\u003E\u003D\u0026)");
}

TEST(Builtins, UrlqueryEscapes) {
  EXPECT_EQ(run("{{ urlquery \"a b&c=d/\xC3\xA9\" }}"), "a+b%26c%3Dd%2F%C3%A9");
}

TEST(Builtins, HtmlOfAMissingValueIsNoValue) {
  EXPECT_EQ(run("{{ html .nope }}", kData), "&lt;no value&gt;");
}

TEST(Builtins, EqWithSeveralArgumentsIsAnyMatch) {
  EXPECT_EQ(run("{{ eq 3 1 2 3 }} {{ eq 4 1 2 3 }}"), "true false");
}

TEST(Builtins, EqComparesStringsBoolsAndFloats) {
  EXPECT_EQ(run("{{ eq \"a\" \"a\" }} {{ eq true false }} {{ eq 1.5 1.5 }}"), "true false true");
}

TEST(Builtins, EqOfIntAndFloatIsAnError) {
  EXPECT_EQ(run("{{ eq 1 1.0 }}"),
            "ERR: template: t:1:3: executing \"t\" at <eq 1 1.0>: error calling eq: incompatible "
            "types for comparison: int and float64");
}

TEST(Builtins, EqOfAMissingValueIsFalseNotAnError) {
  EXPECT_EQ(run("{{ eq .nope \"x\" }} {{ eq .nope .gone }}", kData), "false true");
}

TEST(Builtins, EqOfMapsIsAnError) {
  EXPECT_EQ(run("{{ eq .m .m }}", kData),
            "ERR: template: t:1:3: executing \"t\" at <eq .m .m>: error calling eq: non-comparable "
            "type map[k:v]: map[string]interface {}");
}

TEST(Builtins, OrderingComparisons) {
  EXPECT_EQ(run("{{ lt 1 2 }} {{ le 2 2 }} {{ gt \"b\" \"a\" }} {{ ge 1.5 2.5 }} {{ ne 1 2 }}"),
            "true true true false true");
}

TEST(Builtins, LessThanOnBoolsIsAnError) {
  EXPECT_EQ(run("{{ lt true false }}"),
            "ERR: template: t:1:3: executing \"t\" at <lt true false>: error calling lt: invalid "
            "type for comparison");
}

TEST(Builtins, LessThanOfIntAndStringIsAnError) {
  EXPECT_EQ(run("{{ lt 1 \"a\" }}"),
            "ERR: template: t:1:3: executing \"t\" at <lt 1 \"a\">: error calling lt: incompatible "
            "types for comparison: int and string");
}

TEST(Builtins, CallOfDataIsAnError) {
  EXPECT_EQ(run("{{ call .s }}", kData),
            "ERR: template: t:1:3: executing \"t\" at <call .s>: error calling call: non-function "
            ".s of type string");
}

TEST(Builtins, TooFewArgumentsForAVariadicBuiltin) {
  EXPECT_EQ(run("{{ index }}"),
            "ERR: template: t:1:3: executing \"t\" at <index>: wrong number of args for index: "
            "want at least 1 got 0");
}

TEST(Builtins, WrongArgumentCount) {
  EXPECT_EQ(run("{{ ne 1 }}"),
            "ERR: template: t:1:3: executing \"t\" at <ne>: wrong number of args for ne: want 2 got "
            "1");
}

TEST(Builtins, PrintfFormatMustBeAString) {
  EXPECT_EQ(run("{{ printf 3 }}"),
            "ERR: template: t:1:10: executing \"t\" at <3>: expected string; found 3");
}

TEST(Builtins, PrintfFormatFromDataMustHaveStringType) {
  EXPECT_EQ(run("{{ printf .a }}", kData),
            "ERR: template: t:1:10: executing \"t\" at <.a>: wrong type for value; expected "
            "string; got int");
}

TEST(Builtins, PrintfFormatThatIsMissingIsAnInvalidValue) {
  EXPECT_EQ(run("{{ printf .nope }}", kData),
            "ERR: template: t:1:10: executing \"t\" at <.nope>: invalid value; expected string");
}

}  // namespace
}  // namespace harness::gotemplate
