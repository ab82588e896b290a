// `injector inject --profile istio` (istioctl kube-inject, docs/istio-injector.md §5.1): the
// offline command prints what the library golden tests expect, for a CronJob and a Deployment.

#include <gtest/gtest.h>

#include <sstream>

#include "harness/testing/support.h"
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
  EXPECT_EQ(out.str(), t::readFile(goldenDir() / "cronjob.yaml.injected"));
}

TEST(IstioInjectCommand, DeploymentMatchesTheLibraryGolden) {
  std::istringstream in;
  std::ostringstream out, err;
  EXPECT_EQ(runInject(istioOptions("deployment.yaml"), in, out, err), 0) << err.str();
  EXPECT_EQ(out.str(), t::readFile(goldenDir() / "deployment.yaml.injected"));
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

}  // namespace
}  // namespace harness::injector
