// Lexing and parsing: Go's syntax (golang/go src/text/template/parse/lex.go, parse.go) and its
// parse error texts ("template: <name>:<line>: <message>").

#include <gtest/gtest.h>

#include "render.h"

namespace harness::gotemplate {
namespace {

using testing::render;

TEST(Parse, TextWithoutActionsIsCopiedVerbatim) {
  EXPECT_EQ(render("plain {text} } {\n"), "plain {text} } {\n");
}

TEST(Parse, CommentIsDropped) { EXPECT_EQ(render("a{{/* a comment */}}b"), "ab"); }

TEST(Parse, LeftTrimMarkerRemovesPrecedingWhitespace) {
  EXPECT_EQ(render("a \n\t {{- \"x\" }} b"), "ax b");
}

TEST(Parse, RightTrimMarkerRemovesFollowingWhitespace) {
  EXPECT_EQ(render("a {{ \"x\" -}} \n\n b"), "a xb");
}

TEST(Parse, TrimMarkerNeedsASpaceSoMinusThreeIsANumber) { EXPECT_EQ(render("{{-3}}"), "-3"); }

TEST(Parse, TrimMarkersAroundACommentTrimBothSides) {
  EXPECT_EQ(render("a  {{- /* c */ -}}  b"), "ab");
}

TEST(Parse, ActionMaySpanSeveralLines) {
  EXPECT_EQ(render("{{ print\n  1\n  2 }}", nullptr, FuncMap{}), "1 2");
}

TEST(Parse, RawStringKeepsBackslashesAndDropsCarriageReturns) {
  EXPECT_EQ(render("{{ `a\\n\r\nb` }}"), "a\\n\nb");
}

TEST(Parse, QuotedStringUnderstandsGoEscapes) {
  EXPECT_EQ(render(R"({{ "t\tq\"\x41\u00e9\101" }})"), "t\tq\"A\xC3\xA9" "A");
}

TEST(Parse, CharConstantIsANumber) { EXPECT_EQ(render("{{ 'a' }}"), "97"); }

TEST(Parse, NumberLiteralsInAllBases) {
  EXPECT_EQ(render("{{ 0x1F }} {{ 0o17 }} {{ 0b101 }} {{ 1_000 }} {{ 1e3 }} {{ 2.50 }}"),
            "31 15 5 1000 1000 2.5");
}

TEST(Parse, UnclosedActionIsAnError) {
  EXPECT_EQ(render("{{ .a"), "ERR: template: t:1: unclosed action");
}

TEST(Parse, UnclosedActionOnALaterLineNamesWhereTheActionStarted) {
  EXPECT_EQ(render("{{ .a\n\n"), "ERR: template: t:3: unclosed action started at t:1");
}

TEST(Parse, MissingEndIsUnexpectedEof) {
  EXPECT_EQ(render("{{if .a}}x"), "ERR: template: t:1: unexpected EOF");
}

TEST(Parse, StrayEndIsAnError) {
  EXPECT_EQ(render("x{{end}}"), "ERR: template: t:1: unexpected {{end}}");
}

TEST(Parse, StrayElseIsAnError) {
  EXPECT_EQ(render("{{else}}"), "ERR: template: t:1: unexpected {{else}}");
}

TEST(Parse, UnknownFunctionIsAnError) {
  EXPECT_EQ(render("{{ nope 1 }}"), "ERR: template: t:1: function \"nope\" not defined");
}

TEST(Parse, ErrorNamesTheLineOfTheOffendingToken) {
  EXPECT_EQ(render("a\nb\n\n{{ nope }}"), "ERR: template: t:4: function \"nope\" not defined");
}

TEST(Parse, ErrorNamesTheTemplate) {
  EXPECT_EQ(render("{{ nope }}", nullptr, istioFuncMap(), {}, "inject"),
            "ERR: template: inject:1: function \"nope\" not defined");
}

TEST(Parse, UndefinedVariableIsAnError) {
  EXPECT_EQ(render("{{ $x }}"), "ERR: template: t:1: undefined variable \"$x\"");
}

TEST(Parse, UnclosedCommentIsAnError) {
  EXPECT_EQ(render("{{/* x"), "ERR: template: t:1: unclosed comment");
}

TEST(Parse, CommentMustEndAtTheDelimiter) {
  EXPECT_EQ(render("{{/* x */ 1}}"), "ERR: template: t:1: comment ends before closing delimiter");
}

TEST(Parse, BadNumberSyntaxIsAnError) {
  EXPECT_EQ(render("{{ 3k }}"), "ERR: template: t:1: bad number syntax: \"3k\"");
}

TEST(Parse, UnterminatedStringIsAnError) {
  EXPECT_EQ(render("{{ \"abc }}"), "ERR: template: t:1: unterminated quoted string");
}

TEST(Parse, UnexpectedRightParenIsAnError) {
  EXPECT_EQ(render("{{ .a ) }}"), "ERR: template: t:1: unexpected right paren");
}

TEST(Parse, UnclosedLeftParenIsAnError) {
  EXPECT_EQ(render("{{ (.a }}"), "ERR: template: t:1: unclosed left paren");
}

TEST(Parse, EmptyPipelineInIfIsAnError) {
  EXPECT_EQ(render("{{ if }}x{{ end }}"), "ERR: template: t:1: missing value for if");
}

TEST(Parse, LiteralLaterInPipelineIsNotExecutable) {
  EXPECT_EQ(render("{{ \"a\" | \"b\" }}"),
            "ERR: template: t:1: non executable command in pipeline stage 2");
}

TEST(Parse, FieldOnALiteralIsAnError) {
  EXPECT_EQ(render("{{ \"a\".b }}"), "ERR: template: t:1: unexpected . after term \"\\\"a\\\"\"");
}

TEST(Parse, BreakOutsideRangeIsAnError) {
  EXPECT_EQ(render("{{ break }}"), "ERR: template: t:1: {{break}} outside {{range}}");
}

TEST(Parse, ContinueOutsideRangeIsAnError) {
  EXPECT_EQ(render("{{if true}}{{ continue }}{{end}}"),
            "ERR: template: t:1: {{continue}} outside {{range}}");
}

TEST(Parse, TwoVariablesOutsideRangeAreTooManyDeclarations) {
  EXPECT_EQ(render("{{ $a, $b := 1 }}"), "ERR: template: t:1: too many declarations in command");
}

TEST(Parse, DoubleDefinitionInOneParseIsAnError) {
  EXPECT_EQ(render("{{define \"a\"}}x{{end}}{{define \"a\"}}y{{end}}"),
            "ERR: template: t:1: template: multiple definition of template \"a\"");
}

TEST(Parse, VariableDeclaredInIfIsNotVisibleAfterEnd) {
  EXPECT_EQ(render("{{if true}}{{$x := 1}}{{end}}{{$x}}"),
            "ERR: template: t:1: undefined variable \"$x\"");
}

TEST(Parse, VariableOfTheEnclosingTemplateIsNotVisibleInADefine) {
  EXPECT_EQ(render("{{$x := 1}}{{define \"d\"}}{{$x}}{{end}}"),
            "ERR: template: t:1: undefined variable \"$x\"");
}

TEST(Parse, DefineAndBlockAddNamedTemplatesToTheSet) {
  auto set = parse("main", "{{define \"a\"}}A{{end}}{{block \"b\" .}}B{{end}}", istioFuncMap());
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(set->names(), (std::vector<std::string>{"a", "b", "main"}));
}

TEST(Parse, LaterParseReplacesADefinition) {
  TemplateSet set(istioFuncMap());
  ASSERT_TRUE(set.parse("main", "{{block \"b\" .}}default{{end}}").ok());
  ASSERT_TRUE(set.parse("overlay", "{{define \"b\"}}custom{{end}}").ok());
  EXPECT_EQ(*execute(set, "main", nullptr), "custom");
}

TEST(Parse, EmptyLaterDefinitionDoesNotReplace) {
  TemplateSet set(istioFuncMap());
  ASSERT_TRUE(set.parse("main", "{{define \"b\"}}kept{{end}}{{template \"b\"}}").ok());
  ASSERT_TRUE(set.parse("overlay", "{{define \"b\"}}  {{end}}").ok());
  EXPECT_EQ(*execute(set, "main", nullptr), "kept");
}

TEST(Parse, FailedParseLeavesTheSetUnchanged) {
  TemplateSet set(istioFuncMap());
  ASSERT_TRUE(set.parse("main", "ok").ok());
  EXPECT_FALSE(set.parse("main", "{{ broken").ok());
  EXPECT_EQ(*execute(set, "main", nullptr), "ok");
}

TEST(Parse, BreakIsAnIdentifierWhenAFunctionHasThatName) {
  FuncMap funcs;
  funcs["break"] = Function{{}, false, [](std::vector<Value>&) -> Result<Value> {
                              return Value(std::string("fn"));
                            }};
  EXPECT_EQ(render("{{ break }}", nullptr, funcs), "fn");
}

}  // namespace
}  // namespace harness::gotemplate
