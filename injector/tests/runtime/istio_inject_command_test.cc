// `injector inject --profile istio` (istioctl kube-inject, docs/istio-injector.md §5.1): the
// offline command prints what the library golden tests expect, for a CronJob and a Deployment.

#include <gtest/gtest.h>

#include <sstream>
#include <vector>

#include "harness/testing/support.h"
#include "../istio/upstream_cases.h"
#include "../istio/upstream_support.h"
#include "inject_command.h"

namespace harness::injector {
namespace {

namespace t = harness::testing;

std::filesystem::path goldenDir() {
  return t::sourceDir() / "injector" / "tests" / "istio" / "testdata" / "golden";
}

InjectOptions istioOptions(const std::string& input) {
  InjectOptions o;
  o.profile = "istio";
  o.inputs = {(goldenDir() / input).string()};
  const auto data = t::sourceDir() / "injector" / "istio";
  o.istio = {data / "sidecar-injector-config.yaml", data / "values.json", data / "mesh.yaml"};
  return o;
}

TEST(IstioInjectCommand, CronJobGetsTheJobTemplateMetadataQuirk) {
  std::istringstream in;
  std::ostringstream out, err;
  EXPECT_EQ(runInject(istioOptions("cronjob.yaml"), in, out, err), 0) << err.str();
  // kube-inject writes "---" after every document.
  EXPECT_EQ(out.str(), t::readFile(goldenDir() / "cronjob.yaml.injected") + "---\n");
}

TEST(IstioInjectCommand, DeploymentMatchesTheLibraryGolden) {
  std::istringstream in;
  std::ostringstream out, err;
  EXPECT_EQ(runInject(istioOptions("deployment.yaml"), in, out, err), 0) << err.str();
  // kube-inject writes "---" after every document.
  EXPECT_EQ(out.str(), t::readFile(goldenDir() / "deployment.yaml.injected") + "---\n");
}

TEST(IstioInjectCommand, AnInvalidAnnotationIsReportedAndExitsOne) {
  std::istringstream in;
  std::ostringstream out, err;
  EXPECT_EQ(runInject(istioOptions("proxy-config-bad.yaml"), in, out, err), 1);
  EXPECT_NE(err.str().find("the webhook would deny it: failed to run injection template: "),
            std::string::npos)
      << err.str();
}

TEST(IstioInjectCommand, HostNetworkIsSkippedWithIstiosWarning) {
  std::istringstream in;
  std::ostringstream out, err;
  EXPECT_EQ(runInject(istioOptions("host-network.yaml"), in, out, err), 0) << err.str();
  EXPECT_NE(err.str().find("===> Skipping injection because Pod"), std::string::npos)
      << err.str();
}

// kube-inject writes with sigs.k8s.io/yaml: go-yaml v2 folds a long string at column 80.
TEST(IstioInjectCommand, LongStringsAreFoldedAsGoYamlWritesThem) {
  std::string words;
  for (int i = 0; i < 29; ++i) words += "word ";
  words += "word";
  std::istringstream in("apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
                        "    example.com/note: " + words + "\n"
                        "spec:\n  containers:\n  - name: app\n    image: app\n");
  std::ostringstream out, err;
  InjectOptions o = istioOptions("deployment.yaml");
  o.inputs = {"-"};
  EXPECT_EQ(runInject(o, in, out, err), 0) << err.str();
  std::string twelve, sixteen;
  for (int i = 0; i < 11; ++i) twelve += "word ";
  for (int i = 0; i < 15; ++i) sixteen += "word ";
  EXPECT_NE(out.str().find("\n    example.com/note: " + twelve + "word\n      " + sixteen +
                           "word\n      word word\n"),
            std::string::npos)
      << out.str();
}

// Istio's own goldens as whole files (istio.io/istio of 2026-04-23 from the Go module cache,
// ../istio/upstream_support.h): what `istioctl kube-inject -f <input>` prints with the chart's
// ConfigMaps, "---" after every document, a Service written back as it was read, a List
// injected item by item and written as a List (pkg/kube/inject/inject.go IntoResourceFile).
class UpstreamKubeInjectFile : public ::testing::TestWithParam<std::string> {};

TEST_P(UpstreamKubeInjectFile, PrintsIstiosGoldenByteForByte) {
  HARNESS_ISTIO_TREE_OR_SKIP(up, istio::upstream::kIstio131Dev);
  InjectOptions o;
  o.profile = "istio";
  o.inputs = {(up.inject / (GetParam() + ".yaml")).string()};
  o.istio = {up.charts / "istio-sidecar-injector.yaml", up.charts / "istio-sidecar-injector.yaml",
             up.charts / "istio.yaml"};
  o.istio.native_sidecars = true;  // TestInjection's nodes run kubelet 1.33 and 1.34
  std::istringstream in;
  std::ostringstream out, err;
  ASSERT_EQ(runInject(o, in, out, err), 0) << err.str();
  EXPECT_EQ(out.str(), t::readFile(up.inject / (GetParam() + ".yaml.injected")));
}

INSTANTIATE_TEST_SUITE_P(IstioTestInjection, UpstreamKubeInjectFile,
                         ::testing::ValuesIn(istio::upstream::cases(/*with_streams=*/true)),
                         istio::upstream::caseName);

// A document kube-inject cannot read stops the run with the file and document named; a
// separator followed by content is apimachinery's error.
TEST(IstioInjectCommand, AnUnreadableDocumentIsNamed) {
  std::istringstream in("kind: Service\n---\n- 1\n");
  std::ostringstream out, err;
  auto o = istioOptions("deployment.yaml");
  o.inputs = {"-"};
  EXPECT_EQ(runInject(o, in, out, err), 2);
  EXPECT_EQ(err.str(),
            "injector inject: <stdin>: document 2: a document is not an object (got array)\n");
  std::istringstream bad_separator("kind: Service\n--- x\n");
  std::ostringstream out2, err2;
  EXPECT_EQ(runInject(o, bad_separator, out2, err2), 2);
  EXPECT_EQ(err2.str(), "injector inject: <stdin>: invalid Yaml document separator: x\n");
}

}  // namespace
}  // namespace harness::injector
