// `injector serve` under faults, as a process over real TLS: a Kubernetes API server that does
// not answer must not stall the webhook port, and --client-ca-file makes it require client
// certificates (mutual TLS).

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <mutex>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "harness/go/base64.h"
#include "harness/net/client.h"
#include "harness/net/server.h"
#include "harness/testing/support.h"
#include "served_injector.h"

namespace harness::injector {
namespace {

using namespace std::chrono_literals;
using json = nlohmann::json;
namespace t = harness::testing;

// A Kubernetes API server whose GETs of namespace "slow-app" wait until release(); namespace
// "fast-app" and event POSTs are answered at once.
class StalledApiServer {
 public:
  explicit StalledApiServer(const std::filesystem::path& certs) {
    net::Router router;
    router.fallback([this](const net::Request& r) { return serve(r); });
    net::ServerOptions o;
    o.tls = net::TlsServerConfig{(certs / "tls.crt").string(), (certs / "tls.key").string()};
    server_ = std::make_unique<net::Server>(o, std::move(router));
    if (auto started = server_->start(); !started) throw std::runtime_error(started.error().message);
  }
  // Releases the waiting requests before the server stops.
  ~StalledApiServer() {
    release();
    server_->stop();
  }

  std::uint16_t port() const { return server_->port(); }

  int stalled() {
    std::lock_guard lock(mutex_);
    return stalled_;
  }
  void release() {
    std::lock_guard lock(mutex_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  net::Response serve(const net::Request& r) {
    if (r.method == "POST") return net::Response::json(201, r.body);
    const std::string prefix = "/api/v1/namespaces/";
    const std::string name = r.path.starts_with(prefix) ? r.path.substr(prefix.size()) : "";
    if (name == "slow-app") {
      std::unique_lock lock(mutex_);
      ++stalled_;
      cv_.wait(lock, [this] { return released_; });
      --stalled_;
    }
    if (name != "slow-app" && name != "fast-app") {
      return net::Response::json(404, json{{"kind", "Status"}, {"apiVersion", "v1"},
                                           {"status", "Failure"}, {"reason", "NotFound"},
                                           {"code", 404}}
                                          .dump());
    }
    return net::Response::json(
        200, json{{"apiVersion", "v1"},
                  {"kind", "Namespace"},
                  {"metadata", {{"name", name}, {"annotations", {{"linkerd.io/inject", "enabled"}}}}}}
                 .dump());
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  int stalled_ = 0;
  bool released_ = false;
  std::unique_ptr<net::Server> server_;
};

std::string podReview(const std::string& ns, const std::string& uid) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "app-" + uid}, {"namespace", ns}}},
              {"spec", {{"containers", {{{"name", "app"}, {"image", "nginx"}}}}}}};
  return json{{"apiVersion", "admission.k8s.io/v1"},
              {"kind", "AdmissionReview"},
              {"request",
               {{"uid", uid},
                {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
                {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
                {"namespace", ns},
                {"operation", "CREATE"},
                {"userInfo", {{"username", "admin"}}},
                {"object", pod},
                {"dryRun", false}}}}
      .dump();
}

class ServeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t::generateCertificates(dir_ / "webhook");
    t::writeFile(dir_ / "values.yaml", "proxy:\n  logLevel: warn,linkerd=info\n");
    t::writeFile(dir_ / "trust.pem", t::readFile(dir_ / "webhook" / "ca.crt"));
  }
  void TearDown() override { injector_.stop(); }

  std::vector<std::string> serveArgs() const {
    return {HARNESS_INJECTOR_BINARY, "serve", "--address", "127.0.0.1", "--port", "0",
            "--admin-port", "0",
            "--tls-cert", (dir_ / "webhook" / "tls.crt").string(),
            "--tls-key", (dir_ / "webhook" / "tls.key").string(),
            "--values", (dir_ / "values.yaml").string(),
            "--trust-anchors", (dir_ / "trust.pem").string()};
  }

  net::ClientOptions trustingWebhook() const {
    net::ClientOptions o;
    o.ca_pem = t::readFile(dir_ / "webhook" / "ca.crt");
    return o;
  }

  net::ClientRequest request(const std::string& method, const std::string& path,
                             std::string body = "") const {
    net::ClientRequest r;
    r.method = method;
    r.url = injector_.webhookUrl(path);
    if (!body.empty()) r.headers.set("Content-Type", "application/json");
    r.body = std::move(body);
    r.deadline = std::chrono::steady_clock::now() + 10s;
    return r;
  }

  t::ScratchDir dir_{"serve"};
  tests::ServedInjector injector_;
};

TEST_F(ServeTest, AStalledKubernetesApiDoesNotStallTheWebhookPort) {
  t::generateCertificates(dir_ / "api");
  StalledApiServer api(dir_ / "api");
  t::writeFile(dir_ / "kubeconfig",
               "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
               "clusters:\n- name: stalled\n  cluster:\n    server: https://127.0.0.1:" +
                   std::to_string(api.port()) + "\n    certificate-authority-data: " +
                   go::base64Encode(t::readFile(dir_ / "api" / "ca.crt")) +
                   "\nusers:\n- name: injector\n  user:\n    token: t\n"
                   "contexts:\n- name: test\n  context:\n    cluster: stalled\n    user: injector\n");
  auto args = serveArgs();
  // As many I/O threads as stalled lookups below: before handlers had their own pool, these two
  // lookups took every I/O thread until the API client's 10 s timeout.
  for (const char* a : {"--threads", "2", "--kubeconfig"}) args.emplace_back(a);
  args.push_back((dir_ / "kubeconfig").string());
  ASSERT_NO_FATAL_FAILURE(injector_.start(dir_.path(), args));

  net::ClientOptions options = trustingWebhook();
  options.threads = 2;
  net::HttpClient client(options);
  std::vector<std::future<net::ClientResponse>> stalled;
  for (const char* uid : {"slow-1", "slow-2"}) {
    stalled.push_back(client.send(request("POST", "/", podReview("slow-app", uid))));
  }
  for (int i = 0; i < 1000 && api.stalled() < 2; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(api.stalled(), 2) << injector_.log();

  // While both lookups wait: a review whose lookups are answered, and the readiness probe.
  auto fast = client.sendSync(request("POST", "/", podReview("fast-app", "fast-1")));
  ASSERT_TRUE(fast.ok()) << fast.error_message;
  ASSERT_EQ(fast.status, 200) << fast.body;
  auto review = json::parse(fast.body);
  EXPECT_EQ(review["response"]["uid"], "fast-1");
  EXPECT_EQ(review["response"]["allowed"], true);
  EXPECT_EQ(client.sendSync(request("GET", "/readyz")).status, 200);
  // The stalled reviews were still waiting: the answers above did not come from their timeout.
  EXPECT_EQ(api.stalled(), 2);
  for (auto& f : stalled) EXPECT_EQ(f.wait_for(0s), std::future_status::timeout);

  api.release();
  for (auto& f : stalled) {
    auto res = f.get();
    ASSERT_TRUE(res.ok()) << res.error_message;
    EXPECT_EQ(res.status, 200) << res.body;
    EXPECT_EQ(json::parse(res.body)["response"]["allowed"], true);
  }
}

TEST_F(ServeTest, WithObjectFilesReviewsAreAnsweredOnTheIoThread) {
  // No API server: nothing a handler does waits on the network, so it runs where the request
  // was read (as Go's net/http runs it on the connection's goroutine) and no worker starts.
  t::writeFile(dir_ / "namespace.yaml",
               "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: fast-app\n");
  auto args = serveArgs();
  for (const char* a : {"--threads", "1", "--objects"}) args.emplace_back(a);
  args.push_back((dir_ / "namespace.yaml").string());
  ASSERT_NO_FATAL_FAILURE(injector_.start(dir_.path(), args));
  // Counted once the ports file is written: both servers have started their threads.
  const std::size_t threads = t::threadCount(injector_.pid());
  net::ClientOptions options = trustingWebhook();
  options.threads = 2;
  net::HttpClient parallel(options);
  std::vector<std::future<net::ClientResponse>> answers;
  answers.reserve(8);
  for (int i = 0; i < 8; ++i) {
    answers.push_back(
        parallel.send(request("POST", "/", podReview("fast-app", "uid-" + std::to_string(i)))));
  }
  for (auto& f : answers) {
    auto res = f.get();
    ASSERT_TRUE(res.ok()) << res.error_message;
    EXPECT_EQ(res.status, 200) << res.body;
    EXPECT_EQ(json::parse(res.body)["response"]["allowed"], true);
  }
  EXPECT_EQ(t::threadCount(injector_.pid()), threads) << injector_.log();
}

TEST_F(ServeTest, RequiresClientCertificatesFromTheGivenCa) {
  t::ScratchDir clients{"clients"};
  t::ScratchDir strangers{"strangers"};
  t::generateCertificates(clients.path(), t::CertificateRequest{{}, {}, "kube-apiserver", "", "", true});
  t::generateCertificates(strangers.path(), t::CertificateRequest{{}, {}, "kube-apiserver", "", "", true});
  t::writeFile(dir_ / "namespace.yaml",
               "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: fast-app\n");
  auto args = serveArgs();
  args.push_back("--objects");
  args.push_back((dir_ / "namespace.yaml").string());
  args.push_back("--client-ca-file");
  args.push_back((clients / "ca.crt").string());
  ASSERT_NO_FATAL_FAILURE(injector_.start(dir_.path(), args));

  const auto present = [&](const t::ScratchDir* identity) {
    net::ClientOptions o = trustingWebhook();
    if (identity) {
      o.client_certificate_pem = t::readFile(*identity / "tls.crt");
      o.client_key_pem = t::readFile(*identity / "tls.key");
    }
    net::HttpClient client(o);
    return client.sendSync(request("POST", "/", podReview("fast-app", "mtls")));
  };

  auto anonymous = present(nullptr);
  EXPECT_FALSE(anonymous.ok()) << anonymous.status;
  auto stranger = present(&strangers);
  EXPECT_FALSE(stranger.ok()) << stranger.status;
  auto known = present(&clients);
  ASSERT_TRUE(known.ok()) << known.error_message << "\n" << injector_.log();
  EXPECT_EQ(known.status, 200);
  EXPECT_EQ(json::parse(known.body)["response"]["allowed"], true);
  // Probes on the plain admin port need no certificate.
  EXPECT_EQ(injector_.get(injector_.admin("/healthz")).status, 200);
  EXPECT_NE(injector_.log().find("client certificates required"), std::string::npos);
}

TEST_F(ServeTest, RejectsAMissingClientCaFile) {
  auto args = serveArgs();
  args.push_back("--client-ca-file");
  args.push_back((dir_ / "missing-ca.crt").string());
  args.push_back("--objects");
  args.push_back((dir_ / "values.yaml").string());
  t::ChildProcess process(args, dir_ / "injector.log");
  EXPECT_GT(process.wait(15000), 0);  // exited with an error (-1 would be still running)
  EXPECT_NE(t::readFile(dir_ / "injector.log").find("missing-ca.crt"), std::string::npos);
}

}  // namespace
}  // namespace harness::injector
