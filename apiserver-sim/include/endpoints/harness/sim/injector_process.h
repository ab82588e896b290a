#pragma once

// The real `injector` binary as a webhook endpoint of a scenario: started as a child process
// with a certificate freshly issued by the scenario CA, listening on 127.0.0.1 (any free port),
// called over HTTPS exactly as kube-apiserver calls it, and stopped with SIGTERM like a pod.
//
// Scenario format (YAML converted to JSON, then parseInjectorSpec):
//
//   injector:
//     profile: linkerd          # linkerd, istio, "linkerd,istio" or a list; default linkerd
//     args: ["--linkerd-namespace", "linkerd"]   # extra `injector serve` arguments
//     logLevel: debug           # injector --log-level (default: the injector's own)
//     values: path              # --values         (file paths are relative to the scenario
//     trustAnchors: path        # --trust-anchors   file's directory, the `base_dir` given to
//     istioConfig: path         # --istio-config    parseInjectorSpec)
//     istioValues: path         # --istio-values
//     istioMesh: path           # --istio-mesh

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/net/certificates.h"
#include "harness/process/child_process.h"

namespace harness::sim {

struct InjectorSpec {
  std::vector<std::string> profiles = {"linkerd"};
  std::vector<std::string> args;
  std::optional<std::string> log_level;
  // Absolute (resolved against the base dir), or empty when not given.
  std::filesystem::path values, trust_anchors, istio_config, istio_values, istio_mesh;
};

// Parses the `injector` object. Unknown fields are errors; every error names the field path
// below `path` (e.g. `injector.profile: Unsupported value: "envoy": supported values: ...`,
// `injector.values: cannot read "/abs/values.yaml": No such file or directory`). Relative file
// paths are resolved against `base_dir` and must name readable files.
core::Result<InjectorSpec> parseInjectorSpec(const nlohmann::json& json,
                                             const std::filesystem::path& base_dir,
                                             std::string_view path = "injector");

// Finds the injector executable, in this order: `explicit_path` when not empty (it must be
// executable; no fallback), $HARNESS_INJECTOR_BINARY when set (likewise), then next to the running
// program (<dir of /proc/self/exe>/../injector/injector, <dir>/injector: the build tree layout),
// then $PATH. The error lists every place tried.
core::Result<std::filesystem::path> findInjectorBinary(
    const std::filesystem::path& explicit_path = {});

struct InjectorLaunchOptions {
  std::filesystem::path binary;  // empty: findInjectorBinary()
  // The Kubernetes API the injector reads namespaces and owners from: a kubeconfig (the
  // simulator's REST API) or, when none is given, object files (YAML/JSON) served locally.
  // Giving both is an error.
  std::filesystem::path kubeconfig;
  std::vector<std::filesystem::path> object_files;
  std::chrono::milliseconds startup_timeout{30'000};
  std::chrono::milliseconds stop_timeout{5'000};  // SIGTERM, then SIGKILL after this
};

class InjectorProcess {
 public:
  // Issues a serving certificate from `ca` (SANs 127.0.0.1, localhost, `extra_dns_names`),
  // writes it, the ports file and the log under `scratch_dir`/injector-<name>/, starts
  // `injector serve --address 127.0.0.1 --port 0 --admin-port 0 --ports-file ...` and waits for
  // the ports file. Errors (binary not found, early exit, timeout) carry the tail of the log.
  //
  // The child gets SIGKILL if the thread that started it exits (PR_SET_PDEATHSIG), so that a
  // crashed test or simulator never leaves an injector behind: start it from a thread that
  // outlives it (the main thread, or the thread that also stops it).
  static core::Result<std::unique_ptr<InjectorProcess>> start(
      std::string name, InjectorSpec spec, const net::CertificateAuthority& ca,
      const std::filesystem::path& scratch_dir, std::vector<std::string> extra_dns_names,
      InjectorLaunchOptions options = {});

  ~InjectorProcess();  // stop()
  InjectorProcess(const InjectorProcess&) = delete;
  InjectorProcess& operator=(const InjectorProcess&) = delete;

  [[nodiscard]] const std::string& name() const { return name_; }
  // https://127.0.0.1:<port>/ (the first profile also answers on "/"; Linkerd on
  // /inject/linkerd, Istio on /inject).
  [[nodiscard]] std::string url() const;
  [[nodiscard]] std::uint16_t port() const { return port_; }
  [[nodiscard]] std::uint16_t adminPort() const { return admin_port_; }  // plain HTTP
  [[nodiscard]] pid_t pid() const { return child_->pid(); }
  [[nodiscard]] const std::vector<std::string>& commandLine() const {
    return child_->commandLine();
  }
  [[nodiscard]] const std::filesystem::path& logFile() const { return child_->logFile(); }
  // The last `max_lines` lines of the injector's log.
  [[nodiscard]] std::string logTail(std::size_t max_lines = 20) const;

  // Whether the process is still running (reaps it when it has exited).
  bool running();
  // SIGTERM, wait up to stop_timeout, then SIGKILL. Returns the exit status (the exit code, or
  // 128 + signal number when killed). Idempotent: later calls return the same status.
  int stop();

 private:
  InjectorProcess() = default;

  std::string name_;
  std::chrono::milliseconds stop_timeout_{5'000};
  std::uint16_t port_ = 0;
  std::uint16_t admin_port_ = 0;
  std::unique_ptr<process::ChildProcess> child_;
};

}  // namespace harness::sim
