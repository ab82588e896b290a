// Execution: Go's text/template semantics (golang/go src/text/template/exec.go) over JSON data
// and the exact error texts "template: <name>:<line>:<col>: executing \"<name>\" at <node>: ...".

#include <gtest/gtest.h>

#include "harness/gotemplate/go_json.h"
#include "render.h"

namespace harness::gotemplate {
namespace {

using nlohmann::json;
using testing::render;

const json kData = {
    {"s", "x"},
    {"a", 1},
    {"f", 1.5},
    {"t", true},
    {"m", {{"k", "v"}, {"n", nullptr}, {"inner", {{"deep", "d"}}}}},
    {"l", {1, 2, 3, 4, 5}},
    {"empty", json::array()},
};

TEST(Exec, FieldChainWalksNestedMaps) { EXPECT_EQ(render("{{ .m.inner.deep }}", kData), "d"); }

TEST(Exec, MissingKeyPrintsNoValue) { EXPECT_EQ(render("{{ .nope }}", kData), "<no value>"); }

TEST(Exec, MissingKeyDeepInAChainIsStillNoValue) {
  EXPECT_EQ(render("{{ .nope.deeper.still }}", kData), "<no value>");
}

TEST(Exec, NullValuePrintsNoValue) { EXPECT_EQ(render("{{ .m.n }}", kData), "<no value>"); }

TEST(Exec, FieldOfANullValueIsANilPointerError) {
  EXPECT_EQ(render("{{ .m.n.x }}", kData),
            "ERR: template: t:1:5: executing \"t\" at <.m.n.x>: nil pointer evaluating "
            "interface {}.x");
}

TEST(Exec, FieldOfAScalarIsAnError) {
  EXPECT_EQ(render("{{ .s.x }}", kData),
            "ERR: template: t:1:5: executing \"t\" at <.s.x>: can't evaluate field x in type "
            "interface {}");
}

TEST(Exec, MissingKeyErrorOptionStopsExecution) {
  ExecOptions options;
  options.missing_key = MissingKey::kError;
  EXPECT_EQ(render("{{ .nope }}", kData, istioFuncMap(), options),
            "ERR: template: t:1:3: executing \"t\" at <.nope>: map has no entry for key \"nope\"");
}

TEST(Exec, MissingKeyZeroOptionGivesTheNilInterface) {
  ExecOptions options;
  options.missing_key = MissingKey::kZero;
  EXPECT_EQ(render("{{ .nope }}", kData, istioFuncMap(), options), "<no value>");
}

TEST(Exec, NullDataIsNoValue) { EXPECT_EQ(render("{{ . }}", nullptr), "<no value>"); }

TEST(Exec, MapsAndSlicesPrintLikeGo) {
  EXPECT_EQ(render("{{ .m }} {{ .l }}", kData), "map[inner:map[deep:d] k:v n:<nil>] [1 2 3 4 5]");
}

TEST(Exec, VariableDeclarationAndAssignment) {
  EXPECT_EQ(render("{{ $x := 1 }}{{ $x = 2 }}{{ $x }}"), "2");
}

TEST(Exec, DeclarationPrintsNothing) { EXPECT_EQ(render("a{{ $x := 1 }}b"), "ab"); }

TEST(Exec, AssignmentInsideIfChangesTheOuterVariable) {
  EXPECT_EQ(render("{{ $x := 1 }}{{ if true }}{{ $x = 2 }}{{ end }}{{ $x }}"), "2");
}

TEST(Exec, DeclarationInsideIfShadowsOnlyUntilEnd) {
  EXPECT_EQ(render("{{ $x := 1 }}{{ if true }}{{ $x := 2 }}{{ $x }}{{ end }}{{ $x }}"), "21");
}

TEST(Exec, DollarIsTheRootData) {
  EXPECT_EQ(render("{{ with .m }}{{ $.s }}{{ .k }}{{ end }}", kData), "xv");
}

TEST(Exec, VariableFieldChain) {
  EXPECT_EQ(render("{{ $m := .m }}{{ $m.inner.deep }}", kData), "d");
}

TEST(Exec, IfElseIfElseChain) {
  const std::string t = "{{ if eq .a 0 }}zero{{ else if eq .a 1 }}one{{ else }}many{{ end }}";
  EXPECT_EQ(render(t, json{{"a", 1}}), "one");
  EXPECT_EQ(render(t, json{{"a", 7}}), "many");
}

TEST(Exec, IfTruthFollowsGo) {
  const std::string t = "{{ if . }}T{{ else }}F{{ end }}";
  for (const json& falsy : {json(false), json(0), json(0.0), json(""), json::array(),
                            json::object()}) {
    EXPECT_EQ(render(t, falsy), "F") << falsy.dump();
  }
  for (const json& truthy : {json(true), json(-1), json(0.5), json(" "), json{1}, json{{"a", 1}}}) {
    EXPECT_EQ(render(t, truthy), "T") << truthy.dump();
  }
}

TEST(Exec, WithSetsDot) { EXPECT_EQ(render("{{ with .m.inner }}{{ .deep }}{{ end }}", kData), "d"); }

TEST(Exec, WithElseRunsWhenEmpty) {
  EXPECT_EQ(render("{{ with .empty }}full{{ else }}empty{{ end }}", kData), "empty");
}

TEST(Exec, ElseWithChain) {
  EXPECT_EQ(render("{{ with .nope }}a{{ else with .s }}<{{ . }}>{{ else }}c{{ end }}", kData),
            "<x>");
}

TEST(Exec, WithDeclaresAVariable) {
  EXPECT_EQ(render("{{ with $v := .s }}{{ $v }}{{ . }}{{ end }}", kData), "xx");
}

TEST(Exec, RangeOverASliceWithIndexAndValue) {
  EXPECT_EQ(render("{{ range $i, $v := .l }}{{ $i }}={{ $v }};{{ end }}", kData),
            "0=1;1=2;2=3;3=4;4=5;");
}

TEST(Exec, RangeSetsDotToTheElement) {
  EXPECT_EQ(render("{{ range .l }}{{ . }}{{ end }}", kData), "12345");
}

TEST(Exec, RangeOverAMapVisitsKeysInSortedOrder) {
  EXPECT_EQ(render("{{ range $k, $v := . }}{{ $k }}={{ $v }};{{ end }}",
                   json{{"b", 2}, {"c", 3}, {"a", 1}}),
            "a=1;b=2;c=3;");
}

TEST(Exec, RangeElseRunsForAnEmptyList) {
  EXPECT_EQ(render("{{ range .empty }}x{{ else }}none{{ end }}", kData), "none");
}

TEST(Exec, RangeOverAMissingValueRunsElse) {
  EXPECT_EQ(render("{{ range .nope }}x{{ else }}none{{ end }}", kData), "none");
}

TEST(Exec, RangeBreakAndContinue) {
  EXPECT_EQ(render("{{ range .l }}{{ if eq . 2 }}{{ continue }}{{ end }}{{ if eq . 4 }}{{ break }}"
                   "{{ end }}{{ . }}{{ end }}",
                   kData),
            "13");
}

TEST(Exec, RangeOverAnInteger) {
  EXPECT_EQ(render("{{ range $i := 3 }}{{ $i }}{{ end }}|{{ range 0 }}x{{ else }}none{{ end }}"),
            "012|none");
}

TEST(Exec, RangeOverAnIntegerWithTwoVariablesIsAnError) {
  EXPECT_EQ(render("{{ range $i, $v := 3 }}{{ end }}"),
            "ERR: template: t:1:19: executing \"t\" at <3>: can't use 3 to iterate over more than "
            "one variable");
}

TEST(Exec, RangeOverAStringIsAnError) {
  EXPECT_EQ(render("{{ range .s }}{{ end }}", kData),
            "ERR: template: t:1:9: executing \"t\" at <.s>: range can't iterate over x");
}

TEST(Exec, RangeVariablesAreRestoredEachIteration) {
  EXPECT_EQ(render("{{ range .l }}{{ $y := . }}{{ end }}{{ $z := 1 }}{{ $z }}", kData), "1");
}

TEST(Exec, NestedRangeSeesOuterVariables) {
  EXPECT_EQ(render("{{ range $a := list 1 2 }}{{ range $b := list \"x\" \"y\" }}{{ $a }}{{ $b }} "
                   "{{ end }}{{ end }}"),
            "1x 1y 2x 2y ");
}

TEST(Exec, DefineAndTemplateWithAPipeline) {
  EXPECT_EQ(render("{{ define \"d\" }}[{{ . }}]{{ end }}{{ template \"d\" .s }}", kData), "[x]");
}

TEST(Exec, TemplateDollarIsItsOwnDot) {
  EXPECT_EQ(render("{{ define \"d\" }}{{ $ }}{{ end }}{{ template \"d\" .a }}", kData), "1");
}

TEST(Exec, TemplateWithoutPipelineHasNoDot) {
  EXPECT_EQ(render("{{ define \"d\" }}{{ . }}{{ end }}{{ template \"d\" }}", kData), "<no value>");
}

TEST(Exec, BlockDefinesAndRuns) {
  EXPECT_EQ(render("{{ block \"b\" .s }}({{ . }}){{ end }}", kData), "(x)");
}

TEST(Exec, UndefinedTemplateIsAnError) {
  EXPECT_EQ(render("{{ template \"nope\" }}"),
            "ERR: template: t:1:12: executing \"t\" at <{{template \"nope\"}}>: template \"nope\" "
            "not defined");
}

TEST(Exec, ErrorInsideADefinedTemplateNamesIt) {
  EXPECT_EQ(render("{{define \"d\"}}{{index .a 1}}{{end}}{{template \"d\" .}}", kData, FuncMap{}),
            "ERR: template: t:1:16: executing \"d\" at <index .a 1>: error calling index: can't "
            "index item of type int");
}

TEST(Exec, ErrorPositionCountsLinesAndBytes) {
  EXPECT_EQ(render("line one\n  {{ .s.b }}", kData),
            "ERR: template: t:2:7: executing \"t\" at <.s.b>: can't evaluate field b in type "
            "interface {}");
}

TEST(Exec, ParenthesizedPipelineWithFields) {
  EXPECT_EQ(render("{{ (.m).inner.deep }}", kData), "d");
}

TEST(Exec, FieldOfAFunctionResult) { EXPECT_EQ(render("{{ (dict \"a\" 5).a }}"), "5"); }

TEST(Exec, PipelinePassesTheValueAsLastArgument) {
  EXPECT_EQ(render("{{ \"x\" | printf \"%s-%s\" \"a\" }}"), "a-x");
}

TEST(Exec, NilIsNotACommand) {
  EXPECT_EQ(render("{{ nil }}"), "ERR: template: t:1:3: executing \"t\" at <nil>: nil is not a command");
}

TEST(Exec, ArgumentToANonFunctionIsAnError) {
  EXPECT_EQ(render("{{ 1 2 }}"),
            "ERR: template: t:1:3: executing \"t\" at <1>: can't give argument to non-function 1");
}

TEST(Exec, MapFieldWithArgumentsIsAnError) {
  EXPECT_EQ(render("{{ .s 1 }}", kData),
            "ERR: template: t:1:3: executing \"t\" at <.s>: s is not a method but has arguments");
}

TEST(Exec, UnknownTemplateNameInExecute) {
  auto set = parse("main", "x", istioFuncMap());
  ASSERT_TRUE(set.ok());
  auto out = execute(*set, "nope", nullptr);
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.error().message,
            "template: no template \"nope\" associated with template \"main\"");
}

TEST(Exec, IntegerAndFloatDataPrintLikeGo) {
  EXPECT_EQ(render("{{ .i }} {{ .big }} {{ .small }} {{ .half }} {{ .neg }}",
                   json{{"i", 15020}, {"big", 1000000.0}, {"small", 100000.0}, {"half", 0.5},
                        {"neg", -2}}),
            "15020 1e+06 100000 0.5 -2");
}

TEST(Exec, ExecutionDoesNotModifyTheCallersData) {
  json data = {{"d", {{"a", 1}}}};
  EXPECT_EQ(render("{{ $_ := set .d \"b\" 2 }}{{ .d }}", data), "map[a:1 b:2]");
  EXPECT_EQ(data, (json{{"d", {{"a", 1}}}}));
}

// ---- Go-struct emulation (ExecOptions::struct_fields)

ExecOptions structOptions() {
  ExecOptions options;
  options.struct_fields = true;
  options.field_types = istioFieldTypes();
  return options;
}

const json kPod = {
    {"ObjectMeta", {{"name", "web"}, {"labels", {{"app", "web"}}}, {"annotations", json::object()}}},
    {"Spec", {{"containers", json::array({{{"name", "app"}}})}}},
    {"ProxyConfig", {{"interceptionMode", "REDIRECT"}, {"holdApplicationUntilProxyStarts", true}}},
    {"TypeMeta", {{"apiVersion", "apps/v1"}, {"kind", "Deployment"}}},
};

TEST(ExecStruct, GoFieldNamesFindJsonKeys) {
  EXPECT_EQ(render("{{ .ObjectMeta.Name }} {{ .TypeMeta.APIVersion }} {{ len .Spec.Containers }}",
                   kPod, istioFuncMap(), structOptions()),
            "web apps/v1 1");
}

TEST(ExecStruct, MissingStructFieldIsItsZeroValue) {
  EXPECT_EQ(render("{{ if eq .Spec.ServiceAccountName \"\" }}default{{ end }}|{{ .Spec.HostNetwork }}",
                   kPod, istioFuncMap(), structOptions()),
            "default|false");
}

TEST(ExecStruct, WithoutEmulationAMissingFieldHasNoValue) {
  EXPECT_EQ(render("{{ .Spec.ServiceAccountName }}", kPod), "<no value>");
}

TEST(ExecStruct, EnumStringMethodGivesTheText) {
  EXPECT_EQ(render("{{ .ProxyConfig.InterceptionMode.String }}", kPod, istioFuncMap(),
                   structOptions()),
            "REDIRECT");
}

TEST(ExecStruct, WrapperGetValueGivesTheScalar) {
  EXPECT_EQ(render("{{ .ProxyConfig.HoldApplicationUntilProxyStarts.GetValue }}|"
                   "{{ or .ProxyConfig.Missing.GetValue \"fallback\" }}",
                   kPod, istioFuncMap(), structOptions()),
            "true|fallback");
}

TEST(ExecStruct, GettersAreNilSafe) {
  EXPECT_EQ(render("{{ if .ProxyConfig.GetTracing.GetTlsSettings }}tls{{ else }}none{{ end }}",
                   kPod, istioFuncMap(), structOptions()),
            "none");
}

TEST(ExecStruct, IndexOfAMissingLabelIsTheEmptyString) {
  EXPECT_EQ(render("{{ if ne \"\" (index .ObjectMeta.Labels \"version\") }}set{{ else }}unset"
                   "{{ end }}",
                   kPod, istioFuncMap(), structOptions()),
            "unset");
}

TEST(ExecStruct, MissingKeyOfAStringMapHasNoValueEvenIfNamedLikeAField) {
  EXPECT_EQ(render("{{ .ObjectMeta.Labels.Name }}", kPod, istioFuncMap(), structOptions()),
            "<no value>");
}

TEST(ExecStruct, IndexOfAMissingKeyInAnUntypedMapIsNil) {
  // map[string]interface{} semantics: the zero value is nil, and "" != nil.
  EXPECT_EQ(render("{{ if ne \"\" (index .m \"zz\") }}differs{{ end }}", kData), "differs");
}

TEST(ExecStruct, MissingAnnotationsMapBehavesAsANilStringMap) {
  const json pod = {{"ObjectMeta", {{"name", "web"}}}};
  EXPECT_EQ(render("[{{ index .ObjectMeta.Annotations \"a\" }}] {{ len .ObjectMeta.Annotations }} "
                   "{{ isset .ObjectMeta.Annotations \"a\" }}",
                   pod, istioFuncMap(), structOptions()),
            "[] 0 false");
}

}  // namespace
}  // namespace harness::gotemplate
