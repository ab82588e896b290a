// The REST API behind HTTPS: a RestApiHandler on net::Server, with a serving certificate issued by
// the simulator's CA for the names a client of kube-apiserver may dial (k3s adds the same
// kubernetes.default.* SANs to its serving certificate).

#include <algorithm>
#include <random>

#include <fmt/format.h>

#include "harness/net/server.h"
#include "harness/sim/kubeconfig.h"
#include "harness/sim/rest_api.h"

namespace harness::sim {
namespace {

std::string randomToken() {
  std::random_device device;
  std::string token;
  for (int i = 0; i < 4; ++i) token += fmt::format("{:08x}", device());
  return token;
}

}  // namespace

struct RestApiServer::Impl {
  std::unique_ptr<RestApiHandler> handler;
  std::unique_ptr<net::Server> server;
  std::string ca_pem;
  std::string token;
  std::string host;
  std::uint16_t port = 0;
};

RestApiServer::RestApiServer() : impl_(std::make_unique<Impl>()) {}

RestApiServer::~RestApiServer() { stop(); }

core::Result<std::unique_ptr<RestApiServer>> RestApiServer::start(
    ObjectStore& store, AdmissionChain& chain, const net::CertificateAuthority& ca,
    RestApiOptions options) {
  if (options.scratch_dir.empty()) {
    return core::makeError("RestApiOptions.scratch_dir is required (serving certificate files)");
  }
  if (options.bearer_token.empty()) options.bearer_token = randomToken();

  std::vector<std::string> sans = {"127.0.0.1",
                                   "localhost",
                                   "kubernetes",
                                   "kubernetes.default",
                                   "kubernetes.default.svc",
                                   "kubernetes.default.svc.cluster.local"};
  if (std::find(sans.begin(), sans.end(), options.address) == sans.end() &&
      options.address != "0.0.0.0" && options.address != "::") {
    sans.push_back(options.address);
  }
  auto certificate = net::issueCertificate(ca, "kube-apiserver", sans);
  if (!certificate) return certificate.error().within("serving certificate");
  const auto cert_file = options.scratch_dir / "apiserver-sim-serving.crt";
  const auto key_file = options.scratch_dir / "apiserver-sim-serving.key";
  if (auto written = net::writePemFiles(*certificate, cert_file, key_file); !written) {
    return written.error().within("serving certificate");
  }

  std::unique_ptr<RestApiServer> server(new RestApiServer());
  Impl& impl = *server->impl_;
  impl.ca_pem = ca.certificate_pem;
  impl.token = options.bearer_token;
  impl.host = options.address == "0.0.0.0" || options.address.empty() ? "127.0.0.1"
              : options.address == "::"                                ? "::1"
                                                                       : options.address;

  net::ServerOptions server_options;
  server_options.address = options.address;
  server_options.port = options.port;
  server_options.threads = options.threads;
  server_options.name = "apiserver-sim-rest";
  // The handler enforces the apiserver's own 3 MiB limit with a Status; the transport limit only
  // has to be above it.
  server_options.body_limit = std::size_t{16} * 1024 * 1024;
  net::TlsServerConfig tls;
  tls.certificate_file = cert_file.string();
  tls.private_key_file = key_file.string();
  server_options.tls = tls;

  impl.handler = std::make_unique<RestApiHandler>(store, chain, std::move(options));
  net::Router router;
  RestApiHandler* handler = impl.handler.get();
  router.fallback([handler](const net::Request& request) { return handler->handle(request); });
  impl.server = std::make_unique<net::Server>(std::move(server_options), std::move(router));
  if (auto started = impl.server->start(); !started) {
    return started.error().within("apiserver-sim REST API");
  }
  impl.port = impl.server->port();
  const std::string host_port = impl.host.find(':') != std::string::npos
                                    ? fmt::format("[{}]:{}", impl.host, impl.port)
                                    : fmt::format("{}:{}", impl.host, impl.port);
  impl.handler->setServerAddress(host_port);
  return server;
}

std::string RestApiServer::url() const {
  if (impl_->host.find(':') != std::string::npos) {
    return fmt::format("https://[{}]:{}", impl_->host, impl_->port);
  }
  return fmt::format("https://{}:{}", impl_->host, impl_->port);
}

std::uint16_t RestApiServer::port() const { return impl_->port; }

const std::string& RestApiServer::bearerToken() const { return impl_->token; }

const std::string& RestApiServer::caCertificatePem() const { return impl_->ca_pem; }

core::Result<std::filesystem::path> RestApiServer::writeKubeconfig(
    const std::filesystem::path& file) const {
  KubeconfigSpec spec;
  spec.server = url();
  spec.ca_pem = impl_->ca_pem;
  spec.bearer_token = impl_->token;
  if (auto written = writeKubeconfigFile(file, spec); !written) return written.error();
  return file;
}

void RestApiServer::stop() {
  if (impl_ && impl_->server) impl_->server->stop(std::chrono::milliseconds(2000));
}

}  // namespace harness::sim
