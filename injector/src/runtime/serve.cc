#include "serve.h"

#include <algorithm>
#include <csignal>
#include <fstream>
#include <sstream>

#include <spdlog/spdlog.h>

#include "harness/core/yaml.h"
#include "harness/net/server.h"

namespace harness::injector {

namespace fs = std::filesystem;

namespace {

core::Result<std::unique_ptr<KubeApi>> makeKubeApi(const ServeOptions& o) {
  if (!o.kubeconfig.empty()) {
    auto conn = loadKubeconfig(o.kubeconfig, o.kube_context);
    if (!conn) return conn.error();
    return makeRestKubeApi(std::move(*conn));
  }
  if (o.in_cluster) {
    auto conn = inClusterConnection();
    if (!conn) return conn.error();
    return makeRestKubeApi(std::move(*conn));
  }
  auto objects = loadObjectFiles(o.object_files);
  if (!objects) return objects.error();
  return std::unique_ptr<KubeApi>(std::make_unique<LocalKubeApi>(std::move(*objects)));
}

net::Response metricsResponse(const core::MetricsRegistry& metrics) {
  net::Response r;
  r.headers.set("Content-Type", "text/plain; version=0.0.4; charset=utf-8");
  r.body = metrics.render();
  return r;
}

}  // namespace

int runServe(const ServeOptions& o) {
  if (o.profiles.empty()) {
    spdlog::error("no profile given (available: linkerd, istio)");
    return 2;
  }
  for (const auto& p : o.profiles) {
    if (p != "linkerd" && p != "istio") {
      spdlog::error("unknown profile \"{}\" (available: linkerd, istio)", p);
      return 2;
    }
  }
  const auto enabled = [&o](const char* name) {
    return std::find(o.profiles.begin(), o.profiles.end(), name) != o.profiles.end();
  };
  auto kube = makeKubeApi(o);
  if (!kube) {
    spdlog::error("kubernetes API: {}", kube.error().message);
    return 2;
  }
  spdlog::info("using the Kubernetes API at {}", (*kube)->describe());
  core::MetricsRegistry metrics;
  EventSink events(**kube);
  std::unique_ptr<LinkerdWebhook> linkerd;
  std::unique_ptr<IstioWebhook> istio;
  if (enabled("linkerd")) linkerd = std::make_unique<LinkerdWebhook>(o.linkerd, **kube, events, metrics);
  if (enabled("istio")) {
    // Nodes for ENABLE_NATIVE_SIDECARS=auto: a real API server, or object files holding Nodes;
    // object files without any stand for no cluster (istiod without a node client).
    const bool api_server = !o.kubeconfig.empty() || o.in_cluster;
    auto local_nodes = api_server ? core::Result<std::vector<nlohmann::json>>(
                                        std::vector<nlohmann::json>{})
                                  : (*kube)->list("Node");
    KubeApi* nodes = api_server || (local_nodes && !local_nodes->empty()) ? kube->get() : nullptr;
    istio = std::make_unique<IstioWebhook>(o.istio, metrics, nodes, kube->get());
  }
  auto check = [&]() -> core::Result<void> {
    if (linkerd) {
      if (auto ok = linkerd->checkConfig(); !ok) return ok.error().within("linkerd");
    }
    if (istio) {
      if (auto ok = istio->checkConfig(); !ok) return ok.error().within("istio");
    }
    return {};
  };
  if (auto ok = check(); !ok) {
    // Like the real injectors, keep serving: every request reports the error until it is fixed.
    spdlog::warn("configuration not usable yet: {}", ok.error().message);
  }

  auto health = [](const net::Request&) { return net::Response::text(200, "ok\n"); };
  auto ready = [&check](const net::Request&) {
    auto ok = check();
    return ok ? net::Response::text(200, "ok\n")
              : net::Response::text(503, "not ready: " + ok.error().message + "\n");
  };
  auto metrics_handler = [&metrics](const net::Request&) { return metricsResponse(metrics); };

  net::Router webhook_routes;
  webhook_routes.exact("/healthz", health).exact("/readyz", ready).exact("/metrics", metrics_handler);
  net::Handler primary;
  if (linkerd) {
    net::Handler h = [&linkerd](const net::Request& r) { return linkerd->handle(r); };
    webhook_routes.exact("/inject/linkerd", h);
    if (o.profiles.front() == "linkerd") primary = h;
  }
  if (istio) {
    net::Handler h = [&istio](const net::Request& r) { return istio->handle(r); };
    webhook_routes.exact("/inject", h).prefix("/inject/", h).exact("/ready", ready);
    if (o.profiles.front() == "istio") primary = h;
  }
  // Linkerd's webhook answers on every path (its configuration uses "/").
  webhook_routes.fallback(primary);
  net::ServerOptions so;
  so.address = o.address;
  so.port = o.port;
  so.threads = o.threads;
  so.max_handler_threads = o.max_handler_threads;
  // Without an API server (object files) a handler never waits on the network: it runs on the
  // I/O thread that read the request, as Go's net/http runs it on the connection's goroutine,
  // two thread hand-offs fewer per request. With one, lookups may block: the worker pool.
  so.inline_handlers = o.kubeconfig.empty() && !o.in_cluster;
  so.max_connections = o.max_connections;
  if (o.profiles.front() == "linkerd") {
    so.body_limit = std::size_t{10} * 1024 * 1024;
    so.oversized_body_status = 500;  // docs/linkerd-injector.md §5
  } else {
    so.body_limit = std::size_t{6} * 1024 * 1024;  // docs/istio-injector.md §5: a larger body gives 400
    so.oversized_body_status = 400;
  }
  so.name = "webhook";
  so.tls = net::TlsServerConfig{o.tls_cert.string(), o.tls_key.string()};
  so.tls->tls13_only = o.tls13_only && !istio;
  if (!o.client_ca_file.empty()) {
    so.tls->client_ca_file = o.client_ca_file.string();
    so.tls->require_client_certificate = true;
  }
  net::Server webhook(so, std::move(webhook_routes));
  if (auto started = webhook.start(); !started) {
    spdlog::error("webhook server: {}", started.error().message);
    return 2;
  }
  std::unique_ptr<net::Server> admin;
  if (o.admin_port >= 0) {
    net::Router admin_routes;
    admin_routes.exact("/healthz", health)
        .exact("/readyz", ready)
        .exact("/ready", ready)
        .exact("/ping", health)
        .exact("/metrics", metrics_handler);
    net::ServerOptions ao;
    ao.address = o.address;
    ao.port = static_cast<std::uint16_t>(o.admin_port);
    ao.threads = 1;
    // Probes and scrapes only: a few connections are plenty, and the webhook keeps the rest of
    // the descriptors.
    ao.max_connections = 64;
    ao.name = "admin";
    admin = std::make_unique<net::Server>(ao, std::move(admin_routes));
    if (auto started = admin->start(); !started) {
      spdlog::error("admin server: {}", started.error().message);
      webhook.stop(std::chrono::milliseconds(0));
      return 2;
    }
  }
  spdlog::info("listening at {}:{} (webhook, TLS{}){}", webhook.address(), webhook.port(),
               o.client_ca_file.empty() ? "" : ", client certificates required",
               admin ? fmt::format(", {}:{} (admin)", admin->address(), admin->port()) : "");
  if (!o.ports_file.empty()) {
    nlohmann::json ports = {{"webhook", webhook.port()}, {"admin", admin ? admin->port() : 0}};
    const fs::path tmp = o.ports_file.string() + ".tmp";
    std::ofstream(tmp) << ports.dump() << "\n";
    fs::rename(tmp, o.ports_file);
  }
  const int sig = net::waitForTerminationSignal();
  spdlog::info("received signal {}, shutting down", sig == SIGTERM ? "SIGTERM" : "SIGINT");
  webhook.stop(o.shutdown_grace);
  if (admin) admin->stop(std::chrono::milliseconds(1000));
  events.flush();
  spdlog::info("shut down");
  return 0;
}

}  // namespace harness::injector
