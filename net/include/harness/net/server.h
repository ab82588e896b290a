#pragma once

// An HTTP/1.1 server on Boost.Beast, with TLS (OpenSSL) or plain TCP.
//
// Shape follows Beast's async-ssl and advanced server examples: a strand per connection, a
// deadline before every operation, an explicit body limit, TLS shutdown that ignores only
// stream_truncated, keep-alive, and graceful shutdown by cancellation.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/result.h"
#include "harness/net/certificates.h"
#include "harness/net/http.h"

namespace harness::net {

struct TlsServerConfig {
  std::string certificate_file;  // PEM chain, leaf first
  std::string private_key_file;  // PEM
  // When set, client certificates are verified against this CA bundle.
  std::optional<std::string> client_ca_file;
  bool require_client_certificate = false;
  bool tls13_only = false;  // Linkerd's proxy-injector requires TLS 1.3; default is TLS 1.2+.
  // How often the files are checked for changes (ConfigMap/Secret mounts change by symlink
  // swap); a changed, valid pair is used for new connections without a restart.
  std::chrono::milliseconds reload_check_interval{1000};
};

struct ServerOptions {
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;  // 0: pick a free port; see Server::port()
  std::optional<TlsServerConfig> tls;  // nullopt: plain HTTP
  int threads = 2;
  std::size_t body_limit = std::size_t{10} * 1024 * 1024;
  // The status sent for a body over the limit (413; Linkerd's proxy-injector answers 500).
  int oversized_body_status = 413;
  std::chrono::milliseconds handshake_timeout{10'000};
  std::chrono::milliseconds read_timeout{30'000};   // header + body of one request
  std::chrono::milliseconds write_timeout{30'000};
  std::chrono::milliseconds idle_timeout{90'000};   // keep-alive wait for the next request
  // Answer plaintext HTTP sent to a TLS port like Go's net/http does (400, "Client sent an
  // HTTP request to an HTTPS server.").
  bool answer_plaintext_on_tls = true;
  // Connections open at once, so that idle connections cannot use up the process's file
  // descriptors. At the cap the server stops accepting (the kernel queues new connections in
  // the listen backlog) and closes the longest-idle connection (no request in progress) to make
  // room, as nginx reuses keep-alive connections when worker_connections run out.
  // 0: half the soft RLIMIT_NOFILE at start(), between 16 and kDefaultMaxConnections.
  std::size_t max_connections = 0;
  static constexpr std::size_t kDefaultMaxConnections = 4096;
  // Handlers run on a worker pool, never on the I/O threads, so a handler that blocks (a
  // Kubernetes API lookup) does not stall other connections. The pool starts empty and grows
  // while every worker is busy, up to this many threads; further requests wait for a worker.
  int max_handler_threads = 64;
  // For handlers that never block (the simulator's stub webhooks: their delays are timers on the
  // connection): run them on the I/O thread that read the request, with no worker pool. Saves
  // two thread hand-offs per request. Large requests still go to the large-request workers.
  bool inline_handlers = false;
  // A request with a body of at least this many bytes is large: at most max_large_handlers of
  // them are handled at once (a parsed document takes many times its body's size; the pool
  // above would run dozens), and once no large request is in flight, freed heap memory is
  // returned to the OS (malloc_trim): glibc otherwise keeps the pages of large freed bodies and
  // parsed documents in its arenas. A large response body counts too. 0: nothing is large.
  std::size_t large_body_bytes = std::size_t{1024} * 1024;
  int max_large_handlers = 2;
  std::string name = "server";  // used in log lines
};

using Handler = std::function<Response(const Request&)>;

// A handler's answer with faults injected by the endpoint (the stub webhooks' slow answers and
// hang-ups): the response, sent only after `delay` (the connection stays open meanwhile, like a
// slow webhook), or nothing at all when `close_without_response` (the connection is closed).
// The faults belong to the endpoint that injects them, not to the HTTP message: Envoy keeps
// fault injection in a filter (envoy.filters.http.fault), not in its message type.
struct Reply {
  Response response;
  std::chrono::milliseconds delay{0};
  bool close_without_response = false;
};

// A handler that may inject faults.
using FaultHandler = std::function<Reply(const Request&)>;

// Routes by exact path or by path prefix (longest prefix wins); unknown paths get 404.
class Router {
 public:
  Router& exact(std::string path, Handler handler);
  Router& prefix(std::string path_prefix, Handler handler);
  Router& fallback(Handler handler);
  Router& exact(std::string path, FaultHandler handler);
  Router& prefix(std::string path_prefix, FaultHandler handler);
  Router& fallback(FaultHandler handler);
  [[nodiscard]] Reply dispatch(const Request& request) const;

 private:
  struct Route {
    std::string path;
    bool is_prefix;
    FaultHandler handler;
  };
  std::vector<Route> routes_;
  FaultHandler fallback_;
};

struct ServerStats {
  std::uint64_t connections_accepted = 0;
  std::uint64_t requests = 0;
  std::uint64_t tls_reloads = 0;
  std::uint64_t tls_reload_failures = 0;
  std::uint64_t active_connections = 0;
  // Failed accept() calls (e.g. EMFILE), each followed by a backoff of 5 ms doubling to 1 s.
  std::uint64_t accept_errors = 0;
  // Idle connections closed to make room at max_connections.
  std::uint64_t idle_connections_reclaimed = 0;
  std::uint64_t memory_trims = 0;
  std::uint64_t handler_threads = 0;  // worker threads started so far
  std::size_t max_connections = 0;    // the cap in force (after defaulting)
};

// Makes now the TLS context a Server with `tls13_only` and no client CA makes when it starts with
// the files writePemFiles wrote for `certificate` (issued by this process); that start then finds
// it made. For a caller that knows which servers it will start and has a core to spare: OpenSSL 3
// spends over a million instructions on a context.
void prepareServerTls(const IssuedCertificate& certificate, bool tls13_only = false);
// How many server TLS contexts this process has made (prepared or at a start), shared ones once.
std::uint64_t serverTlsContextsMade();

class Server {
 public:
  Server(ServerOptions options, Router router);
  ~Server();  // stops with a zero grace period if still running
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // Loads TLS material, binds and starts the worker threads.
  core::Result<void> start();
  // The bound port (valid after start()).
  [[nodiscard]] std::uint16_t port() const;
  [[nodiscard]] std::string address() const;

  // Graceful shutdown: stop accepting, close idle keep-alive connections, let in-flight
  // requests finish and send their responses (with "Connection: close") until `grace` has
  // passed, then close everything and join the threads. Idempotent.
  void stop(std::chrono::milliseconds grace = std::chrono::milliseconds(5000));

  // Re-reads the TLS files now (also done periodically when they change).
  core::Result<void> reloadTls();

  [[nodiscard]] ServerStats stats() const;

 private:
  struct Impl;
  std::shared_ptr<Impl> impl_;
};

// Blocks SIGTERM and SIGINT in the calling thread and in every thread it starts afterwards, so
// that a signal arriving at any time is kept for waitForTerminationSignal(). Call it first in
// main(), before any thread exists.
void blockTerminationSignals();
// Waits until SIGTERM or SIGINT arrives (blocking them first if needed); returns the signal.
int waitForTerminationSignal();

}  // namespace harness::net
