// `apiserver-sim audit sink` as the audit webhook backend of the real kube-apiserver (CTest label
// `real`): kube-apiserver started with --audit-webhook-config-file naming the sink (a kubeconfig,
// k8s.io/apiserver plugin/pkg/audit/webhook) posts its batches there, and the sink's log holds
// the same events as kube-apiserver's own log backend writes. Skipped, with one line, when the
// real binaries are not built.

#include <csignal>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "harness/audit/chain.h"
#include "harness/audit/event.h"
#include "harness/audit/log.h"
#include "harness/kube/control_plane.h"
#include "harness/process/kube_bin_dir.h"
#include "harness/testing/support.h"

namespace harness::kube {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

// The ResponseComplete event of `verb` on the configmap `name` in `log`, or nullopt.
std::optional<audit::Event> findEvent(const fs::path& log, const std::string& verb,
                                      const std::string& name) {
  std::ifstream in(log, std::ios::binary);
  for (std::string line; std::getline(in, line);) {
    auto event = audit::parseLogLine(line);
    if (!event.ok()) continue;  // a line being written
    if (event->stage == audit::Stage::kResponseComplete && event->verb == verb &&
        event->object_ref && event->object_ref->resource == "configmaps" &&
        event->object_ref->name == name) {
      return std::move(*event);
    }
  }
  return std::nullopt;
}

TEST(AuditSinkReal, KubeApiserversWebhookBackendWritesTheSameEventsAsItsLogBackend) {
  const Binaries binaries = Binaries::inDir(process::kubeBinDir());
  if (auto r = binaries.check(); !r) GTEST_SKIP() << r.error().message;
  testing::ScratchDir dir{"audit-sink-real"};
  testing::generateCertificates(dir.path());
  testing::CertificateRequest client;
  client.common_name = "kube-apiserver-audit";
  client.client = true;
  client.ca_cert_file = (dir / "ca.crt").string();
  client.ca_key_file = (dir / "ca.key").string();
  fs::create_directories(dir / "client");
  testing::generateCertificates(dir / "client", client);

  const fs::path sink_log = dir / "sink.log";
  testing::ChildProcess sink(
      {(testing::binaryDir() / "apiserver-sim/apiserver-sim").string(), "audit", "sink", "--log",
       sink_log.string(), "--port", "0", "--tls-cert", (dir / "tls.crt").string(), "--tls-key",
       (dir / "tls.key").string(), "--client-ca", (dir / "ca.crt").string()},
      dir / "sink.out");
  constexpr std::string_view kAt = "audit sink at https://127.0.0.1:";
  // The child creates sink.out after the fork: absent until then.
  auto sinkOutput = [&dir] {
    return fs::exists(dir / "sink.out") ? testing::readFile(dir / "sink.out") : std::string();
  };
  std::string out;
  for (int i = 0; i < 6000 && (out = sinkOutput()).find(" writing ") ==
                                  std::string::npos;
       ++i) {
    ASSERT_TRUE(sink.running()) << out;
    std::this_thread::sleep_for(20ms);
  }
  const auto at = out.find(kAt);
  ASSERT_NE(at, std::string::npos) << out;
  const std::string port =
      out.substr(at + kAt.size(), out.find(' ', at + kAt.size()) - at - kAt.size());

  // The webhook backend's kubeconfig: the sink's URL, the CA that signed its certificate, the
  // client certificate it requires.
  const fs::path webhook_config = dir / "audit-webhook.kubeconfig";
  testing::writeFile(webhook_config,
                     "apiVersion: v1\nkind: Config\nclusters:\n- name: sink\n  cluster:\n"
                     "    server: https://127.0.0.1:" + port + "/audit\n"
                     "    certificate-authority: " + (dir / "ca.crt").string() + "\n"
                     "users:\n- name: kube-apiserver\n  user:\n"
                     "    client-certificate: " + (dir / "client" / "tls.crt").string() + "\n"
                     "    client-key: " + (dir / "client" / "tls.key").string() + "\n"
                     "contexts:\n- name: sink\n  context: {cluster: sink, user: kube-apiserver}\n"
                     "current-context: sink\n");

  ControlPlaneOptions options;
  options.binaries = binaries;
  options.work_dir = dir / "work";
  options.controller_manager = false;
  options.ready_timeout = 600s;
  // Batches sent after at most a second instead of 30 (the default of
  // --audit-webhook-batch-max-wait), so the test does not wait for them.
  options.extra_apiserver_args = {"--audit-webhook-config-file=" + webhook_config.string(),
                                  "--audit-webhook-batch-max-wait=1s"};
  auto plane = ControlPlane::start(std::move(options));
  ASSERT_TRUE(plane.ok()) << plane.error().message;
  ControlPlane& cp = **plane;

  const auto run = testing::runCapture(
      {binaries.kubectl.string(), "--request-timeout=60s", "create", "configmap", "sunk",
       "-n", "default", "--from-literal=k=v"},
      {"HOME=" + dir.path().string(), "KUBECONFIG=" + cp.kubeconfig().string()});
  ASSERT_EQ(run.status, 0) << run.err;

  // Both backends write the event after the response; awaited (never expected to take long).
  std::optional<audit::Event> sunk, logged;
  for (int i = 0; i < 6000 && (!sunk || !logged); ++i) {
    if (i > 0) std::this_thread::sleep_for(100ms);
    ASSERT_TRUE(cp.check().ok()) << cp.check().error().message;
    ASSERT_TRUE(sink.running()) << sinkOutput();
    if (!sunk) sunk = findEvent(sink_log, "create", "sunk");
    if (!logged) logged = findEvent(cp.auditLog(), "create", "sunk");
  }
  ASSERT_TRUE(sunk.has_value()) << sinkOutput();
  ASSERT_TRUE(logged.has_value());
  // The same event, member for member (the seed tutorial's policy: RequestResponse).
  EXPECT_EQ(audit::toJsonLine(*sunk), audit::toJsonLine(*logged));
  EXPECT_EQ(sunk->level, audit::Level::kRequestResponse);
  EXPECT_TRUE(sunk->request_object.has_value());

  // The audit commands read the sink's log: the write is there with its outcome.
  bool found = false;
  {
    std::ifstream in(sink_log, std::ios::binary);
    audit::ChainReader reader(in, sink_log.string(), /*keep_all=*/true);
    while (auto entry = reader.next([](const std::string& m) { ADD_FAILURE() << m; })) {
      if (entry->chain.name == "sunk" && entry->chain.verb == "create") {
        found = true;
        EXPECT_EQ(entry->chain.outcome.kind, audit::OutcomeKind::kAdmitted);
        EXPECT_EQ(entry->chain.outcome.code, 201);
      }
    }
  }
  EXPECT_TRUE(found);

  cp.stop();
  EXPECT_EQ(sink.stop(SIGTERM, 10'000), 0) << sinkOutput();
}

}  // namespace
}  // namespace harness::kube
