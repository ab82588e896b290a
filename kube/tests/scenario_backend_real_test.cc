// Scenarios played on the real control plane (CTest labels `real`, `integration`): the kube
// backend of the scenario runner against kube-apiserver v1.37.2 built by scripts/build-kube.sh.
// Skipped, with one line, when the binaries are not built. Waits are for conditions, never
// fixed sleeps.

#include <filesystem>
#include <optional>
#include <set>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/kube/scenario_backend.h"
#include "harness/sim/compare.h"
#include "harness/process/kube_bin_dir.h"
#include "harness/sim/report.h"
#include "harness/sim/scenario.h"
#include "harness/sim/scenario_runner.h"
#include "harness/testing/support.h"

namespace harness::kube {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// A mutating webhook referenced by `service` (through the egress CONNECT proxy and a Service's
// ClusterIP) that patches, under an audit policy at Request level; then a validating webhook
// configuration created by a step, which the next step must see (the informer sync): its `url`
// is routed to a stub whose certificate its empty caBundle cannot verify, and it fails open.
constexpr const char* kScenario = R"(apiVersion: apiserver-sim.harness.dev/v1alpha1
kind: Scenario
metadata:
  name: kube-backend
spec:
  auditPolicy:
    apiVersion: audit.k8s.io/v1
    kind: Policy
    omitStages: [RequestReceived]
    rules:
      - level: Request
        resources: [{group: "", resources: [configmaps]}]
      - level: None
  objects:
    - {apiVersion: v1, kind: Namespace, metadata: {name: demo}}
  endpoints:
    - name: labeler
      stub:
        responses:
          - respond:
              patch: [{op: add, path: /metadata/labels/injected, value: "true"}]
      service: {namespace: webhooks, name: labeler}
    - name: denier
      stub:
        responses:
          - when: {pointers: {/request/object/metadata/labels/deny: "yes"}}
            respond: {allowed: false, status: {message: no}}
          - respond: {}
      hosts: ["denier.example.com:443"]
  webhookConfigurations:
    - apiVersion: admissionregistration.k8s.io/v1
      kind: MutatingWebhookConfiguration
      metadata: {name: labeler}
      webhooks:
        - name: labeler.example.com
          clientConfig: {service: {namespace: webhooks, name: labeler, path: /mutate}}
          rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
          sideEffects: None
          admissionReviewVersions: [v1]
  steps:
    - name: patched
      request:
        object: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: demo, labels: {app: x}}}
      expect:
        allowed: true
        code: 201
        object: {metadata: {labels: {app: x, injected: "true"}}}
        annotations:
          exact:
            mutation.webhook.admission.k8s.io/round_0_index_0: {configuration: labeler, webhook: labeler.example.com, mutated: true}
            patch.webhook.admission.k8s.io/round_0_index_0: '{"configuration":"labeler","webhook":"labeler.example.com","patch":[{"op":"add","path":"/metadata/labels/injected","value":"true"}],"patchType":"JSONPatch"}'
        calls: [{webhook: labeler.example.com, round: 0, index: 0, outcome: Patched, changed: true}]
        stub: {labeler: {calls: 1, lastTimeout: 10s, lastOperation: CREATE, lastDryRun: false}}
        metrics:
          - {name: apiserver_admission_webhook_request_total, labels: {name: labeler.example.com, type: admit, code: "200"}, delta: 1}
        auditEvent: {level: Request, requestObject: true, responseObject: false}
    - name: create the validating configuration
      request:
        object:
          apiVersion: admissionregistration.k8s.io/v1
          kind: ValidatingWebhookConfiguration
          metadata: {name: denier}
          webhooks:
            - name: denier.example.com
              clientConfig: {url: https://denier.example.com/validate}
              failurePolicy: Ignore
              rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [configmaps]}]
              sideEffects: None
              admissionReviewVersions: [v1]
      expect: {code: 201}
    - name: failed open
      request:
        object: {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: demo, labels: {deny: "yes"}}}
      expect:
        allowed: true
        code: 201
        annotations:
          subset:
            failed-open.validating.webhook.admission.k8s.io/round_0_index_0: denier.example.com
        stub: {denier: {calls: 0}, labeler: {calls: 1}}
        metrics:
          - {name: apiserver_admission_webhook_fail_open_count, labels: {name: denier.example.com, type: validating}, delta: 1}
    - name: exec is admitted, then the pod is looked up
      request:
        operation: CONNECT
        resource: {group: "", version: v1, resource: pods}
        subresource: exec
        name: a
        namespace: demo
        object: {apiVersion: v1, kind: PodExecOptions, command: [ls]}
      expect: {code: 404, message: 'pods "a" not found', calls: []}
)";

class KubeBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    options_.binaries = Binaries::inDir(process::kubeBinDir());
    if (auto r = options_.binaries.check(); !r) GTEST_SKIP() << r.error().message;
  }
  KubeBackendOptions options_;
  testing::ScratchDir scratch_{"kube-backend"};
};

TEST_F(KubeBackendTest, PlaysAScenarioAgainstTheRealServer) {
  const std::string text = kScenario;
  const fs::path file = scratch_ / "scenario.yaml";
  testing::writeFile(file, text);
  auto scenario = sim::loadScenario(file);
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  auto backend = kubeBackend(options_);
  sim::RunOptions options;
  options.backend = backend.get();
  options.work_dir = scratch_ / "work";
  const auto result = sim::runScenario(*scenario, options);
  sim::RunReport report;
  report.scenarios.push_back(result);
  const std::string table = sim::renderTable(report);
  ASSERT_FALSE(result.error) << table;
  EXPECT_EQ(result.backend, "kube");
  ASSERT_EQ(result.steps.size(), 4u);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(result.steps[i].status, sim::StepStatus::kPassed) << table;
  }
  // What was observed came from the real server: its audit ID and its own object fields.
  ASSERT_TRUE(result.steps[0].admission);
  EXPECT_FALSE(result.steps[0].admission->audit_id.empty());
  ASSERT_TRUE(result.steps[0].admission->object);
  EXPECT_TRUE((*result.steps[0].admission->object)["metadata"].contains("uid"));
}


// Catch-all webhooks: a mutating one matching every resource (the sync request too) whose stub
// answers by call number and sequence position, and a validating one a step creates (its empty
// caBundle cannot verify the stub: it fails open). The sync request reaches both; the stub
// recognises it and neither records nor counts it, so the scenario's first call is still call 1.
// CONNECT is admitted before kube-apiserver looks for a node (the Pod has none).
constexpr const char* kCatchAllScenario = R"(apiVersion: apiserver-sim.harness.dev/v1alpha1
kind: Scenario
metadata:
  name: kube-backend-catch-all
spec:
  objects:
    - {apiVersion: v1, kind: Namespace, metadata: {name: demo}}
    - apiVersion: v1
      kind: Pod
      metadata: {name: web, namespace: demo}
      spec: {containers: [{name: app, image: busybox}]}
  endpoints:
    - name: all
      stub:
        responses:
          - when: {call: 1}
            respond:
              patch: [{op: add, path: /metadata/labels/first, value: "yes"}]
          - when: {operation: CREATE}
            sequence: [{}, {allowed: false, status: {code: 403, message: third call}}]
      service: {namespace: webhooks, name: all}
    - name: vall
      stub: {}
      service: {namespace: webhooks, name: vall}
  webhookConfigurations:
    - apiVersion: admissionregistration.k8s.io/v1
      kind: MutatingWebhookConfiguration
      metadata: {name: catch-all}
      webhooks:
        - name: all.example.com
          clientConfig: {service: {namespace: webhooks, name: all}}
          rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*/*"]}]
          sideEffects: None
          admissionReviewVersions: [v1]
  steps:
    - name: the first call patches
      request:
        object: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: demo, labels: {app: x}}}
      expect:
        code: 201
        object: {metadata: {labels: {app: x, first: "yes"}}}
        stub: {all: {calls: 1}, vall: {calls: 0}}
    - name: a catch-all validating configuration
      request:
        object:
          apiVersion: admissionregistration.k8s.io/v1
          kind: ValidatingWebhookConfiguration
          metadata: {name: catch-all}
          webhooks:
            - name: vall.example.com
              clientConfig: {service: {namespace: webhooks, name: vall}}
              rules: [{operations: ["*"], apiGroups: ["*"], apiVersions: ["*"], resources: ["*/*"]}]
              failurePolicy: Ignore
              sideEffects: None
              admissionReviewVersions: [v1]
      expect: {code: 201, stub: {all: {calls: 0}, vall: {calls: 0}}}
    - name: the second call is allowed, the validating webhook fails open
      request:
        object: {apiVersion: v1, kind: ConfigMap, metadata: {name: b, namespace: demo}}
      expect:
        code: 201
        stub: {all: {calls: 1}, vall: {calls: 0}}
        calls:
          - {webhook: all.example.com, round: 0, index: 0, outcome: Allowed}
          - {webhook: vall.example.com, index: 0, outcome: FailedOpen}
    - name: exec is admitted, then refused for want of a node
      request:
        operation: CONNECT
        resource: {version: v1, resource: pods}
        subresource: exec
        namespace: demo
        name: web
        object:
          {apiVersion: v1, kind: PodExecOptions, container: app, command: [ls, -l], stdout: true}
      expect:
        stub: {all: {calls: 1, lastOperation: CONNECT}, vall: {calls: 0}}
    - name: the third CREATE is denied
      request:
        object: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: demo}}
      expect:
        code: 403
        stub: {all: {calls: 1}, vall: {calls: 0}}
)";

TEST_F(KubeBackendTest, PlaysAndComparesACatchAllScenario) {
  const fs::path file = scratch_ / "catch-all.yaml";
  testing::writeFile(file, kCatchAllScenario);
  auto scenario = sim::loadScenario(file);
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  auto backend = kubeBackend(options_);
  ASSERT_EQ(backend->unsupported(*scenario), std::nullopt);
  sim::RunOptions options;
  options.backend = backend.get();
  options.work_dir = scratch_ / "work";
  sim::RunReport real;
  real.scenarios.push_back(sim::runScenario(*scenario, options));
  const auto& result = real.scenarios.back();
  const std::string table = sim::renderTable(real);
  ASSERT_FALSE(result.error) << table;
  ASSERT_FALSE(result.skip_reason) << table;
  ASSERT_EQ(result.steps.size(), 5u);
  for (const auto& step : result.steps) {
    EXPECT_EQ(step.status, sim::StepStatus::kPassed) << step.name << "\n" << table;
  }
  ASSERT_TRUE(result.steps[3].admission);
  EXPECT_EQ(result.steps[3].admission->code, 400);
  ASSERT_TRUE(result.steps[3].admission->status);
  EXPECT_EQ(result.steps[3].admission->status->message, "pod web does not have a host assigned");

  // The simulator plays it the same, but for what kube-apiserver does after admitting CONNECT
  // (its answer, and so no object: the simulator reports the options).
  sim::RunOptions sim_options;
  sim_options.work_dir = scratch_ / "sim-work";
  sim::RunReport simulated;
  simulated.scenarios.push_back(sim::runScenario(*scenario, sim_options));
  const auto comparison = sim::compareRuns(simulated, real, {});
  const std::string compared = sim::renderComparisonTable(comparison);
  ASSERT_EQ(comparison.scenarios.size(), 1u);
  const auto& steps = comparison.scenarios[0].steps;
  ASSERT_EQ(steps.size(), 5u) << compared;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (i == 3) {
      std::set<std::string> fields;
      for (const auto& difference : steps[i].differences) fields.insert(difference.field);
      EXPECT_EQ(fields, (std::set<std::string>{"code", "message", "object:/", "reason"}))
          << compared;
    } else {
      EXPECT_EQ(steps[i].result, sim::StepComparison::Result::kIdentical)
          << steps[i].name << "\n" << compared;
    }
  }
}

// When the sync request cannot pass a catch-all webhook (here: addressed to nothing the
// scenario serves, failurePolicy Fail), the scenario is skipped with the webhook named.
TEST_F(KubeBackendTest, SkipsACatchAllScenarioTheSyncRequestCannotPass) {
  std::string text = kCatchAllScenario;
  const std::string from = "clientConfig: {service: {namespace: webhooks, name: all}}";
  text.replace(text.find(from), from.size(), "clientConfig: {url: \"https://127.0.0.1:1/\"}");
  const fs::path file = scratch_ / "blocked.yaml";
  testing::writeFile(file, text);
  auto scenario = sim::loadScenario(file);
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  const auto reason = kubeBackend(options_)->unsupported(*scenario);
  ASSERT_TRUE(reason);
  EXPECT_THAT(*reason, HasSubstr("leases reaches catch-all/all.example.com: no endpoint of the "
                                 "scenario serves 127.0.0.1:1"));
}

// A webhook whose rules match everything but whose objectSelector the sync object does not
// satisfy excludes the sync request: nothing is reached, the scenario is played.
TEST_F(KubeBackendTest, AnObjectSelectorExcludesTheSyncRequest) {
  std::string text = kCatchAllScenario;
  const std::string from = "clientConfig: {service: {namespace: webhooks, name: all}}";
  text.replace(text.find(from), from.size(),
               "clientConfig: {url: \"https://127.0.0.1:1/\"}\n"
               "          objectSelector: {matchLabels: {app: web}}");
  const fs::path file = scratch_ / "selected.yaml";
  testing::writeFile(file, text);
  auto scenario = sim::loadScenario(file);
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  EXPECT_EQ(kubeBackend(options_)->unsupported(*scenario), std::nullopt);
}

}  // namespace
}  // namespace harness::kube
