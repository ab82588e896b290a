// The real kubectl against the simulator's REST API with the kubeconfig it writes: create, get,
// apply, delete, and raw requests. HOME and KUBECONFIG point into a scratch directory so that
// nothing reads or touches the user's configuration. The kubectl is the one scripts/build-kube.sh
// builds from the pinned Kubernetes modules (or $HARNESS_KUBECTL); skipped when it is not built.

#include <csignal>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/metrics.h"
#include "harness/net/certificates.h"
#include "harness/process/kube_bin_dir.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/caller.h"
#include "harness/sim/cel.h"
#include "harness/sim/field_manager.h"
#include "harness/sim/field_validation.h"
#include "harness/sim/go_types.h"
#include "harness/sim/rest_api.h"
#include "harness/sim/store.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

using nlohmann::json;

using KubectlRun = testing::CommandOutput;

class KubectlTest : public ::testing::Test {
 protected:
  void SetUp() override {
    kubectl_ = testing::kubectlPath();
    if (const std::string reason = testing::notBuiltReason(kubectl_); !reason.empty()) {
      GTEST_SKIP() << reason;
    }
    auto ca = net::CertificateAuthority::create("apiserver-sim-kubectl-ca");
    ASSERT_TRUE(ca.ok()) << ca.error().message;
    chain_ = std::make_unique<AdmissionChain>(store_, caller_, metrics_, ChainOptions{});
    store_.put({"", "namespaces"},
               {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "default"}}},
                {"status", {{"phase", "Active"}}}});
    RestApiOptions options;
    options.scratch_dir = scratch_.path() / "rest";
    options.metrics = &metrics_;
    auto server = RestApiServer::start(store_, *chain_, *ca, options);
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server);
    home_ = scratch_.path() / "home";
    std::filesystem::create_directories(home_);
    kubeconfig_ = scratch_.path() / "kubeconfig";
    auto written = server_->writeKubeconfig(kubeconfig_);
    ASSERT_TRUE(written.ok()) << written.error().message;
  }

  void TearDown() override {
    if (server_) server_->stop();
  }

  KubectlRun kubectl(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kubectl_.string(), "--request-timeout=30s"};
    argv.insert(argv.end(), args.begin(), args.end());
    return testing::runCapture(
        argv, {"HOME=" + home_.string(), "KUBECONFIG=" + kubeconfig_.string()});
  }

  // kubectl left running (get -w, wait), its stdout and stderr in <scratch>/<name>.log.
  std::unique_ptr<testing::ChildProcess> kubectlInBackground(const std::string& name,
                                                             const std::vector<std::string>& args) {
    std::vector<std::string> argv = {kubectl_.string(), "--kubeconfig", kubeconfig_.string(),
                                     "--cache-dir", (home_ / "cache").string()};
    argv.insert(argv.end(), args.begin(), args.end());
    return std::make_unique<testing::ChildProcess>(argv, backgroundLog(name));
  }
  std::filesystem::path backgroundLog(const std::string& name) const {
    return scratch_.path() / (name + ".log");
  }

  std::string writeManifest(const std::string& name, const std::string& yaml) {
    const auto file = scratch_.path() / name;
    testing::writeFile(file, yaml);
    return file.string();
  }

  testing::ScratchDir scratch_{"kubectl"};
  ObjectStore store_;
  InProcessWebhookCaller caller_;
  core::MetricsRegistry metrics_;
  std::unique_ptr<AdmissionChain> chain_;
  std::unique_ptr<RestApiServer> server_;
  std::filesystem::path kubectl_;
  std::filesystem::path home_;
  std::filesystem::path kubeconfig_;
};

using testing::kDemoNamespaceYaml;
using testing::kDemoPodYaml;

TEST_F(KubectlTest, RawVersionIsTheServerVersion) {
  const KubectlRun run = kubectl({"get", "--raw", "/version"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(json::parse(run.out)["gitVersion"], "v1.31.4+k3s1");
}

TEST_F(KubectlTest, RawMetricsIsServed) {
  metrics_.counter("kubectl_test_total", "Test.", {}).add({}, 2);
  const KubectlRun run = kubectl({"get", "--raw", "/metrics"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("kubectl_test_total 2"), std::string::npos);
}

TEST_F(KubectlTest, CreateNamespaceAndPodThenGetThemAsJson) {
  KubectlRun run = kubectl({"create", "-f", writeManifest("ns.yaml", kDemoNamespaceYaml)});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("namespace/demo created"), std::string::npos) << run.out;
  run = kubectl({"create", "-f", writeManifest("pod.yaml", kDemoPodYaml)});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("pod/web created"), std::string::npos) << run.out;

  run = kubectl({"get", "namespace", "demo", "-o", "json"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(json::parse(run.out)["metadata"]["name"], "demo");

  run = kubectl({"get", "pods", "-n", "demo", "-o", "json"});
  ASSERT_EQ(run.status, 0) << run.err;
  const json list = json::parse(run.out);
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["kind"], "Pod");
  EXPECT_EQ(list["items"][0]["spec"]["containers"][0]["image"], "nginx:1.27");
}

TEST_F(KubectlTest, GetPrintsTheServerTable) {
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("ns.yaml", kDemoNamespaceYaml)})
                .status,
            0);
  const KubectlRun run = kubectl({"get", "ns"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("NAME"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("AGE"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("demo"), std::string::npos) << run.out;
}

TEST_F(KubectlTest, GetPodsAsYaml) {
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("ns.yaml", kDemoNamespaceYaml)})
                .status,
            0);
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("pod.yaml", kDemoPodYaml)}).status,
            0);
  const KubectlRun run = kubectl({"get", "pods", "-n", "demo", "-o", "yaml"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("name: web"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("kind: Pod"), std::string::npos) << run.out;
}

TEST_F(KubectlTest, ApplyCreatesThenPatchesWithStrategicMerge) {
  ASSERT_EQ(kubectl({"apply", "-f", writeManifest("ns.yaml", kDemoNamespaceYaml)})
                .status,
            0);
  KubectlRun run = kubectl({"apply", "-f", writeManifest("pod.yaml", kDemoPodYaml)});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("pod/web created"), std::string::npos) << run.out;

  std::string changed = kDemoPodYaml;
  changed.replace(changed.find("app: web"), 8, "app: web\n    tier: front");
  run = kubectl({"apply", "-f", writeManifest("pod2.yaml", changed)});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("pod/web configured"), std::string::npos) << run.out;
  const auto stored = store_.get({"", "pods"}, "demo", "web");
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ((*stored)["metadata"]["labels"]["tier"], "front");
  EXPECT_TRUE((*stored)["metadata"]["annotations"].contains(
      "kubectl.kubernetes.io/last-applied-configuration"));
}

TEST_F(KubectlTest, DeleteRemovesThePod) {
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("ns.yaml", kDemoNamespaceYaml)})
                .status,
            0);
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("pod.yaml", kDemoPodYaml)}).status,
            0);
  const KubectlRun run = kubectl({"delete", "pod", "web", "-n", "demo"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_NE(run.out.find("pod \"web\" deleted"), std::string::npos) << run.out;
  EXPECT_FALSE(store_.get({"", "pods"}, "demo", "web").has_value());
}


TEST_F(KubectlTest, MissingObjectIsReportedAsNotFound) {
  const KubectlRun run = kubectl({"get", "pod", "nothing", "-n", "default"});
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.err.find("pods \"nothing\" not found"), std::string::npos) << run.err;
}

// Watch as kubectl leans on it: `get -w`, `wait --for=create|jsonpath|delete` (informers that
// list, then watch from the list's resourceVersion, or WatchList with sendInitialEvents). Each
// waits for what it expects with a deadline far above need (2 minutes); nothing depends on timing.
// The same commands against kube-apiserver: kube/tests/control_plane_real_test.cc.
constexpr int kWatchDeadlineMs = 120'000;

TEST_F(KubectlTest, GetWatchPrintsAPodCreatedAfterItStarted) {
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("ns.yaml", kDemoNamespaceYaml)}).status, 0);
  auto watch = kubectlInBackground("get-w", {"get", "pods", "-n", "demo", "-w"});
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("pod.yaml", kDemoPodYaml)}).status, 0);
  const auto seen = testing::waitForText(backgroundLog("get-w"), "web ", kWatchDeadlineMs);
  ASSERT_TRUE(seen) << testing::readFile(backgroundLog("get-w"));
  EXPECT_TRUE(watch->running()) << "get -w ended: " << *seen;
  EXPECT_EQ(seen->find("Error"), std::string::npos) << *seen;
  // Ctrl-C: the watch ends and the server lets it go.
  watch->stop(SIGINT);
}

TEST_F(KubectlTest, GetWatchOutputOfAnObjectAsJsonEvents) {
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("ns.yaml", kDemoNamespaceYaml)}).status, 0);
  auto watch = kubectlInBackground(
      "get-w-json", {"get", "pods", "-n", "demo", "-w", "--output-watch-events", "-o", "json"});
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("pod.yaml", kDemoPodYaml)}).status, 0);
  ASSERT_EQ(kubectl({"delete", "pod", "web", "-n", "demo"}).status, 0);
  const auto seen = testing::waitForText(backgroundLog("get-w-json"), "\"DELETED\"",
                                         kWatchDeadlineMs);
  ASSERT_TRUE(seen) << testing::readFile(backgroundLog("get-w-json"));
  EXPECT_NE(seen->find("\"ADDED\""), std::string::npos) << *seen;
  watch->stop(SIGINT);
}

TEST_F(KubectlTest, WaitForCreate) {
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("ns.yaml", kDemoNamespaceYaml)}).status, 0);
  auto wait = kubectlInBackground("wait-create", {"wait", "--for=create", "pod/web", "-n", "demo",
                                                  "--timeout=120s"});
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("pod.yaml", kDemoPodYaml)}).status, 0);
  EXPECT_EQ(wait->wait(kWatchDeadlineMs + 10'000), 0) << testing::readFile(backgroundLog(
      "wait-create"));
  EXPECT_NE(testing::readFile(backgroundLog("wait-create")).find("pod/web condition met"),
            std::string::npos);
}

TEST_F(KubectlTest, WaitForJsonpathSeesAnUpdate) {
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("ns.yaml", kDemoNamespaceYaml)}).status, 0);
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("pod.yaml", kDemoPodYaml)}).status, 0);
  auto wait = kubectlInBackground(
      "wait-jsonpath", {"wait", "--for=jsonpath={.metadata.labels.stage}=ready", "pod/web", "-n",
                        "demo", "--timeout=120s"});
  ASSERT_EQ(kubectl({"label", "pod", "web", "-n", "demo", "stage=ready"}).status, 0);
  EXPECT_EQ(wait->wait(kWatchDeadlineMs + 10'000), 0) << testing::readFile(backgroundLog(
      "wait-jsonpath"));
  EXPECT_NE(testing::readFile(backgroundLog("wait-jsonpath")).find("pod/web condition met"),
            std::string::npos);
}

TEST_F(KubectlTest, WaitForDelete) {
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("ns.yaml", kDemoNamespaceYaml)}).status, 0);
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("pod.yaml", kDemoPodYaml)}).status, 0);
  auto wait = kubectlInBackground("wait-delete", {"wait", "--for=delete", "pod/web", "-n", "demo",
                                                  "--timeout=120s"});
  ASSERT_EQ(kubectl({"delete", "pod", "web", "-n", "demo", "--wait=false"}).status, 0);
  EXPECT_EQ(wait->wait(kWatchDeadlineMs + 10'000), 0) << testing::readFile(backgroundLog(
      "wait-delete"));
}

TEST_F(KubectlTest, WaitThatNeverHappensTimesOut) {
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("ns.yaml", kDemoNamespaceYaml)}).status, 0);
  const KubectlRun run = kubectl({"wait", "--for=create", "pod/never", "-n", "demo",
                                  "--timeout=1s"});
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.err.find("timed out waiting for the condition"), std::string::npos) << run.err;
}

// The fixture with kube-cel started (skipped, with the command that builds it, when it is not
// built); each subclass installs the hooks of it that `apiserver-sim serve` installs and it tests.
class KubectlWithKubeCelTest : public KubectlTest {
 protected:
  void SetUp() override {
    const std::filesystem::path binary = process::kubeBinDir() / "kube-cel";
    if (auto reason = testing::notBuiltReason(binary); !reason.empty()) GTEST_SKIP() << reason;
    KubectlTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto cel = cel::KubeCel::start(binary, scratch_.path() / "kube-cel.log");
    ASSERT_TRUE(cel.ok()) << cel.error().message;
    cel_ = std::move(cel).value();
  }

  std::shared_ptr<cel::KubeCel> cel_;
};

// kubectl's typed clients (auth can-i's SelfSubjectAccessReview) send protobuf, which the
// simulator decodes through kube-cel (setProtobufDecoder), as `apiserver-sim serve` installs it.
class KubectlProtobufTest : public KubectlWithKubeCelTest {
 protected:
  void SetUp() override {
    KubectlWithKubeCelTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    setProtobufDecoder(cel::protobufDecoder(cel_));
  }

  void TearDown() override {
    setProtobufDecoder({});
    KubectlWithKubeCelTest::TearDown();
  }
};

// SelfSubjectAccessReview: the admin (system:masters) may do anything; another user, without
// the group, nothing (kube-apiserver with RBAC and no role for them says the same; the outputs are
// compared with the real one in kube/tests/kubectl_compare_real_test.cc).
TEST_F(KubectlProtobufTest, AuthCanIAsTheAdminAndAsAnotherUser) {
  KubectlRun run = kubectl({"auth", "can-i", "create", "pods"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "yes\n");
  run = kubectl({"auth", "can-i", "get", "pods", "--as", "jane"});
  EXPECT_EQ(run.status, 1) << run.err;
  EXPECT_EQ(run.out, "no\n");
  run = kubectl({"auth", "can-i", "get", "pods", "--as", "jane", "--as-group", "system:masters"});
  EXPECT_EQ(run.out, "yes\n");
}

// fieldValidation as kubectl (1.27+) sends it: Strict by default on create, replace and apply,
// Warn with --validate=warn, Ignore with --validate=false; the server's answers are those of
// kube-apiserver v1.37.2 (checked with the same kubectl commands against kube-local): the unknown
// fields are found by Kubernetes' Go types through kube-cel.
class KubectlFieldValidationTest : public KubectlWithKubeCelTest {
 protected:
  void SetUp() override {
    KubectlWithKubeCelTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    setStrictFieldChecker(cel::strictFieldChecker(cel_));
    setStrictPatchChecker(cel::strictPatchChecker(cel_));
    ASSERT_EQ(kubectl({"create", "-f", writeManifest("ns.yaml", kDemoNamespaceYaml)}).status, 0);
  }

  void TearDown() override {
    setStrictFieldChecker({});
    setStrictPatchChecker({});
    KubectlWithKubeCelTest::TearDown();
  }

  std::string podWithUnknownFields() {
    std::string pod = kDemoPodYaml;
    pod.replace(pod.find("  containers:"), 13, "  foo: 1\n  containers:");
    pod += "    bar: true\n";
    return writeManifest("unknown.yaml", pod);
  }

  // What kubectl prints for the Strict 400 on podWithUnknownFields() (kube-apiserver's text).
  static std::string strictError(const std::string& verb, const std::string& file) {
    return "Error from server (BadRequest): error when " + verb + " \"" + file +
           "\": Pod in version \"v1\" cannot be handled as a Pod: strict decoding error: unknown "
           "field \"spec.containers[0].bar\", unknown field \"spec.foo\"\n";
  }
};

TEST_F(KubectlFieldValidationTest, StrictByDefaultRefusesUnknownFields) {
  const std::string file = podWithUnknownFields();
  const KubectlRun run = kubectl({"create", "-f", file});
  EXPECT_NE(run.status, 0);
  EXPECT_EQ(run.err, strictError("creating", file));
  EXPECT_FALSE(store_.get({"", "pods"}, "demo", "web").has_value());
}

TEST_F(KubectlFieldValidationTest, WarnCreatesWithAWarningPerField) {
  const KubectlRun run = kubectl({"create", "--validate=warn", "-f", podWithUnknownFields()});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "pod/web created\n");
  EXPECT_EQ(run.err,
            "Warning: unknown field \"spec.containers[0].bar\"\n"
            "Warning: unknown field \"spec.foo\"\n");
  EXPECT_TRUE(store_.get({"", "pods"}, "demo", "web").has_value());
}

TEST_F(KubectlFieldValidationTest, IgnoreCreatesSilently) {
  const KubectlRun run = kubectl({"create", "--validate=false", "-f", podWithUnknownFields()});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "");
}

TEST_F(KubectlFieldValidationTest, ReplaceIsStrictToo) {
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("pod.yaml", kDemoPodYaml)}).status, 0);
  const std::string file = podWithUnknownFields();
  const KubectlRun run = kubectl({"replace", "-f", file});
  EXPECT_NE(run.status, 0);
  EXPECT_EQ(run.err, strictError("replacing", file));
}

TEST_F(KubectlFieldValidationTest, DuplicateFieldsOfARawBody) {
  const std::string body =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a","name":"b"},)"
      R"("data":{"k":"v"}})";
  const std::string file = writeManifest("dup.json", body);
  KubectlRun run = kubectl(
      {"create", "--raw", "/api/v1/namespaces/demo/configmaps?fieldValidation=Strict", "-f", file});
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.err.find("ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict "
                         "decoding error: duplicate field \"metadata.name\""),
            std::string::npos)
      << run.err;
  // No fieldValidation is Warn (handlers/rest.go fieldValidation): created, with the warning.
  run = kubectl({"create", "--raw", "/api/v1/namespaces/demo/configmaps", "-f", file});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "Warning: duplicate field \"metadata.name\"\n");
  EXPECT_TRUE(store_.get({"", "configmaps"}, "demo", "b").has_value());
}

// kubectl patch sends no fieldValidation: Warn, so unknown fields of the patched object and
// duplicate fields of the patch are Warnings (kube-cel strictPatch, Go's texts).
TEST_F(KubectlFieldValidationTest, PatchWarnsOfUnknownAndDuplicateFields) {
  const std::string configmap =
      "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: demo\n"
      "data:\n  k: v\n";
  ASSERT_EQ(kubectl({"create", "-f", writeManifest("cm.yaml", configmap)}).status, 0);
  KubectlRun run = kubectl({"patch", "configmap", "settings", "-n", "demo", "--type", "merge",
                            "-p", R"({"data":{"a":"b"},"foo":1})"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "configmap/settings patched\n");
  EXPECT_EQ(run.err, "Warning: unknown field \"foo\"\n");
  run = kubectl({"patch", "configmap", "settings", "-n", "demo", "--type", "json", "-p",
                 R"([{"op":"add","path":"/data/c","value":"d","extra":true}])"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err, "Warning: json patch unknown field \"[0].extra\"\n");
  run = kubectl({"patch", "configmap", "settings", "-n", "demo", "-p",
                 R"({"data":{"g":"1","g":"2"},"spec":{"x":1}})"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.err,
            "Warning: duplicate field \"data.g\"\nWarning: unknown field \"spec\"\n");
  EXPECT_EQ((*store_.get({"", "configmaps"}, "demo", "settings"))["data"],
            json({{"k", "v"}, {"a", "b"}, {"c", "d"}, {"g", "2"}}));
}

// kubectl apply --server-side and kubectl patch with Kubernetes' field manager (kube-cel's
// applyFields/updateFields, as `apiserver-sim serve` installs it): the texts are kube-apiserver
// v1.37.2's (the same commands are compared with it in kube/tests/kubectl_compare_real_test.cc).
class KubectlServerSideApplyTest : public KubectlWithKubeCelTest {
 protected:
  void SetUp() override {
    KubectlWithKubeCelTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    setProtobufDecoder(cel::protobufDecoder(cel_));
    setFieldManager({cel::fieldManagerApply(cel_), cel::fieldManagerUpdate(cel_)});
    ASSERT_EQ(kubectl({"create", "-f", writeManifest("ns.yaml", kDemoNamespaceYaml)}).status, 0);
  }

  void TearDown() override {
    setFieldManager({});
    setProtobufDecoder({});
    KubectlWithKubeCelTest::TearDown();
  }

  std::string configMap(const std::string& name, const std::string& data) {
    return writeManifest(name, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n"
                               "  namespace: demo\ndata:\n" + data);
  }

  json managedFields() {
    auto stored = store_.get({"", "configmaps"}, "demo", "shared");
    if (!stored) return nullptr;
    json out = json::array();
    for (const auto& entry : (*stored)["metadata"].value("managedFields", json::array())) {
      out.push_back({entry["manager"], entry["operation"], entry["fieldsV1"]});
    }
    return out;
  }
};

TEST_F(KubectlServerSideApplyTest, ConflictBetweenManagersThenForce) {
  KubectlRun run = kubectl({"apply", "--server-side", "--field-manager", "alice", "-f",
                            configMap("alice.yaml", "  x: \"1\"\n  w: a\n")});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "configmap/shared serverside-applied\n");
  EXPECT_EQ(managedFields(), json::parse(R"([["alice","Apply",{"f:data":{"f:x":{},"f:w":{}}}]])"));

  const std::string bob = configMap("bob.yaml", "  x: \"2\"\n");
  run = kubectl({"apply", "--server-side", "--field-manager", "bob", "-f", bob});
  EXPECT_NE(run.status, 0);
  EXPECT_NE(run.err.find("Apply failed with 1 conflict: conflict with \"alice\": .data.x"),
            std::string::npos)
      << run.err;
  EXPECT_EQ((*store_.get({"", "configmaps"}, "demo", "shared"))["data"]["x"], "1");

  run = kubectl({"apply", "--server-side", "--field-manager", "bob", "--force-conflicts", "-f",
                 bob});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ((*store_.get({"", "configmaps"}, "demo", "shared"))["data"],
            json({{"x", "2"}, {"w", "a"}}));
  EXPECT_EQ(managedFields(), json::parse(R"([["alice","Apply",{"f:data":{"f:w":{}}}],)"
                                         R"(["bob","Apply",{"f:data":{"f:x":{}}}]])"));
}

// kubectl patch names its manager (kubectl-patch): an Update entry for the fields it set.
TEST_F(KubectlServerSideApplyTest, PatchRecordsAnUpdateEntry) {
  ASSERT_EQ(kubectl({"apply", "--server-side", "--field-manager", "alice", "-f",
                     configMap("alice.yaml", "  x: \"1\"\n")})
                .status,
            0);
  const KubectlRun run = kubectl({"patch", "configmap", "shared", "-n", "demo", "--type",
                                  "strategic", "-p", R"({"data":{"z":"3"}})"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(managedFields(), json::parse(R"([["alice","Apply",{"f:data":{"f:x":{}}}],)"
                                         R"(["kubectl-patch","Update",{"f:data":{"f:z":{}}}]])"));
}

}  // namespace
}  // namespace harness::sim
