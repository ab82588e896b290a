// Stub webhooks end to end: started on 127.0.0.1:0 with a certificate from an in-process CA and
// called with net::HttpClient over real TLS, the way the simulator's caller calls them.

#include "harness/sim/stub_webhook.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <string>
#include <thread>

#include "harness/core/yaml.h"
#include "harness/go/base64.h"
#include "harness/net/client.h"
#include "harness/net/server.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

json podReview(const std::string& uid = "uid-1",
               const std::string& api_version = "admission.k8s.io/v1") {
  return {{"apiVersion", api_version},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", uid},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"resource", {{"group", ""}, {"version", "v1"}, {"resource", "pods"}}},
            {"name", "web"},
            {"namespace", "apps"},
            {"operation", "CREATE"},
            {"userInfo", {{"username", "admin"}}},
            {"object",
             {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "web"}, {"labels", {{"app", "web"}}}}}}},
            {"oldObject", nullptr},
            {"dryRun", false},
            {"options", {{"kind", "CreateOptions"}, {"apiVersion", "meta.k8s.io/v1"}}}}}};
}

class StubWebhookTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto ca = net::CertificateAuthority::create("stub-test-ca");
    ASSERT_TRUE(ca.ok()) << ca.error().message;
    ca_ = new net::CertificateAuthority(*ca);
  }
  static void TearDownTestSuite() {
    delete ca_;
    ca_ = nullptr;
  }

  // Parses `yaml` as a stub spec and starts it.
  void start(const std::string& yaml, double time_scale = 1.0,
             std::vector<std::string> extra_dns_names = {"stub.apps.svc"}) {
    auto document = core::parseYaml(yaml);
    ASSERT_TRUE(document.ok()) << document.error().message;
    auto spec = parseStubSpec(*document);
    ASSERT_TRUE(spec.ok()) << spec.error().message;
    auto stub = StubWebhook::start("test", std::move(*spec), *ca_, dir_.path(),
                                   std::move(extra_dns_names), time_scale);
    ASSERT_TRUE(stub.ok()) << stub.error().message;
    stub_ = std::move(*stub);
    net::ClientOptions options;
    options.ca_pem = ca_->certificate_pem;
    options.threads = 2;
    client_ = std::make_unique<net::HttpClient>(options);
  }

  net::ClientRequest request(const std::string& body, const std::string& path = "/",
                             std::chrono::milliseconds timeout = 10s) const {
    net::ClientRequest r;
    r.url = "https://127.0.0.1:" + std::to_string(stub_->port()) + path;
    r.headers.set("Content-Type", "application/json");
    r.body = body;
    r.deadline = std::chrono::steady_clock::now() + timeout;
    return r;
  }

  net::ClientResponse post(const json& review = podReview(), const std::string& path = "/") {
    return client_->sendSync(request(review.dump(), path));
  }

  // Posts and decodes the answer as JSON.
  json review(const json& body = podReview(), const std::string& path = "/") {
    auto res = post(body, path);
    EXPECT_TRUE(res.ok()) << res.error_message;
    EXPECT_EQ(res.status, 200) << res.body;
    auto parsed = json::parse(res.body, nullptr, false);
    EXPECT_FALSE(parsed.is_discarded()) << res.body;
    return parsed;
  }

  static net::CertificateAuthority* ca_;
  harness::testing::ScratchDir dir_{"stub-webhook"};
  std::unique_ptr<StubWebhook> stub_;
  std::unique_ptr<net::HttpClient> client_;
};

net::CertificateAuthority* StubWebhookTest::ca_ = nullptr;

// --- certificates ---

std::string readFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST_F(StubWebhookTest, StubsOfTheSameHostNamesShareOneCertificate) {
  // Issued once per process for a CA, a kind and host names (each costs OpenSSL 3 millions of
  // instructions); another stub, even of another name, is served the same one.
  auto spec = parseStubSpec(json::object());
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  auto first = StubWebhook::start("first", *spec, *ca_, dir_.path() / "1", {"a.apps.svc"}, 1.0);
  auto second = StubWebhook::start("second", *spec, *ca_, dir_.path() / "2", {"a.apps.svc"}, 1.0);
  auto other = StubWebhook::start("third", *spec, *ca_, dir_.path() / "3", {"b.apps.svc"}, 1.0);
  ASSERT_TRUE(first.ok() && second.ok() && other.ok());
  const std::string first_pem = readFile(dir_.path() / "1" / "stub-first" / "tls.crt");
  ASSERT_NE(first_pem.find("BEGIN CERTIFICATE"), std::string::npos);
  EXPECT_EQ(readFile(dir_.path() / "2" / "stub-second" / "tls.crt"), first_pem);
  EXPECT_NE(readFile(dir_.path() / "3" / "stub-third" / "tls.crt"), first_pem);
  // Each is served and verifies for its own host names.
  net::ClientOptions options;
  options.ca_pem = ca_->certificate_pem;
  net::HttpClient client(options);
  for (const auto* stub : {first->get(), second->get(), other->get()}) {
    net::ClientRequest r;
    r.url = "https://127.0.0.1:" + std::to_string(stub->port()) + "/";
    r.body = podReview().dump();
    r.deadline = std::chrono::steady_clock::now() + 10s;
    auto res = client.sendSync(std::move(r));
    ASSERT_TRUE(res.ok()) << res.error_message;
    EXPECT_EQ(res.status, 200);
  }
}

// prepare() makes what start() would (the certificate, the server's TLS context), so that a start
// of the same kind and names makes no TLS context of its own; each kind is prepared apart.
TEST_F(StubWebhookTest, APreparedStubStartsWithWhatWasMadeAhead) {
  auto spec = parseStubSpec(json::object());
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  StubWebhook::prepare(StubTls::kValid, *ca_, {"prepared.apps.svc"});
  const std::uint64_t made = net::serverTlsContextsMade();
  auto stub = StubWebhook::start("prepared", *spec, *ca_, dir_.path(), {"prepared.apps.svc"}, 1.0);
  ASSERT_TRUE(stub.ok()) << stub.error().message;
  EXPECT_EQ(net::serverTlsContextsMade(), made);
  net::ClientOptions options;
  options.ca_pem = ca_->certificate_pem;
  net::HttpClient client(options);
  net::ClientRequest r;
  r.url = "https://prepared.apps.svc:" + std::to_string((*stub)->port()) + "/";
  r.connect_to = "127.0.0.1:" + std::to_string((*stub)->port());
  r.body = podReview().dump();
  r.deadline = std::chrono::steady_clock::now() + 10s;
  auto res = client.sendSync(std::move(r));
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(res.status, 200);
  // A kind or names not prepared: the start makes its context.
  auto untrusted = parseStubSpec(json{{"tls", "untrusted"}});
  ASSERT_TRUE(untrusted.ok()) << untrusted.error().message;
  auto other = StubWebhook::start("other", *untrusted, *ca_, dir_.path() / "other",
                                  {"prepared.apps.svc"}, 1.0);
  ASSERT_TRUE(other.ok()) << other.error().message;
  EXPECT_EQ(net::serverTlsContextsMade(), made + 1);
}

// --- answers ---

TEST_F(StubWebhookTest, AllowsByDefaultWithTheRequestUidAndVersion) {
  start("{}");
  EXPECT_EQ(review(), (json{{"apiVersion", "admission.k8s.io/v1"},
                            {"kind", "AdmissionReview"},
                            {"response", {{"uid", "uid-1"}, {"allowed", true}}}}));
}

TEST_F(StubWebhookTest, AnswersAV1beta1ReviewWithV1beta1) {
  start("{}");
  auto answer = review(podReview("uid-2", "admission.k8s.io/v1beta1"));
  EXPECT_EQ(answer["apiVersion"], "admission.k8s.io/v1beta1");
  EXPECT_EQ(answer["response"]["uid"], "uid-2");
}

TEST_F(StubWebhookTest, AnswersJsonWithContentType) {
  start("{}");
  auto res = post();
  EXPECT_EQ(res.headers.get("Content-Type"), "application/json");
}

TEST_F(StubWebhookTest, DeniesWithTheStatusPassedThrough) {
  start(R"(
responses:
- respond:
    allowed: false
    status: {code: 403, message: "no", reason: Forbidden, details: {causes: [{message: x}]}}
)");
  auto response = review()["response"];
  EXPECT_EQ(response["allowed"], false);
  EXPECT_EQ(response["status"], (json{{"code", 403},
                                       {"message", "no"},
                                       {"reason", "Forbidden"},
                                       {"details", {{"causes", {{{"message", "x"}}}}}}}));
}

TEST_F(StubWebhookTest, SendsAPatchBase64EncodedAsJsonPatch) {
  start("responses: [{respond: {patch: [{op: add, path: /metadata/labels/x, value: v}]}}]");
  auto response = review()["response"];
  EXPECT_EQ(response["patchType"], "JSONPatch");
  auto bytes = go::base64Decode(response["patch"].get<std::string>());
  ASSERT_TRUE(bytes.ok());
  EXPECT_EQ(json::parse(*bytes),
            json::parse(R"([{"op":"add","path":"/metadata/labels/x","value":"v"}])"));
}

TEST_F(StubWebhookTest, SendsRawPatchBytesVerbatim) {
  start("responses: [{respond: {rawPatch: '[{'}}]");
  auto response = review()["response"];
  EXPECT_EQ(response["patch"], go::base64Encode("[{"));
  EXPECT_EQ(response["patchType"], "JSONPatch");
}

TEST_F(StubWebhookTest, PatchTypeNullOmitsIt) {
  start("responses: [{respond: {patch: [], patchType: null}}]");
  auto response = review()["response"];
  EXPECT_TRUE(response.contains("patch"));
  EXPECT_FALSE(response.contains("patchType"));
}

TEST_F(StubWebhookTest, PatchTypeEmptyStringIsSent) {
  start("responses: [{respond: {patch: [], patchType: ''}}]");
  EXPECT_EQ(review()["response"]["patchType"], "");
}

TEST_F(StubWebhookTest, PatchTypeWithoutPatchIsSentAlone) {
  start("responses: [{respond: {patchType: JSONPatch}}]");
  auto response = review()["response"];
  EXPECT_EQ(response["patchType"], "JSONPatch");
  EXPECT_FALSE(response.contains("patch"));
}

TEST_F(StubWebhookTest, SendsWarningsAndAuditAnnotations) {
  start("responses: [{respond: {warnings: [w1, w2], auditAnnotations: {key: value}}}]");
  auto response = review()["response"];
  EXPECT_EQ(response["warnings"], (json{"w1", "w2"}));
  EXPECT_EQ(response["auditAnnotations"], (json{{"key", "value"}}));
}

TEST_F(StubWebhookTest, OverridesUidApiVersionAndKind) {
  start("responses: [{respond: {uid: other, apiVersion: admission.k8s.io/v1beta1, kind: Foo}}]");
  auto answer = review();
  EXPECT_EQ(answer["apiVersion"], "admission.k8s.io/v1beta1");
  EXPECT_EQ(answer["kind"], "Foo");
  EXPECT_EQ(answer["response"]["uid"], "other");
}

TEST_F(StubWebhookTest, OmitResponseSendsAReviewWithoutResponse) {
  start("responses: [{respond: {omitResponse: true}}]");
  EXPECT_EQ(review(), (json{{"apiVersion", "admission.k8s.io/v1"}, {"kind", "AdmissionReview"}}));
}

TEST_F(StubWebhookTest, HttpAnswerSendsStatusBodyContentTypeAndHeaders) {
  start(R"(
responses:
- respond:
    http: {status: 503, body: boom, contentType: text/html, headers: {Retry-After: "1"}}
)");
  auto res = post();
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(res.status, 503);
  EXPECT_EQ(res.body, "boom");
  EXPECT_EQ(res.headers.get("Content-Type"), "text/html");
  EXPECT_EQ(res.headers.get("Retry-After"), "1");
}

TEST_F(StubWebhookTest, HttpAnswerCanSendAnEmptyContentType) {
  start("responses: [{respond: {http: {status: 500, body: x, contentType: ''}}}]");
  auto res = post();
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(res.headers.get("Content-Type"), "");
}

TEST_F(StubWebhookTest, CloseHangsUpWithoutAnswering) {
  start("responses: [{respond: {close: true}}]");
  auto req = request(podReview().dump());
  auto res = client_->sendSync(req);
  EXPECT_EQ(res.error, net::ClientErrorKind::kConnection);
  EXPECT_EQ(res.error_message, "Post \"" + req.url + "\": EOF");
}

TEST_F(StubWebhookTest, AnswersABodyThatIsNotJson) {
  start("{}");
  auto res = client_->sendSync(request("{not json"));
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(json::parse(res.body)["response"], (json{{"uid", ""}, {"allowed", true}}));
  ASSERT_EQ(stub_->calls().size(), 1u);
  EXPECT_TRUE(stub_->calls()[0].review.is_null());
  EXPECT_EQ(stub_->calls()[0].body, "{not json");
}

TEST_F(StubWebhookTest, CallCountAndCallsSinceReadOnlyWhatIsAsked) {
  start("{}");
  for (const char* uid : {"a", "b", "c"}) {
    json review = podReview();
    review["request"]["uid"] = uid;
    ASSERT_TRUE(post(review).ok());
  }
  EXPECT_EQ(stub_->callCount(), 3u);
  const auto since = stub_->callsSince(1);
  ASSERT_EQ(since.size(), 2u);
  EXPECT_EQ(since[0].uid, "b");
  EXPECT_EQ(since[1].uid, "c");
  EXPECT_EQ(since[1].number, 3u);
  EXPECT_TRUE(stub_->callsSince(3).empty());
  EXPECT_TRUE(stub_->callsSince(99).empty());
  EXPECT_EQ(stub_->callsSince(0).size(), stub_->calls().size());
}

// --- rules ---

TEST_F(StubWebhookTest, SequenceAnswersSuccessiveCallsAndRepeatsTheLast) {
  start("responses: [{sequence: [{uid: a}, {uid: b}]}]");
  EXPECT_EQ(review()["response"]["uid"], "a");
  EXPECT_EQ(review()["response"]["uid"], "b");
  EXPECT_EQ(review()["response"]["uid"], "b");
}

TEST_F(StubWebhookTest, SequenceCountsOnlyCallsThatReachTheRule) {
  start(R"(
responses:
- when: {path: /other}
  respond: {uid: other}
- sequence: [{uid: a}, {uid: b}]
)");
  EXPECT_EQ(review()["response"]["uid"], "a");
  EXPECT_EQ(review(podReview(), "/other")["response"]["uid"], "other");
  EXPECT_EQ(review()["response"]["uid"], "b");
}

TEST_F(StubWebhookTest, FirstMatchingRuleAnswers) {
  start(R"(
responses:
- when: {kind: Deployment}
  respond: {uid: deployment}
- when: {kind: Pod}
  respond: {uid: pod-1}
- when: {kind: Pod}
  respond: {uid: pod-2}
)");
  EXPECT_EQ(review()["response"]["uid"], "pod-1");
}

TEST_F(StubWebhookTest, NoMatchingRuleAllows) {
  start("responses: [{when: {operation: DELETE}, respond: {allowed: false}}]");
  EXPECT_EQ(review()["response"]["allowed"], true);
  EXPECT_EQ(stub_->calls().at(0).rule_description, "default (no rule matched)");
}

TEST_F(StubWebhookTest, MatchesOnOperation) {
  start("responses: [{when: {operation: UPDATE}, respond: {allowed: false}}]");
  EXPECT_EQ(review()["response"]["allowed"], true);
  auto update = podReview();
  update["request"]["operation"] = "UPDATE";
  EXPECT_EQ(review(update)["response"]["allowed"], false);
}

TEST_F(StubWebhookTest, MatchesOnDryRunWithAbsentMeaningFalse) {
  start(R"(
responses:
- when: {dryRun: false}
  respond: {uid: not-dry}
- when: {dryRun: true}
  respond: {uid: dry}
)");
  auto absent = podReview();
  absent["request"].erase("dryRun");
  EXPECT_EQ(review(absent)["response"]["uid"], "not-dry");
  auto dry = podReview();
  dry["request"]["dryRun"] = true;
  EXPECT_EQ(review(dry)["response"]["uid"], "dry");
}

TEST_F(StubWebhookTest, MatchesOnSubResource) {
  start("responses: [{when: {subResource: status}, respond: {allowed: false}}]");
  EXPECT_EQ(review()["response"]["allowed"], true);
  auto status = podReview();
  status["request"]["subResource"] = "status";
  EXPECT_EQ(review(status)["response"]["allowed"], false);
}

TEST_F(StubWebhookTest, MatchesOnNamespaceAndNameTogether) {
  start("responses: [{when: {namespace: apps, name: db}, respond: {allowed: false}}]");
  EXPECT_EQ(review()["response"]["allowed"], true);  // name web
  auto db = podReview();
  db["request"]["name"] = "db";
  EXPECT_EQ(review(db)["response"]["allowed"], false);
  db["request"]["namespace"] = "other";
  EXPECT_EQ(review(db)["response"]["allowed"], true);
}

TEST_F(StubWebhookTest, MatchesOnCallNumbers) {
  start("responses: [{when: {call: [2, 4]}, respond: {allowed: false}}]");
  std::vector<bool> allowed;
  allowed.reserve(4);
  for (int i = 0; i < 4; ++i) allowed.push_back(review()["response"]["allowed"]);
  EXPECT_EQ(allowed, (std::vector<bool>{true, false, true, false}));
}

TEST_F(StubWebhookTest, MatchesOnPath) {
  start("responses: [{when: {path: /validate}, respond: {allowed: false}}]");
  EXPECT_EQ(review(podReview(), "/mutate")["response"]["allowed"], true);
  EXPECT_EQ(review(podReview(), "/validate?timeout=10s")["response"]["allowed"], false);
}

TEST_F(StubWebhookTest, PointerMatchesAValue) {
  start(R"(
responses:
- when:
    pointers: {/request/object/metadata/labels/app: db}
  respond: {allowed: false}
)");
  EXPECT_EQ(review()["response"]["allowed"], true);
  auto db = podReview();
  db["request"]["object"]["metadata"]["labels"]["app"] = "db";
  EXPECT_EQ(review(db)["response"]["allowed"], false);
}

TEST_F(StubWebhookTest, PointerMatchesStructuredValues) {
  start(R"(
responses:
- when:
    pointers: {/request/userInfo: {username: admin}}
  respond: {allowed: false}
)");
  EXPECT_EQ(review()["response"]["allowed"], false);
}

TEST_F(StubWebhookTest, PointerNullMatchesAnAbsentValue) {
  start(R"(
responses:
- when:
    pointers: {/request/object/metadata/annotations: null}
  respond: {uid: unannotated}
)");
  EXPECT_EQ(review()["response"]["uid"], "unannotated");
  auto annotated = podReview();
  annotated["request"]["object"]["metadata"]["annotations"] = {{"a", "b"}};
  EXPECT_EQ(review(annotated)["response"]["uid"], "uid-1");
}

// --- calls ---

TEST_F(StubWebhookTest, RecordsEachCall) {
  start("responses: [{when: {call: 2}, sequence: [{}]}]");
  const auto before = std::chrono::steady_clock::now();
  review(podReview("first"), "/mutate?timeout=7s");
  review(podReview("second"));
  auto calls = stub_->calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].number, 1u);
  EXPECT_EQ(calls[0].path, "/mutate");
  EXPECT_EQ(calls[0].query, "timeout=7s");
  EXPECT_EQ(calls[0].timeout_param, "7s");
  EXPECT_EQ(calls[0].review, podReview("first"));
  EXPECT_EQ(calls[0].rule_description, "default (no rule matched)");
  EXPECT_GE(calls[0].received, before);
  EXPECT_EQ(calls[1].number, 2u);
  EXPECT_EQ(calls[1].timeout_param, "");
  EXPECT_EQ(calls[1].rule_description, "responses[0].sequence[0]");
}

TEST_F(StubWebhookTest, ResetCallsRestartsNumbersAndSequences) {
  start("responses: [{sequence: [{uid: a}, {uid: b}]}]");
  review();
  review();
  stub_->resetCalls();
  EXPECT_TRUE(stub_->calls().empty());
  EXPECT_EQ(review()["response"]["uid"], "a");
  EXPECT_EQ(stub_->calls().at(0).number, 1u);
}

TEST_F(StubWebhookTest, HarnessRequestsAreAllowedAtOnceAndNeitherRecordedNorCounted) {
  start(R"(
responses:
- when: {call: 1}
  respond: {uid: first}
- sequence: [{allowed: false}, {uid: b}]
)");
  stub_->setHarnessRequestFilter([](const json& review) {
    return review.is_object() && review["request"].value("name", "") == "harness";
  });
  json harness_review = podReview("h-1");
  harness_review["request"]["name"] = "harness";
  // Before and between the scenario's calls: allowed without a patch, and the
  // scenario's first call is still call 1, its second the sequence's first entry.
  json answer = review(harness_review);
  EXPECT_EQ(answer["response"]["uid"], "h-1");
  EXPECT_EQ(answer["response"]["allowed"], true);
  EXPECT_FALSE(answer["response"].contains("patch"));
  EXPECT_EQ(review()["response"]["uid"], "first");
  harness_review["request"]["uid"] = "h-2";
  EXPECT_EQ(review(harness_review)["response"]["allowed"], true);
  EXPECT_EQ(review()["response"]["allowed"], false);
  EXPECT_EQ(stub_->harnessRequests(), 2u);
  auto calls = stub_->calls();
  ASSERT_EQ(calls.size(), 2u);
  EXPECT_EQ(calls[0].uid, "uid-1");
  EXPECT_EQ(calls[1].number, 2u);
  EXPECT_EQ(calls[1].rule_description, "responses[1].sequence[0]");
}

// --- delays ---

TEST_F(StubWebhookTest, DelayOutlastsAShorterClientDeadline) {
  start("responses: [{respond: {delay: 30s}}]");
  auto req = request(podReview().dump(), "/", 200ms);
  auto res = client_->sendSync(req);
  EXPECT_EQ(res.error, net::ClientErrorKind::kTimeout);
  EXPECT_EQ(res.error_message, "Post \"" + req.url + "\": context deadline exceeded");
}

TEST_F(StubWebhookTest, TimeScaleShrinksTheDelay) {
  start("responses: [{respond: {delay: 30s}}]", 0.001);
  auto res = client_->sendSync(request(podReview().dump(), "/", 10s));
  ASSERT_TRUE(res.ok()) << res.error_message;
  EXPECT_EQ(res.status, 200);
}

TEST_F(StubWebhookTest, ADelayedAnswerDoesNotHoldUpOtherConnections) {
  start("responses: [{when: {path: /slow}, respond: {delay: 60s}}]");
  auto slow = client_->send(request(podReview().dump(), "/slow", 120s));
  // Wait until the slow call has reached the stub (bounded only against a hang: a busy machine
  // may take seconds for the handshake).
  for (int i = 0; i < 6000 && stub_->calls().empty(); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(stub_->calls().size(), 1u);
  auto fast = post();
  ASSERT_TRUE(fast.ok()) << fast.error_message;
  EXPECT_EQ(fast.status, 200);
  EXPECT_EQ(slow.wait_for(0s), std::future_status::timeout);
  stub_->stop();  // ends the slow call
  slow.wait();
}

// Each call records the review uid and the declared (unscaled) delay of its answer, which a
// caller charges on its simulated clock; at time scale 0 the stub answers at once.
TEST_F(StubWebhookTest, RecordsTheDeclaredDelayOfEachAnswer) {
  start("responses: [{sequence: [{delay: 1h}, {delay: 250ms}, {}]}]", 0);
  review(podReview("a"));
  review(podReview("a"));
  review(podReview("b"));
  EXPECT_EQ(stub_->calls().at(0).uid, "a");
  EXPECT_EQ(stub_->declaredDelay("a", 0), std::chrono::nanoseconds(1h));
  EXPECT_EQ(stub_->declaredDelay("a", 1), std::chrono::nanoseconds(250ms));
  EXPECT_EQ(stub_->declaredDelay("b", 0), std::chrono::nanoseconds(0));
  EXPECT_EQ(stub_->declaredDelay("a", 2), std::nullopt);
  EXPECT_EQ(stub_->declaredDelay("c", 0), std::nullopt);
}

TEST_F(StubWebhookTest, DelayThenCloseHangsUpLater) {
  start("responses: [{respond: {close: true, delay: 5s}}]", 0.001);
  auto res = post();
  EXPECT_EQ(res.error, net::ClientErrorKind::kConnection);
}

// --- TLS ---

TEST_F(StubWebhookTest, ServesTheExtraDnsNames) {
  start("{}");
  auto req = request(podReview().dump());
  req.url = "https://stub.apps.svc:443/";
  req.connect_to = "127.0.0.1:" + std::to_string(stub_->port());
  auto res = client_->sendSync(req);
  ASSERT_TRUE(res.ok()) << res.error_message;
}

TEST_F(StubWebhookTest, ServesLocalhost) {
  start("{}");
  auto req = request(podReview().dump());
  req.url = "https://localhost:" + std::to_string(stub_->port()) + "/";
  req.connect_to = "127.0.0.1:" + std::to_string(stub_->port());
  auto res = client_->sendSync(req);
  ASSERT_TRUE(res.ok()) << res.error_message;
}

TEST_F(StubWebhookTest, UntrustedTlsFailsAsUnknownAuthority) {
  start("tls: untrusted");
  auto req = request(podReview().dump());
  auto res = client_->sendSync(req);
  EXPECT_EQ(res.error, net::ClientErrorKind::kTls);
  EXPECT_EQ(res.error_message, "Post \"" + req.url +
                                   "\": tls: failed to verify certificate: x509: certificate "
                                   "signed by unknown authority");
  EXPECT_TRUE(stub_->calls().empty());
}

TEST_F(StubWebhookTest, WrongHostFailsForTheIpAddress) {
  start("tls: wrong-host");
  auto req = request(podReview().dump());
  auto res = client_->sendSync(req);
  EXPECT_EQ(res.error, net::ClientErrorKind::kTls);
  EXPECT_EQ(res.error_message, "Post \"" + req.url +
                                   "\": tls: failed to verify certificate: x509: certificate is "
                                   "valid for 192.0.2.1, not 127.0.0.1");
}

TEST_F(StubWebhookTest, WrongHostFailsForTheServiceName) {
  start("tls: wrong-host");
  auto req = request(podReview().dump());
  req.url = "https://stub.apps.svc:443/";
  req.connect_to = "127.0.0.1:" + std::to_string(stub_->port());
  auto res = client_->sendSync(req);
  EXPECT_EQ(res.error_message, "Post \"" + req.url +
                                   "\": tls: failed to verify certificate: x509: certificate is "
                                   "valid for wrong-host.invalid, not stub.apps.svc");
}

// --- lifecycle ---

TEST_F(StubWebhookTest, UrlNamesTheLoopbackPort) {
  start("{}");
  EXPECT_NE(stub_->port(), 0);
  EXPECT_EQ(stub_->url(), "https://127.0.0.1:" + std::to_string(stub_->port()) + "/");
}

TEST_F(StubWebhookTest, StopIsIdempotentAndRefusesConnections) {
  start("{}");
  stub_->stop();
  stub_->stop();
  auto res = post();
  EXPECT_EQ(res.error, net::ClientErrorKind::kConnect);
}

TEST_F(StubWebhookTest, StartRejectsANegativeTimeScale) {
  auto stub = StubWebhook::start("bad", StubSpec{}, *ca_, dir_.path(), {}, -1);
  ASSERT_FALSE(stub.ok());
  EXPECT_EQ(stub.error().message,
            "stub webhook \"bad\": time scale must be a finite number >= 0, got -1");
}

TEST_F(StubWebhookTest, StartReportsAnUnusableCa) {
  auto stub = StubWebhook::start("bad", StubSpec{}, net::CertificateAuthority{"x", "y"},
                                 dir_.path(), {});
  ASSERT_FALSE(stub.ok());
  EXPECT_TRUE(stub.error().message.starts_with(
      "stub webhook \"bad\": certificate: CA certificate: cannot parse PEM"))
      << stub.error().message;
}

TEST_F(StubWebhookTest, ASpecBuiltInCodeWithAnEmptySequenceAllows) {
  StubSpec spec;
  spec.responses.emplace_back();  // no behaviours
  auto stub = StubWebhook::start("code", std::move(spec), *ca_, dir_.path(), {});
  ASSERT_TRUE(stub.ok()) << stub.error().message;
  net::Request request;
  request.path = "/";
  request.body = podReview().dump();
  auto reply = (*stub)->answer(request);
  EXPECT_EQ(json::parse(reply.response.body)["response"]["allowed"], true);
  EXPECT_EQ(reply.delay.count(), 0);
  EXPECT_FALSE(reply.close_without_response);
}

// The stub's faults travel as the server's Reply controls beside the response: the delay scaled
// by the time scale, a hang-up as close_without_response.
TEST_F(StubWebhookTest, FaultsAreRepliedBesideTheResponse) {
  StubSpec spec;
  StubBehaviour slow;
  slow.delay = std::chrono::seconds(4);
  StubBehaviour hangup;
  hangup.close = true;
  StubRule rule;
  rule.sequence = {slow, hangup};
  rule.is_sequence = true;
  spec.responses.push_back(rule);
  auto stub = StubWebhook::start("faults", std::move(spec), *ca_, dir_.path(), {}, 0.25);
  ASSERT_TRUE(stub.ok()) << stub.error().message;
  net::Request request;
  request.path = "/";
  request.body = podReview().dump();
  auto first = (*stub)->answer(request);
  EXPECT_EQ(first.delay, std::chrono::milliseconds(1000));
  EXPECT_FALSE(first.close_without_response);
  EXPECT_EQ(json::parse(first.response.body)["response"]["allowed"], true);
  auto second = (*stub)->answer(request);
  EXPECT_TRUE(second.close_without_response);
}

}  // namespace
}  // namespace harness::sim
