// Annotation validation before rendering (validate.go, docs/istio-injector.md §4.3): one test per
// rule, with Istio's messages, and the deny it causes through admit().

#include "harness/injector/istio/validate.h"

#include <gtest/gtest.h>

#include "harness/injector/istio/injector.h"
#include "harness/testing/support.h"

namespace harness::injector::istio {
namespace {

namespace t = harness::testing;

std::string errorOf(std::string_view name, std::string_view value) {
  auto r = validateAnnotation(name, value);
  return r ? std::string("<ok>") : r.error().message;
}

TEST(ValidateAnnotation, InterceptionModeIsRedirectTproxyOrNone) {
  for (const char* ok : {"REDIRECT", "TPROXY", "NONE"}) {
    EXPECT_EQ(errorOf("sidecar.istio.io/interceptionMode", ok), "<ok>") << ok;
  }
  EXPECT_EQ(errorOf("sidecar.istio.io/interceptionMode", "redirect"),
            "interceptionMode invalid, use REDIRECT,TPROXY,NONE: redirect");
}

TEST(ValidateAnnotation, StatusPortIsAUint16WithTheExcludeInboundPortsPrefix) {
  EXPECT_EQ(errorOf("status.sidecar.istio.io/port", " 15020 "), "<ok>");
  EXPECT_EQ(errorOf("status.sidecar.istio.io/port", "70000"),
            "excludeInboundPorts invalid: failed parsing port '70000': strconv.ParseUint: "
            "parsing \"70000\": value out of range");
}

TEST(ValidateAnnotation, ReadinessSettingsAreUint32) {
  for (const char* name : {"readiness.status.sidecar.istio.io/initialDelaySeconds",
                           "readiness.status.sidecar.istio.io/periodSeconds",
                           "readiness.status.sidecar.istio.io/failureThreshold"}) {
    EXPECT_EQ(errorOf(name, "4294967295"), "<ok>") << name;
    EXPECT_EQ(errorOf(name, "-1"), "strconv.ParseUint: parsing \"-1\": invalid syntax") << name;
  }
}

TEST(ValidateAnnotation, IncludeOutboundIPRangesIsAStarOrACidrList) {
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/includeOutboundIPRanges", "*"), "<ok>");
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/includeOutboundIPRanges", "10.0.0.0/8,fd00::/8"),
            "<ok>");
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/includeOutboundIPRanges", "10.0.0.1"),
            "includeIPRanges invalid: failed parsing cidr '10.0.0.1': "
            "netip.ParsePrefix(\"10.0.0.1\"): no '/'");
}

TEST(ValidateAnnotation, ExcludeOutboundIPRangesRejectsTheStar) {
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/excludeOutboundIPRanges", ""), "<ok>");
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/excludeOutboundIPRanges", "*"),
            "excludeIPRanges invalid: failed parsing cidr '*': netip.ParsePrefix(\"*\"): no '/'");
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/excludeOutboundIPRanges", "10.0.0.0/33"),
            "excludeIPRanges invalid: failed parsing cidr '10.0.0.0/33': "
            "netip.ParsePrefix(\"10.0.0.0/33\"): prefix length out of range");
}

TEST(ValidateAnnotation, IncludeInboundPortsIsAStarOrAPortList) {
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/includeInboundPorts", "*"), "<ok>");
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/includeInboundPorts", "80, 443"), "<ok>");
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/includeInboundPorts", "80,http"),
            "includeInboundPorts invalid: failed parsing port 'http': failed parsing port "
            "'http': strconv.ParseUint: parsing \"http\": invalid syntax");
}

TEST(ValidateAnnotation, ExcludeInboundPortsRejectsTheStar) {
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/excludeInboundPorts", "*"),
            "excludeInboundPorts invalid: failed parsing port '*': failed parsing port '*': "
            "strconv.ParseUint: parsing \"*\": invalid syntax");
}

TEST(ValidateAnnotation, ExcludeOutboundPortsIsAPortList) {
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/excludeOutboundPorts", ""), "<ok>");
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/excludeOutboundPorts", "65536"),
            "excludeOutboundPorts invalid: failed parsing port '65536': failed parsing port "
            "'65536': strconv.ParseUint: parsing \"65536\": value out of range");
}

TEST(ValidateAnnotation, IncludeOutboundPortsIsNotValidated) {
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/includeOutboundPorts", "not ports"), "<ok>");
}

TEST(ValidateAnnotation, InterfaceListsAreInterfaceNames) {
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/excludeInterfaces", "eth1, net1"), "<ok>");
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/excludeInterfaces", "eth/1"),
            "excludeInterfaces invalid: invalid interface name 'eth/1'");
  EXPECT_EQ(errorOf("traffic.sidecar.istio.io/kubevirtInterfaces", "net1,"),
            "kubevirtInterfaces invalid: invalid interface name ''");
  EXPECT_EQ(errorOf("istio.io/reroute-virtual-interfaces", "averyveryverylongname"),
            "rerouteVirtualInterfaces invalid: invalid interface name 'averyveryverylongname'");
}

TEST(ValidateAnnotation, MergeMetricsIsAGoBool) {
  EXPECT_EQ(errorOf("prometheus.istio.io/merge-metrics", "F"), "<ok>");
  EXPECT_EQ(errorOf("prometheus.istio.io/merge-metrics", "no"),
            "strconv.ParseBool: parsing \"no\": invalid syntax");
}

TEST(ValidateAnnotation, ResourceAnnotationsAreQuantitiesWithoutControlCharacters) {
  for (const char* name : {"sidecar.istio.io/proxyCPU", "sidecar.istio.io/proxyMemory",
                           "sidecar.istio.io/proxyCPULimit", "sidecar.istio.io/proxyMemoryLimit"}) {
    EXPECT_EQ(errorOf(name, "1500m"), "<ok>") << name;
    EXPECT_EQ(errorOf(name, "1Gi\n"), "quantity contains control characters") << name;
    EXPECT_EQ(errorOf(name, "lots"),
              "quantities must match the regular expression "
              "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
        << name;
  }
}

TEST(ValidateAnnotation, ProxyConfigMustDecode) {
  EXPECT_EQ(errorOf("proxy.istio.io/config", "{holdApplicationUntilProxyStarts: true}"), "<ok>");
  EXPECT_EQ(errorOf("proxy.istio.io/config", "interceptionMode: FOO"),
            "failed to convert to apply proxy config: unknown value \"\\\"FOO\\\"\" for enum "
            "istio.mesh.v1alpha1.ProxyConfig.InboundInterceptionMode");
  EXPECT_EQ(errorOf("proxy.istio.io/config", "holdApplicationUntilProxyStarts: \"yes\""),
            "failed to convert to apply proxy config: json: cannot unmarshal string into Go "
            "value of type bool");
}

TEST(ValidateAnnotation, ProxyConfigMustPassProxyConfigValidation) {
  EXPECT_EQ(errorOf("proxy.istio.io/config", "statusPort: 0"),
            "1 error occurred:\n\t* invalid status port: port number 0 must be in the range "
            "1..65535\n\n");
}

TEST(ValidateAnnotation, ProxyConfigIgnoresUnknownFields) {
  EXPECT_EQ(errorOf("proxy.istio.io/config", "{notAField: 1, concurrency: 2}"), "<ok>");
}

TEST(ValidateAnnotations, OtherAnnotationsAreNotValidated) {
  EXPECT_TRUE(validateAnnotations({{"sidecar.istio.io/proxyImage", "%%%"},
                                   {"sidecar.istio.io/inject", "maybe"}})
                  .ok());
}

TEST(ValidateAnnotations, CollectsEveryFailureInGoMultierrorFormat) {
  auto r = validateAnnotations({{"sidecar.istio.io/interceptionMode", "X"},
                                {"proxy.istio.io/config", "statusPort: 0"},
                                {"status.sidecar.istio.io/port", "15020"}});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "2 errors occurred:\n"
            "\t* invalid value 'statusPort: 0' for annotation 'proxy.istio.io/config': "
            "1 error occurred:\n\t* invalid status port: port number 0 must be in the range "
            "1..65535\n\n\n"
            "\t* invalid value 'X' for annotation 'sidecar.istio.io/interceptionMode': "
            "interceptionMode invalid, use REDIRECT,TPROXY,NONE: X\n\n");
}

TEST(ValidateAnnotations, AnInvalidProxyConfigDeniesThePod) {
  const auto data = t::sourceDir() / "injector" / "istio";
  auto settings = loadSettings(t::readFile(data / "sidecar-injector-config.yaml"),
                               t::readFile(data / "values.json"), t::readFile(data / "mesh.yaml"));
  ASSERT_TRUE(settings.ok()) << settings.error().message;
  AdmissionInput in;
  in.pod = {{"metadata",
             {{"name", "p"},
              {"namespace", "default"},
              {"annotations", {{"proxy.istio.io/config", "drainDuration: 1500ms"}}}}},
            {"spec", {{"containers", {{{"name", "app"}, {"image", "app"}}}}}}};
  auto out = admit(*settings, in);
  EXPECT_EQ(out.decision, Decision::kError);
  EXPECT_EQ(out.error_message,
            "failed to run injection template: 1 error occurred:\n\t* invalid value "
            "'drainDuration: 1500ms' for annotation 'proxy.istio.io/config': 1 error occurred:\n"
            "\t* drain time only supports durations to seconds precision\n\n\n\n");
}

}  // namespace
}  // namespace harness::injector::istio
