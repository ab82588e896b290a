// The real control plane on loopback. The command lines follow a k3s server's
// (k3s pkg/daemons/control/server.go: apiServer and controllerManager) where they matter to
// admission; every flag exists in v1.37.2 (checked with --help of the built binaries).

#include "harness/kube/control_plane.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/core/yaml.h"
#include "harness/go/base64.h"
#include "harness/net/certificates.h"
#include "harness/net/client.h"
#include "harness/process/kube_bin_dir.h"

namespace harness::kube {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using nlohmann::json;

namespace {

constexpr const char* kBuildCommand = "bash scripts/build-kube.sh";
constexpr const char* kAdminUser = "kube-local-admin";
// k3s's defaults (pkg/cli/cmds/server.go: --service-cidr 10.43.0.0/16); the first address is the
// `kubernetes` Service's ClusterIP, which the serving certificate names.
constexpr const char* kServiceCidr = "10.43.0.0/16";
constexpr const char* kServiceIp = "10.43.0.1";
constexpr const char* kIssuer = "https://kubernetes.default.svc.cluster.local";

std::string join(const std::vector<std::string>& items, const char* separator = ",") {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) out += separator;
    out += item;
  }
  return out;
}

// A socket bound to 127.0.0.1:port with SO_REUSEADDR, as Go's net.Listen binds; -1 on failure.
int bindLoopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(fd, 1) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

bool acceptsConnections(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool ok = ::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return ok;
}

std::string exitedMessage(process::ChildProcess& child, const std::string& name,
                          const std::string& when) {
  const int status = child.exitStatus().value_or(-1);
  return fmt::format("{} exited ({}){}; the end of its log:\n{}", name,
                     process::describeExitStatus(status), when, child.logTail(20));
}

// A kubeconfig (k8s.io/client-go/tools/clientcmd/api/v1/types.go) for a client-certificate user;
// certificates are embedded so that a copy of the file works anywhere.
std::string kubeconfigYaml(const std::string& server, const std::string& ca_pem,
                           const std::string& cert_pem, const std::string& key_pem) {
  const json config = {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters", json::array({{{"name", "kube-local"},
                                 {"cluster",
                                  {{"server", server},
                                   {"certificate-authority-data", go::base64Encode(ca_pem)}}}}})},
      {"users", json::array({{{"name", "kube-local"},
                              {"user",
                               {{"client-certificate-data", go::base64Encode(cert_pem)},
                                {"client-key-data", go::base64Encode(key_pem)}}}}})},
      {"contexts",
       json::array({{{"name", "kube-local"}, {"context", {{"cluster", "kube-local"},
                                                           {"user", "kube-local"}}}}})},
      {"current-context", "kube-local"},
  };
  return core::toYaml(config);
}

// A fresh, empty log for each start, so that a retry reads only its own attempt's output.
core::Result<std::unique_ptr<process::ChildProcess>> startChild(std::vector<std::string> argv,
                                                               const fs::path& log_file,
                                                               const std::string& name) {
  std::error_code ec;
  fs::remove(log_file, ec);
  auto child = process::ChildProcess::start(std::move(argv), log_file);
  if (!child) return child.error().within(name);
  return child;
}

core::Result<void> writeFile(const fs::path& file, const std::string& content,
                             unsigned mode = 0644) {
  return net::writeFileAtomically(file, content, mode);
}

// How the address of a port chosen by pickFreeLoopbackPort() can be lost to another process
// before the child binds it; the start is then retried with new ports.
bool lostPortRace(process::ChildProcess& child) {
  return child.logTail(50).find("address already in use") != std::string::npos;
}

}  // namespace

Binaries Binaries::inDir(const fs::path& dir) {
  return {dir / "etcd", dir / "kube-apiserver", dir / "kube-controller-manager", dir / "kubectl"};
}

fs::path Binaries::defaultDir() { return process::kubeBinDir(); }

core::Result<void> Binaries::check() const {
  for (const fs::path* binary : {&etcd, &kube_apiserver, &kube_controller_manager, &kubectl}) {
    std::error_code ec;
    if (::access(binary->c_str(), X_OK) != 0 || fs::is_directory(*binary, ec)) {
      return core::makeError(fmt::format("{} is not built ({} builds it; needs Go 1.26)",
                                         binary->string(), kBuildCommand),
                             core::ErrorCode::kNotFound);
    }
  }
  return {};
}

const std::vector<std::string>& defaultControllers() {
  // Canonical names of cmd/kube-controller-manager/names/controller_names.go.
  static const std::vector<std::string> kControllers = {
      "namespace-controller",  "serviceaccount-controller", "serviceaccount-token-controller",
      "deployment-controller", "replicaset-controller",     "job-controller",
      "cronjob-controller",    "garbage-collector-controller",
      // The aggregated ClusterRoles (admin, edit, view) get their rules, as the simulator's
      // serve fills them (apiserver-sim authorizer.h aggregateClusterRoles).
      "clusterrole-aggregation-controller"};
  return kControllers;
}

bool loopbackPortFree(std::uint16_t port) {
  const int fd = bindLoopback(port);
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

core::Result<std::uint16_t> pickFreeLoopbackPort() {
  const int fd = bindLoopback(0);
  if (fd < 0) {
    return core::makeError(fmt::format("cannot listen on 127.0.0.1: {}", std::strerror(errno)));
  }
  sockaddr_in address{};
  socklen_t length = sizeof address;
  const int r = ::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length);
  ::close(fd);
  if (r != 0) return core::makeError(fmt::format("getsockname: {}", std::strerror(errno)));
  return ntohs(address.sin_port);
}

core::Result<std::unique_ptr<ControlPlane>> ControlPlane::start(ControlPlaneOptions options) {
  const auto started = std::chrono::steady_clock::now();
  // Explicit ports first: they are the user's input, checked before anything is written.
  for (const auto& [port, flag] : {std::pair{options.apiserver_port, "apiserver port"},
                                   std::pair{options.etcd_port, "etcd port"}}) {
    if (port != 0 && !loopbackPortFree(port)) {
      return core::makeError(fmt::format("127.0.0.1:{} ({}) is in use", port, flag),
                             core::ErrorCode::kFailedPrecondition);
    }
  }
  if (auto r = options.binaries.check(); !r) return r.error();
  if (options.controller_manager && options.controllers.empty()) {
    return core::makeError("no controllers for kube-controller-manager");
  }
  std::unique_ptr<ControlPlane> plane(new ControlPlane(std::move(options)));
  plane->deadline_ = started + plane->options_.ready_timeout;
  if (auto r = plane->prepare(); !r) return r.error();

  // Ports chosen here can be taken by another process before the child binds them: retry.
  const bool chosen_ports =
      plane->options_.etcd_port == 0 && plane->options_.apiserver_port == 0;
  for (int attempt = 1;; ++attempt) {
    auto r = plane->startEtcd();
    if (r) r = plane->startApiserver();
    if (r) break;
    const bool race = (plane->etcd_ && lostPortRace(*plane->etcd_)) ||
                      (plane->apiserver_ && lostPortRace(*plane->apiserver_));
    if (!chosen_ports || !race || attempt == 3) return r.error();
    for (auto* child : {&plane->apiserver_, &plane->etcd_}) {
      if (*child) (*child)->stop();
      child->reset();
    }
    std::error_code ec;
    fs::remove_all(plane->work_dir_ / "etcd-data", ec);
    for (auto* port : {&plane->etcd_port_, &plane->etcd_peer_port_, &plane->apiserver_port_}) {
      auto picked = pickFreeLoopbackPort();
      if (!picked) return picked.error();
      *port = *picked;
    }
    if (auto written = plane->prepare(); !written) return written.error();
  }
  if (plane->options_.controller_manager) {
    if (auto r = plane->startControllerManager(); !r) return r.error();
  }
  plane->startup_seconds_ =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return plane;
}

core::Result<void> ControlPlane::prepare() {
  // The work directory (once).
  if (work_dir_.empty()) {
    std::error_code ec;
    if (options_.work_dir.empty()) {
      const char* tmp = std::getenv("TMPDIR");
      std::string pattern =
          (fs::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") / "kube-local-XXXXXX").string();
      if (::mkdtemp(pattern.data()) == nullptr) {
        return core::makeError(
            fmt::format("cannot create a directory {}: {}", pattern, std::strerror(errno)));
      }
      work_dir_ = pattern;
    } else {
      work_dir_ = fs::absolute(options_.work_dir);
      if (fs::exists(work_dir_, ec) && !fs::is_empty(work_dir_, ec)) {
        return core::makeError(fmt::format("work directory {} is not empty", work_dir_.string()),
                               core::ErrorCode::kFailedPrecondition);
      }
      fs::create_directories(work_dir_, ec);
      if (ec) {
        return core::makeError(
            fmt::format("cannot create {}: {}", work_dir_.string(), ec.message()));
      }
    }
    owns_work_dir_ = true;
    for (auto [port, given] : {std::pair{&apiserver_port_, options_.apiserver_port},
                               std::pair{&etcd_port_, options_.etcd_port},
                               std::pair{&etcd_peer_port_, std::uint16_t{0}}}) {
      if (given != 0) {
        *port = given;
        continue;
      }
      auto picked = pickFreeLoopbackPort();
      if (!picked) return picked.error();
      *port = *picked;
    }
    if (options_.audit_policy_file.empty()) {
      options_.audit_policy_file =
          fs::path(HARNESS_SOURCE_DIR) / "scenarios" / "seed-tutorial" / "audit-policy.yaml";
    }
    options_.audit_policy_file = fs::absolute(options_.audit_policy_file);
    if (::access(options_.audit_policy_file.c_str(), R_OK) != 0) {
      return core::makeError(fmt::format("audit policy {}: {}",
                                         options_.audit_policy_file.string(),
                                         std::strerror(errno)),
                             core::ErrorCode::kInvalid);
    }
    if (!options_.admission_config_file.empty()) {
      options_.admission_config_file = fs::absolute(options_.admission_config_file);
      if (::access(options_.admission_config_file.c_str(), R_OK) != 0) {
        return core::makeError(fmt::format("admission configuration {}: {}",
                                           options_.admission_config_file.string(),
                                           std::strerror(errno)),
                               core::ErrorCode::kInvalid);
      }
    }
  }

  // Certificates: a server CA for the serving certificate, a client CA for users (as k3s keeps
  // them apart), and one EC key pair for service-account tokens.
  const fs::path pki = work_dir_ / "pki";
  auto server_ca = net::CertificateAuthority::create("kube-local-server-ca");
  auto client_ca = net::CertificateAuthority::create("kube-local-client-ca");
  if (!server_ca) return server_ca.error();
  if (!client_ca) return client_ca.error();
  auto serving = net::issueCertificate(
      *server_ca, "kube-apiserver",
      {"127.0.0.1", "localhost", kServiceIp, "kubernetes", "kubernetes.default",
       "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"});
  auto admin = net::issueCertificate(*client_ca, kAdminUser, {}, std::chrono::hours(24 * 365),
                                     {"system:masters"});
  auto controller_manager =
      net::issueCertificate(*client_ca, "system:kube-controller-manager", {});
  auto service_account_key = net::generateKeyPair();
  for (const core::Error* error :
       {serving ? nullptr : &serving.error(), admin ? nullptr : &admin.error(),
        controller_manager ? nullptr : &controller_manager.error(),
        service_account_key ? nullptr : &service_account_key.error()}) {
    if (error != nullptr) return error->within("certificates");
  }
  ca_pem_ = server_ca->certificate_pem;
  admin_cert_pem_ = admin->certificate_pem;
  admin_key_pem_ = admin->private_key_pem;
  const std::string server = serverUrl();
  const std::string admission_kubeconfig = (work_dir_ / "admission-kubeconfig").string();
  for (const auto& r : {
           writeFile(pki / "server-ca.crt", server_ca->certificate_pem),
           writeFile(pki / "client-ca.crt", client_ca->certificate_pem),
           net::writePemFiles(*serving, pki / "apiserver.crt", pki / "apiserver.key"),
           writeFile(pki / "service-account.key", service_account_key->private_key_pem, 0600),
           writeFile(pki / "service-account.pub", service_account_key->public_key_pem),
           writeFile(kubeconfig(), kubeconfigYaml(server, ca_pem_, admin_cert_pem_,
                                                  admin_key_pem_),
                     0600),
           writeFile(work_dir_ / "controller-manager.kubeconfig",
                     kubeconfigYaml(server, ca_pem_, controller_manager->certificate_pem,
                                    controller_manager->private_key_pem),
                     0600),
           // How kube-apiserver authenticates to webhooks (k8s.io/apiserver
           // pkg/admission/plugin/webhook/config: WebhookAdmission.kubeConfigFile): no
           // credentials by default; a caller can replace the file before starting webhooks.
           writeFile(admission_kubeconfig, core::toYaml(json{{"apiVersion", "v1"},
                                                             {"kind", "Config"},
                                                             {"users", json::array()}})),
       }) {
    if (!r) return r.error();
  }
  if (options_.connect_proxy) {
    if (!proxy_) {
      auto proxy = ConnectProxy::start(work_dir_ / "egress-proxy.sock");
      if (!proxy) return proxy.error();
      proxy_ = std::move(*proxy);
    }
    // k8s.io/apiserver pkg/apis/apiserver/v1beta1 EgressSelectorConfiguration over a Unix
    // socket (see connect_proxy.h for why not TCP). The selections not listed (controlplane,
    // etcd) dial directly.
    const json connection = {
        {"proxyProtocol", "HTTPConnect"},
        {"transport", {{"uds", {{"udsName", proxy_->socketPath().string()}}}}}};
    json selections = json::array({{{"name", "cluster"}, {"connection", connection}}});
    if (options_.proxy_url_webhooks) {
      selections.push_back({{"name", "controlplane"}, {"connection", connection}});
    }
    const json egress = {{"apiVersion", "apiserver.k8s.io/v1beta1"},
                         {"kind", "EgressSelectorConfiguration"},
                         {"egressSelections", std::move(selections)}};
    if (auto r = writeFile(work_dir_ / "egress-selector.yaml", core::toYaml(egress)); !r) return r;
  }
  if (options_.admission_config_file.empty()) {
    const json webhook = {{"apiVersion", "apiserver.config.k8s.io/v1"},
                          {"kind", "WebhookAdmissionConfiguration"},
                          {"kubeConfigFile", admission_kubeconfig}};
    const json config = {
        {"apiVersion", "apiserver.config.k8s.io/v1"},
        {"kind", "AdmissionConfiguration"},
        {"plugins", json::array({{{"name", "ValidatingAdmissionWebhook"}, {"configuration", webhook}},
                                 {{"name", "MutatingAdmissionWebhook"}, {"configuration", webhook}}})}};
    if (auto r = writeFile(work_dir_ / "admission-configuration.yaml", core::toYaml(config)); !r) {
      return r;
    }
  }
  return {};
}

core::Result<void> ControlPlane::waitReady(process::ChildProcess& child, const std::string& name,
                                           const std::string& path, const std::string& what) {
  net::ClientOptions client_options;
  client_options.ca_pem = ca_pem_;
  client_options.client_certificate_pem = admin_cert_pem_;
  client_options.client_key_pem = admin_key_pem_;
  std::unique_ptr<net::HttpClient> client;
  std::string last;
  while (true) {
    if (!child.running()) return core::makeError(exitedMessage(child, name, " before " + what));
    if (path.empty()) {
      if (acceptsConnections(etcd_port_)) return {};
      last = fmt::format("127.0.0.1:{} refuses connections", etcd_port_);
    } else {
      if (!client) client = std::make_unique<net::HttpClient>(client_options);
      net::ClientRequest request;
      request.method = "GET";
      request.url = serverUrl() + path;
      request.deadline = std::chrono::steady_clock::now() + 10s;
      const auto response = client->sendSync(std::move(request));
      if (response.ok() && response.status == 200) return {};
      last = response.ok() ? fmt::format("GET {}: {} {}", path, response.status, response.body)
                           : response.error_message;
    }
    if (std::chrono::steady_clock::now() >= deadline_) {
      return core::makeError(fmt::format(
          "{}: not {} within {}s (last: {}); the end of its log:\n{}", name, what,
          options_.ready_timeout.count(), last, child.logTail(20)));
    }
    std::this_thread::sleep_for(100ms);
  }
}

core::Result<void> ControlPlane::startEtcd() {
  const std::string client_url = fmt::format("http://127.0.0.1:{}", etcd_port_);
  const std::string peer_url = fmt::format("http://127.0.0.1:{}", etcd_peer_port_);
  auto child = startChild(
      {options_.binaries.etcd.string(), "--name=kube-local",
       "--data-dir=" + (work_dir_ / "etcd-data").string(), "--listen-client-urls=" + client_url,
       "--advertise-client-urls=" + client_url, "--listen-peer-urls=" + peer_url,
       "--initial-advertise-peer-urls=" + peer_url,
       "--initial-cluster=kube-local=" + peer_url, "--initial-cluster-state=new",
       // Metrics would listen on the client URL anyway; no extra port.
       "--log-level=warn"},
      work_dir_ / "etcd.log", "etcd");
  if (!child) return child.error();
  etcd_ = std::move(*child);
  return waitReady(*etcd_, "etcd", "", "listening");
}

core::Result<void> ControlPlane::startApiserver() {
  const fs::path pki = work_dir_ / "pki";
  std::vector<std::string> argv = {
      options_.binaries.kube_apiserver.string(),
      fmt::format("--etcd-servers=http://127.0.0.1:{}", etcd_port_),
      "--bind-address=127.0.0.1",
      fmt::format("--secure-port={}", apiserver_port_),
      "--advertise-address=127.0.0.1",
      // The kubernetes Service's Endpoints would hold 127.0.0.1, which Endpoints validation
      // rejects (a loopback address); nothing here routes to it.
      "--endpoint-reconciler-type=none",
      "--cert-dir=" + (work_dir_ / "apiserver-certs").string(),
      "--tls-cert-file=" + (pki / "apiserver.crt").string(),
      "--tls-private-key-file=" + (pki / "apiserver.key").string(),
      "--client-ca-file=" + (pki / "client-ca.crt").string(),
      "--anonymous-auth=false",
      "--authorization-mode=Node,RBAC",
      "--allow-privileged=true",
      "--service-account-issuer=" + std::string(kIssuer),
      "--service-account-key-file=" + (pki / "service-account.pub").string(),
      "--service-account-signing-key-file=" + (pki / "service-account.key").string(),
      "--service-cluster-ip-range=" + std::string(kServiceCidr),
      "--audit-policy-file=" + options_.audit_policy_file.string(),
      "--audit-log-path=" + auditLog().string(),
      "--audit-log-format=json",
      "--admission-control-config-file=" +
          (options_.admission_config_file.empty()
               ? (work_dir_ / "admission-configuration.yaml").string()
               : options_.admission_config_file.string()),
      "--profiling=false",
  };
  if (proxy_) {
    argv.push_back("--egress-selector-config-file=" + (work_dir_ / "egress-selector.yaml").string());
  }
  if (!options_.enable_admission_plugins.empty()) {
    argv.push_back("--enable-admission-plugins=" + join(options_.enable_admission_plugins));
  }
  if (!options_.disable_admission_plugins.empty()) {
    argv.push_back("--disable-admission-plugins=" + join(options_.disable_admission_plugins));
  }
  argv.insert(argv.end(), options_.extra_apiserver_args.begin(),
              options_.extra_apiserver_args.end());
  auto child = startChild(std::move(argv), work_dir_ / "kube-apiserver.log", "kube-apiserver");
  if (!child) return child.error();
  apiserver_ = std::move(*child);
  return waitReady(*apiserver_, "kube-apiserver", "/readyz", "ready");
}

core::Result<void> ControlPlane::startControllerManager() {
  const fs::path kubeconfig_file = work_dir_ / "controller-manager.kubeconfig";
  auto child = startChild(
      {options_.binaries.kube_controller_manager.string(),
       "--kubeconfig=" + kubeconfig_file.string(),
       "--authentication-kubeconfig=" + kubeconfig_file.string(),
       "--authorization-kubeconfig=" + kubeconfig_file.string(),
       "--bind-address=127.0.0.1",
       // No serving port: readiness is observed through the API (below).
       "--secure-port=0",
       "--leader-elect=false",
       "--use-service-account-credentials=true",
       "--service-account-private-key-file=" + (work_dir_ / "pki" / "service-account.key").string(),
       "--root-ca-file=" + (work_dir_ / "pki" / "server-ca.crt").string(),
       "--service-cluster-ip-range=" + std::string(kServiceCidr),
       "--controllers=" + join(options_.controllers)},
      work_dir_ / "kube-controller-manager.log", "kube-controller-manager");
  if (!child) return child.error();
  controller_manager_ = std::move(*child);
  const auto& controllers = options_.controllers;
  const bool makes_service_accounts =
      std::find(controllers.begin(), controllers.end(), "serviceaccount-controller") !=
          controllers.end() ||
      std::find(controllers.begin(), controllers.end(), "serviceaccount") != controllers.end() ||
      std::find(controllers.begin(), controllers.end(), "*") != controllers.end();
  if (!makes_service_accounts) {
    return waitReady(*controller_manager_, "kube-controller-manager", "/readyz", "ready");
  }
  // Pods can be created once the default ServiceAccount exists (the ServiceAccount admission
  // plugin rejects them before): the serviceaccount controller is running.
  return waitReady(*controller_manager_, "kube-controller-manager",
                   "/api/v1/namespaces/default/serviceaccounts/default",
                   "running (no default ServiceAccount)");
}

core::Result<void> ControlPlane::check() {
  for (auto [child, name] : {std::pair{etcd_.get(), "etcd"},
                             std::pair{apiserver_.get(), "kube-apiserver"},
                             std::pair{controller_manager_.get(), "kube-controller-manager"}}) {
    if (child != nullptr && !child->running()) {
      return core::makeError(exitedMessage(*child, name, ""));
    }
  }
  return {};
}

std::string ControlPlane::serverUrl() const {
  return fmt::format("https://127.0.0.1:{}", apiserver_port_);
}

void ControlPlane::stop() {
  if (stopped_) return;
  stopped_ = true;
  // Clients first, storage last: the apiserver closes its watches before etcd goes away.
  for (auto* child : {&controller_manager_, &apiserver_, &etcd_}) {
    if (*child) (*child)->stop(10s);
  }
  if (proxy_) proxy_->stop();
  if (owns_work_dir_ && !options_.keep_work_dir) {
    std::error_code ec;
    fs::remove_all(work_dir_, ec);
  }
}

ControlPlane::~ControlPlane() { stop(); }

}  // namespace harness::kube
