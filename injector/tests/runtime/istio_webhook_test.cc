// The Istio webhook shell: path parameters (TestParseInjectEnvs) and the HTTP answers of
// serveInject (istio-injector.md §5), called in process.

#include "istio_webhook.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness/core/base64.h"
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
    return json::parse(*core::base64Decode(body["response"]["patch"].get<std::string>()));
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
  auto huge = post(std::string(7 * 1024 * 1024, ' '));
  EXPECT_EQ(huge.status, 400);
}

TEST_F(IstioWebhookTest, InvalidAnnotationsDenyWithIstiosMessage) {
  auto res = post(review({{"traffic.sidecar.istio.io/includeInboundPorts", "80,abc"}}).dump());
  auto body = json::parse(res.body);
  EXPECT_EQ(body["response"]["allowed"], false);
  EXPECT_FALSE(body["response"]["status"]["message"].get<std::string>().empty());
  EXPECT_EQ(metrics_.findCounter("sidecar_injection_failure_total")->value({}), 1);
}

}  // namespace
}  // namespace harness::injector
