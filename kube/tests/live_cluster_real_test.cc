// `apiserver-sim lint --kubeconfig` and `apiserver-sim explain --kubeconfig -f` against the real
// control plane (CTest label `real`), over real TLS with the kubeconfig it writes: Linkerd's and
// Istio's webhook configurations and ConfigMaps as installed, a policy webhook that can lock
// itself out, and Pods explained in an Istio and a Linkerd namespace. Nothing is created by
// explain: the test checks that no Pod exists afterwards. Skipped, with one line, when the
// binaries of scripts/build-kube.sh are not built.

#include <chrono>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/yaml.h"
#include "harness/kube/control_plane.h"
#include "harness/process/kube_bin_dir.h"
#include "harness/testing/support.h"

#if !defined(HARNESS_APISERVER_SIM_BINARY) || !defined(HARNESS_INJECTOR_BINARY)
#error "set by kube/CMakeLists.txt"
#endif

namespace harness::kube {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

constexpr char kPolicyWebhook[] = R"(apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: policy}
webhooks:
  - name: pods.policy.example.com
    clientConfig: {service: {namespace: policy, name: policy-webhook, path: /validate}}
    rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
    failurePolicy: Fail
    sideEffects: None
    admissionReviewVersions: [v1]
)";

constexpr char kNamespaces[] = R"(apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: Namespace, metadata: {name: linkerd, labels: {config.linkerd.io/admission-webhooks: disabled}}}
  - {apiVersion: v1, kind: Namespace, metadata: {name: istio-system}}
  - {apiVersion: v1, kind: Namespace, metadata: {name: policy}}
  - {apiVersion: v1, kind: Namespace, metadata: {name: app-istio, labels: {istio-injection: enabled}}}
  - {apiVersion: v1, kind: Namespace, metadata: {name: app-linkerd, annotations: {linkerd.io/inject: enabled}}}
)";

class LiveClusterRealTest : public ::testing::Test {
 protected:
  void SetUp() override {
    binaries_ = Binaries::inDir(process::kubeBinDir());
    if (auto r = binaries_.check(); !r) GTEST_SKIP() << r.error().message;
    fs::create_directories(scratch_ / "home");
    ControlPlaneOptions options;
    options.binaries = binaries_;
    options.work_dir = scratch_ / "work";
    options.controller_manager = false;  // nothing here needs controllers: no Pod is created
    options.ready_timeout = 600s;
    auto started = ControlPlane::start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.error().message;
    plane_ = std::move(*started);
  }

  testing::CommandOutput kubectl(std::vector<std::string> args) {
    args.insert(args.begin(), {binaries_.kubectl.string(), "--request-timeout=60s"});
    return testing::runCapture(args, {"HOME=" + (scratch_ / "home").string(),
                                      "KUBECONFIG=" + plane_->kubeconfig().string()});
  }

  void apply(const std::string& name, const std::string& yaml) {
    testing::writeFile(scratch_ / name, yaml);
    auto run = kubectl({"apply", "-f", (scratch_ / name).string()});
    ASSERT_EQ(run.status, 0) << name << ": " << run.err;
  }

  void configMap(const std::string& ns, const std::string& name,
                 const std::vector<std::pair<std::string, fs::path>>& files) {
    std::vector<std::string> args = {"create", "configmap", name, "-n", ns};
    for (const auto& [key, file] : files) args.push_back("--from-file=" + key + "=" + file.string());
    auto run = kubectl(args);
    ASSERT_EQ(run.status, 0) << run.err;
  }

  // Linkerd and Istio installed as their charts render them, plus the policy webhook.
  void install() {
    const fs::path root = testing::sourceDir();
    apply("namespaces.yaml", kNamespaces);
    auto linkerd = kubectl(
        {"apply", "-f", (root / "scenarios/seed-tutorial/linkerd-webhook.yaml").string()});
    ASSERT_EQ(linkerd.status, 0) << linkerd.err;
    auto istio = kubectl({"apply", "-f", (root / "scenarios/istio-revisions/webhooks.yaml").string()});
    ASSERT_EQ(istio.status, 0) << istio.err;
    apply("policy-webhook.yaml", kPolicyWebhook);
    configMap("linkerd", "linkerd-config", {{"values", root / "scenarios/seed-tutorial/linkerd-values.yaml"}});
    configMap("istio-system", "istio-sidecar-injector",
              {{"config", root / "injector/istio/sidecar-injector-config.yaml"},
               {"values", root / "injector/istio/values.json"}});
    configMap("istio-system", "istio", {{"mesh", root / "injector/istio/mesh.yaml"}});
  }

  testing::CommandOutput sim(std::vector<std::string> args) {
    args.insert(args.begin(), HARNESS_APISERVER_SIM_BINARY);
    return testing::runCapture(args, {"HARNESS_INJECTOR_BINARY=" HARNESS_INJECTOR_BINARY});
  }

  Binaries binaries_;
  testing::ScratchDir scratch_{"live-real"};
  std::unique_ptr<ControlPlane> plane_;
};

TEST_F(LiveClusterRealTest, LintAndExplainReadTheLiveCluster) {
  install();
  const std::string kubeconfig = plane_->kubeconfig().string();

  // lint: the overlap between the two meshes and the policy webhook's lockout, from the cluster.
  auto lint = sim({"lint", "--kubeconfig", kubeconfig, "-o", "json"});
  ASSERT_EQ(lint.status, 1) << lint.out << lint.err;  // errors found
  const json report = json::parse(lint.out);
  std::vector<std::string> found;
  for (const auto& finding : report["findings"]) {
    found.push_back(finding["rule"].get<std::string>() + " " +
                    finding["configuration"].get<std::string>());
  }
  EXPECT_THAT(found, ::testing::Contains("self-lockout policy"));
  EXPECT_THAT(found, ::testing::Contains("multiple-injectors linkerd-proxy-injector-webhook-config"));
  EXPECT_THAT(found, ::testing::Not(::testing::Contains(
                         "self-lockout linkerd-proxy-injector-webhook-config")));
  EXPECT_EQ(report["summary"]["configurations"], 5);  // Istio: 3, Linkerd, policy
  EXPECT_EQ(sim({"lint", "--kubeconfig", kubeconfig, "--fail-on", "none"}).status, 0);

  // explain: a Pod in the Istio namespace; nothing is created.
  const fs::path pod = testing::sourceDir() / "scenarios/seed-tutorial/pod.yaml";
  auto explained = sim({"explain", "--kubeconfig", kubeconfig, "-f", pod.string(), "-n",
                        "app-istio", "--no-color"});
  ASSERT_EQ(explained.status, 0) << explained.out << explained.err;
  EXPECT_THAT(explained.out, HasSubstr("namespace app-istio: labels istio-injection=enabled"));
  EXPECT_THAT(explained.out, HasSubstr("mutating webhook namespace.sidecar-injector.istio.io"));
  EXPECT_THAT(explained.out, HasSubstr("istio injector's decision (offline, on the cluster's "
                                       "istio-sidecar-injector and istio):"));
  EXPECT_THAT(explained.out, HasSubstr("validating webhook pods.policy.example.com"));

  auto as_json = sim({"explain", "--kubeconfig", kubeconfig, "--context",
                      "kube-local", "-f", pod.string(), "-n", "app-linkerd", "--only-called",
                      "-o", "json"});
  ASSERT_EQ(as_json.status, 0) << as_json.out << as_json.err;
  const json doc = json::parse(as_json.out);
  EXPECT_EQ(doc["wouldInject"], true) << as_json.out;
  bool linkerd_injects = false;
  for (const auto& webhook : doc["webhooks"]) {
    if (webhook["webhook"] == "linkerd-proxy-injector.linkerd.io") {
      linkerd_injects = webhook["injector"]["decision"] == "inject";
    }
  }
  EXPECT_TRUE(linkerd_injects) << as_json.out;

  auto pods = kubectl({"get", "pods", "-A", "-o", "json"});
  ASSERT_EQ(pods.status, 0) << pods.err;
  EXPECT_TRUE(json::parse(pods.out)["items"].empty());

  // A context that is not in the kubeconfig: one line naming it.
  auto bad = sim({"explain", "--kubeconfig", kubeconfig, "--context", "nope", "-f", pod.string()});
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(bad.err, HasSubstr("no context named \"nope\""));
}

}  // namespace
}  // namespace harness::kube
