// The HTTPS server and client over real TLS on 127.0.0.1, port 0.

#include <gtest/gtest.h>

#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "harness/net/client.h"
#include "harness/net/kubeconfig.h"
#include "harness/net/server.h"
#include "harness/testing/loopback_socket.h"
#include "harness/testing/support.h"

namespace harness::net {
namespace {

using namespace std::chrono_literals;
using harness::testing::CertificateRequest;
using harness::testing::generateCertificates;
using harness::testing::readFile;
using harness::testing::ScratchDir;

class TlsServerTest : public ::testing::Test {
 protected:
  void SetUp() override { generateCertificates(dir_.path()); }

  Router echoRouter() {
    Router router;
    router.exact("/echo", [](const Request& r) {
      Response res = Response::text(200, r.method + " " + r.target + " " + r.body);
      res.headers.set("X-Peer-Tls", r.tls ? "yes" : "no");
      if (r.client_certificate_subject) res.headers.set("X-Client", *r.client_certificate_subject);
      if (r.tls_server_name) res.headers.set("X-Sni", *r.tls_server_name);
      return res;
    });
    router.exact("/slow",
                 [](const Request&) { return Reply{Response::text(200, "slow"), 1500ms}; });
    // Answers only after two minutes: a call that returns early was ended by its own deadline.
    router.exact("/never",
                 [](const Request&) { return Reply{Response::text(200, "too late"), 120s}; });
    router.exact("/hangup", [](const Request&) {
      Reply reply;
      reply.close_without_response = true;
      return reply;
    });
    return router;
  }

  void startServer(ServerOptions options = {}) {
    if (!options.tls) {
      options.tls = TlsServerConfig{(dir_ / "tls.crt").string(), (dir_ / "tls.key").string()};
      options.tls->reload_check_interval = 50ms;
    }
    server_ = std::make_unique<Server>(options, echoRouter());
    auto started = server_->start();
    ASSERT_TRUE(started.ok()) << started.error().message;
  }

  // Starts the server with a certificate (made in `dir`) naming only `dns_name`, no IP address.
  void startServerNamedOnly(const ScratchDir& dir, const std::string& dns_name) {
    CertificateRequest request;
    request.dns_names = {dns_name};
    request.ip_addresses = {};
    generateCertificates(dir.path(), request);
    ServerOptions options;
    options.tls = TlsServerConfig{(dir / "tls.crt").string(), (dir / "tls.key").string()};
    startServer(options);
  }

  std::string url(const std::string& path, const std::string& host = "127.0.0.1") const {
    return "https://" + host + ":" + std::to_string(server_->port()) + path;
  }

  ClientOptions trusting() const {
    ClientOptions o;
    o.ca_pem = readFile(dir_ / "ca.crt");
    return o;
  }

  ClientRequest post(const std::string& path, std::string body = "hello") const {
    ClientRequest r;
    r.url = url(path);
    r.body = std::move(body);
    r.headers.set("Content-Type", "application/json");
    r.deadline = std::chrono::steady_clock::now() + 10s;
    return r;
  }

  ScratchDir dir_{"tls"};
  std::unique_ptr<Server> server_;
};

TEST_F(TlsServerTest, ServesARequestOverVerifiedTls) {
  startServer();
  HttpClient client(trusting());
  auto res = client.sendSync(post("/echo?timeout=10s"));
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.body, "POST /echo?timeout=10s hello");
  EXPECT_EQ(res.headers.get("X-Peer-Tls"), "yes");
}

// kube-apiserver never resumes a webhook's TLS session, so the server sends no session tickets
// (TLS 1.3) and keeps no sessions: after a whole request and answer, what the client holds
// cannot be resumed. With OpenSSL's defaults it could (two tickets arrive after the handshake).
TEST_F(TlsServerTest, IssuesNoSessionTicketsAsNoApiServerResumesThem) {
  startServer();
  // Declared before `ssl`, which only borrows the descriptor, so it outlives it. A server that
  // never answers fails the test (the receive timeout), not hangs it.
  const harness::testing::LoopbackSocket socket(server_->port(), std::chrono::seconds(10));
  ASSERT_TRUE(socket.connected());
  const int fd = socket.fd();
  const std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                                 &SSL_CTX_free);
  ASSERT_TRUE(ctx);
  SSL_CTX_set_session_cache_mode(ctx.get(), SSL_SESS_CACHE_CLIENT);
  const std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), &SSL_free);
  ASSERT_TRUE(ssl);
  SSL_set_fd(ssl.get(), fd);
  ASSERT_EQ(SSL_connect(ssl.get()), 1);
  EXPECT_EQ(SSL_version(ssl.get()), TLS1_3_VERSION);
  const std::string request =
      "POST /echo HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n"
      "Connection: close\r\n\r\nhello";
  ASSERT_EQ(SSL_write(ssl.get(), request.data(), static_cast<int>(request.size())),
            static_cast<int>(request.size()));
  std::string answer;
  char buffer[4096];
  for (int n = 0; (n = SSL_read(ssl.get(), buffer, sizeof buffer)) > 0;) answer.append(buffer, n);
  EXPECT_NE(answer.find("POST /echo hello"), std::string::npos) << answer;
  SSL_SESSION* session = SSL_get_session(ssl.get());
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(SSL_SESSION_is_resumable(session), 0);
}

// The TLS 1.3 suite is the one a Go server picks: AES-128-GCM for a client that lists AES-GCM
// first, although OpenSSL's own order (this client's) puts AES-256-GCM first.
TEST_F(TlsServerTest, PicksTheTls13CipherSuiteAGoServerPicks) {
  startServer();
  const harness::testing::LoopbackSocket socket(server_->port(), std::chrono::seconds(10));
  ASSERT_TRUE(socket.connected());
  const std::unique_ptr<SSL_CTX, decltype(&SSL_CTX_free)> ctx(SSL_CTX_new(TLS_client_method()),
                                                                 &SSL_CTX_free);
  ASSERT_TRUE(ctx);
  const std::unique_ptr<SSL, decltype(&SSL_free)> ssl(SSL_new(ctx.get()), &SSL_free);
  ASSERT_TRUE(ssl);
  SSL_set_fd(ssl.get(), socket.fd());
  ASSERT_EQ(SSL_connect(ssl.get()), 1);
  EXPECT_STREQ(SSL_get_cipher_name(ssl.get()), "TLS_AES_128_GCM_SHA256");
}

// The client offers the TLS 1.3 suites in Go's order, as kube-apiserver does: read from the
// ClientHello it sends to a listener that reads it and hangs up (the call then fails).
TEST(HttpClientHello, OffersTheTls13CipherSuitesInGosOrder) {
  const harness::testing::ListeningSocket listener;
  std::vector<unsigned char> hello;
  std::thread reader([&] {
    pollfd ready{listener.fd(), POLLIN, 0};
    if (::poll(&ready, 1, 10'000) != 1) return;  // no connection: the test fails, not hangs
    const int connection = ::accept(listener.fd(), nullptr, nullptr);
    if (connection < 0) return;
    timeval timeout{10, 0};
    ::setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    unsigned char buffer[4096];
    // The record header (5 bytes) says how long the ClientHello is.
    while (hello.size() < 5 || hello.size() < 5u + (hello[3] << 8 | hello[4])) {
      const auto n = ::recv(connection, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      hello.insert(hello.end(), buffer, buffer + n);
    }
    ::close(connection);
  });
  HttpClient client({});
  ClientRequest request;
  request.url = "https://127.0.0.1:" + std::to_string(listener.port()) + "/";
  request.deadline = std::chrono::steady_clock::now() + 10s;
  EXPECT_FALSE(client.sendSync(std::move(request)).ok());
  reader.join();
  // record header 5, handshake header 4, version 2, random 32, session id, then the suites.
  ASSERT_GT(hello.size(), 44u);
  std::size_t at = 5 + 4 + 2 + 32;
  at += 1 + hello[at];
  ASSERT_LT(at + 2, hello.size());
  const std::size_t suites_length = hello[at] << 8 | hello[at + 1];
  at += 2;
  ASSERT_LE(at + suites_length, hello.size());
  std::vector<int> tls13;
  for (std::size_t i = at; i + 1 < at + suites_length; i += 2) {
    const int suite = hello[i] << 8 | hello[i + 1];
    if (suite >= 0x1301 && suite <= 0x1303) tls13.push_back(suite);
  }
  // TLS_AES_128_GCM_SHA256, TLS_AES_256_GCM_SHA384, TLS_CHACHA20_POLY1305_SHA256.
  EXPECT_EQ(tls13, (std::vector<int>{0x1301, 0x1302, 0x1303}));
}

TEST_F(TlsServerTest, ReusesOneKeepAliveConnectionForAThousandSequentialRequests) {
  startServer();
  HttpClient client(trusting());
  for (int i = 0; i < 1000; ++i) {
    auto res = client.sendSync(post("/echo", std::to_string(i)));
    ASSERT_TRUE(res.ok()) << i << ": " << res.error_message;
    ASSERT_EQ(res.body, "POST /echo " + std::to_string(i));
  }
  EXPECT_EQ(client.stats().connections_opened, 1u);
  EXPECT_EQ(client.stats().reused, 999u);
  EXPECT_EQ(server_->stats().connections_accepted, 1u);
  EXPECT_EQ(server_->stats().requests, 1000u);
}

TEST_F(TlsServerTest, ServesConcurrentRequestsOnSeveralConnections) {
  startServer();
  ClientOptions options = trusting();
  options.threads = 2;
  HttpClient client(options);
  std::vector<std::future<ClientResponse>> futures;
  futures.reserve(64);
  for (int i = 0; i < 64; ++i) futures.push_back(client.send(post("/echo", std::to_string(i))));
  for (int i = 0; i < 64; ++i) {
    auto res = futures[i].get();
    ASSERT_TRUE(res.ok()) << res.error_message;
    EXPECT_EQ(res.body, "POST /echo " + std::to_string(i));
  }
  EXPECT_GT(client.stats().connections_opened, 1u);
  EXPECT_LE(client.stats().connections_opened, 64u);
}

// sendSync does its I/O on the calling thread: a client used only through it starts none (it
// handed each request to a thread of its own and waited for the answer, two thread wake-ups a
// request).
TEST_F(TlsServerTest, SendSyncStartsNoThreadOfItsOwn) {
  startServer();
  // The server's own threads (its handler pool grows with the requests it sees) do not count.
  auto clientThreads = [&] {
    return harness::testing::threadCount() - server_->stats().handler_threads;
  };
  const std::size_t before = clientThreads();
  ClientOptions options = trusting();
  options.threads = 4;
  HttpClient client(options);
  for (int i = 0; i < 3; ++i) {
    auto res = client.sendSync(post("/echo", std::to_string(i)));
    ASSERT_TRUE(res.ok()) << res.error_message;
    EXPECT_EQ(res.body, "POST /echo " + std::to_string(i));
  }
  EXPECT_EQ(clientThreads(), before);
  EXPECT_EQ(client.stats().connections_opened, 1u);
  EXPECT_EQ(client.stats().reused, 2u);
  // send() starts the client's threads when first called.
  ASSERT_TRUE(client.send(post("/echo")).get().ok());
  EXPECT_EQ(clientThreads(), before + 4);
}

// The simulator calls validating webhooks from several threads at once through one client: each
// thread runs the io_context of the connection it took, and the connections go back to one pool.
TEST_F(TlsServerTest, SendSyncFromSeveralThreadsSharesOnePool) {
  startServer();
  HttpClient client(trusting());
  constexpr int kThreads = 4;
  constexpr int kEach = 25;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        const std::string body = std::to_string(t) + "-" + std::to_string(i);
        auto res = client.sendSync(post("/echo", body));
        if (!res.ok() || res.body != "POST /echo " + body) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  const ClientStats stats = client.stats();
  EXPECT_EQ(stats.requests, std::uint64_t{kThreads * kEach});
  EXPECT_GE(stats.connections_opened, 1u);
  EXPECT_LE(stats.connections_opened, std::uint64_t{kThreads});
  EXPECT_EQ(stats.reused + stats.connections_opened, std::uint64_t{kThreads * kEach});
}

// A pooled connection that the server closed while idle is noticed and replaced, on the calling
// thread as on the client's: the server stops (closing its idle connection) and another starts
// on the same port.
TEST_F(TlsServerTest, SendSyncReplacesAPooledConnectionTheServerClosed) {
  startServer();
  HttpClient client(trusting());
  ASSERT_TRUE(client.sendSync(post("/echo")).ok());
  const std::uint16_t port = server_->port();
  server_->stop(0ms);
  ServerOptions options;
  options.tls = TlsServerConfig{(dir_ / "tls.crt").string(), (dir_ / "tls.key").string()};
  options.port = port;
  startServer(options);
  auto res = client.sendSync(post("/echo", "again"));
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(res.body, "POST /echo again");
  EXPECT_FALSE(res.reused_connection);
  EXPECT_EQ(client.stats().connections_opened, 2u);
}

TEST_F(TlsServerTest, DeadlineFiresWithGoContextMessage) {
  startServer();
  HttpClient client(trusting());
  auto req = post("/never?timeout=1s");
  req.deadline = std::chrono::steady_clock::now() + 200ms;
  const auto started = std::chrono::steady_clock::now();
  auto res = client.sendSync(req);
  EXPECT_EQ(res.error, ClientErrorKind::kTimeout);
  EXPECT_EQ(res.error_message, "Post \"" + req.url + "\": context deadline exceeded");
  // The answer comes after 120 s: returning well before it proves the deadline ended the call,
  // however slow the machine is.
  EXPECT_LT(std::chrono::steady_clock::now() - started, 60s);
}

TEST_F(TlsServerTest, RejectsAServerSignedByAnotherCa) {
  startServer();
  ScratchDir other{"other-ca"};
  generateCertificates(other.path());
  ClientOptions options;
  options.ca_pem = readFile(other / "ca.crt");
  HttpClient client(options);
  auto req = post("/echo");
  auto res = client.sendSync(req);
  EXPECT_EQ(res.error, ClientErrorKind::kTls);
  EXPECT_EQ(res.error_message, "Post \"" + req.url +
                                   "\": tls: failed to verify certificate: x509: certificate "
                                   "signed by unknown authority");
}

TEST_F(TlsServerTest, RejectsAWrongHostName) {
  startServer();
  HttpClient client(trusting());
  auto req = post("/echo");
  req.url = url("/echo", "webhook.other.svc");
  req.connect_to = "127.0.0.1:" + std::to_string(server_->port());
  auto res = client.sendSync(req);
  EXPECT_EQ(res.error, ClientErrorKind::kTls);
  EXPECT_EQ(res.error_message, "Post \"" + req.url +
                                   "\": tls: failed to verify certificate: x509: certificate is "
                                   "valid for localhost, not webhook.other.svc");
}

TEST_F(TlsServerTest, VerifiesAServiceNameWhileConnectingToLoopback) {
  ScratchDir svc{"svc"};
  startServerNamedOnly(svc, "injector.linkerd.svc");
  ClientOptions client_options;
  client_options.ca_pem = readFile(svc / "ca.crt");
  HttpClient client(client_options);
  auto req = post("/echo");
  req.url = "https://injector.linkerd.svc:443/echo";
  req.connect_to = "127.0.0.1:" + std::to_string(server_->port());
  auto res = client.sendSync(req);
  ASSERT_TRUE(res.ok()) << res.error_message;
  // The same certificate does not cover the IP address.
  auto by_ip = post("/echo");
  auto failed = client.sendSync(by_ip);
  EXPECT_EQ(failed.error_message,
            "Post \"" + by_ip.url +
                "\": tls: failed to verify certificate: x509: cannot validate certificate for "
                "127.0.0.1 because it doesn't contain any IP SANs");
}

// A kubeconfig's tls-server-name (client-go rest.TLSClientConfig.ServerName): the server at
// https://127.0.0.1:<port> has a certificate naming only apiserver.example; the client sends
// that name as SNI and verifies the certificate for it, not for the URL's host.
TEST_F(TlsServerTest, KubeconfigTlsServerNameIsSentAsSniAndVerified) {
  ScratchDir named{"named"};
  startServerNamedOnly(named, "apiserver.example");
  auto kubeconfig = [&](const std::string& server_name) {
    const auto path = named / ("kubeconfig-" + server_name);
    harness::testing::writeFile(
        path, "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n"
              "  cluster:\n    server: https://127.0.0.1:" +
                  std::to_string(server_->port()) +
                  "\n    certificate-authority: ca.crt\n" +
                  (server_name.empty() ? "" : "    tls-server-name: " + server_name + "\n") +
                  "contexts:\n- name: c\n  context: {cluster: k}\n");
    auto connection = loadKubeconfig(path);
    EXPECT_TRUE(connection.ok()) << connection.error().message;
    return clientOptionsFor(*connection, "test");
  };
  ClientRequest get;
  get.method = "GET";
  get.url = url("/echo");
  get.deadline = std::chrono::steady_clock::now() + 10s;

  HttpClient named_client(kubeconfig("apiserver.example"));
  auto res = named_client.sendSync(get);
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(res.status, 200);
  EXPECT_EQ(res.headers.get("X-Sni").value_or("<none>"), "apiserver.example");

  // Without it the URL's host is verified (and, an IP address, not sent as SNI).
  HttpClient plain_client(kubeconfig(""));
  auto by_ip = plain_client.sendSync(get);
  EXPECT_EQ(by_ip.error_message,
            "Get \"" + get.url +
                "\": tls: failed to verify certificate: x509: cannot validate certificate for "
                "127.0.0.1 because it doesn't contain any IP SANs");
  // A name the certificate does not carry fails, naming it (crypto/x509 HostnameError).
  HttpClient wrong_client(kubeconfig("other.example"));
  auto wrong = wrong_client.sendSync(get);
  EXPECT_EQ(wrong.error_message, "Get \"" + get.url +
                                     "\": tls: failed to verify certificate: x509: certificate "
                                     "is valid for apiserver.example, not other.example");
}

TEST_F(TlsServerTest, PicksUpARenewedCertificateWithoutRestart) {
  startServer();
  const std::string old_ca = readFile(dir_ / "ca.crt");
  // A new CA and serving pair written over the files the server watches.
  ScratchDir next{"next"};
  generateCertificates(next.path());
  std::filesystem::copy_file(next / "tls.key", dir_ / "tls.key.tmp");
  std::filesystem::copy_file(next / "tls.crt", dir_ / "tls.crt.tmp");
  std::filesystem::rename(dir_ / "tls.key.tmp", dir_ / "tls.key");
  std::filesystem::rename(dir_ / "tls.crt.tmp", dir_ / "tls.crt");

  ClientOptions new_trust;
  new_trust.ca_pem = readFile(next / "ca.crt");
  bool served = false;
  for (int i = 0; i < 1200 && !served; ++i) {  // up to a minute: reloads are polled
    HttpClient client(new_trust);  // a fresh client: no pooled connection
    served = client.sendSync(post("/echo")).ok();
    if (!served) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(served);
  EXPECT_GE(server_->stats().tls_reloads, 1u);
  ClientOptions old_trust;
  old_trust.ca_pem = old_ca;
  HttpClient stale(old_trust);
  EXPECT_EQ(stale.sendSync(post("/echo")).error, ClientErrorKind::kTls);
}

TEST_F(TlsServerTest, KeepsServingWhenTheNewCertificateIsBroken) {
  startServer();
  harness::testing::writeFile(dir_ / "tls.crt", "not a certificate");
  for (int i = 0; i < 3000 && server_->stats().tls_reload_failures == 0; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  EXPECT_GE(server_->stats().tls_reload_failures, 1u);
  HttpClient client(trusting());
  EXPECT_TRUE(client.sendSync(post("/echo")).ok());
}

TEST_F(TlsServerTest, AnswersPlaintextHttpLikeGo) {
  startServer();
  HttpClient client({});
  ClientRequest req = post("/echo");
  req.url = "http://127.0.0.1:" + std::to_string(server_->port()) + "/echo";
  auto res = client.sendSync(req);
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(res.status, 400);
  EXPECT_EQ(res.body, "Client sent an HTTP request to an HTTPS server.\n");
}

TEST_F(TlsServerTest, RejectsBodiesOverTheLimit) {
  ServerOptions options;
  options.body_limit = 1024;
  options.tls = TlsServerConfig{(dir_ / "tls.crt").string(), (dir_ / "tls.key").string()};
  startServer(options);
  HttpClient client(trusting());
  auto res = client.sendSync(post("/echo", std::string(4096, 'x')));
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(res.headers.get("Connection"), "close");
  EXPECT_EQ(res.status, 413);
  EXPECT_TRUE(client.sendSync(post("/echo", std::string(512, 'x'))).ok());
}

TEST_F(TlsServerTest, ReportsAConnectionClosedWithoutResponseAsEof) {
  startServer();
  HttpClient client(trusting());
  auto req = post("/hangup");
  auto res = client.sendSync(req);
  EXPECT_EQ(res.error, ClientErrorKind::kConnection);
  EXPECT_EQ(res.error_message, "Post \"" + req.url + "\": EOF");
}

TEST_F(TlsServerTest, ReportsConnectionRefusedLikeGo) {
  startServer();
  const auto port = server_->port();
  server_->stop(0ms);
  HttpClient client(trusting());
  ClientRequest req;
  req.url = "https://127.0.0.1:" + std::to_string(port) + "/echo";
  req.deadline = std::chrono::steady_clock::now() + 5s;
  auto res = client.sendSync(req);
  EXPECT_EQ(res.error, ClientErrorKind::kConnect);
  EXPECT_EQ(res.error_message, "Post \"" + req.url + "\": dial tcp 127.0.0.1:" +
                                   std::to_string(port) + ": connect: connection refused");
}

TEST_F(TlsServerTest, GracefulStopFinishesInFlightRequests) {
  startServer();
  HttpClient client(trusting());
  auto in_flight = client.send(post("/slow"));
  // Wait until the handler has the request (its answer is then delayed by 1.5 s).
  for (int i = 0; i < 6000 && server_->stats().requests == 0; ++i) {
    std::this_thread::sleep_for(10ms);
  }
  ASSERT_EQ(server_->stats().requests, 1u);
  const auto stop_started = std::chrono::steady_clock::now();
  server_->stop(120s);
  auto res = in_flight.get();
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(res.body, "slow");
  EXPECT_EQ(res.headers.get("Connection"), "close");
  // Stopping ends when the in-flight answer is sent, not when the 120 s grace period runs out.
  EXPECT_LT(std::chrono::steady_clock::now() - stop_started, 60s);
  EXPECT_EQ(client.sendSync(post("/echo")).error, ClientErrorKind::kConnect);
}

TEST_F(TlsServerTest, StopClosesIdleKeepAliveConnectionsPromptly) {
  startServer();
  HttpClient client(trusting());
  ASSERT_TRUE(client.sendSync(post("/echo")).ok());  // leaves a pooled connection open
  const auto started = std::chrono::steady_clock::now();
  server_->stop(120s);
  // An idle connection does not hold the stop for the 120 s grace period.
  EXPECT_LT(std::chrono::steady_clock::now() - started, 60s);
}

// A stopped and destroyed server frees everything it owns, the router's handlers included. A
// handler posted by stop() and left unrun, or a session suspended when the I/O threads stopped,
// used to own the server's state by shared_ptr while being owned by its io_context: the state,
// its io_context and TLS context were never freed (LeakSanitizer in the asan build).
TEST_F(TlsServerTest, ADestroyedServerFreesItsRouter) {
  for (int round = 0; round < 20; ++round) {
    auto token = std::make_shared<int>(round);
    std::weak_ptr<int> watch = token;
    Router router;
    router.exact("/echo", [token = std::move(token)](const Request&) {
      return Response::text(200, std::to_string(*token));
    });
    ServerOptions options;
    options.tls = TlsServerConfig{(dir_ / "tls.crt").string(), (dir_ / "tls.key").string()};
    options.tls->reload_check_interval = 50ms;  // a reload timer, cancelled by a posted handler
    auto server = std::make_unique<Server>(options, std::move(router));
    ASSERT_TRUE(server->start().ok());
    if (round % 2 == 1) {  // with a session: a pooled keep-alive connection open at stop()
      HttpClient client(trusting());
      ClientRequest request;
      request.url = "https://127.0.0.1:" + std::to_string(server->port()) + "/echo";
      request.deadline = std::chrono::steady_clock::now() + 10s;
      ASSERT_TRUE(client.sendSync(request).ok());
      server.reset();
    } else {
      server.reset();
    }
    EXPECT_TRUE(watch.expired()) << "round " << round << ": the server's state was not freed";
  }
}

TEST_F(TlsServerTest, VerifiesClientCertificatesWhenConfigured) {
  ScratchDir clients{"clients"};
  generateCertificates(clients.path(), CertificateRequest{{}, {}, "apiserver", "", "", true});
  ServerOptions options;
  options.tls = TlsServerConfig{(dir_ / "tls.crt").string(), (dir_ / "tls.key").string()};
  options.tls->client_ca_file = (clients / "ca.crt").string();
  options.tls->require_client_certificate = true;
  startServer(options);

  HttpClient anonymous(trusting());
  EXPECT_FALSE(anonymous.sendSync(post("/echo")).ok());

  ClientOptions with_cert = trusting();
  with_cert.client_certificate_pem = readFile(clients / "tls.crt");
  with_cert.client_key_pem = readFile(clients / "tls.key");
  HttpClient authenticated(with_cert);
  auto res = authenticated.sendSync(post("/echo"));
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(res.headers.get("X-Client"), "/CN=apiserver");
}

TEST(PlainServer, ServesHttpWithoutTls) {
  Router router;
  router.exact("/healthz", [](const Request&) { return Response::text(200, "ok"); });
  ServerOptions options;
  Server server(options, std::move(router));
  ASSERT_TRUE(server.start().ok());
  HttpClient client({});
  ClientRequest req;
  req.method = "GET";
  req.url = "http://127.0.0.1:" + std::to_string(server.port()) + "/healthz";
  auto res = client.sendSync(req);
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(res.body, "ok");
  req.url = "http://127.0.0.1:" + std::to_string(server.port()) + "/nope";
  EXPECT_EQ(client.sendSync(req).status, 404);
}

TEST(PlainServer, StartFailsWithAClearMessageForABadCertificatePath) {
  ServerOptions options;
  options.tls = TlsServerConfig{"/nonexistent/tls.crt", "/nonexistent/tls.key"};
  Server server(options, Router{});
  auto started = server.start();
  ASSERT_FALSE(started.ok());
  EXPECT_NE(started.error().message.find("/nonexistent/tls.crt"), std::string::npos);
}

}  // namespace
}  // namespace harness::net
