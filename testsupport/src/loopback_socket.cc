#include "harness/testing/loopback_socket.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <utility>

namespace harness::testing {

LoopbackSocket::LoopbackSocket() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {}

LoopbackSocket::LoopbackSocket(std::uint16_t port, std::chrono::seconds receive_timeout)
    : LoopbackSocket() {
  connect(port, receive_timeout);
}

LoopbackSocket::~LoopbackSocket() { close(); }

LoopbackSocket::LoopbackSocket(LoopbackSocket&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      connected_(std::exchange(other.connected_, false)),
      eof_(other.eof_),
      received_(std::move(other.received_)) {}

LoopbackSocket& LoopbackSocket::operator=(LoopbackSocket&& other) noexcept {
  if (this != &other) {
    close();
    fd_ = std::exchange(other.fd_, -1);
    connected_ = std::exchange(other.connected_, false);
    eof_ = other.eof_;
    received_ = std::move(other.received_);
  }
  return *this;
}

bool LoopbackSocket::connect(std::uint16_t port, std::chrono::seconds receive_timeout) {
  if (fd_ < 0) return false;
  const timeval timeout{static_cast<time_t>(receive_timeout.count()), 0};
  ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  connected_ = ::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0;
  return connected_;
}

bool LoopbackSocket::send(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::send(fd_, text.data(), text.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
  return true;
}

bool LoopbackSocket::readUntil(std::string_view text) {
  while (received_.find(text) == std::string::npos) {
    if (!readSome()) return false;
  }
  return true;
}

bool LoopbackSocket::readToEnd() {
  while (readSome()) {
  }
  return eof_;
}

bool LoopbackSocket::closedByPeer() const {
  char byte = 0;
  return fd_ >= 0 && ::recv(fd_, &byte, 1, MSG_DONTWAIT | MSG_PEEK) == 0;
}

void LoopbackSocket::close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  connected_ = false;
}

bool LoopbackSocket::readSome() {
  if (fd_ < 0) return false;
  char buffer[4096];
  const ssize_t n = ::recv(fd_, buffer, sizeof buffer, 0);
  if (n == 0) eof_ = true;
  if (n <= 0) return false;
  received_.append(buffer, static_cast<std::size_t>(n));
  return true;
}

}  // namespace harness::testing
