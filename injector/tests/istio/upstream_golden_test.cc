// Istio's own configuration and Istio's own goldens: the istio-sidecar-injector and istio
// ConfigMaps that Istio's chart renders, and inputs and expected outputs from Istio's
// pkg/kube/inject/testdata/inject, read from istio.io/istio of 2026-04-23 (1.31-dev) in the Go
// module cache when the test runs (upstream_support.h; skipped without it). Each input goes
// through kubeInject (istioctl kube-inject) and must come out as Istio's TestInjection wrote
// it, document by document (Istio's "---" after each document is the writer's, not the
// object's).

#include <gtest/gtest.h>

#include "harness/core/json_patch.h"
#include "harness/core/yaml.h"
#include "harness/injector/istio/config.h"
#include "harness/injector/istio/go_patch.h"
#include "harness/injector/istio/injector.h"
#include "harness/testing/support.h"
#include "upstream_cases.h"
#include "upstream_support.h"

namespace harness::injector::istio {
namespace {

using nlohmann::json;
namespace t = harness::testing;

using upstream::kIstio131Dev;
using upstream::Tree;

InjectorSettings upstreamSettings(const Tree& up, const std::string& mesh_text = "") {
  const std::string injector_cm = t::readFile(up.charts / "istio-sidecar-injector.yaml");
  auto s = loadSettings(injector_cm, injector_cm,
                        mesh_text.empty() ? t::readFile(up.charts / "istio.yaml") : mesh_text);
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : InjectorSettings{};
}

using upstream::expectedDocuments;

void expectUpstreamGolden(const Tree& up, const std::string& name,
                          const InjectorSettings& settings) {
  SCOPED_TRACE(name);
  const auto& dir = up.inject;
  auto inputs = core::parseYamlDocuments(t::readFile(dir / (name + ".yaml")));
  ASSERT_TRUE(inputs.ok());
  const auto want = expectedDocuments(t::readFile(dir / (name + ".yaml.injected")));
  ASSERT_EQ(inputs->size(), want.size());
  for (std::size_t i = 0; i < inputs->size(); ++i) {
    // TestInjection's nodes run kubelet 1.33 and 1.34, so the native-sidecar auto mode is on.
    auto got = kubeInject(settings, (*inputs)[i], nullptr, /*native_sidecars=*/true);
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_EQ(core::toYaml(*got, core::kGoYamlMarshal), want[i]) << "document " << i;
  }
}

class Upstream131Dev : public ::testing::TestWithParam<std::string> {};

TEST_P(Upstream131Dev, KubeInjectMatchesIstiosGolden) {
  HARNESS_ISTIO_TREE_OR_SKIP(up, kIstio131Dev);
  expectUpstreamGolden(up, GetParam(), upstreamSettings(up));
}

// The cases of Istio's TestInjection that run with the chart's default settings.
INSTANTIATE_TEST_SUITE_P(IstioTestInjection, Upstream131Dev,
                         ::testing::ValuesIn(upstream::cases(/*with_streams=*/false)),
                         upstream::caseName);

// The TestInjection cases that change the chart's values (`setFlags`, which only reach the
// ConfigMap's `values`) or the mesh (`mesh`), applied to the same settings.
InjectorSettings withProxyValues(const Tree& up, const json& proxy) {
  auto s = upstreamSettings(up);
  for (auto& [k, v] : proxy.items()) s.values.map["global"]["proxy"][k] = v;
  return s;
}

// The mesh text with `insert` (indented as the line it follows) after the line `after`.
InjectorSettings withMesh(const Tree& up, const std::string& after, const std::string& insert) {
  std::string mesh = configMapValue(t::readFile(up.charts / "istio.yaml"), "mesh").value() + "\n";
  const auto at = mesh.find(after);
  EXPECT_NE(at, std::string::npos) << mesh;
  if (at == std::string::npos) return {};
  const auto line = mesh.rfind('\n', at);
  const std::size_t start = line == std::string::npos ? 0 : line + 1;
  const std::string indent = mesh.substr(start, mesh.find_first_not_of(' ', start) - start);
  std::string indented;
  for (std::size_t pos = 0; pos < insert.size();) {
    const std::size_t end = insert.find('\n', pos);
    indented += indent + insert.substr(pos, end - pos + 1);
    pos = end + 1;
  }
  mesh.insert(at + after.size(), indented);
  return upstreamSettings(up, mesh);
}

TEST(Upstream131DevSettings, StatusParams) {
  HARNESS_ISTIO_TREE_OR_SKIP(up, kIstio131Dev);
  const auto s = withProxyValues(up, {{"statusPort", 123},
                                  {"readinessInitialDelaySeconds", 100},
                                  {"readinessPeriodSeconds", 200},
                                  {"readinessFailureThreshold", 300}});
  for (const char* n : {"status_params", "kubevirtInterfaces", "reroute-virtual-interfaces"}) {
    expectUpstreamGolden(up, n, s);
  }
}

TEST(Upstream131DevSettings, TrafficParams) {
  HARNESS_ISTIO_TREE_OR_SKIP(up, kIstio131Dev);
  expectUpstreamGolden(up, "traffic-params",
                       withProxyValues(up, {{"includeIPRanges", "127.0.0.1/24,10.96.0.1/24"},
                                        {"excludeIPRanges", "10.96.0.2/24,10.96.0.3/24"},
                                        {"excludeInboundPorts", "4,5,6"},
                                        {"statusPort", 0}}));
}

// Its input carries `creationTimestamp: null`, which apimachinery 0.34 and later leave out.
TEST(Upstream131DevSettings, MergeProbersHoldingTheApplication) {
  HARNESS_ISTIO_TREE_OR_SKIP(up, kIstio131Dev);
  expectUpstreamGolden(up, "merge-probers",
                       withProxyValues(up, {{"holdApplicationUntilProxyStarts", true}}));
}

TEST(Upstream131DevSettings, FormatDuration) {
  HARNESS_ISTIO_TREE_OR_SKIP(up, kIstio131Dev);
  expectUpstreamGolden(up, "format-duration",
                       withMesh(up, "discoveryAddress: istiod.istio-system.svc:15012\n",
                                "drainDuration: 23s\n"));
}

TEST(Upstream131DevSettings, LocalhostProbes) {
  HARNESS_ISTIO_TREE_OR_SKIP(up, kIstio131Dev);
  expectUpstreamGolden(up, "hello-probes-localhost",
                       withMesh(up, "rootNamespace: istio-system\n",
                                "inboundTrafficPolicy:\n  mode: LOCALHOST\n"));
}

// TestInjection's OpenShift cases run through the webhook only (runWebhook): the input's pod
// template becomes a Pod owned by a fake ReplicaSet (objectToPod), the webhook's patch is
// applied to it, and the result must equal the golden's pod template once the status
// annotation and fieldRef apiVersions are scrubbed (normalizeAndCompareDeployments). The test
// runs with PLATFORM=openshift, `components.cni.enabled=true` (values.pilot.cni.enabled), and
// a namespace test-ns annotated with OpenShift's ranges.
void expectOpenShiftWebhookGolden(const Tree& up, const std::string& name,
                                  const InjectorSettings& settings) {
  SCOPED_TRACE(name);
  const auto& dir = up.inject;
  auto input = core::parseYaml(t::readFile(dir / (name + ".yaml")));
  auto want = core::parseYaml(t::readFile(dir / (name + ".yaml.injected")));
  ASSERT_TRUE(input.ok() && want.ok());
  AdmissionInput in;
  in.pod = upstream::podFromWorkload(*input);
  in.request_namespace = "test-ns";
  in.native_sidecars = true;  // the test's nodes run kubelet 1.33 and 1.34
  in.openshift = true;
  in.namespace_object = upstream::openShiftTestNamespace();
  const auto outcome = admit(settings, in);
  ASSERT_EQ(outcome.decision, Decision::kInject) << outcome.error_message;
  auto patched = core::applyPatch(goTypedPod(in.pod), outcome.patch);
  ASSERT_TRUE(patched.ok()) << patched.error().message;
  EXPECT_EQ(core::toYaml(upstream::scrubbedPod(*patched)),
            core::toYaml(upstream::scrubbedPod(upstream::podFromWorkload(*want))));
}

TEST(Upstream131DevSettings, OpenShiftWebhook) {
  HARNESS_ISTIO_TREE_OR_SKIP(up, kIstio131Dev);
  auto s = upstreamSettings(up);
  s.values.map["pilot"]["cni"]["enabled"] = true;
  for (const char* n :
       {"hello-openshift", "hello-openshift-tproxy", "hello-openshift-custom-injection"}) {
    expectOpenShiftWebhookGolden(up, n, s);
  }
}

// A chart rendered from Istio's source tree labels its ConfigMap with Chart.yaml's placeholder
// version 1.0.0; that names no release, so the tag ("latest") decides: the newest behaviour.
TEST(UpstreamConfig, SourceTreeChartVersionIsNotARelease) {
  HARNESS_ISTIO_TREE_OR_SKIP(up, kIstio131Dev);
  const auto s = upstreamSettings(up);
  EXPECT_FALSE(s.version.known);
  EXPECT_TRUE(s.version.atLeast(1, 31));
}

// Every template of the chart loads: sidecar, gateway, grpc-simple, grpc-agent, waypoint,
// kube-gateway, agentgateway; each function they call exists.
TEST(UpstreamConfig, EveryChartTemplateLoads) {
  HARNESS_ISTIO_TREE_OR_SKIP(up, kIstio131Dev);
  const auto s = upstreamSettings(up);
  for (const char* name : {"sidecar", "gateway", "grpc-simple", "grpc-agent", "waypoint",
                           "kube-gateway", "agentgateway"}) {
    EXPECT_TRUE(s.config.templates.contains(name)) << name;
  }
}

// kube-inject writes the typed object back: the zero structs and statuses Go's encoder writes.
TEST(GoTypedWorkload, ZeroStructsPerKind) {
  const json deployment = core::parseYaml(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: d}
spec:
  template:
    spec:
      containers: [{name: c, image: i}]
)").value();
  const json d = goTypedWorkload(deployment, false);
  EXPECT_EQ(d["spec"]["strategy"], json::object());
  EXPECT_EQ(d["status"], json::object());
  EXPECT_EQ(d["spec"]["template"]["metadata"], json::object());
  EXPECT_EQ(d["spec"]["template"]["spec"]["containers"][0]["resources"], json::object());

  json ds = deployment;
  ds["kind"] = "DaemonSet";
  const json typed_ds = goTypedWorkload(ds, false);
  EXPECT_EQ(typed_ds["spec"]["updateStrategy"], json::object());
  EXPECT_FALSE(typed_ds["spec"].contains("strategy"));
  EXPECT_EQ(typed_ds["status"], json({{"currentNumberScheduled", 0},
                                      {"numberMisscheduled", 0},
                                      {"desiredNumberScheduled", 0},
                                      {"numberReady", 0}}));

  json rs = deployment;
  rs["kind"] = "ReplicaSet";
  rs["status"] = {{"readyReplicas", 2}};
  EXPECT_EQ(goTypedWorkload(rs, false)["status"], json({{"readyReplicas", 2}, {"replicas", 0}}));

  const json cron = core::parseYaml(R"(
kind: CronJob
spec:
  jobTemplate:
    spec:
      template:
        spec:
          containers: [{name: c}]
)").value();
  const json c = goTypedWorkload(cron, false);
  EXPECT_EQ(c["spec"]["jobTemplate"]["spec"]["template"]["metadata"], json::object());
  EXPECT_EQ(c["status"], json::object());

  // Before apimachinery 0.34 every ObjectMeta without one says `creationTimestamp: null`;
  // since, a null one is left out.
  const json old_cron = goTypedWorkload(cron, true);
  EXPECT_TRUE(old_cron["metadata"]["creationTimestamp"].is_null());
  EXPECT_TRUE(old_cron["metadata"].contains("creationTimestamp"));
  EXPECT_TRUE(old_cron["spec"]["jobTemplate"]["metadata"].contains("creationTimestamp"));
  EXPECT_TRUE(
      old_cron["spec"]["jobTemplate"]["spec"]["template"]["metadata"].contains("creationTimestamp"));
  json stamped = deployment;
  stamped["metadata"]["creationTimestamp"] = nullptr;
  stamped["spec"]["template"]["metadata"] = {{"creationTimestamp", nullptr}};
  const json new_d = goTypedWorkload(stamped, false);
  EXPECT_FALSE(new_d["metadata"].contains("creationTimestamp"));
  EXPECT_EQ(new_d["spec"]["template"]["metadata"], json::object());
  stamped["metadata"]["creationTimestamp"] = "2026-01-01T00:00:00Z";
  EXPECT_EQ(goTypedWorkload(stamped, false)["metadata"]["creationTimestamp"],
            "2026-01-01T00:00:00Z");

  // OpenShift's DeploymentConfig: its strategy struct (resources always written), triggers,
  // replicas and test without omitempty, zero minReadySeconds, paused and `automatic` left
  // out, and its status's six counters.
  const json dc = core::parseYaml(R"(
apiVersion: apps.openshift.io/v1
kind: DeploymentConfig
metadata: {name: dc}
spec:
  minReadySeconds: 0
  paused: false
  strategy: {type: Rolling}
  triggers:
  - type: ImageChange
    imageChangeParams: {automatic: false, containerNames: [c]}
  template:
    spec:
      containers: [{name: c, image: i}]
)").value();
  const json typed_dc = goTypedWorkload(dc, false);
  EXPECT_EQ(typed_dc["spec"]["strategy"], json({{"type", "Rolling"}, {"resources", json::object()}}));
  EXPECT_EQ(typed_dc["spec"]["replicas"], 0);
  EXPECT_EQ(typed_dc["spec"]["test"], false);
  EXPECT_FALSE(typed_dc["spec"].contains("minReadySeconds"));
  EXPECT_FALSE(typed_dc["spec"].contains("paused"));
  EXPECT_EQ(typed_dc["spec"]["triggers"][0]["imageChangeParams"],
            json({{"containerNames", {"c"}}, {"from", json::object()}}));
  EXPECT_EQ(typed_dc["spec"]["template"]["spec"]["containers"][0]["resources"], json::object());
  EXPECT_EQ(typed_dc["status"], json({{"latestVersion", 0},
                                      {"observedGeneration", 0},
                                      {"replicas", 0},
                                      {"updatedReplicas", 0},
                                      {"availableReplicas", 0},
                                      {"unavailableReplicas", 0}}));
  json no_triggers = dc;
  no_triggers["spec"].erase("triggers");
  EXPECT_TRUE(goTypedWorkload(no_triggers, false)["spec"]["triggers"].is_null());
  EXPECT_TRUE(goTypedWorkload(no_triggers, false)["spec"].contains("triggers"));

  json service = {{"kind", "Service"}, {"spec", {{"ports", json::array()}}}};
  EXPECT_EQ(goTypedWorkload(service, false), service);
}

}  // namespace
}  // namespace harness::injector::istio
