// kube-local: the real control plane (harness::kube::ControlPlane) on 127.0.0.1 from the command
// line. A thin shell over the library.
//
//   kube-local up [--work-dir DIR] [--kubeconfig-out FILE] [--apiserver-port N] [--etcd-port N]
//                 [--audit-policy FILE] [--enable-admission-plugins A,B] [...]
//       starts etcd, kube-apiserver and kube-controller-manager, prints the server and the
//       kubeconfig, and runs until SIGINT/SIGTERM (or `kube-local down DIR`); then stops them
//       and removes the work directory (and --kubeconfig-out). When a component exits on its
//       own, prints the end of its log, stops the others and exits 1.
//   kube-local down DIR
//       stops the `kube-local up` whose work directory is DIR.
//
// Exit status: 0 stopped on request, 1 a component failed (at start or later), 2 bad input
// (including binaries that are not built and ports in use).

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/kube/control_plane.h"
#include "harness/net/certificates.h"

namespace {

namespace fs = std::filesystem;
namespace kube = harness::kube;

constexpr int kExitFailed = 1;
constexpr int kExitBadInput = 2;

struct UpArgs {
  std::string work_dir;
  std::string kubeconfig_out;
  std::string bin_dir;
  std::string audit_policy;
  std::string admission_config;
  std::vector<std::string> enable_plugins;
  std::vector<std::string> disable_plugins;
  std::vector<std::string> apiserver_args;
  std::vector<std::string> controllers;
  int apiserver_port = 0;
  int etcd_port = 0;
  int ready_timeout = 300;
  bool no_controller_manager = false;
  bool keep = false;
  bool connect_proxy = false;
};

// Input errors exit 2: a binary that is not built (kNotFound), a port in use or a work directory
// that is not empty (kFailedPrecondition), an unreadable policy or configuration file
// (kInvalid). A component that fails exits 1.
bool isBadInput(const harness::core::Error& error) {
  using harness::core::ErrorCode;
  return error.code == ErrorCode::kNotFound || error.code == ErrorCode::kFailedPrecondition ||
         error.code == ErrorCode::kInvalid;
}

int up(const UpArgs& args) {
  // Before any thread exists, so that a signal at any time is kept for sigtimedwait below; the
  // children start with an empty mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  kube::ControlPlaneOptions options;
  if (!args.bin_dir.empty()) options.binaries = kube::Binaries::inDir(args.bin_dir);
  options.work_dir = args.work_dir;
  options.keep_work_dir = args.keep;
  options.apiserver_port = static_cast<std::uint16_t>(args.apiserver_port);
  options.etcd_port = static_cast<std::uint16_t>(args.etcd_port);
  options.audit_policy_file = args.audit_policy;
  options.admission_config_file = args.admission_config;
  if (!args.enable_plugins.empty()) options.enable_admission_plugins = args.enable_plugins;
  options.disable_admission_plugins = args.disable_plugins;
  options.extra_apiserver_args = args.apiserver_args;
  if (!args.controllers.empty()) options.controllers = args.controllers;
  options.controller_manager = !args.no_controller_manager;
  options.connect_proxy = args.connect_proxy;
  options.ready_timeout = std::chrono::seconds(args.ready_timeout);

  std::cerr << "kube-local: starting etcd, kube-apiserver"
            << (options.controller_manager ? " and kube-controller-manager" : "") << "\n";
  auto plane = kube::ControlPlane::start(std::move(options));
  if (!plane) {
    std::cerr << "kube-local: " << plane.error().message << "\n";
    return isBadInput(plane.error()) ? kExitBadInput : kExitFailed;
  }
  auto& cp = **plane;
  const fs::path pid_file = cp.workDir() / "kube-local.pid";
  if (auto r = harness::net::writeFileAtomically(pid_file, std::to_string(::getpid()) + "\n", 0644);
      !r) {
    std::cerr << "kube-local: " << r.error().message << "\n";
    return kExitFailed;
  }
  fs::path kubeconfig = cp.kubeconfig();
  if (!args.kubeconfig_out.empty()) {
    std::error_code ec;
    fs::copy_file(cp.kubeconfig(), args.kubeconfig_out, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      std::cerr << "kube-local: cannot write " << args.kubeconfig_out << ": " << ec.message()
                << "\n";
      return kExitBadInput;
    }
    fs::permissions(args.kubeconfig_out, fs::perms::owner_read | fs::perms::owner_write,
                    fs::perm_options::replace, ec);
    kubeconfig = fs::absolute(args.kubeconfig_out);
  }
  std::cout << fmt::format(
      "kube-local: ready in {:.1f}s: {} (etcd 127.0.0.1:{}, work directory {})\n"
      "  export KUBECONFIG={}\n"
      "  {} get ns\n"
      "  audit log: {}\n"
      "  stop: Ctrl-C, or kube-local down {}\n",
      cp.startupSeconds(), cp.serverUrl(), cp.etcdPort(), cp.workDir().string(),
      kubeconfig.string(), cp.binaries().kubectl.string(), cp.auditLog().string(),
      cp.workDir().string());
  std::cout.flush();

  int status = 0;
  const timespec period{0, 500'000'000};
  while (true) {
    const int signal = ::sigtimedwait(&signals, nullptr, &period);
    if (signal == SIGINT || signal == SIGTERM) {
      std::cerr << "kube-local: stopping\n";
      break;
    }
    if (auto r = cp.check(); !r) {
      std::cerr << "kube-local: " << r.error().message << "\n";
      status = kExitFailed;
      break;
    }
  }
  cp.stop();
  if (!args.kubeconfig_out.empty()) {
    std::error_code ec;
    fs::remove(args.kubeconfig_out, ec);  // its credentials died with the cluster
  }
  return status;
}

int down(const std::string& dir) {
  const fs::path pid_file = fs::path(dir) / "kube-local.pid";
  std::ifstream in(pid_file);
  long pid = 0;
  if (!(in >> pid) || pid <= 1) {
    std::cerr << "kube-local: " << pid_file.string()
              << ": no kube-local up runs with this work directory\n";
    return kExitBadInput;
  }
  if (::kill(static_cast<pid_t>(pid), SIGTERM) != 0) {
    std::cerr << "kube-local: process " << pid << ": " << std::strerror(errno) << "\n";
    return kExitBadInput;
  }
  // `up` removes the work directory once every component has stopped.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (::kill(static_cast<pid_t>(pid), 0) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      std::cerr << "kube-local: process " << pid << " did not stop within 120s\n";
      return kExitFailed;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::cerr << "kube-local: stopped\n";
  return 0;
}

}  // namespace

namespace {

int run(int argc, char** argv) {
  CLI::App app{"The real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager) "
               "on 127.0.0.1, built by scripts/build-kube.sh"};
  app.require_subcommand(1);
  UpArgs up_args;
  auto* up_cmd = app.add_subcommand("up", "Start the control plane and run until SIGINT/SIGTERM");
  up_cmd->add_option("--work-dir", up_args.work_dir,
                     "Certificates, configuration, etcd data, logs (default: a new temporary "
                     "directory); removed at the end unless --keep");
  up_cmd->add_flag("--keep", up_args.keep, "Keep the work directory at the end");
  up_cmd->add_option("--kubeconfig-out", up_args.kubeconfig_out,
                     "Also write the administrator's kubeconfig here (removed at the end)");
  up_cmd->add_option("--bin-dir", up_args.bin_dir,
                     "Where the binaries are (default: $HARNESS_KUBE_BIN_DIR or build/kube/bin)");
  up_cmd->add_option("--apiserver-port", up_args.apiserver_port,
                     "kube-apiserver's port on 127.0.0.1 (default: a free one)")
      ->check(CLI::Range(0, 65535));
  up_cmd->add_option("--etcd-port", up_args.etcd_port, "etcd's client port (default: a free one)")
      ->check(CLI::Range(0, 65535));
  up_cmd->add_option("--audit-policy", up_args.audit_policy,
                     "Audit policy (default: scenarios/seed-tutorial/audit-policy.yaml)");
  up_cmd->add_option("--admission-config", up_args.admission_config,
                     "AdmissionConfiguration file (default: one giving the webhook plugins an "
                     "empty kubeConfigFile)");
  up_cmd->add_option("--enable-admission-plugins", up_args.enable_plugins,
                     "Default: NodeRestriction, as k3s (on top of kube-apiserver's defaults)")
      ->delimiter(',');
  up_cmd->add_option("--disable-admission-plugins", up_args.disable_plugins)->delimiter(',');
  up_cmd->add_option("--apiserver-arg", up_args.apiserver_args,
                     "Extra kube-apiserver argument (repeatable), e.g. --feature-gates=...");
  up_cmd->add_option("--controllers", up_args.controllers,
                     "kube-controller-manager --controllers (default: namespace, serviceaccount, "
                     "serviceaccount-token, deployment, replicaset, job, cronjob, "
                     "garbage-collector)")
      ->delimiter(',');
  up_cmd->add_flag("--no-controller-manager", up_args.no_controller_manager);
  up_cmd->add_flag("--connect-proxy", up_args.connect_proxy,
                   "Route webhook calls by service through an HTTP CONNECT proxy (the egress "
                   "selector's cluster selection; see kube/README.md)");
  up_cmd->add_option("--ready-timeout", up_args.ready_timeout, "Seconds to wait for readiness")
      ->check(CLI::PositiveNumber);
  std::string down_dir;
  auto* down_cmd = app.add_subcommand("down", "Stop the kube-local up running in a work directory");
  down_cmd->add_option("DIR", down_dir, "Its work directory")->required();
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : kExitBadInput;
  }
  if (*up_cmd) return up(up_args);
  return down(down_dir);
}

}  // namespace

// An exception nothing below caught (out of memory, a broken invariant) ends the program with one
// line and status 2 instead of std::terminate's abort.
int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "kube-local: " << e.what() << "\n";
  } catch (...) {
    std::cerr << "kube-local: an unknown exception\n";
  }
  return 2;
}
