#pragma once

// harness::kube: the real Kubernetes control plane on 127.0.0.1, started from the binaries
// scripts/build-kube.sh builds from the Go modules pinned in kube/go.mod (k8s.io/kubernetes
// v1.37.2): etcd with a fresh data directory, kube-apiserver configured like a k3s server
// (admission plugins, service-account issuer, service CIDR, Node,RBAC) with an audit policy and a
// JSON audit log, and kube-controller-manager with the controllers a sidecar-injection workflow
// needs (namespaces, service accounts and their tokens, Deployments, ReplicaSets, Jobs, CronJobs,
// garbage collection) using per-controller service-account credentials, as on a cluster.
//
// There is no kubelet or scheduler: Pods are admitted and stored but never run.
//
// Every child process and file lives in one work directory; stop() (or the destructor) stops the
// children (SIGTERM, then SIGKILL) and removes it. The children also get SIGKILL when the thread
// that started them exits (harness::process::ChildProcess), so a crashed caller leaves nothing
// running.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/result.h"
#include "harness/kube/connect_proxy.h"
#include "harness/process/child_process.h"

namespace harness::kube {

// The binaries (build/kube/bin: links to one multi-call binary).
struct Binaries {
  std::filesystem::path etcd, kube_apiserver, kube_controller_manager, kubectl;

  // The four binaries in `dir`.
  static Binaries inDir(const std::filesystem::path& dir);
  // $HARNESS_KUBE_BIN_DIR when set, else build/kube/bin in the source tree this was built from.
  static std::filesystem::path defaultDir();
  // An error naming the first binary that is not an executable file and the command that
  // builds it.
  [[nodiscard]] core::Result<void> check() const;
};

// The controllers kube-controller-manager runs by default here (--controllers).
const std::vector<std::string>& defaultControllers();

struct ControlPlaneOptions {
  Binaries binaries = Binaries::inDir(Binaries::defaultDir());
  // Holds certificates, configuration, the etcd data, logs, the audit log and the kubeconfig.
  // Empty: a fresh directory under $TMPDIR (or /tmp). It must not exist yet or be empty; it is
  // removed by stop() unless keep_work_dir.
  std::filesystem::path work_dir;
  bool keep_work_dir = false;

  // 0: a free port on 127.0.0.1. A port given explicitly must be free (checked before start).
  std::uint16_t apiserver_port = 0;
  std::uint16_t etcd_port = 0;

  // The audit policy (audit.k8s.io/v1 Policy); empty: the seed tutorial's,
  // scenarios/seed-tutorial/audit-policy.yaml.
  std::filesystem::path audit_policy_file;
  // --enable-admission-plugins / --disable-admission-plugins. The default is a k3s server's:
  // kube-apiserver's default-on plugins plus NodeRestriction (k3s pkg/daemons/control/server.go).
  std::vector<std::string> enable_admission_plugins = {"NodeRestriction"};
  std::vector<std::string> disable_admission_plugins;
  // An AdmissionConfiguration file; empty: one written into the work directory that gives the
  // webhook plugins a kubeConfigFile (how the apiserver authenticates to webhooks; empty there).
  std::filesystem::path admission_config_file;
  // Start a ConnectProxy and give kube-apiserver an EgressSelectorConfiguration whose `cluster`
  // selection tunnels through it (HTTPConnect over TCP): webhooks referenced by `service` are
  // then dialled through the proxy (see connect_proxy.h); routes are added with
  // connectProxy()->setRoute("<clusterIP>:<port>", <loopback port>).
  bool connect_proxy = false;
  // With connect_proxy: the `controlplane` selection tunnels through the proxy too, so webhooks
  // referenced by `url` (which kube-apiserver dials through that selection,
  // k8s.io/apiserver pkg/util/webhook/authentication.go) reach the loopback ports routed for
  // their `host:port`, without DNS. Nothing else of kube-apiserver's own traffic uses it here.
  bool proxy_url_webhooks = false;
  // Appended to kube-apiserver's command line (e.g. --feature-gates, --runtime-config).
  std::vector<std::string> extra_apiserver_args;

  bool controller_manager = true;
  std::vector<std::string> controllers = defaultControllers();

  // Startup deadline for the whole control plane: generous, a loaded machine is slow to start
  // Go binaries of 100+ MB.
  std::chrono::seconds ready_timeout{300};
};

class ControlPlane {
 public:
  // Checks the binaries and ports, writes certificates and configuration, starts etcd, then
  // kube-apiserver, waits for /readyz, then kube-controller-manager, and waits until the
  // serviceaccount controller has made the default ServiceAccount (so Pods can be created).
  // Errors are one line, e.g. "127.0.0.1:6443 is in use", "kube-apiserver exited (exit status 1)
  // before it was ready; the end of its log (<file>):\n...". Nothing is left running or on disk
  // after an error.
  static core::Result<std::unique_ptr<ControlPlane>> start(ControlPlaneOptions options);

  ~ControlPlane();  // stop()
  ControlPlane(const ControlPlane&) = delete;
  ControlPlane& operator=(const ControlPlane&) = delete;

  // Stops kube-controller-manager, kube-apiserver and etcd (SIGTERM, then SIGKILL after a grace
  // period) and removes the work directory unless keep_work_dir. Idempotent.
  void stop();

  // Empty while every child runs; otherwise an error naming the first one that exited, with the
  // tail of its log.
  [[nodiscard]] core::Result<void> check();

  [[nodiscard]] std::string serverUrl() const;  // https://127.0.0.1:<port>
  [[nodiscard]] std::uint16_t apiserverPort() const { return apiserver_port_; }
  [[nodiscard]] std::uint16_t etcdPort() const { return etcd_port_; }
  // The administrator's kubeconfig (client certificate CN=kube-local-admin, O=system:masters).
  [[nodiscard]] std::filesystem::path kubeconfig() const { return work_dir_ / "kubeconfig"; }
  [[nodiscard]] std::filesystem::path auditLog() const { return work_dir_ / "audit.log"; }
  [[nodiscard]] const std::filesystem::path& workDir() const { return work_dir_; }
  [[nodiscard]] const Binaries& binaries() const { return options_.binaries; }
  // The children, for tests and monitoring (nullptr when not started).
  [[nodiscard]] process::ChildProcess* etcd() { return etcd_.get(); }
  [[nodiscard]] process::ChildProcess* apiserver() { return apiserver_.get(); }
  [[nodiscard]] process::ChildProcess* controllerManager() { return controller_manager_.get(); }
  // The cluster CA (PEM) and the administrator's client certificate and key (PEM), for clients.
  [[nodiscard]] const std::string& caPem() const { return ca_pem_; }
  [[nodiscard]] const std::string& adminCertificatePem() const { return admin_cert_pem_; }
  [[nodiscard]] const std::string& adminKeyPem() const { return admin_key_pem_; }
  // The egress proxy (nullptr unless connect_proxy).
  [[nodiscard]] ConnectProxy* connectProxy() { return proxy_.get(); }
  // Seconds from start() to a ready control plane.
  [[nodiscard]] double startupSeconds() const { return startup_seconds_; }

 private:
  explicit ControlPlane(ControlPlaneOptions options) : options_(std::move(options)) {}
  core::Result<void> prepare();
  core::Result<void> startEtcd();
  core::Result<void> startApiserver();
  core::Result<void> startControllerManager();
  core::Result<void> waitReady(process::ChildProcess& child, const std::string& name,
                               const std::string& path, const std::string& what);

  ControlPlaneOptions options_;
  std::filesystem::path work_dir_;
  bool owns_work_dir_ = false;
  std::uint16_t apiserver_port_ = 0;
  std::uint16_t etcd_port_ = 0;
  std::uint16_t etcd_peer_port_ = 0;
  std::chrono::steady_clock::time_point deadline_;
  std::string ca_pem_, admin_cert_pem_, admin_key_pem_;
  std::unique_ptr<ConnectProxy> proxy_;
  std::unique_ptr<process::ChildProcess> etcd_, apiserver_, controller_manager_;
  double startup_seconds_ = 0;
  bool stopped_ = false;
};

// Whether 127.0.0.1:`port` can be listened on (as Go's net.Listen does: SO_REUSEADDR).
bool loopbackPortFree(std::uint16_t port);
// A port on 127.0.0.1 that was free a moment ago (bound with port 0, then released).
core::Result<std::uint16_t> pickFreeLoopbackPort();

}  // namespace harness::kube
