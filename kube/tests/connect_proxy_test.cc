// ConnectProxy with plain TCP peers on 127.0.0.1: the CONNECT exchange kube-apiserver's egress
// dialer performs (k8s.io/apiserver pkg/server/egressselector/egress_selector.go
// tunnelHTTPConnect), splicing both ways with half-close, and refusals.

#include "harness/kube/connect_proxy.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "harness/testing/support.h"

namespace harness::kube {
namespace {

int connectUnix(const std::filesystem::path& path) {
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::strncpy(address.sun_path, path.c_str(), sizeof address.sun_path - 1);
  EXPECT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
  return fd;
}

void sendText(int fd, const std::string& text) {
  ASSERT_EQ(::send(fd, text.data(), text.size(), MSG_NOSIGNAL), static_cast<ssize_t>(text.size()));
}

// Reads until EOF.
std::string readAll(int fd) {
  std::string out;
  char buffer[4096];
  ssize_t n;
  while ((n = ::recv(fd, buffer, sizeof buffer, 0)) > 0) out.append(buffer, static_cast<size_t>(n));
  return out;
}

// Reads exactly `size` bytes (or until EOF).
std::string readExactly(int fd, std::size_t size) {
  std::string out;
  char buffer[4096];
  while (out.size() < size) {
    const ssize_t n = ::recv(fd, buffer, std::min(sizeof buffer, size - out.size()), 0);
    if (n <= 0) break;
    out.append(buffer, static_cast<size_t>(n));
  }
  return out;
}

// A peer that answers "upper-cased:" + everything it read once the client half-closes.
class UpperCaseServer {
 public:
  UpperCaseServer() {
    thread_ = std::thread([this] {
      const int peer = ::accept(listener_.fd(), nullptr, nullptr);
      if (peer < 0) return;
      std::string text = readAll(peer);
      for (char& c : text) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      sendText(peer, "upper-cased:" + text);
      ::close(peer);
    });
  }
  ~UpperCaseServer() {
    ::shutdown(listener_.fd(), SHUT_RDWR);  // ends an accept() that got no connection
    thread_.join();
  }
  [[nodiscard]] std::uint16_t port() const { return listener_.port(); }

 private:
  testing::ListeningSocket listener_;
  std::thread thread_;
};

class ConnectProxyTest : public ::testing::Test {
 protected:
  testing::ScratchDir scratch_{"proxy"};
};

constexpr const char* kEstablished = "HTTP/1.1 200 Connection established\r\n\r\n";

TEST_F(ConnectProxyTest, TunnelsARoutedTargetBothWaysWithHalfClose) {
  UpperCaseServer webhook;
  auto proxy = ConnectProxy::start(scratch_ / "proxy.sock", {{"10.43.12.7:443", webhook.port()}});
  ASSERT_TRUE(proxy.ok()) << proxy.error().message;
  int client = connectUnix((*proxy)->socketPath());
  // Exactly what tunnelHTTPConnect writes.
  sendText(client, "CONNECT 10.43.12.7:443 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(readExactly(client, std::string(kEstablished).size()), kEstablished);
  sendText(client, "client hello");
  ::shutdown(client, SHUT_WR);
  EXPECT_EQ(readAll(client), "upper-cased:CLIENT HELLO");
  ::close(client);

  // A client that sends its first bytes with the request head.
  UpperCaseServer eager;
  (*proxy)->setRoute("10.43.12.8:443", eager.port());
  client = connectUnix((*proxy)->socketPath());
  sendText(client, "CONNECT 10.43.12.8:443 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\nhello");
  EXPECT_EQ(readExactly(client, std::string(kEstablished).size()), kEstablished);
  sendText(client, " again");
  ::shutdown(client, SHUT_WR);
  EXPECT_EQ(readAll(client), "upper-cased:HELLO AGAIN");
  ::close(client);
  EXPECT_EQ((*proxy)->targets(), (std::vector<std::string>{"10.43.12.7:443", "10.43.12.8:443"}));
}

TEST_F(ConnectProxyTest, AnUnknownTargetIs502AndARouteCanBeAddedLater) {
  UpperCaseServer webhook;
  auto proxy = ConnectProxy::start(scratch_ / "proxy.sock");
  ASSERT_TRUE(proxy.ok()) << proxy.error().message;
  int client = connectUnix((*proxy)->socketPath());
  sendText(client, "CONNECT 10.43.0.99:443 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  const std::string refused = readAll(client);
  ::close(client);
  EXPECT_EQ(refused.rfind("HTTP/1.1 502 Bad Gateway\r\n", 0), 0u) << refused;
  EXPECT_NE(refused.find("no route to 10.43.0.99:443"), std::string::npos) << refused;

  (*proxy)->setRoute("10.43.0.99:443", webhook.port());
  client = connectUnix((*proxy)->socketPath());
  sendText(client, "CONNECT 10.43.0.99:443 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(readExactly(client, std::string(kEstablished).size()), kEstablished);
  ::shutdown(client, SHUT_WR);
  EXPECT_EQ(readAll(client), "upper-cased:");
  ::close(client);
}

TEST_F(ConnectProxyTest, OtherMethodsAre400AndStopEndsOpenTunnels) {
  testing::ListeningSocket silent;  // accepts (backlog), never answers
  auto proxy = ConnectProxy::start(scratch_ / "proxy.sock", {{"svc:443", silent.port()}});
  ASSERT_TRUE(proxy.ok()) << proxy.error().message;
  int client = connectUnix((*proxy)->socketPath());
  sendText(client, "GET / HTTP/1.1\r\nHost: x\r\n\r\n");
  const std::string answer = readAll(client);
  ::close(client);
  EXPECT_EQ(answer.rfind("HTTP/1.1 400 Bad Request\r\n", 0), 0u) << answer;

  client = connectUnix((*proxy)->socketPath());
  sendText(client, "CONNECT svc:443 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(readExactly(client, std::string(kEstablished).size()), kEstablished);
  (*proxy)->stop();  // returns although the tunnel is idle, and closes it
  EXPECT_EQ(readAll(client), "");
  EXPECT_FALSE(std::filesystem::exists(scratch_ / "proxy.sock"));
  ::close(client);
}

}  // namespace
}  // namespace harness::kube
