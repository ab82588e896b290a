#include "harness/injector/linkerd/values.h"

#include <gtest/gtest.h>

#include "fixtures.h"

namespace harness::injector::linkerd {
namespace {

using nlohmann::json;

TEST(Values, ChartDefaults) {
  auto v = parseValues(json::object());
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->proxy.image.name, "cr.l5d.io/linkerd/proxy");
  EXPECT_EQ(v->proxy.ports.admin, 4191);
  EXPECT_EQ(v->proxy.ports.control, 4190);
  EXPECT_EQ(v->proxy.ports.inbound, 4143);
  EXPECT_EQ(v->proxy.ports.outbound, 4140);
  EXPECT_EQ(v->proxy.uid, 2102);
  EXPECT_EQ(v->proxy.gid, -1);
  EXPECT_TRUE(v->proxy.native_sidecar);
  EXPECT_TRUE(v->proxy.await);
  EXPECT_EQ(v->proxy.opaque_ports, "25,587,3306,4444,5432,6379,9300,11211");
  EXPECT_EQ(v->proxy_init.iptables_mode, "nft");
  EXPECT_EQ(v->proxy_init.ignore_inbound_ports, "4567,4568");
  EXPECT_TRUE(v->disable_ipv6);
  EXPECT_TRUE(v->service_account_token_projection);
  EXPECT_EQ(v->cluster_domain, "cluster.local");
  EXPECT_EQ(v->proxy.workers.minimum, 1);
  EXPECT_FALSE(v->proxy.workers.maximum_cpu_ratio.has_value());
}

TEST(Values, ReadsTheConfigMapValues) {
  const json input = json::parse(R"({
    "clusterDomain": "example.org",
    "identityTrustDomain": "td.example",
    "linkerdVersion": "enterprise-2.18.0",
    "cniEnabled": true,
    "disableIPv6": false,
    "identity": {"serviceAccountTokenProjection": false},
    "proxy": {
      "image": {"name": "ghcr.io/buoyantio/proxy", "version": "v1"},
      "ports": {"admin": 9991},
      "nativeSidecar": false,
      "logLevel": "warn,linkerd=debug",
      "gid": 1000,
      "waitBeforeExitSeconds": 5,
      "resources": {"cpu": {"limit": "1", "request": ""}, "ephemeral-storage": {"request": "1Gi"}},
      "runtime": {"workers": {"minimum": 2, "maximumCPURatio": 0.25}},
      "metrics": {"hostnameLabels": true},
      "control": {"streams": {"lifetime": "2h"}},
      "additionalEnv": [{"name": "BUOYANT_BALANCER_LOAD_LOW", "value": "0.1"}],
      "inbound": {"server": {"http2": {"keepAliveInterval": "100s"}}}
    },
    "proxyInit": {"iptablesMode": "legacy", "runAsRoot": true, "closeWaitTimeoutSecs": 60},
    "networkValidator": {"timeout": "20s"},
    "debugContainer": {"image": {"version": "edge-25.4.4"}},
    "unknownKey": {"ignored": true}
  })");
  auto v = parseValues(input);
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->cluster_domain, "example.org");
  EXPECT_EQ(v->identity_trust_domain, "td.example");
  EXPECT_EQ(v->linkerd_version, "enterprise-2.18.0");
  EXPECT_TRUE(v->cni_enabled);
  EXPECT_FALSE(v->disable_ipv6);
  EXPECT_FALSE(v->service_account_token_projection);
  EXPECT_EQ(v->proxy.image.name, "ghcr.io/buoyantio/proxy");
  EXPECT_EQ(v->proxy.image.version, "v1");
  EXPECT_EQ(v->proxy.ports.admin, 9991);
  EXPECT_EQ(v->proxy.ports.inbound, 4143);  // untouched siblings keep their defaults
  EXPECT_FALSE(v->proxy.native_sidecar);
  EXPECT_EQ(v->proxy.gid, 1000);
  EXPECT_EQ(v->proxy.wait_before_exit_seconds, 5u);
  EXPECT_EQ(v->proxy.resources.cpu.limit, "1");
  EXPECT_EQ(v->proxy.resources.ephemeral_storage.request, "1Gi");
  EXPECT_EQ(v->proxy.workers.minimum, 2);
  EXPECT_EQ(v->proxy.workers.maximum_cpu_ratio, 0.25);
  EXPECT_TRUE(v->proxy.metrics_hostname_labels);
  EXPECT_EQ(v->proxy.control_stream_lifetime, "2h");
  EXPECT_EQ(v->proxy.control_stream_idle_timeout, "5m");
  EXPECT_EQ(v->proxy.additional_env.size(), 1u);
  EXPECT_EQ(v->proxy.inbound["server"]["http2"]["keepAliveInterval"], "100s");
  EXPECT_EQ(v->proxy_init.iptables_mode, "legacy");
  EXPECT_TRUE(v->proxy_init.run_as_root);
  EXPECT_EQ(v->proxy_init.close_wait_timeout_secs, 60);
  EXPECT_EQ(v->network_validator.timeout, "20s");
  EXPECT_EQ(v->debug_image.version, "edge-25.4.4");
  EXPECT_EQ(v->debug_image.name, "cr.l5d.io/linkerd/debug");
}

// The linkerd-config values printed by the tutorial's injector (seed 000, enterprise-2.18.0).
TEST(Values, ParsesTheTutorialConfigMap) {
  auto v =
      parseValues(testing::readJson(testing::testdataDir() / "values-seed-enterprise-2.18.json"));
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->linkerd_version, "enterprise-2.18.0");
  EXPECT_EQ(v->proxy.image.name, "ghcr.io/buoyantio/proxy");
  EXPECT_FALSE(v->proxy.native_sidecar);
  EXPECT_EQ(v->proxy_init.iptables_mode, "legacy");
  EXPECT_EQ(v->proxy.cores, 0);  // `cores: null`
  EXPECT_FALSE(v->proxy.workers.maximum_cpu_ratio.has_value());
  EXPECT_EQ(v->proxy.additional_env.size(), 2u);
  EXPECT_EQ(v->proxy.inbound["server"]["http2"]["keepAliveInterval"], "100s");
  EXPECT_EQ(v->proxy.log_level,
            "warn,linkerd=debug,hickory=error,linkerd_proxy_http::client[{headers}]=on");
}

TEST(Values, NullKeepsDefaults) {
  auto v = parseValues(json::parse(R"({"proxy": {"uid": null, "image": null},
                                       "proxyInit": null})"));
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->proxy.uid, 2102);
  EXPECT_EQ(v->proxy.image.name, "cr.l5d.io/linkerd/proxy");
}

TEST(Values, NullMaximumCpuRatioClearsIt) {
  auto v =
      parseValues(json::parse(R"({"proxy": {"runtime": {"workers": {"maximumCPURatio": null}}}})"));
  ASSERT_TRUE(v.ok());
  EXPECT_FALSE(v->proxy.workers.maximum_cpu_ratio.has_value());
}

TEST(Values, WrongTypeNamesTheField) {
  auto v = parseValues(json::parse(R"({"proxy": {"ports": {"admin": "4191"}}})"));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message,
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go "
            "struct field Ports.proxy.ports.admin of type int32");
}

TEST(Values, NumberForAStringField) {
  auto v = parseValues(json::parse(R"({"proxyInit": {"ignoreInboundPorts": 4567}})"));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message,
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal number into Go "
            "struct field ProxyInit.proxyInit.ignoreInboundPorts of type string");
}

TEST(Values, Int32Overflow) {
  auto v = parseValues(json::parse(R"({"proxy": {"ports": {"inbound": 3000000000}}})"));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message,
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal number "
            "3000000000 into Go struct field Ports.proxy.ports.inbound of type int32");
}

TEST(Values, FractionalNumberForAnInteger) {
  auto v = parseValues(json::parse(R"({"proxy": {"uid": 1.5}})"));
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.error().message.find("Proxy.proxy.uid of type int64"), std::string::npos);
}

TEST(Values, NegativeWaitBeforeExitIsAnError) {
  EXPECT_FALSE(parseValues(json::parse(R"({"proxy": {"waitBeforeExitSeconds": -1}})")).ok());
}

TEST(Values, BoolFieldRejectsString) {
  auto v = parseValues(json::parse(R"({"cniEnabled": "false"})"));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message,
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal string into Go "
            "struct field Values.cniEnabled of type bool");
}

TEST(Values, NestedObjectTypeError) {
  auto v = parseValues(json::parse(R"({"proxy": {"resources": []}})"));
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message,
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go "
            "struct field Proxy.proxy.resources of type linkerd2.Resources");
}

TEST(Values, AdditionalEnvMustBeEnvVars) {
  EXPECT_FALSE(parseValues(json::parse(R"({"proxy": {"additionalEnv": [{"name": 1}]}})")).ok());
  EXPECT_FALSE(parseValues(json::parse(R"({"proxy": {"additionalEnv": "A=B"}})")).ok());
}

TEST(Values, TopLevelMustBeAnObject) {
  auto v = parseValues(json::array());
  ASSERT_FALSE(v.ok());
  EXPECT_EQ(v.error().message,
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal array into Go "
            "value of type linkerd2.Values");
}

}  // namespace
}  // namespace harness::injector::linkerd
