// Guards against runaway templates and input: recursion depth, output size, range length,
// evaluation steps, parse nesting. None of these may crash or hang.

#include <string>

#include <gtest/gtest.h>

#include "render.h"

namespace harness::gotemplate {
namespace {

using nlohmann::json;
using testing::render;

TEST(Limits, RecursiveTemplateStopsAtTheDepthLimit) {
  EXPECT_EQ(render("{{ define \"r\" }}{{ template \"r\" . }}{{ end }}{{ template \"r\" . }}"),
            "ERR: template: t:1:28: executing \"r\" at <{{template \"r\" .}}>: exceeded maximum "
            "template depth (1000)");
}

TEST(Limits, NestingOfStatementsAcrossTemplateCallsIsBounded) {
  std::string body;
  for (int i = 0; i < 10; ++i) body += "{{ if true }}";
  body += "{{ template \"r\" . }}";
  for (int i = 0; i < 10; ++i) body += "{{ end }}";
  const std::string out =
      render("{{ define \"r\" }}" + body + "{{ end }}{{ template \"r\" . }}");
  EXPECT_NE(out.find("exceeded maximum nesting depth (2500)"), std::string::npos) << out;
}

TEST(Limits, TemplateDepthIsConfigurable) {
  ExecOptions options;
  options.max_template_depth = 3;
  EXPECT_EQ(render("{{ define \"r\" }}x{{ template \"r\" . }}{{ end }}{{ template \"r\" . }}",
                   nullptr, istioFuncMap(), options),
            "ERR: template: t:1:29: executing \"r\" at <{{template \"r\" .}}>: exceeded maximum "
            "template depth (3)");
}

TEST(Limits, OutputSizeIsBounded) {
  ExecOptions options;
  options.max_output_bytes = 10;
  const std::string out = render("{{ range 100 }}ab{{ end }}", nullptr, istioFuncMap(), options);
  EXPECT_EQ(out, "ERR: template: t:1:15: executing \"t\" at <ab>: output exceeds the limit of 10 "
                 "bytes");
}

TEST(Limits, RangeOverAHugeIntegerIsRefused) {
  EXPECT_EQ(render("{{ range 9000000000 }}{{ end }}"),
            "ERR: template: t:1:9: executing \"t\" at <9000000000>: range over 9000000000 exceeds "
            "the limit of 1000000 iterations");
}

TEST(Limits, EvaluationStepsAreBounded) {
  ExecOptions options;
  options.max_steps = 10000;
  const std::string out =
      render("{{ range 1000 }}{{ range 1000 }}{{ end }}{{ end }}", nullptr, istioFuncMap(), options);
  EXPECT_NE(out.find("exceeded the limit of 10000 evaluation steps"), std::string::npos) << out;
}

TEST(Limits, DeeplyNestedParenthesesAreAParseError) {
  const std::string text = "{{ " + std::string(2000, '(') + "1" + std::string(2000, ')') + " }}";
  EXPECT_EQ(render(text), "ERR: template: t:1: max expression depth exceeded");
}

TEST(Limits, DeeplyNestedIfsAreAParseError) {
  std::string text;
  for (int i = 0; i < 3000; ++i) text += "{{ if true }}";
  EXPECT_EQ(render(text), "ERR: template: t:1: max nesting depth exceeded");
}

TEST(Limits, DeeplyNestedDataIsRefused) {
  json data = 1;
  for (int i = 0; i < 1500; ++i) data = json::array({data});
  const std::string out = render("{{ . }}", data);
  EXPECT_EQ(out, "ERR: template: t: data nested deeper than 1000 levels");
}

TEST(Limits, HugeIndentIsRefused) {
  const std::string out = render("{{ nindent 100000000 \"a\" }}");
  EXPECT_NE(out.find("error calling nindent: result exceeds"), std::string::npos) << out;
}

TEST(Limits, HugePrintfWidthIsBadWidth) {
  EXPECT_EQ(render("{{ printf \"%*d\" 100000000 1 }}"), "%!(BADWIDTH)1");
}

}  // namespace
}  // namespace harness::gotemplate
