#include "harness/injector/linkerd/overrides.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace harness::injector::linkerd {
namespace {

using nlohmann::json;

Values overridden(const StringMap& annotations, const json& spec = json::object(),
                  const StringMap& ns = {}, std::vector<LogLine>* logs = nullptr) {
  return overriddenValues(Values{}, annotations, ns, spec, logs);
}

TEST(Overrides, ConnectTimeoutsAreTruncatedFloatMilliseconds) {
  const Values v = overridden({{"config.linkerd.io/proxy-outbound-connect-timeout", "1001ms"},
                               {"config.linkerd.io/proxy-inbound-connect-timeout", "2s"}});
  EXPECT_EQ(v.proxy.outbound_connect_timeout, "1000ms");
  EXPECT_EQ(v.proxy.inbound_connect_timeout, "2000ms");
}

TEST(Overrides, ShutdownGracePeriodInMilliseconds) {
  EXPECT_EQ(
      overridden({{"config.linkerd.io/shutdown-grace-period", "1m"}}).proxy.shutdown_grace_period,
      "60000ms");
}

TEST(Overrides, DiscoveryCacheTimeoutsInWholeSeconds) {
  const Values v =
      overridden({{"config.linkerd.io/proxy-outbound-discovery-cache-unused-timeout", "6s5000ms"},
                  {"config.linkerd.io/proxy-inbound-discovery-cache-unused-timeout", "1500ms"}});
  EXPECT_EQ(v.proxy.outbound_discovery_cache_unused_timeout, "11s");
  EXPECT_EQ(v.proxy.inbound_discovery_cache_unused_timeout, "1s");
  EXPECT_EQ(
      overridden({{"config.linkerd.io/proxy-outbound-discovery-cache-unused-timeout", "50000ms"}})
          .proxy.outbound_discovery_cache_unused_timeout,
      "50s");
}

TEST(Overrides, UnitlessDurationIsIgnoredWithWarning) {
  std::vector<LogLine> logs;
  const Values v =
      overridden({{"config.linkerd.io/proxy-outbound-connect-timeout", "100"}}, {}, {}, &logs);
  EXPECT_EQ(v.proxy.outbound_connect_timeout, "1000ms");
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].level, LogLine::Level::kWarning);
  EXPECT_EQ(logs[0].message,
            "unrecognized proxy-outbound-connect-timeout duration value found on pod annotation: "
            "time: missing unit in duration \"100\"");
}

TEST(Overrides, CpuRequestAndLimitSizeWorkersInWholeCores) {
  const Values v = overridden({{"config.linkerd.io/proxy-cpu-request", "1001m"},
                               {"config.linkerd.io/proxy-cpu-limit", "1.5"}});
  EXPECT_EQ(v.proxy.workers.minimum, 2);
  EXPECT_EQ(v.proxy.workers.maximum, 2);
  EXPECT_EQ(v.proxy.resources.cpu.request, "1001m");  // the raw string is kept
  EXPECT_EQ(v.proxy.resources.cpu.limit, "1.5");
}

TEST(Overrides, InvalidQuantityIsIgnoredWithApimachineryError) {
  std::vector<LogLine> logs;
  const Values v = overridden({{"config.linkerd.io/proxy-memory-limit", "lots"}}, {}, {}, &logs);
  EXPECT_TRUE(v.proxy.resources.memory.limit.empty());
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(
      logs[0].message,
      "quantities must match the regular expression "
      "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$' (config.linkerd.io/proxy-memory-limit)");
}

TEST(Overrides, MemoryAndEphemeralStorageKeepRawStrings) {
  const Values v = overridden({{"config.linkerd.io/proxy-memory-request", "64Mi"},
                               {"config.linkerd.io/proxy-ephemeral-storage-limit", "1G"}});
  EXPECT_EQ(v.proxy.resources.memory.request, "64Mi");
  EXPECT_EQ(v.proxy.resources.ephemeral_storage.limit, "1G");
}

TEST(Overrides, CpuRatioMustBeStrictlyBetweenZeroAndOne) {
  EXPECT_EQ(overridden({{"config.linkerd.io/proxy-cpu-ratio-limit", "0.10"}})
                .proxy.workers.maximum_cpu_ratio,
            0.1);
  for (const char* bad : {"0", "1", "1.5", "-0.2", "abc"}) {
    EXPECT_FALSE(overridden({{"config.linkerd.io/proxy-cpu-ratio-limit", bad}})
                     .proxy.workers.maximum_cpu_ratio.has_value())
        << bad;
  }
}

TEST(Overrides, PortsParseAs32BitIntegersOrAreIgnored) {
  const Values v = overridden({{"config.linkerd.io/admin-port", "9991"},
                               {"config.linkerd.io/inbound-port", "99999999999"},
                               {"config.linkerd.io/outbound-port", "x"},
                               {"config.linkerd.io/control-port", "+4000"}});
  EXPECT_EQ(v.proxy.ports.admin, 9991);
  EXPECT_EQ(v.proxy.ports.inbound, 4143);
  EXPECT_EQ(v.proxy.ports.outbound, 4140);
  EXPECT_EQ(v.proxy.ports.control, 4000);
}

TEST(Overrides, NativeSidecarFirstPresentKeyWins) {
  EXPECT_FALSE(overridden({{"config.linkerd.io/proxy-enable-native-sidecar", "false"},
                           {"config.alpha.linkerd.io/proxy-enable-native-sidecar", "true"}})
                   .proxy.native_sidecar);
  EXPECT_FALSE(overridden({{"config.beta.linkerd.io/proxy-enable-native-sidecar", "false"},
                           {"config.alpha.linkerd.io/proxy-enable-native-sidecar", "true"}})
                   .proxy.native_sidecar);
  EXPECT_FALSE(overridden({{"config.alpha.linkerd.io/proxy-enable-native-sidecar", "0"}})
                   .proxy.native_sidecar);
}

TEST(Overrides, UnparsableNativeSidecarKeyStillShadowsLowerKeys) {
  // The stable key is present but invalid: the default (true) stays, alpha is not consulted.
  Values base;
  base.proxy.native_sidecar = true;
  const Values v =
      overriddenValues(base,
                       {{"config.linkerd.io/proxy-enable-native-sidecar", "maybe"},
                        {"config.alpha.linkerd.io/proxy-enable-native-sidecar", "false"}},
                       {}, json::object(), nullptr);
  EXPECT_TRUE(v.proxy.native_sidecar);
}

TEST(Overrides, SkipInboundPortsReplacesDefault) {
  const Values v = overridden({{"config.linkerd.io/skip-inbound-ports", "3306"},
                               {"config.linkerd.io/skip-outbound-ports", "25"},
                               {"config.linkerd.io/skip-subnets", "10.0.0.0/8"}});
  EXPECT_EQ(v.proxy_init.ignore_inbound_ports, "3306");
  EXPECT_EQ(v.proxy_init.ignore_outbound_ports, "25");
  EXPECT_EQ(v.proxy_init.skip_subnets, "10.0.0.0/8");
}

TEST(Overrides, AwaitAndAdminShutdownAcceptOnlyEnabledDisabled) {
  EXPECT_FALSE(overridden({{"config.linkerd.io/proxy-await", "disabled"}}).proxy.await);
  EXPECT_TRUE(overridden({{"config.linkerd.io/proxy-await", "false"}}).proxy.await);
  EXPECT_TRUE(overridden({{"config.linkerd.io/proxy-admin-shutdown", "enabled"}})
                  .proxy.enable_shutdown_endpoint);
  EXPECT_FALSE(overridden({{"config.linkerd.io/proxy-admin-shutdown", "true"}})
                   .proxy.enable_shutdown_endpoint);
}

TEST(Overrides, DefaultInboundPolicyIsValidated) {
  EXPECT_EQ(overridden({{"config.linkerd.io/default-inbound-policy", "audit"}})
                .proxy.default_inbound_policy,
            "audit");
  EXPECT_EQ(overridden({{"config.linkerd.io/default-inbound-policy", "allow"}})
                .proxy.default_inbound_policy,
            "all-unauthenticated");
}

TEST(Overrides, BooleansUseGoParseBool) {
  const Values v =
      overridden({{"config.linkerd.io/enable-external-profiles", "T"},
                  {"config.linkerd.io/proxy-metrics-hostname-labels", "1"},
                  {"config.linkerd.io/enable-gateway", "yes"},
                  {"config.linkerd.io/proxy-disable-inbound-protocol-detect-timeout", "TRUE"}});
  EXPECT_TRUE(v.proxy.enable_external_profiles);
  EXPECT_TRUE(v.proxy.metrics_hostname_labels);
  EXPECT_FALSE(v.proxy.is_gateway);
  EXPECT_TRUE(v.proxy.disable_inbound_protocol_detect_timeout);
}

TEST(Overrides, IngressModeFromInjectAnnotation) {
  EXPECT_TRUE(overridden({{"linkerd.io/inject", "ingress"}}).proxy.is_ingress);
  EXPECT_FALSE(overridden({{"linkerd.io/inject", "enabled"}}).proxy.is_ingress);
}

TEST(Overrides, WaitBeforeExitIsUint) {
  EXPECT_EQ(overridden({{"config.alpha.linkerd.io/proxy-wait-before-exit-seconds", "300"}})
                .proxy.wait_before_exit_seconds,
            300u);
  EXPECT_EQ(overridden({{"config.alpha.linkerd.io/proxy-wait-before-exit-seconds", "-1"}})
                .proxy.wait_before_exit_seconds,
            0u);
}

TEST(Overrides, CloseWaitTimeoutInWholeSeconds) {
  EXPECT_EQ(overridden({{"config.linkerd.io/close-wait-timeout", "1m30s"}})
                .proxy_init.close_wait_timeout_secs,
            90);
}

TEST(Overrides, PodInboundPortsAnnotationHasNoEffect) {
  json spec = {{"containers", {{{"name", "a"}, {"ports", {{{"containerPort", 80}}}}}}}};
  EXPECT_EQ(
      overridden({{"config.linkerd.io/pod-inbound-ports", "1,2,3"}}, spec).proxy.pod_inbound_ports,
      "80");
}

TEST(Overrides, AdditionalEnvMergesValuesThenNamespaceThenWorkload) {
  Values base;
  base.proxy.additional_env =
      json::array({{{"name", "A"}, {"value", "helm"}}, {{"name", "B"}, {"value", "helm"}}});
  const StringMap ns = {{"config.linkerd.io/proxy-additional-env",
                         R"([{"name":"B","value":"ns"},{"name":"C","value":"ns"}])"}};
  const StringMap workload = {{"config.linkerd.io/proxy-additional-env",
                               R"([{"name":"C","value":"pod"},{"name":"D","value":"pod"}])"}};
  const Values v = overriddenValues(base, workload, ns, json::object(), nullptr);
  EXPECT_EQ(v.proxy.additional_env,
            json::parse(R"([{"name":"A","value":"helm"},{"name":"B","value":"ns"},
                            {"name":"C","value":"pod"},{"name":"D","value":"pod"}])"));
}

TEST(Overrides, InvalidAdditionalEnvLayerIsSkippedWithWarning) {
  std::vector<LogLine> logs;
  const StringMap ns = {
      {"config.linkerd.io/proxy-additional-env", R"([{"name":"N","value":"ns"}])"}};
  const Values v = overridden({{"config.linkerd.io/proxy-additional-env", "not json"}},
                              json::object(), ns, &logs);
  EXPECT_EQ(v.proxy.additional_env, json::parse(R"([{"name":"N","value":"ns"}])"));
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].level, LogLine::Level::kWarning);
}

TEST(Overrides, AdditionalEnvIsNormalizedLikeGoEnvVar) {
  const Values v =
      overridden({{"config.linkerd.io/proxy-additional-env",
                   R"([{"name":"E","value":"","extra":1},)"
                   R"({"name":"F","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}}])"}});
  EXPECT_EQ(v.proxy.additional_env, json::parse(R"([{"name":"E"},
                            {"name":"F",
                             "valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}}])"));
}

TEST(OpaquePorts, ResolvesNamedPortsRangesAndDropsInvalid) {
  std::vector<LogLine> logs;
  const NamedPorts named = {{"memcached", 11211}};
  EXPECT_EQ(resolveOpaquePorts(" memcached, 4000-4010 ,080,bad,", named, &logs),
            "11211,4000-4010,80");
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].message,
            "Invalid port range [bad]: could not parse upper bound: strconv.Atoi: parsing "
            "\"bad\": invalid syntax");
}

TEST(OpaquePorts, RejectsBackwardsRangesAndOutOfRangePorts) {
  EXPECT_EQ(resolveOpaquePorts("20-10,70000,1-2-3", {}, nullptr), "");
}

TEST(OpaquePorts, AnnotationDrivesProxyEnvValue) {
  json spec = {
      {"initContainers",
       {{{"name", "cache"}, {"ports", {{{"containerPort", 11211}, {"name", "memcached"}}}}}}}};
  EXPECT_EQ(overridden({{"config.linkerd.io/opaque-ports", "memcached"}}, spec).proxy.opaque_ports,
            "11211");
}

TEST(OpaquePorts, PodFilterKeepsDuplicatesInSpecOrder) {
  json spec = json::parse(R"({
    "initContainers": [{"name": "i", "ports": [{"containerPort": 11211}]}],
    "containers": [{"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 3306}]},
                   {"name": "b", "ports": [{"containerPort": 11211}]}]})");
  EXPECT_EQ(filterPodOpaquePorts(spec, splitComma("25,587,3306,4444,5432,6379,9300,11211")),
            (std::vector<std::string>{"11211", "3306", "11211"}));
}

TEST(OpaquePorts, ServiceFilterUsesPortAndTargetPortRules) {
  json spec = json::parse(R"({"ports": [
      {"port": 9090, "targetPort": 3306},
      {"port": 3306},
      {"port": 5432, "targetPort": "postgres"},
      {"port": 80, "targetPort": 8080},
      {"port": 6379, "targetPort": 0}]})");
  EXPECT_EQ(filterServiceOpaquePorts(spec, splitComma("25,587,3306,4444,5432,6379,9300,11211")),
            (std::vector<std::string>{"9090", "3306", "6379"}));
}

TEST(InboundPorts, IncludesProbePortsDedupedAndStringSorted) {
  json spec = json::parse(R"({
    "initContainers": [{"name": "i", "ports": [{"containerPort": 11211}]}],
    "containers": [{"name": "a", "ports": [{"containerPort": 80}],
                    "readinessProbe": {"httpGet": {"port": 9090}},
                    "livenessProbe": {"httpGet": {"port": "http"}},
                    "startupProbe": {"httpGet": {"port": 7070}}},
                   {"name": "b", "ports": [{"containerPort": 80}]}]})");
  EXPECT_EQ(podInboundPorts(spec), "11211,80,9090");
}

TEST(InboundPorts, EmptyWithoutPorts) { EXPECT_EQ(podInboundPorts(json::object()), ""); }

}  // namespace
}  // namespace harness::injector::linkerd
