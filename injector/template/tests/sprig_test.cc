// Sprig's functions (Masterminds/sprig v3) as the Istio templates reach them.

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "render.h"

namespace harness::gotemplate {
namespace {

using nlohmann::json;

std::string sprig(std::string_view text, const json& data = nullptr) {
  return testing::render(text, data, sprigFuncMap());
}

const json kData = {
    {"s", "x"},
    {"empty", ""},
    {"zero", 0},
    {"l", {"b", "a", "c"}},
    {"m", {{"k", "v"}, {"n", 1}}},
};

TEST(Sprig, DefaultReplacesEmptyValues) {
  EXPECT_EQ(sprig("{{ .nope | default \"d\" }} {{ .empty | default \"d\" }} {{ .zero | default 5 }} "
                  "{{ .s | default \"d\" }}",
                  kData),
            "d d 5 x");
}

TEST(Sprig, DefaultWithoutAGivenValue) { EXPECT_EQ(sprig("{{ default \"d\" }}"), "d"); }

TEST(Sprig, EmptyFollowsSprigRules) {
  EXPECT_EQ(sprig("{{ empty .nope }} {{ empty .empty }} {{ empty .zero }} {{ empty .m }} "
                  "{{ empty (list) }}",
                  kData),
            "true true true false true");
}

TEST(Sprig, CoalesceTakesTheFirstNonEmpty) {
  EXPECT_EQ(sprig("{{ coalesce .nope .empty .s }}|{{ coalesce .nope }}", kData), "x|<no value>");
}

TEST(Sprig, TernaryChoosesByTheLastArgument) {
  EXPECT_EQ(sprig("{{ ternary \"y\" \"n\" true }} {{ true | ternary \"y\" \"n\" }}"), "y y");
}

TEST(Sprig, StringPredicatesTakeTheNeedleFirst) {
  EXPECT_EQ(sprig("{{ hasPrefix \"ab\" \"abc\" }} {{ hasSuffix \"bc\" \"abc\" }} "
                  "{{ contains \"b\" \"abc\" }}"),
            "true true true");
}

TEST(Sprig, TrimFunctions) {
  EXPECT_EQ(sprig("[{{ trim \"  a b \\n\" }}] [{{ trimPrefix \"a-\" \"a-b\" }}] "
                  "[{{ trimSuffix \"-b\" \"a-b\" }}] [{{ trimAll \"-_.\" \"_-a.b-_\" }}]"),
            "[a b] [b] [a] [a.b]");
}

TEST(Sprig, TruncKeepsTheStartOrTheEnd) {
  EXPECT_EQ(sprig("{{ trunc 3 \"abcdef\" }} {{ trunc -2 \"abcdef\" }} {{ trunc 10 \"ab\" }}"),
            "abc ef ab");
}

TEST(Sprig, ReplaceUpperLower) {
  EXPECT_EQ(sprig("{{ replace \"a\" \"o\" \"banana\" }} {{ upper \"aB\" }} {{ lower \"aB\" }}"),
            "bonono AB ab");
}

TEST(Sprig, QuoteAndSquote) {
  EXPECT_EQ(sprig("{{ quote \"a\\\"b\" 1 }} {{ squote \"a\" }} {{ quote .nope }}|", kData),
            "\"a\\\"b\" \"1\" 'a' |");
}

TEST(Sprig, ToStringUsesFmt) {
  EXPECT_EQ(sprig("{{ toString 1.5 }} {{ toString .m }} {{ toString .nope }}", kData),
            "1.5 map[k:v n:1] <nil>");
}

TEST(Sprig, JoinSplitAndSplitList) {
  EXPECT_EQ(sprig("{{ join \",\" .l }} {{ (split \"/\" \"a/b\")._1 }} {{ splitList \"/\" \"a/b\" }}",
                  kData),
            "b,a,c b [a b]");
}

TEST(Sprig, JoinSkipsNils) {
  EXPECT_EQ(sprig("{{ list 1 nil \"a\" | join \"-\" }}"), "1-a");
}

TEST(Sprig, SortAlpha) { EXPECT_EQ(sprig("{{ sortAlpha .l }}", kData), "[a b c]"); }

TEST(Sprig, ListAndAppend) {
  EXPECT_EQ(sprig("{{ $l := list }}{{ $l = append $l \"a\" }}{{ $l = append $l \"b\" }}{{ $l }} "
                  "{{ len $l }}"),
            "[a b] 2");
}

TEST(Sprig, AppendToANonListIsAnError) {
  EXPECT_EQ(sprig("{{ append \"s\" 1 }}"),
            "ERR: template: t:1:3: executing \"t\" at <append \"s\" 1>: error calling append: "
            "Cannot push on type string");
}

TEST(Sprig, FirstLastRestInitialUniqCompact) {
  EXPECT_EQ(sprig("{{ first .l }} {{ last .l }} {{ rest .l }} {{ initial .l }} "
                  "{{ uniq (list 1 1 \"1\" 2) }} {{ compact (list 0 \"\" \"a\" nil) }}",
                  kData),
            "b c [a c] [b a] [1 1 2] [a]");
}

TEST(Sprig, FirstOfAnEmptyListIsNoValue) { EXPECT_EQ(sprig("{{ first (list) }}"), "<no value>"); }

TEST(Sprig, FirstOfNilIsGosNilDereference) {
  EXPECT_EQ(sprig("{{ first .nope }}", kData),
            "ERR: template: t:1:3: executing \"t\" at <first .nope>: error calling first: runtime "
            "error: invalid memory address or nil pointer dereference");
}

TEST(Sprig, DictGetHasKeyKeys) {
  EXPECT_EQ(sprig("{{ $d := dict \"b\" 2 \"a\" 1 }}{{ get $d \"a\" }} {{ get $d \"z\" }}| "
                  "{{ hasKey $d \"b\" }} {{ keys $d }}"),
            "1 | true [a b]");
}

TEST(Sprig, DictWithAnOddCountGivesTheLastKeyAnEmptyValue) {
  EXPECT_EQ(sprig("{{ dict \"a\" 1 \"b\" }}"), "map[a:1 b:]");
}

TEST(Sprig, SetMutatesTheMapInPlace) {
  EXPECT_EQ(sprig("{{ $d := dict }}{{ $_ := set $d \"k\" \"v\" }}{{ $d.k }}"), "v");
}

TEST(Sprig, UnsetRemovesAKey) {
  EXPECT_EQ(sprig("{{ $d := dict \"a\" 1 \"b\" 2 }}{{ $_ := unset $d \"a\" }}{{ $d }}"), "map[b:2]");
}

TEST(Sprig, MergeKeepsDestinationValues) {
  EXPECT_EQ(sprig("{{ $d := dict \"a\" 1 \"n\" (dict \"x\" 1) }}"
                  "{{ $_ := merge $d (dict \"a\" 2 \"b\" 3 \"n\" (dict \"x\" 2 \"y\" 2)) }}{{ $d }}"),
            "map[a:1 b:3 n:map[x:1 y:2]]");
}

TEST(Sprig, MergeOverwritePrefersSourceValues) {
  EXPECT_EQ(sprig("{{ mergeOverwrite (dict \"a\" 1 \"c\" 1) (dict \"a\" 2 \"b\" 3 \"c\" \"\") }}"),
            "map[a:2 b:3 c:1]");
}

TEST(Sprig, ToJsonEscapesHtmlLikeGo) {
  EXPECT_EQ(sprig("{{ toJson (dict \"b\" \"<&>\" \"a\" 1.5) }}"),
            R"({"a":1.5,"b":"\u003c\u0026\u003e"})");
}

TEST(Sprig, ToRawJsonDoesNotEscapeHtml) {
  EXPECT_EQ(sprig("{{ toRawJson (list \"<a>\") }}"), R"(["<a>"])");
}

TEST(Sprig, ToPrettyJsonIndentsTwoSpaces) {
  EXPECT_EQ(sprig("{{ toPrettyJson (dict \"a\" (list 1) \"b\" (dict)) }}"),
            "{\n  \"a\": [\n    1\n  ],\n  \"b\": {}\n}");
}

TEST(Sprig, FromJsonGivesFloatsAndNilOnError) {
  EXPECT_EQ(sprig("{{ (fromJson \"{\\\"a\\\":1}\").a | printf \"%T\" }} {{ fromJson \"{\" }}"),
            "float64 <no value>");
}

TEST(Sprig, NumericConversions) {
  EXPECT_EQ(sprig("{{ int \"12\" }} {{ int64 \"0x10\" }} {{ int 3.9 }} {{ float64 \"1.5\" }} "
                  "{{ atoi \"x\" }} {{ int \"12.00\" }}"),
            "12 16 3 1.5 0 12");
}

TEST(Sprig, Arithmetic) {
  EXPECT_EQ(sprig("{{ add 1 2 \"3\" }} {{ sub 5 2 }} {{ mul 2 3 4 }} {{ div 7 2 }} {{ mod 7 2 }} "
                  "{{ max 1 9 3 }} {{ min 4 2 8 }} {{ add1 1 }}"),
            "6 3 24 3 1 9 2 2");
}

TEST(Sprig, DivisionByZeroIsGosRuntimeError) {
  EXPECT_EQ(sprig("{{ div 1 0 }}"),
            "ERR: template: t:1:3: executing \"t\" at <div 1 0>: error calling div: runtime error: "
            "integer divide by zero");
}

TEST(Sprig, Base64) {
  EXPECT_EQ(sprig("{{ b64enc \"hi\" }} {{ b64dec \"aGk=\" }} {{ b64dec \"!\" }}"),
            "aGk= hi illegal base64 data at input byte 0");
}

TEST(Sprig, IndentAndNindent) {
  EXPECT_EQ(sprig("{{ indent 2 \"a\\nb\" }}|{{ nindent 2 \"a\" }}"), "  a\n  b|\n  a");
}

TEST(Sprig, RegexMatchAndReplace) {
  EXPECT_EQ(sprig("{{ regexMatch \"^a.c$\" \"abc\" }} {{ regexReplaceAll \"a(x*)b\" \"-ab-axxb-\" "
                  "\"${1}W\" }} {{ regexFind \"[0-9]+\" \"ab123c\" }}"),
            "true -W-xxW- 123");
}

TEST(Sprig, InvalidRegexIsAnErrorForReplace) {
  // regexReplaceAll calls regexp.MustCompile; text/template returns its panic as the error
  // (go/src/regexp/regexp.go MustCompile: the expression in backquotes).
  EXPECT_EQ(sprig("{{ regexReplaceAll \"(\" \"a\" \"b\" }}"),
            "ERR: template: t:1:3: executing \"t\" at <regexReplaceAll \"(\" \"a\" \"b\">: "
            "error calling regexReplaceAll: regexp: Compile(`(`): error parsing regexp: missing "
            "closing ): `(`");
  // The must* variants return Compile's error as it is.
  EXPECT_EQ(sprig("{{ mustRegexFind \"a**\" \"a\" }}"),
            "ERR: template: t:1:3: executing \"t\" at <mustRegexFind \"a**\" \"a\">: "
            "error calling mustRegexFind: error parsing regexp: invalid nested repetition "
            "operator: `**`");
}

TEST(Sprig, RegexFunctionsTakeGoSyntax) {
  // Named groups, Unicode classes and flags are Go's regexp syntax (std::regex had none).
  EXPECT_EQ(sprig("{{ regexReplaceAll \"(?P<k>\\\\w+)=(?P<v>\\\\w+)\" \"a=1,b=2\" "
                  "\"${v}:${k}\" }}"),
            "1:a,2:b");
  EXPECT_EQ(sprig("{{ regexFind \"\\\\pL+\" \"42 Gr\xc3\xb6\xc3\x9f" "e\" }}"),
            "Gr\xc3\xb6\xc3\x9f" "e");
  EXPECT_EQ(sprig("{{ regexMatch \"(?i)^istio\" \"ISTIO-proxy\" }}"), "true");
}

TEST(Sprig, RegexFunctionsHandleLargeInputsWithPathologicalPatterns) {
  // A 1 MiB input (over the old 64 KiB cap) against nested quantifiers that make a
  // backtracking engine exponential: RE2 is linear.
  const std::string big(1 << 20, 'a');
  EXPECT_EQ(sprig("{{ regexMatch \"(a*)*b\" .s }}", {{"s", big}}), "false");
  EXPECT_EQ(sprig("{{ len (regexFindAll \"a{1000}\" .s -1) }}", {{"s", big}}),
            std::to_string(big.size() / 1000));
}

TEST(Sprig, PathFunctions) {
  EXPECT_EQ(sprig("{{ base \"/a/b.txt\" }} {{ dir \"/a/b.txt\" }} {{ ext \"/a/b.txt\" }} "
                  "{{ clean \"/a/../b//c/\" }}"),
            "b.txt /a .txt /b/c");
}

TEST(Sprig, TypeOfAndKindOf) {
  EXPECT_EQ(sprig("{{ typeOf 1 }} {{ typeOf .m }} {{ kindOf .l }} {{ kindIs \"string\" \"a\" }}",
                  kData),
            "int map[string]interface {} slice true");
}

TEST(Sprig, FailAbortsWithTheMessage) {
  EXPECT_EQ(sprig("{{ fail \"boom\" }}"),
            "ERR: template: t:1:3: executing \"t\" at <fail \"boom\">: error calling fail: boom");
}

TEST(Sprig, SliceIsSprigsNotGos) {
  EXPECT_EQ(sprig("{{ slice .l 1 2 }}", kData), "[a]");
}

TEST(Sprig, EdgesMatchGoOutput) {
  // Empty, nil and missing values through Sprig, on data decoded from JSON as Go's
  // json.Unmarshal into map[string]interface{} gives it. Each expected text is what Go 1.26's
  // text/template with sprig/v3's TxtFuncMap printed for the same template and data.
  const json data = json::parse(
      R"({"nullv": null, "emptyl": [], "emptym": {}, "s": "", "zero": 0,)"
      R"( "m": {"a": 1, "b": {"c": "x"}}, "l": ["x", "y"]})");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"{{ .nope | default \"d\" }}|{{ .nullv | default \"d\" }}|{{ .s | default \"d\" }}|"
       "{{ .emptyl | default \"d\" }}|{{ .emptym | default \"d\" }}",
       "d|d|d|d|d"},
      {"{{ empty .nope }}|{{ empty .nullv }}|{{ empty .emptyl }}|{{ empty .emptym }}|"
       "{{ empty 0 }}|{{ empty .zero }}|{{ empty false }}",
       "true|true|true|true|true|true|true"},
      {"{{ coalesce .nope .nullv .s \"x\" }}|{{ coalesce .nope }}",
       "x|<no value>"},
      {"{{ hasKey .emptym \"a\" }}|{{ get .emptym \"a\" }}|"
       "{{ dig \"a\" \"b\" \"def\" .emptym }}|{{ dig \"a\" \"def\" .m }}",
       "false||def|1"},
      {"{{ toJson .nope }}|{{ toJson .nullv }}|{{ toJson .emptyl }}|{{ toJson .emptym }}|"
       "{{ toJson .m }}",
       "null|null|[]|{}|{\"a\":1,\"b\":{\"c\":\"x\"}}"},
      {"{{ join \",\" .emptyl }}|{{ join \",\" .nullv }}|{{ join \",\" .l }}",
       "||x,y"},
      {"{{ first .emptyl }}|{{ last .emptyl }}|{{ rest .emptyl }}|{{ initial .emptyl }}",
       "<no value>|<no value>|[]|[]"},
      {"{{ keys .emptym }}|{{ values .emptym }}|{{ pluck \"a\" .m .emptym }}",
       "[]|[]|[1]"},
      {"{{ indent 2 \"\" }}|{{ nindent 2 \"\" }}|{{ trim \"\" }}|{{ quote .nope }}|"
       "{{ squote .nullv }}",
       "  |\n  |||"},
      {"{{ split \",\" \"\" }}|{{ splitList \",\" \"\" }}|{{ int \"\" }}|{{ atoi \"x\" }}|"
       "{{ int64 .nullv }}",
       "map[_0:]|[]|0|0|0"},
      {"{{ typeOf .nope }}|{{ typeOf .nullv }}|{{ kindOf .emptym }}|{{ kindIs \"invalid\" .nope }}",
       "<nil>|<nil>|map|true"},
      {"{{ merge .emptym .m }}|{{ .emptym }}|{{ uniq .emptyl }}|{{ compact (list \"\" 1 .nullv) }}",
       "map[a:1 b:map[c:x]]|map[a:1 b:map[c:x]]|[]|[1]"},
      {"{{ ternary \"a\" \"b\" (empty .nope) }}|{{ default 5 .zero }}|{{ len .emptyl }}|"
       "{{ toString .nullv }}",
       "a|5|0|<nil>"},
      {"{{ trim .nope }}",
       "ERR: template: t:1:8: executing \"t\" at <.nope>: invalid value; expected string"},
      {"{{ upper .nullv }}",
       "ERR: template: t:1:9: executing \"t\" at <.nullv>: wrong type for value; expected "
       "string; got interface {}"},
  };
  for (const auto& [text, want] : cases) EXPECT_EQ(sprig(text, data), want) << text;
}

TEST(Sprig, UnimplementedFunctionFailsToParseEvenWhenNeverCalled) {
  // Nothing may fail only when a request happens to reach it: the template does not load.
  EXPECT_EQ(sprig("{{ if false }}{{ now }}{{ end }}ok"),
            "ERR: template: t:1: function \"now\" not defined (Sprig's now is not implemented by "
            "this template engine)");
  EXPECT_EQ(sprig("{{ sha256sum \"a\" }}"),
            "ERR: template: t:1: function \"sha256sum\" not defined (Sprig's sha256sum is not "
            "implemented by this template engine)");
  // Not a Sprig function: Go's message alone.
  EXPECT_EQ(sprig("{{ nosuch }}"), "ERR: template: t:1: function \"nosuch\" not defined");
}

TEST(Sprig, EveryFunctionInTheMapIsImplemented) {
  // Calling each function with no arguments reaches its argument check or its body, never a
  // "not implemented" stub.
  for (const auto& [name, f] : sprigFuncMap()) {
    const std::string out = sprig("{{ " + name + " }}");
    EXPECT_EQ(out.find("not implemented"), std::string::npos) << name << ": " << out;
    EXPECT_EQ(out.find("not supported"), std::string::npos) << name << ": " << out;
  }
  for (const auto& [name, f] : istioFuncMap()) {
    const std::string out = testing::render("{{ " + name + " }}", nullptr, istioFuncMap());
    EXPECT_EQ(out.find("not supported"), std::string::npos) << name << ": " << out;
  }
}

TEST(Sprig, WrongArgumentTypeForAStringParameter) {
  EXPECT_EQ(sprig("{{ upper .zero }}", kData),
            "ERR: template: t:1:9: executing \"t\" at <.zero>: wrong type for value; expected "
            "string; got int");
}

TEST(Sprig, TitleAndUntitle) {
  EXPECT_EQ(sprig("{{ title \"hello wide world\" }} {{ untitle \"Hello\" }}"),
            "Hello Wide World hello");
}

TEST(Sprig, SubstrRepeatNospacePlural) {
  EXPECT_EQ(sprig("{{ substr 1 3 \"abcdef\" }} {{ repeat 3 \"ab\" }} {{ nospace \"a b\\tc\" }} "
                  "{{ plural \"one\" \"many\" 2 }}"),
            "bc ababab abc many");
}

TEST(Sprig, CatJoinsWithSpacesAndSkipsNil) {
  EXPECT_EQ(sprig("{{ cat \"a\" 1 nil \"b\" }}"), "a 1 b");
}

TEST(Sprig, SplitnKeepsTheRest) {
  EXPECT_EQ(sprig("{{ splitn \"/\" 2 \"a/b/c\" }}"), "map[_0:a _1:b/c]");
}

TEST(Sprig, UntilAndUntilStep) {
  EXPECT_EQ(sprig("{{ until 3 }} {{ untilStep 0 10 3 }} {{ until -2 }}"), "[0 1 2] [0 3 6 9] [0 -1]");
}

TEST(Sprig, FloatHelpers) {
  EXPECT_EQ(sprig("{{ floor 1.5 }} {{ ceil 1.2 }} {{ round 1.25 1 }} {{ maxf 1 2.5 }} "
                  "{{ minf 1 2.5 }}"),
            "1 2 1.3 2.5 1");
}

TEST(Sprig, AllAndAny) {
  EXPECT_EQ(sprig("{{ all 1 \"a\" }} {{ all 1 \"\" }} {{ any 0 \"\" }} {{ any 0 \"a\" }}"),
            "true false false true");
}

TEST(Sprig, PluckPickValuesDig) {
  EXPECT_EQ(sprig("{{ pluck \"a\" (dict \"a\" 1) (dict \"b\" 2) (dict \"a\" 3) }} "
                  "{{ pick (dict \"a\" 1 \"b\" 2) \"a\" }} {{ values (dict \"a\" 1 \"b\" 2) }} "
                  "{{ dig \"a\" \"b\" \"def\" (dict \"a\" (dict \"b\" 1)) }} "
                  "{{ dig \"a\" \"z\" \"def\" (dict \"a\" (dict \"b\" 1)) }}"),
            "[1 3] map[a:1] [1 2] 1 def");
}

TEST(Sprig, PrependReverseWithoutHasConcat) {
  EXPECT_EQ(sprig("{{ prepend (list 1) 0 }} {{ reverse (list 1 2 3) }} {{ without (list 1 2 3) 2 }} "
                  "{{ has 2 (list 1 2) }} {{ concat (list 1) (list 2 3) }}"),
            "[0 1] [3 2 1] [1 3] true [1 2 3]");
}

TEST(Sprig, MoreRegexFunctions) {
  EXPECT_EQ(sprig("{{ regexFindAll \"[0-9]\" \"a1b2c3\" 2 }} {{ regexSplit \",\" \"a,b,c\" -1 }} "
                  "{{ regexQuoteMeta \"a.b\" }} {{ regexReplaceAllLiteral \"a\" \"aa\" \"$1\" }}"),
            "[1 2] [a b c] a\\.b $1$1");
}

TEST(Sprig, DeepCopyIsIndependent) {
  EXPECT_EQ(sprig("{{ $a := dict \"x\" 1 }}{{ $b := deepCopy $a }}{{ $_ := set $b \"x\" 2 }}"
                  "{{ $a.x }}{{ $b.x }}"),
            "12");
}

TEST(Sprig, TypeIsAndDeepEqual) {
  EXPECT_EQ(sprig("{{ typeIs \"string\" \"a\" }} {{ deepEqual (list 1 2) (list 1 2) }} "
                  "{{ deepEqual 1 1.0 }}"),
            "true true false");
}

}  // namespace
}  // namespace harness::gotemplate
