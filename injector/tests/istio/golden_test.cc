// Golden tests of Istio-style injection with this project's default template
// (injector/istio/). Inputs are modelled on istio/istio pkg/kube/inject/testdata/inject/*.yaml
// shapes (docs/istio-injector.md §2-§5.1); the expected files live beside them as
// <name>.yaml.injected. Refresh them explicitly with HARNESS_UPDATE_GOLDEN=1; without it a
// missing or different file fails the test.

#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>

#include "harness/core/json_patch.h"
#include "harness/core/yaml.h"
#include "harness/injector/istio/go_patch.h"
#include "harness/injector/istio/injector.h"
#include "harness/testing/support.h"

namespace harness::injector::istio {
namespace {

using nlohmann::json;
namespace t = harness::testing;

std::filesystem::path dataDir() { return t::sourceDir() / "injector" / "istio"; }
std::filesystem::path goldenDir() {
  return t::sourceDir() / "injector" / "tests" / "istio" / "testdata" / "golden";
}

InjectorSettings defaults() {
  auto s = loadSettings(t::readFile(dataDir() / "sidecar-injector-config.yaml"),
                        t::readFile(dataDir() / "values.json"), t::readFile(dataDir() / "mesh.yaml"));
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : InjectorSettings{};
}

json readInput(const std::string& name) {
  auto doc = core::parseYaml(t::readFile(goldenDir() / (name + ".yaml")));
  EXPECT_TRUE(doc.ok());
  return doc.ok() ? *doc : json();
}

void compareGolden(const std::string& name, const std::string& actual) {
  const auto path = goldenDir() / (name + ".yaml.injected");
  const char* update = std::getenv("HARNESS_UPDATE_GOLDEN");
  if (update != nullptr && std::string(update) == "1") t::writeFile(path, actual);
  ASSERT_TRUE(std::filesystem::exists(path)) << path << " missing; HARNESS_UPDATE_GOLDEN=1";
  EXPECT_EQ(actual, t::readFile(path)) << "refresh with HARNESS_UPDATE_GOLDEN=1 if intended";
}

Outcome admitFile(const std::string& name, const InjectorSettings& settings, bool native = true) {
  AdmissionInput in;
  in.pod = readInput(name);
  if (in.pod.is_null()) return {};
  in.request_namespace = "default";
  in.native_sidecars = native;
  return admit(settings, in);
}

std::string render(const Outcome& o) {
  json out = o.toJson();
  out.erase("logs");
  out["pod"] = o.injected_pod;
  return core::toYaml(out);
}

void runPodGolden(const std::string& name, const InjectorSettings& settings, bool native = true) {
  compareGolden(name, render(admitFile(name, settings, native)));
}

// The same input as another golden, under its own expected file.
void runPodGoldenFrom(const std::string& input, const std::string& name,
                      const InjectorSettings& settings, bool native) {
  compareGolden(name, render(admitFile(input, settings, native)));
}

InjectorSettings withCni(const std::string& provider = "") {
  auto s = defaults();
  s.values.map["pilot"]["cni"]["enabled"] = true;
  if (!provider.empty()) s.values.map["pilot"]["cni"]["provider"] = provider;
  return s;
}

// "op path" of every operation, in order.
std::vector<std::string> opList(const core::JsonPatch& patch) {
  std::vector<std::string> out;
  for (const auto& op : patch) out.push_back(op.op + " " + op.path);
  return out;
}

TEST(IstioGolden, PlainPod) { runPodGolden("hello", defaults()); }
TEST(IstioGolden, Probes) { runPodGolden("probes", defaults()); }
TEST(IstioGolden, MultiContainerFromDeploymentReplicaSet) {
  runPodGolden("multi-container", defaults());
}
TEST(IstioGolden, HostNetworkIsSkipped) { runPodGolden("host-network", defaults()); }
TEST(IstioGolden, ClassicWithHold) { runPodGolden("classic", defaults()); }
TEST(IstioGolden, ResourceAnnotations) { runPodGolden("resources", defaults()); }
TEST(IstioGolden, TrafficAnnotations) { runPodGolden("traffic", defaults()); }
TEST(IstioGolden, TrafficAnnotationsInvalid) { runPodGolden("traffic-bad", defaults()); }
TEST(IstioGolden, UnknownTemplateIsAnError) { runPodGolden("unknown-template", defaults()); }
TEST(IstioGolden, ProxyOverride) { runPodGolden("proxy-override", defaults()); }
TEST(IstioGolden, ClassicWithoutHold) { runPodGoldenFrom("hello", "hello-classic", defaults(), false); }
TEST(IstioGolden, AlreadyInjectedPodIsReinjected) { runPodGolden("already-injected", defaults()); }
TEST(IstioGolden, InterceptionNoneClassicHasNoInitContainer) {
  runPodGolden("interception-none", defaults(), false);
}
TEST(IstioGolden, ProxyConfigAnnotation) { runPodGolden("proxy-config", defaults()); }
TEST(IstioGolden, ProxyConfigAnnotationInvalid) { runPodGolden("proxy-config-bad", defaults()); }
TEST(IstioGolden, CniClassicWithUserProxySecurityContext) {
  runPodGolden("cni", withCni(), false);
}
TEST(IstioGolden, CniNativeWithMultus) { runPodGolden("cni-multus", withCni("multus")); }

TEST(IstioGolden, CustomTemplateSelection) {
  auto s = defaults();
  auto extra = parseInjectorConfig(
      "templates:\n  custom: |\n    metadata:\n      labels:\n        custom: \"yes\"\n"
      "    spec:\n      containers:\n      - name: app\n        env:\n        - {name: CUSTOM, value: \"1\"}\n");
  ASSERT_TRUE(extra.ok()) << extra.error().message;
  s.config.raw_templates["custom"] = extra->raw_templates["custom"];
  s.config.templates.emplace("custom", extra->templates.at("custom"));
  runPodGolden("custom-template", s);
}

TEST(IstioGolden, ImagePullSecretsFromValuesComeFirst) {
  auto s = defaults();
  s.values.map["global"]["imagePullSecrets"] = json::array({"barSecret"});
  runPodGolden("image-pull-secrets", s);
}

TEST(IstioGolden, KubeInjectDeployment) {
  std::vector<std::string> warnings;
  auto r = kubeInject(defaults(), readInput("deployment"), &warnings);
  ASSERT_TRUE(r.ok()) << r.error().message;
  compareGolden("deployment", core::toYaml(*r, core::kGoYamlMarshal));
}

TEST(IstioGolden, KubeInjectCronJobUsesJobTemplateMetadata) {
  auto r = kubeInject(defaults(), readInput("cronjob"));
  ASSERT_TRUE(r.ok()) << r.error().message;
  compareGolden("cronjob", core::toYaml(*r, core::kGoYamlMarshal));
  EXPECT_TRUE((*r)["spec"]["jobTemplate"]["metadata"]["annotations"].contains(
      "sidecar.istio.io/status"));
}

TEST(IstioInject, KubeInjectSkipsHostNetworkWithIstiosWarning) {
  std::vector<std::string> warnings;
  json d = readInput("deployment");
  d["spec"]["template"]["spec"]["hostNetwork"] = true;
  auto r = kubeInject(defaults(), d, &warnings);
  ASSERT_TRUE(r.ok());
  // Not injected, but written back as the typed object kube-inject decoded (hello-host-network
  // in Istio's testdata).
  EXPECT_EQ(*r, goTypedWorkload(d, false));
  EXPECT_EQ((*r)["spec"]["strategy"], json::object());
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_EQ(warnings[0],
            "===> Skipping injection because Deployment \"default/hello\" has host networking "
            "enabled\n");
}

// Re-injecting the injected pod changes nothing (docs/istio-injector.md §3).
void expectIdempotent(const std::string& name, bool native,
                      const InjectorSettings& s = defaults()) {
  auto first = admitFile(name, s, native);
  ASSERT_EQ(first.decision, Decision::kInject) << first.error_message;
  AdmissionInput again;
  again.pod = first.injected_pod;
  again.native_sidecars = native;
  auto second = admit(s, again);
  ASSERT_EQ(second.decision, Decision::kInject) << second.error_message;
  EXPECT_EQ(core::encodePatch(second.patch), json::array()) << name;
}

TEST(IstioInject, ReinjectionIsIdempotentNative) { expectIdempotent("hello", true); }
TEST(IstioInject, ReinjectionIsIdempotentClassic) { expectIdempotent("hello", false); }
TEST(IstioInject, ReinjectionIsIdempotentWithProbes) { expectIdempotent("probes", true); }
TEST(IstioInject, ReinjectionIsIdempotentWithPrometheus) { expectIdempotent("traffic", true); }
TEST(IstioInject, ReinjectionIsIdempotentWithCni) {
  expectIdempotent("cni-multus", false, withCni("multus"));
  expectIdempotent("cni-multus", true, withCni("multus"));
}

// kube-apiserver applies the patch to its own encoding of the pod, which has Go's shape.
void expectPatchGivesInjectedPod(const std::string& name, const InjectorSettings& settings,
                                 bool native) {
  auto o = admitFile(name, settings, native);
  ASSERT_EQ(o.decision, Decision::kInject) << o.error_message;
  json original = goTypedPod(goPodRoundTrip(readInput(name)));
  auto applied = core::applyPatch(original, o.patch);
  ASSERT_TRUE(applied.ok()) << applied.error().message;
  EXPECT_EQ(*applied, goTypedPod(o.injected_pod)) << name;
}

TEST(IstioInject, PatchAppliedToOriginalGivesInjectedPod) {
  expectPatchGivesInjectedPod("probes", defaults(), true);
  expectPatchGivesInjectedPod("classic", defaults(), false);
  expectPatchGivesInjectedPod("already-injected", defaults(), true);
  expectPatchGivesInjectedPod("cni", withCni(), false);
}

// gomodules jsonpatch CreatePatch over the Go-typed pods (webhook.go createPatch): members of
// the injected pod first, arrays grown at the end and then compared index by index.
TEST(IstioPatch, PlainPodOperations) {
  auto o = admitFile("hello", defaults());
  EXPECT_EQ(opList(o.patch),
            (std::vector<std::string>{"add /metadata/annotations",
                                      "add /metadata/labels/security.istio.io~1tlsMode",
                                      "add /metadata/labels/service.istio.io~1canonical-name",
                                      "add /metadata/labels/service.istio.io~1canonical-revision",
                                      "add /spec/initContainers", "add /spec/volumes"}));
}

TEST(IstioPatch, PlainPodClassicAppendsTheProxyContainer) {
  auto o = admitFile("hello", defaults(), false);
  const auto ops = opList(o.patch);
  ASSERT_EQ(ops.size(), 7u);
  EXPECT_EQ(ops[4], "add /spec/containers/1");
  EXPECT_EQ(ops[5], "add /spec/initContainers");
  EXPECT_EQ(o.patch[4].value->at("name"), "istio-proxy");
}

TEST(IstioPatch, ProbesPodOperations) {
  auto o = admitFile("probes", defaults());
  EXPECT_EQ(opList(o.patch),
            (std::vector<std::string>{
                "add /metadata/annotations",
                "add /metadata/labels/security.istio.io~1tlsMode",
                "add /metadata/labels/service.istio.io~1canonical-name",
                "add /metadata/labels/service.istio.io~1canonical-revision",
                "add /spec/containers/0/lifecycle/postStart/httpGet",
                "remove /spec/containers/0/lifecycle/postStart/tcpSocket",
                "add /spec/containers/0/lifecycle/preStop/httpGet/path",
                "replace /spec/containers/0/lifecycle/preStop/httpGet/port",
                "add /spec/containers/0/livenessProbe/httpGet",
                "remove /spec/containers/0/livenessProbe/tcpSocket",
                "replace /spec/containers/0/readinessProbe/httpGet/path",
                "replace /spec/containers/0/readinessProbe/httpGet/port",
                "replace /spec/containers/0/readinessProbe/httpGet/scheme",
                "add /spec/containers/0/startupProbe/httpGet",
                "remove /spec/containers/0/startupProbe/grpc",
                "add /spec/containers/1/livenessProbe/httpGet/path",
                "replace /spec/containers/1/livenessProbe/httpGet/port",
                // other-sidecar stays at index 0 for Go: istio-init is written over it and the
                // rewritten other-sidecar is appended after istio-proxy.
                "add /spec/initContainers/1",
                "add /spec/initContainers/2",
                "add /spec/initContainers/0/args",
                "replace /spec/initContainers/0/image",
                "replace /spec/initContainers/0/name",
                "add /spec/initContainers/0/resources/limits",
                "add /spec/initContainers/0/resources/requests",
                "add /spec/initContainers/0/securityContext",
                "remove /spec/initContainers/0/readinessProbe",
                "remove /spec/initContainers/0/restartPolicy",
                "add /spec/volumes",
            }));
  EXPECT_EQ(o.patch[17].value->at("name"), "istio-proxy");
  EXPECT_EQ(o.patch[18].value->at("name"), "other-sidecar");
}

TEST(IstioInject, NativeLayoutPutsProxyAfterInit) {
  auto o = admitFile("hello", defaults(), true);
  const auto& inits = o.injected_pod["spec"]["initContainers"];
  ASSERT_EQ(inits.size(), 2u);
  EXPECT_EQ(inits[0]["name"], "istio-init");
  EXPECT_EQ(inits[1]["name"], "istio-proxy");
  EXPECT_EQ(inits[1]["restartPolicy"], "Always");
}

TEST(IstioInject, StatusAnnotationHasIstiosFields) {
  auto o = admitFile("hello", defaults(), false);
  EXPECT_EQ(o.injected_pod["metadata"]["annotations"]["sidecar.istio.io/status"],
            "{\"initContainers\":[\"istio-init\"],\"containers\":[\"istio-proxy\"],\"volumes\":["
            "\"workload-socket\",\"credential-socket\",\"workload-certs\",\"istio-envoy\","
            "\"istio-data\",\"istio-podinfo\",\"istio-token\",\"istiod-ca-cert\",\"istio-ca-crl\"],"
            "\"imagePullSecrets\":null,\"revision\":\"default\"}");
}

TEST(IstioInject, ResourceAnnotationsDropValuesResources) {
  auto o = admitFile("resources", defaults());
  const auto& proxy = o.injected_pod["spec"]["initContainers"][1];
  EXPECT_EQ(proxy["resources"], (json{{"requests", {{"cpu", "4"}}}, {"limits", {{"memory", "2Gi"}}}}));
}

TEST(IstioInject, InjectedAnnotationsAreAppliedLast) {
  auto s = defaults();
  s.config.injected_annotations["sidecar.istio.io/status"] = "overwritten";
  auto o = admitFile("hello", s);
  EXPECT_EQ(o.injected_pod["metadata"]["annotations"]["sidecar.istio.io/status"], "overwritten");
}

Outcome admitWithAnnotations(const InjectorSettings& s, const json& annotations) {
  AdmissionInput in;
  in.pod = readInput("hello");
  in.pod["metadata"]["annotations"] = annotations;
  in.request_namespace = "default";
  return admit(s, in);
}

TEST(IstioVersion, ParsedFromTagsAndLabels) {
  EXPECT_TRUE(IstioVersion::parse("1.30.3").known);
  EXPECT_EQ(IstioVersion::parse("1.31.0-beta.1").minor, 31);
  EXPECT_EQ(IstioVersion::parse("v1.24.6-distroless").minor, 24);
  for (const char* unknown : {"latest", "", "1", "1.x", "abc123", "1.30x"}) {
    EXPECT_FALSE(IstioVersion::parse(unknown).known) << unknown;
  }
  EXPECT_FALSE(IstioVersion::parse("1.30.3").atLeast(1, 31));
  EXPECT_TRUE(IstioVersion::parse("1.31.0").atLeast(1, 31));
  EXPECT_TRUE(IstioVersion::parse("latest").atLeast(1, 31));  // unknown: the newest behaviour
  // From a dumped ConfigMap's label, else values.global.tag.
  auto s = loadSettings(
      "kind: ConfigMap\nmetadata:\n  labels:\n    app.kubernetes.io/version: 1.29.2\n"
      "data:\n  config: 'policy: enabled'\n",
      "{\"global\": {\"tag\": \"1.31.0\"}}", "");
  ASSERT_TRUE(s.ok()) << s.error().message;
  EXPECT_EQ(s->version.minor, 29);
  s = loadSettings("policy: enabled", "{\"global\": {\"tag\": \"1.31.0\"}}", "");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->version.minor, 31);
}

// appendMultusNetwork's JSON form follows the release the configuration says it is: 1.24 and
// before append {"name": "default/istio-cni"}, 1.25 and later (and an unknown release) split it
// into name and namespace (istio/istio#55000).
TEST(IstioVersion, MultusNetworkFormFollowsTheRelease) {
  const std::string config =
      "policy: enabled\ntemplates:\n  sidecar: |\n    metadata:\n      annotations:\n"
      "        k8s.v1.cni.cncf.io/networks: '{{ appendMultusNetwork "
      "(index .ObjectMeta.Annotations `k8s.v1.cni.cncf.io/networks`) `default/istio-cni` }}'\n";
  const auto networks = [&](const std::string& injector_config, const std::string& tag) {
    auto s = loadSettings(injector_config, "{\"global\": {\"tag\": \"" + tag + "\"}}", "");
    EXPECT_TRUE(s.ok()) << s.error().message;
    if (!s.ok()) return std::string();
    auto o = admitWithAnnotations(*s, {{"k8s.v1.cni.cncf.io/networks", R"([{"name": "a"}])"}});
    EXPECT_EQ(o.decision, Decision::kInject) << o.error_message;
    return o.injected_pod["metadata"]["annotations"].value("k8s.v1.cni.cncf.io/networks", "");
  };
  const std::string split = R"([{"name": "a"}, {"name": "istio-cni", "namespace": "default"}])";
  const std::string whole = R"([{"name": "a"}, {"name": "default/istio-cni"}])";
  EXPECT_EQ(networks(config, "1.24.6"), whole);
  EXPECT_EQ(networks(config, "1.23.0-distroless"), whole);
  EXPECT_EQ(networks(config, "1.25.0"), split);
  EXPECT_EQ(networks(config, "1.31.0"), split);
  EXPECT_EQ(networks(config, "latest"), split);
  // The dumped ConfigMap's label wins over the tag.
  const std::string dumped =
      "kind: ConfigMap\nmetadata:\n  labels:\n    app.kubernetes.io/version: 1.24.2\n"
      "data:\n  config: |\n" +
      [&] {
        std::string indented;
        for (std::size_t pos = 0; pos < config.size();) {
          const std::size_t end = config.find('\n', pos);
          indented += "    " + config.substr(pos, end - pos + 1);
          pos = end + 1;
        }
        return indented;
      }();
  EXPECT_EQ(networks(dumped, "1.31.0"), whole);
}

// .CompliancePolicy is istiod's COMPLIANCE_POLICY (pkg/features/security.go), unset: "".
TEST(IstioInject, CompliancePolicyIsIstiodsEnvironment) {
  const std::string config =
      "policy: enabled\ntemplates:\n  sidecar: |\n    metadata:\n      annotations:\n"
      "        policy: '{{ .CompliancePolicy }}'\n";
  const std::string values = t::readFile(dataDir() / "values.json");
  for (const auto& [env, want] : std::vector<std::pair<gotemplate::Environment, std::string>>{
           {{{"COMPLIANCE_POLICY", "fips-140-3"}}, "fips-140-3"}, {{}, ""}}) {
    auto s = loadSettings(config, values, "", env);
    ASSERT_TRUE(s.ok()) << s.error().message;
    auto o = admitWithAnnotations(*s, json::object());
    ASSERT_EQ(o.decision, Decision::kInject) << o.error_message;
    EXPECT_EQ(o.injected_pod["metadata"]["annotations"]["policy"], want);
  }
}

TEST(IstioInject, PrometheusPortNamingAnIstioPortIsRefusedSince131) {
  auto current = defaults();  // values.global.tag "latest": the newest behaviour
  auto o = admitWithAnnotations(current, {{"prometheus.io/port", "15090"}});
  ASSERT_EQ(o.decision, Decision::kError);
  EXPECT_EQ(o.error_message,
            "failed to process pod: invalid prometheus scrape configuration: port 15090 is "
            "reserved for Istio (Envoy Prometheus (already merged)) and cannot be scraped");
  o = admitWithAnnotations(current, {{"prometheus.io/port", "+15000"}});
  EXPECT_EQ(o.error_message,
            "failed to process pod: invalid prometheus scrape configuration: port +15000 is "
            "reserved for Istio (Envoy admin) and cannot be scraped");
  o = admitWithAnnotations(current, {{"prometheus.io/port", "http"}});
  EXPECT_EQ(o.error_message,
            "failed to process pod: invalid prometheus scrape configuration: invalid port "
            "\"http\"");
  o = admitWithAnnotations(current, {{"prometheus.io/port", "70000"}});
  EXPECT_EQ(o.decision, Decision::kError);
  // The agent's own port is left alone (already merged), other ports are merged.
  EXPECT_EQ(admitWithAnnotations(current, {{"prometheus.io/port", "15020"}}).decision,
            Decision::kInject);
  o = admitWithAnnotations(current, {{"prometheus.io/port", "8080"}});
  ASSERT_EQ(o.decision, Decision::kInject) << o.error_message;
  EXPECT_EQ(o.injected_pod["metadata"]["annotations"]["prometheus.io/port"], "15020");
  // A 1.30 configuration checks nothing.
  auto r130 = defaults();
  r130.version = IstioVersion::parse("1.30.3");
  o = admitWithAnnotations(r130, {{"prometheus.io/port", "15090"}});
  ASSERT_EQ(o.decision, Decision::kInject) << o.error_message;
  EXPECT_EQ(o.injected_pod["metadata"]["annotations"]["prometheus.io/port"], "15020");
}

// The proxy's ISTIO_PROMETHEUS_ANNOTATIONS, or "" when it has none.
std::string prometheusEnv(const Outcome& o) {
  for (const char* list : {"containers", "initContainers"}) {
    for (const auto& c : o.injected_pod["spec"].value(list, json::array())) {
      if (c.value("name", "") != "istio-proxy") continue;
      for (const auto& e : c.value("env", json::array())) {
        if (e.value("name", "") == "ISTIO_PROMETHEUS_ANNOTATIONS") return e.value("value", "");
      }
    }
  }
  return "";
}

// status.PrometheusScrapeConfiguration as encoding/json writes it: the struct's field order.
TEST(IstioInject, PrometheusAnnotationsReachTheAgentInGosFieldOrder) {
  auto o = admitWithAnnotations(defaults(), {{"prometheus.io/port", "8080"},
                                             {"prometheus.io/path", "/m"},
                                             {"prometheus.io/scrape", "true"}});
  ASSERT_EQ(o.decision, Decision::kInject) << o.error_message;
  EXPECT_EQ(prometheusEnv(o), R"({"scrape":"true","path":"/m","port":"8080"})");
}

TEST(IstioInject, PrometheusScrapeTargetsSince131) {
  const char* kTargets = "prometheus.istio.io/scrape-targets";
  auto current = defaults();
  // Entries and both halves trimmed, empty entries skipped, no path or an empty one /metrics;
  // the first target is also the legacy port and path, which it overrides.
  auto o = admitWithAnnotations(current, {{kTargets, " 8080 : /a , ,9100:/custom, 9200: ,9300"},
                                          {"prometheus.io/port", "15090"}});
  ASSERT_EQ(o.decision, Decision::kInject) << o.error_message;
  EXPECT_EQ(prometheusEnv(o),
            R"({"scrape":"","path":"/a","port":"8080","targets":[{"port":"8080","path":"/a"},)"
            R"({"port":"9100","path":"/custom"},{"port":"9200","path":"/metrics"},)"
            R"({"port":"9300","path":"/metrics"}]})");
  const json& annotations = o.injected_pod["metadata"]["annotations"];
  EXPECT_FALSE(annotations.contains(kTargets));
  EXPECT_EQ(annotations["prometheus.io/port"], "15020");
  // Any spelling Prometheus reads the same.
  o = admitWithAnnotations(current, {{"prometheus.istio.io.scrape-targets", "8080"}});
  ASSERT_EQ(o.decision, Decision::kInject) << o.error_message;
  EXPECT_FALSE(o.injected_pod["metadata"]["annotations"].contains(
      "prometheus.istio.io.scrape-targets"));
  // Every target is checked.
  const std::string prefix = "failed to process pod: invalid prometheus scrape targets: ";
  o = admitWithAnnotations(current, {{kTargets, "9100,15020:/x"}});
  EXPECT_EQ(o.error_message, prefix + "target port 15020 conflicts with agent port");
  o = admitWithAnnotations(current, {{kTargets, "8080,+15090"}});
  EXPECT_EQ(o.error_message, prefix + "target port +15090 is reserved for Istio (Envoy "
                                      "Prometheus (already merged)) and cannot be scraped");
  o = admitWithAnnotations(current, {{kTargets, "http:/metrics"}});
  EXPECT_EQ(o.error_message, prefix + "invalid target port \"http\"");
  o = admitWithAnnotations(current, {{kTargets, "0"}});
  EXPECT_EQ(o.error_message, prefix + "invalid target port \"0\"");
  // An entry without a port voids the annotation (Istio logs it): the legacy port is checked,
  // and the annotation still goes.
  o = admitWithAnnotations(current, {{kTargets, "8080, :/x"}, {"prometheus.io/port", "15000"}});
  EXPECT_EQ(o.error_message, "failed to process pod: invalid prometheus scrape configuration: "
                             "port 15000 is reserved for Istio (Envoy admin) and cannot be "
                             "scraped");
  o = admitWithAnnotations(current, {{kTargets, "8080, :/x"}});
  ASSERT_EQ(o.decision, Decision::kInject) << o.error_message;
  EXPECT_EQ(prometheusEnv(o), "");
  EXPECT_FALSE(o.injected_pod["metadata"]["annotations"].contains(kTargets));
  // Up to 1.30 the annotation is the user's and means nothing.
  auto r130 = defaults();
  r130.version = IstioVersion::parse("1.30.3");
  o = admitWithAnnotations(r130, {{kTargets, "15090"}});
  ASSERT_EQ(o.decision, Decision::kInject) << o.error_message;
  EXPECT_EQ(o.injected_pod["metadata"]["annotations"][kTargets], "15090");
  EXPECT_EQ(prometheusEnv(o), "");
}

TEST(IstioInject, SecureMergedMetricsPortIsAnnotatedSince131) {
  const char* kSecure = "prometheus.istio.io/secure-port";
  auto port = [](const std::string& value) {
    return json{{"proxy.istio.io/config",
                 R"({"proxyMetadata":{"ENVOY_SECURE_MERGED_METRICS_PORT":")" + value + "\"}}"}};
  };
  auto current = defaults();
  auto o = admitWithAnnotations(current, port("15092"));
  ASSERT_EQ(o.decision, Decision::kInject) << o.error_message;
  EXPECT_EQ(o.injected_pod["metadata"]["annotations"][kSecure], "15092");
  for (const char* off : {"0", ""}) {
    o = admitWithAnnotations(current, port(off));
    ASSERT_EQ(o.decision, Decision::kInject) << o.error_message;
    EXPECT_FALSE(o.injected_pod["metadata"]["annotations"].contains(kSecure)) << off;
  }
  // The user's own, in any spelling, is left alone.
  json mine = port("15092");
  mine["prometheus.istio.io.secure-port"] = "9443";
  o = admitWithAnnotations(current, mine);
  ASSERT_EQ(o.decision, Decision::kInject) << o.error_message;
  EXPECT_FALSE(o.injected_pod["metadata"]["annotations"].contains(kSecure));
  EXPECT_EQ(o.injected_pod["metadata"]["annotations"]["prometheus.istio.io.secure-port"], "9443");
  auto r130 = defaults();
  r130.version = IstioVersion::parse("1.30.3");
  o = admitWithAnnotations(r130, port("15092"));
  ASSERT_EQ(o.decision, Decision::kInject) << o.error_message;
  EXPECT_FALSE(o.injected_pod["metadata"]["annotations"].contains(kSecure));
}

TEST(IstioInject, UnsetProxyConfigEnumsRenderTheirNamesThroughTheInjector) {
  // A template reading the fields the way Istio's does, on the shipped mesh config (which,
  // like the chart's, never sets interceptionMode).
  auto s = loadSettings(
      "policy: enabled\ntemplates:\n  sidecar: |\n    metadata:\n      annotations:\n"
      "        mode: \"{{ annotation .ObjectMeta `sidecar.istio.io/interceptionMode` "
      ".ProxyConfig.InterceptionMode }}\"\n"
      "        env: \"{{ .ProxyConfig.InterceptionMode.String }}\"\n"
      "        pc: '{{ protoToJSON .ProxyConfig }}'\n",
      t::readFile(dataDir() / "values.json"),
      "defaultConfig:\n  interceptionMode: REDIRECT\n  statusPort: 15020\n  meshId: ''\n");
  ASSERT_TRUE(s.ok()) << s.error().message;
  auto o = admitWithAnnotations(*s, json::object());
  ASSERT_EQ(o.decision, Decision::kInject) << o.error_message;
  const auto& a = o.injected_pod["metadata"]["annotations"];
  EXPECT_EQ(a["mode"], "REDIRECT");
  EXPECT_EQ(a["env"], "REDIRECT");
  EXPECT_EQ(a["pc"], "{}");  // spelled-out defaults are not proto3 JSON
}

TEST(IstioInject, UrlClusterEnvGoesLastSorted) {
  AdmissionInput in;
  in.pod = readInput("hello");
  in.proxy_envs = {{"ISTIO_META_NETWORK", "n2"}, {"ISTIO_META_CLUSTER_ID", "c2"}};
  auto o = admit(defaults(), in);
  ASSERT_EQ(o.decision, Decision::kInject) << o.error_message;
  const auto& env = o.injected_pod["spec"]["initContainers"][1]["env"];
  const auto n = env.size();
  EXPECT_EQ(env[n - 2], (json{{"name", "ISTIO_META_CLUSTER_ID"}, {"value", "c2"}}));
  EXPECT_EQ(env[n - 1], (json{{"name", "ISTIO_META_NETWORK"}, {"value", "n2"}}));
  EXPECT_EQ(o.injected_pod["metadata"]["labels"]["topology.istio.io/network"], "n2");
}

TEST(DeployMeta, CronJobFromJobName) {
  json pod = {{"metadata",
               {{"name", "x"}, {"generateName", "hellocron-28123456-"},
                {"ownerReferences",
                 json::array({{{"apiVersion", "batch/v1"}, {"kind", "Job"},
                               {"name", "hellocron-28123456"}, {"controller", true}}})}}}};
  auto [deploy, type] = deployMetaFromPod(pod);
  EXPECT_EQ(deploy["name"], "hellocron");
  EXPECT_EQ(type, (json{{"kind", "CronJob"}, {"apiVersion", "batch/v1"}}));
}

TEST(Quantity, CanonicalForms) {
  EXPECT_EQ(canonicalQuantity("2000m"), "2");
  EXPECT_EQ(canonicalQuantity("1024Mi"), "1Gi");
  EXPECT_EQ(canonicalQuantity("100m"), "100m");
  EXPECT_EQ(canonicalQuantity("128Mi"), "128Mi");
  EXPECT_EQ(canonicalQuantity("1000Mi"), "1000Mi");
}

}  // namespace
}  // namespace harness::injector::istio
