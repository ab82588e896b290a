// `injector serve --profile istio` as a process: generated certificates, real HTTPS on
// 127.0.0.1, AdmissionReviews v1 and v1beta1 on /inject, /inject/cluster/<c>/net/<n> and the
// :ENV: form, Istio's answers to bad requests (docs/istio-injector.md §5), the sidecar_injection_*
// metrics on the admin port, configuration reload, SIGTERM.

#include <gtest/gtest.h>

#include <filesystem>

#include <nlohmann/json.hpp>

#include "harness/core/json_patch.h"
#include "harness/core/yaml.h"
#include "harness/go/base64.h"
#include "harness/injector/istio/go_patch.h"
#include "harness/net/client.h"
#include "harness/testing/support.h"
#include "served_injector.h"

namespace harness::injector {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;
namespace fs = std::filesystem;
namespace t = harness::testing;

fs::path dataDir() { return t::sourceDir() / "injector" / "istio"; }
fs::path goldenDir() { return t::sourceDir() / "injector" / "tests" / "istio" / "testdata" / "golden"; }

json readYaml(const fs::path& path) {
  auto doc = core::parseYaml(t::readFile(path));
  EXPECT_TRUE(doc.ok()) << path;
  return doc.ok() ? *doc : json();
}

json review(const std::string& api_version, const std::string& uid, const json& pod) {
  return {{"apiVersion", api_version},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", uid},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"namespace", "default"},
            {"operation", "CREATE"},
            {"userInfo", {{"username", "system:serviceaccount:kube-system:replicaset-controller"}}},
            {"object", pod},
            {"oldObject", nullptr},
            {"dryRun", false}}}};
}

// Replaces `path` the way a ConfigMap volume changes: a new file renamed over the old one.
void swapFile(const fs::path& path, const std::string& content) {
  const fs::path tmp = path.string() + ".new";
  t::writeFile(tmp, content);
  fs::rename(tmp, path);
}

class IstioInjectorProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t::generateCertificates(dir_ / "webhook");
    // Copies, so the reload test can change them.
    for (const char* f : {"sidecar-injector-config.yaml", "values.json", "mesh.yaml"}) {
      fs::copy_file(dataDir() / f, dir_ / f);
    }
    ASSERT_NO_FATAL_FAILURE(injector_.start(
        dir_.path(), {HARNESS_INJECTOR_BINARY, "--log-level", "debug", "serve", "--profile", "istio",
               "--address", "127.0.0.1", "--port", "0", "--admin-port", "0",
               "--tls-cert", (dir_ / "webhook" / "tls.crt").string(),
               "--tls-key", (dir_ / "webhook" / "tls.key").string(),
               "--istio-config", (dir_ / "sidecar-injector-config.yaml").string(),
               "--istio-values", (dir_ / "values.json").string(),
               "--istio-mesh", (dir_ / "mesh.yaml").string(),
               "--istio-native-sidecars"}));
  }

  void TearDown() override { injector_.stop(); }

  net::ClientResponse post(const std::string& body, const std::string& path = "/inject",
                           const std::string& content_type = "application/json") {
    return injector_.post(body, path, content_type);
  }
  net::ClientResponse get(const std::string& url) { return injector_.get(url); }
  std::string admin(const std::string& path) { return injector_.admin(path); }

  json admit(const json& pod, const std::string& path = "/inject",
             const std::string& api_version = "admission.k8s.io/v1") {
    auto res = post(review(api_version, "uid-" + std::to_string(++uid_), pod).dump(), path);
    EXPECT_TRUE(res.ok()) << res.error_message;
    EXPECT_EQ(res.status, 200) << res.body;
    auto body = json::parse(res.body, nullptr, false);
    EXPECT_FALSE(body.is_discarded()) << res.body;
    return body;
  }

  // What kube-apiserver does with the answer: the patch applied to its encoding of the pod.
  static json patched(const json& pod, const json& review) {
    auto bytes = go::base64Decode(review["response"]["patch"].get<std::string>());
    EXPECT_TRUE(bytes.ok());
    auto patch = core::decodePatch(*bytes);
    EXPECT_TRUE(patch.ok()) << *bytes;
    auto applied = core::applyPatch(istio::goTypedPod(pod), *patch);
    EXPECT_TRUE(applied.ok()) << applied.error().message;
    return applied.ok() ? *applied : json();
  }

  static const json& proxyEnv(const json& pod) {
    for (const auto& c : pod["spec"]["initContainers"]) {
      if (c["name"] == "istio-proxy") return c["env"];
    }
    static const json kNone;
    return kNone;
  }


  t::ScratchDir dir_{"istio-injector"};
  tests::ServedInjector injector_;
  int uid_ = 0;
};

TEST_F(IstioInjectorProcessTest, ThePatchTurnsThePodIntoTheGoldenInjectedPod) {
  const json pod = readYaml(goldenDir() / "hello.yaml");
  const json golden = readYaml(goldenDir() / "hello.yaml.injected")["pod"];
  auto body = admit(pod);
  EXPECT_EQ(body["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(body["kind"], "AdmissionReview");
  EXPECT_EQ(body["response"]["uid"], "uid-1");
  EXPECT_EQ(body["response"]["allowed"], true);
  EXPECT_EQ(body["response"]["patchType"], "JSONPatch");
  EXPECT_EQ(patched(pod, body), istio::goTypedPod(golden));
}

TEST_F(IstioInjectorProcessTest, V1beta1WithClusterAndNetworkInThePath) {
  const json pod = readYaml(goldenDir() / "hello.yaml");
  auto body = admit(pod, "/inject/cluster/c1/net/n1", "admission.k8s.io/v1beta1");
  EXPECT_EQ(body["apiVersion"], "admission.k8s.io/v1beta1");
  EXPECT_EQ(body["response"]["allowed"], true);
  const json out = patched(pod, body);
  const json& env = proxyEnv(out);
  ASSERT_GE(env.size(), 2u);
  EXPECT_EQ(env[env.size() - 2], (json{{"name", "ISTIO_META_CLUSTER_ID"}, {"value", "c1"}}));
  EXPECT_EQ(env[env.size() - 1], (json{{"name", "ISTIO_META_NETWORK"}, {"value", "n1"}}));
  EXPECT_EQ(out["metadata"]["labels"]["topology.istio.io/network"], "n1");
}

TEST_F(IstioInjectorProcessTest, DeprecatedEnvPathForm) {
  const json pod = readYaml(goldenDir() / "hello.yaml");
  auto body = admit(pod, "/inject/:ENV:cluster=c2:ENV:net=n2");
  const json out = patched(pod, body);
  const json& env = proxyEnv(out);
  ASSERT_GE(env.size(), 2u);
  EXPECT_EQ(env[env.size() - 2], (json{{"name", "ISTIO_META_CLUSTER_ID"}, {"value", "c2"}}));
  EXPECT_EQ(env[env.size() - 1], (json{{"name", "ISTIO_META_NETWORK"}, {"value", "n2"}}));
}

TEST_F(IstioInjectorProcessTest, BadRequestsGetIstiosStatusCodes) {
  auto empty = post("");
  ASSERT_TRUE(empty.ok()) << empty.error_message;
  EXPECT_EQ(empty.status, 400);
  EXPECT_EQ(empty.body, "no body found\n");

  auto text = post(review("admission.k8s.io/v1", "x", json::object()).dump(), "/inject",
                   "text/plain");
  EXPECT_EQ(text.status, 415);
  EXPECT_EQ(text.body, "invalid Content-Type, want `application/json`\n");

  auto huge = post(std::string(std::size_t{7} * 1024 * 1024, ' '));
  ASSERT_TRUE(huge.ok()) << huge.error_message;
  EXPECT_EQ(huge.status, 400);

  // A body that does not decode is answered with HTTP 200 and allowed: false.
  auto garbage = post("{not json");
  EXPECT_EQ(garbage.status, 200);
  auto body = json::parse(garbage.body);
  EXPECT_EQ(body["response"]["allowed"], false);
  EXPECT_FALSE(body["response"]["status"]["message"].get<std::string>().empty());

  // Still serving.
  EXPECT_EQ(admit(readYaml(goldenDir() / "hello.yaml"))["response"]["allowed"], true);
}

// A body nested 70,000 deep used to crash the process (a recursive copy of the decoded object
// overflowed the stack). encoding/json refuses it while scanning; Istio answers the decode error.
TEST_F(IstioInjectorProcessTest, DeeplyNestedReviewIsDeniedAndTheProcessKeepsServing) {
  json r = review("admission.k8s.io/v1", "deep", readYaml(goldenDir() / "hello.yaml"));
  r["request"]["object"]["spec"]["x"] = "DEEP";
  std::string body = r.dump();
  body.replace(body.find("\"DEEP\""), 6, std::string(70000, '[') + std::string(70000, ']'));
  auto res = post(body);
  ASSERT_TRUE(res.ok()) << res.error_message;
  ASSERT_EQ(res.status, 200) << res.body;
  auto answer = json::parse(res.body);
  EXPECT_EQ(answer["response"]["allowed"], false);
  EXPECT_EQ(answer["response"]["status"]["message"],
            "couldn't get version/kind; json parse error: invalid character '[' exceeded max "
            "depth");
  EXPECT_EQ(admit(readYaml(goldenDir() / "hello.yaml"))["response"]["allowed"], true);
}

// json.Unmarshal into a corev1.Pod fails for these (webhook.go inject); they used to be
// injected as if the field were absent.
TEST_F(IstioInjectorProcessTest, PodsThatDoNotDecodeAreDenied) {
  json pod = readYaml(goldenDir() / "hello.yaml");
  pod["spec"] = "nope";
  auto body = admit(pod);
  EXPECT_EQ(body["response"]["allowed"], false);
  EXPECT_FALSE(body["response"].contains("patch"));
  EXPECT_EQ(body["response"]["status"]["message"],
            "json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec");
}

TEST_F(IstioInjectorProcessTest, InvalidAnnotationsAreDeniedWithIstiosMessage) {
  json pod = readYaml(goldenDir() / "hello.yaml");
  pod["metadata"]["annotations"] = {{"proxy.istio.io/config", "statusPort: 0"}};
  auto body = admit(pod);
  EXPECT_EQ(body["response"]["allowed"], false);
  EXPECT_EQ(body["response"]["status"]["message"],
            "failed to run injection template: 1 error occurred:\n\t* invalid value "
            "'statusPort: 0' for annotation 'proxy.istio.io/config': 1 error occurred:\n"
            "\t* invalid status port: port number 0 must be in the range 1..65535\n\n\n\n");
}

TEST_F(IstioInjectorProcessTest, OptedOutPodsAreAllowedWithoutAPatch) {
  json pod = readYaml(goldenDir() / "hello.yaml");
  pod["metadata"]["labels"]["sidecar.istio.io/inject"] = "false";
  auto body = admit(pod);
  EXPECT_EQ(body["response"]["allowed"], true);
  EXPECT_FALSE(body["response"].contains("patch"));
}

TEST_F(IstioInjectorProcessTest, CountsRequestsOnTheAdminPortMetrics) {
  const json pod = readYaml(goldenDir() / "hello.yaml");
  admit(pod);
  json opted_out = pod;
  opted_out["metadata"]["labels"]["sidecar.istio.io/inject"] = "false";
  admit(opted_out);
  json bad = pod;
  bad["metadata"]["annotations"] = {{"sidecar.istio.io/interceptionMode", "X"}};
  admit(bad);
  auto metrics = get(admin("/metrics"));
  ASSERT_EQ(metrics.status, 200);
  for (const char* line : {"sidecar_injection_requests_total 3", "sidecar_injection_success_total 1",
                           "sidecar_injection_skip_total 1", "sidecar_injection_failure_total 1",
                           "sidecar_injection_time_seconds_count 3"}) {
    EXPECT_NE(metrics.body.find(line), std::string::npos) << line << "\n" << metrics.body;
  }
  EXPECT_EQ(get(admin("/ready")).status, 200);
  EXPECT_EQ(get(injector_.webhookUrl("/ready")).status, 200);
}

TEST_F(IstioInjectorProcessTest, ReloadsValuesAndKeepsTheLastGoodConfigOnAParseError) {
  const json pod = readYaml(goldenDir() / "hello.yaml");
  auto image = [&](const json& body) {
    const json out = patched(pod, body);
    for (const auto& c : out["spec"]["initContainers"]) {
      if (c["name"] == "istio-proxy") return c["image"].get<std::string>();
    }
    return std::string();
  };
  EXPECT_EQ(image(admit(pod)), "registry.istio.io/testing/proxyv2:latest");

  json values = json::parse(t::readFile(dir_ / "values.json"));
  values["global"]["hub"] = "registry.local/mesh";
  swapFile(dir_ / "values.json", values.dump(2));
  EXPECT_EQ(image(admit(pod)), "registry.local/mesh/proxyv2:latest");

  // watcher.go: a configuration that does not parse is logged and the old one kept.
  swapFile(dir_ / "sidecar-injector-config.yaml", "templates: [not, a, map]\n");
  auto kept = admit(pod);
  EXPECT_EQ(kept["response"]["allowed"], true);
  EXPECT_EQ(image(kept), "registry.local/mesh/proxyv2:latest");
}

}  // namespace
}  // namespace harness::injector
