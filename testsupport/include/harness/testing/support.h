#pragma once

// Helpers for tests: scratch directories under the build tree, certificates made with
// scripts/gen-certs.sh, file I/O.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace harness::testing {

// The repository root (HARNESS_SOURCE_DIR, set by CTest) and the build root.
std::filesystem::path sourceDir();
std::filesystem::path binaryDir();

// A fresh directory under the current working directory (the test's build folder), removed
// when the object goes out of scope.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& prefix = "scratch");
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }
  [[nodiscard]] std::filesystem::path operator/(const std::string& name) const {
    return path_ / name;
  }

 private:
  std::filesystem::path path_;
};

struct CertificateRequest {
  std::vector<std::string> dns_names = {"localhost"};
  std::vector<std::string> ip_addresses = {"127.0.0.1"};
  std::string common_name;
  // Sign with this existing CA instead of creating one in the output directory.
  std::string ca_cert_file;
  std::string ca_key_file;
  bool client = false;
};

// Runs scripts/gen-certs.sh into `dir` (ca.crt, ca.key unless a CA is given, tls.crt, tls.key).
// Throws std::runtime_error when the script fails.
void generateCertificates(const std::filesystem::path& dir, const CertificateRequest& request = {});

std::string readFile(const std::filesystem::path& path);
void writeFile(const std::filesystem::path& path, const std::string& content);

// Runs a shell command, returns its exit status; output goes to the test log.
int runCommand(const std::string& command);

// The threads of process `pid` (its entries in /proc/<pid>/task); 0: this process.
std::size_t threadCount(int pid = 0);

struct CommandOutput {
  int status = -1;  // the exit code, 128 + signal when killed, -1 when it could not run
  std::string out;
  std::string err;
};
// Runs `argv` (no shell interpretation of the arguments) with `env` ("NAME=value") added to the
// environment, and captures its stdout and stderr.
CommandOutput runCapture(const std::vector<std::string>& argv,
                         const std::vector<std::string>& env = {});

// A child process started with execv (no shell); stdout/stderr go to `log_file` when given.
// The destructor sends SIGKILL if it is still running, so no test leaves a process behind.
class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::filesystem::path& log_file = {});
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  [[nodiscard]] int pid() const { return pid_; }
  [[nodiscard]] bool running();
  // Sends `signal` and waits up to `timeout_ms`; returns the exit status (128+signal when killed
  // by a signal), or -1 on timeout.
  int stop(int signal, int timeout_ms = 10000);
  // Waits for exit up to `timeout_ms`; -1 on timeout.
  int wait(int timeout_ms);

 private:
  int pid_ = -1;
  int status_ = -1;
};

// The kubectl tests drive: $HARNESS_KUBECTL, else process::kubeBinDir()/kubectl (never one from
// PATH, whose version is unknown).
std::filesystem::path kubectlPath();
// Empty when `binary` is an executable file; otherwise the one-line reason a test skips, naming
// the command that builds it.
std::string notBuiltReason(const std::filesystem::path& binary);

// A TCP socket listening on a free 127.0.0.1 port (backlog 16, never accepting by itself) until
// destroyed: a port in use, or a peer that never answers.
class ListeningSocket {
 public:
  ListeningSocket();  // throws std::runtime_error when it cannot listen
  ~ListeningSocket();
  ListeningSocket(const ListeningSocket&) = delete;
  ListeningSocket& operator=(const ListeningSocket&) = delete;
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] std::uint16_t port() const { return port_; }

 private:
  int fd_ = -1;
  std::uint16_t port_ = 0;
};

// The Namespace "demo" and the Pod "web" in it (one container "app", image nginx:1.27, label
// app=web) that the kubectl tests apply, as YAML.
inline constexpr const char* kDemoNamespaceYaml = R"(apiVersion: v1
kind: Namespace
metadata:
  name: demo
)";
inline constexpr const char* kDemoPodYaml = R"(apiVersion: v1
kind: Pod
metadata:
  name: web
  namespace: demo
  labels:
    app: web
spec:
  containers:
  - name: app
    image: nginx:1.27
)";

// Polls until `path` exists and is non-empty (e.g. a ports file), up to `timeout_ms`.
bool waitForFile(const std::filesystem::path& path, int timeout_ms);
// Polls until the file at `path` contains `text` (the output of a process still running, e.g.
// `kubectl get -w`), up to `timeout_ms`; its content then, or nullopt on timeout.
std::optional<std::string> waitForText(const std::filesystem::path& path, const std::string& text,
                                       int timeout_ms);

}  // namespace harness::testing
