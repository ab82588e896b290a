// The same kubectl commands against the real kube-apiserver (v1.37.2, kube/) and against the
// simulator's REST API (with kube-cel, as `apiserver-sim serve` runs it): the exit status,
// stdout and stderr must be identical. `kubectl auth can-i` (SelfSubjectAccessReview: the
// admin, impersonated users with and without system:masters), RBAC (the bootstrap roles from
// kube-cel on the simulator, aggregated as kube-controller-manager's clusterrole-aggregation
// controller does; Roles and bindings made with kubectl; `auth can-i` and `--list` as users,
// groups and service accounts; the 403 of a forbidden read), PATCH bodies with unknown or
// duplicate fields under kubectl's default fieldValidation (Warn) for the three patch types, and
// server-side apply (creates, a conflict between two managers, --force-conflicts) with the
// managedFields every write records, by Kubernetes' field manager in kube-cel. With the workload
// controllers on both (kube-controller-manager's deployment, replicaset and garbage-collector
// controllers; the simulator's WorkloadControllers, pod-template-hash by kube-cel): deletion
// propagation (`--cascade=orphan`, `--cascade=foreground`) and `kubectl rollout` (status, restart,
// history, undo). CustomResourceDefinitions (apiextensions-apiserver's code in kube-cel on the
// simulator) and their custom resources, with the Gateway API's CRDs and examples.
// Labels: real, integration (skipped with one line when the binaries are not built).

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness/core/metrics.h"
#include "harness/kube/control_plane.h"
#include "harness/net/certificates.h"
#include "harness/process/kube_bin_dir.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/authorizer.h"
#include "harness/sim/caller.h"
#include "harness/sim/cel.h"
#include "harness/sim/field_manager.h"
#include "harness/sim/field_validation.h"
#include "harness/sim/go_types.h"
#include "harness/sim/rest_api.h"
#include "harness/sim/store.h"
#include "harness/sim/workload_controllers.h"
#include "harness/testing/support.h"

namespace harness::kube {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class KubectlCompareTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto binaries = Binaries::inDir(process::kubeBinDir());
    if (auto r = binaries.check(); !r) {
      skip_reason_ = r.error().message;
      return;
    }
    const fs::path kube_cel = process::kubeBinDir() / "kube-cel";
    if (auto reason = testing::notBuiltReason(kube_cel); !reason.empty()) {
      skip_reason_ = reason;
      return;
    }
    scratch_ = new testing::ScratchDir("kubectl-compare");
    ControlPlaneOptions options;
    options.binaries = binaries;
    options.work_dir = scratch_->path() / "plane";
    // The clusterrole-aggregation controller (admin, edit and view get their rules) and the
    // workload controllers the simulator has (the serviceaccount controller makes the default
    // ServiceAccount Pods need).
    options.controllers = {"clusterrole-aggregation-controller", "serviceaccount-controller",
                           "deployment-controller", "replicaset-controller",
                           "garbage-collector-controller"};
    options.ready_timeout = 600s;
    auto plane = ControlPlane::start(std::move(options));
    ASSERT_TRUE(plane.ok()) << plane.error().message;
    plane_ = std::move(*plane).release();
    kubectl_ = binaries.kubectl;

    auto cel = sim::cel::KubeCel::start(kube_cel, scratch_->path() / "kube-cel.log");
    ASSERT_TRUE(cel.ok()) << cel.error().message;
    cel_ = new std::shared_ptr<sim::cel::KubeCel>(std::move(*cel));
    sim::setProtobufDecoder(sim::cel::protobufDecoder(*cel_));
    sim::setStrictFieldChecker(sim::cel::strictFieldChecker(*cel_));
    sim::setStrictPatchChecker(sim::cel::strictPatchChecker(*cel_));
    sim::setFieldManager(
        {sim::cel::fieldManagerApply(*cel_), sim::cel::fieldManagerUpdate(*cel_)});
    store_ = new sim::ObjectStore;
    store_->put({"", "namespaces"}, {{"apiVersion", "v1"},
                                     {"kind", "Namespace"},
                                     {"metadata", {{"name", "default"}}},
                                     {"status", {{"phase", "Active"}}}});
    store_->put({"", "serviceaccounts"}, {{"apiVersion", "v1"},
                                          {"kind", "ServiceAccount"},
                                          {"metadata", {{"name", "default"},
                                                        {"namespace", "default"}}}});
    // RBAC's bootstrap policy as `serve` seeds it; requests are then authorized.
    auto policy = (*cel_)->call({{"op", "bootstrapPolicy"}});
    ASSERT_TRUE(policy.ok()) << policy.error().message;
    auto seeded = sim::seedBootstrapPolicy(*store_, *policy);
    ASSERT_TRUE(seeded.ok()) << seeded.error().message;
    caller_ = new sim::InProcessWebhookCaller;
    metrics_ = new core::MetricsRegistry;
    sim::ChainOptions chain_options;
    chain_options.authorize = true;
    chain_options.custom_resources = sim::cel::customResourceCode(*cel_);
    chain_ = new sim::AdmissionChain(*store_, *caller_, *metrics_, chain_options);
    sim::ControllerOptions controller_options;
    controller_options.pod_template_hash =
        [hasher = sim::cel::podTemplateHasher(*cel_)](
            const nlohmann::json& template_spec,
            std::optional<std::int32_t> collision_count) -> std::optional<std::string> {
      auto hash = hasher(template_spec, collision_count);
      if (!hash) return std::nullopt;
      return *hash;
    };
    controller_options.crd_status = chain_options.custom_resources.definition_status;
    controllers_ = new sim::WorkloadControllers(*store_, *chain_, controller_options);
    auto ca = net::CertificateAuthority::create("kubectl-compare-ca");
    ASSERT_TRUE(ca.ok()) << ca.error().message;
    sim::RestApiOptions rest;
    rest.scratch_dir = scratch_->path() / "rest";
    rest.metrics = metrics_;
    auto server = sim::RestApiServer::start(*store_, *chain_, *ca, rest);
    ASSERT_TRUE(server.ok()) << server.error().message;
    server_ = std::move(*server).release();
    ASSERT_TRUE(server_->writeKubeconfig(scratch_->path() / "sim-kubeconfig").ok());
    fs::create_directories(scratch_->path() / "home");
  }

  static void TearDownTestSuite() {
    if (server_) server_->stop();
    if (controllers_) controllers_->stop();
    sim::setProtobufDecoder({});
    sim::setStrictFieldChecker({});
    sim::setStrictPatchChecker({});
    sim::setFieldManager({});
    if (plane_) plane_->stop();
    delete server_;
    delete controllers_;
    delete chain_;
    delete metrics_;
    delete caller_;
    delete store_;
    delete cel_;
    delete plane_;
    delete scratch_;
  }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ASSERT_NE(plane_, nullptr);
    ASSERT_NE(server_, nullptr);
  }

  static testing::CommandOutput kubectl(const fs::path& kubeconfig,
                                        std::vector<std::string> args) {
    args.insert(args.begin(), {kubectl_.string(), "--request-timeout=60s"});
    return testing::runCapture(args, {"HOME=" + (scratch_->path() / "home").string(),
                                      "KUBECONFIG=" + kubeconfig.string()});
  }

  // kubectl on the real server or the simulator.
  static testing::CommandOutput kubectlOn(bool real, std::vector<std::string> args) {
    return kubectl(real ? plane_->kubeconfig() : scratch_->path() / "sim-kubeconfig",
                   std::move(args));
  }

  // Polls `args` on both servers until `done` holds for each one's stdout.
  static void waitOnBoth(const std::vector<std::string>& args,
                         const std::function<bool(const std::string&)>& done);

  // Runs `args` on both; expects the same exit status and output; returns the real one.
  static testing::CommandOutput same(const std::vector<std::string>& args) {
    auto real = kubectl(plane_->kubeconfig(), args);
    const auto simulated = kubectl(scratch_->path() / "sim-kubeconfig", args);
    std::string command;
    for (const auto& arg : args) command += " " + arg;
    EXPECT_EQ(simulated.status, real.status) << "kubectl" << command;
    EXPECT_EQ(simulated.out, real.out) << "kubectl" << command;
    EXPECT_EQ(simulated.err, real.err) << "kubectl" << command;
    std::cout << "kubectl" << command << "\n  -> exit " << real.status << "\n  stdout: "
              << real.out << "\n  stderr: " << real.err << "\n";
    return real;
  }

  static inline std::string skip_reason_;
  static inline testing::ScratchDir* scratch_ = nullptr;
  static inline ControlPlane* plane_ = nullptr;
  static inline fs::path kubectl_;
  static inline std::shared_ptr<sim::cel::KubeCel>* cel_ = nullptr;
  static inline sim::ObjectStore* store_ = nullptr;
  static inline sim::InProcessWebhookCaller* caller_ = nullptr;
  static inline core::MetricsRegistry* metrics_ = nullptr;
  static inline sim::AdmissionChain* chain_ = nullptr;
  static inline sim::RestApiServer* server_ = nullptr;
  static inline sim::WorkloadControllers* controllers_ = nullptr;
};

TEST_F(KubectlCompareTest, AuthCanIAsTheAdminAndAsImpersonatedUsers) {
  EXPECT_EQ(same({"auth", "can-i", "create", "pods"}).out, "yes\n");
  EXPECT_EQ(same({"auth", "can-i", "delete", "deployments.apps", "-n", "kube-system"}).out,
            "yes\n");
  EXPECT_EQ(same({"auth", "can-i", "get", "/healthz"}).out, "yes\n");
  same({"auth", "can-i", "create", "foos"});
  const auto jane = same({"auth", "can-i", "get", "pods", "--as", "jane"});
  EXPECT_EQ(jane.out, "no\n");
  EXPECT_NE(jane.status, 0);
  EXPECT_EQ(same({"auth", "can-i", "get", "pods", "--as", "jane", "--as-group",
                  "system:masters"}).out,
            "yes\n");
  EXPECT_EQ(same({"auth", "can-i", "list", "secrets", "-n", "default", "--as",
                  "system:serviceaccount:default:default"}).out,
            "no\n");
}

// The aggregated roles on the real side are filled by kube-controller-manager a moment after it
// starts: wait for admin's rules (a condition, up to a minute) before comparing them.
void waitForAggregation(const std::function<testing::CommandOutput()>& get) {
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (std::chrono::steady_clock::now() < deadline) {
    const auto out = get();
    if (out.status == 0 && out.out.find("verbs") != std::string::npos) return;
    std::this_thread::sleep_for(500ms);
  }
  ADD_FAILURE() << "the real admin ClusterRole got no rules within a minute";
}

TEST_F(KubectlCompareTest, BootstrapRolesAsKubeApiserverCreatesThem) {
  waitForAggregation([] {
    return kubectl(plane_->kubeconfig(),
                   {"get", "clusterrole", "admin", "-o", "jsonpath={.rules}"});
  });
  same({"get", "clusterroles", "-o", "name"});
  same({"get", "clusterrolebindings", "-o",
        "custom-columns=NAME:.metadata.name,ROLE:.roleRef.name,SUBJECTS:.subjects[*].name"});
  same({"get", "roles,rolebindings", "-A", "-o", "name"});
  for (const char* role : {"admin", "edit", "view", "cluster-admin", "system:basic-user"}) {
    same({"get", "clusterrole", role, "-o",
          "jsonpath={.metadata.labels}{.metadata.annotations}{.aggregationRule}{.rules}"});
  }
  // The table's columns (the creation times differ).
  const auto real = kubectl(plane_->kubeconfig(), {"get", "clusterrole", "view"});
  const auto simulated =
      kubectl(scratch_->path() / "sim-kubeconfig", {"get", "clusterrole", "view"});
  EXPECT_EQ(simulated.out.substr(0, simulated.out.find('\n')),
            real.out.substr(0, real.out.find('\n')));
}

TEST_F(KubectlCompareTest, RbacDecidesAuthCanIAndForbiddenReads) {
  waitForAggregation([] {
    return kubectl(plane_->kubeconfig(),
                   {"get", "clusterrole", "edit", "-o", "jsonpath={.rules}"});
  });
  ASSERT_EQ(same({"create", "namespace", "rbac-team"}).status, 0);
  ASSERT_EQ(same({"create", "role", "pod-reader", "--verb=get,list,watch", "--resource=pods",
                  "--resource=pods/status", "-n", "rbac-team"}).status, 0);
  ASSERT_EQ(same({"create", "rolebinding", "jane-reads", "--role=pod-reader", "--user=jane",
                  "-n", "rbac-team"}).status, 0);
  ASSERT_EQ(same({"create", "rolebinding", "bob-edits", "--clusterrole=edit", "--user=bob", "-n",
                  "rbac-team"}).status, 0);
  ASSERT_EQ(same({"create", "rolebinding", "builder-admin", "--clusterrole=admin",
                  "--serviceaccount=rbac-team:builder", "-n", "rbac-team"}).status, 0);
  ASSERT_EQ(same({"create", "clusterrolebinding", "rbac-ops-view", "--clusterrole=view",
                  "--group=rbac-ops"}).status, 0);
  same({"get", "rolebindings", "-n", "rbac-team", "-o",
        "custom-columns=NAME:.metadata.name,ROLE:.roleRef.name,SUBJECTS:.subjects[*].name"});

  EXPECT_EQ(same({"auth", "can-i", "get", "pods", "-n", "rbac-team", "--as", "jane"}).out,
            "yes\n");
  EXPECT_EQ(same({"auth", "can-i", "get", "pods", "--subresource=status", "-n", "rbac-team",
                  "--as", "jane"}).out,
            "yes\n");
  EXPECT_EQ(same({"auth", "can-i", "get", "pods", "-n", "default", "--as", "jane"}).out, "no\n");
  same({"auth", "can-i", "delete", "pods", "-n", "rbac-team", "--as", "jane"});
  same({"auth", "can-i", "get", "pods", "--subresource=log", "-n", "rbac-team", "--as", "jane"});
  EXPECT_EQ(same({"auth", "can-i", "create", "deployments.apps", "-n", "rbac-team", "--as",
                  "bob"}).out,
            "yes\n");
  same({"auth", "can-i", "update", "deployments.apps", "--subresource=scale", "-n", "rbac-team",
        "--as", "bob"});
  same({"auth", "can-i", "create", "rolebindings", "-n", "rbac-team", "--as", "bob"});
  same({"auth", "can-i", "create", "rolebindings", "-n", "rbac-team", "--as",
        "system:serviceaccount:rbac-team:builder"});
  same({"auth", "can-i", "list", "configmaps", "-n", "kube-system", "--as", "carol",
        "--as-group", "rbac-ops"});
  same({"auth", "can-i", "get", "secrets", "-n", "kube-system", "--as", "carol", "--as-group",
        "rbac-ops"});
  same({"auth", "can-i", "get", "/healthz", "--as", "jane"});
  same({"auth", "can-i", "get", "/metrics", "--as", "jane"});
  same({"auth", "can-i", "--list", "-n", "rbac-team", "--as", "jane"});
  same({"auth", "can-i", "--list", "-n", "rbac-team", "--as", "bob"});
  same({"auth", "can-i", "--list", "-n", "default", "--as", "carol", "--as-group", "rbac-ops"});
  same({"auth", "can-i", "--list", "-n", "rbac-team", "--as",
        "system:serviceaccount:rbac-team:builder"});
  same({"auth", "can-i", "--list"});

  // Reads as jane: allowed in her namespace, the 403 elsewhere.
  same({"get", "pods", "-n", "rbac-team", "--as", "jane"});
  const auto forbidden = same({"get", "pods", "-n", "default", "--as", "jane"});
  EXPECT_NE(forbidden.status, 0);
  EXPECT_NE(forbidden.err.find("Forbidden"), std::string::npos) << forbidden.err;
  same({"get", "configmaps", "-A", "--as", "jane"});
  same({"create", "configmap", "x", "-n", "rbac-team", "--as", "jane"});
  same({"get", "secrets", "-n", "rbac-team", "--as", "carol", "--as-group", "rbac-ops"});
}

TEST_F(KubectlCompareTest, PatchBodiesWithUnknownOrDuplicateFieldsWarn) {
  ASSERT_EQ(same({"create", "configmap", "settings", "-n", "default", "--from-literal=k=v"})
                .status,
            0);
  auto run = same({"patch", "configmap", "settings", "-n", "default", "--type", "merge", "-p",
                   R"({"data":{"a":"b"},"foo":1})"});
  EXPECT_EQ(run.err, "Warning: unknown field \"foo\"\n");
  const std::string json_patch = R"([{"op":"add","path":"/data/c","value":"d","extra":true},)"
                                 R"({"op":"add","path":"/bar","value":{"x":1}}])";
  run = same({"patch", "configmap", "settings", "-n", "default", "--type", "json", "-p",
              json_patch});
  EXPECT_NE(run.err.find("unknown field \"bar\""), std::string::npos) << run.err;
  run = same({"patch", "configmap", "settings", "-n", "default", "--type", "strategic", "-p",
              R"({"data":{"e":"f"},"spec":{"x":1}})"});
  EXPECT_NE(run.err.find("unknown field \"spec\""), std::string::npos) << run.err;
  run = same({"patch", "configmap", "settings", "-n", "default", "--type", "merge", "-p",
              R"({"data":{"g":"1","g":"2"}})"});
  EXPECT_NE(run.err.find("duplicate field"), std::string::npos) << run.err;
  same({"get", "configmap", "settings", "-n", "default", "-o", "jsonpath={.data}"});
}

// kubectl apply --server-side: an apply that creates, a second manager's conflicting apply (the
// 409 kubectl prints with its advice), the same apply with --force-conflicts, then a patch and a
// client-side create recorded as Update entries: the managedFields must read the same.
TEST_F(KubectlCompareTest, ServerSideApplyConflictsForceAndManagedFields) {
  const fs::path dir = scratch_->path() / "ServerSideApplyConflictsForceAndManagedFields";
  fs::create_directories(dir);
  const auto manifest = [&dir](const std::string& name, const std::string& data) {
    const fs::path file = dir / name;
    testing::writeFile(file, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: shared\n"
                             "  namespace: default\ndata:\n" + data);
    return file.string();
  };
  const std::string alice = manifest("alice.yaml", "  x: \"1\"\n  w: a\n");
  const std::string bob = manifest("bob.yaml", "  x: \"2\"\n");
  EXPECT_EQ(same({"apply", "--server-side", "--field-manager", "alice", "-f", alice}).out,
            "configmap/shared serverside-applied\n");
  const auto conflict = same({"apply", "--server-side", "--field-manager", "bob", "-f", bob});
  EXPECT_NE(conflict.status, 0);
  EXPECT_NE(conflict.err.find("Apply failed with 1 conflict: conflict with \"alice\": .data.x"),
            std::string::npos)
      << conflict.err;
  same({"apply", "--server-side", "--field-manager", "bob", "--force-conflicts", "-f", bob});
  same({"patch", "configmap", "shared", "-n", "default", "--type", "strategic", "-p",
        R"({"data":{"z":"3"}})"});
  same({"create", "configmap", "plain", "-n", "default", "--from-literal=k=v"});
  const std::string managers = R"(jsonpath={range .metadata.managedFields[*]}{.manager} )"
                               R"({.operation} {.fieldsV1}{"\n"}{end})";
  const auto fields = same({"get", "configmap", "shared", "-n", "default", "-o", managers});
  EXPECT_EQ(fields.out,
            "alice Apply {\"f:data\":{\"f:w\":{}}}\n"
            "bob Apply {\"f:data\":{\"f:x\":{}}}\n"
            "kubectl-patch Update {\"f:data\":{\"f:z\":{}}}\n");
  same({"get", "configmap", "plain", "-n", "default", "-o", managers});
  same({"get", "configmap", "shared", "-n", "default", "-o", "jsonpath={.data}"});
}

// Polls `args` on both servers until `done` holds for each one's stdout (a controller's work),
// up to two minutes (the real garbage collector first syncs its informers).
void KubectlCompareTest::waitOnBoth(const std::vector<std::string>& args,
                                    const std::function<bool(const std::string&)>& done) {
  const auto deadline = std::chrono::steady_clock::now() + 120s;
  bool real_done = false;
  bool sim_done = false;
  while (std::chrono::steady_clock::now() < deadline && !(real_done && sim_done)) {
    if (!real_done) real_done = done(kubectlOn(true, args).out);
    if (!sim_done) sim_done = done(kubectlOn(false, args).out);
    if (!(real_done && sim_done)) std::this_thread::sleep_for(250ms);
  }
  std::string command;
  for (const auto& arg : args) command += " " + arg;
  EXPECT_TRUE(real_done) << "real: kubectl" << command;
  EXPECT_TRUE(sim_done) << "simulator: kubectl" << command;
}

std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// A Deployment of `replicas` nginx Pods labelled app=<name>; `extra` goes into the template's
// metadata, `spec_extra` into the spec.
std::string deploymentYaml(const std::string& name, int replicas, const std::string& extra,
                           const std::string& spec_extra = "") {
  return "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: " + name +
         "\n  namespace: default\nspec:\n" + spec_extra +
         "  replicas: " + std::to_string(replicas) +
         "\n  selector:\n    matchLabels:\n      app: " + name +
         "\n  template:\n    metadata:\n      labels:\n        app: " + name + "\n" + extra +
         "    spec:\n      containers:\n      - name: app\n        image: nginx:1.27\n";
}

// kube-apiserver's store.go deletionFinalizersForGarbageCollection and kube-controller-manager's
// garbage collector: --cascade=orphan leaves the ReplicaSet (without ownerReferences) and its
// Pods; --cascade=foreground keeps the Deployment and its ReplicaSet with the foregroundDeletion
// finalizer while a Pod (held by a finalizer of its own) is being deleted, then removes them.
TEST_F(KubectlCompareTest, DeletionPropagationOrphanAndForeground) {
  const fs::path dir = scratch_->path() / "DeletionPropagationOrphanAndForeground";
  fs::create_directories(dir);
  testing::writeFile(dir / "keep.yaml", deploymentYaml("keep", 2, ""));
  EXPECT_EQ(same({"apply", "-f", (dir / "keep.yaml").string()}).out,
            "deployment.apps/keep created\n");
  waitOnBoth({"get", "pods", "-l", "app=keep", "-o", "name"},
             [](const std::string& out) { return lines(out) == 2; });
  same({"get", "replicasets", "-l", "app=keep", "-o", "name"});
  EXPECT_EQ(same({"delete", "deployment", "keep", "--cascade=orphan"}).out,
            "deployment.apps \"keep\" deleted from default namespace\n");
  same({"get", "deployments", "-o", "name"});
  same({"get", "replicasets", "-l", "app=keep", "-o",
        "jsonpath={.items[*].metadata.name} {.items[*].metadata.ownerReferences}"});
  const std::string owner_columns =
      R"(jsonpath={range .items[*]}{.metadata.ownerReferences[*].kind} )"
      R"({.metadata.ownerReferences[*].name}{"\n"}{end})";
  const auto owners = same({"get", "pods", "-l", "app=keep", "-o", owner_columns});
  EXPECT_EQ(lines(owners.out), 2u);
  // The same Deployment again adopts the orphaned ReplicaSet (ClaimReplicaSets) and its Pods stay.
  same({"apply", "-f", (dir / "keep.yaml").string()});
  const std::string adopted_columns =
      "jsonpath={.items[*].metadata.name} {.items[*].metadata.ownerReferences[*].kind} "
      "{.items[*].spec.replicas}";
  const std::vector<std::string> adopted = {"get", "replicasets", "-l", "app=keep", "-o",
                                            adopted_columns};
  waitOnBoth(adopted,
             [](const std::string& out) { return out.find("Deployment") != std::string::npos; });
  same(adopted);
  same({"get", "deployment", "keep", "-o",
        "jsonpath={.metadata.annotations.deployment\\.kubernetes\\.io/revision}"});
  for (const bool real : {true, false}) {
    EXPECT_EQ(lines(kubectlOn(real, {"get", "pods", "-l", "app=keep", "-o", "name"}).out), 2u)
        << (real ? "real" : "simulator");
  }

  testing::writeFile(dir / "held.yaml",
                     deploymentYaml("held", 1, "      finalizers:\n      - example.com/hold\n"));
  same({"apply", "-f", (dir / "held.yaml").string()});
  waitOnBoth({"get", "pods", "-l", "app=held", "-o", "name"},
             [](const std::string& out) { return lines(out) == 1; });
  same({"delete", "deployment", "held", "--cascade=foreground", "--wait=false"});
  waitOnBoth({"get", "pods", "-l", "app=held", "-o",
              "jsonpath={.items[*].metadata.deletionTimestamp}"},
             [](const std::string& out) { return !out.empty(); });
  same({"get", "deployment", "held", "-o",
        "jsonpath={.metadata.finalizers} {.metadata.deletionGracePeriodSeconds}"});
  same({"get", "replicasets", "-l", "app=held", "-o",
        "jsonpath={.items[*].metadata.finalizers} {.items[*].metadata.deletionGracePeriodSeconds}"});
  same({"get", "pods", "-l", "app=held", "-o",
        "jsonpath={.items[*].metadata.finalizers} {.items[*].metadata.deletionGracePeriodSeconds}"});
  for (const bool real : {true, false}) {
    const auto name = kubectlOn(real, {"get", "pods", "-l", "app=held", "-o",
                                       "jsonpath={.items[0].metadata.name}"});
    const auto patched =
        kubectlOn(real, {"patch", "pod", name.out, "--type=json", "-p",
                         R"([{"op":"remove","path":"/metadata/finalizers"}])"});
    EXPECT_EQ(patched.status, 0) << patched.err;
  }
  waitOnBoth({"get", "deployments", "-o", "name"},
             [](const std::string& out) { return out.find("held") == std::string::npos; });
  same({"get", "replicasets,pods", "-l", "app=held"});
  same({"delete", "deployment", "keep"});
  waitOnBoth({"get", "pods", "-l", "app=keep", "-o", "name"},
             [](const std::string& out) { return out.empty(); });
  same({"get", "replicasets,pods", "-l", "app=keep"});
}

// kubectl rollout on a Deployment whose Pods never become available (no kubelet on either):
// status (kubectl's wait, then its timeout), the Deployment's status fields and conditions,
// restart (a new ReplicaSet; the old one is not scaled down with one replica), history, undo
// (the first ReplicaSet takes revision 3).
TEST_F(KubectlCompareTest, RolloutStatusRestartHistoryUndo) {
  const fs::path dir = scratch_->path() / "RolloutStatusRestartHistoryUndo";
  fs::create_directories(dir);
  testing::writeFile(dir / "roll.yaml", deploymentYaml("roll", 1, ""));
  same({"apply", "-f", (dir / "roll.yaml").string()});
  const std::string status_columns =
      "jsonpath={.metadata.annotations} {.status.observedGeneration} {.status.replicas} "
      "{.status.updatedReplicas} {.status.readyReplicas} {.status.availableReplicas} "
      "{.status.unavailableReplicas} "
      "{range .status.conditions[*]}{.type}={.status}/{.reason}/{.message};{end}";
  const std::vector<std::string> status = {"get", "deployment", "roll", "-o", status_columns};
  const std::string progressing = "Progressing=True/ReplicaSetUpdated/";
  waitOnBoth(status, [&](const std::string& out) {
    return out.find(" 1 1 1   1 ") != std::string::npos &&
           out.find(progressing) != std::string::npos;
  });
  same(status);
  const auto waiting = same({"rollout", "status", "deployment/roll", "--timeout=1s"});
  EXPECT_NE(waiting.status, 0);
  same({"rollout", "history", "deployment/roll"});
  EXPECT_EQ(same({"rollout", "restart", "deployment/roll"}).out,
            "deployment.apps/roll restarted\n");
  const std::string by_revision =
      "--sort-by={.metadata.annotations.deployment\\.kubernetes\\.io/revision}";
  const std::string set_columns =
      R"(jsonpath={range .items[*]}{.metadata.annotations} {.spec.replicas} )"
      R"({.status.replicas}{"\n"}{end})";
  const std::vector<std::string> sets = {"get", "replicasets", "-l", "app=roll", by_revision,
                                         "-o", set_columns};
  waitOnBoth(sets, [](const std::string& out) { return lines(out) == 2; });
  const std::string revision_columns =
      R"(jsonpath={range .items[*]}{.metadata.annotations.deployment\.kubernetes\.io/revision} )"
      R"({.metadata.annotations.deployment\.kubernetes\.io/revision-history} {.spec.replicas} )"
      R"({.status.replicas}{"\n"}{end})";
  const std::vector<std::string> revisions = {"get", "replicasets", "-l", "app=roll",
                                              by_revision, "-o", revision_columns};
  waitOnBoth({"get", "deployment", "roll", "-o",
              "jsonpath={.status.replicas} {.status.updatedReplicas}"},
             [](const std::string& out) { return out == "2 1"; });
  same({"rollout", "status", "deployment/roll", "--timeout=1s"});
  same(revisions);
  same({"rollout", "history", "deployment/roll"});
  same({"rollout", "history", "deployment/roll", "--revision=1"});
  EXPECT_EQ(same({"rollout", "undo", "deployment/roll"}).out,
            "deployment.apps/roll rolled back\n");
  waitOnBoth({"get", "deployment", "roll", "-o",
              "jsonpath={.metadata.annotations.deployment\\.kubernetes\\.io/revision}"},
             [](const std::string& out) { return out == "3"; });
  same({"rollout", "history", "deployment/roll"});
  same({"rollout", "status", "deployment/roll", "--timeout=1s"});
  same(revisions);
  // The real controller answers the undo with Progressing NewReplicaSetCreated and says
  // ReplicaSetUpdated only when a later sync sees the rollout progress (sync.go
  // syncRolloutStatus, util.DeploymentProgressing). With no kubelet that sync may never come: a
  // run waited two minutes in vain, another under load saw it. The simulator's controller has
  // made that sync. Both say Progressing=True; everything else is compared exactly.
  const std::vector<std::string> undone = {
      "get", "deployment", "roll", "-o",
      "jsonpath={.metadata.generation} {.status.observedGeneration} {.status.replicas} "
      "{.status.updatedReplicas} {.status.unavailableReplicas} "
      "{range .status.conditions[*]}{.type}={.status}/{.reason};{end}"};
  waitOnBoth(undone, [](const std::string& out) {
    return out.find("Progressing=True/") != std::string::npos;
  });
  const auto oneReason = [](std::string out) {
    const std::string created = "Progressing=True/NewReplicaSetCreated;";
    if (const auto at = out.find(created); at != std::string::npos) {
      out.replace(at, created.size(), "Progressing=True/ReplicaSetUpdated;");
    }
    return out;
  };
  EXPECT_EQ(oneReason(kubectlOn(false, undone).out), oneReason(kubectlOn(true, undone).out));

  // rolling.go with 4 replicas (maxSurge 1, maxUnavailable 1): the new ReplicaSet up to 2, the
  // old one down to 3, then no Pod becomes available and nothing moves.
  testing::writeFile(dir / "wide.yaml", deploymentYaml("wide", 4, ""));
  same({"apply", "-f", (dir / "wide.yaml").string()});
  waitOnBoth({"get", "pods", "-l", "app=wide", "-o", "name"},
             [](const std::string& out) { return lines(out) == 4; });
  same({"rollout", "restart", "deployment/wide"});
  const std::string surge_columns =
      R"(jsonpath={range .items[*]}{.metadata.annotations.deployment\.kubernetes\.io/revision} )"
      R"({.spec.replicas} {.status.replicas} )"
      R"({.metadata.annotations.deployment\.kubernetes\.io/desired-replicas} )"
      R"({.metadata.annotations.deployment\.kubernetes\.io/max-replicas}{"\n"}{end})";
  const std::vector<std::string> wide = {"get", "replicasets", "-l", "app=wide", by_revision,
                                         "-o", surge_columns};
  waitOnBoth(wide, [](const std::string& out) { return out == "1 3 3 4 5\n2 2 2 4 5\n"; });
  same(wide);
  same({"rollout", "status", "deployment/wide", "--timeout=1s"});
  same({"get", "deployment", "wide", "-o",
        "jsonpath={.status.replicas} {.status.updatedReplicas} {.status.unavailableReplicas}"});

  // progress.go DeploymentTimedOut: a second without progress is past this one's deadline.
  testing::writeFile(dir / "slow.yaml",
                     deploymentYaml("slow", 1, "", "  progressDeadlineSeconds: 1\n"));
  same({"apply", "-f", (dir / "slow.yaml").string()});
  const std::vector<std::string> conditions = {
      "get", "deployment", "slow", "-o",
      "jsonpath={range .status.conditions[*]}{.type}={.status}/{.reason}/{.message};{end}"};
  waitOnBoth(conditions, [](const std::string& out) {
    return out.find("ProgressDeadlineExceeded") != std::string::npos;
  });
  same(conditions);
  const auto exceeded = same({"rollout", "status", "deployment/slow", "--timeout=5s"});
  EXPECT_EQ(exceeded.err, "error: deployment \"slow\" exceeded its progress deadline\n");
}

}  // namespace
}  // namespace harness::kube

namespace harness::kube {
namespace {

// The Gateway API v1.0.0-rc1 CRDs and their project's valid and invalid examples, as
// apiextensions-apiserver's own tests keep them in its module (the version kube/go.mod pins):
// empty when the module is not in the Go module cache.
fs::path gatewayCases() {
  const auto cache = testing::runCapture({"go", "env", "GOMODCACHE"}, {});
  if (cache.status != 0) return {};
  std::string dir = cache.out;
  while (!dir.empty() && (dir.back() == '\n' || dir.back() == ' ')) dir.pop_back();
  const fs::path cases = fs::path(dir) / "k8s.io" / "apiextensions-apiserver@v0.37.2" / "test" /
                         "integration" / "ratcheting_test_cases";
  std::error_code ec;
  return fs::is_directory(cases, ec) ? cases : fs::path();
}

constexpr const char* kWidgetsCrd = R"({
  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.example.com"},
  "spec": {"group": "example.com", "scope": "Namespaced",
    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"],
              "categories": ["toys"]},
    "versions": [{"name": "v1", "served": true, "storage": true,
      "subresources": {"status": {}},
      "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                                   {"name": "Color", "type": "string", "jsonPath": ".spec.color"}],
      "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object",
          "x-kubernetes-validations": [{"rule": "self.size <= 10", "message": "size is at most 10"}],
          "properties": {"size": {"type": "integer"}, "color": {"type": "string", "default": "blue"}}},
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}}}]}})";

std::string widget(const std::string& name, const std::string& spec) {
  return R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":")" + name +
         R"(","namespace":"default"},"spec":)" + spec + "}";
}

}  // namespace

// A CRD made with kubectl and its custom resources: names and conditions, discovery, the
// schema's defaults, a CEL rule's and the schema's 422, kubectl's Strict field validation, patch
// types, the status subresource, printer columns, categories and short names; the CRD's
// deletion with its resources.
TEST_F(KubectlCompareTest, CustomResourceDefinitionsAndTheirResources) {
  const fs::path dir = scratch_->path() / "crd";
  fs::create_directories(dir);
  testing::writeFile(dir / "crd.json", kWidgetsCrd);
  ASSERT_EQ(same({"apply", "-f", (dir / "crd.json").string()}).status, 0);
  waitOnBoth({"get", "crd", "widgets.example.com", "-o",
              R"(jsonpath={.status.conditions[?(@.type=="Established")].status})"},
             [](const std::string& out) { return out == "True"; });
  const std::string crd_columns =
      "jsonpath={.status.acceptedNames}{.status.conditions[*].type}"
      "{.status.conditions[*].reason}{.status.storedVersions}{.metadata.generation}"
      "{.spec.versions[0].schema.openAPIV3Schema.properties.spec}";
  same({"get", "crd", "widgets.example.com", "-o", crd_columns});
  same({"api-resources", "--api-group=example.com"});

  testing::writeFile(dir / "w1.json", widget("w1", R"({"size":3,"shape":"round"})"));
  testing::writeFile(dir / "w2.json", widget("w2", R"({"size":11})"));
  testing::writeFile(dir / "w3.json", widget("w3", R"({"size":"big"})"));
  testing::writeFile(dir / "w4.json", widget("w4", R"({"size":1,"color":"red"})"));
  // kubectl's default Strict validation: the unknown field refuses w1.
  same({"create", "-f", (dir / "w1.json").string()});
  same({"create", "-f", (dir / "w1.json").string(), "--validate=warn"});
  same({"apply", "-f", (dir / "w2.json").string()});
  same({"apply", "-f", (dir / "w3.json").string()});
  ASSERT_EQ(same({"apply", "-f", (dir / "w4.json").string()}).status, 0);
  same({"get", "widgets", "-o",
        "jsonpath={range .items[*]}{.metadata.name} {.spec} {.metadata.generation}{\"\\n\"}{end}"});
  same({"get", "wd", "-o", "custom-columns=NAME:.metadata.name,SIZE:.spec.size,COLOR:.spec.color"});
  same({"get", "toys", "-o", "name"});
  same({"patch", "widget", "w1", "--type=merge", "-p", R"({"spec":{"size":4}})"});
  same({"patch", "widget", "w1", "--type=strategic", "-p", R"({"spec":{"size":5}})"});
  same({"patch", "widget", "w1", "--type=json", "-p",
        R"([{"op":"replace","path":"/spec/size","value":12}])"});
  same({"patch", "widget", "w1", "--subresource=status", "--type=merge", "-p",
        R"({"spec":{"size":9},"status":{"ready":true}})"});
  same({"get", "widget", "w1", "-o", "jsonpath={.spec}{.status}{.metadata.generation}"});
  same({"apply", "-f", (dir / "w4.json").string()});
  // The table's headers and cells but Age (the creation times differ).
  const auto real = kubectlOn(true, {"get", "widgets", "-o", "wide"});
  const auto simulated = kubectlOn(false, {"get", "widgets", "-o", "wide"});
  EXPECT_EQ(simulated.out, real.out);

  ASSERT_EQ(same({"delete", "crd", "widgets.example.com"}).status, 0);
  waitOnBoth({"get", "crd", "-o", "name"},
             [](const std::string& out) { return out.find("widgets") == std::string::npos; });
  same({"get", "widgets"});
}

// The Gateway API's CRDs (x-kubernetes-validations rules, defaults, printer columns, a protected
// group's approval annotation) and every example its project wrote, valid and invalid: the same
// answers, message for message.
TEST_F(KubectlCompareTest, GatewayApiCrdsAndTheirExamples) {
  const fs::path cases = gatewayCases();
  if (cases.empty()) {
    GTEST_SKIP() << "k8s.io/apiextensions-apiserver@v0.37.2 is not in the Go module cache "
                    "(bash scripts/build-kube.sh downloads it)";
  }
  ASSERT_EQ(same({"apply", "-f", (cases / "crds" / "standard-install.yaml").string()}).status, 0);
  for (const char* crd : {"gatewayclasses", "gateways", "httproutes", "referencegrants"}) {
    waitOnBoth({"get", "crd", std::string(crd) + ".gateway.networking.k8s.io", "-o",
                R"(jsonpath={.status.conditions[?(@.type=="Established")].status})"},
               [](const std::string& out) { return out == "True"; });
  }
  ASSERT_EQ(same({"create", "namespace", "gateways"}).status, 0);
  std::vector<fs::path> files;
  for (const char* kind : {"valid", "invalid"}) {
    for (const auto& entry : fs::recursive_directory_iterator(cases / kind)) {
      if (entry.is_regular_file() && entry.path().extension() == ".yaml") {
        files.push_back(entry.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 50U);
  for (const auto& file : files) {
    // Each file in a namespace of its own name, so that examples that share names do not meet.
    const std::string ns =
        "gw-" + std::to_string(std::hash<std::string>{}(file.string()) % 1000000);
    kubectlOn(true, {"create", "namespace", ns});
    kubectlOn(false, {"create", "namespace", ns});
    same({"apply", "-n", ns, "-f", file.string()});
  }
  same({"get", "httproutes,gateways,referencegrants", "-A", "-o", "name"});
  same({"get", "gatewayclasses", "-o", "custom-columns=NAME:.metadata.name,CONTROLLER:.spec.controllerName"});
}

}  // namespace harness::kube
