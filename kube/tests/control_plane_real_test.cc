// The real control plane (CTest label `real`): etcd, kube-apiserver and kube-controller-manager
// built by scripts/build-kube.sh, driven with the kubectl built with them. Skipped, with one
// line, when they are not built. No timing assertions: readiness waits are generous and every
// wait for a crash is unbounded (CTest's timeout is the backstop).

#include <signal.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/kube/control_plane.h"
#include "harness/process/kube_bin_dir.h"
#include "harness/testing/support.h"

namespace harness::kube {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

using testing::kDemoNamespaceYaml;
using testing::kDemoPodYaml;

// Every process whose command line mentions `text` (the work directory: each child's flags
// name it).
std::vector<int> processesMentioning(const std::string& text) {
  std::vector<int> pids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    const std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find(text) != std::string::npos) pids.push_back(std::stoi(name));
  }
  return pids;
}

class RealControlPlaneTest : public ::testing::Test {
 protected:
  void SetUp() override {
    binaries_ = Binaries::inDir(process::kubeBinDir());
    if (auto r = binaries_.check(); !r) GTEST_SKIP() << r.error().message;
    fs::create_directories(scratch_ / "home");
  }

  core::Result<std::unique_ptr<ControlPlane>> start(bool controller_manager = true,
                                                    std::vector<std::string> extra_args = {},
                                                    bool connect_proxy = false) {
    ControlPlaneOptions options;
    options.connect_proxy = connect_proxy;
    options.binaries = binaries_;
    options.work_dir = workDir();
    options.controller_manager = controller_manager;
    options.extra_apiserver_args = std::move(extra_args);
    options.ready_timeout = 600s;
    return ControlPlane::start(std::move(options));
  }

  [[nodiscard]] fs::path workDir() const { return scratch_ / "work"; }

  testing::CommandOutput kubectl(const ControlPlane& plane, std::vector<std::string> args) {
    args.insert(args.begin(), {binaries_.kubectl.string(), "--request-timeout=60s"});
    return testing::runCapture(args, {"HOME=" + (scratch_ / "home").string(),
                                      "KUBECONFIG=" + plane.kubeconfig().string()});
  }

  std::string manifest(const std::string& name, const std::string& yaml) {
    testing::writeFile(scratch_ / name, yaml);
    return (scratch_ / name).string();
  }

  // After stop(): no process is left and the work directory is gone.
  void expectNothingLeft() {
    EXPECT_EQ(processesMentioning(workDir().string()), std::vector<int>{});
    EXPECT_FALSE(fs::exists(workDir()));
  }

  // Kills one child with SIGKILL, waits until check() reports it, stops the rest.
  void killAndExpectReported(ControlPlane& plane, process::ChildProcess* child,
                             const std::string& name) {
    ASSERT_NE(child, nullptr);
    ASSERT_TRUE(plane.check().ok());
    ASSERT_EQ(::kill(child->pid(), SIGKILL), 0);
    core::Result<void> r;
    while ((r = plane.check()).ok()) std::this_thread::sleep_for(20ms);
    EXPECT_EQ(r.error().message.rfind(name + " exited (killed by signal 9 (Killed)); the end of "
                                              "its log:\n",
                                      0),
              0u)
        << r.error().message;
    EXPECT_GT(r.error().message.size(), name.size() + 60) << "no log tail";
    plane.stop();
    expectNothingLeft();
  }

  Binaries binaries_;
  testing::ScratchDir scratch_{"kube-real"};
};

TEST_F(RealControlPlaneTest, ApplyNamespaceAndPodReadThemBackAuditedThenStopLeavesNothing) {
  auto plane = start();
  ASSERT_TRUE(plane.ok()) << plane.error().message;
  auto& cp = **plane;
  std::cout << "control plane ready in " << cp.startupSeconds() << "s\n";

  auto run = kubectl(cp, {"apply", "-f", manifest("ns.yaml", kDemoNamespaceYaml)});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "namespace/demo created\n");
  // The namespace's default ServiceAccount comes from the serviceaccount controller; the
  // ServiceAccount admission plugin rejects Pods until it exists.
  while (kubectl(cp, {"get", "serviceaccount", "default", "-n", "demo"}).status != 0) {
    ASSERT_TRUE(cp.check().ok()) << cp.check().error().message;
    std::this_thread::sleep_for(100ms);
  }
  run = kubectl(cp, {"apply", "-f", manifest("pod.yaml", kDemoPodYaml)});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "pod/web created\n");

  run = kubectl(cp, {"get", "namespace", "demo", "-o", "json"});
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(json::parse(run.out)["status"]["phase"], "Active");
  run = kubectl(cp, {"get", "pod", "web", "-n", "demo", "-o", "json"});
  ASSERT_EQ(run.status, 0) << run.err;
  const json pod = json::parse(run.out);
  EXPECT_EQ(pod["spec"]["containers"][0]["image"], "nginx:1.27");
  // What the real admission chain added: the ServiceAccount plugin's token volume and
  // DefaultTolerationSeconds' tolerations.
  EXPECT_EQ(pod["spec"]["serviceAccountName"], "default");
  EXPECT_EQ(pod["spec"]["volumes"][0]["name"].get<std::string>().rfind("kube-api-access-", 0), 0u)
      << pod.dump();
  EXPECT_EQ(pod["spec"]["tolerations"].size(), 2u) << pod.dump();

  // The seed tutorial's policy logs the core group at RequestResponse, as JSON lines. The
  // ResponseComplete event is written after the response, so it is awaited (up to 10 minutes,
  // never expected to take that long).
  const fs::path audit_log = cp.auditLog();
  json pod_create;
  int events = 0;
  for (int attempt = 0; pod_create.is_null() && attempt < 6000; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(100ms);
    std::ifstream in(audit_log);
    events = 0;
    for (std::string line; std::getline(in, line);) {
      const json event = json::parse(line, nullptr, false);
      if (event.is_discarded()) continue;  // a line being written
      ++events;
      EXPECT_EQ(event["kind"], "Event");
      if (event["verb"] == "create" && event["objectRef"]["resource"] == "pods" &&
          event["stage"] == "ResponseComplete" && event["objectRef"]["name"] == "web") {
        pod_create = event;
      }
    }
  }
  EXPECT_GT(events, 0);
  ASSERT_FALSE(pod_create.is_null()) << "no ResponseComplete event for the Pod's create in "
                                     << audit_log;
  EXPECT_EQ(pod_create["level"], "RequestResponse");
  EXPECT_EQ(pod_create["user"]["username"], "kube-local-admin");
  EXPECT_EQ(pod_create["responseStatus"]["code"], 201);
  EXPECT_EQ(pod_create["responseObject"]["spec"]["serviceAccountName"], "default");

  cp.stop();
  expectNothingLeft();
}

// The watch commands of apiserver-sim/tests/rest/kubectl_integration_test.cc against
// kube-apiserver, so that the simulator's answers can be compared with the real ones: `get -w`
// prints a Pod created after it started, `wait --for=create|jsonpath|delete` return once the
// change is seen. Each waits with a deadline far above need.
TEST_F(RealControlPlaneTest, KubectlWatchGetWaitCreateJsonpathDelete) {
  auto plane = start();
  ASSERT_TRUE(plane.ok()) << plane.error().message;
  auto& cp = **plane;
  ASSERT_EQ(kubectl(cp, {"create", "-f", manifest("ns.yaml", kDemoNamespaceYaml)}).status, 0);
  while (kubectl(cp, {"get", "serviceaccount", "default", "-n", "demo"}).status != 0) {
    ASSERT_TRUE(cp.check().ok()) << cp.check().error().message;
    std::this_thread::sleep_for(100ms);
  }
  auto background = [&](const std::string& name, std::vector<std::string> args) {
    args.insert(args.begin(), {binaries_.kubectl.string(), "--kubeconfig",
                               cp.kubeconfig().string(), "--cache-dir",
                               (scratch_ / "home" / "cache").string()});
    return std::make_unique<testing::ChildProcess>(args, scratch_ / (name + ".log"));
  };
  constexpr int kDeadlineMs = 120'000;
  auto get_w = background("get-w", {"get", "pods", "-n", "demo", "-w"});
  auto wait_create = background("wait-create", {"wait", "--for=create", "pod/web", "-n", "demo",
                                                "--timeout=120s"});
  ASSERT_EQ(kubectl(cp, {"create", "-f", manifest("pod.yaml", kDemoPodYaml)}).status, 0);
  const auto seen = testing::waitForText(scratch_ / "get-w.log", "web ", kDeadlineMs);
  ASSERT_TRUE(seen) << testing::readFile(scratch_ / "get-w.log");
  std::cout << "kubectl get -w:\n" << *seen;
  get_w->stop(SIGINT);
  EXPECT_EQ(wait_create->wait(kDeadlineMs + 10'000), 0)
      << testing::readFile(scratch_ / "wait-create.log");
  EXPECT_EQ(testing::readFile(scratch_ / "wait-create.log"), "pod/web condition met\n");

  auto wait_label = background("wait-jsonpath",
                               {"wait", "--for=jsonpath={.metadata.labels.stage}=ready", "pod/web",
                                "-n", "demo", "--timeout=120s"});
  ASSERT_EQ(kubectl(cp, {"label", "pod", "web", "-n", "demo", "stage=ready"}).status, 0);
  EXPECT_EQ(wait_label->wait(kDeadlineMs + 10'000), 0)
      << testing::readFile(scratch_ / "wait-jsonpath.log");
  EXPECT_EQ(testing::readFile(scratch_ / "wait-jsonpath.log"), "pod/web condition met\n");

  auto wait_delete = background("wait-delete", {"wait", "--for=delete", "pod/web", "-n", "demo",
                                                "--timeout=120s"});
  ASSERT_EQ(kubectl(cp, {"delete", "pod", "web", "-n", "demo", "--wait=false",
                         "--grace-period=0", "--force"})
                .status,
            0);
  EXPECT_EQ(wait_delete->wait(kDeadlineMs + 10'000), 0)
      << testing::readFile(scratch_ / "wait-delete.log");
  std::cout << "kubectl wait --for=delete: " << testing::readFile(scratch_ / "wait-delete.log");

  const auto never = kubectl(cp, {"wait", "--for=create", "pod/never", "-n", "demo",
                                  "--timeout=1s"});
  EXPECT_NE(never.status, 0);
  std::cout << "kubectl wait on a Pod never created: " << never.err;
  cp.stop();
  expectNothingLeft();
}

TEST_F(RealControlPlaneTest, AnApiserverThatCannotStartIsReportedAndNothingIsLeft) {
  auto plane = start(false, {"--no-such-flag"});
  ASSERT_FALSE(plane.ok());
  EXPECT_EQ(plane.error().message.rfind(
                "kube-apiserver exited (exit status 1) before ready; the end of its log:\n", 0),
            0u)
      << plane.error().message;
  EXPECT_NE(plane.error().message.find("unknown flag: --no-such-flag"), std::string::npos)
      << plane.error().message;
  expectNothingLeft();
}

TEST_F(RealControlPlaneTest, StartsWithTheEgressSelectorThroughTheConnectProxy) {
  auto plane = start(false, {}, true);
  ASSERT_TRUE(plane.ok()) << plane.error().message;
  ASSERT_NE((*plane)->connectProxy(), nullptr);
  const std::string config = testing::readFile((*plane)->workDir() / "egress-selector.yaml");
  EXPECT_NE(config.find("udsName: " + (*plane)->connectProxy()->socketPath().string()),
            std::string::npos)
      << config;
  auto run = kubectl(**plane, {"get", "--raw", "/readyz"});
  EXPECT_EQ(run.status, 0) << run.err;
  EXPECT_EQ(run.out, "ok");
  (*plane)->stop();
  expectNothingLeft();
}

TEST_F(RealControlPlaneTest, KilledEtcdIsReported) {
  auto plane = start(false);
  ASSERT_TRUE(plane.ok()) << plane.error().message;
  killAndExpectReported(**plane, (*plane)->etcd(), "etcd");
}

TEST_F(RealControlPlaneTest, KilledApiserverIsReported) {
  auto plane = start(false);
  ASSERT_TRUE(plane.ok()) << plane.error().message;
  killAndExpectReported(**plane, (*plane)->apiserver(), "kube-apiserver");
}

TEST_F(RealControlPlaneTest, KilledControllerManagerIsReported) {
  auto plane = start(true);
  ASSERT_TRUE(plane.ok()) << plane.error().message;
  killAndExpectReported(**plane, (*plane)->controllerManager(), "kube-controller-manager");
}

}  // namespace
}  // namespace harness::kube
