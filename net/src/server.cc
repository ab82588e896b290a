#include "harness/net/server.h"

#include <malloc.h>
#include <pthread.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <mutex>
#include <thread>
#include <unordered_map>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/core/detect_ssl.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <openssl/ssl.h>
#include <spdlog/spdlog.h>

#include "tls_support.h"

namespace harness::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

// Go's net/http answer to plaintext HTTP on a TLS listener (server.go, "Client sent an HTTP
// request to an HTTPS server.").
constexpr std::string_view kPlaintextOnTlsResponse =
    "HTTP/1.0 400 Bad Request\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";

bool isPathPrefix(std::string_view path, std::string_view prefix) {
  if (!path.starts_with(prefix)) return false;
  return path.size() == prefix.size() || prefix.ends_with('/') || path[prefix.size()] == '/';
}

// A connection's read buffer larger than this is released while the connection waits for its
// next request (a keep-alive connection would otherwise hold its largest read for its lifetime).
constexpr std::size_t kRetainedReadBuffer = std::size_t{16} * 1024;

}  // namespace

// ---------------------------------------------------------------------------------------------
// Router

namespace {

// A plain handler answers at once.
FaultHandler withoutFaults(Handler handler) {
  return [handler = std::move(handler)](const Request& request) {
    return Reply{handler(request)};
  };
}

}  // namespace

Router& Router::exact(std::string path, Handler handler) {
  return exact(std::move(path), withoutFaults(std::move(handler)));
}

Router& Router::prefix(std::string path_prefix, Handler handler) {
  return prefix(std::move(path_prefix), withoutFaults(std::move(handler)));
}

Router& Router::fallback(Handler handler) { return fallback(withoutFaults(std::move(handler))); }

Router& Router::exact(std::string path, FaultHandler handler) {
  routes_.push_back({std::move(path), false, std::move(handler)});
  return *this;
}

Router& Router::prefix(std::string path_prefix, FaultHandler handler) {
  routes_.push_back({std::move(path_prefix), true, std::move(handler)});
  return *this;
}

Router& Router::fallback(FaultHandler handler) {
  fallback_ = std::move(handler);
  return *this;
}

Reply Router::dispatch(const Request& request) const {
  const Route* best = nullptr;
  for (const auto& route : routes_) {
    if (!route.is_prefix) {
      if (route.path == request.path) return route.handler(request);
      continue;
    }
    if (isPathPrefix(request.path, route.path) &&
        (!best || route.path.size() > best->path.size())) {
      best = &route;
    }
  }
  if (best) return best->handler(request);
  if (fallback_) return fallback_(request);
  return Reply{Response::text(404, "404 page not found\n")};
}

// ---------------------------------------------------------------------------------------------
// Server

namespace {

// What stop() and the accept loop need to reach inside a connection: its strand and a way to
// cancel an idle read.
struct ConnectionControl {
  asio::any_io_executor executor;
  std::function<void()> close;  // runs on the connection's strand; cleared when it ends
  asio::steady_timer* delay_timer = nullptr;  // a scripted response delay in progress
  // Ends a streamed response in progress (set while one is sent; runs on the strand).
  std::function<void()> end_stream;
  // Since when the connection waits for the peer (TLS detection, handshake, the next request),
  // in steady-clock nanoseconds; 0 while a request is in progress. Written on the strand, read
  // by the accept loop to pick the longest-idle connection.
  std::atomic<std::int64_t> idle_since{0};

  void setIdle(bool idle) {
    idle_since = idle ? std::max<std::int64_t>(
                            1, std::chrono::steady_clock::now().time_since_epoch().count())
                      : 0;
  }
  [[nodiscard]] bool idle() const { return idle_since != 0; }
};

// Go's net/http Server.Serve: after a temporary accept error (EMFILE, ENFILE, ECONNABORTED) it
// sleeps 5 ms, doubling up to 1 s, and a successful accept resets the delay. Without it a
// listener whose process is out of file descriptors is readable forever and the loop spins.
class AcceptBackoff {
 public:
  std::chrono::milliseconds next() {
    delay_ = delay_.count() == 0 ? kFirst : std::min(delay_ * 2, kMax);
    return delay_;
  }
  void reset() { delay_ = std::chrono::milliseconds(0); }

 private:
  static constexpr std::chrono::milliseconds kFirst{5};
  static constexpr std::chrono::milliseconds kMax{1000};
  std::chrono::milliseconds delay_{0};
};

// A condition worth one log line per interval however often it recurs (not thread-safe: used on
// the acceptor's strand).
class RateLimitedLog {
 public:
  // The number of occurrences to report now, this one included (0: stay quiet).
  std::uint64_t occur() {
    ++unreported_;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_report_) return 0;
    next_report_ = now + kInterval;
    return std::exchange(unreported_, 0);
  }

 private:
  static constexpr std::chrono::seconds kInterval{10};
  std::chrono::steady_clock::time_point next_report_{};
  std::uint64_t unreported_ = 0;
};

// " (N times since the last warning)" for a rate-limited warning standing for several.
std::string sinceLastReport(std::uint64_t occurrences) {
  return occurrences > 1 ? fmt::format(" ({} times since the last warning)", occurrences) : "";
}

// Runs handlers off the I/O threads. reserve() before queueing a task starts a thread when every
// existing one may be busy, so a blocked handler delays no other request while fewer than `max`
// handlers run; threads are kept once started.
class WorkerPool {
 public:
  explicit WorkerPool(int max) : max_(static_cast<std::size_t>(std::max(1, max))) {}
  ~WorkerPool() { stop(); }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  asio::io_context::executor_type executor() { return ioc_.get_executor(); }

  void reserve() {
    std::lock_guard lock(mutex_);
    if (stopped_) return;
    if (++pending_ > threads_.size() && threads_.size() < max_) {
      threads_.emplace_back([this] { ioc_.run(); });
    }
  }
  void release() {
    std::lock_guard lock(mutex_);
    --pending_;
  }
  [[nodiscard]] std::size_t threads() {
    std::lock_guard lock(mutex_);
    return threads_.size();
  }
  // Tasks not yet started are dropped; running ones finish.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      if (stopped_) return;
      stopped_ = true;
    }
    work_.reset();
    ioc_.stop();
    for (auto& t : threads_) t.join();
  }

 private:
  asio::io_context ioc_;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work_{
      ioc_.get_executor()};
  std::mutex mutex_;
  std::vector<std::thread> threads_;
  std::size_t pending_ = 0;
  const std::size_t max_;
  bool stopped_ = false;
};

std::size_t defaultMaxConnections() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) {
    return ServerOptions::kDefaultMaxConnections;
  }
  return std::clamp<std::size_t>(limit.rlim_cur / 2, 16, ServerOptions::kDefaultMaxConnections);
}

}  // namespace

// Handlers and coroutines queued on `ioc` refer to the Impl by plain pointer, never by shared_ptr:
// `ioc` is a member, so a queued handler owning the Impl (one that stop() left unrun, a session
// suspended when the I/O threads stopped) would keep it, its io_context and its TLS context alive
// for ever. Server::stop() joins the I/O threads before the Impl can go, and ~io_context destroys
// what is still queued without running it.
struct Server::Impl {
  ServerOptions options;
  Router router;
  std::atomic<bool> stopping{false};
  std::atomic<bool> started{false};
  std::atomic<bool> joined{false};
  std::mutex stop_mutex;

  std::mutex tls_mutex;
  std::shared_ptr<ssl::context> tls_context;
  detail::FileFingerprint cert_fp, key_fp, client_ca_fp;

  std::mutex connections_mutex;
  std::condition_variable connections_cv;
  std::unordered_map<std::uint64_t, std::shared_ptr<ConnectionControl>> connections;
  std::uint64_t next_connection_id = 0;
  std::size_t max_connections = 0;
  bool waiting_for_slot = false;  // the accept loop waits for a connection to end

  std::atomic<std::uint64_t> accepted{0}, requests{0}, reloads{0}, reload_failures{0};
  std::atomic<std::uint64_t> accept_errors{0}, reclaimed{0}, memory_trims{0};
  std::atomic<int> large_in_flight{0};
  std::uint16_t bound_port = 0;
  std::string bound_address;

  // Declared after everything the coroutines use, so that it is destroyed first.
  asio::io_context ioc;
  std::optional<tcp::acceptor> acceptor;
  // The accept loop's backoff and wait for a free connection slot (on the acceptor's strand).
  std::optional<asio::steady_timer> accept_timer;
  std::optional<asio::steady_timer> reload_timer;
  std::vector<std::thread> threads;
  // Destroyed before the I/O context: a queued handler holds a coroutine waiting on `ioc`.
  WorkerPool workers{options.max_handler_threads};
  WorkerPool large_workers{options.max_large_handlers};  // requests with large bodies

  Impl(ServerOptions o, Router r) : options(std::move(o)), router(std::move(r)) {}

  std::shared_ptr<ssl::context> currentTls() {
    std::lock_guard lock(tls_mutex);
    return tls_context;
  }

  core::Result<void> loadTls(bool count) {
    const auto& cfg = *options.tls;
    auto cert = detail::fingerprintOf(cfg.certificate_file);
    auto key = detail::fingerprintOf(cfg.private_key_file);
    auto ca = cfg.client_ca_file ? detail::fingerprintOf(*cfg.client_ca_file)
                                 : detail::FileFingerprint{};
    auto ctx = detail::makeServerContext(cfg);
    std::lock_guard lock(tls_mutex);
    // Remember what we saw even on failure, so a broken file is reported once per change.
    cert_fp = cert;
    key_fp = key;
    client_ca_fp = ca;
    if (!ctx) {
      if (count) ++reload_failures;
      return ctx.error();
    }
    tls_context = std::move(*ctx);
    if (count) ++reloads;
    return {};
  }

  bool tlsFilesChanged() {
    const auto& cfg = *options.tls;
    std::lock_guard lock(tls_mutex);
    return detail::fingerprintOf(cfg.certificate_file) != cert_fp ||
           detail::fingerprintOf(cfg.private_key_file) != key_fp ||
           (cfg.client_ca_file && detail::fingerprintOf(*cfg.client_ca_file) != client_ca_fp);
  }

  asio::awaitable<void> watchTls() {
    while (!stopping) {
      reload_timer->expires_after(options.tls->reload_check_interval);
      auto [ec] = co_await reload_timer->async_wait(kNoThrow);
      if (ec || stopping) co_return;
      if (!tlsFilesChanged()) continue;
      if (auto r = loadTls(true); !r) {
        spdlog::warn("{}: keeping the previous certificate: {}", options.name, r.error().message);
      } else {
        spdlog::info("{}: reloaded TLS certificate {}", options.name,
                     options.tls->certificate_file);
      }
    }
  }

  std::pair<std::uint64_t, std::shared_ptr<ConnectionControl>> registerConnection(
      asio::any_io_executor executor) {
    auto control = std::make_shared<ConnectionControl>();
    control->executor = std::move(executor);
    std::lock_guard lock(connections_mutex);
    const auto id = next_connection_id++;
    connections.emplace(id, control);
    return {id, control};
  }

  void unregisterConnection(std::uint64_t id) {
    std::lock_guard lock(connections_mutex);
    connections.erase(id);
    connections_cv.notify_all();
    if (waiting_for_slot) {
      waiting_for_slot = false;
      asio::post(accept_timer->get_executor(), [this] { accept_timer->cancel(); });
    }
  }

  // Asks the longest-idle connection to close (connections_mutex held). It may have become busy
  // by the time the close runs on its strand; then it stays open.
  void reclaimIdleConnection() {
    std::shared_ptr<ConnectionControl> oldest;
    std::int64_t oldest_since = 0;
    for (const auto& [id, control] : connections) {
      const auto since = control->idle_since.load();
      if (since != 0 && (!oldest || since < oldest_since)) {
        oldest = control;
        oldest_since = since;
      }
    }
    if (!oldest) return;
    asio::post(oldest->executor, [this, oldest] {
      if (!oldest->close || !oldest->idle()) return;
      ++reclaimed;
      oldest->close();
    });
  }

  [[nodiscard]] bool atConnectionCap() {
    std::lock_guard lock(connections_mutex);
    return connections.size() >= max_connections;
  }

  // True when a connection may be accepted. At max_connections, once a new connection is
  // waiting, makes room by closing the longest-idle connection and waits until one ends. False
  // when the server stops.
  asio::awaitable<bool> waitForConnectionSlot(RateLimitedLog& at_cap_log) {
    while (!stopping) {
      if (!atConnectionCap()) co_return true;
      auto [wec] = co_await acceptor->async_wait(tcp::acceptor::wait_read, kNoThrow);
      if (wec || stopping) co_return false;
      {
        std::lock_guard lock(connections_mutex);
        if (connections.size() < max_connections) co_return true;
        waiting_for_slot = true;
        reclaimIdleConnection();
      }
      if (const auto n = at_cap_log.occur()) {
        spdlog::warn("{}: {} connections open, the limit; closing the longest-idle one to make "
                     "room{}",
                     options.name, max_connections, sinceLastReport(n));
      }
      // Woken by unregisterConnection; the timeout retries when the connection picked for
      // closing had just become busy.
      accept_timer->expires_after(std::chrono::seconds(1));
      co_await accept_timer->async_wait(kNoThrow);
    }
    co_return false;
  }

  asio::awaitable<void> acceptLoop() {
    AcceptBackoff backoff;
    RateLimitedLog accept_error_log, at_cap_log;
    while (!stopping) {
      if (!co_await waitForConnectionSlot(at_cap_log)) co_return;
      auto [ec, socket] = co_await acceptor->async_accept(asio::make_strand(ioc), kNoThrow);
      if (ec) {
        if (stopping || ec == asio::error::operation_aborted) co_return;
        ++accept_errors;
        const auto delay = backoff.next();
        if (const auto n = accept_error_log.occur()) {
          spdlog::warn("{}: accept failed: {}; retrying in {} ms{}", options.name, ec.message(),
                       delay.count(), sinceLastReport(n));
        }
        accept_timer->expires_after(delay);
        co_await accept_timer->async_wait(kNoThrow);
        continue;
      }
      backoff.reset();
      ++accepted;
      // Registered here, not when the session starts, so the count the cap checks is exact.
      auto [id, control] = registerConnection(socket.get_executor());
      auto executor = socket.get_executor();
      asio::co_spawn(executor, session(this, std::move(socket), id, control),
                     asio::detached);
    }
  }

  static Request toRequest(http::request<http::string_body>& in, const std::string& peer,
                           bool tls) {
    Request out;
    out.method = std::string(in.method_string());
    out.target = std::string(in.target());
    const auto q = out.target.find('?');
    out.path = out.target.substr(0, q);
    if (q != std::string::npos) out.query = out.target.substr(q + 1);
    for (const auto& field : in) {
      out.headers.add(std::string(field.name_string()), std::string(field.value()));
    }
    out.body = std::move(in.body());
    out.peer = peer;
    out.tls = tls;
    return out;
  }

  static http::response<http::string_body> toBeast(Response&& r, unsigned version,
                                                   bool keep_alive) {
    http::response<http::string_body> out{static_cast<http::status>(r.status), version};
    for (auto& [k, v] : r.headers.fields()) out.insert(k, v);
    if (out.find(http::field::content_type) == out.end() && !r.body.empty()) {
      out.set(http::field::content_type, "text/plain; charset=utf-8");
    }
    out.body() = std::move(r.body);
    out.keep_alive(keep_alive);
    out.prepare_payload();
    return out;
  }

  Reply handle(const Request& request) {
    ++requests;
    try {
      return router.dispatch(request);
    } catch (const std::exception& e) {
      spdlog::error("{}: handler for {} failed: {}", options.name, request.path, e.what());
      return Reply{Response::text(500, "internal server error\n")};
    }
  }

  // Runs the handler on a worker pool and resumes on the connection's strand with its answer.
  asio::awaitable<Reply> handleOnWorker(Request request, bool large) {
    WorkerPool& pool = large ? large_workers : workers;
    pool.reserve();
    co_return co_await asio::co_spawn(pool.executor(), handleReserved(std::move(request), pool),
                                      asio::use_awaitable);
  }

  // A member coroutine with the request as a parameter, which lives in the coroutine frame (a
  // coroutine lambda's captures live in the closure object, outside it).
  asio::awaitable<Reply> handleReserved(Request request, WorkerPool& pool) {
    struct Release {
      WorkerPool& pool;
      ~Release() { pool.release(); }
    } release{pool};
    co_return handle(request);
  }

  // Counts a request with a large body while it is in flight; when the last one is done (its
  // request, response and parsed documents freed), returns free heap pages to the OS.
  class LargeRequestScope {
   public:
    explicit LargeRequestScope(Impl& impl) : impl_(impl) {}
    ~LargeRequestScope() {
      // trimMemory locks a mutex: only a broken mutex throws, and a destructor cannot report it.
      try {
        if (counted_ && --impl_.large_in_flight == 0) impl_.trimMemory();
      } catch (...) {
      }
    }
    LargeRequestScope(const LargeRequestScope&) = delete;
    LargeRequestScope& operator=(const LargeRequestScope&) = delete;
    // Counts the request as large when `body_bytes` is; returns whether it is.
    bool count(std::size_t body_bytes) {
      const auto threshold = impl_.options.large_body_bytes;
      if (counted_ || threshold == 0 || body_bytes < threshold) return counted_;
      counted_ = true;
      ++impl_.large_in_flight;
      return true;
    }

   private:
    Impl& impl_;
    bool counted_ = false;
  };

  void trimMemory() {
    ++memory_trims;
    // On a worker: trimming walks every arena and may take milliseconds for a large heap.
    workers.reserve();
    asio::post(workers.executor(), [this] {
      ::malloc_trim(0);
      workers.release();
    });
  }

  // After answering a request whose body was not read, half-close and drain what the client is
  // still sending before closing, so that its kernel does not receive a reset that would discard
  // the response (Go's net/http closeWriteAndWait does the same).
  static asio::awaitable<void> lingerAfterEarlyResponse(beast::tcp_stream& lowest) {
    beast::error_code ignored;
    lowest.socket().shutdown(tcp::socket::shutdown_send, ignored);
    std::vector<char> sink(std::size_t{64} * 1024);
    std::size_t drained = 0;
    lowest.expires_after(std::chrono::seconds(2));
    while (drained < std::size_t{64} * 1024 * 1024) {
      auto [ec, n] = co_await lowest.async_read_some(asio::buffer(sink), kNoThrow);
      if (ec) break;
      drained += n;
    }
  }

  // Sends a response whose body comes from a BodySource (a watch): the head with chunked
  // encoding, then a chunk for each piece pull() yields, then the last chunk once it reports the
  // end. Between pulls it waits, without a thread, for the source's wake(), the time pull() asked
  // for, the server stopping (end_stream), or the client's socket becoming readable: a watch
  // client sends nothing while it reads, so readability means it closed or gave up, as Go's
  // net/http server notices with its background read (server.go connReader.backgroundRead). The
  // source is cancelled however the stream ends; the connection is then closed.
  template <class Stream>
  asio::awaitable<void> serveStream(Stream& stream, ConnectionControl& control, Response response,
                                    unsigned version) {
    using namespace asio::experimental::awaitable_operators;
    auto& lowest = beast::get_lowest_layer(stream);
    const auto executor = co_await asio::this_coro::executor;
    // Shared with wake(), which the source may call from any thread until it is cancelled.
    struct WakeState {
      asio::steady_timer timer;
      bool notified = false;  // on the strand
      explicit WakeState(const asio::any_io_executor& e) : timer(e) {}
    };
    auto state = std::make_shared<WakeState>(executor);
    struct CancelAtEnd {
      std::shared_ptr<BodySource> source;
      ConnectionControl& control;
      ~CancelAtEnd() {
        control.end_stream = nullptr;
        source->cancel();
      }
    } guard{std::move(response.stream), control};
    BodySource& source = *guard.source;
    bool ending = false;
    control.end_stream = [&ending, state] {
      ending = true;
      state->timer.cancel();
    };
    source.start([executor, weak = std::weak_ptr<WakeState>(state)] {
      asio::post(executor, [weak] {
        if (auto s = weak.lock()) {
          s->notified = true;
          s->timer.cancel();
        }
      });
    });

    http::response<http::empty_body> head{static_cast<http::status>(response.status), version};
    for (auto& [k, v] : response.headers.fields()) head.insert(k, v);
    head.chunked(true);
    head.keep_alive(false);
    http::response_serializer<http::empty_body> serializer{head};
    lowest.expires_after(options.write_timeout);
    auto [hec, hn] = co_await http::async_write_header(stream, serializer, kNoThrow);
    if (hec) co_return;
    for (;;) {
      if (stopping || ending) break;
      state->notified = false;
      BodySource::Pull pulled = source.pull();
      if (!pulled.data.empty()) {
        lowest.expires_after(options.write_timeout);
        auto [wec, wn] = co_await asio::async_write(
            stream, http::make_chunk(asio::buffer(pulled.data)), kNoThrow);
        if (wec) co_return;
        if (!pulled.end) continue;  // pull again at once: it may have more queued
      }
      if (pulled.end) break;
      if (state->notified) continue;
      lowest.expires_never();
      state->timer.expires_at(pulled.wake_at);
      auto woken = co_await (state->timer.async_wait(kNoThrow) ||
                             lowest.socket().async_wait(tcp::socket::wait_read, kNoThrow));
      if (woken.index() == 1) co_return;  // the client closed (or spoke out of turn)
    }
    lowest.expires_after(options.write_timeout);
    co_await asio::async_write(stream, http::make_chunk_last(), kNoThrow);
  }

  // Serves HTTP/1.1 requests on an established stream (TLS or plain) until the peer closes,
  // an error or timeout occurs, or the server stops.
  template <class Stream>
  asio::awaitable<void> serveRequests(Stream& stream, beast::flat_buffer& buffer,
                                      ConnectionControl& control, const std::string& peer,
                                      bool tls, std::optional<std::string> client_subject,
                                      std::optional<std::string> sni = std::nullopt) {
    auto& lowest = beast::get_lowest_layer(stream);
    for (;;) {
      if (stopping) co_return;
      // Declared first so that it ends after the request and response it counts are freed.
      LargeRequestScope large(*this);
      http::request_parser<http::string_body> parser;
      parser.body_limit(options.body_limit);
      parser.header_limit(64 * 1024);
      if (buffer.size() == 0 && buffer.capacity() > kRetainedReadBuffer) buffer.shrink_to_fit();
      control.setIdle(true);
      lowest.expires_after(options.idle_timeout);
      auto [hec, hn] = co_await http::async_read_header(stream, buffer, parser, kNoThrow);
      control.setIdle(false);
      beast::error_code bec = hec;
      if (!hec) {
        lowest.expires_after(options.read_timeout);
        auto [ec, n] = co_await http::async_read(stream, buffer, parser, kNoThrow);
        bec = ec;
      }
      // A declared Content-Length over the limit fails while reading the header; a chunked
      // body fails while reading the body. Either way the client is told why.
      if (bec == http::error::body_limit) {
        large.count(options.body_limit);
        auto res = toBeast(Response::text(options.oversized_body_status,
                                          "http: request body too large\n"),
                           11, false);
        lowest.expires_after(options.write_timeout);
        auto [wec, wn] = co_await http::async_write(stream, res, kNoThrow);
        if (!wec) co_await lingerAfterEarlyResponse(lowest);
        co_return;
      }
      if (bec) co_return;
      auto& beast_request = parser.get();
      Request request = toRequest(beast_request, peer, tls);
      request.client_certificate_subject = client_subject;
      request.tls_server_name = sni;
      const bool is_large = large.count(request.body.size());
      // Not a conditional expression: GCC 12 destroys the temporaries of a co_await inside
      // one too early (the reply was read after being freed).
      Reply reply;
      if (options.inline_handlers && !is_large) {
        reply = handle(request);
      } else {
        reply = co_await handleOnWorker(std::move(request), is_large);
      }
      if (reply.response.stream) {
        co_await serveStream(stream, control, std::move(reply.response), beast_request.version());
        co_return;
      }
      large.count(reply.response.body.size());
      if (reply.delay.count() > 0) {
        asio::steady_timer timer(co_await asio::this_coro::executor);
        timer.expires_after(reply.delay);
        control.delay_timer = &timer;
        co_await timer.async_wait(kNoThrow);
        control.delay_timer = nullptr;
      }
      if (reply.close_without_response) {
        lowest.close();
        co_return;
      }
      const bool keep_alive = beast_request.keep_alive() && !stopping;
      auto res = toBeast(std::move(reply.response), beast_request.version(), keep_alive);
      lowest.expires_after(options.write_timeout);
      auto [wec, wn] = co_await http::async_write(stream, res, kNoThrow);
      if (wec || !keep_alive) co_return;
    }
  }

  static asio::awaitable<void> session(Impl* self, tcp::socket socket,
                                      std::uint64_t id,
                                      std::shared_ptr<ConnectionControl> control) {
    beast::error_code ignored;
    socket.set_option(tcp::no_delay(true), ignored);
    std::string peer;
    if (auto ep = socket.remote_endpoint(ignored); !ignored) {
      peer = ep.address().to_string() + ":" + std::to_string(ep.port());
    }
    beast::tcp_stream stream(std::move(socket));
    // Runs on the strand when the session ends, so a close() posted by stop() afterwards finds
    // nothing to close.
    struct Unregister {
      Impl* impl;
      std::uint64_t id;
      ConnectionControl* control;
      ~Unregister() {
        control->close = nullptr;
        // A mutex: only a broken one throws, and a destructor cannot report it.
        try {
          impl->unregisterConnection(id);
        } catch (...) {
        }
      }
    } unregister{self, id, control.get()};

    beast::flat_buffer buffer;
    if (!self->options.tls) {
      control->close = [&stream] { stream.socket().close(); };
      co_await self->serveRequests(stream, buffer, *control, peer, false, std::nullopt);
      stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
      co_return;
    }

    stream.expires_after(self->options.handshake_timeout);
    control->close = [&stream] { stream.socket().close(); };
    if (self->options.answer_plaintext_on_tls) {
      control->setIdle(true);
      auto [dec, is_tls] = co_await beast::async_detect_ssl(stream, buffer, kNoThrow);
      control->setIdle(false);
      if (dec) co_return;
      if (!is_tls) {
        co_await asio::async_write(stream, asio::buffer(kPlaintextOnTlsResponse), kNoThrow);
        stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
        co_return;
      }
    }
    auto ctx = self->currentTls();
    beast::ssl_stream<beast::tcp_stream> tls_stream(std::move(stream), *ctx);
    control->close = [&tls_stream] { beast::get_lowest_layer(tls_stream).socket().close(); };
    beast::get_lowest_layer(tls_stream).expires_after(self->options.handshake_timeout);
    control->setIdle(true);
    auto [hec, used] = co_await tls_stream.async_handshake(ssl::stream_base::server,
                                                           buffer.data(), kNoThrow);
    control->setIdle(false);
    if (hec) {
      spdlog::debug("{}: TLS handshake with {} failed: {}", self->options.name, peer,
                    hec.message());
      co_return;
    }
    buffer.consume(used);
    std::optional<std::string> subject;
    if (X509* cert = SSL_get1_peer_certificate(tls_stream.native_handle())) {
      if (SSL_get_verify_result(tls_stream.native_handle()) == X509_V_OK) {
        char name[512];
        X509_NAME_oneline(X509_get_subject_name(cert), name, sizeof name);
        subject = name;
      }
      X509_free(cert);
    }
    std::optional<std::string> sni;
    if (const char* name =
            SSL_get_servername(tls_stream.native_handle(), TLSEXT_NAMETYPE_host_name)) {
      sni = name;
    }
    co_await self->serveRequests(tls_stream, buffer, *control, peer, true, subject, sni);
    // TLS close_notify; only stream_truncated is an expected error here (Beast example). A
    // stopping server does not wait long for the peer's close_notify: an idle pooled client
    // connection is not read by its owner and would never answer.
    beast::get_lowest_layer(tls_stream).expires_after(
        self->stopping ? std::chrono::milliseconds(50) : std::chrono::milliseconds(2000));
    co_await tls_stream.async_shutdown(kNoThrow);
  }

  void closeIdleConnections(bool all) {
    std::lock_guard lock(connections_mutex);
    for (auto& [id, control] : connections) {
      // An init-capture: clang before 16 (the fuzz preset's clang-14) cannot capture a structured
      // binding.
      asio::post(control->executor, [control = control, all] {
        if (!control->close) return;
        // A streamed response (a watch) ends at once, as kube-apiserver ends watches when it
        // starts shutting down (watch.go, ServerShuttingDownCh).
        if (control->end_stream) control->end_stream();
        if (all) {
          if (control->delay_timer) control->delay_timer->cancel();
          control->close();
        } else if (control->idle()) {
          control->close();
        }
      });
    }
  }
};

Server::Server(ServerOptions options, Router router)
    : impl_(std::make_shared<Impl>(std::move(options), std::move(router))) {}

Server::~Server() {
  // stop() throws only std::system_error from a mutex or a thread join that failed, which a
  // destructor cannot report.
  try {
    stop(std::chrono::milliseconds(0));
  } catch (...) {
  }
}

core::Result<void> Server::start() {
  auto& impl = *impl_;
  if (impl.started.exchange(true)) return core::makeError(impl.options.name + ": already started");
  if (impl.options.tls) {
    if (auto r = impl.loadTls(false); !r) return r;
  }
  beast::error_code ec;
  auto address = asio::ip::make_address(impl.options.address, ec);
  if (ec) return core::makeError("invalid listen address \"" + impl.options.address + "\"");
  tcp::endpoint endpoint(address, impl.options.port);
  impl.max_connections =
      impl.options.max_connections > 0 ? impl.options.max_connections : defaultMaxConnections();
  impl.acceptor.emplace(asio::make_strand(impl.ioc));
  impl.acceptor->open(endpoint.protocol(), ec);
  if (!ec) impl.acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) impl.acceptor->bind(endpoint, ec);
  if (!ec) impl.acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return core::makeError("listen tcp " + impl.options.address + ":" +
                           std::to_string(impl.options.port) + ": " + ec.message());
  }
  auto local = impl.acceptor->local_endpoint();
  impl.bound_port = local.port();
  impl.bound_address = local.address().to_string();
  impl.accept_timer.emplace(impl.acceptor->get_executor());
  asio::co_spawn(impl.acceptor->get_executor(), impl.acceptLoop(), asio::detached);
  if (impl.options.tls && impl.options.tls->reload_check_interval.count() > 0) {
    impl.reload_timer.emplace(asio::make_strand(impl.ioc));
    asio::co_spawn(impl.reload_timer->get_executor(), impl.watchTls(), asio::detached);
  }
  const int n = std::max(1, impl.options.threads);
  for (int i = 0; i < n; ++i) {
    impl.threads.emplace_back([self = &impl] { self->ioc.run(); });
  }
  return {};
}

std::uint16_t Server::port() const { return impl_->bound_port; }
std::string Server::address() const { return impl_->bound_address; }

void Server::stop(std::chrono::milliseconds grace) {
  auto& impl = *impl_;
  std::lock_guard stop_lock(impl.stop_mutex);
  if (!impl.started || impl.joined) return;
  impl.stopping = true;
  if (impl.acceptor) {
    asio::post(impl.acceptor->get_executor(), [self = &impl] {
      beast::error_code ignored;
      self->acceptor->close(ignored);
      if (self->accept_timer) self->accept_timer->cancel();
    });
  }
  if (impl.reload_timer) {
    asio::post(impl.reload_timer->get_executor(), [self = &impl] { self->reload_timer->cancel(); });
  }
  // Idle keep-alive connections go now; busy ones finish their response, then close.
  impl.closeIdleConnections(false);
  {
    std::unique_lock lock(impl.connections_mutex);
    impl.connections_cv.wait_for(lock, grace, [&] { return impl.connections.empty(); });
  }
  impl.closeIdleConnections(true);
  {
    std::unique_lock lock(impl.connections_mutex);
    impl.connections_cv.wait_for(lock, std::chrono::seconds(2),
                                 [&] { return impl.connections.empty(); });
  }
  impl.ioc.stop();
  for (auto& t : impl.threads) {
    if (t.joinable()) t.join();
  }
  // Handlers still running finish (their answers go nowhere); queued ones are dropped.
  impl.workers.stop();
  impl.large_workers.stop();
  // The posted close may not have run before the io_context stopped; the threads are gone now,
  // so close directly: the port must refuse connections once stop() returns.
  if (impl.acceptor) {
    beast::error_code ignored;
    impl.acceptor->close(ignored);
  }
  impl.joined = true;
}

core::Result<void> Server::reloadTls() {
  if (!impl_->options.tls) return core::makeError(impl_->options.name + ": TLS is not enabled");
  return impl_->loadTls(true);
}

ServerStats Server::stats() const {
  ServerStats s;
  s.connections_accepted = impl_->accepted;
  s.requests = impl_->requests;
  s.tls_reloads = impl_->reloads;
  s.tls_reload_failures = impl_->reload_failures;
  s.accept_errors = impl_->accept_errors;
  s.idle_connections_reclaimed = impl_->reclaimed;
  s.memory_trims = impl_->memory_trims;
  s.handler_threads = impl_->workers.threads();
  s.max_connections = impl_->max_connections;
  std::lock_guard lock(impl_->connections_mutex);
  s.active_connections = impl_->connections.size();
  return s;
}

void blockTerminationSignals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

int waitForTerminationSignal() {
  blockTerminationSignals();
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  int sig = 0;
  while (sigwait(&set, &sig) != 0) {
  }
  return sig;
}

}  // namespace harness::net
