#pragma once

// `injector serve`: the HTTPS mutating webhook — Linkerd on "/inject/linkerd", Istio on
// "/inject" and "/inject/<k>/<v>...", the first profile also on "/" — plus a plain
// HTTP admin port with /healthz, /readyz and /metrics (like Linkerd's :9995); the webhook port
// serves the same three paths.

#include <cstdint>
#include <filesystem>
#include <string>

#include "istio_webhook.h"
#include "linkerd_webhook.h"

namespace harness::injector {

struct ServeOptions {
  std::string address = "0.0.0.0";
  std::uint16_t port = 8443;
  int admin_port = 9995;  // -1: no admin port; 0: any free port
  std::filesystem::path tls_cert, tls_key;
  std::vector<std::string> profiles = {"linkerd"};  // "linkerd", "istio"
  LinkerdWebhookConfig linkerd;
  IstioWebhookConfig istio;
  // Kubernetes API: a kubeconfig, the in-cluster service account, or local object files.
  std::filesystem::path kubeconfig;
  std::string kube_context;
  bool in_cluster = false;
  std::vector<std::filesystem::path> object_files;
  // Written once listening: {"webhook": <port>, "admin": <port>} (for port 0 in tests).
  std::filesystem::path ports_file;
  int threads = 2;  // I/O threads; handlers run on a separate, growing pool
  int max_handler_threads = 64;
  std::size_t max_connections = 0;  // 0: the net::ServerOptions default
  // When set, clients must present a certificate signed by a CA in this bundle.
  std::filesystem::path client_ca_file;
  bool tls13_only = true;  // Linkerd's webhook server requires TLS 1.3 (Istio: 1.2)
  std::chrono::milliseconds shutdown_grace{10'000};
};

// Runs until SIGTERM/SIGINT; returns the process exit code: 0 after that signal, 2 when the
// server cannot start.
int runServe(const ServeOptions& options);

}  // namespace harness::injector
