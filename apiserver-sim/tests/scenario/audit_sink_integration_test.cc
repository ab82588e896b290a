// `apiserver-sim audit sink` as a process, over HTTPS with client certificates, receiving what
// kube-apiserver's webhook audit backend sends (k8s.io/apiserver plugin/pkg/audit/webhook,
// backend.processEvents: a POST of an audit.k8s.io/v1 EventList, Content-Type application/json,
// to the path of the kubeconfig's server URL): the log it writes is the log backend's, one event
// per line, read back by the audit commands.

#include <csignal>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/audit/chain.h"
#include "harness/audit/event.h"
#include "harness/audit/log.h"
#include "harness/net/client.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// The events of a real kube-apiserver log (the local control plane of kube/), one per line.
std::vector<std::string> realEvents() {
  std::istringstream in(testing::readFile(testing::sourceDir() / "audit" / "tests" / "testdata" /
                                          "kube_denials.log"));
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// The body backend.processEvents posts: the events as an EventList (the audit codec writes
// "metadata":{} and the items).
std::string eventList(const std::vector<std::string>& events, std::size_t from, std::size_t to) {
  std::string items;
  for (std::size_t i = from; i < to; ++i) items += (i == from ? "" : ",") + events[i];
  return R"({"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[)" + items +
         "]}";
}

class AuditSinkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    testing::generateCertificates(dir_.path());
    testing::CertificateRequest client;
    client.common_name = "kube-apiserver";
    client.client = true;
    client.ca_cert_file = (dir_ / "ca.crt").string();
    client.ca_key_file = (dir_ / "ca.key").string();
    fs::create_directories(dir_ / "client");
    testing::generateCertificates(dir_ / "client", client);
    sink_ = std::make_unique<testing::ChildProcess>(
        std::vector<std::string>{(testing::binaryDir() / "apiserver-sim/apiserver-sim").string(),
                                 "audit", "sink", "--log", log().string(), "--port", "0",
                                 "--tls-cert", (dir_ / "tls.crt").string(), "--tls-key",
                                 (dir_ / "tls.key").string(), "--client-ca",
                                 (dir_ / "ca.crt").string()},
        dir_ / "sink.out");
    // "apiserver-sim: audit sink at https://127.0.0.1:<port> writing <log>" once it listens.
    constexpr std::string_view kAt = "audit sink at https://127.0.0.1:";
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    std::string out;
    while (std::chrono::steady_clock::now() < deadline &&
           (out = output()).find(" writing ") == std::string::npos && sink_->running()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    const auto at = out.find(kAt);
    ASSERT_NE(at, std::string::npos) << out;
    url_ = "https://127.0.0.1:" +
           out.substr(at + kAt.size(), out.find(' ', at + kAt.size()) - at - kAt.size()) +
           "/audit/events";
  }

  void TearDown() override {
    if (sink_ && sink_->running()) {
      EXPECT_EQ(sink_->stop(SIGTERM, 10'000), 0) << output();
    }
  }

  [[nodiscard]] fs::path log() const { return dir_ / "sink.log"; }
  [[nodiscard]] std::string output() const {
    return fs::exists(dir_ / "sink.out") ? testing::readFile(dir_ / "sink.out") : "";
  }

  net::ClientResponse post(const std::string& body, bool client_certificate = true,
                           const std::string& method = "POST") {
    net::ClientOptions options;
    options.ca_pem = testing::readFile(dir_ / "ca.crt");
    if (client_certificate) {
      options.client_certificate_pem = testing::readFile(dir_ / "client" / "tls.crt");
      options.client_key_pem = testing::readFile(dir_ / "client" / "tls.key");
    }
    net::HttpClient client(options);
    net::ClientRequest request;
    request.method = method;
    request.url = url_;
    request.headers.add("Content-Type", "application/json");
    request.body = body;
    request.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    return client.sendSync(std::move(request));
  }

  testing::ScratchDir dir_{"audit-sink"};
  std::unique_ptr<testing::ChildProcess> sink_;
  std::string url_;
};

TEST_F(AuditSinkTest, BatchesAreWrittenAsTheLogBackendsLinesAllOrNothing) {
  const std::vector<std::string> events = realEvents();
  ASSERT_GE(events.size(), 4u);
  const std::size_t half = events.size() / 2;

  // Two batches, as the batching backend sends them.
  for (const auto& [from, to] : {std::pair{std::size_t{0}, half}, std::pair{half, events.size()}}) {
    const auto response = post(eventList(events, from, to));
    ASSERT_TRUE(response.ok()) << response.error_message << "\n" << output();
    EXPECT_EQ(response.status, 200) << response.body;
  }
  // Every event, in order, each as the log backend writes it.
  std::string expected;
  for (const auto& line : events) {
    auto event = audit::parseLogLine(line);
    ASSERT_TRUE(event.ok()) << event.error().message;
    expected += audit::toJsonLine(*event);
  }
  EXPECT_EQ(testing::readFile(log()), expected);

  // A batch with one bad item: 400 naming the item and field, nothing of it written.
  std::vector<std::string> bad = {events[0], events[1]};
  const auto stage = bad[1].find("\"stage\":\"");
  ASSERT_NE(stage, std::string::npos);
  bad[1].replace(stage, 9, "\"stage\":\"Done");
  auto refused = post(eventList(bad, 0, 2));
  ASSERT_TRUE(refused.ok()) << refused.error_message;
  EXPECT_EQ(refused.status, 400);
  EXPECT_THAT(refused.body, HasSubstr("items[1].stage: unknown stage \"Done"));
  EXPECT_EQ(testing::readFile(log()), expected);
  // Not a POST.
  auto get = post("", true, "GET");
  ASSERT_TRUE(get.ok()) << get.error_message;
  EXPECT_EQ(get.status, 405);
  // Without a client certificate signed by --client-ca: no TLS session.
  auto anonymous = post(eventList(events, 0, 1), false);
  EXPECT_FALSE(anonymous.ok() && anonymous.status == 200) << anonymous.status;
  EXPECT_EQ(testing::readFile(log()), expected);

  // The audit commands read the sink's log as the original one.
  std::vector<audit::MutationChain> chains;
  {
    std::ifstream in(log(), std::ios::binary);
    audit::ChainReader reader(in, log().string(), false);
    while (auto entry = reader.next([](const std::string& m) { ADD_FAILURE() << m; })) {
      chains.push_back(std::move(entry->chain));
    }
  }
  EXPECT_EQ(chains.size(), 9u);

  ASSERT_EQ(sink_->stop(SIGTERM, 10'000), 0) << output();
  EXPECT_THAT(output(), HasSubstr("audit sink stopping, " + std::to_string(events.size()) +
                                  " events written"));
}

}  // namespace
}  // namespace harness::sim
