// Streamed responses (a BodySource, what a Kubernetes watch is) on 127.0.0.1 over plain HTTP with
// a raw socket client: chunks as the source wakes the server, the last chunk at the end, the
// source cancelled when the client closes or the server stops, and other requests served
// meanwhile. Waits are bounded far above need (a failing run's backstop, not a timing
// assumption).

#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>

#include <gtest/gtest.h>

#include "harness/net/server.h"
#include "harness/testing/loopback_socket.h"

namespace harness::net {
namespace {

using namespace std::chrono_literals;

constexpr auto kDeadline = 120s;

// A source the test feeds by hand.
class ScriptedSource final : public BodySource {
 public:
  void start(std::function<void()> wake) override {
    std::lock_guard lock(mutex_);
    wake_ = std::move(wake);
    started_ = true;
    cv_.notify_all();
  }
  Pull pull() override {
    std::lock_guard lock(mutex_);
    Pull out;
    for (; !chunks_.empty(); chunks_.pop_front()) out.data += chunks_.front();
    out.end = end_;
    return out;
  }
  void cancel() override {
    std::lock_guard lock(mutex_);
    cancelled_ = true;
    wake_ = nullptr;
    cv_.notify_all();
  }

  void send(std::string chunk, bool end = false) {
    std::lock_guard lock(mutex_);
    chunks_.push_back(std::move(chunk));
    end_ = end;
    if (wake_) wake_();
  }
  bool waitStarted() {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, kDeadline, [&] { return started_; });
  }
  bool waitCancelled() {
    std::unique_lock lock(mutex_);
    return cv_.wait_for(lock, kDeadline, [&] { return cancelled_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::string> chunks_;
  bool end_ = false;
  bool started_ = false;
  bool cancelled_ = false;
  std::function<void()> wake_;
};

// A raw connection (the test reads the stream's bytes as they come); kDeadline to receive.
using Connection = harness::testing::LoopbackSocket;
static_assert(kDeadline == 120s, "LoopbackSocket's default receive timeout");

class ServerStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Router router;
    router.exact("/watch", [this](const Request&) {
      Response response;
      response.headers.set("Content-Type", "application/json");
      response.stream = source_;
      return response;
    });
    router.exact("/healthz", [](const Request&) { return Response::text(200, "ok"); });
    ServerOptions options;
    options.threads = 1;  // one I/O thread: a stream must not hold it
    server_ = std::make_unique<Server>(options, std::move(router));
    ASSERT_TRUE(server_->start().ok());
  }
  void TearDown() override { server_->stop(0ms); }

  std::unique_ptr<Connection> openStream() {
    auto connection = std::make_unique<Connection>(server_->port());
    EXPECT_TRUE(connection->connected());
    EXPECT_TRUE(connection->send("GET /watch HTTP/1.1\r\nHost: test\r\n\r\n"));
    EXPECT_TRUE(source_->waitStarted());
    return connection;
  }

  std::shared_ptr<ScriptedSource> source_ = std::make_shared<ScriptedSource>();
  std::unique_ptr<Server> server_;
};

TEST_F(ServerStreamTest, ChunksFollowTheSourceAndTheLastChunkEndsTheResponse) {
  auto connection = openStream();
  source_->send("{\"n\":1}\n");
  ASSERT_TRUE(connection->readUntil("{\"n\":1}\n")) << connection->received();
  EXPECT_NE(connection->received().find("HTTP/1.1 200 OK\r\n"), std::string::npos);
  EXPECT_NE(connection->received().find("Transfer-Encoding: chunked\r\n"), std::string::npos);
  EXPECT_NE(connection->received().find("Connection: close\r\n"), std::string::npos);
  source_->send("{\"n\":2}\n", true);
  EXPECT_TRUE(connection->readToEnd());
  const std::string& all = connection->received();
  EXPECT_NE(all.find("8\r\n{\"n\":2}\n\r\n"), std::string::npos) << all;
  EXPECT_EQ(all.substr(all.size() - 5), "0\r\n\r\n") << all;
  EXPECT_TRUE(source_->waitCancelled());
}

TEST_F(ServerStreamTest, TheClientClosingCancelsTheSource) {
  auto connection = openStream();
  source_->send("first\n");
  ASSERT_TRUE(connection->readUntil("first\n"));
  connection->close();
  EXPECT_TRUE(source_->waitCancelled());
}

TEST_F(ServerStreamTest, OtherRequestsAreServedWhileAStreamIsOpen) {
  auto stream = openStream();
  Connection other(server_->port());
  ASSERT_TRUE(other.connected());
  ASSERT_TRUE(other.send("GET /healthz HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n"));
  EXPECT_TRUE(other.readToEnd());
  EXPECT_NE(other.received().find("\r\n\r\nok"), std::string::npos) << other.received();
}

TEST_F(ServerStreamTest, StoppingTheServerEndsTheStream) {
  auto connection = openStream();
  source_->send("first\n");
  ASSERT_TRUE(connection->readUntil("first\n"));
  server_->stop(kDeadline);
  EXPECT_TRUE(connection->readToEnd());
  const std::string& all = connection->received();
  EXPECT_EQ(all.substr(all.size() - 5), "0\r\n\r\n") << all;
  EXPECT_TRUE(source_->waitCancelled());
}

}  // namespace
}  // namespace harness::net
