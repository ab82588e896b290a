// Scenarios played on the real control plane (CTest labels `real`, `integration`): the kube
// backend of the scenario runner against kube-apiserver v1.37.2 built by scripts/build-kube.sh.
// Skipped, with one line, when the binaries are not built. Waits are for conditions, never
// fixed sleeps.

#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/kube/scenario_backend.h"
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
    - name: exec cannot be played
      request:
        operation: CONNECT
        resource: {group: "", version: v1, resource: pods}
        subresource: exec
        name: a
        namespace: demo
        object: {apiVersion: v1, kind: PodExecOptions, command: [ls]}
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
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(result.steps[i].status, sim::StepStatus::kPassed) << table;
  }
  // What was observed came from the real server: its audit ID and its own object fields.
  ASSERT_TRUE(result.steps[0].admission);
  EXPECT_FALSE(result.steps[0].admission->audit_id.empty());
  ASSERT_TRUE(result.steps[0].admission->object);
  EXPECT_TRUE((*result.steps[0].admission->object)["metadata"].contains("uid"));
  // CONNECT is not played: skipped with the reason, never passed.
  EXPECT_EQ(result.steps[3].status, sim::StepStatus::kSkipped);
  EXPECT_THAT(result.steps[3].skip_reason, HasSubstr("CONNECT"));
  EXPECT_THAT(table, HasSubstr("not played on kube: request.operation CONNECT"));
}

}  // namespace
}  // namespace harness::kube
