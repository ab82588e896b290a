// `apiserver-sim explain --kubeconfig` and `report --kubeconfig` against `apiserver-sim serve` as
// a process (the seed tutorial's Linkerd webhook and injector endpoint, over HTTPS with the
// kubeconfig serve writes), cheaper than kube/tests/live_cluster_real_test.cc and without the
// label `real`: the live path end to end (kubeconfig, TLS, the cluster's REST reads, discovery,
// the injectors' ConfigMaps, kube-cel), the HTML page drawn by headless Chromium, and explain's
// decisions compared with the simulator's own answer to a server-side dry-run create. Nothing is
// created by explain or report: the test checks that no Pod exists afterwards.

#include <csignal>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/yaml.h"
#include "harness/process/kube_bin_dir.h"
#include "harness/testing/support.h"
#include "../scenario/headless_chromium.h"

#ifndef HARNESS_INJECTOR_BINARY
#error "HARNESS_INJECTOR_BINARY is set by apiserver-sim/CMakeLists.txt"
#endif

namespace harness::sim::live {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;


class LiveServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto reason = testing::notBuiltReason(kubectl_); !reason.empty()) GTEST_SKIP() << reason;
    fs::create_directories(dir_ / "home");
    serve_ = std::make_unique<testing::ChildProcess>(
        std::vector<std::string>{sim_.string(), "serve",
                                 (root_ / "scenarios/seed-tutorial/scenario.yaml").string(),
                                 "--kubeconfig-out", kubeconfig_.string(), "--injector",
                                 HARNESS_INJECTOR_BINARY},
        dir_ / "serve.log");
    // The kubeconfig line is printed after the file is written.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (std::chrono::steady_clock::now() < deadline &&
           log().find("kubeconfig: ") == std::string::npos && serve_->running()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    ASSERT_TRUE(fs::exists(kubeconfig_)) << log();
    // The cluster a user has after installing Linkerd: its ConfigMap, an injected namespace.
    run(kubectl({"create", "configmap", "linkerd-config", "-n", "linkerd",
                 "--from-file=values=" +
                     (root_ / "scenarios/seed-tutorial/linkerd-values.yaml").string()}));
    run(kubectl({"create", "namespace", "app-linkerd"}));
    run(kubectl({"annotate", "namespace", "app-linkerd", "linkerd.io/inject=enabled"}));
  }

  void TearDown() override {
    if (serve_) {
      EXPECT_EQ(serve_->stop(SIGTERM, 10'000), 0) << log();
    }
  }

  std::string log() const {
    return fs::exists(dir_ / "serve.log") ? testing::readFile(dir_ / "serve.log") : "";
  }

  testing::CommandOutput kubectl(std::vector<std::string> args) {
    args.insert(args.begin(), {kubectl_.string(), "--request-timeout=60s"});
    return testing::runCapture(args, {"HOME=" + (dir_ / "home").string(),
                                      "KUBECONFIG=" + kubeconfig_.string()});
  }

  testing::CommandOutput sim(std::vector<std::string> args) {
    args.insert(args.begin(), sim_.string());
    return testing::runCapture(args, {"HARNESS_INJECTOR_BINARY=" HARNESS_INJECTOR_BINARY});
  }

  void run(const testing::CommandOutput& output) {
    ASSERT_EQ(output.status, 0) << output.out << output.err << log();
  }

  // The Pod of pod_ without its namespace, for kubectl's -n (kubectl refuses another).
  fs::path podAnywhere() {
    auto object = core::parseYaml(testing::readFile(pod_));
    EXPECT_TRUE(object.ok());
    if (object.ok()) (*object)["metadata"].erase("namespace");
    fs::path file = dir_ / "pod-anywhere.yaml";
    testing::writeFile(file, object.ok() ? core::toYaml(*object) : "");
    return file;
  }

  // The Pods the simulator stores, in every namespace.
  std::size_t storedPods() {
    auto pods = kubectl({"get", "pods", "-A", "-o", "json"});
    EXPECT_EQ(pods.status, 0) << pods.err;
    return pods.status == 0 ? json::parse(pods.out)["items"].size() : 0;
  }

  // The entries of explain -o json's policies by "<policy>/<binding>".
  static std::map<std::string, json> policyEntries(const json& doc) {
    std::map<std::string, json> out;
    for (const auto& entry : doc["policies"]) {
      out[entry["policy"].get<std::string>() + "/" +
          (entry["binding"].is_string() ? entry["binding"].get<std::string>() : "")] = entry;
    }
    return out;
  }

  // kube-cel (scripts/build-kube.sh) evaluates the policies, in the simulator and in explain.
  static std::string noKubeCelReason() {
    return testing::notBuiltReason(process::kubeBinDir() / "kube-cel");
  }

  const fs::path root_ = testing::sourceDir();
  const fs::path sim_ = testing::binaryDir() / "apiserver-sim/apiserver-sim";
  const fs::path kubectl_ = testing::kubectlPath();
  const fs::path pod_ = root_ / "scenarios/seed-tutorial/pod.yaml";
  testing::ScratchDir dir_{"live-serve"};
  const fs::path kubeconfig_ = dir_ / "kubeconfig";
  std::unique_ptr<testing::ChildProcess> serve_;
};

TEST_F(LiveServeTest, ReportDrawsTheSimulatorsClusterWithTheInjectorsDecision) {
  auto explained = sim({"explain", "--kubeconfig", kubeconfig_.string(), "-f", pod_.string(),
                        "-n", "app-linkerd", "--no-color"});
  ASSERT_EQ(explained.status, 0) << explained.out << explained.err;
  EXPECT_THAT(explained.out, HasSubstr("mutating webhook linkerd-proxy-injector.linkerd.io"));
  EXPECT_THAT(explained.out, HasSubstr("linkerd injector's decision (offline, on the cluster's "
                                       "linkerd-config):"));
  EXPECT_THAT(explained.out, HasSubstr("  predicted patch (the injector's, offline; nothing is "
                                       "sent):\n"));

  const fs::path page = dir_ / "live-report.html";
  auto reported = sim({"report", "--kubeconfig", kubeconfig_.string(), "-f", pod_.string(),
                       "-n", "app-linkerd", "--out", page.string()});
  ASSERT_EQ(reported.status, 0) << reported.out << reported.err;
  const std::string html = testing::readFile(page);
  EXPECT_THAT(html, HasSubstr(">would call (not sent)</text>"));
  EXPECT_THAT(html, HasSubstr("linkerd injector's decision for "
                              "linkerd-proxy-injector.linkerd.io"));
  EXPECT_THAT(html, HasSubstr("<td>linkerd-proxy-injector.linkerd.io</td>"));
  EXPECT_THAT(html, HasSubstr("<p>predicted patch of linkerd-proxy-injector.linkerd.io (the "
                              "linkerd injector's, offline; nothing is sent):</p>"));
  EXPECT_THAT(html, HasSubstr("linkerd-proxy"));
  EXPECT_THAT(html, Not(HasSubstr("http://")));  // self-contained: nothing fetched
  EXPECT_EQ(storedPods(), 0u);  // nothing was sent

  const fs::path browser = test::chromium();
  if (browser.empty()) GTEST_SKIP() << "chromium is not installed (apt-get install -y chromium)";
  const auto dom = test::runChromium(browser, page, dir_.path(), {"--dump-dom"});
  ASSERT_EQ(dom.status, 0) << dom.err;
  EXPECT_THAT(dom.out, HasSubstr("data-rendered=\"ok\""));
  EXPECT_THAT(dom.out, HasSubstr("<table class=\"decisions\">"));
  EXPECT_THAT(dom.err, Not(HasSubstr("Uncaught")));
  const fs::path shot = dir_ / "live-report.png";
  const auto drawn = test::runChromium(browser, page, dir_.path(),
                                       {"--window-size=1200,1400", "--screenshot=" + shot.string()});
  ASSERT_EQ(drawn.status, 0) << drawn.err;
  EXPECT_GT(fs::file_size(shot), 10'000u);
}

// The policies of the live tests, stored in the simulator: explain's decision for each binding
// is the one the simulator's own admission makes for a server-side dry-run create, and a binding
// that does not apply (validating or mutating) names its namespaceSelector.
TEST_F(LiveServeTest, PolicyDecisionsAreTheSimulatorsOwn) {
  if (auto reason = noKubeCelReason(); !reason.empty()) GTEST_SKIP() << reason;
  run(kubectl({"apply", "-f", (root_ / "apiserver-sim/tests/live/testdata/policies.yaml").string()}));
  auto explained = sim({"explain", "--kubeconfig", kubeconfig_.string(), "-f", pod_.string(),
                        "-n", "app-policy", "-o", "json"});
  ASSERT_EQ(explained.status, 0) << explained.out << explained.err;
  const json doc = json::parse(explained.out);
  auto entries = policyEntries(doc);
  EXPECT_EQ(doc["deniedByPolicy"], true) << explained.out;
  ASSERT_EQ(entries["require-team/require-team"]["decision"], "deny") << explained.out;
  EXPECT_EQ(entries["add-label/add-label"]["decision"], "mutate") << explained.out;

  auto denied = kubectl({"create", "--dry-run=server", "-f", podAnywhere().string(), "-n",
                         "app-policy", "-o", "json"});
  EXPECT_NE(denied.status, 0) << denied.out;
  const std::string message = entries["require-team/require-team"]["message"];
  const auto policy_part = message.find("ValidatingAdmissionPolicy 'require-team'");
  ASSERT_NE(policy_part, std::string::npos) << message;
  EXPECT_THAT(denied.err, HasSubstr(message.substr(policy_part)));

  // In app-linkerd neither binding applies: each names the clause, on the namespace's labels.
  auto elsewhere = sim({"explain", "--kubeconfig", kubeconfig_.string(), "-f", pod_.string(),
                        "-n", "app-linkerd", "--no-color"});
  ASSERT_EQ(elsewhere.status, 0) << elsewhere.err;
  for (const std::string head :
       {"validating admission policy require-team (binding require-team; failurePolicy Fail; "
        "validationActions Deny)",
        "mutating admission policy add-label (binding add-label; failurePolicy Fail)"}) {
    EXPECT_THAT(elsewhere.out,
                HasSubstr(head + ": not matched: excluded by the binding's "
                                 "matchResources.namespaceSelector: namespaceSelector "
                                 "`policy=enforced`: namespace \"app-linkerd\" has labels "
                                 "kubernetes.io/metadata.name=app-linkerd: no match\n"));
  }
  auto admitted = kubectl({"create", "--dry-run=server", "-f", podAnywhere().string(), "-n",
                           "app-linkerd", "-o", "json"});
  ASSERT_EQ(admitted.status, 0) << admitted.err;
  EXPECT_FALSE(json::parse(admitted.out)["metadata"]["labels"].contains("mutated-by"));

  // The report draws the denial as the step's failure.
  const fs::path page = dir_ / "policy-report.html";
  auto reported = sim({"report", "--kubeconfig", kubeconfig_.string(), "-f", pod_.string(),
                       "-n", "app-policy", "--out", page.string()});
  ASSERT_EQ(reported.status, 0) << reported.err;
  const std::string html = testing::readFile(page);
  EXPECT_THAT(html, HasSubstr("would be denied by ValidatingAdmissionPolicy require-team"));
  EXPECT_THAT(html, HasSubstr(">require-team: denied (422)</text>"));
  EXPECT_THAT(html, HasSubstr(">add-label: mutates the object</text>"));
  EXPECT_EQ(storedPods(), 0u);
}

// A paramKind the simulator does not serve (a custom resource's: no CRDs here): explain reads
// the discovery's 404 as "not served" and decides as the simulator's own plugin does, as
// kube-apiserver does without the CRD: the plugin cannot resolve the kind
// (generic/policy_source.go: "failed to find resource referenced by paramKind") and the
// binding's failurePolicy (Fail) decides.
TEST_F(LiveServeTest, AParamKindTheClusterDoesNotServeFailsAsTheClusterDoes) {
  if (auto reason = noKubeCelReason(); !reason.empty()) GTEST_SKIP() << reason;
  run(kubectl({"apply", "-f",
               (root_ / "apiserver-sim/tests/live/testdata/limits-policy.yaml").string()}));
  auto explained = sim({"explain", "--kubeconfig", kubeconfig_.string(), "-f", pod_.string(),
                        "-n", "app-limits", "-o", "json"});
  ASSERT_EQ(explained.status, 0) << explained.out << explained.err;
  const json doc = json::parse(explained.out);
  auto entries = policyEntries(doc);
  const json& entry = entries["max-containers/max-containers"];
  ASSERT_EQ(entry["decision"], "deny") << explained.out;
  const std::string message = entry["message"];
  EXPECT_THAT(message, HasSubstr("failed to find resource referenced by paramKind: "
                                 "'example.com/v1, Kind=Limit'"));
  auto denied = kubectl({"create", "--dry-run=server", "-f", podAnywhere().string(), "-n",
                         "app-limits"});
  EXPECT_NE(denied.status, 0) << denied.out;
  const auto policy_part = message.find("ValidatingAdmissionPolicy 'max-containers'");
  ASSERT_NE(policy_part, std::string::npos) << message;
  EXPECT_THAT(denied.err, HasSubstr(message.substr(policy_part)));
  // lint --kubeconfig reads the same discovery: the binding is an error (failurePolicy Fail).
  auto linted = sim({"lint", "--kubeconfig", kubeconfig_.string(), "-o", "json"});
  EXPECT_EQ(linted.status, 1) << linted.out << linted.err;
  const json lint_doc = json::parse(linted.out);
  bool unserved = false;
  for (const auto& finding : lint_doc["findings"]) {
    if (finding["rule"] == "policy-param-not-found" &&
        finding["configuration"] == "max-containers") {
      unserved = finding["severity"] == "error" &&
                 finding["message"].get<std::string>().find(
                     "the cluster does not serve that kind") != std::string::npos;
    }
  }
  EXPECT_TRUE(unserved) << linted.out;
}

}  // namespace
}  // namespace harness::sim::live
