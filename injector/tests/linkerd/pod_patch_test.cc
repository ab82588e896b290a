#include "harness/injector/linkerd/pod_patch.h"

#include <gtest/gtest.h>

#include "fixtures.h"
#include "harness/injector/linkerd/overrides.h"

namespace harness::injector::linkerd {
namespace {

using nlohmann::json;
using testing::envOf;
using testing::initOf;
using testing::opValue;
using testing::paths;
using testing::proxyOf;

struct Built {
  core::Result<json> patch;
  std::vector<LogLine> logs;
};

// buildPodPatch the way the webhook calls it, with the annotations of the object as the
// effective set and the owner label of a Deployment-owned pod.
Built build(const json& object, const Values& values = Values{}, StringMap collected = {},
            std::string pem = "IdentityTrustAnchorsPEM") {
  const Workload w = *parseWorkload(object, object.value("kind", "Pod"));
  StringMap effective = w.pod_annotations;
  for (const auto& [k, v] : collected) effective[k] = v;
  std::vector<LogLine> logs;
  const Values v = overriddenValues(values, effective, {}, w.pod_spec, &logs);
  PodPatchInput in;
  in.workload = &w;
  in.values = &v;
  in.annotations = std::move(collected);
  in.labels = {{"linkerd.io/control-plane-ns", "linkerd"},
               {"linkerd.io/proxy-deployment", "owner-deployment"},
               {"linkerd.io/workload-ns", "kube-public"}};
  in.effective_annotations = effective;
  in.trust_anchors_pem = std::move(pem);
  auto patch = buildPodPatch(in, &logs);
  return Built{std::move(patch), std::move(logs)};
}

// The pod of controller/proxy-injector/fake/data/pod-nativesidecar-inject-enabled.yaml.
json upstreamNativeSidecarPod() {
  return json::parse(R"({
    "kind": "Pod", "apiVersion": "apps/v1",
    "metadata": {"name": "nginx", "namespace": "kube-public",
                 "annotations": {"linkerd.io/inject": "enabled",
                                 "config.linkerd.io/opaque-ports": "memcached"},
                 "labels": {"app": "nginx"}},
    "spec": {
      "initContainers": [{"name": "memcached", "image": "memcached", "restartPolicy": "Always",
                          "ports": [{"containerPort": 11211, "name": "memcached"}]}],
      "containers": [{"name": "nginx", "image": "nginx",
                      "ports": [{"name": "http", "containerPort": 80}],
                      "readinessProbe": {"httpGet": {"path": "/metrics", "port": 9090}}}]}})");
}

Values devValues() {
  Values v;
  v.linkerd_version = "dev-undefined";
  return v;
}

// Checked against controller/proxy-injector/fake/data/pod.nativesidecar.patch.json: the same op
// sequence, the same env names in the same order and the same computed values.
TEST(UpstreamFixture, NativeSidecarPatchMatchesOpSequence) {
  auto b = build(upstreamNativeSidecarPod(), devValues());
  ASSERT_TRUE(b.patch.ok()) << b.patch.error().message;
  EXPECT_EQ(paths(*b.patch), (std::vector<std::string>{
                                 "/metadata/annotations/linkerd.io~1proxy-version",
                                 "/metadata/annotations/linkerd.io~1trust-root-sha256",
                                 "/metadata/labels/linkerd.io~1control-plane-ns",
                                 "/metadata/labels/linkerd.io~1proxy-deployment",
                                 "/metadata/labels/linkerd.io~1workload-ns", "/spec/volumes",
                                 "/spec/volumes/-", "/spec/initContainers/0", "/spec/volumes/-",
                                 "/spec/volumes/-", "/spec/initContainers/1"}));
  EXPECT_EQ(opValue(*b.patch, "/metadata/annotations/linkerd.io~1trust-root-sha256"),
            "5090806bcf2daff5d54739ba02a8e7b919f7e62b2a46757e11089c916ec97fc2");
  EXPECT_EQ(opValue(*b.patch, "/metadata/annotations/linkerd.io~1proxy-version"), "dev-undefined");
}

TEST(UpstreamFixture, NativeSidecarEnvOrder) {
  auto b = build(upstreamNativeSidecarPod(), devValues());
  ASSERT_TRUE(b.patch.ok());
  const json proxy = proxyOf(*b.patch);
  std::vector<std::string> names;
  for (const auto& e : proxy["env"]) names.push_back(e["name"]);
  EXPECT_EQ(names,
            (std::vector<std::string>{"_pod_name",
                                      "_pod_ns",
                                      "_pod_uid",
                                      "_pod_ip",
                                      "_pod_nodeName",
                                      "_pod_containerName",
                                      "LINKERD2_PROXY_CORES",
                                      "LINKERD2_PROXY_CORES_MIN",
                                      "LINKERD2_PROXY_SHUTDOWN_ENDPOINT_ENABLED",
                                      "LINKERD2_PROXY_LOG",
                                      "LINKERD2_PROXY_LOG_FORMAT",
                                      "LINKERD2_PROXY_DESTINATION_SVC_ADDR",
                                      "LINKERD2_PROXY_DESTINATION_PROFILE_NETWORKS",
                                      "LINKERD2_PROXY_POLICY_SVC_ADDR",
                                      "LINKERD2_PROXY_POLICY_WORKLOAD",
                                      "LINKERD2_PROXY_INBOUND_DEFAULT_POLICY",
                                      "LINKERD2_PROXY_POLICY_CLUSTER_NETWORKS",
                                      "LINKERD2_PROXY_CONTROL_STREAM_INITIAL_TIMEOUT",
                                      "LINKERD2_PROXY_CONTROL_STREAM_IDLE_TIMEOUT",
                                      "LINKERD2_PROXY_CONTROL_STREAM_LIFETIME",
                                      "LINKERD2_PROXY_INBOUND_CONNECT_TIMEOUT",
                                      "LINKERD2_PROXY_OUTBOUND_CONNECT_TIMEOUT",
                                      "LINKERD2_PROXY_OUTBOUND_DISCOVERY_IDLE_TIMEOUT",
                                      "LINKERD2_PROXY_INBOUND_DISCOVERY_IDLE_TIMEOUT",
                                      "LINKERD2_PROXY_CONTROL_LISTEN_ADDR",
                                      "LINKERD2_PROXY_ADMIN_LISTEN_ADDR",
                                      "LINKERD2_PROXY_OUTBOUND_LISTEN_ADDR",
                                      "LINKERD2_PROXY_OUTBOUND_LISTEN_ADDRS",
                                      "LINKERD2_PROXY_INBOUND_LISTEN_ADDR",
                                      "LINKERD2_PROXY_INBOUND_IPS",
                                      "LINKERD2_PROXY_INBOUND_PORTS",
                                      "LINKERD2_PROXY_DESTINATION_PROFILE_SUFFIXES",
                                      "LINKERD2_PROXY_INBOUND_ACCEPT_KEEPALIVE",
                                      "LINKERD2_PROXY_OUTBOUND_CONNECT_KEEPALIVE",
                                      "LINKERD2_PROXY_INBOUND_ACCEPT_USER_TIMEOUT",
                                      "LINKERD2_PROXY_OUTBOUND_CONNECT_USER_TIMEOUT",
                                      "LINKERD2_PROXY_OUTBOUND_METRICS_HOSTNAME_LABELS",
                                      "LINKERD2_PROXY_INBOUND_SERVER_HTTP2_KEEP_ALIVE_INTERVAL",
                                      "LINKERD2_PROXY_INBOUND_SERVER_HTTP2_KEEP_ALIVE_TIMEOUT",
                                      "LINKERD2_PROXY_OUTBOUND_SERVER_HTTP2_KEEP_ALIVE_INTERVAL",
                                      "LINKERD2_PROXY_OUTBOUND_SERVER_HTTP2_KEEP_ALIVE_TIMEOUT",
                                      "LINKERD2_PROXY_INBOUND_PORTS_DISABLE_PROTOCOL_DETECTION",
                                      "LINKERD2_PROXY_DESTINATION_CONTEXT",
                                      "_pod_sa",
                                      "_l5d_ns",
                                      "_l5d_trustdomain",
                                      "LINKERD2_PROXY_IDENTITY_DIR",
                                      "LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS",
                                      "LINKERD2_PROXY_IDENTITY_TOKEN_FILE",
                                      "LINKERD2_PROXY_IDENTITY_SVC_ADDR",
                                      "LINKERD2_PROXY_IDENTITY_LOCAL_NAME",
                                      "LINKERD2_PROXY_IDENTITY_SVC_NAME",
                                      "LINKERD2_PROXY_DESTINATION_SVC_NAME",
                                      "LINKERD2_PROXY_POLICY_SVC_NAME"}));
  EXPECT_EQ(envOf(proxy, "LINKERD2_PROXY_INBOUND_PORTS"), "11211,80,9090");
  EXPECT_EQ(envOf(proxy, "LINKERD2_PROXY_INBOUND_PORTS_DISABLE_PROTOCOL_DETECTION"), "11211");
  EXPECT_EQ(envOf(proxy, "LINKERD2_PROXY_LOG"),
            "warn,linkerd=info,hickory=error,[{headers}]=off,[{request}]=off");
  EXPECT_EQ(envOf(proxy, "LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS"), "IdentityTrustAnchorsPEM\n");
  EXPECT_EQ(envOf(proxy, "LINKERD2_PROXY_POLICY_WORKLOAD"),
            "{\"ns\":\"$(_pod_ns)\", \"pod\":\"$(_pod_name)\"}\n");
  EXPECT_EQ(envOf(proxy, "LINKERD2_PROXY_OUTBOUND_LISTEN_ADDRS"), "127.0.0.1:4140");
}

TEST(UpstreamFixture, NativeSidecarContainers) {
  auto b = build(upstreamNativeSidecarPod(), devValues());
  ASSERT_TRUE(b.patch.ok());
  const json init = initOf(*b.patch);
  EXPECT_EQ(init["args"], json::parse(R"(["--firewall-bin-path", "iptables-nft",
      "--firewall-save-bin-path", "iptables-nft-save", "--ipv6=false",
      "--incoming-proxy-port", "4143", "--outgoing-proxy-port", "4140", "--proxy-uid", "2102",
      "--inbound-ports-to-ignore", "4190,4191,4567,4568",
      "--outbound-ports-to-ignore", "4567,4568"])"));
  EXPECT_EQ(init["image"], "cr.l5d.io/linkerd/proxy:dev-undefined");
  EXPECT_EQ(init["command"], json::parse(R"(["/usr/lib/linkerd/linkerd2-proxy-init"])"));
  EXPECT_TRUE(init["resources"].is_null());
  EXPECT_EQ(init["securityContext"], json::parse(R"({"allowPrivilegeEscalation": false,
      "capabilities": {"add": ["NET_ADMIN", "NET_RAW"]}, "privileged": false,
      "readOnlyRootFilesystem": true, "runAsGroup": 65534, "runAsNonRoot": true,
      "runAsUser": 65534, "seccompProfile": {"type": "RuntimeDefault"}})"));
  const json proxy = proxyOf(*b.patch);
  EXPECT_EQ(proxy["restartPolicy"], "Always");
  EXPECT_EQ(proxy["startupProbe"], json::parse(R"({"httpGet": {"path": "/ready", "port": 4191},
      "initialDelaySeconds": 0, "periodSeconds": 1, "failureThreshold": 120})"));
  EXPECT_FALSE(proxy.contains("lifecycle"));
  EXPECT_EQ(proxy["securityContext"], json::parse(R"({"allowPrivilegeEscalation": false,
      "readOnlyRootFilesystem": true, "runAsNonRoot": true, "runAsUser": 2102,
      "seccompProfile": {"type": "RuntimeDefault"}})"));
  EXPECT_EQ(proxy["volumeMounts"], json::parse(R"([
      {"mountPath": "/var/run/linkerd/identity/end-entity", "name": "linkerd-identity-end-entity"},
      {"mountPath": "/var/run/secrets/tokens", "name": "linkerd-identity-token"}])"));
}

json simplePod() {
  return json::parse(R"({"kind": "Pod", "metadata": {"name": "p", "labels": {"app": "x"}},
                         "spec": {"containers": [{"name": "app", "image": "app",
                                                  "ports": [{"containerPort": 8080}]}]}})");
}

TEST(PodPatch, LegacyAwaitPutsProxyFirstWithPostStart) {
  Values v;
  v.proxy.native_sidecar = false;
  auto b = build(simplePod(), v);
  ASSERT_TRUE(b.patch.ok());
  const auto p = paths(*b.patch);
  EXPECT_NE(std::find(p.begin(), p.end(), "/spec/initContainers/-"), p.end());
  EXPECT_EQ(p.back(), "/spec/containers/0");
  const json proxy = proxyOf(*b.patch);
  EXPECT_FALSE(proxy.contains("restartPolicy"));
  EXPECT_FALSE(proxy.contains("startupProbe"));
  EXPECT_EQ(proxy["lifecycle"], json::parse(R"({"postStart": {"exec": {"command":
      ["/usr/lib/linkerd/linkerd-await", "--timeout=2m", "--port=4191"]}}})"));
}

TEST(PodPatch, LegacyWithoutAwaitAppendsProxy) {
  Values v;
  v.proxy.native_sidecar = false;
  auto b = build(simplePod(), v, {{"config.linkerd.io/proxy-await", "disabled"}});
  ASSERT_TRUE(b.patch.ok());
  EXPECT_EQ(paths(*b.patch).back(), "/spec/containers/-");
  EXPECT_FALSE(proxyOf(*b.patch).contains("lifecycle"));
}

TEST(PodPatch, WaitBeforeExitAddsPreStopOnlyInLegacyMode) {
  Values v;
  v.proxy.native_sidecar = false;
  auto legacy =
      build(simplePod(), v, {{"config.alpha.linkerd.io/proxy-wait-before-exit-seconds", "30"}});
  ASSERT_TRUE(legacy.patch.ok());
  EXPECT_EQ(proxyOf(*legacy.patch)["lifecycle"]["preStop"],
            json::parse(R"({"exec": {"command": ["/bin/sleep", "30"]}})"));
  auto native = build(simplePod(), Values{},
                      {{"config.alpha.linkerd.io/proxy-wait-before-exit-seconds", "30"}});
  ASSERT_TRUE(native.patch.ok());
  EXPECT_FALSE(proxyOf(*native.patch).contains("lifecycle"));
}

TEST(PodPatch, NativeWithoutAwaitHasNoStartupProbe) {
  auto b = build(simplePod(), Values{}, {{"config.linkerd.io/proxy-await", "disabled"}});
  ASSERT_TRUE(b.patch.ok());
  EXPECT_FALSE(proxyOf(*b.patch).contains("startupProbe"));
  EXPECT_EQ(paths(*b.patch).back(), "/spec/initContainers/1");
}

TEST(PodPatch, CniModeUsesNetworkValidatorWithoutXtablesVolume) {
  Values v;
  v.cni_enabled = true;
  auto b = build(simplePod(), v);
  ASSERT_TRUE(b.patch.ok());
  const json validator = opValue(*b.patch, "/spec/initContainers/0");
  EXPECT_EQ(validator["name"], "linkerd-network-validator");
  EXPECT_EQ(validator["args"], json::parse(R"(["--log-format", "plain", "--log-level", "debug",
      "--connect-addr", "1.1.1.1:20001", "--listen-addr", "0.0.0.0:4140", "--timeout", "10s"])"));
  EXPECT_EQ(validator["command"],
            json::parse(R"(["/usr/lib/linkerd/linkerd2-network-validator"])"));
  for (const auto& op : *b.patch) {
    if (op["path"] == "/spec/volumes/-") {
      EXPECT_NE(op["value"]["name"], "linkerd-proxy-init-xtables-lock");
    }
  }
  EXPECT_TRUE(initOf(*b.patch).is_null());
}

TEST(PodPatch, Ipv6ListenAddresses) {
  Values v;
  v.disable_ipv6 = false;
  v.cni_enabled = true;
  auto b = build(simplePod(), v);
  ASSERT_TRUE(b.patch.ok());
  const json proxy = proxyOf(*b.patch);
  EXPECT_EQ(envOf(proxy, "LINKERD2_PROXY_CONTROL_LISTEN_ADDR"), "[::]:4190");
  EXPECT_EQ(envOf(proxy, "LINKERD2_PROXY_OUTBOUND_LISTEN_ADDRS"), "127.0.0.1:4140,[::1]:4140");
  EXPECT_EQ(opValue(*b.patch, "/spec/initContainers/0")["args"][5], "[fd00::1]:20001");
}

TEST(PodPatch, ExistingInitContainersAndVolumesGetNoRootOps) {
  json p = simplePod();
  p["metadata"]["annotations"] = {{"a", "b"}};
  p["spec"]["initContainers"] = {{{"name", "setup"}, {"image", "busybox"}}};
  p["spec"]["volumes"] = {{{"name", "data"}, {"emptyDir", json::object()}}};
  auto b = build(p);
  ASSERT_TRUE(b.patch.ok());
  const auto ps = paths(*b.patch);
  for (const char* root : {"/spec/volumes", "/spec/initContainers", "/metadata/annotations",
                           "/metadata/labels", "/metadata"}) {
    EXPECT_EQ(std::find(ps.begin(), ps.end(), root), ps.end()) << root;
  }
  // Native: linkerd-init and the proxy go before the existing init containers.
  EXPECT_EQ(opValue(*b.patch, "/spec/initContainers/0")["name"], "linkerd-init");
  EXPECT_EQ(opValue(*b.patch, "/spec/initContainers/1")["name"], "linkerd-proxy");
}

TEST(PodPatch, EmptyTemplateMetadataGetsMetadataOp) {
  json cj = json::parse(R"({"kind": "CronJob", "metadata": {"name": "nightly", "namespace": "jobs"},
      "spec": {"jobTemplate": {"spec": {"template": {
          "spec": {"containers": [{"name": "c"}]}}}}}})");
  auto b = build(cj);
  ASSERT_TRUE(b.patch.ok());
  const auto ps = paths(*b.patch);
  ASSERT_GE(ps.size(), 3u);
  EXPECT_EQ(ps[0], "/spec/jobTemplate/spec/template/metadata");
  EXPECT_EQ(ps[1], "/spec/jobTemplate/spec/template/metadata/annotations");
  EXPECT_EQ(opValue(*b.patch, "/spec/jobTemplate/spec/template/metadata"), json::object());
}

TEST(IsEmptyObjectMeta, FollowsGoDeepEqual) {
  EXPECT_TRUE(isEmptyObjectMeta(nullptr));
  EXPECT_TRUE(isEmptyObjectMeta(json::object()));
  EXPECT_TRUE(isEmptyObjectMeta(json::parse(R"({"annotations": {}, "creationTimestamp": null})")));
  EXPECT_TRUE(isEmptyObjectMeta(json::parse(R"({"name": "", "generation": 0})")));
  EXPECT_FALSE(isEmptyObjectMeta(json::parse(R"({"labels": {}})")));
  EXPECT_FALSE(isEmptyObjectMeta(json::parse(R"({"finalizers": []})")));
  EXPECT_FALSE(isEmptyObjectMeta(json::parse(R"({"annotations": {"a": "b"}})")));
  EXPECT_FALSE(isEmptyObjectMeta(json::parse(R"({"name": "x"})")));
}

TEST(PodPatch, AnnotationsSortedAndKeysEscapedWithTildeOneOnly) {
  auto b = build(simplePod(), Values{},
                 {{"linkerd.io/created-by", "linkerd/proxy-injector x"},
                  {"config.linkerd.io/opaque-ports", "3306"},
                  {"config.alpha.linkerd.io/proxy-wait-before-exit-seconds", "5"}});
  ASSERT_TRUE(b.patch.ok());
  const auto ps = paths(*b.patch);
  EXPECT_EQ(std::vector<std::string>(ps.begin(), ps.begin() + 6),
            (std::vector<std::string>{
                "/metadata/annotations",
                "/metadata/annotations/config.alpha.linkerd.io~1proxy-wait-before-exit-seconds",
                "/metadata/annotations/config.linkerd.io~1opaque-ports",
                "/metadata/annotations/linkerd.io~1created-by",
                "/metadata/annotations/linkerd.io~1proxy-version",
                "/metadata/annotations/linkerd.io~1trust-root-sha256"}));
  EXPECT_EQ(escapePatchKey("a~b/c"), "a~b~1c");
}

TEST(PodPatch, AnnotationValuesAreJsonEscaped) {
  // Upstream would emit invalid JSON for this value; the patch here stays valid.
  const std::string tricky = R"(linkerd[name="x\y"]=debug)";
  auto b = build(simplePod(), Values{}, {{"config.linkerd.io/proxy-log-level", tricky}});
  ASSERT_TRUE(b.patch.ok());
  EXPECT_EQ(opValue(*b.patch, "/metadata/annotations/config.linkerd.io~1proxy-log-level"), tricky);
  EXPECT_EQ(json::parse(b.patch->dump()), *b.patch);
}

TEST(PodPatch, ProxyVersionAnnotationFollowsOverride) {
  auto b = build(simplePod(), Values{}, {{"config.linkerd.io/proxy-version", "v9"}});
  ASSERT_TRUE(b.patch.ok());
  EXPECT_EQ(opValue(*b.patch, "/metadata/annotations/linkerd.io~1proxy-version"), "v9");
  EXPECT_EQ(proxyOf(*b.patch)["image"], "cr.l5d.io/linkerd/proxy:v9");
  EXPECT_EQ(initOf(*b.patch)["image"], "cr.l5d.io/linkerd/proxy:v9");
}

TEST(PodPatch, CopiesServiceAccountMountAndCapabilitiesFromFirstContainer) {
  json p = simplePod();
  p["spec"]["containers"][0]["volumeMounts"] = {
      {{"name", "kube-api-access-x"},
       {"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"},
       {"readOnly", true}}};
  p["spec"]["containers"][0]["securityContext"] = {
      {"capabilities", {{"add", {"SYS_TIME"}}, {"drop", {"ALL", "NET_RAW"}}}}};
  auto b = build(p);
  ASSERT_TRUE(b.patch.ok());
  const json sa = {{"mountPath", "/var/run/secrets/kubernetes.io/serviceaccount"},
                   {"name", "kube-api-access-x"},
                   {"readOnly", true}};
  EXPECT_EQ(proxyOf(*b.patch)["volumeMounts"].back(), sa);
  EXPECT_EQ(initOf(*b.patch)["volumeMounts"].back(), sa);
  EXPECT_EQ(proxyOf(*b.patch)["securityContext"]["capabilities"],
            json::parse(R"({"add": ["SYS_TIME"], "drop": ["ALL", "NET_RAW"]})"));
  EXPECT_EQ(initOf(*b.patch)["securityContext"]["capabilities"],
            json::parse(R"({"add": ["NET_ADMIN", "NET_RAW", "SYS_TIME"], "drop": ["ALL"]})"));
}

TEST(PodPatch, EmptyCapabilitiesBecomeNull) {
  json p = simplePod();
  p["spec"]["containers"][0]["securityContext"] = {{"capabilities", json::object()}};
  auto b = build(p);
  ASSERT_TRUE(b.patch.ok());
  EXPECT_TRUE(proxyOf(*b.patch)["securityContext"]["capabilities"].is_null());
}

TEST(PodPatch, ValuesSecurityContextReplacesTheDefault) {
  Values v;
  v.proxy.security_context = {{"runAsUser", 1234}};
  auto b = build(simplePod(), v);
  ASSERT_TRUE(b.patch.ok());
  EXPECT_EQ(proxyOf(*b.patch)["securityContext"], json::parse(R"({"runAsUser": 1234})"));
}

TEST(PodPatch, GidAddsRunAsGroupAndProxyGidArg) {
  auto b =
      build(simplePod(), Values{},
            {{"config.linkerd.io/proxy-gid", "3000"}, {"config.linkerd.io/proxy-uid", "1000000"}});
  ASSERT_TRUE(b.patch.ok());
  EXPECT_EQ(proxyOf(*b.patch)["securityContext"]["runAsGroup"], 3000);
  EXPECT_EQ(proxyOf(*b.patch)["securityContext"]["runAsUser"], 1000000);
  const json args = initOf(*b.patch)["args"];
  // Helm values are float64: a quoted 1000000 prints as 1e+06.
  EXPECT_NE(std::find(args.begin(), args.end(), "1e+06"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "--proxy-gid"), args.end());
  EXPECT_NE(std::find(args.begin(), args.end(), "3000"), args.end());
}

TEST(PodPatch, SkipInboundPortsKeepsControlAndAdminFirst) {
  auto b = build(simplePod(), Values{},
                 {{"config.linkerd.io/skip-inbound-ports", "3306,5432"},
                  {"config.linkerd.io/admin-port", "9990"}});
  ASSERT_TRUE(b.patch.ok());
  const json args = initOf(*b.patch)["args"];
  EXPECT_NE(std::find(args.begin(), args.end(), "4190,9990,3306,5432"), args.end());
}

TEST(PodPatch, CoresEnvFromCpuAnnotations) {
  auto b = build(simplePod(), Values{},
                 {{"config.linkerd.io/proxy-cpu-request", "1001m"},
                  {"config.linkerd.io/proxy-cpu-limit", "3"},
                  {"config.linkerd.io/proxy-cpu-ratio-limit", "0.10"}});
  ASSERT_TRUE(b.patch.ok());
  const json proxy = proxyOf(*b.patch);
  EXPECT_EQ(envOf(proxy, "LINKERD2_PROXY_CORES"), "2");
  EXPECT_EQ(envOf(proxy, "LINKERD2_PROXY_CORES_MIN"), "2");
  EXPECT_EQ(envOf(proxy, "LINKERD2_PROXY_CORES_MAX"), "3");
  EXPECT_EQ(envOf(proxy, "LINKERD2_PROXY_CORES_MAX_RATIO"), "0.1");
  EXPECT_EQ(proxy["resources"],
            json::parse(R"({"limits": {"cpu": "3"}, "requests": {"cpu": "1001m"}})"));
  EXPECT_EQ(initOf(*b.patch)["resources"], proxy["resources"]);
}

TEST(PodPatch, AdditionalEnvAppendedAtTheEnd) {
  auto b = build(simplePod(), Values{},
                 {{"config.linkerd.io/proxy-additional-env", R"([{"name":"X","value":"1"}])"}});
  ASSERT_TRUE(b.patch.ok());
  EXPECT_EQ(proxyOf(*b.patch)["env"].back(), json::parse(R"({"name":"X","value":"1"})"));
}

TEST(PodPatch, DebugSidecarAppendedToContainers) {
  std::vector<LogLine> logs;
  auto b = build(simplePod(), devValues(), {{"config.linkerd.io/enable-debug-sidecar", "true"}});
  ASSERT_TRUE(b.patch.ok());
  const json debug = opValue(*b.patch, "/spec/containers/-");
  EXPECT_EQ(debug, json::parse(R"({"image": "cr.l5d.io/linkerd/debug:dev-undefined",
      "imagePullPolicy": "IfNotPresent", "name": "linkerd-debug",
      "terminationMessagePolicy": "FallbackToLogsOnError",
      "livenessProbe": {"exec": {"command": ["true"]}},
      "readinessProbe": {"exec": {"command": ["true"]}}})"));
  EXPECT_EQ(b.logs.back(), (LogLine{LogLine::Level::kInfo, "inject debug container"}));
}

TEST(PodPatch, InvalidDebugSidecarValueWarns) {
  auto b = build(simplePod(), Values{}, {{"config.linkerd.io/enable-debug-sidecar", "yes"}});
  ASSERT_TRUE(b.patch.ok());
  EXPECT_EQ(opValue(*b.patch, "/spec/containers/-"), json(nullptr));
  EXPECT_EQ(
      b.logs.back().message,
      "unrecognized value used for the config.linkerd.io/enable-debug-sidecar annotation: yes");
}

TEST(PodPatch, TracingAddsPodInfoVolumeAndEnv) {
  Values v;
  v.proxy.tracing.enabled = true;
  v.proxy.tracing.collector_endpoint = "collector.linkerd-jaeger:4317";
  v.proxy.tracing.mesh_identity_service_account = "collector";
  v.proxy.tracing.mesh_identity_namespace = "linkerd-jaeger";
  json p = simplePod();
  p["metadata"]["labels"]["app.kubernetes.io/name"] = "web";
  auto b = build(p, v);
  ASSERT_TRUE(b.patch.ok()) << b.patch.error().message;
  bool podinfo = false;
  for (const auto& op : *b.patch) {
    if (op["value"].is_object() && op["value"].value("name", "") == "linkerd-podinfo")
      podinfo = true;
  }
  EXPECT_TRUE(podinfo);
  EXPECT_EQ(envOf(proxyOf(*b.patch), "LINKERD2_PROXY_TRACE_SERVICE_NAME"), "web");
}

TEST(PodPatchErrors, InvalidIptablesMode) {
  Values v;
  v.proxy_init.iptables_mode = "nftables";
  auto b = build(simplePod(), v);
  ASSERT_FALSE(b.patch.ok());
  EXPECT_EQ(b.patch.error().message,
            "Unsupported value \"nftables\" for proxyInit.iptablesMode\nValid values: [\"nft\", "
            "\"legacy\"]");
}

TEST(PodPatchErrors, LegacyIptablesModeHasNoFirewallArgs) {
  Values v;
  v.proxy_init.iptables_mode = "legacy";
  auto b = build(simplePod(), v);
  ASSERT_TRUE(b.patch.ok());
  EXPECT_EQ(initOf(*b.patch)["args"][0], "--ipv6=false");
}

TEST(PodPatchErrors, CloseWaitNeedsRunAsRoot) {
  auto b = build(simplePod(), Values{}, {{"config.linkerd.io/close-wait-timeout", "1m"}});
  ASSERT_FALSE(b.patch.ok());
  EXPECT_EQ(b.patch.error().message,
            "proxyInit.runAsRoot must be set to use proxyInit.closeWaitTimeoutSecs");
  Values root;
  root.proxy_init.run_as_root = true;
  auto ok = build(simplePod(), root, {{"config.linkerd.io/close-wait-timeout", "1m"}});
  ASSERT_TRUE(ok.patch.ok());
  const json init = initOf(*ok.patch);
  EXPECT_EQ(init["securityContext"]["privileged"], true);
  EXPECT_EQ(init["securityContext"]["runAsUser"], 0);
  const json& args = init["args"];
  EXPECT_NE(std::find(args.begin(), args.end(), "60"), args.end());
}

TEST(PodPatchErrors, InvalidLogHttpHeaders) {
  auto b = build(simplePod(), Values{}, {{"config.linkerd.io/proxy-log-http-headers", "on"}});
  ASSERT_FALSE(b.patch.ok());
  EXPECT_EQ(b.patch.error().message, "logHTTPHeaders must be one of: insecure | off");
  auto insecure =
      build(simplePod(), Values{}, {{"config.linkerd.io/proxy-log-http-headers", "insecure"}});
  ASSERT_TRUE(insecure.patch.ok());
  EXPECT_EQ(envOf(proxyOf(*insecure.patch), "LINKERD2_PROXY_LOG"),
            "warn,linkerd=info,hickory=error");
}

TEST(PodPatchErrors, InvalidClusterNetworks) {
  Values v;
  v.cluster_networks = ",10.0.0.0/8,300.0.0.0/8,";
  auto b = build(simplePod(), v);
  ASSERT_FALSE(b.patch.ok());
  EXPECT_EQ(b.patch.error().message,
            "cannot parse destination get networks: invalid CIDR address: 300.0.0.0/8");
}

TEST(PodPatchErrors, MissingTrustAnchors) {
  auto b = build(simplePod(), Values{}, {}, "  \n");
  ASSERT_FALSE(b.patch.ok());
  EXPECT_EQ(b.patch.error().message, "Please provide the identity trust anchors");
}

TEST(PodPatchErrors, TracingWithoutCollector) {
  Values v;
  v.proxy.tracing.enabled = true;
  EXPECT_FALSE(build(simplePod(), v).patch.ok());
}

TEST(Cidr, GoParseCidrAcceptance) {
  for (const char* ok :
       {"10.0.0.0/8", "0.0.0.0/0", "fd00::/8", "::/0", "1.2.3.4/032", "::ffff:1.2.3.4/128"}) {
    EXPECT_TRUE(isValidCidr(ok)) << ok;
  }
  for (const char* bad : {"10.0.0.0", "10.0.0.0/33", "010.0.0.0/8", "10.0.0/8", "fd00::/129",
                          "fe80::1%eth0/64", "", "10.0.0.0/", "10.0.0.0/+8", "1.2.3.4/8x"}) {
    EXPECT_FALSE(isValidCidr(bad)) << bad;
  }
}

TEST(AnnotationPatch, AddsRootOnlyWhenNeededAndHtmlEscapes) {
  EXPECT_EQ(buildOpaquePortsPatch(true, "9090,3306"), json::parse(R"([
      {"op": "add", "path": "/metadata/annotations", "value": {}},
      {"op": "add", "path": "/metadata/annotations/config.linkerd.io~1opaque-ports",
       "value": "9090,3306"}])"));
  EXPECT_EQ(buildOpaquePortsPatch(false, "1+2&'\"<>").at(0)["value"],
            "1&#43;2&amp;&#39;&#34;&lt;&gt;");
}

}  // namespace
}  // namespace harness::injector::linkerd
