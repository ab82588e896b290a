#include "harness/core/yaml.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace harness::core {
namespace {

using nlohmann::json;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The value of `key` in a one-line YAML mapping "key: <scalar>".
json valueOf(const std::string& scalar) {
  auto parsed = parseYaml("key: " + scalar + "\n");
  EXPECT_TRUE(parsed.ok()) << scalar << ": " << (parsed.ok() ? "" : parsed.error().message);
  if (!parsed.ok()) return json("<error>");
  return (*parsed)["key"];
}

std::string errorOf(std::string_view text) {
  auto parsed = parseYamlDocuments(text);
  EXPECT_FALSE(parsed.ok()) << text;
  return parsed.ok() ? std::string() : parsed.error().message;
}

// ---------------------------------------------------------------------------------------------
// Plain scalars: YAML 1.1 as go-yaml v2 resolves them

TEST(YamlScalarTest, UnquotedYesOnYAndTrueVariantsAreTrue) {
  for (const char* s : {"y", "Y", "yes", "Yes", "YES", "on", "On", "ON", "true", "True", "TRUE"}) {
    EXPECT_EQ(valueOf(s), json(true)) << s;
  }
}

TEST(YamlScalarTest, UnquotedNoOffNAndFalseVariantsAreFalse) {
  for (const char* s : {"n", "N", "no", "No", "NO", "off", "Off", "OFF", "false", "False"}) {
    EXPECT_EQ(valueOf(s), json(false)) << s;
  }
}

TEST(YamlScalarTest, QuotedBooleanWordsStayStrings) {
  EXPECT_EQ(valueOf("\"yes\""), json("yes"));
  EXPECT_EQ(valueOf("'no'"), json("no"));
  EXPECT_EQ(valueOf("\"on\""), json("on"));
  EXPECT_EQ(valueOf("'y'"), json("y"));
}

TEST(YamlScalarTest, MixedCaseBooleanWordsAreStrings) {
  EXPECT_EQ(valueOf("yEs"), json("yEs"));
  EXPECT_EQ(valueOf("oN"), json("oN"));
  EXPECT_EQ(valueOf("tRUE"), json("tRUE"));
}

TEST(YamlScalarTest, NullSpellingsAndEmptyValueAreNull) {
  for (const char* s : {"~", "null", "Null", "NULL", ""}) EXPECT_TRUE(valueOf(s).is_null()) << s;
  EXPECT_EQ(valueOf("nULL"), json("nULL"));
  EXPECT_EQ(valueOf("\"null\""), json("null"));
  EXPECT_EQ(valueOf("'~'"), json("~"));
}

TEST(YamlScalarTest, HexOctalAndBinaryIntegers) {
  EXPECT_EQ(valueOf("0x1F"), json(31));
  EXPECT_EQ(valueOf("0X1f"), json(31));
  EXPECT_EQ(valueOf("-0x1F"), json(-31));
  EXPECT_EQ(valueOf("012"), json(10));
  EXPECT_EQ(valueOf("0o12"), json(10));
  EXPECT_EQ(valueOf("0b101"), json(5));
  EXPECT_EQ(valueOf("-0b101"), json(-5));
  EXPECT_EQ(valueOf("+12"), json(12));
  EXPECT_EQ(valueOf("0"), json(0));
}

TEST(YamlScalarTest, UnderscoresSeparateDigits) {
  EXPECT_EQ(valueOf("1_000"), json(1000));
  EXPECT_EQ(valueOf("0x_FF"), json(255));
  EXPECT_EQ(valueOf("1_000.5"), json(1000.5));
}

TEST(YamlScalarTest, LeadingZeroWithNonOctalDigitsIsADecimalNumber) {
  EXPECT_EQ(valueOf("08"), json(8));
  EXPECT_EQ(valueOf("09.5"), json(9.5));
}

TEST(YamlScalarTest, IntegralFloatsBecomeJsonIntegersAsGoWritesThem) {
  const json one = valueOf("1.0");
  EXPECT_TRUE(one.is_number_integer()) << one.dump();
  EXPECT_EQ(one, json(1));
  const json thousand = valueOf("1e3");
  EXPECT_TRUE(thousand.is_number_integer());
  EXPECT_EQ(thousand, json(1000));
  EXPECT_EQ(valueOf("-2.0"), json(-2));
}

TEST(YamlScalarTest, FractionalAndExponentFloats) {
  EXPECT_EQ(valueOf("1.5"), json(1.5));
  EXPECT_EQ(valueOf(".5"), json(0.5));
  EXPECT_EQ(valueOf("-.5"), json(-0.5));
  EXPECT_EQ(valueOf("1.5e-7"), json(1.5e-7));
  const json big = valueOf("1e21");
  EXPECT_TRUE(big.is_number_float());
  EXPECT_EQ(big, json(1e21));
}

TEST(YamlScalarTest, QuotedNumbersStayStrings) {
  EXPECT_EQ(valueOf("\"1.0\""), json("1.0"));
  EXPECT_EQ(valueOf("'012'"), json("012"));
  EXPECT_EQ(valueOf("\"0x1F\""), json("0x1F"));
  EXPECT_EQ(valueOf("\"80\""), json("80"));
}

TEST(YamlScalarTest, BlockScalarsAreStrings) {
  auto parsed = parseYaml("a: |\n  123\nb: >-\n  true\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ((*parsed)["a"], json("123\n"));
  EXPECT_EQ((*parsed)["b"], json("true"));
}

TEST(YamlScalarTest, IntegersAtTheInt64AndUint64Limits) {
  const json max64 = valueOf("9223372036854775807");
  EXPECT_EQ(max64.get<int64_t>(), INT64_MAX);
  const json min64 = valueOf("-9223372036854775808");
  EXPECT_TRUE(min64.is_number_integer());
  EXPECT_EQ(min64.get<int64_t>(), INT64_MIN);
  const json above = valueOf("9223372036854775808");
  EXPECT_TRUE(above.is_number_unsigned());
  EXPECT_EQ(above.get<uint64_t>(), uint64_t{9223372036854775808u});
  EXPECT_EQ(valueOf("18446744073709551615").get<uint64_t>(), UINT64_MAX);
}

TEST(YamlScalarTest, IntegersBeyondUint64BecomeFloats) {
  const json beyond = valueOf("18446744073709551616");
  EXPECT_TRUE(beyond.is_number_float());
  EXPECT_DOUBLE_EQ(beyond.get<double>(), 18446744073709551616.0);
  const json huge_hex = valueOf("0x10000000000000000");  // big.Int in go-yaml
  EXPECT_TRUE(huge_hex.is_number_float());
  EXPECT_DOUBLE_EQ(huge_hex.get<double>(), 18446744073709551616.0);
  const json very_negative = valueOf("-99999999999999999999");
  EXPECT_TRUE(very_negative.is_number_float());
  EXPECT_DOUBLE_EQ(very_negative.get<double>(), -1e20);
}

TEST(YamlScalarTest, FloatOverflowStaysAString) { EXPECT_EQ(valueOf("1e400"), json("1e400")); }

TEST(YamlScalarTest, InfinityAndNanCannotBeJson) {
  EXPECT_THAT(errorOf("a: .inf\n"),
              StartsWith("document 1, line 1, column 4: json: unsupported value: +Inf"));
  EXPECT_THAT(errorOf("a: -.Inf\n"), HasSubstr("unsupported value: -Inf"));
  EXPECT_THAT(errorOf("a: .NaN\n"), HasSubstr("unsupported value: NaN"));
  EXPECT_EQ(valueOf("\".inf\""), json(".inf"));
  EXPECT_EQ(valueOf(".iNf"), json(".iNf"));
}

TEST(YamlScalarTest, TimestampsAndBase60NumbersStayStrings) {
  EXPECT_EQ(valueOf("2001-12-14"), json("2001-12-14"));
  EXPECT_EQ(valueOf("2001-12-14T21:59:43.10-05:00"), json("2001-12-14T21:59:43.10-05:00"));
  EXPECT_EQ(valueOf("1:20"), json("1:20"));
}

TEST(YamlScalarTest, ExplicitTagsAreHonoured) {
  EXPECT_EQ(valueOf("!!str yes"), json("yes"));
  EXPECT_EQ(valueOf("!!str 123"), json("123"));
  EXPECT_EQ(valueOf("!!int \"12\""), json(12));
  EXPECT_EQ(valueOf("!!bool yes"), json(true));
  EXPECT_EQ(valueOf("!!float 1.5"), json(1.5));
  EXPECT_EQ(valueOf("!!float 2"), json(2));  // an int is accepted as a float
  EXPECT_TRUE(valueOf("!!null ''").is_null());
  EXPECT_EQ(valueOf("!!timestamp 2001-12-14"), json("2001-12-14"));
}

TEST(YamlScalarTest, ValueThatDoesNotFitItsTagIsAnError) {
  EXPECT_EQ(errorOf("a: !!int foo\n"),
            "document 1, line 1, column 4: cannot decode !!str `foo` as a !!int");
  EXPECT_THAT(errorOf("a: !!bool 1\n"), HasSubstr("cannot decode !!int `1` as a !!bool"));
  EXPECT_THAT(errorOf("a: !!null x\n"), HasSubstr("cannot decode !!str `x` as a !!null"));
}

TEST(YamlScalarTest, BinaryTagIsBase64Decoded) {
  EXPECT_EQ(valueOf("!!binary aGVsbG8="), json("hello"));
  EXPECT_THAT(errorOf("a: !!binary '***'\n"), HasSubstr("!!binary value contains invalid base64"));
}

TEST(YamlScalarTest, UnknownTagsAndTheNonSpecificTagGiveStrings) {
  EXPECT_EQ(valueOf("!foo 12"), json("12"));
  EXPECT_EQ(valueOf("! true"), json("true"));
}

// ---------------------------------------------------------------------------------------------
// Mappings

TEST(YamlMappingTest, NonStringKeysBecomeStrings) {
  auto parsed = parseYaml("1: a\nfalse: b\n1.5: c\n0x10: d\n1e3: e\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(*parsed, json({{"1", "a"}, {"false", "b"}, {"1.5", "c"}, {"16", "d"}, {"1000", "e"}}));
}

TEST(YamlMappingTest, UnquotedKeyYIsTheBooleanTrue) {
  auto parsed = parseYaml("x: 1\ny: 2\n");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, json({{"x", 1}, {"true", 2}}));
}

TEST(YamlMappingTest, NullKeyIsAnError) {
  EXPECT_THAT(errorOf("a: 1\n~: 2\n"),
              StartsWith("document 1, line 2, column 1: unsupported map key of type: <nil>"));
}

TEST(YamlMappingTest, CollectionKeyIsAnError) {
  EXPECT_THAT(errorOf("? [a, b]\n: 1\n"), HasSubstr("invalid map key"));
}

TEST(YamlMappingTest, KeyBeyondInt64IsUnsupportedAsInGo) {
  EXPECT_THAT(errorOf("18446744073709551615: x\n"),
              HasSubstr("unsupported map key of type: uint64"));
}

TEST(YamlMappingTest, DuplicateKeysLastOneWins) {
  auto parsed = parseYaml("a: 1\nb: 2\na: 3\n");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, json({{"a", 3}, {"b", 2}}));
}

TEST(YamlMappingTest, AliasRepeatsTheAnchoredValue) {
  auto parsed = parseYaml("base: &b\n  p: 1\n  q: [a, b]\ncopy: *b\nlist: [*b, *b]\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  const json base = {{"p", 1}, {"q", {"a", "b"}}};
  EXPECT_EQ((*parsed)["copy"], base);
  EXPECT_EQ((*parsed)["list"], json::array({base, base}));
}

TEST(YamlMappingTest, MergeKeyBringsInTheAnchoredMapping) {
  auto parsed = parseYaml("base: &b {p: 1, q: 2}\nderived:\n  <<: *b\n  r: 3\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ((*parsed)["derived"], json({{"p", 1}, {"q", 2}, {"r", 3}}));
}

TEST(YamlMappingTest, KeyAfterMergeOverridesMergedValue) {
  auto parsed = parseYaml("base: &b {x: 1}\nderived:\n  <<: *b\n  x: 2\n");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ((*parsed)["derived"], json({{"x", 2}}));
}

TEST(YamlMappingTest, KeyBeforeMergeIsOverriddenAsInGoYamlV2) {
  auto parsed = parseYaml("base: &b {x: 1}\nderived:\n  x: 2\n  <<: *b\n");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ((*parsed)["derived"], json({{"x", 1}}));
}

TEST(YamlMappingTest, MergeOfASequenceLetsEarlierMapsWin) {
  auto parsed = parseYaml("a: &a {p: 1, q: 1}\nb: &b {p: 2, r: 2}\nc:\n  <<: [*a, *b]\n");
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ((*parsed)["c"], json({{"p", 1}, {"q", 1}, {"r", 2}}));
}

TEST(YamlMappingTest, MergeOfAScalarIsAnError) {
  EXPECT_EQ(
      errorOf("a: &s hello\nb:\n  <<: *s\n"),
      "document 1, line 3, column 7: map merge requires map or sequence of maps as the value");
}

TEST(YamlMappingTest, QuotedMergeKeyIsAnOrdinaryKey) {
  auto parsed = parseYaml("\"<<\": 1\n");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, json({{"<<", 1}}));
}

TEST(YamlMappingTest, AnchorContainingItselfIsAnError) {
  EXPECT_THAT(errorOf("a: &x [1, *x]\n"), HasSubstr("anchor 'x' value contains itself"));
}

TEST(YamlMappingTest, UnknownAliasIsAnErrorWithPosition) {
  EXPECT_THAT(errorOf("a: 1\nb: *nope\n"), StartsWith("document 1, line 2, column 4: "));
}

TEST(YamlMappingTest, ExponentialAliasingIsRejected) {
  std::string text = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int i = 1; i < 10; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
    for (int k = 1; k < 10; ++k) text += ", " + prev;
    text += "]\n";
  }
  EXPECT_THAT(errorOf(text), HasSubstr("document contains excessive aliasing"));
}

TEST(YamlMappingTest, DeepNestingIsAnErrorNotACrash) {
  EXPECT_THAT(errorOf(std::string(100000, '[')), HasSubstr("nesting depth"));
  std::string nested_json = std::string(5000, '[') + std::string(5000, ']');
  EXPECT_THAT(errorOf("{\"a\": " + nested_json + "}"), HasSubstr("nesting depth"));
}

TEST(YamlMappingTest, LongMergeChainsAreRejectedAsExcessiveAliasing) {
  std::string text = "a0: &a0 {x: 1}\n";
  for (int i = 1; i <= 1100; ++i) {
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " {<<: *a" +
            std::to_string(i - 1) + "}\n";
  }
  EXPECT_THAT(errorOf(text), HasSubstr("document contains excessive aliasing"));
}

// ---------------------------------------------------------------------------------------------
// Streams and errors

TEST(YamlStreamTest, DocumentsComeBackInOrder) {
  auto docs = parseYamlDocuments("a: 1\n---\nb: 2\n---\n- 3\n");
  ASSERT_TRUE(docs.ok());
  EXPECT_EQ(*docs, (std::vector<json>{{{"a", 1}}, {{"b", 2}}, json::array({3})}));
}

TEST(YamlStreamTest, EmptyAndNullDocumentsAreSkipped) {
  auto docs = parseYamlDocuments(
      "---\n---\na: 1\n---\n# only a comment\n---\nnull\n---\n~\n---\nb: 2\n---\n");
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  EXPECT_EQ(*docs, (std::vector<json>{{{"a", 1}}, {{"b", 2}}}));
}

TEST(YamlStreamTest, EmptyStreamHasNoDocuments) {
  for (const char* text : {"", "\n\n", "# comment\n", "---\n"}) {
    auto docs = parseYamlDocuments(text);
    ASSERT_TRUE(docs.ok()) << text;
    EXPECT_TRUE(docs->empty()) << text;
  }
}

TEST(YamlStreamTest, ErrorNamesDocumentLineAndColumn) {
  EXPECT_EQ(errorOf("a: 1\n---\nb: 2\nc: d: e\n"),
            "document 2, line 4, column 5: illegal map value");
  EXPECT_THAT(errorOf("a: 1\n---\n---\nx: [1, 2\n"), StartsWith("document 3, line "));
}

TEST(YamlStreamTest, StrayFlowIndicatorIsAnErrorNotAnEndlessStream) {
  EXPECT_EQ(errorOf(",a: 1\n"), "document 1, line 1, column 1: did not find expected node content");
}

TEST(YamlStreamTest, ErrorsCountSkippedEmptyDocuments) {
  EXPECT_THAT(errorOf("---\n---\nx: !!int nope\n"),
              StartsWith("document 2, line 3, column 4: cannot decode"));
}

TEST(YamlStreamTest, InvalidUtf8AndControlCharactersAreRejected) {
  EXPECT_EQ(errorOf("a: b\nc: \xff\n"),
            "document 1, line 2, column 4: invalid UTF-8 byte sequence");
  EXPECT_EQ(errorOf("a: b\x01\n"),
            "document 1, line 1, column 5: control characters are not allowed");
}

TEST(YamlStreamTest, ParseYamlWantsAtMostOneDocument) {
  auto two = parseYaml("a: 1\n---\nb: 2\n");
  ASSERT_FALSE(two.ok());
  EXPECT_THAT(two.error().message, HasSubstr("found 2"));
  auto none = parseYaml("# nothing\n");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->is_null());
  auto trailing_separator = parseYaml("a: 1\n---\n");
  ASSERT_TRUE(trailing_separator.ok());
  EXPECT_EQ(*trailing_separator, json({{"a", 1}}));
}

TEST(YamlStreamTest, JsonInputIsReadAsAStreamOfJsonValues) {
  auto docs = parseYamlDocuments("  {\"a\": 1.5, \"b\": [\"yes\", null]}\n{\"c\": {}} null\n");
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  EXPECT_EQ(*docs,
            (std::vector<json>{{{"a", 1.5}, {"b", {"yes", nullptr}}}, {{"c", json::object()}}}));
}

TEST(YamlStreamTest, JsonSyntaxErrorNamesDocumentLineAndColumn) {
  EXPECT_THAT(errorOf("{\"a\": 1}\n{\"b\": ,}\n"), StartsWith("document 2, line 2, column 7: "));
}

TEST(YamlStreamTest, FlowMappingStartingWithBraceIsReadAsJsonLikeApimachinery) {
  EXPECT_THAT(errorOf("{a: 1}"), StartsWith("document 1, line 1, column 2: "));
}

TEST(YamlStreamTest, FlowYamlStartingWithBracketIsYaml) {
  auto parsed = parseYaml("[yes, 0x10, 'a']");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ(*parsed, json({true, 16, "a"}));
}

// ---------------------------------------------------------------------------------------------
// toYaml

TEST(ToYamlTest, KubectlStyleBlockLayout) {
  const json pod = json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web", "labels": {"app": "web"}},
    "spec": {"containers": [{"name": "app", "image": "nginx", "ports": [{"containerPort": 80}],
                             "args": ["-v", "--x=1"]}],
             "volumes": []}
  })");
  EXPECT_EQ(toYaml(pod),
            "apiVersion: v1\n"
            "kind: Pod\n"
            "metadata:\n"
            "  labels:\n"
            "    app: web\n"
            "  name: web\n"
            "spec:\n"
            "  containers:\n"
            "  - args:\n"
            "    - -v\n"
            "    - --x=1\n"
            "    image: nginx\n"
            "    name: app\n"
            "    ports:\n"
            "    - containerPort: 80\n"
            "  volumes: []\n");
}

TEST(ToYamlTest, NestedSequencesAndEmptyCollections) {
  EXPECT_EQ(toYaml(json::parse(R"([[1, 2], [], {}, {"a": {}}])")),
            "- - 1\n  - 2\n- []\n- {}\n- a: {}\n");
  EXPECT_EQ(toYaml(json::object()), "{}\n");
  EXPECT_EQ(toYaml(json::array()), "[]\n");
  EXPECT_EQ(toYaml(json(nullptr)), "null\n");
}

TEST(ToYamlTest, StringsThatWouldReadAsSomethingElseAreDoubleQuoted) {
  for (const char* s : {"true", "yes", "on", "n", "1", "1.5", "", "null", "~", "0x1F", "1e3",
                        "2001-12-14", "1:20", "<<", ".inf"}) {
    EXPECT_EQ(toYaml(json{{"k", s}}), "k: \"" + std::string(s) + "\"\n") << s;
  }
}

TEST(ToYamlTest, StringsThePlainStyleCannotCarryAreSingleQuoted) {
  for (const char* s : {" x", "x ", "a: b", "a #b", "- a", "-", "@x", "*x", "&x", "!x", "%x", "[x",
                        "{x", "'x", "\"x", "#x", "x:", "---", "? x"}) {
    std::string quoted;
    for (const char c : std::string(s)) quoted += c == '\'' ? "''" : std::string(1, c);
    EXPECT_EQ(toYaml(json{{"k", s}}), "k: '" + quoted + "'\n") << s;
  }
}

// Keys take the value's style (a printable-ASCII key is never multi-line, so never "? key").
TEST(ToYamlTest, KeysAreQuotedAsValuesAre) {
  for (const char* s : {"true", "n", "1", "", "~", "1:20", "<<", ".inf", "2001-12-14"}) {
    EXPECT_EQ(toYaml(json{{s, 1}}), "\"" + std::string(s) + "\": 1\n") << s;
  }
  for (const char* s : {" x", "x ", "a: b", "a #b", "- a", "-", "@x", "'x", "#x", "x:", "---",
                        "...", "? x", ": x", "?", ":"}) {
    std::string quoted;
    for (const char c : std::string(s)) quoted += c == '\'' ? "''" : std::string(1, c);
    EXPECT_EQ(toYaml(json{{s, 1}}), "'" + quoted + "': 1\n") << s;
  }
  for (const char* s : {"app.kubernetes.io/name", "a#b", "-a", "?x", ":x", "x:y", "a-b c", "..x"}) {
    EXPECT_EQ(toYaml(json{{s, 1}}), std::string(s) + ": 1\n") << s;
  }
  const std::string long_key(129, 'k');
  EXPECT_EQ(toYaml(json{{long_key, 1}}), "? " + long_key + "\n: 1\n");
}

TEST(ToYamlTest, PlainWhenUnambiguous) {
  for (const char* s : {"nginx:1.25", "a#b", "http://x/y", "-a", "a-b c", "yEs", "héllo"}) {
    EXPECT_EQ(toYaml(json{{"k", s}}), "k: " + std::string(s) + "\n") << s;
  }
}

TEST(ToYamlTest, SpecialCharactersAreEscapedInDoubleQuotes) {
  EXPECT_EQ(toYaml(json{{"k", "a\tb"}}), "k: \"a\\tb\"\n");
  EXPECT_EQ(toYaml(json{{"k", std::string("nul\0x", 5)}}), "k: \"nul\\0x\"\n");
  EXPECT_EQ(toYaml(json{{"k", "smile \xF0\x9F\x98\x80"}}), "k: \"smile \\U0001F600\"\n");
}

TEST(ToYamlTest, MultiLineStringsUseLiteralBlockScalars) {
  EXPECT_EQ(toYaml(json{{"k", "a\nb"}}), "k: |-\n  a\n  b\n");
  EXPECT_EQ(toYaml(json{{"k", "a\nb\n"}}), "k: |\n  a\n  b\n");
  EXPECT_EQ(toYaml(json{{"k", "a\n\n"}}), "k: |+\n  a\n\n");
  EXPECT_EQ(toYaml(json{{"k", " a\nb"}}), "k: |2-\n   a\n  b\n");
  EXPECT_EQ(toYaml(json{{"k", "a\n\nb"}}), "k: |-\n  a\n\n  b\n");
  EXPECT_EQ(toYaml(json::array({"x\ny"})), "- |-\n  x\n  y\n");
  EXPECT_EQ(toYaml(json{{"o", {{"k", "x\ny"}}}}), "o:\n  k: |-\n    x\n    y\n");
  // A trailing space on a line cannot survive a block scalar: double quotes instead.
  EXPECT_EQ(toYaml(json{{"k", "a \nb"}}), "k: \"a \\nb\"\n");
}

TEST(ToYamlTest, NumbersAsKubectlPrintsThem) {
  EXPECT_EQ(toYaml(json{{"a", 1.0}}), "a: 1\n");
  EXPECT_EQ(toYaml(json{{"a", 1.5}}), "a: 1.5\n");
  EXPECT_EQ(toYaml(json{{"a", -3}}), "a: -3\n");
  EXPECT_EQ(toYaml(json{{"a", 1e21}}), "a: 1e+21\n");
  EXPECT_EQ(toYaml(json{{"a", 1e-7}}), "a: 1e-07\n");
  EXPECT_EQ(toYaml(json{{"a", 1234567.5}}), "a: 1.2345675e+06\n");
  EXPECT_EQ(toYaml(json{{"a", UINT64_MAX}}), "a: 18446744073709551615\n");
  EXPECT_EQ(toYaml(json{{"a", true}, {"b", nullptr}}), "a: true\nb: null\n");
}

TEST(ToYamlTest, KeysAreQuotedLikeValues) {
  EXPECT_EQ(toYaml(json{{"true", 1}, {"", 2}, {"a b", 3}, {"x: y", 4}}),
            "\"\": 2\n"
            "a b: 3\n"
            "\"true\": 1\n"
            "'x: y': 4\n");
}

TEST(ToYamlTest, LongAndMultiLineKeysUseTheComplexKeyForm) {
  const std::string long_key(130, 'k');
  EXPECT_EQ(toYaml(json{{long_key, 1}}), "? " + long_key + "\n: 1\n");
  EXPECT_EQ(toYaml(json{{"a\nb", {{"x", 1}}}}), "? |-\n  a\n  b\n:\n  x: 1\n");
}

TEST(ToYamlTest, ValuesDeeperThanTheLimitAreWrittenInFlowStyleWithoutRecursion) {
  json deep = json::array();
  for (int i = 0; i < 200000; ++i) deep = json::array({std::move(deep)});
  deep = json{{"k", std::move(deep)}, {"s", "a\"b"}};
  const std::string yaml = toYaml(deep);
  EXPECT_EQ(yaml.substr(0, 10), "{\"k\": [[[[");
  EXPECT_THAT(yaml, EndsWith("]]]], \"s\": \"a\\\"b\"}\n"));
}

TEST(ToYamlTest, DocumentsAreJoinedWithSeparators) {
  EXPECT_EQ(toYamlDocuments({json{{"a", 1}}, json{{"b", 2}}}), "a: 1\n---\nb: 2\n");
  EXPECT_EQ(toYamlDocuments({}), "");
}

// parseYaml(toYaml(j)) == j for awkward values, as values, keys and sequence items.
TEST(ToYamlTest, RoundTripOfTrickyValues) {
  const std::vector<std::string> strings = {"",
                                            " ",
                                            "  ",
                                            "true",
                                            "True",
                                            "yes",
                                            "Y",
                                            "on",
                                            "off",
                                            "no",
                                            "null",
                                            "~",
                                            "NULL",
                                            "0",
                                            "012",
                                            "08",
                                            "0x1F",
                                            "0o7",
                                            "0b1",
                                            "1_000",
                                            "1e3",
                                            "1.0",
                                            ".5",
                                            "-.5",
                                            "+1",
                                            "-",
                                            "--",
                                            "---",
                                            "...",
                                            "...x",
                                            "- x",
                                            "-x",
                                            "?",
                                            "? x",
                                            "?x",
                                            ":",
                                            ":x",
                                            "x:",
                                            "x: y",
                                            "x:y",
                                            "#",
                                            "#x",
                                            "x #y",
                                            "x#y",
                                            "'",
                                            "\"",
                                            "''",
                                            "a'b",
                                            "a\"b",
                                            "\\",
                                            "\\n",
                                            "@",
                                            "`",
                                            "%",
                                            "!",
                                            "!!str",
                                            "&a",
                                            "*a",
                                            "|",
                                            ">",
                                            "[",
                                            "]",
                                            "{",
                                            "}",
                                            ",",
                                            "a,b",
                                            "[a]",
                                            "{a: b}",
                                            "<<",
                                            "1:20",
                                            "2001-12-14",
                                            "2001-12-14T21:59:43Z",
                                            ".inf",
                                            ".nan",
                                            "-.inf",
                                            "a\nb",
                                            "a\nb\n",
                                            "a\n\n",
                                            "\n",
                                            "\n\n",
                                            "\na",
                                            " a\nb",
                                            "a \nb",
                                            "a\n b",
                                            "a\tb",
                                            "\t",
                                            "x\r\ny",
                                            "\r",
                                            "caf\xC3\xA9",
                                            "\xE4\xB8\xAD\xE6\x96\x87",
                                            "\xF0\x9F\x98\x80",
                                            "\xC2\xA0",
                                            "\xC2\x85",
                                            "\xE2\x80\xA8",
                                            // A BOM, then "bom": split because a hex escape
                                            // would take the "b" as one of its digits.
                                            // NOLINTNEXTLINE(bugprone-suspicious-missing-comma)
                                            "\xEF\xBB\xBF"
                                            "bom",
                                            std::string("a\0b", 3),
                                            "\x7f",
                                            "\x1b[0m",
                                            std::string(200, 'x'),
                                            std::string(90, 'a') + " " + std::string(90, 'b'),
                                            "trailing\n  indented\n",
                                            "  lead\n",
                                            "{\"json\": true}",
                                            "key: |\n  nested"};
  for (const auto& s : strings) {
    const json docs[] = {json(s), json{{"k", s}}, json{{s, "v"}}, json::array({s, s}),
                         json{{"o", {{s, {s}}}}}};
    for (const json& j : docs) {
      const std::string yaml = toYaml(j);
      auto back = parseYaml(yaml);
      ASSERT_TRUE(back.ok()) << j.dump() << "\n" << yaml << "\n" << back.error().message;
      EXPECT_EQ(*back, j) << j.dump() << "\n" << yaml;
    }
  }
}

TEST(ToYamlTest, RoundTripOfNumbersAndStructure) {
  const json j = json::parse(R"({
    "ints": [0, -1, 1, 9223372036854775807, -9223372036854775808, 18446744073709551615],
    "floats": [0.5, -2.25, 1e-7, 1e21, 1.7976931348623157e308, 5e-324, 123456.789, 1e20],
    "bools": [true, false], "null": null, "empty": {"m": {}, "l": []},
    "nested": [[[]], [{"a": [{"b": {}}]}]]
  })");
  auto back = parseYaml(toYaml(j));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, j) << toYaml(j);
}

// ---------------------------------------------------------------------------------------------
// toYaml with kGoYamlMarshal: go-yaml v2's folding at column 80. Every expected text below is
// what sigs.k8s.io/yaml v1.6.0's JSONToYAML (go.yaml.in/yaml/v2 v2.4.4, the one Istio's go.mod
// pins) writes for the same value.

std::string folded(const json& value) {
  std::string text = toYaml(value, kGoYamlMarshal);
  // Folding never changes the value.
  auto back = parseYaml(text);
  EXPECT_TRUE(back.ok()) << text;
  if (back.ok()) {
    EXPECT_EQ(*back, value) << text;
  }
  return text;
}

std::string rep(std::size_t n, const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

TEST(YamlFoldTest, ASpaceFoldsOnlyOnceTheLineIsPastColumn80) {
  // "k: " and 77 characters: the space is met at column 80, which is not past it.
  const std::string at80 = std::string(77, 'x') + " y";
  EXPECT_EQ(folded({{"k", at80}}), "k: " + at80 + "\n");
  const std::string at81 = std::string(78, 'x') + " y";
  EXPECT_EQ(folded({{"k", at81}}), "k: " + std::string(78, 'x') + "\n  y\n");
  // Without the option nothing folds.
  EXPECT_EQ(toYaml({{"k", at81}}), "k: " + at81 + "\n");
}

TEST(YamlFoldTest, AValueWithoutSpacesIsNeverFolded) {
  EXPECT_EQ(folded({{"k", std::string(200, 'x')}}), "k: " + std::string(200, 'x') + "\n");
}

TEST(YamlFoldTest, ALongWordFoldsAtTheFirstSpaceAfterIt) {
  const std::string a(100, 'a');
  const std::string d(90, 'd');
  EXPECT_EQ(folded({{"k", a + " b c " + d + " e"}}), "k: " + a + "\n  b c " + d + "\n  e\n");
}

TEST(YamlFoldTest, ContinuationLinesStartTwoColumnsRightOfTheKeyOrDash) {
  const json v = {{"a",
                   {{"b", json::array({{{"c", rep(29, "word ") + "word"}}})},
                    {"d", json::array({json::array({rep(24, "item ") + "item"})})}}}};
  EXPECT_EQ(folded(v), "a:\n"
                       "  b:\n"
                       "  - c: " + rep(14, "word ") + "word\n"
                       "      " + rep(14, "word ") + "word\n"
                       "  d:\n"
                       "  - - " + rep(15, "item ") + "item\n"
                       "      " + rep(8, "item ") + "item\n");
  // A root scalar, and the items of a root sequence.
  EXPECT_EQ(folded(json(rep(29, "root ") + "root")),
            rep(16, "root ") + "root\n  " + rep(12, "root ") + "root\n");
  EXPECT_EQ(folded(json::array({rep(29, "item ") + "item", "short"})),
            "- " + rep(15, "item ") + "item\n  " + rep(13, "item ") + "item\n- short\n");
}

TEST(YamlFoldTest, EscapesCountAsTheCharactersWritten) {
  // \t, \\ and \" are two columns each: `esc\\\"q` is nine.
  const std::string esc = R"(esc\\\"q)";
  EXPECT_EQ(folded({{"k", "\t" + rep(20, "esc\\\"q ") + "end"}}),
            "k: \"\\t" + rep(8, esc + " ") + esc + "\n  " + rep(8, esc + " ") + esc + "\n  " +
                esc + " " + esc + " end\"\n");
}

TEST(YamlFoldTest, DoubleQuotedKeepsASpaceRunWithABackslash) {
  const std::string x(80, 'x');
  EXPECT_EQ(folded({{"k", "\t" + x + "  y"}}), "k: \"\\t" + x + "\n  \\ y\"\n");
  // The value's last character is never folded; the one before it is.
  EXPECT_EQ(folded({{"k", "\t" + x + " "}}), "k: \"\\t" + x + " \"\n");
  EXPECT_EQ(folded({{"k", "\t" + x + " y"}}), "k: \"\\t" + x + "\n  y\"\n");
  // Nor its first, however long the key.
  const std::string key(85, 'K');
  EXPECT_EQ(folded({{key, " a\tb"}}), key + ": \" a\\tb\"\n");
  // A line break in a double-quoted scalar is an escape; its spaces fold.
  EXPECT_EQ(folded({{"k", rep(30, "line ") + "\nnext"}}),
            "k: \"" + rep(15, "line ") + "line\n  " + rep(14, "line ") + "\\nnext\"\n");
}

TEST(YamlFoldTest, SingleQuotedAsKubeInjectWritesTheMultusAnnotation) {
  const std::string networks =
      R"([{"name": "alt_cni"}, {"name": "more_cni", "namespace": "kube-system"}, )"
      R"({"name": "istio-cni", "namespace": "default"}])";
  EXPECT_EQ(folded({{"networks", networks}}),
            R"(networks: '[{"name": "alt_cni"}, {"name": "more_cni", "namespace": "kube-system"},)"
            "\n"
            R"(  {"name": "istio-cni", "namespace": "default"}]')"
            "\n");
  // A trailing space stays on its line.
  EXPECT_EQ(folded({{"k", "[" + rep(50, "w ")}}),
            "k: '[" + rep(38, "w ") + "w\n  " + rep(11, "w ") + "'\n");
}

TEST(YamlFoldTest, PlainFoldsOnlyAtTheLastSpaceOfARun) {
  const std::string x(80, 'x');
  EXPECT_EQ(folded({{"k", x + "  y z"}}), "k: " + x + "  y\n  z\n");
}

TEST(YamlFoldTest, ColumnsCountCharactersNotBytes) {
  const std::string e78 = rep(78, "\u00e9");
  EXPECT_EQ(folded({{"k", e78 + " z"}}), "k: " + e78 + "\n  z\n");
  // 40 two-byte characters: 85 bytes on the line at the space, but 43 columns.
  const std::string e40 = rep(40, "\u00e9");
  EXPECT_EQ(folded({{"k", e40 + " z"}}), "k: " + e40 + " z\n");
}

TEST(YamlFoldTest, SimpleKeysAreNotFoldedButExplicitOnesAre) {
  // Up to 128 bytes a key is written "key:" and never folded; its value then folds at once.
  const std::string key = rep(29, "key ") + "key";
  EXPECT_EQ(folded({{key, rep(9, "val ") + "val"}}), key + ": val\n  " + rep(8, "val ") + "val\n");
  // Longer, it is written "? key" and folds as a value does.
  const std::string long_key = rep(39, "key ") + "key";
  EXPECT_EQ(folded({{long_key, "v"}}),
            "? " + rep(19, "key ") + "key\n  " + rep(19, "key ") + "key\n: v\n");
}

TEST(YamlFoldTest, LiteralBlocksAreNotFolded) {
  EXPECT_EQ(folded({{"k", "x" + rep(30, " line") + "\nnext"}}),
            "k: |-\n  x" + rep(30, " line") + "\n  next\n");
}

}  // namespace
}  // namespace harness::core

namespace harness::core {
namespace {

// apimachinery's YAMLReader.Read: what kube-inject and kubectl split a stream into.
TEST(SplitYamlDocuments, KeepsEachDocumentsBytesAndDropsTheSeparators) {
  auto docs = splitYamlDocuments("a: 1\n---\nb:   2\n# c\n--- # comment\n\n---\n---\nlast: x");
  ASSERT_TRUE(docs.ok()) << docs.error().message;
  EXPECT_EQ(*docs, (std::vector<std::string>{"a: 1\n", "b:   2\n# c\n", "\n", "last: x"}));
}

TEST(SplitYamlDocuments, ALeadingSeparatorAndATrailingOneAddNothing) {
  auto docs = splitYamlDocuments("---\nkind: Pod\n---\n");
  ASSERT_TRUE(docs.ok());
  EXPECT_EQ(*docs, (std::vector<std::string>{"kind: Pod\n"}));
  auto none = splitYamlDocuments("");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
}

TEST(SplitYamlDocuments, ContentAfterTheSeparatorIsGosError) {
  auto docs = splitYamlDocuments("a: 1\n--- {b: 2}\n");
  ASSERT_FALSE(docs.ok());
  EXPECT_EQ(docs.error().message, "invalid Yaml document separator: {b: 2}");
  // "----" is a separator followed by "-".
  EXPECT_FALSE(splitYamlDocuments("----\n").ok());
}

}  // namespace
}  // namespace harness::core
