// The Istio webhook shell: path parameters (TestParseInjectEnvs) and the HTTP answers of
// serveInject (docs/istio-injector.md §5), called in process.

#include "istio_webhook.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/json_patch.h"
#include "harness/go/base64.h"
#include "harness/injector/kube_api.h"
#include "harness/net/server.h"
#include "harness/testing/support.h"

namespace harness::injector {
namespace {

using json = nlohmann::json;
namespace t = harness::testing;

TEST(ParseInjectEnvs, ClusterAndNetworkMapToIstioMetaEnv) {
  auto envs = parseInjectEnvs("/inject/cluster/cluster1/net/network1");
  EXPECT_EQ(envs, (std::map<std::string, std::string>{{"ISTIO_META_CLUSTER_ID", "cluster1"},
                                                      {"ISTIO_META_NETWORK", "network1"}}));
}

TEST(ParseInjectEnvs, OtherKeysAreUpperCasedSlashesUnescapedAndDanglingKeysDropped) {
  auto envs = parseInjectEnvs("/inject/custom_env/a--slash--b/dangling/");
  EXPECT_EQ(envs, (std::map<std::string, std::string>{{"CUSTOM_ENV", "a/b"}}));
  EXPECT_TRUE(parseInjectEnvs("/inject").empty());
  EXPECT_TRUE(parseInjectEnvs("/inject/").empty());
}

TEST(ParseInjectEnvs, DeprecatedEnvForm) {
  auto envs = parseInjectEnvs("/inject/:ENV:cluster=c2:ENV:net=n2:ENV:=x:ENV:novalue");
  EXPECT_EQ(envs, (std::map<std::string, std::string>{{"ISTIO_META_CLUSTER_ID", "c2"},
                                                      {"ISTIO_META_NETWORK", "n2"}}));
}

TEST(GoPathUnescape, DecodesEscapesKeepsPlusAndRefusesBadOnes) {
  EXPECT_EQ(goPathUnescape("/inject/cluster/a%2Fb%3a+c"), "/inject/cluster/a/b:+c");
  EXPECT_EQ(goPathUnescape("/inject"), "/inject");
  EXPECT_EQ(goPathUnescape("/inject/%"), std::nullopt);
  EXPECT_EQ(goPathUnescape("/inject/%2"), std::nullopt);
  EXPECT_EQ(goPathUnescape("/inject/%zz"), std::nullopt);
}

class IstioWebhookTest : public ::testing::Test {
 protected:
  IstioWebhookTest() : webhook_(config(), metrics_) {}

  static IstioWebhookConfig config() {
    const auto data = t::sourceDir() / "injector" / "istio";
    return {data / "sidecar-injector-config.yaml", data / "values.json", data / "mesh.yaml"};
  }

  net::Response post(const std::string& body, const std::string& path = "/inject",
                     const std::string& content_type = "application/json") {
    net::Request r;
    r.method = "POST";
    r.path = path;
    r.body = body;
    if (!content_type.empty()) r.headers.set("Content-Type", content_type);
    return webhook_.handle(r);
  }

  static json review(const json& pod_annotations = json::object()) {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", "web"}, {"labels", {{"app", "web"}}}}},
                {"spec", {{"containers", {{{"name", "app"}, {"image", "nginx"}}}}}}};
    if (!pod_annotations.empty()) pod["metadata"]["annotations"] = pod_annotations;
    return {{"apiVersion", "admission.k8s.io/v1"},
            {"kind", "AdmissionReview"},
            {"request",
             {{"uid", "u-1"},
              {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
              {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
              {"namespace", "shop"},
              {"operation", "CREATE"},
              {"userInfo", json::object()},
              {"object", pod}}}};
  }

  static json patchOf(const net::Response& res) {
    auto body = json::parse(res.body);
    return json::parse(*go::base64Decode(body["response"]["patch"].get<std::string>()));
  }

  core::MetricsRegistry metrics_;
  IstioWebhook webhook_;
};

TEST_F(IstioWebhookTest, InjectsIstioProxyAndEchoesTheReviewVersionAndUid) {
  auto res = post(review().dump());
  ASSERT_EQ(res.status, 200);
  auto body = json::parse(res.body);
  EXPECT_EQ(body["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(body["response"]["uid"], "u-1");
  EXPECT_EQ(body["response"]["allowed"], true) << res.body;
  EXPECT_EQ(body["response"]["patchType"], "JSONPatch");
  EXPECT_NE(patchOf(res).dump().find("\"name\":\"istio-proxy\""), std::string::npos);
  EXPECT_EQ(metrics_.findCounter("sidecar_injection_success_total")->value({}), 1);
}

TEST_F(IstioWebhookTest, PathParametersBecomeProxyEnv) {
  auto res = post(review().dump(), "/inject/cluster/east/net/net-1");
  ASSERT_EQ(res.status, 200);
  const std::string patch = patchOf(res).dump();
  EXPECT_NE(patch.find("{\"name\":\"ISTIO_META_CLUSTER_ID\",\"value\":\"east\"}"),
            std::string::npos)
      << patch;
  EXPECT_NE(patch.find("{\"name\":\"ISTIO_META_NETWORK\",\"value\":\"net-1\"}"),
            std::string::npos);
}

TEST_F(IstioWebhookTest, PathParametersArePercentDecodedFirst) {
  // r.URL.Path is decoded: "%2F" is a separator (so "c%2Fx" is cluster c then a dangling key),
  // and the deprecated form may arrive escaped.
  auto envs_of = [&](const std::string& path) {
    auto res = post(review().dump(), path);
    EXPECT_EQ(res.status, 200) << path;
    std::map<std::string, std::string> envs;
    for (const auto& op : patchOf(res)) {
      if (!op.contains("value") || !op["value"].is_object()) continue;
      const auto& v = op["value"];
      if (v.value("name", "") != "istio-proxy" || !v.contains("env")) continue;
      for (const auto& e : v["env"]) {
        const std::string n = e.value("name", "");
        if (n == "ISTIO_META_CLUSTER_ID" || n == "ISTIO_META_NETWORK") envs[n] = e.value("value", "");
      }
    }
    return envs;
  };
  EXPECT_EQ(envs_of("/inject/cluster/c%2Fx/net/n1"),
            (std::map<std::string, std::string>{{"ISTIO_META_CLUSTER_ID", "c"}}));
  EXPECT_EQ(envs_of("/inject/%3AENV%3Acluster%3Dc2%3AENV%3Anet%3Dn%2D2"),
            (std::map<std::string, std::string>{{"ISTIO_META_CLUSTER_ID", "c2"},
                                                {"ISTIO_META_NETWORK", "n-2"}}));
  auto bad = post(review().dump(), "/inject/cluster/%zz");
  EXPECT_EQ(bad.status, 400);
  EXPECT_EQ(bad.body, "400 Bad Request");
}

// Answers are kept per whole input (IstioWebhook::admit): the same review gets the same answer
// again, and a pod that differs in anything the template reads gets its own.
TEST_F(IstioWebhookTest, AKeptAnswerIsOnlyGivenToTheSamePod) {
  const auto first = post(review().dump());
  const auto again = post(review().dump());
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(again.body, first.body);
  const auto other = post(review({{"sidecar.istio.io/proxyCPU", "300m"}}).dump());
  EXPECT_NE(patchOf(other), patchOf(first));
  EXPECT_NE(patchOf(other).dump().find("\"cpu\":\"300m\""), std::string::npos);
  // And what a webhook that never saw the first pod answers.
  core::MetricsRegistry metrics;
  IstioWebhook fresh(config(), metrics);
  net::Request r;
  r.method = "POST";
  r.path = "/inject";
  r.headers.set("Content-Type", "application/json");
  r.body = review({{"sidecar.istio.io/proxyCPU", "300m"}}).dump();
  EXPECT_EQ(fresh.handle(r).body, other.body);
  EXPECT_EQ(post(review().dump()).body, first.body);
  EXPECT_EQ(metrics_.findCounter("sidecar_injection_success_total")->value({}), 4);
}

TEST_F(IstioWebhookTest, InjectFalseIsAllowedWithoutPatch) {
  auto res = post(review({{"sidecar.istio.io/inject", "false"}}).dump());
  auto body = json::parse(res.body);
  EXPECT_EQ(body["response"]["allowed"], true);
  EXPECT_FALSE(body["response"].contains("patch"));
  EXPECT_EQ(metrics_.findCounter("sidecar_injection_skip_total")->value({}), 1);
}

TEST_F(IstioWebhookTest, BadBodiesGetIstiosAnswers) {
  auto empty = post("");
  EXPECT_EQ(empty.status, 400);
  EXPECT_EQ(empty.body, "no body found\n");
  auto text = post(review().dump(), "/inject", "text/plain");
  EXPECT_EQ(text.status, 415);
  EXPECT_EQ(text.body, "invalid Content-Type, want `application/json`\n");
  auto garbage = post("{not json");
  EXPECT_EQ(garbage.status, 200);  // a decode error is an explicit deny, not an HTTP error
  EXPECT_EQ(json::parse(garbage.body)["response"]["allowed"], false);
  auto huge = post(std::string(std::size_t{7} * 1024 * 1024, ' '));
  EXPECT_EQ(huge.status, 400);
}

TEST_F(IstioWebhookTest, InvalidAnnotationsDenyWithIstiosMessage) {
  auto res = post(review({{"traffic.sidecar.istio.io/includeInboundPorts", "80,abc"}}).dump());
  auto body = json::parse(res.body);
  EXPECT_EQ(body["response"]["allowed"], false);
  EXPECT_FALSE(body["response"]["status"]["message"].get<std::string>().empty());
  EXPECT_EQ(metrics_.findCounter("sidecar_injection_failure_total")->value({}), 1);
}

std::string messageOf(const net::Response& res) {
  return json::parse(res.body)["response"]["status"]["message"].get<std::string>();
}

// webhook.go inject: json.Unmarshal(req.Object.Raw, &pod) fails and is answered as a deny with
// err.Error(), never as an injection.
TEST_F(IstioWebhookTest, PodsThatDoNotDecodeAreDeniedWithGosMessage) {
  const std::vector<std::pair<std::function<void(json&)>, std::string>> cases = {
      {[](json& pod) { pod["spec"] = "nope"; },
       "json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec"},
      {[](json& pod) { pod["metadata"] = json::array({1}); },
       "json: cannot unmarshal array into Go struct field Pod.metadata of type v1.ObjectMeta"},
      {[](json& pod) { pod["spec"]["containers"] = json::object(); },
       "json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type "
       "[]v1.Container"},
      {[](json& pod) { pod["spec"]["containers"][0]["name"] = 7; },
       "json: cannot unmarshal number into Go struct field Container.spec.containers.name of "
       "type string"},
      {[](json& pod) { pod["metadata"]["labels"]["app"] = true; },
       "json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels.app of type "
       "string"},
      {[](json& pod) { pod["spec"]["containers"][0]["ports"] = {{{"containerPort", 1.5}}}; },
       "json: cannot unmarshal number 1.5 into Go struct field "
       "ContainerPort.spec.containers.ports.containerPort of type int32"},
      {[](json& pod) {
         pod["spec"]["containers"][0]["readinessProbe"] = {{"httpGet", {{"port", true}}}};
       },
       "json: cannot unmarshal bool into Go value of type int32"},
      {[](json& pod) { pod["spec"]["containers"][0]["resources"] = {{"limits", {{"cpu", "x"}}}}; },
       "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"},
      {[](json& pod) { pod = json::array(); },
       "json: cannot unmarshal array into Go value of type v1.Pod"},
  };
  for (const auto& [mutate, message] : cases) {
    json r = review();
    mutate(r["request"]["object"]);
    auto res = post(r.dump());
    ASSERT_EQ(res.status, 200);
    auto body = json::parse(res.body);
    EXPECT_EQ(body["response"]["allowed"], false) << message;
    EXPECT_FALSE(body["response"].contains("patch")) << message;
    EXPECT_EQ(body["response"]["status"]["message"], message);
  }
  EXPECT_EQ(metrics_.findCounter("sidecar_injection_failure_total")->value({}), static_cast<double>(cases.size()));
}

TEST_F(IstioWebhookTest, NullFieldsDecodeAsZeroValues) {
  // JSON null into a slice, map or struct leaves it at its zero value: the pod decodes.
  json r = review();
  r["request"]["object"]["metadata"]["labels"] = nullptr;
  r["request"]["object"]["spec"]["volumes"] = nullptr;
  r["request"]["object"]["spec"]["containers"][0]["ports"] = nullptr;
  auto res = post(r.dump());
  ASSERT_EQ(res.status, 200);
  EXPECT_EQ(json::parse(res.body)["response"]["allowed"], true) << res.body;
}

// encoding/json refuses nesting deeper than 10,000 while scanning; the universal deserializer
// reads apiVersion/kind first and wraps the error (meta.go Interpret).
TEST_F(IstioWebhookTest, DeeplyNestedObjectIsRefusedAsADecodeError) {
  json r = review();
  r["request"]["object"] = "DEEP";
  std::string body = r.dump();
  body.replace(body.find("\"DEEP\""), 6, std::string(70000, '[') + std::string(70000, ']'));
  auto res = post(body);
  ASSERT_EQ(res.status, 200);
  EXPECT_EQ(json::parse(res.body)["response"]["allowed"], false);
  EXPECT_EQ(messageOf(res),
            "couldn't get version/kind; json parse error: invalid character '[' exceeded max "
            "depth");
  EXPECT_EQ(metrics_.findCounter("sidecar_injection_failure_total")->value({}), 1);
}

TEST(IstioWebhookConfigTest, ValuesPathThatIsADirectoryIsAnErrorNamingIt) {
  t::ScratchDir dir("istio-config");
  std::filesystem::create_directories(dir / "values");
  const auto data = t::sourceDir() / "injector" / "istio";
  core::MetricsRegistry metrics;
  IstioWebhook webhook({data / "sidecar-injector-config.yaml", dir / "values", data / "mesh.yaml"},
                       metrics);
  const std::string expected = "read " + (dir / "values").string() + ": Is a directory";
  auto ready = webhook.checkConfig();
  ASSERT_FALSE(ready.ok());
  EXPECT_EQ(ready.error().message, expected);
  EXPECT_EQ(metrics.findCounter("injector_config_errors_total")->value({"istio"}), 1);

  net::Request r;
  r.method = "POST";
  r.path = "/inject";
  r.headers.set("Content-Type", "application/json");
  r.body = json{{"apiVersion", "admission.k8s.io/v1"},
                {"kind", "AdmissionReview"},
                {"request", {{"uid", "u"}, {"object", {{"kind", "Pod"}}}}}}
               .dump();
  auto res = webhook.handle(r);
  ASSERT_EQ(res.status, 200);
  EXPECT_EQ(json::parse(res.body)["response"]["allowed"], false);
  EXPECT_EQ(messageOf(res), expected);
  // Reported once, not once per request.
  EXPECT_EQ(metrics.findCounter("injector_config_errors_total")->value({"istio"}), 1);

  // loadIstioSettings (the offline command) refuses it the same way.
  auto loaded = loadIstioSettings({data / "sidecar-injector-config.yaml", dir / "values",
                                   data / "mesh.yaml"});
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.error().message, expected);
}

TEST(IstioWebhookConfigTest, AFailedReloadKeepsTheLastGoodSettings) {
  t::ScratchDir dir("istio-reload");
  const auto data = t::sourceDir() / "injector" / "istio";
  std::filesystem::copy_file(data / "values.json", dir / "values.json");
  core::MetricsRegistry metrics;
  IstioWebhook webhook({data / "sidecar-injector-config.yaml", dir / "values.json",
                        data / "mesh.yaml"},
                       metrics);
  ASSERT_TRUE(webhook.checkConfig().ok());
  t::writeFile(dir / "values.json.new", "{\"global\": [not json");
  std::filesystem::rename(dir / "values.json.new", dir / "values.json");
  EXPECT_TRUE(webhook.checkConfig().ok());  // still ready: the previous settings serve
  EXPECT_EQ(metrics.findCounter("injector_config_errors_total")->value({"istio"}), 1);
}

// New settings, new answers: nothing kept for the old ones is given.
TEST(IstioWebhookConfigTest, ANewConfigurationIsNotAnsweredFromTheOldOnesAnswers) {
  t::ScratchDir dir("istio-reload-answers");
  const auto data = t::sourceDir() / "injector" / "istio";
  std::filesystem::copy_file(data / "values.json", dir / "values.json");
  core::MetricsRegistry metrics;
  IstioWebhook webhook({data / "sidecar-injector-config.yaml", dir / "values.json",
                        data / "mesh.yaml"},
                       metrics);
  net::Request r;
  r.method = "POST";
  r.path = "/inject";
  r.headers.set("Content-Type", "application/json");
  r.body = json{{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"},
                {"request", {{"uid", "u"}, {"namespace", "shop"}, {"operation", "CREATE"},
                             {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                             {"object", {{"apiVersion", "v1"}, {"kind", "Pod"},
                                         {"metadata", {{"name", "web"}}},
                                         {"spec", {{"containers", {{{"name", "app"},
                                                                    {"image", "nginx"}}}}}}}}}}}
               .dump();
  const auto before = webhook.handle(r);
  ASSERT_EQ(webhook.handle(r).body, before.body);
  json values = json::parse(t::readFile(dir / "values.json"));
  values["global"]["hub"] = "example.com/other";
  t::writeFile(dir / "values.json.new", values.dump());
  std::filesystem::rename(dir / "values.json.new", dir / "values.json");
  const auto after = webhook.handle(r);
  ASSERT_EQ(after.status, 200);
  const auto body = json::parse(after.body);
  const auto patch = *go::base64Decode(body["response"]["patch"].get<std::string>());
  EXPECT_NE(patch.find("example.com/other/proxyv2"), std::string::npos) << patch;
}

TEST(IstioWebhookConfigTest, ATemplateWithAnUnimplementedFunctionIsAConfigError) {
  t::ScratchDir dir("istio-func");
  const auto data = t::sourceDir() / "injector" / "istio";
  std::filesystem::copy_file(data / "sidecar-injector-config.yaml", dir / "config.yaml");
  const std::string bad = "templates:\n  sidecar: '{{ if .X }}{{ uuidv4 }}{{ end }}'\n";
  const std::string expected =
      "config: template \"sidecar\": template: inject:1: function \"uuidv4\" not defined "
      "(Sprig's uuidv4 is not implemented by this template engine)";
  {
    // At start: not ready, every review answered with the error.
    t::writeFile(dir / "bad.yaml", bad);
    core::MetricsRegistry metrics;
    IstioWebhook webhook({dir / "bad.yaml", data / "values.json", data / "mesh.yaml"}, metrics);
    auto ready = webhook.checkConfig();
    ASSERT_FALSE(ready.ok());
    EXPECT_EQ(ready.error().message, expected);
    EXPECT_EQ(metrics.findCounter("injector_config_errors_total")->value({"istio"}), 1);
  }
  // On reload: counted as a config error, the last good template keeps injecting.
  core::MetricsRegistry metrics;
  IstioWebhook webhook({dir / "config.yaml", data / "values.json", data / "mesh.yaml"}, metrics);
  ASSERT_TRUE(webhook.checkConfig().ok());
  t::writeFile(dir / "config.yaml.new", bad);
  std::filesystem::rename(dir / "config.yaml.new", dir / "config.yaml");
  EXPECT_TRUE(webhook.checkConfig().ok());
  EXPECT_EQ(metrics.findCounter("injector_config_errors_total")->value({"istio"}), 1);
}

// A Kubernetes API on 127.0.0.1 serving Nodes (GET of the list and of one node).
class NodeApiServer {
 public:
  explicit NodeApiServer(std::vector<json> nodes) : nodes_(std::move(nodes)) {
    net::Router router;
    router.fallback([this](const net::Request& r) { return serve(r); });
    server_ = std::make_unique<net::Server>(net::ServerOptions{}, std::move(router));
    if (auto started = server_->start(); !started) throw std::runtime_error(started.error().message);
  }
  ~NodeApiServer() { server_->stop(); }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(server_->port()); }

 private:
  net::Response serve(const net::Request& r) {
    if (r.method == "GET" && r.path == "/api/v1/nodes") {
      return net::Response::json(200, json{{"kind", "NodeList"}, {"apiVersion", "v1"},
                                           {"items", nodes_}}.dump());
    }
    for (const auto& n : nodes_) {
      if (r.method == "GET" && r.path == "/api/v1/nodes/" + n["metadata"]["name"].get<std::string>()) {
        return net::Response::json(200, n.dump());
      }
    }
    return net::Response::json(404, json{{"kind", "Status"}, {"code", 404}, {"reason", "NotFound"}}.dump());
  }

  std::vector<json> nodes_;
  std::unique_ptr<net::Server> server_;
};

json kubeletNode(const std::string& name, const std::string& version) {
  return {{"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"name", name}}},
          {"status", {{"nodeInfo", {{"kubeletVersion", version}}}}}};
}

// A plain pod (one nginx container).
json plainPod() {
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "web"}}},
          {"spec", {{"containers", {{{"name", "app"}, {"image", "nginx"}}}}}}};
}

// POST /inject of a CREATE review of `pod` in `namespace_name`.
net::Request injectRequest(const json& pod, const std::string& namespace_name) {
  net::Request r;
  r.method = "POST";
  r.path = "/inject";
  r.headers.set("Content-Type", "application/json");
  r.body = json{{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"},
                {"request", {{"uid", "u"}, {"namespace", namespace_name}, {"operation", "CREATE"},
                             {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                             {"object", pod}}}}.dump();
  return r;
}

// Where istio-proxy went: "initContainers" (native) or "containers" (classic).
std::string proxyPlace(IstioWebhook& webhook, const std::string& node_name = "") {
  json pod = plainPod();
  if (!node_name.empty()) pod["spec"]["nodeName"] = node_name;
  auto res = webhook.handle(injectRequest(pod, "shop"));
  const auto body = json::parse(res.body);
  const auto patch = json::parse(*go::base64Decode(body["response"]["patch"].get<std::string>()));
  for (const auto& op : patch) {
    if (op.value("value", json()).is_object() && op["value"].value("name", "") == "istio-proxy") {
      return op["path"].get<std::string>().find("/initContainers") != std::string::npos
                 ? "initContainers" : "containers";
    }
    if (op.value("value", json()).is_array()) {
      for (const auto& c : op["value"]) {
        if (c.is_object() && c.value("name", "") == "istio-proxy") {
          return op["path"].get<std::string>().find("/initContainers") != std::string::npos
                     ? "initContainers" : "containers";
        }
      }
    }
  }
  return "none";
}

TEST(IstioWebhookNativeSidecars, AutoReadsTheNodesKubeletVersionsThroughTheApi) {
  const auto data = t::sourceDir() / "injector" / "istio";
  const IstioWebhookConfig files{data / "sidecar-injector-config.yaml", data / "values.json",
                                 data / "mesh.yaml"};
  core::MetricsRegistry metrics;
  {
    NodeApiServer api({kubeletNode("a", "v1.33.2"), kubeletNode("b", "v1.34.0")});
    KubeConnection c;
    c.server = api.url();
    auto kube = makeRestKubeApi(c);
    IstioWebhook webhook(files, metrics, kube.get());  // mode: values' default, auto
    EXPECT_EQ(proxyPlace(webhook), "initContainers");
    // The flag overrides the nodes.
    IstioWebhookConfig off = files;
    off.native_sidecars_mode = "false";
    IstioWebhook forced(off, metrics, kube.get());
    EXPECT_EQ(proxyPlace(forced), "containers");
  }
  {
    NodeApiServer api({kubeletNode("a", "v1.34.0"), kubeletNode("old", "v1.31.4")});
    KubeConnection c;
    c.server = api.url();
    auto kube = makeRestKubeApi(c);
    IstioWebhook webhook(files, metrics, kube.get());
    EXPECT_EQ(proxyPlace(webhook), "containers");        // one old kubelet: classic
    EXPECT_EQ(proxyPlace(webhook, "a"), "initContainers");  // the pod's own node decides
    EXPECT_EQ(proxyPlace(webhook, "gone"), "containers");   // unknown node: every node
    IstioWebhookConfig on = files;
    on.native_sidecars = true;  // --istio-native-sidecars
    IstioWebhook forced(on, metrics, kube.get());
    EXPECT_EQ(proxyPlace(forced), "initContainers");
  }
  // No node client: auto is off.
  IstioWebhook without(files, metrics);
  EXPECT_EQ(proxyPlace(without), "containers");
}

}  // namespace
}  // namespace harness::injector

namespace harness::injector {
namespace {

// The istio-proxy container of the pod the webhook's patch makes of a plain pod in test-ns.
json injectedProxy(IstioWebhook& webhook) {
  const json pod = plainPod();
  const auto body = json::parse(webhook.handle(injectRequest(pod, "test-ns")).body);
  const auto patch =
      core::decodePatch(*go::base64Decode(body["response"]["patch"].get<std::string>()));
  if (!patch) return nullptr;
  auto patched = core::applyPatch(pod, *patch);
  if (!patched) return nullptr;
  for (const char* list : {"containers", "initContainers"}) {
    for (const auto& c : (*patched)["spec"].value(list, json::array())) {
      if (c.value("name", "") == "istio-proxy") return c;
    }
  }
  return nullptr;
}

// istiod with PLATFORM=openshift (the chart's env from values.global.platform) reads the pod's
// Namespace and runs the proxy as the end of its uid range (pkg/kube/inject GetProxyIDs).
TEST(IstioWebhookOpenShift, TheProxyRunsAsTheNamespacesPreallocatedUser) {
  t::ScratchDir dir{"istio-openshift"};
  const auto data = t::sourceDir() / "injector" / "istio";
  json values = json::parse(t::readFile(data / "values.json"));
  values["global"]["platform"] = "openshift";
  t::writeFile(dir / "values.json", values.dump());
  const IstioWebhookConfig files{data / "sidecar-injector-config.yaml", dir / "values.json",
                                 data / "mesh.yaml"};
  LocalKubeApi api(std::vector<json>{json{{"apiVersion", "v1"},
                         {"kind", "Namespace"},
                         {"metadata",
                          {{"name", "test-ns"},
                           {"annotations",
                            {{"openshift.io/sa.scc.uid-range", "1000620000/10000"},
                             {"openshift.io/sa.scc.supplemental-groups", "5000/10"}}}}}}});
  core::MetricsRegistry metrics;
  IstioWebhook openshift(files, metrics, nullptr, &api);
  const json proxy = injectedProxy(openshift);
  ASSERT_TRUE(proxy.is_object());
  EXPECT_EQ(proxy["securityContext"]["runAsUser"], 1000629999);
  EXPECT_EQ(proxy["securityContext"]["runAsGroup"], 5009);

  // Another platform named on the command line: istiod's defaults.
  IstioWebhookConfig other = files;
  other.platform = "gcp";
  IstioWebhook gcp(other, metrics, nullptr, &api);
  EXPECT_EQ(injectedProxy(gcp)["securityContext"]["runAsUser"], 1337);

  // Without a Kubernetes API there is no Namespace to read.
  IstioWebhook without(files, metrics);
  EXPECT_EQ(injectedProxy(without)["securityContext"]["runAsUser"], 1337);

  // The configuration's own platform (not OpenShift) with the Namespace available: 1337.
  const IstioWebhookConfig plain{data / "sidecar-injector-config.yaml", data / "values.json",
                                 data / "mesh.yaml"};
  IstioWebhook kube(plain, metrics, nullptr, &api);
  EXPECT_EQ(injectedProxy(kube)["securityContext"]["runAsUser"], 1337);
}

}  // namespace
}  // namespace harness::injector
