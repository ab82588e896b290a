// The injector binary as a process: generated certificates, real HTTPS on 127.0.0.1, a fake
// Kubernetes API server (HTTPS, bearer token) reached through a kubeconfig, AdmissionReviews v1
// and v1beta1, bad input, health and metrics endpoints, configuration reload, SIGTERM.

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <thread>

#include <nlohmann/json.hpp>

#include "harness/core/json.h"
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

// Just enough of the Kubernetes REST API for the injector: GET of a few objects, POST of events.
class FakeApiServer {
 public:
  explicit FakeApiServer(const std::filesystem::path& certs) {
    objects_["/api/v1/namespaces/simple-app"] = {
        {"apiVersion", "v1"},
        {"kind", "Namespace"},
        {"metadata", {{"name", "simple-app"}, {"annotations", {{"linkerd.io/inject", "enabled"}}}}}};
    objects_["/apis/apps/v1/namespaces/simple-app/replicasets/simple-app-v1-5d8f"] = {
        {"apiVersion", "apps/v1"},
        {"kind", "ReplicaSet"},
        {"metadata",
         {{"name", "simple-app-v1-5d8f"},
          {"namespace", "simple-app"},
          {"uid", "rs-uid"},
          {"ownerReferences",
           {{{"apiVersion", "apps/v1"},
             {"kind", "Deployment"},
             {"name", "simple-app-v1"},
             {"uid", "deploy-uid"},
             {"controller", true}}}}}}};
    objects_["/apis/apps/v1/namespaces/simple-app/deployments/simple-app-v1"] = {
        {"apiVersion", "apps/v1"},
        {"kind", "Deployment"},
        {"metadata", {{"name", "simple-app-v1"}, {"namespace", "simple-app"}, {"uid", "deploy-uid"}}}};
    net::Router router;
    router.fallback([this](const net::Request& r) { return serve(r); });
    net::ServerOptions o;
    o.tls = net::TlsServerConfig{(certs / "tls.crt").string(), (certs / "tls.key").string()};
    server_ = std::make_unique<net::Server>(o, std::move(router));
    auto started = server_->start();
    if (!started) throw std::runtime_error(started.error().message);
  }

  std::uint16_t port() const { return server_->port(); }

  std::vector<json> events() {
    std::lock_guard lock(mutex_);
    return events_;
  }

  std::vector<std::string> authorizations() {
    std::lock_guard lock(mutex_);
    return authorizations_;
  }

 private:
  net::Response serve(const net::Request& r) {
    std::lock_guard lock(mutex_);
    authorizations_.push_back(r.headers.get("Authorization").value_or(""));
    if (r.method == "POST" && r.path == "/api/v1/namespaces/simple-app/events") {
      events_.push_back(json::parse(r.body));
      return net::Response::json(201, r.body);
    }
    auto it = objects_.find(r.path);
    if (r.method == "GET" && it != objects_.end()) return net::Response::json(200, it->second.dump());
    return net::Response::json(
        404, json{{"kind", "Status"}, {"apiVersion", "v1"}, {"status", "Failure"},
                  {"message", "not found: " + r.path}, {"reason", "NotFound"}, {"code", 404}}
                 .dump());
  }

  std::map<std::string, json> objects_;
  std::mutex mutex_;
  std::vector<json> events_;
  std::vector<std::string> authorizations_;
  std::unique_ptr<net::Server> server_;
};

json podReview(const std::string& api_version, const std::string& uid) {
  json pod = {
      {"apiVersion", "v1"},
      {"kind", "Pod"},
      {"metadata",
       {{"generateName", "simple-app-v1-5d8f-"},
        {"namespace", "simple-app"},
        {"labels", {{"app", "server"}, {"version", "v1"}}},
        {"ownerReferences",
         {{{"apiVersion", "apps/v1"},
           {"kind", "ReplicaSet"},
           {"name", "simple-app-v1-5d8f"},
           {"uid", "rs-uid"},
           {"controller", true}}}}}},
      {"spec",
       {{"containers",
         {{{"name", "http-app"},
           {"image", "kong/httpbin:latest"},
           {"ports", {{{"containerPort", 80}}}}}}}}}};
  return {{"apiVersion", api_version},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", uid},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"namespace", "simple-app"},
            {"operation", "CREATE"},
            {"userInfo", {{"username", "system:serviceaccount:kube-system:replicaset-controller"}}},
            {"object", pod},
            {"oldObject", nullptr},
            {"dryRun", false}}}};
}

class InjectorProcessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    t::generateCertificates(dir_ / "webhook");
    t::generateCertificates(dir_ / "api");
    api_ = std::make_unique<FakeApiServer>(dir_ / "api");
    t::writeFile(dir_ / "values.yaml", "proxy:\n  logLevel: warn,linkerd=info\n");
    t::writeFile(dir_ / "trust.pem", t::readFile(dir_ / "webhook" / "ca.crt"));
    const std::string ca_data = go::base64Encode(t::readFile(dir_ / "api" / "ca.crt"));
    t::writeFile(dir_ / "kubeconfig",
                 "apiVersion: v1\nkind: Config\ncurrent-context: test\n"
                 "clusters:\n- name: fake\n  cluster:\n    server: https://127.0.0.1:" +
                     std::to_string(api_->port()) + "\n    certificate-authority-data: " + ca_data +
                     "\nusers:\n- name: injector\n  user:\n    token: s3cr3t\n"
                     "contexts:\n- name: test\n  context:\n    cluster: fake\n    user: injector\n");
    ASSERT_NO_FATAL_FAILURE(injector_.start(
        dir_.path(), {HARNESS_INJECTOR_BINARY, "--log-level", "debug", "serve",
               "--address", "127.0.0.1", "--port", "0", "--admin-port", "0",
               "--tls-cert", (dir_ / "webhook" / "tls.crt").string(),
               "--tls-key", (dir_ / "webhook" / "tls.key").string(),
               "--values", (dir_ / "values.yaml").string(),
               "--trust-anchors", (dir_ / "trust.pem").string(),
               "--kubeconfig", (dir_ / "kubeconfig").string()}));
  }

  void TearDown() override { injector_.stop(); }

  net::ClientResponse post(const std::string& body, const std::string& path = "/") {
    return injector_.post(body, path);
  }
  net::ClientResponse get(const std::string& url) { return injector_.get(url); }
  std::string admin(const std::string& path) { return injector_.admin(path); }

  static json decodedPatch(const json& review) {
    auto bytes = go::base64Decode(review["response"]["patch"].get<std::string>());
    EXPECT_TRUE(bytes.ok());
    return json::parse(*bytes);
  }

  t::ScratchDir dir_{"injector"};
  std::unique_ptr<FakeApiServer> api_;
  tests::ServedInjector injector_;
};

TEST_F(InjectorProcessTest, InjectsAPodOwnedByADeploymentOverV1) {
  auto res = post(podReview("admission.k8s.io/v1", "uid-1").dump());
  ASSERT_TRUE(res.ok()) << res.error_message;
  ASSERT_EQ(res.status, 200) << res.body;
  auto review = json::parse(res.body);
  EXPECT_EQ(review["apiVersion"], "admission.k8s.io/v1");
  EXPECT_EQ(review["kind"], "AdmissionReview");
  EXPECT_EQ(review["response"]["uid"], "uid-1");
  EXPECT_EQ(review["response"]["allowed"], true);
  EXPECT_EQ(review["response"]["patchType"], "JSONPatch");
  auto patch = decodedPatch(review);
  bool has_proxy = false, has_owner_label = false;
  for (const auto& op : patch) {
    if (op["path"] == "/spec/initContainers/1" && op["value"]["name"] == "linkerd-proxy") has_proxy = true;
    if (op["path"] == "/metadata/labels/linkerd.io~1proxy-deployment" && op["value"] == "simple-app-v1") {
      has_owner_label = true;
    }
  }
  EXPECT_TRUE(has_proxy) << patch.dump(2);
  EXPECT_TRUE(has_owner_label) << patch.dump(2);
}

// A replica of the same workload is answered from the patch cache, which keeps the patch's base64
// text: the second answer carries the same patch, byte for byte, under its own uid, and that
// text is the base64 of the patch as core::dumpJson writes it.
TEST_F(InjectorProcessTest, AReplicaGetsTheCachedPatchEncodedAsTheFirst) {
  auto first = post(podReview("admission.k8s.io/v1", "uid-a").dump());
  auto second = post(podReview("admission.k8s.io/v1", "uid-b").dump());
  ASSERT_TRUE(first.ok() && second.ok()) << first.error_message << second.error_message;
  ASSERT_EQ(first.status, 200) << first.body;
  ASSERT_EQ(second.status, 200) << second.body;
  const auto a = json::parse(first.body);
  const auto b = json::parse(second.body);
  EXPECT_EQ(b["response"]["uid"], "uid-b");
  ASSERT_TRUE(a["response"]["patch"].is_string()) << first.body;
  EXPECT_EQ(a["response"]["patch"], b["response"]["patch"]);
  const json patch = decodedPatch(b);
  EXPECT_FALSE(patch.empty());
  EXPECT_EQ(b["response"]["patch"], go::base64Encode(core::dumpJson(patch)));
}

// server.go answers with the review it decoded, the response set: the request goes back as it
// came (here its text byte for byte: pretty-printed, with a member Go would not know, trailing
// blank lines), the response written in as the last member.
TEST_F(InjectorProcessTest, EchoesTheReviewItGotWithTheResponseAsItsLastMember) {
  json review = podReview("admission.k8s.io/v1", "uid-echo");
  review["extra"] = {{"note", "<&> \u00e9 \\ \""}, {"numbers", {1.50, -0, 1e3}}};
  const std::string sent = review.dump(2) + "\n\n";
  auto res = post(sent);
  ASSERT_TRUE(res.ok()) << res.error_message;
  ASSERT_EQ(res.status, 200) << res.body;
  const std::string kept = sent.substr(0, sent.find_last_of('}'));
  EXPECT_TRUE(res.body.starts_with(kept + ",\"response\":{")) << res.body.substr(0, 400);
  const json answer = json::parse(res.body);
  EXPECT_EQ(answer["request"], review["request"]);
  EXPECT_EQ(answer["extra"], review["extra"]);
  EXPECT_EQ(answer["response"]["uid"], "uid-echo");
  EXPECT_EQ(answer["response"]["allowed"], true);
  EXPECT_EQ(answer["response"]["patchType"], "JSONPatch");
  EXPECT_FALSE(decodedPatch(answer).empty());
}

// A review that comes with a response member gets it replaced by the answer (the member once in
// the text), and its request is echoed whole.
TEST_F(InjectorProcessTest, AReviewThatHasAResponseGetsItReplaced) {
  json review = podReview("admission.k8s.io/v1", "uid-replaced");
  review["response"] = {{"uid", "stale"}, {"allowed", false}};
  auto res = post(review.dump());
  ASSERT_TRUE(res.ok()) << res.error_message;
  ASSERT_EQ(res.status, 200) << res.body;
  const json answer = json::parse(res.body);
  EXPECT_EQ(answer["response"]["uid"], "uid-replaced");
  EXPECT_EQ(answer["response"]["allowed"], true);
  EXPECT_EQ(answer["request"], review["request"]);
  EXPECT_FALSE(decodedPatch(answer).empty());
  std::size_t members = 0;
  for (auto at = res.body.find("\"response\""); at != std::string::npos;
       at = res.body.find("\"response\"", at + 1)) {
    ++members;
  }
  EXPECT_EQ(members, 1u);
}

// A body led by a UTF-8 byte order mark is read (the fallback parser skips it, as sigs.k8s.io/yaml
// does); the answer is written from the decoded review and starts with its brace, as Go's
// json.Marshal writes it.
TEST_F(InjectorProcessTest, AReviewAfterAByteOrderMarkIsAnsweredWithoutIt) {
  const json review = podReview("admission.k8s.io/v1", "uid-bom");
  auto res = post("\xEF\xBB\xBF" + review.dump());
  ASSERT_TRUE(res.ok()) << res.error_message;
  ASSERT_EQ(res.status, 200) << res.body;
  ASSERT_FALSE(res.body.empty());
  EXPECT_EQ(res.body.front(), '{') << res.body.substr(0, 40);
  const json answer = json::parse(res.body);
  EXPECT_EQ(answer["response"]["uid"], "uid-bom");
  EXPECT_EQ(answer["request"], review["request"]);
}

TEST_F(InjectorProcessTest, AnswersV1beta1WithTheSameVersionAndPostsAnEventToTheOwner) {
  auto res = post(podReview("admission.k8s.io/v1beta1", "uid-2").dump(), "/inject/linkerd");
  ASSERT_TRUE(res.ok()) << res.error_message;
  auto review = json::parse(res.body);
  EXPECT_EQ(review["apiVersion"], "admission.k8s.io/v1beta1");
  EXPECT_EQ(review["response"]["allowed"], true);
  std::vector<json> events;
  for (int i = 0; i < 3000 && events.empty(); ++i) {  // up to 60 s: the Event is posted after
    std::this_thread::sleep_for(20ms);                  // the answer, on another thread
    events = api_->events();
  }
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["reason"], "Injected");
  EXPECT_EQ(events[0]["message"], "Linkerd sidecar proxy injected");
  EXPECT_EQ(events[0]["involvedObject"]["kind"], "Deployment");
  EXPECT_EQ(events[0]["involvedObject"]["name"], "simple-app-v1");
  EXPECT_EQ(events[0]["source"]["component"], "linkerd-proxy-injector");
  for (const auto& auth : api_->authorizations()) EXPECT_EQ(auth, "Bearer s3cr3t");
}

TEST_F(InjectorProcessTest, RejectsMalformedReviewsWithHttp400) {
  auto garbage = post("{not json");
  ASSERT_TRUE(garbage.ok());
  EXPECT_EQ(garbage.status, 400);
  EXPECT_TRUE(garbage.body.starts_with("failed to decode admission review request: ")) << garbage.body;

  auto no_request = post(R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})");
  EXPECT_EQ(no_request.status, 400);
  EXPECT_EQ(no_request.body, "invalid admission review request");

  auto empty = post("");
  EXPECT_EQ(empty.status, 200);
  EXPECT_EQ(empty.body, "");
}

TEST_F(InjectorProcessTest, DeniesWhenTheNamespaceIsUnknown) {
  auto review = podReview("admission.k8s.io/v1", "uid-3");
  review["request"]["namespace"] = "nowhere";
  auto res = post(review.dump());
  ASSERT_EQ(res.status, 200);
  auto body = json::parse(res.body);
  EXPECT_EQ(body["response"]["allowed"], false);
  EXPECT_FALSE(body["response"]["status"]["message"].get<std::string>().empty());
}

TEST_F(InjectorProcessTest, ServesHealthAndMetricsOnBothPorts) {
  ASSERT_EQ(post(podReview("admission.k8s.io/v1", "uid-4").dump()).status, 200);
  for (const std::string& base : {injector_.webhookUrl(""), admin("")}) {
    EXPECT_EQ(get(base + "/healthz").status, 200) << base;
    EXPECT_EQ(get(base + "/readyz").status, 200) << base;
    auto metrics = get(base + "/metrics");
    ASSERT_EQ(metrics.status, 200);
    EXPECT_NE(metrics.body.find("# TYPE proxy_inject_admission_requests_total counter"), std::string::npos);
    EXPECT_NE(metrics.body.find("proxy_inject_admission_responses_total{"), std::string::npos);
    EXPECT_NE(metrics.body.find("owner_kind=\"deployment\""), std::string::npos);
    EXPECT_NE(metrics.body.find("skip=\"false\""), std::string::npos);
    EXPECT_NE(metrics.body.find("injector_admission_duration_seconds_bucket"), std::string::npos);
  }
}

TEST_F(InjectorProcessTest, ReloadsValuesWhenTheFileChanges) {
  auto first = decodedPatch(json::parse(post(podReview("admission.k8s.io/v1", "a").dump()).body));
  EXPECT_NE(first.dump().find("cr.l5d.io/linkerd/proxy:"), std::string::npos);
  // A ConfigMap mount changes by symlink swap: write a new file and rename it over the old one.
  t::writeFile(dir_ / "values.yaml.new", "proxy:\n  image:\n    name: registry.local/proxy\n");
  std::filesystem::rename(dir_ / "values.yaml.new", dir_ / "values.yaml");
  auto second = decodedPatch(json::parse(post(podReview("admission.k8s.io/v1", "b").dump()).body));
  EXPECT_NE(second.dump().find("registry.local/proxy:"), std::string::npos);

  // A reload that fails is logged and counted; the last good values stay in use.
  t::writeFile(dir_ / "values.yaml.bad", "proxy: [not, a, map]\n");
  std::filesystem::rename(dir_ / "values.yaml.bad", dir_ / "values.yaml");
  auto kept = json::parse(post(podReview("admission.k8s.io/v1", "c").dump()).body);
  EXPECT_EQ(kept["response"]["allowed"], true);
  EXPECT_NE(decodedPatch(kept).dump().find("registry.local/proxy:"), std::string::npos);
  EXPECT_EQ(get(admin("/readyz")).status, 200);
  EXPECT_NE(get(admin("/metrics")).body.find("injector_config_errors_total{profile=\"linkerd\"} 1"),
            std::string::npos);
  EXPECT_NE(injector_.log().find("failed to reload the linkerd configuration, keeping the "
                                 "previous one: "),
            std::string::npos)
      << injector_.log();
}

// server.go decodes the body with sigs.k8s.io/yaml: go-yaml refuses the 10,001st nested flow
// collection. Before this was checked, copying the decoded object overflowed the stack and the
// process died (with failurePolicy Ignore, pods were admitted without a proxy meanwhile).
TEST_F(InjectorProcessTest, RefusesDeeplyNestedReviewsWith400AndKeepsServing) {
  json review = podReview("admission.k8s.io/v1", "deep");
  review["request"]["object"]["spec"]["x"] = "DEEP";
  const std::string deep = std::string(70000, '[') + std::string(70000, ']');
  std::string body = review.dump();
  body.replace(body.find("\"DEEP\""), 6, deep);
  ASSERT_GT(body.size(), 140000u);
  auto res = post(body);
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(res.status, 400);
  EXPECT_EQ(res.body,
            "failed to decode admission review request: error converting YAML to JSON: yaml: "
            "exceeded max depth of 10000");
  // go-yaml names the line when it is not the first.
  std::string multi_line = review.dump(1);
  const auto at = multi_line.find("\"DEEP\"");
  const auto line =
      std::count(multi_line.begin(), multi_line.begin() + static_cast<std::ptrdiff_t>(at), '\n') +
      1;
  ASSERT_GT(line, 1);
  multi_line.replace(at, 6, deep);
  auto lines = post(multi_line);
  EXPECT_EQ(lines.status, 400);
  EXPECT_EQ(lines.body, "failed to decode admission review request: error converting YAML to "
                        "JSON: yaml: line " + std::to_string(line) +
                            ": exceeded max depth of 10000");
  EXPECT_EQ(post(podReview("admission.k8s.io/v1", "after").dump()).status, 200);
}

// Linkerd copies the trust bundle into the proxy's environment without checking it; bytes that
// are not UTF-8 become U+FFFD (yaml.Marshal of the values). It used to escape as an exception
// from the patch encoder: HTTP 500 on every review while /readyz said ready.
TEST_F(InjectorProcessTest, TrustAnchorsThatAreNotUtf8AreInjectedAsLinkerdDoes) {
  const std::string pem = t::readFile(dir_ / "webhook" / "ca.crt");
  t::writeFile(dir_ / "trust.pem.new", "# issued by caf\xe9 ops\n" + pem + "\x30\x82\x01\x0a\n");
  std::filesystem::rename(dir_ / "trust.pem.new", dir_ / "trust.pem");
  auto res = post(podReview("admission.k8s.io/v1", "latin1").dump());
  ASSERT_EQ(res.status, 200) << res.body;
  auto review = json::parse(res.body);
  ASSERT_EQ(review["response"]["allowed"], true) << res.body;
  std::string anchors;
  for (const auto& op : decodedPatch(review)) {
    if (op["path"] != "/spec/initContainers/1") continue;
    for (const auto& env : op["value"]["env"]) {
      if (env["name"] == "LINKERD2_PROXY_IDENTITY_TRUST_ANCHORS") anchors = env["value"];
    }
  }
  EXPECT_TRUE(anchors.starts_with("# issued by caf\xef\xbf\xbd ops\n-----BEGIN CERTIFICATE-----"))
      << anchors;
  EXPECT_TRUE(anchors.ends_with("-----END CERTIFICATE-----\n0\xef\xbf\xbd\x01\n")) << anchors;
  EXPECT_EQ(get(admin("/readyz")).status, 200);
  EXPECT_NE(injector_.log().find("the trust anchors are not valid UTF-8"), std::string::npos);
}

// Configuration that never loaded: every review is answered as server.go answers a handler
// error (HTTP 200, allowed=false, the error as the message) and the injector is not ready.
TEST_F(InjectorProcessTest, WithoutAGoodConfigurationReviewsAreDeniedAndNotReady) {
  tests::ServedInjector broken;
  t::ScratchDir dir("injector-broken");
  std::filesystem::create_directories(dir / "webhook");
  std::filesystem::copy_file(dir_ / "webhook" / "ca.crt", dir / "webhook" / "ca.crt");
  ASSERT_NO_FATAL_FAILURE(broken.start(
      dir.path(), {HARNESS_INJECTOR_BINARY, "serve", "--address", "127.0.0.1", "--port", "0",
                   "--admin-port", "0", "--tls-cert", (dir_ / "webhook" / "tls.crt").string(),
                   "--tls-key", (dir_ / "webhook" / "tls.key").string(),
                   "--values", (dir_ / "values.yaml").string(),
                   "--trust-anchors", (dir / "missing.pem").string(),
                   "--kubeconfig", (dir_ / "kubeconfig").string()}));
  auto res = broken.post(podReview("admission.k8s.io/v1", "none").dump(), "/");
  ASSERT_TRUE(res.ok()) << res.error_message;
  ASSERT_EQ(res.status, 200) << res.body;
  auto review = json::parse(res.body);
  EXPECT_EQ(review["response"]["allowed"], false);
  EXPECT_EQ(review["response"]["status"]["message"],
            "open " + (dir / "missing.pem").string() + ": No such file or directory");
  EXPECT_EQ(broken.get(broken.admin("/readyz")).status, 503);
  EXPECT_NE(broken.get(broken.admin("/metrics"))
                .body.find("injector_config_errors_total{profile=\"linkerd\"} 1"),
            std::string::npos);
  broken.stop();
}

TEST_F(InjectorProcessTest, AnswersPlaintextAndOversizedRequestsLikeTheRealServer) {
  auto plain = get("http://127.0.0.1:" + std::to_string(injector_.webhookPort()) + "/");
  ASSERT_TRUE(plain.ok()) << plain.error_message;
  EXPECT_EQ(plain.status, 400);
  auto huge = post(std::string(std::size_t{11} * 1024 * 1024, ' '));
  ASSERT_TRUE(huge.ok()) << huge.error_message;
  EXPECT_EQ(huge.status, 500);
  // Still serving afterwards.
  EXPECT_EQ(post(podReview("admission.k8s.io/v1", "d").dump()).status, 200);
}

}  // namespace
}  // namespace harness::injector
