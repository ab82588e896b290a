#pragma once

// A plain TCP connection to 127.0.0.1 that a test owns: closed when it goes out of scope however
// the test ends (an early ASSERT included), with a receive timeout so that a server that never
// answers fails the test instead of hanging it. For tests that must speak bytes a client library
// would not send (raw HTTP, idle connections, their own TLS).

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace harness::testing {

class LoopbackSocket {
 public:
  // A TCP socket not yet connected (fd() is -1 when socket() failed, as when the process has no
  // descriptor left).
  LoopbackSocket();
  // A socket connected to 127.0.0.1:port (connected() says whether it is).
  explicit LoopbackSocket(std::uint16_t port,
                          std::chrono::seconds receive_timeout = std::chrono::seconds(120));
  ~LoopbackSocket();
  LoopbackSocket(LoopbackSocket&& other) noexcept;
  LoopbackSocket& operator=(LoopbackSocket&& other) noexcept;
  LoopbackSocket(const LoopbackSocket&) = delete;
  LoopbackSocket& operator=(const LoopbackSocket&) = delete;

  // Connects to 127.0.0.1:port with a receive timeout; true when connected.
  bool connect(std::uint16_t port,
               std::chrono::seconds receive_timeout = std::chrono::seconds(120));
  [[nodiscard]] bool connected() const { return connected_; }
  [[nodiscard]] int fd() const { return fd_; }

  // Sends all of `text`; false when the peer is gone.
  bool send(std::string_view text);
  // Reads until what was received contains `text`; false at end of file, an error or the
  // receive timeout.
  bool readUntil(std::string_view text);
  // Reads until the peer closes; true when it did.
  bool readToEnd();
  // Everything read so far.
  [[nodiscard]] const std::string& received() const { return received_; }
  // Whether the peer has closed the connection, now (end of file readable, nothing consumed).
  [[nodiscard]] bool closedByPeer() const;
  void close();

 private:
  bool readSome();

  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string received_;
};

}  // namespace harness::testing
