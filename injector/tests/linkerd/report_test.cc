#include "harness/injector/linkerd/report.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "fixtures.h"

namespace harness::injector::linkerd {
namespace {

using nlohmann::json;
using testing::pod;

Report reportFor(const json& object, const std::string& ns_inject = "", bool projection = true,
                 const std::string& request_kind = "Pod") {
  auto w = parseWorkload(object, request_kind);
  EXPECT_TRUE(w.ok()) << (w.ok() ? "" : w.error().message);
  return makeReport(*w, ns_inject, projection);
}

// --- The inject-annotation truth table (docs/linkerd-injector.md §1.2), namespace x workload. ---

struct TruthRow {
  const char* ns;   // "" = absent
  const char* pod;  // "" = absent
  std::optional<Reason> reason;
  const char* annotation_at;
};

class InjectAnnotationTruthTable : public ::testing::TestWithParam<TruthRow> {};

TEST_P(InjectAnnotationTruthTable, ReasonAndAnnotationAt) {
  const TruthRow& row = GetParam();
  std::map<std::string, std::string> annotations;
  if (*row.pod != '\0') annotations["linkerd.io/inject"] = row.pod;
  const Report r = reportFor(pod(annotations), row.ns);
  const std::vector<Reason> reasons = r.reasons();
  if (row.reason) {
    ASSERT_EQ(reasons.size(), 1u);
    EXPECT_EQ(reasonCode(reasons[0]), reasonCode(*row.reason));
    EXPECT_FALSE(r.injectable());
  } else {
    EXPECT_TRUE(reasons.empty()) << r.reasonCodes();
    EXPECT_TRUE(r.injectable());
  }
  EXPECT_EQ(r.annotation_at, row.annotation_at);
}

constexpr auto kAbsent = Reason::kInjectionEnableAnnotationAbsent;
constexpr auto kDisabled = Reason::kInjectionDisableAnnotationPresent;
constexpr auto kBadNs = Reason::kInvalidInjectAnnotationAtNamespace;
constexpr auto kBadPod = Reason::kInvalidInjectAnnotationAtWorkload;

INSTANTIATE_TEST_SUITE_P(
    AllPairs, InjectAnnotationTruthTable,
    ::testing::Values(
        // namespace absent
        TruthRow{"", "", kAbsent, ""}, TruthRow{"", "enabled", std::nullopt, "workload"},
        TruthRow{"", "disabled", kAbsent, ""}, TruthRow{"", "ingress", std::nullopt, "workload"},
        TruthRow{"", "Enabled", kBadPod, ""},
        // namespace enabled: the namespace wins ties
        TruthRow{"enabled", "", std::nullopt, "namespace"},
        TruthRow{"enabled", "enabled", std::nullopt, "namespace"},
        TruthRow{"enabled", "disabled", kDisabled, "workload"},
        TruthRow{"enabled", "ingress", std::nullopt, "namespace"},
        TruthRow{"enabled", "Enabled", kBadPod, ""},
        // namespace disabled
        TruthRow{"disabled", "", kAbsent, ""},
        TruthRow{"disabled", "enabled", std::nullopt, "workload"},
        TruthRow{"disabled", "disabled", kAbsent, ""},
        TruthRow{"disabled", "ingress", std::nullopt, "workload"},
        TruthRow{"disabled", "Enabled", kBadPod, ""},
        // namespace ingress enables like "enabled"
        TruthRow{"ingress", "", std::nullopt, "namespace"},
        TruthRow{"ingress", "enabled", std::nullopt, "namespace"},
        TruthRow{"ingress", "disabled", kDisabled, "workload"},
        TruthRow{"ingress", "ingress", std::nullopt, "namespace"},
        TruthRow{"ingress", "Enabled", kBadPod, ""},
        // an invalid namespace value blocks everything, even an enabled pod
        TruthRow{"on", "", kBadNs, ""}, TruthRow{"on", "enabled", kBadNs, ""},
        TruthRow{"on", "disabled", kBadNs, ""}, TruthRow{"on", "ingress", kBadNs, ""},
        TruthRow{"on", "Enabled", kBadNs, ""}));

// --- Each skip reason on its own. ---

TEST(Report, HostNetworkIsFirstReason) {
  json p = pod({{"linkerd.io/inject", "disabled"}});
  p["spec"]["hostNetwork"] = true;
  const Report r = reportFor(p, "enabled");
  EXPECT_EQ(r.reasonCodes(), "host_network_enabled,injection_disable_annotation_present");
  EXPECT_EQ(r.readableReasons(),
            "hostNetwork is enabled, pod has the annotation \"linkerd.io/inject:disabled\"");
}

TEST(Report, ExistingLinkerdProxyByName) {
  json p = pod();
  p["spec"]["containers"].push_back(
      {{"name", "linkerd-proxy"}, {"image", "gc.io/linkerd-io/proxy"}});
  EXPECT_EQ(reportFor(p, "enabled").reasonCodes(), "sidecar_already_exists");
}

TEST(Report, ExistingProxyByImagePrefix) {
  json p = pod();
  p["spec"]["containers"].push_back(
      {{"name", "sidecar"}, {"image", "cr.l5d.io/linkerd/proxy:edge-26.1.1"}});
  EXPECT_EQ(reportFor(p, "enabled").reasonCodes(), "sidecar_already_exists");
}

TEST(Report, NativeSidecarProxyAmongInitContainersIsDetected) {
  json p = pod();
  p["spec"]["initContainers"] = {{{"name", "linkerd-proxy"}, {"image", "x"}}};
  EXPECT_TRUE(reportFor(p, "enabled").sidecar);
}

TEST(Report, IstioSidecarsBlockInjection) {
  for (const json& c : {json{{"name", "istio-proxy"}, {"image", "x"}},
                        json{{"name", "envoy"}, {"image", "gcr.io/istio-release/proxyv2:1.20"}}}) {
    json p = pod();
    p["spec"]["containers"].push_back(c);
    EXPECT_TRUE(reportFor(p, "enabled").sidecar) << c.dump();
  }
  json p = pod();
  p["spec"]["initContainers"] = {{{"name", "istio-init"}, {"image", "x"}}};
  EXPECT_TRUE(reportFor(p, "enabled").sidecar);
}

TEST(Report, ProxyInitNameCountsOnlyAmongInitContainers) {
  json p = pod();
  p["spec"]["containers"].push_back({{"name", "linkerd-init"}, {"image", "x"}});
  EXPECT_FALSE(reportFor(p, "enabled").sidecar);
  p["spec"]["initContainers"] = {{{"name", "linkerd-init"}, {"image", "x"}}};
  EXPECT_TRUE(reportFor(p, "enabled").sidecar);
}

TEST(Report, NetworkValidatorIsNotASidecar) {
  json p = pod();
  p["spec"]["initContainers"] = {{{"name", "linkerd-network-validator"}, {"image", "x"}}};
  EXPECT_FALSE(reportFor(p, "enabled").sidecar);
}

TEST(Report, UnsupportedKindSkipsAnnotationChecks) {
  json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cfg"}}}};
  const Report r = reportFor(cm, "on", true, "ConfigMap");
  EXPECT_EQ(r.reasonCodes(), "unsupported_resource");
  EXPECT_EQ(r.annotation_at, "");
  EXPECT_EQ(r.resName(), "configmap/cfg");
}

TEST(Report, ServiceIsUnsupported) {
  json svc = {{"apiVersion", "v1"}, {"kind", "Service"}, {"metadata", {{"name", "web-svc"}}}};
  EXPECT_EQ(reportFor(svc, "enabled", true, "Service").reasonCodes(), "unsupported_resource");
}

TEST(Report, AutomountIgnoredWithTokenProjection) {
  json p = pod();
  p["spec"]["automountServiceAccountToken"] = false;
  EXPECT_TRUE(reportFor(p, "enabled", /*projection=*/true).injectable());
}

TEST(Report, AutomountFalseBlocksWithoutProjection) {
  json p = pod();
  p["spec"]["automountServiceAccountToken"] = false;
  p["spec"]["containers"][0]["volumeMounts"] = {
      {{"name", "kube-api-access"},
       {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}}};
  const Report r = reportFor(p, "enabled", /*projection=*/false);
  EXPECT_EQ(r.reasonCodes(), "disabled_automount_service_account_token_account");
  EXPECT_EQ(r.readableReasons(),
            "automountServiceAccountToken set to \"false\", with "
            "Values.identity.serviceAccountTokenProjection set to \"false\"");
}

TEST(Report, MissingServiceAccountMountBlocksWithoutProjection) {
  EXPECT_EQ(reportFor(pod(), "enabled", /*projection=*/false).reasonCodes(),
            "disabled_automount_service_account_token_account");
}

TEST(Report, ServiceAccountMountOnContainerZeroSatisfiesWithoutProjection) {
  json p = pod();
  p["spec"]["containers"][0]["volumeMounts"] = {
      {{"name", "kube-api-access"},
       {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"}}};
  EXPECT_TRUE(reportFor(p, "enabled", /*projection=*/false).injectable());
}

TEST(Report, UdpPortsAreReportedButDoNotBlock) {
  json p = pod();
  p["spec"]["containers"][0]["ports"] = {{{"containerPort", 53}, {"protocol", "UDP"}}};
  const Report r = reportFor(p, "enabled");
  EXPECT_TRUE(r.udp);
  EXPECT_TRUE(r.injectable());
  EXPECT_EQ(reasonText(Reason::kUdpPortsEnabled), "UDP port(s) configured on pod spec");
}

TEST(Report, AllReasonsInFixedOrder) {
  json p = pod({{"linkerd.io/inject", "enabled"}});
  p["spec"]["hostNetwork"] = true;
  p["spec"]["automountServiceAccountToken"] = false;
  p["spec"]["containers"].push_back({{"name", "linkerd-proxy"}, {"image", "x"}});
  const Report r = reportFor(p, "on", /*projection=*/false);
  EXPECT_EQ(r.reasonCodes(),
            "host_network_enabled,sidecar_already_exists,invalid_inject_annotation_at_ns,"
            "disabled_automount_service_account_token_account");
}

TEST(Report, PodNameFallsBackToGenerateName) {
  json p = pod();
  p["metadata"].erase("name");
  p["metadata"]["generateName"] = "web-7d9f8-";
  EXPECT_EQ(reportFor(p).resName(), "pod/web-7d9f8-");
}

TEST(Report, ObjectKindOverridesRequestKind) {
  json d = {{"apiVersion", "apps/v1"},
            {"kind", "Deployment"},
            {"metadata", {{"name", "web"}}},
            {"spec", {{"template", {{"spec", {{"containers", json::array()}}}}}}}};
  const Report r = reportFor(d, "enabled", true, "Pod");
  EXPECT_EQ(r.kind, "deployment");
  EXPECT_TRUE(r.injectable());
}

TEST(Report, CronJobTemplateAnnotationsAreTheWorkloadAnnotations) {
  const json cj = json::parse(R"({"kind": "CronJob", "metadata": {"name": "nightly"},
      "spec": {"jobTemplate": {"spec": {"template": {
          "metadata": {"annotations": {"linkerd.io/inject": "enabled"}}, "spec": {}}}}}})");
  const Report r = reportFor(cj, "", true, "CronJob");
  EXPECT_TRUE(r.injectable());
  EXPECT_EQ(r.annotation_at, "workload");
}

TEST(Workload, DecodeErrorsAreWordedLikeGo) {
  json p = pod();
  p["spec"]["hostNetwork"] = "yes";
  auto w = parseWorkload(p, "Pod");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().message,
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go "
            "struct field PodSpec.spec.hostNetwork of type bool");
}

TEST(Workload, ContainerPortMustBeInt32) {
  json p = pod();
  p["spec"]["containers"][0]["ports"] = {{{"containerPort", "80"}}};
  auto w = parseWorkload(p, "Pod");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().message,
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go "
            "struct field ContainerPort.spec.containers.ports.containerPort of type int32");
}

TEST(Workload, NonObjectIsATypeMetaError) {
  auto w = parseWorkload(json::array(), "Pod");
  ASSERT_FALSE(w.ok());
  EXPECT_EQ(w.error().message,
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go "
            "value of type v1.TypeMeta");
}

TEST(Workload, TemplatePointersPerKind) {
  json tmpl = {{"spec", {{"template", json::object()}}}};
  EXPECT_EQ(
      parseWorkload(json{{"kind", "StatefulSet"}, {"spec", tmpl["spec"]}}, "")->template_pointer,
      "/spec/template");
  EXPECT_EQ(parseWorkload(json{{"kind", "CronJob"}}, "")->template_pointer,
            "/spec/jobTemplate/spec/template");
  EXPECT_EQ(parseWorkload(pod(), "Pod")->template_pointer, "");
  EXPECT_FALSE(parseWorkload(json{{"kind", "Service"}}, "")->has_pod_template);
}

}  // namespace
}  // namespace harness::injector::linkerd
