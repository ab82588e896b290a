// The proxy.istio.io/config annotation: jsonpb decoding over a base ProxyConfig
// (protomarshal.ApplyYAML), mesh.MergeProxyConfig, agent.ValidateMeshConfigProxyConfig.

#include "harness/injector/istio/proxy_config.h"

#include <gtest/gtest.h>

#include "harness/injector/istio/config.h"

namespace harness::injector::istio {
namespace {

using nlohmann::json;

json applyYaml(std::string_view yaml, json base = json::object()) {
  auto r = applyProxyConfigYaml(yaml, std::move(base));
  EXPECT_TRUE(r.ok()) << r.error().message;
  return r.ok() ? *r : json();
}

std::string applyError(std::string_view yaml) {
  auto r = applyProxyConfigYaml(yaml, json::object());
  return r.ok() ? "<ok>" : r.error().message;
}

std::string validationError(const json& overlay) {
  json config = defaultProxyConfig();
  for (auto it = overlay.begin(); it != overlay.end(); ++it) config[it.key()] = *it;
  auto r = validateMeshConfigProxyConfig(config);
  return r.ok() ? "<ok>" : r.error().message;
}

TEST(ApplyProxyConfig, PresentFieldsReplaceTheBaseAndUnknownFieldsAreDropped) {
  json out = applyYaml("statusPort: 15021\nsomethingNew: x\n", {{"statusPort", 15020}, {"meshId", "m"}});
  EXPECT_EQ(out, (json{{"statusPort", 15021}, {"meshId", "m"}}));
}

TEST(ApplyProxyConfig, ProtoFieldNamesAreAcceptedAndTheJsonNameWins) {
  EXPECT_EQ(applyYaml("status_port: 1"), (json{{"statusPort", 1}}));
  EXPECT_EQ(applyYaml("{status_port: 1, statusPort: 2}"), (json{{"statusPort", 2}}));
}

TEST(ApplyProxyConfig, ValuesAreNormalisedToTheirProtoTypes) {
  EXPECT_EQ(applyYaml("statusPort: \"15021\""), (json{{"statusPort", 15021}}));
  EXPECT_EQ(applyYaml("drainDuration: 1m"), (json{{"drainDuration", "60s"}}));
  EXPECT_EQ(applyYaml("drainDuration: 1500ms"), (json{{"drainDuration", "1.500s"}}));
  EXPECT_EQ(applyYaml("interceptionMode: 1"), (json{{"interceptionMode", "TPROXY"}}));
  EXPECT_EQ(applyYaml("concurrency: 2"), (json{{"concurrency", 2}}));
}

TEST(ApplyProxyConfig, MessagesAndMapsAreReplacedNotMerged) {
  json base = json::parse(R"({"tracing": {"zipkin": {"address": "z:9411"}, "sampling": 1}})");
  EXPECT_EQ(applyYaml("tracing: {sampling: 10}", base), json::parse(R"({"tracing": {"sampling": 10}})"));
}

TEST(ApplyProxyConfig, NullFieldsKeepTheBase) {
  EXPECT_EQ(applyYaml("statusPort: null", {{"statusPort", 15020}}), (json{{"statusPort", 15020}}));
  EXPECT_EQ(applyYaml("", {{"statusPort", 15020}}), (json{{"statusPort", 15020}}));
}

TEST(ApplyProxyConfig, TracingServiceNameClearsServiceCluster) {
  EXPECT_EQ(applyYaml("tracingServiceName: CANONICAL_NAME_ONLY", {{"serviceCluster", "istio-proxy"}}),
            (json{{"tracingServiceName", "CANONICAL_NAME_ONLY"}}));
}

TEST(ApplyProxyConfig, TypeErrorsCarryEncodingJsonTexts) {
  EXPECT_EQ(applyError("statusPort: 1.5"),
            "json: cannot unmarshal number 1.5 into Go value of type int32");
  EXPECT_EQ(applyError("statusPort: 4294967296"),
            "json: cannot unmarshal number 4294967296 into Go value of type int32");
  EXPECT_EQ(applyError("statusPort: abc"), "invalid character 'a' looking for beginning of value");
  EXPECT_EQ(applyError("statusPort: true"),
            "json: cannot unmarshal bool into Go value of type int32");
  EXPECT_EQ(applyError("meshId: 5"), "json: cannot unmarshal number into Go value of type string");
  EXPECT_EQ(applyError("proxyMetadata: {A: 1}"),
            "json: cannot unmarshal number into Go value of type string");
  EXPECT_EQ(applyError("proxyMetadata: [a]"),
            "json: cannot unmarshal array into Go value of type map[string]json.RawMessage");
  EXPECT_EQ(applyError("tracing: on"),
            "json: cannot unmarshal bool into Go value of type map[string]json.RawMessage");
}

TEST(ApplyProxyConfig, ADocumentThatIsNotAMappingIsAnError) {
  EXPECT_EQ(applyError("just text"),
            "json: cannot unmarshal string into Go value of type map[string]json.RawMessage");
}

TEST(ApplyProxyConfig, EnumAndDurationErrorsAreJsonpbs) {
  EXPECT_EQ(applyError("controlPlaneAuthPolicy: SOMETIMES"),
            "unknown value \"\\\"SOMETIMES\\\"\" for enum istio.mesh.v1alpha1.AuthenticationPolicy");
  EXPECT_EQ(applyError("drainDuration: soon"), "bad Duration: time: invalid duration \"soon\"");
  EXPECT_EQ(applyError("drainDuration: 5"),
            "json: cannot unmarshal number into Go value of type string");
}

TEST(MergeProxyConfig, ProxyMetadataKeepsTheBaseKeys) {
  auto r = mergeProxyConfig("proxyMetadata: {B: new, C: c}",
                            {{"proxyMetadata", {{"A", "a"}, {"B", "old"}}}});
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ((*r)["proxyMetadata"], (json{{"A", "a"}, {"B", "new"}, {"C", "c"}}));
}

TEST(MergeProxyConfig, ErrorsArePrefixed) {
  auto r = mergeProxyConfig("statusPort: x", json::object());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "could not parse proxy config: invalid character 'x' looking for beginning of value");
}

TEST(ValidateProxyConfig, TheDefaultProxyConfigIsValid) {
  EXPECT_EQ(validationError(json::object()), "<ok>");
}

TEST(ValidateProxyConfig, PathsMustBeSet) {
  EXPECT_EQ(validationError({{"configPath", ""}, {"binaryPath", ""}}),
            "2 errors occurred:\n\t* config path must be set\n\t* binary path must be set\n\n");
}

TEST(ValidateProxyConfig, ServiceClusterMustNotBeEmpty) {
  EXPECT_EQ(validationError({{"serviceCluster", ""}}),
            "1 error occurred:\n\t* service cluster must be specified\n\n");
}

TEST(ValidateProxyConfig, DrainDurationIsWholeSeconds) {
  EXPECT_EQ(validationError({{"drainDuration", "0s"}}),
            "1 error occurred:\n\t* invalid drain duration: duration must be greater than 1ms\n\n");
  EXPECT_EQ(validationError({{"drainDuration", "1.000000500s"}}),
            "1 error occurred:\n\t* invalid drain duration: only durations to ms precision are "
            "supported\n\n");
  EXPECT_EQ(validationError({{"drainDuration", "1.500s"}}),
            "1 error occurred:\n\t* drain time only supports durations to seconds precision\n\n");
}

TEST(ValidateProxyConfig, DiscoveryAddressIsHostPort) {
  EXPECT_EQ(validationError({{"discoveryAddress", ""}}),
            "1 error occurred:\n\t* discovery address must be set to the proxy discovery "
            "service\n\n");
  EXPECT_EQ(validationError({{"discoveryAddress", "istiod"}}),
            "1 error occurred:\n\t* invalid discovery address: unable to split \"istiod\": "
            "address istiod: missing port in address\n\n");
  EXPECT_EQ(validationError({{"discoveryAddress", "istiod:http"}}),
            "1 error occurred:\n\t* invalid discovery address: port (http) is not a number: "
            "strconv.Atoi: parsing \"http\": invalid syntax\n\n");
  EXPECT_EQ(validationError({{"discoveryAddress", "bad_host:15012"}}),
            "1 error occurred:\n\t* invalid discovery address: \"bad_host\" is not a valid "
            "hostname or an IP address\n\n");
  EXPECT_EQ(validationError({{"discoveryAddress", "[::1]:15012"}}), "<ok>");
}

TEST(ValidateProxyConfig, TracerAddressesAreChecked) {
  EXPECT_EQ(validationError({{"tracing", {{"zipkin", {{"address", "$(HOST_IP):9411"}}}}}}),
            "<ok>");
  EXPECT_EQ(validationError({{"tracing", {{"datadog", {{"address", "dd:0"}}}}}}),
            "1 error occurred:\n\t* invalid datadog config: port number 0 must be in the range "
            "1..65535\n\n");
  EXPECT_EQ(validationError({{"tracing", {{"lightstep", json::object()}}}}),
            "3 errors occurred:\n\t* invalid lightstep config: address is required\n"
            "\t* invalid lightstep config: invalid lightstep address: unable to split \"\": "
            "address : missing port in address\n"
            "\t* invalid lightstep config: access token is required\n\n");
}

TEST(ValidateProxyConfig, PortsAndAuthPolicy) {
  EXPECT_EQ(validationError({{"proxyAdminPort", 70000}}),
            "1 error occurred:\n\t* invalid proxy admin port: port number 70000 must be in the "
            "range 1..65535\n\n");
  EXPECT_EQ(validationError({{"controlPlaneAuthPolicy", "INHERIT"}}),
            "1 error occurred:\n\t* invalid authentication policy: unrecognized control plane "
            "auth policy \"INHERIT\"\n\n");
  EXPECT_EQ(validationError({{"statsdUdpAddress", "statsd"}}),
            "1 error occurred:\n\t* invalid statsd udp address \"statsd\": unable to split "
            "\"statsd\": address statsd: missing port in address\n\n");
}

TEST(ValidateProxyConfigAnnotation, AppliesOverTheDefaultProxyConfig) {
  EXPECT_TRUE(validateProxyConfigAnnotation("{proxyMetadata: {FOO: bar}}").ok());
  auto r = validateProxyConfigAnnotation("tracingServiceName: 7\nbinaryPath: \"\"");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "1 error occurred:\n\t* binary path must be set\n\n");
}

}  // namespace
}  // namespace harness::injector::istio
