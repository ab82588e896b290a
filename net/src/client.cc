#include "harness/net/client.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <variant>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "harness/core/recent_cache.h"
#include "harness/net/url.h"
#include "tls_support.h"

namespace harness::net {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
namespace ssl = asio::ssl;
using tcp = asio::ip::tcp;

namespace {

constexpr auto kNoThrow = asio::as_tuple(asio::use_awaitable);

using TlsStream = beast::ssl_stream<beast::tcp_stream>;

struct Connection {
  // The io_context of a connection made by sendSync, run by the thread that uses the connection
  // (null for send()'s, which live on the client's own threads). First: destroyed last.
  std::shared_ptr<asio::io_context> own;
  std::unique_ptr<beast::tcp_stream> plain;
  std::unique_ptr<TlsStream> tls;
  beast::flat_buffer buffer;
  std::chrono::steady_clock::time_point idle_since;

  beast::tcp_stream& lowest() { return plain ? *plain : beast::get_lowest_layer(*tls); }
};

// Go's syscall error texts (lower case) for the errors a dial usually meets.
std::string goSyscallText(const beast::error_code& ec) {
  if (ec == asio::error::connection_refused) return "connection refused";
  if (ec == asio::error::network_unreachable) return "network is unreachable";
  if (ec == asio::error::host_unreachable) return "no route to host";
  if (ec == asio::error::connection_reset) return "connection reset by peer";
  if (ec == asio::error::broken_pipe) return "broken pipe";
  if (ec == asio::error::timed_out) return "connection timed out";
  std::string m = ec.message();
  if (!m.empty()) m[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(m[0])));
  return m;
}

std::string goMethodName(const std::string& method) {
  // url.Error.Op is the method with only the first letter upper-case ("Post", "Get").
  std::string op;
  for (size_t i = 0; i < method.size(); ++i) {
    const auto c = static_cast<unsigned char>(method[i]);
    op.push_back(static_cast<char>(i == 0 ? std::toupper(c) : std::tolower(c)));
  }
  return op;
}

// True when a pooled connection was closed (or sent something unexpected) while idle; Go's
// transport notices this through its background read loop.
bool idleConnectionBroken(Connection& c) {
  char byte;
  const auto fd = c.lowest().socket().native_handle();
  const auto n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  if (n == 0 || n > 0) return true;
  return !(errno == EAGAIN || errno == EWOULDBLOCK);
}

// CA bundles parsed once per process: a webhook caller makes a client per caBundle and every
// scenario makes its callers anew, so the same PEM was decoded again and again (issue 19). An
// X509_STORE is reference-counted and, once filled, read under its own lock by the SSL_CTXs and
// threads that verify with it. The few most recent bundles are kept.
using StorePtr = std::shared_ptr<X509_STORE>;

StorePtr makeCaStore(const std::string& pem) {
  StorePtr store(X509_STORE_new(), X509_STORE_free);
  if (!store) return nullptr;
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  int added = 0;
  while (X509* cert = bio ? PEM_read_bio_X509(bio, nullptr, nullptr, nullptr) : nullptr) {
    if (X509_STORE_add_cert(store.get(), cert) == 1) ++added;
    X509_free(cert);
  }
  BIO_free(bio);
  ERR_clear_error();
  return added == 0 ? nullptr : store;
}

// The store of `pem`'s certificates; null when it holds none (not kept: nothing to reuse).
StorePtr sharedCaStore(const std::string& pem) {
  static core::RecentCache<std::string, StorePtr> stores(8);
  return stores.findOrMake(
      pem, [&pem] { return makeCaStore(pem); }, [](const StorePtr& store) { return !!store; });
}

// A client TLS context: the roots and the client certificate of one ClientOptions, or why they
// do not load.
struct ClientTls {
  std::shared_ptr<ssl::context> context;
  std::string setup_error;
};

ClientTls makeClientTls(const ClientOptions& options) {
  ClientTls out{std::make_shared<ssl::context>(ssl::context::tls_client), {}};
  SSL_CTX* ctx = out.context->native_handle();
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_ciphersuites(ctx, detail::kGoTls13CipherSuites);
  ERR_clear_error();
  if (!options.ca_pem.empty()) {
    if (StorePtr store = sharedCaStore(options.ca_pem)) {
      SSL_CTX_set1_cert_store(ctx, store.get());  // takes its own reference
    } else {
      out.setup_error = "unable to load root certificates: no PEM certificate";
    }
  } else {
    SSL_CTX_set_default_verify_paths(ctx);
  }
  if (!options.client_certificate_pem.empty()) {
    beast::error_code ec;
    out.context->use_certificate_chain(asio::buffer(options.client_certificate_pem), ec);
    if (!ec) {
      out.context->use_private_key(asio::buffer(options.client_key_pem), ssl::context::pem, ec);
    }
    if (ec) out.setup_error = "tls: failed to load client certificate: " + ec.message();
  }
  return out;
}

// The TLS context for these roots and client certificate, shared by the clients that use the
// same ones: OpenSSL 3 spends over a million instructions on a new SSL_CTX, more with the system
// roots, and the simulator starts a client per webhook host per scenario (issue 19). Nothing
// changes a context once made (per-connection settings go on the SSL), and OpenSSL lets many
// threads make connections from one.
ClientTls sharedClientTls(const ClientOptions& options) {
  using Key = std::tuple<std::string, std::string, std::string>;
  static core::RecentCache<Key, ClientTls> contexts(8);
  return contexts.findOrMake(
      Key{options.ca_pem, options.client_certificate_pem, options.client_key_pem},
      [&options] { return makeClientTls(options); });
}

}  // namespace

struct HttpClient::Impl : std::enable_shared_from_this<HttpClient::Impl> {
  ClientOptions options;
  std::shared_ptr<ssl::context> tls;
  std::string tls_setup_error;

  std::mutex pool_mutex;
  std::unordered_map<std::string, std::vector<std::unique_ptr<Connection>>> idle;

  std::atomic<std::uint64_t> opened{0}, requests{0}, reused{0};

  // send()'s io_context and threads, started by the first send(). Declared after everything the
  // coroutines use, so that it is destroyed first.
  asio::io_context ioc;
  std::optional<asio::executor_work_guard<asio::io_context::executor_type>> work;
  std::once_flag threads_started;
  std::vector<std::thread> threads;

  explicit Impl(ClientOptions o) : options(std::move(o)) {
    ClientTls shared = sharedClientTls(options);
    tls = std::move(shared.context);
    tls_setup_error = std::move(shared.setup_error);
  }

  std::unique_ptr<Connection> takeIdle(const std::string& key) {
    std::lock_guard lock(pool_mutex);
    auto it = idle.find(key);
    if (it == idle.end()) return nullptr;
    auto& list = it->second;
    while (!list.empty()) {
      auto conn = std::move(list.back());
      list.pop_back();
      const bool expired = std::chrono::steady_clock::now() - conn->idle_since >
                           options.idle_connection_timeout;
      if (!expired && !idleConnectionBroken(*conn)) return conn;
    }
    return nullptr;
  }

  void putIdle(const std::string& key, std::unique_ptr<Connection> conn) {
    conn->idle_since = std::chrono::steady_clock::now();
    conn->lowest().expires_never();
    std::lock_guard lock(pool_mutex);
    auto& list = idle[key];
    if (list.size() < options.max_idle_per_endpoint) list.push_back(std::move(conn));
  }

  struct Failure {
    ClientErrorKind kind;
    std::string text;
  };

  // Opens a connection (TCP + TLS handshake with verification) whose I/O runs on `io`.
  asio::awaitable<std::variant<std::unique_ptr<Connection>, Failure>> open(
      asio::io_context& io, const Url& url, const std::optional<std::string>& connect_to,
      std::chrono::steady_clock::time_point deadline) {
    std::string host = url.host;
    std::string port = std::to_string(url.port);
    if (connect_to) {
      const auto colon = connect_to->rfind(':');
      host = connect_to->substr(0, colon);
      if (colon != std::string::npos) port = connect_to->substr(colon + 1);
      if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
    }
    tcp::resolver::results_type results;
    beast::error_code not_ip;
    const asio::ip::address ip = asio::ip::make_address(host, not_ip);
    unsigned short port_number = 0;
    const auto [port_end, port_error] =
        std::from_chars(port.data(), port.data() + port.size(), port_number);
    if (!not_ip && port_error == std::errc() && port_end == port.data() + port.size()) {
      // An address and a port number need no lookup (and asio's resolver would start a thread
      // on every io_context it serves).
      results = tcp::resolver::results_type::create(tcp::endpoint(ip, port_number), host, port);
    } else {
      tcp::resolver resolver(io);
      auto [rec, resolved] = co_await resolver.async_resolve(host, port, kNoThrow);
      if (rec) {
        co_return Failure{ClientErrorKind::kConnect,
                          "dial tcp: lookup " + host + ": no such host"};
      }
      results = std::move(resolved);
    }
    auto conn = std::make_unique<Connection>();
    beast::tcp_stream stream(io);
    if (deadline == std::chrono::steady_clock::time_point::max()) {
      stream.expires_never();
    } else {
      stream.expires_at(deadline);
    }
    auto [cec, endpoint] = co_await stream.async_connect(results, kNoThrow);
    if (cec) {
      if (cec == beast::error::timeout) co_return Failure{ClientErrorKind::kTimeout, ""};
      const auto& first = results.begin()->endpoint();
      std::string addr = first.address().is_v6() ? "[" + first.address().to_string() + "]"
                                                 : first.address().to_string();
      co_return Failure{ClientErrorKind::kConnect, "dial tcp " + addr + ":" +
                                                       std::to_string(first.port()) +
                                                       ": connect: " + goSyscallText(cec)};
    }
    ++opened;
    beast::error_code ignored;
    stream.socket().set_option(tcp::no_delay(true), ignored);
    if (url.scheme == "http") {
      conn->plain = std::make_unique<beast::tcp_stream>(std::move(stream));
      co_return conn;
    }
    if (!tls_setup_error.empty()) co_return Failure{ClientErrorKind::kTls, tls_setup_error};
    conn->tls = std::make_unique<TlsStream>(std::move(stream), *tls);
    SSL* native = conn->tls->native_handle();
    // The name the certificate must carry: options.server_name when set (net/http
    // transport.go: the URL's host only when tls.Config.ServerName is empty).
    const std::string& verify_host = options.server_name.empty() ? url.host : options.server_name;
    bool verify_is_ip = url.host_is_ip;
    if (!options.server_name.empty()) {
      beast::error_code not_ip;
      asio::ip::make_address(options.server_name, not_ip);
      verify_is_ip = !not_ip;
    }
    if (!verify_is_ip) SSL_set_tlsext_host_name(native, verify_host.c_str());
    struct Verification {
      X509* leaf = nullptr;
      ~Verification() {
        if (leaf) X509_free(leaf);
      }
    };
    auto verification = std::make_shared<Verification>();
    if (!options.insecure_skip_verify) {
      X509_VERIFY_PARAM* param = SSL_get0_param(native);
      X509_VERIFY_PARAM_set_hostflags(
          param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS | X509_CHECK_FLAG_NEVER_CHECK_SUBJECT);
      if (verify_is_ip) {
        X509_VERIFY_PARAM_set1_ip_asc(param, verify_host.c_str());
      } else {
        X509_VERIFY_PARAM_set1_host(param, verify_host.c_str(), 0);
      }
      conn->tls->set_verify_mode(ssl::verify_peer);
      conn->tls->set_verify_callback(
          [verification](bool preverified, ssl::verify_context& vctx) {
            X509_STORE_CTX* store = vctx.native_handle();
            if (X509_STORE_CTX_get_error_depth(store) == 0 && !verification->leaf) {
              if (X509* cert = X509_STORE_CTX_get_current_cert(store)) {
                X509_up_ref(cert);
                verification->leaf = cert;
              }
            }
            return preverified;
          },
          ignored);
    } else {
      conn->tls->set_verify_mode(ssl::verify_none);
    }
    auto [hec] = co_await conn->tls->async_handshake(ssl::stream_base::client, kNoThrow);
    if (hec) {
      if (hec == beast::error::timeout) co_return Failure{ClientErrorKind::kTimeout, ""};
      const long verify = SSL_get_verify_result(native);
      if (!options.insecure_skip_verify && verify != X509_V_OK) {
        co_return Failure{ClientErrorKind::kTls,
                          "tls: failed to verify certificate: " +
                              detail::describeVerifyFailure(verify, verification->leaf, verify_host,
                                                            verify_is_ip)};
      }
      if (hec == asio::error::eof || hec == ssl::error::stream_truncated) {
        co_return Failure{ClientErrorKind::kTls, "EOF"};
      }
      co_return Failure{ClientErrorKind::kTls, "tls: " + hec.message()};
    }
    co_return conn;
  }

  template <class Stream>
  asio::awaitable<std::variant<http::response<http::string_body>, beast::error_code>> exchange(
      Stream& stream, Connection& conn, http::request<http::string_body>& req,
      bool* wrote_anything) {
    auto [wec, wn] = co_await http::async_write(stream, req, kNoThrow);
    *wrote_anything = wn > 0 && !wec;
    if (wec) co_return wec;
    http::response_parser<http::string_body> parser;
    parser.body_limit(options.response_body_limit);
    parser.header_limit(1024 * 1024);
    auto [rec, rn] = co_await http::async_read(stream, conn.buffer, parser, kNoThrow);
    if (rec) co_return rec;
    co_return parser.release();
  }

  // Where a call's connections live. send(): on the client's io_context, taken from and given
  // back to the pool here. sendSync(): on one io_context run by the calling thread; sendSync
  // takes the pooled connection (`first`, whose io_context it runs) and pools what is left in
  // `*keep` once the io_context stopped, so that no other thread runs it meanwhile.
  struct Lane {
    asio::io_context* io = nullptr;
    std::shared_ptr<asio::io_context> own;  // sendSync's io_context
    std::unique_ptr<Connection> first;
    std::unique_ptr<Connection>* keep = nullptr;
  };

  // The pool of an endpoint; sendSync's connections (each with its own io_context) apart.
  static std::string poolKey(const Url& url, const ClientRequest& request, bool sync) {
    return url.scheme + "://" + url.hostPort() + "@" + request.connect_to.value_or("") +
           (sync ? "#sync" : "");
  }

  asio::awaitable<ClientResponse> call(ClientRequest request, Lane lane) {
    ++requests;
    ClientResponse out;
    const std::string prefix = goMethodName(request.method) + " \"" + request.url + "\": ";
    auto fail = [&](ClientErrorKind kind, const std::string& text) {
      out.error = kind;
      out.error_message =
          prefix + (kind == ClientErrorKind::kTimeout ? "context deadline exceeded" : text);
      return out;
    };
    auto url = parseUrl(request.url);
    if (!url) co_return fail(ClientErrorKind::kBadUrl, url.error().message);
    if (std::chrono::steady_clock::now() >= request.deadline) {
      co_return fail(ClientErrorKind::kTimeout, "");
    }
    const bool sync = lane.keep != nullptr;
    const std::string key = poolKey(*url, request, sync);

    http::request<http::string_body> req{http::string_to_verb(request.method), url->target, 11};
    if (req.method() == http::verb::unknown) req.method_string(request.method);
    const bool default_port = (url->scheme == "https" && url->port == 443) ||
                              (url->scheme == "http" && url->port == 80);
    const std::string bracketed = url->host.find(':') != std::string::npos
                                      ? "[" + url->host + "]"
                                      : url->host;
    req.set(http::field::host,
            default_port ? bracketed : bracketed + ":" + std::to_string(url->port));
    req.set(http::field::user_agent, options.user_agent);
    // A header given once replaces the client's default (Host, User-Agent); one given several
    // times is sent several times (Impersonate-Group: one field per group, as client-go sends).
    std::set<std::string> given;
    for (const auto& [k, v] : request.headers.fields()) {
      std::string lower = k;
      for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (given.insert(lower).second) {
        req.set(k, v);
      } else {
        req.insert(k, v);
      }
    }
    req.body() = request.body;
    req.keep_alive(true);
    req.prepare_payload();

    for (int attempt = 0; attempt < 2; ++attempt) {
      // sendSync's io_context runs only the connection it took (or opens).
      auto conn = sync ? std::move(lane.first) : takeIdle(key);
      const bool reused_conn = conn != nullptr;
      if (!conn) {
        auto opened_conn = co_await open(*lane.io, *url, request.connect_to, request.deadline);
        if (auto* f = std::get_if<Failure>(&opened_conn)) co_return fail(f->kind, f->text);
        conn = std::move(std::get<0>(opened_conn));
        conn->own = lane.own;
      }
      if (request.deadline == std::chrono::steady_clock::time_point::max()) {
        conn->lowest().expires_never();
      } else {
        conn->lowest().expires_at(request.deadline);
      }
      bool wrote = false;
      // (GCC 12 miscompiles co_await inside a conditional expression: keep this an if.)
      std::variant<http::response<http::string_body>, beast::error_code> result;
      if (conn->plain) {
        result = co_await exchange(*conn->plain, *conn, req, &wrote);
      } else {
        result = co_await exchange(*conn->tls, *conn, req, &wrote);
      }
      if (auto* ec = std::get_if<beast::error_code>(&result)) {
        if (*ec == beast::error::timeout) co_return fail(ClientErrorKind::kTimeout, "");
        // A reused connection that broke before the request went out is retried once on a
        // fresh one (Go: nothingWrittenError is retryable).
        if (reused_conn && !wrote && attempt == 0) continue;
        if (*ec == http::error::end_of_stream || *ec == asio::error::eof ||
            *ec == ssl::error::stream_truncated) {
          co_return fail(ClientErrorKind::kConnection, "EOF");
        }
        if (*ec == http::error::body_limit) {
          co_return fail(ClientErrorKind::kProtocol, "http: response body too large");
        }
        if (ec->category() == http::make_error_code(http::error::bad_version).category()) {
          co_return fail(ClientErrorKind::kProtocol, "net/http: malformed HTTP response: " +
                                                         ec->message());
        }
        co_return fail(ClientErrorKind::kConnection, "read: " + goSyscallText(*ec));
      }
      auto& res = std::get<0>(result);
      out.status = static_cast<int>(res.result_int());  // 0 to 999: Beast parses three digits
      for (const auto& field : res) {
        out.headers.add(std::string(field.name_string()), std::string(field.value()));
      }
      out.body = std::move(res.body());
      out.reused_connection = reused_conn;
      if (reused_conn) ++reused;
      if (res.keep_alive() && !res.need_eof()) {
        if (sync) {
          *lane.keep = std::move(conn);
        } else {
          putIdle(key, std::move(conn));
        }
      }
      co_return out;
    }
    co_return fail(ClientErrorKind::kConnection, "EOF");
  }
};

namespace {

// What a coroutine that threw leaves the caller: a broken connection with the exception's text.
ClientResponse responseOf(const std::exception_ptr& e, ClientResponse response) {
  if (!e) return response;
  ClientResponse failed;
  failed.error = ClientErrorKind::kConnection;
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    failed.error_message = ex.what();
  }
  return failed;
}

}  // namespace

HttpClient::HttpClient(ClientOptions options) : impl_(std::make_shared<Impl>(std::move(options))) {
  impl_->work.emplace(impl_->ioc.get_executor());
}

HttpClient::~HttpClient() {
  impl_->work.reset();
  {
    std::lock_guard lock(impl_->pool_mutex);
    impl_->idle.clear();
  }
  impl_->ioc.stop();
  for (auto& t : impl_->threads) {
    if (t.joinable()) t.join();
  }
}

std::future<ClientResponse> HttpClient::send(ClientRequest request) {
  Impl& impl = *impl_;
  std::call_once(impl.threads_started, [&impl] {
    const int n = std::max(1, impl.options.threads);
    for (int i = 0; i < n; ++i) impl.threads.emplace_back([&impl] { impl.ioc.run(); });
  });
  auto promise = std::make_shared<std::promise<ClientResponse>>();
  auto future = promise->get_future();
  Impl::Lane lane;
  lane.io = &impl.ioc;
  asio::co_spawn(asio::make_strand(impl.ioc), impl.call(std::move(request), std::move(lane)),
                 [promise](const std::exception_ptr& e, ClientResponse response) {
                   promise->set_value(responseOf(e, std::move(response)));
                 });
  return future;
}

ClientResponse HttpClient::sendSync(ClientRequest request) {
  // The calling thread does the I/O: a request handed to a client thread and its answer handed
  // back cost two thread wake-ups, as much as the exchange itself on loopback (issue 19). Each
  // connection keeps its own io_context, run here by the one thread that took the connection.
  Impl& impl = *impl_;
  std::string key;
  Impl::Lane lane;
  if (auto url = parseUrl(request.url)) {
    key = Impl::poolKey(*url, request, true);
    lane.first = impl.takeIdle(key);
    if (lane.first && !lane.first->own) lane.first.reset();  // not one of sendSync's
  }
  std::shared_ptr<asio::io_context> io =
      lane.first ? lane.first->own : std::make_shared<asio::io_context>(1);
  lane.io = io.get();
  lane.own = io;
  std::unique_ptr<Connection> keep;
  lane.keep = &keep;
  std::optional<ClientResponse> out;
  asio::co_spawn(*io, impl.call(std::move(request), std::move(lane)),
                 [&out](const std::exception_ptr& e, ClientResponse response) {
                   out = responseOf(e, std::move(response));
                 });
  io->restart();
  io->run();
  // Pooled only now that no thread runs its io_context.
  if (keep) impl.putIdle(key, std::move(keep));
  if (!out) {
    ClientResponse failed;
    failed.error = ClientErrorKind::kConnection;
    failed.error_message = "the request did not complete";
    return failed;
  }
  return std::move(*out);
}

ClientStats HttpClient::stats() const {
  return {impl_->opened.load(), impl_->requests.load(), impl_->reused.load()};
}

void HttpClient::closeIdle() {
  std::lock_guard lock(impl_->pool_mutex);
  impl_->idle.clear();
}

}  // namespace harness::net
