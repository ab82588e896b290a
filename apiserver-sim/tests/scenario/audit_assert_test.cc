// `apiserver-sim audit assert`: the scenario expectation language checked against real
// kube-apiserver audit logs (audit/tests/testdata/kube_*.log, captured from the local control
// plane of kube/ with `apiserver-sim run --backend kube SCENARIO --audit-log`).

#include "harness/sim/audit_assert.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/testing/support.h"

namespace harness::sim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

std::string log(const std::string& name) {
  return (testing::sourceDir() / "audit" / "tests" / "testdata" / name).string();
}

fs::path write(const std::string& name, const std::string& text) {
  const fs::path dir = fs::current_path() / "audit_assert_test.scratch";
  fs::create_directories(dir);
  std::ofstream(dir / name) << text;
  return dir / name;
}

struct CommandRun {
  int status;
  std::string out, err;
};

CommandRun assertLog(const std::string& log_name, const std::string& expectations) {
  const fs::path file = write("expectations.yaml", expectations);
  std::ostringstream out, err;
  const int status = auditAssertCommand({log(log_name)}, file.string(), out, err);
  return {status, out.str(), err.str()};
}

constexpr char kHeader[] =
    "apiVersion: apiserver-sim.harness.dev/v1alpha1\nkind: AuditExpectations\nexpectations:\n";

TEST(AuditAssert, TheRealInjectedPodMeetsTheScenarioExpectations) {
  const CommandRun run = assertLog("kube_seed_tutorial.log", std::string(kHeader) + R"(
  - name: the ReplicaSet's Pod is injected
    match: {verb: create, resource: pods, namespace: simple-app, generateName: simple-app-v1-7b9c6f5d4-}
    count: 1
    expect:
      allowed: true
      code: 201
      object:
        metadata:
          annotations:
            linkerd.io/inject: enabled
            linkerd.io/proxy-version: {$regex: '^edge-'}
        spec:
          initContainers: [{name: linkerd-init}, {name: linkerd-proxy}]
      annotations:
        subset:
          mutation.webhook.admission.k8s.io/round_0_index_0:
            {configuration: linkerd-proxy-injector-webhook-config,
             webhook: linkerd-proxy-injector.linkerd.io, mutated: true}
  - name: the linkerd namespace's Pod is not injected
    match: {verb: create, resource: pods, namespace: linkerd}
    expect:
      allowed: true
      absent: [/metadata/annotations/linkerd.io~1created-by]
)");
  EXPECT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("PASS the ReplicaSet's Pod is injected (1 request)"));
  EXPECT_THAT(run.out, HasSubstr("2 expectations: 2 passed, 0 failed"));
}

TEST(AuditAssert, FailuresNameTheRequestAndTheField) {
  const CommandRun run = assertLog("kube_denials.log", std::string(kHeader) + R"(
  - name: deny-fail is rejected with 403
    match: {resource: configmaps, name: deny-fail}
    expect: {allowed: false, code: 403, message: {contains: not on my watch}}
  - name: every configmap is admitted
    match: {verb: create, resource: configmaps}
    expect: {allowed: true}
  - name: nothing in kube-system
    match: {namespace: kube-system}
    expect: {allowed: true}
)");
  EXPECT_EQ(run.status, 1);
  EXPECT_THAT(run.out, HasSubstr("PASS deny-fail is rejected with 403 (1 request)"));
  EXPECT_THAT(run.out, HasSubstr("FAIL every configmap is admitted: "));
  EXPECT_THAT(run.out, HasSubstr("kube_denials.log line 2: create configmaps "));
  EXPECT_THAT(run.out, HasSubstr("allowed: expected the request to be allowed, got 403"));
  EXPECT_THAT(run.out, HasSubstr("FAIL nothing in kube-system: no request of the log matches"));
  EXPECT_THAT(run.out, HasSubstr("3 expectations: 1 passed, 2 failed"));
}

TEST(AuditAssert, FieldsALogCannotShowAreRefused) {
  const CommandRun run = assertLog("kube_denials.log", std::string(kHeader) + R"(
  - name: calls
    match: {resource: configmaps}
    expect: {calls: []}
)");
  EXPECT_EQ(run.status, 2);
  EXPECT_THAT(run.err, HasSubstr("expectations[0].expect.calls: not recorded in an audit log"));
}

}  // namespace
}  // namespace harness::sim
