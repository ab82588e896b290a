// The injector executable as a shell sees it: termination signals and exit statuses. Every
// command exits 0 on success, 1 when `inject` finds an object the webhook would deny, 2 on bad
// input (usage errors, unreadable or malformed files) and, for `serve`, when it cannot start.

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness/testing/support.h"
#include "../istio/upstream_support.h"
#include "served_injector.h"

namespace harness::injector {
namespace {

namespace fs = std::filesystem;
namespace t = harness::testing;

struct Outcome {
  int status = -1;
  std::string out, err;
};

// Runs the injector with `arguments` (shell words) and `stdin_file` as stdin.
Outcome runInjector(const t::ScratchDir& dir, const std::string& arguments,
                    const std::string& stdin_file = "/dev/null") {
  const fs::path out = dir / "stdout.txt";
  const fs::path err = dir / "stderr.txt";
  const std::string command = std::string(HARNESS_INJECTOR_BINARY) + " " + arguments + " <" +
                              stdin_file + " >" + out.string() + " 2>" + err.string();
  const int raw = std::system(command.c_str());
  Outcome outcome;
  outcome.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  outcome.out = t::readFile(out);
  outcome.err = t::readFile(err);
  return outcome;
}

std::string seed(const std::string& file) {
  return (t::sourceDir() / "scenarios/seed-tutorial" / file).string();
}

// `inject` reading a FIFO that a writer holds open without writing: it waits in read(), as on a
// terminal or an open pipe, and a termination signal must end it (only `serve` takes them).
void expectInjectEndsOn(int signal) {
  t::ScratchDir dir("cli-signal");
  const fs::path fifo = dir / "input";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0) << std::strerror(errno);
  t::ChildProcess injector({HARNESS_INJECTOR_BINARY, "inject", fifo.string()},
                           dir / "injector.log");
  // A non-blocking open for writing succeeds once the injector has the FIFO open for reading,
  // that is once it is past its start-up and waiting for input.
  int writer = -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (writer < 0 && std::chrono::steady_clock::now() < deadline && injector.running()) {
    writer = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
    if (writer < 0) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  ASSERT_GE(writer, 0) << "the injector never opened its input: "
                       << t::readFile(dir / "injector.log");
  EXPECT_EQ(injector.stop(signal, 30'000), 128 + signal)
      << "signal " << signal << " did not end `injector inject`";
  ::close(writer);
}

TEST(InjectorCli, InjectEndsOnSigint) { expectInjectEndsOn(SIGINT); }

TEST(InjectorCli, InjectEndsOnSigterm) { expectInjectEndsOn(SIGTERM); }

TEST(InjectorCli, InjectExitStatuses) {
  t::ScratchDir dir("cli-inject");
  EXPECT_EQ(runInjector(dir, "inject " + seed("application.yaml")).status, 0);
  t::writeFile(dir / "deny.yaml",
               "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
               "    linkerd.io/inject: enabled\n"
               "    config.linkerd.io/proxy-log-http-headers: bogus\n"
               "spec:\n  containers:\n  - name: c\n    image: x\n");
  const auto denied = runInjector(dir, "inject " + (dir / "deny.yaml").string());
  EXPECT_EQ(denied.status, 1) << denied.err;
  EXPECT_EQ(runInjector(dir, "inject -", (dir / "deny.yaml").string()).status, 1);
  const auto missing = runInjector(dir, "inject " + (dir / "missing.yaml").string());
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.err.find("cannot read " + (dir / "missing.yaml").string()),
            std::string::npos)
      << missing.err;
  t::writeFile(dir / "bad.yaml", "kind: Pod\nmetadata: [unclosed\n");
  EXPECT_EQ(runInjector(dir, "inject " + (dir / "bad.yaml").string()).status, 2);
}

// istioctl kube-inject's command line works as it is: -f and its three configuration flags.
TEST(InjectorCli, InjectTakesKubeInjectsFlags) {
  HARNESS_ISTIO_TREE_OR_SKIP(up, istio::upstream::kIstio131Dev);
  t::ScratchDir dir("cli-kube-inject");
  const std::string cm = (up.charts / "istio-sidecar-injector.yaml").string();
  const auto got = runInjector(
      dir, "inject --profile istio --istio-native-sidecars --injectConfigFile " + cm +
               " --valuesFile " + cm + " --meshConfigFile " + (up.charts / "istio.yaml").string() +
               " -f " + (up.inject / "list-frontend.yaml").string());
  EXPECT_EQ(got.status, 0) << got.err;
  EXPECT_EQ(got.out, t::readFile(up.inject / "list-frontend.yaml.injected"));
}

TEST(InjectorCli, UsageErrorsAreExit2ForEveryCommand) {
  t::ScratchDir dir("cli-usage");
  const std::vector<std::string> usage_errors = {
      "",
      "frobnicate",
      "--no-such-flag inject",
      "inject --no-such-flag",
      "inject -o xml " + seed("application.yaml"),
      "inject --profile nope",
      "review --operation PATCH " + seed("application.yaml"),
      "review --no-such-flag",
      "serve",
      "serve --tls-cert a.crt",
      "serve --port not-a-number"};
  for (const auto& arguments : usage_errors) {
    const auto outcome = runInjector(dir, arguments);
    EXPECT_EQ(outcome.status, 2) << "injector " << arguments << "\n" << outcome.err;
  }
  for (const std::string arguments : {"--help", "inject --help", "--version"}) {
    EXPECT_EQ(runInjector(dir, arguments).status, 0) << "injector " << arguments;
  }
  EXPECT_NE(runInjector(dir, "inject --help").out.find("Exit status: 0 every object processed"),
            std::string::npos);
}

TEST(InjectorCli, ReviewExitStatuses) {
  t::ScratchDir dir("cli-review");
  t::writeFile(dir / "pod.yaml",
               "apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: demo}\n"
               "spec: {containers: [{name: c, image: x}]}\n");
  EXPECT_EQ(runInjector(dir, "review " + (dir / "pod.yaml").string()).status, 0);
  EXPECT_EQ(runInjector(dir, "review " + (dir / "missing.yaml").string()).status, 2);
  t::writeFile(dir / "bad.yaml", "kind: Pod\nmetadata: [unclosed\n");
  EXPECT_EQ(runInjector(dir, "review " + (dir / "bad.yaml").string()).status, 2);
}

// A server that cannot start (here: its port is taken by another) is bad input, not a denial.
TEST(InjectorCli, ServeThatCannotStartIsExit2) {
  t::ScratchDir dir("cli-serve");
  t::generateCertificates(dir / "webhook");
  const std::string cert = (dir / "webhook" / "tls.crt").string();
  const std::string key = (dir / "webhook" / "tls.key").string();
  tests::ServedInjector first;
  ASSERT_NO_FATAL_FAILURE(first.start(
      dir.path(), {HARNESS_INJECTOR_BINARY, "serve", "--profile", "istio", "--address",
                   "127.0.0.1", "--port", "0", "--admin-port", "-1", "--tls-cert", cert,
                   "--tls-key", key}));
  const auto second = runInjector(
      dir, "serve --profile istio --address 127.0.0.1 --admin-port -1 --tls-cert " + cert +
               " --tls-key " + key + " --port " + std::to_string(first.webhookPort()));
  EXPECT_EQ(second.status, 2) << second.err;
  first.stop();
  EXPECT_EQ(runInjector(dir, "serve --profile istio --tls-cert " + (dir / "none.crt").string() +
                                 " --tls-key " + key)
                .status,
            2);
}

}  // namespace
}  // namespace harness::injector
