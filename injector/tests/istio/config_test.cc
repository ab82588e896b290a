// Loading the injector config, values and mesh config (docs/istio-injector.md §4.1) and annotation
// validation (§4.3).

#include "harness/injector/istio/config.h"

#include <gtest/gtest.h>

#include "harness/injector/istio/validate.h"
#include "harness/testing/support.h"

namespace harness::injector::istio {
namespace {

TEST(Config, DefaultTemplatesDefaultToSidecar) {
  auto c = parseInjectorConfig("policy: enabled\ntemplates:\n  sidecar: 'x'\n");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->default_templates, std::vector<std::string>{"sidecar"});
  EXPECT_TRUE(c->warnings.empty());
}

TEST(Config, LegacyTemplateKeyIsIgnoredAndEmptyTemplatesWarn) {
  auto c = parseInjectorConfig(
      "policy: enabled\ntemplate: '{{ Template_Version_And_Istio_Version_Mismatched_Check_Installation }}'\n");
  ASSERT_TRUE(c.ok()) << c.error().message;
  ASSERT_EQ(c->warnings.size(), 1u);
  EXPECT_TRUE(c->templates.empty());
}

TEST(Config, TemplateParseErrorNamesTheTemplateAndLine) {
  auto c = parseInjectorConfig("templates:\n  broken: \"a\\n{{ if }}\"\n");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message.rfind("template \"broken\": template: inject:2:", 0), 0u)
      << c.error().message;
}

TEST(Config, AnUnimplementedFunctionFailsAtLoadNamingTemplateAndFunction) {
  // Loading, not the first injection, finds it: a branch no pod takes still counts.
  auto c = parseInjectorConfig(
      "templates:\n  sidecar: 'a'\n  extra: \"a\\n{{ if .X }}{{ now }}{{ end }}\"\n");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message,
            "template \"extra\": template: inject:2: function \"now\" not defined (Sprig's now "
            "is not implemented by this template engine)");
  // Istio's own functions all load, otelResourceAttributes (called by the 1.30 template) too.
  EXPECT_TRUE(parseInjectorConfig(
                  "templates:\n  sidecar: '{{ otelResourceAttributes .MeshConfig "
                  ".ObjectMeta.Annotations .ObjectMeta.Labels .DeploymentMeta.Namespace "
                  ".Spec.Containers }}'\n")
                  .ok());
}

TEST(Config, BadYamlIsAnUnmarshalError) {
  auto c = parseInjectorConfig("policy: [\n");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.error().message.rfind("failed to unmarshal injection template: ", 0), 0u);
}

TEST(Config, AliasesAndInjectedAnnotationsAreRead) {
  auto c = parseInjectorConfig(
      "aliases:\n  both: [a, b]\ninjectedAnnotations:\n  k: v\n");
  ASSERT_TRUE(c.ok()) << c.error().message;
  EXPECT_EQ(c->aliases.at("both"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(c->injected_annotations.at("k"), "v");
}

TEST(Config, DumpedConfigMapIsAccepted) {
  const std::string cm =
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: istio-sidecar-injector\ndata:\n"
      "  config: |\n    policy: disabled\n  values: '{\"global\": {\"hub\": \"h\"}}'\n";
  auto s = loadSettings(cm, cm, "");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->config.policy, "disabled");
  EXPECT_EQ(s->values.map["global"]["hub"], "h");
  EXPECT_EQ(s->mesh.statusPort(), 15020);
}

TEST(Config, ConfigMapWithoutKeyIsAnError) {
  auto s = loadSettings("kind: ConfigMap\ndata: {}\n", "{}", "");
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().message, "config: ConfigMap has no data.config");
}

TEST(Config, MeshDefaultConfigOverlaysDefaults) {
  auto m = parseMeshConfig("defaultConfig:\n  statusPort: 1234\n");
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->statusPort(), 1234);
  EXPECT_EQ(m->defaultConfig()["proxyAdminPort"], 15000);
}

TEST(Config, ShippedDefaultsLoad) {
  const auto dir = testing::sourceDir() / "injector" / "istio";
  auto s = loadSettings(testing::readFile(dir / "sidecar-injector-config.yaml"),
                        testing::readFile(dir / "values.json"),
                        testing::readFile(dir / "mesh.yaml"));
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_TRUE(s->config.templates.count("sidecar"));
}

TEST(Validate, InterceptionModeMessage) {
  auto r = validateAnnotations({{"sidecar.istio.io/interceptionMode", "FOO"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "1 error occurred:\n\t* invalid value 'FOO' for annotation "
            "'sidecar.istio.io/interceptionMode': interceptionMode invalid, use "
            "REDIRECT,TPROXY,NONE: FOO\n\n");
}

TEST(Validate, PortListMessage) {
  auto r = validateAnnotation("traffic.sidecar.istio.io/excludeInboundPorts", "4,x");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "excludeInboundPorts invalid: failed parsing port 'x': failed parsing port 'x': "
            "strconv.ParseUint: parsing \"x\": invalid syntax");
}

TEST(Validate, StarIsOnlyValidForIncludes) {
  EXPECT_TRUE(validateAnnotation("traffic.sidecar.istio.io/includeInboundPorts", "*").ok());
  EXPECT_FALSE(validateAnnotation("traffic.sidecar.istio.io/excludeInboundPorts", "*").ok());
  EXPECT_TRUE(validateAnnotation("traffic.sidecar.istio.io/includeOutboundIPRanges", "*").ok());
  EXPECT_FALSE(validateAnnotation("traffic.sidecar.istio.io/excludeOutboundIPRanges", "*").ok());
}

TEST(Validate, CidrMessages) {
  auto r = validateAnnotation("traffic.sidecar.istio.io/includeOutboundIPRanges", "10.0.0.0");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "includeIPRanges invalid: failed parsing cidr '10.0.0.0': netip.ParsePrefix(\"10.0.0.0\"): "
            "no '/'");
  EXPECT_TRUE(validateAnnotation("traffic.sidecar.istio.io/includeOutboundIPRanges",
                                 "10.0.0.0/8,fd00::/8").ok());
}

TEST(Validate, MultipleErrorsAreCounted) {
  auto r = validateAnnotations({{"status.sidecar.istio.io/port", "70000"},
                                {"prometheus.istio.io/merge-metrics", "maybe"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("2 errors occurred:\n\t* ", 0), 0u) << r.error().message;
}

TEST(Validate, ProxyResourceQuantities) {
  EXPECT_TRUE(validateAnnotation("sidecar.istio.io/proxyCPU", "4000m").ok());
  EXPECT_FALSE(validateAnnotation("sidecar.istio.io/proxyMemory", "lots").ok());
}

}  // namespace
}  // namespace harness::injector::istio
