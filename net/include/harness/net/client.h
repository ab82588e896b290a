#pragma once

// An HTTP/1.1 client shaped like kube-apiserver's webhook client (client-go over Go's
// net/http transport): keep-alive connection pool per endpoint, SNI, server verification
// against a CA bundle and the host name (DNS or IP SAN, no Common Name fallback), a deadline
// per call, and errors worded like Go's (docs/admission-chain.md §4.5).

#include <chrono>
#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>

#include "harness/net/http.h"

namespace harness::net {

struct ClientOptions {
  // PEM CA bundle (a webhook's caBundle). Empty: the system roots.
  std::string ca_pem;
  // Optional client certificate and key (PEM), e.g. from a kubeconfig.
  std::string client_certificate_pem;
  std::string client_key_pem;
  bool insecure_skip_verify = false;
  // Sent as SNI and verified against the server's certificate instead of the URL's host (a
  // kubeconfig's tls-server-name): client-go rest.TLSClientConfig.ServerName becomes
  // crypto/tls Config.ServerName, and net/http uses the URL's host only when it is empty. An IP
  // address is verified against the IP SANs and not sent as SNI (crypto/tls hostnameInSNI).
  std::string server_name;
  // I/O threads for send(), started by its first call (sendSync does its I/O on the calling
  // thread and needs none).
  int threads = 1;
  std::size_t max_idle_per_endpoint = 100;  // Go's MaxIdleConnsPerHost for the webhook client
  std::size_t response_body_limit = std::size_t{64} * 1024 * 1024;
  std::chrono::milliseconds idle_connection_timeout{90'000};
  std::string user_agent = "sidecar-harness";
};

struct ClientRequest {
  std::string method = "POST";
  std::string url;  // https://webhook.ns.svc:443/path?timeout=10s
  Headers headers;
  std::string body;
  // Connect here instead of resolving the URL's host ("127.0.0.1:8443"); the URL's host is still
  // used for SNI, the Host header and certificate verification (like curl --resolve).
  std::optional<std::string> connect_to;
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

enum class ClientErrorKind {
  kNone,
  kBadUrl,
  kConnect,     // dial failed (refused, unreachable, DNS)
  kTls,         // handshake or certificate verification failed
  kTimeout,     // the deadline passed
  kConnection,  // the connection broke (EOF, reset) while sending or receiving
  kProtocol,    // the response was not valid HTTP/1.1 or exceeded the body limit
};

struct ClientResponse {
  ClientErrorKind error = ClientErrorKind::kNone;
  // Go-style error text: `Post "<url>": dial tcp 127.0.0.1:1: connect: connection refused`,
  // `Post "<url>": context deadline exceeded`,
  // `Post "<url>": tls: failed to verify certificate: x509: certificate signed by unknown authority`.
  std::string error_message;
  int status = 0;
  Headers headers;
  std::string body;
  bool reused_connection = false;

  [[nodiscard]] bool ok() const { return error == ClientErrorKind::kNone; }
};

struct ClientStats {
  std::uint64_t connections_opened = 0;
  std::uint64_t requests = 0;
  std::uint64_t reused = 0;
};

class HttpClient {
 public:
  explicit HttpClient(ClientOptions options);
  ~HttpClient();
  HttpClient(const HttpClient&) = delete;
  HttpClient& operator=(const HttpClient&) = delete;

  // Sends the request on a pooled connection; never throws; completes by the deadline.
  // send() does the I/O on the client's threads; sendSync() on the calling thread, each of its
  // connections with an io_context of its own (several threads may call it at once). The two
  // keep their connections apart.
  std::future<ClientResponse> send(ClientRequest request);
  ClientResponse sendSync(ClientRequest request);

  [[nodiscard]] ClientStats stats() const;
  // Closes idle pooled connections.
  void closeIdle();

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

}  // namespace harness::net
