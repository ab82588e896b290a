// `apiserver-sim audit assert`: the scenario expectation language checked against real
// kube-apiserver audit logs (audit/tests/testdata/kube_*.log, captured from the local control
// plane of kube/ with `apiserver-sim run --backend kube SCENARIO --audit-log`).

#include "harness/sim/audit_assert.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

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
  // One folder per test: CTest runs the tests of this binary in parallel processes.
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path dir = fs::current_path() / "audit_assert_test.scratch" /
                       (std::string(test->test_suite_name()) + "." + test->name());
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


// The webhook backend's batches (`audit sink`'s input, saved as one line each) and rotated files
// named as lumberjack names them, given newest first: read as the plain log is.
TEST(AuditAssert, EventListLinesAndRotatedFiles) {
  std::istringstream lines(testing::readFile(log("kube_denials.log")));
  std::vector<std::string> events;
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) events.push_back(line);
  }
  ASSERT_GT(events.size(), 4u);
  auto batch = [&](std::size_t from, std::size_t to) {
    std::string items;
    for (std::size_t i = from; i < to; ++i) items += (i == from ? "" : ",") + events[i];
    return R"({"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[)" +
           items + "]}\n";
  };
  const std::size_t half = events.size() / 2;
  const fs::path older = write("audit-2026-11-26T10-00-00.000.log", batch(0, half));
  std::string rest;
  for (std::size_t i = half; i < events.size(); ++i) rest += events[i] + "\n";
  const fs::path current = write("audit.log", rest);
  const fs::path file = write("expectations.yaml", std::string(kHeader) + R"(
  - name: deny-fail is rejected with 403
    match: {resource: configmaps, name: deny-fail}
    count: 1
    expect: {allowed: false, code: 403, message: {contains: not on my watch}}
  - name: every configmap is admitted
    match: {verb: create, resource: configmaps}
    expect: {allowed: true}
)");
  std::ostringstream out, err, plain_out, plain_err;
  const int status =
      auditAssertCommand({current.string(), older.string()}, file.string(), out, err);
  const int plain_status =
      auditAssertCommand({log("kube_denials.log")}, file.string(), plain_out, plain_err);
  EXPECT_EQ(status, 1) << out.str() << err.str();
  EXPECT_EQ(plain_status, 1) << plain_out.str() << plain_err.str();
  EXPECT_EQ(err.str(), "");
  EXPECT_THAT(out.str(), HasSubstr("PASS deny-fail is rejected with 403 (1 request)"));
  // The same failures, in log order: the batch's events first.
  auto failures = [](const std::string& text) {
    std::vector<std::string> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("FAIL every configmap", 0) != 0) continue;
      // Without the file and line: "... <file> line N: create configmaps ns/name ...".
      out.push_back(line.substr(line.find(": create ")));
    }
    return out;
  };
  EXPECT_FALSE(failures(plain_out.str()).empty());
  EXPECT_EQ(failures(out.str()), failures(plain_out.str()));
  EXPECT_THAT(out.str(), HasSubstr("audit-2026-11-26T10-00-00.000.log line 1: create "));
}


// Events no expectation selects are skipped unbuilt (peeked at): the result is the one of
// parsing every event whole, on every real log.
TEST(AuditAssert, PeekingGivesWhatParsingEveryEventGives) {
  const fs::path file = write("peek.yaml", std::string(kHeader) + R"(
  - name: pods are admitted
    match: {verb: create, resource: pods}
    expect: {allowed: true, code: 201}
  - name: configmaps in failure-policy
    match: {resource: configmaps, namespace: failure-policy}
    expect: {allowed: true}
  - name: the ReplicaSet's pods
    match: {generateName: simple-app-v1-7b9c6f5d4-}
    expect:
      annotations:
        subset:
          mutation.webhook.admission.k8s.io/round_0_index_0: '{"configuration":"linkerd-proxy-injector-webhook-config","webhook":"linkerd-proxy-injector.linkerd.io","mutated":true}'
  - name: by the replicaset controller
    match: {user: "system:serviceaccount:kube-system:replicaset-controller"}
    expect: {allowed: true}
  - name: deployments.apps
    match: {resource: deployments.apps}
    expect: {allowed: true}
)");
  for (const char* name :
       {"kube_seed_tutorial.log", "kube_denials.log", "kube_transport_errors.log",
        "kube_failed_open_index.log", "k3d_linkerd_pod_create.log", "sim_seed_tutorial.log"}) {
    std::ostringstream fast_out, fast_err, whole_out, whole_err;
    const int fast = auditAssertCommand({log(name)}, file.string(), fast_out, fast_err);
    const int whole =
        auditAssertCommand({log(name)}, file.string(), whole_out, whole_err, /*full_parse=*/true);
    EXPECT_EQ(fast, whole) << name;
    EXPECT_EQ(fast_out.str(), whole_out.str()) << name;
    EXPECT_EQ(fast_err.str(), whole_err.str()) << name;
  }
  // The seed tutorial's logs hold Pod creates: the fast path finds them (the other logs need not
  // hold what these expectations select; the parity above is what they check).
  for (const char* name : {"kube_seed_tutorial.log", "sim_seed_tutorial.log"}) {
    std::ostringstream out, err;
    auditAssertCommand({log(name)}, file.string(), out, err);
    EXPECT_THAT(out.str(), HasSubstr("PASS pods are admitted")) << name << "\n" << out.str();
  }
}

}  // namespace
}  // namespace harness::sim
