// status.typeChecking of ValidatingAdmissionPolicies: kube-controller-manager's status controller
// (k8s.io/kubernetes pkg/controller/validatingadmissionpolicystatus) on the real control plane
// against what the simulator's controller writes (kube-cel's typeCheckValidatingPolicy, through
// harness::sim::cel::policyStatusWriter) for the same stored policy, at two generations. Skipped,
// with one line, when scripts/build-kube.sh has not built the binaries.

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/kube/control_plane.h"
#include "harness/process/kube_bin_dir.h"
#include "harness/sim/cel.h"
#include "harness/testing/support.h"

namespace harness::kube {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

// A policy on Deployments and ReplicaSets with a ConfigMap as params and these validations.
std::string policyYaml(const std::string& validations) {
  return R"(apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules:
      - {apiGroups: [apps], apiVersions: [v1], operations: [CREATE, UPDATE], resources: [deployments, replicasets]}
  validations:
)" + validations;
}

// Warnings on two kinds (a comparison of int with string), on a messageExpression (string + int:
// valid at creation, where object is dyn) and on the params' type (a ConfigMap's data values are
// strings).
const std::string kPolicyYaml = policyYaml(R"(    - expression: "object.spec.replicas > 1"
    - expression: "object.spec.replicas > 'one'"
      messageExpression: "'replicas: ' + object.spec.replicas"
    - expression: "params.data.max > 3"
)");
const std::string kFixedPolicyYaml =
    policyYaml("    - expression: \"object.spec.replicas <= int(params.data.max)\"\n");

class PolicyStatusRealTest : public ::testing::Test {
 protected:
  void SetUp() override {
    binaries_ = Binaries::inDir(process::kubeBinDir());
    if (auto r = binaries_.check(); !r) GTEST_SKIP() << r.error().message;
    const fs::path kube_cel = process::kubeBinDir() / "kube-cel";
    if (auto reason = testing::notBuiltReason(kube_cel); !reason.empty()) GTEST_SKIP() << reason;
    auto cel = sim::cel::KubeCel::start(kube_cel, scratch_.path() / "kube-cel.log");
    ASSERT_TRUE(cel.ok()) << cel.error().message;
    cel_ = std::move(cel).value();
    fs::create_directories(scratch_.path() / "home");
  }

  testing::CommandOutput kubectl(const ControlPlane& plane, std::vector<std::string> args) {
    args.insert(args.begin(), {binaries_.kubectl.string(), "--request-timeout=60s"});
    return testing::runCapture(args, {"HOME=" + (scratch_.path() / "home").string(),
                                      "KUBECONFIG=" + plane.kubeconfig().string()});
  }

  // The policy once the controller has observed `generation` (a bounded wait on the real,
  // asynchronous controller; the comparison itself does not depend on time).
  json observed(const ControlPlane& plane, int generation) {
    for (int attempt = 0; attempt < 600; ++attempt) {
      auto run = kubectl(plane, {"get", "validatingadmissionpolicy", "replicas", "-o", "json"});
      if (run.status == 0) {
        json policy = json::parse(run.out);
        if (policy.value("status", json::object()).value("observedGeneration", 0) >= generation) {
          return policy;
        }
      }
      std::this_thread::sleep_for(500ms);
    }
    ADD_FAILURE() << "kube-controller-manager did not observe generation " << generation;
    return json();
  }

  // What the simulator's controller writes for the policy as it was before the real one's write.
  json simulated(json policy) {
    policy.erase("status");
    auto status = sim::cel::policyStatusWriter(cel_)(policy);
    if (!status) {
      ADD_FAILURE() << "the simulator wrote no status";
      return json();
    }
    return *status;
  }

  Binaries binaries_;
  testing::ScratchDir scratch_{"policy-status-real"};
  std::shared_ptr<sim::cel::KubeCel> cel_;
};

TEST_F(PolicyStatusRealTest, KubeControllerManagerWritesWhatTheSimulatorWrites) {
  ControlPlaneOptions options;
  options.binaries = binaries_;
  options.work_dir = scratch_.path() / "work";
  options.ready_timeout = 600s;
  options.controllers.push_back("validatingadmissionpolicy-status-controller");
  auto plane = ControlPlane::start(std::move(options));
  ASSERT_TRUE(plane.ok()) << plane.error().message;

  testing::writeFile(scratch_.path() / "policy.yaml", kPolicyYaml);
  auto run = kubectl(**plane, {"apply", "-f", (scratch_.path() / "policy.yaml").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  json policy = observed(**plane, 1);
  ASSERT_FALSE(policy.is_null());
  const json& real = policy["status"];
  ASSERT_EQ(real["typeChecking"]["expressionWarnings"].size(), 3u) << real.dump(2);
  EXPECT_EQ(simulated(policy), real) << "real: " << real.dump(2);

  // The next generation has no warnings: the status is observedGeneration alone (the applied
  // empty typeChecking is not kept).
  testing::writeFile(scratch_.path() / "fixed.yaml", kFixedPolicyYaml);
  run = kubectl(**plane, {"apply", "-f", (scratch_.path() / "fixed.yaml").string()});
  ASSERT_EQ(run.status, 0) << run.err;
  policy = observed(**plane, 2);
  ASSERT_FALSE(policy.is_null());
  EXPECT_EQ(policy["status"], (json{{"observedGeneration", 2}}));
  EXPECT_EQ(simulated(policy), policy["status"]);
  (*plane)->stop();
}

}  // namespace
}  // namespace harness::kube
