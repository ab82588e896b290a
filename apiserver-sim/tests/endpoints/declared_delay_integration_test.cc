// The simulated clock of a webhook call over real HTTPS (caller.h): a stub is a declared endpoint,
// so a call to it is charged exactly the delays its answers declare and compared exactly with the
// call's budget, however long the TLS exchange took; any other endpoint gets a real deadline.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "harness/core/admission_review.h"
#include "harness/core/yaml.h"
#include "harness/sim/caller.h"
#include "harness/sim/stub_webhook.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

using namespace std::chrono_literals;

constexpr const char* kHost = "stub.example.com:443";

class DeclaredDelayTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto ca = net::CertificateAuthority::create("declared-delay-ca");
    ASSERT_TRUE(ca.ok()) << ca.error().message;
    ca_ = new net::CertificateAuthority(*ca);
  }
  static void TearDownTestSuite() {
    delete ca_;
    ca_ = nullptr;
  }

  // Starts a stub from `yaml`, routed from kHost, answering at once (time scale 0) and declared
  // to the caller unless `declared` is false.
  void start(const std::string& yaml, bool declared = true, double stub_time_scale = 0) {
    auto document = core::parseYaml(yaml);
    ASSERT_TRUE(document.ok()) << document.error().message;
    auto spec = parseStubSpec(*document);
    ASSERT_TRUE(spec.ok()) << spec.error().message;
    auto stub = StubWebhook::start("stub", std::move(*spec), *ca_, dir_.path(),
                                   {"stub.example.com"}, stub_time_scale);
    ASSERT_TRUE(stub.ok()) << stub.error().message;
    stub_ = std::move(*stub);
    HttpsWebhookCaller::DeclaredDelay delays;
    if (declared) {
      const StubWebhook* stub_ptr = stub_.get();
      delays = [stub_ptr](const std::string& uid, int attempt) {
        return stub_ptr->declaredDelay(uid, attempt);
      };
    }
    caller_.addRoute(kHost, "127.0.0.1:" + std::to_string(stub_->port()), delays);
  }

  CallResult call(std::chrono::nanoseconds budget, double time_scale = 0) {
    core::AdmissionRequest request;
    request.uid = "uid-" + std::to_string(++uids_);
    request.kind = {"", "v1", "ConfigMap"};
    request.resource = {"", "v1", "configmaps"};
    request.name = "a";
    request.namespace_name = "demo";
    request.operation = "CREATE";
    request.object = nlohmann::json{{"apiVersion", "v1"}, {"kind", "ConfigMap"}};
    WebhookCall call;
    call.webhook_name = "stub.example.com";
    call.client_config.url = "https://stub.example.com/";
    call.client_config.ca_bundle = ca_->certificate_pem;
    call.body = core::encodeAdmissionReview(
        core::makeRequestReview(core::ReviewVersion::kV1, request));
    call.request_uid = request.uid;
    call.timeout_param = "10s";
    call.budget = budget;
    call.time_scale = time_scale;
    return caller_.call(call);
  }

  static net::CertificateAuthority* ca_;
  harness::testing::ScratchDir dir_{"declared-delay"};
  std::unique_ptr<StubWebhook> stub_;
  HttpsWebhookCaller caller_;
  int uids_ = 0;
};

net::CertificateAuthority* DeclaredDelayTest::ca_ = nullptr;

// A transport error (the call did not get an answer) after `latency` on the simulated clock.
void expectTransportError(const CallResult& result, bool deadline_exceeded,
                          std::chrono::nanoseconds latency) {
  EXPECT_EQ(result.error, CallErrorKind::kTransport) << result.reason;
  EXPECT_EQ(result.deadline_exceeded, deadline_exceeded) << result.reason;
  EXPECT_EQ(result.status.code, 503);
  EXPECT_EQ(result.latency, latency);
}

TEST_F(DeclaredDelayTest, AnAnswerInTimeIsChargedExactlyItsDeclaredDelay) {
  start("responses: [{respond: {delay: 999ms}}]");
  const CallResult result = call(1s);
  ASSERT_TRUE(result.ok()) << result.reason;
  EXPECT_EQ(result.latency, 999ms);
  EXPECT_EQ(result.attempts, 1);
}

// The context is done at the deadline: an answer that would arrive then comes too late.
TEST_F(DeclaredDelayTest, ADelayOfTheWholeBudgetExceedsTheDeadline) {
  start("responses: [{respond: {delay: 1s}}]");
  const CallResult result = call(1s);
  expectTransportError(result, true, 1s);
  EXPECT_EQ(result.reason,
            "failed to call webhook: Post \"https://stub.example.com/?timeout=10s\": context "
            "deadline exceeded");
}

// However long the machine takes for the exchange (here the stub really sleeps 500 ms), only the
// declared 10 ms count against a 100 ms budget.
TEST_F(DeclaredDelayTest, RealTimeIsNotChargedToADeclaredEndpoint) {
  start("responses: [{respond: {delay: 10ms}}]", true, /*stub_time_scale=*/50);
  const CallResult result = call(100ms);
  ASSERT_TRUE(result.ok()) << result.reason;
  EXPECT_EQ(result.latency, 10ms);
}

TEST_F(DeclaredDelayTest, RetryAfterWaitsAreChargedOnTheSimulatedClock) {
  start(R"(responses:
  - sequence:
      - {delay: 200ms, http: {status: 503, body: busy, headers: {Retry-After: "2"}}}
      - {delay: 300ms}
)");
  const CallResult result = call(10s);
  ASSERT_TRUE(result.ok()) << result.reason;
  EXPECT_EQ(result.attempts, 2);
  EXPECT_EQ(result.latency, 200ms + 2s + 300ms);
}

TEST_F(DeclaredDelayTest, ARetryThatWouldOutlastTheBudgetIsNotMade) {
  start(R"(responses:
  - respond: {http: {status: 503, body: busy, headers: {Retry-After: "2"}}}
)");
  const CallResult result = call(2s);
  EXPECT_EQ(result.error, CallErrorKind::kHttpStatus);
  EXPECT_EQ(result.attempts, 1);
  EXPECT_EQ(result.latency, 0s);
  EXPECT_EQ(stub_->calls().size(), 1u);
}

TEST_F(DeclaredDelayTest, AHangUpAfterADelayIsChargedTheDelay) {
  start("responses: [{respond: {close: true, delay: 2s}}]");
  expectTransportError(call(10s), false, 2s);
}

// A request that never reached the stub (the handshake failed) declares nothing: no time passes.
TEST_F(DeclaredDelayTest, AFailedHandshakeTakesNoSimulatedTime) {
  start("tls: untrusted\nresponses: [{respond: {delay: 5s}}]");
  expectTransportError(call(1s), false, 0s);
  EXPECT_TRUE(stub_->calls().empty());
}

// The time scale paces a declared wait (it sleeps delay x scale) and changes nothing else. Only a
// lower bound on the wall-clock time is asserted: a busy machine makes it longer, never shorter.
TEST_F(DeclaredDelayTest, TheTimeScalePacesTheDeclaredDelay) {
  start("responses: [{respond: {delay: 4s}}]");
  const auto started = std::chrono::steady_clock::now();
  const CallResult result = call(10s, 0.05);
  ASSERT_TRUE(result.ok()) << result.reason;
  EXPECT_EQ(result.latency, 4s);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 200ms);
}

// An endpoint that declares nothing (the injector, an external webhook) is real: its exchange
// has the budget as a real deadline, and a timeout is charged the whole budget.
TEST_F(DeclaredDelayTest, AnUndeclaredEndpointHasARealDeadline) {
  start("responses: [{respond: {delay: 1h}}]", /*declared=*/false, /*stub_time_scale=*/1);
  expectTransportError(call(200ms), true, 200ms);
  stub_->stop();
}

TEST_F(DeclaredDelayTest, NoBudgetLeftFailsBeforeSending) {
  start("{}");
  expectTransportError(call(0s), true, 0s);
  EXPECT_TRUE(stub_->calls().empty());
}

}  // namespace
}  // namespace harness::sim
