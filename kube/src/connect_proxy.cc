#include "harness/kube/connect_proxy.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <tuple>

#include <fmt/format.h>

namespace harness::kube {

namespace {

// Go's http.DefaultMaxHeaderBytes is 1 MiB; a CONNECT request head is a few dozen bytes.
constexpr std::size_t kMaxRequestHead = std::size_t{16} * 1024;

bool writeAll(int fd, const char* data, std::size_t size) {
  while (size > 0) {
    const ssize_t n = ::send(fd, data, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool writeAll(int fd, const std::string& text) { return writeAll(fd, text.data(), text.size()); }

std::string statusLine(int code, const char* reason, const std::string& body) {
  return fmt::format("HTTP/1.1 {} {}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n"
                     "Connection: close\r\n\r\n{}",
                     code, reason, body.size(), body);
}

int connectLoopback(std::uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

}  // namespace

core::Result<std::unique_ptr<ConnectProxy>> ConnectProxy::start(
    const std::filesystem::path& socket_path, std::map<std::string, std::uint16_t> routes) {
  std::unique_ptr<ConnectProxy> proxy(new ConnectProxy());
  proxy->routes_ = std::move(routes);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  const std::string path = socket_path.string();
  if (path.empty() || path.size() >= sizeof address.sun_path) {
    return core::makeError(fmt::format(
        "CONNECT proxy: socket path {} is empty or longer than {} bytes", path,
        sizeof address.sun_path - 1));
  }
  std::memcpy(address.sun_path, path.c_str(), path.size() + 1);
  proxy->listener_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (proxy->listener_ < 0 || ::pipe2(proxy->wake_, O_CLOEXEC) != 0) {
    return core::makeError(fmt::format("CONNECT proxy: {}", std::strerror(errno)));
  }
  if (::bind(proxy->listener_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 ||
      ::listen(proxy->listener_, 64) != 0) {
    return core::makeError(
        fmt::format("CONNECT proxy: cannot listen on {}: {}", path, std::strerror(errno)));
  }
  proxy->socket_path_ = socket_path;
  proxy->acceptor_ = std::thread([p = proxy.get()] { p->acceptLoop(); });
  return proxy;
}

ConnectProxy::~ConnectProxy() {
  stop();
  for (int fd : {listener_, wake_[0], wake_[1]}) {
    if (fd >= 0) ::close(fd);
  }
}

void ConnectProxy::setRoute(const std::string& target, std::uint16_t loopback_port) {
  std::lock_guard lock(mutex_);
  routes_[target] = loopback_port;
}

std::vector<std::string> ConnectProxy::targets() const {
  std::lock_guard lock(mutex_);
  return targets_;
}

void ConnectProxy::stop() {
  if (stopping_.exchange(true)) return;
  if (wake_[1] >= 0) {
    const char byte = 0;
    ssize_t ignored = ::write(wake_[1], &byte, 1);  // never read: every poll() sees it from now on
    (void)ignored;
  }
  if (acceptor_.joinable()) acceptor_.join();
  std::vector<std::thread> threads;
  {
    std::lock_guard lock(mutex_);
    threads.swap(threads_);
  }
  for (auto& thread : threads) thread.join();
  if (!socket_path_.empty()) ::unlink(socket_path_.c_str());
}

void ConnectProxy::acceptLoop() {
  while (!stopping_) {
    pollfd fds[2] = {{listener_, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0) {
      if (errno == EINTR) continue;
      return;
    }
    if (fds[1].revents != 0) return;
    const int client = ::accept4(listener_, nullptr, nullptr, SOCK_CLOEXEC);
    if (client < 0) continue;
    std::lock_guard lock(mutex_);
    threads_.emplace_back([this, client] { serve(client); });
  }
}

void ConnectProxy::serve(int client) {
  // The request head: "CONNECT host:port HTTP/1.1\r\n" headers "\r\n". Bytes read past it
  // (a client that does not wait for the answer) are the tunnel's first bytes.
  std::string head;
  char buffer[16 * 1024];
  while (head.find("\r\n\r\n") == std::string::npos) {
    if (head.size() > kMaxRequestHead) {
      writeAll(client, statusLine(431, "Request Header Fields Too Large", "request head too large\n"));
      ::close(client);
      return;
    }
    pollfd fds[2] = {{client, POLLIN, 0}, {wake_[0], POLLIN, 0}};
    if (::poll(fds, 2, -1) < 0 && errno != EINTR) break;
    if (fds[1].revents != 0) {
      ::close(client);
      return;
    }
    const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(client);
      return;
    }
    head.append(buffer, static_cast<std::size_t>(n));
  }
  const auto line_end = head.find("\r\n");
  const std::string line = head.substr(0, line_end);
  const auto first_space = line.find(' ');
  const auto second_space = line.find(' ', first_space == std::string::npos ? 0 : first_space + 1);
  if (line.rfind("CONNECT ", 0) != 0 || second_space == std::string::npos) {
    writeAll(client, statusLine(400, "Bad Request", "only CONNECT is supported\n"));
    ::close(client);
    return;
  }
  const std::string target = line.substr(first_space + 1, second_space - first_space - 1);
  std::uint16_t upstream_port = 0;
  {
    std::lock_guard lock(mutex_);
    targets_.push_back(target);
    auto it = routes_.find(target);
    if (it != routes_.end()) upstream_port = it->second;
  }
  if (upstream_port == 0) {
    writeAll(client, statusLine(502, "Bad Gateway", "no route to " + target + "\n"));
    ::close(client);
    return;
  }
  const int upstream = connectLoopback(upstream_port);
  if (upstream < 0) {
    writeAll(client, statusLine(502, "Bad Gateway", fmt::format("dial {} (127.0.0.1:{}): {}\n",
                                                                target, upstream_port,
                                                                std::strerror(errno))));
    ::close(client);
    return;
  }
  const std::string early = head.substr(head.find("\r\n\r\n") + 4);
  if (!writeAll(client, std::string("HTTP/1.1 200 Connection established\r\n\r\n")) ||
      !writeAll(upstream, early)) {
    ::close(client);
    ::close(upstream);
    return;
  }
  // Splice both ways until both sides have closed (a half-close is passed on) or stop().
  bool client_open = true;
  bool upstream_open = true;
  while ((client_open || upstream_open) && !stopping_) {
    pollfd fds[3] = {{client, static_cast<short>(client_open ? POLLIN : 0), 0},
                     {upstream, static_cast<short>(upstream_open ? POLLIN : 0), 0},
                     {wake_[0], POLLIN, 0}};
    if (::poll(fds, 3, -1) < 0) {
      if (errno == EINTR) continue;
      break;
    }
    if (fds[2].revents != 0) break;
    bool failed = false;
    for (auto [from, to, open] : {std::tuple{0, upstream, &client_open},
                                  std::tuple{1, client, &upstream_open}}) {
      if (!*open || fds[from].revents == 0) continue;
      const ssize_t n = ::recv(fds[from].fd, buffer, sizeof buffer, 0);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        *open = false;
        ::shutdown(to, SHUT_WR);
        continue;
      }
      if (!writeAll(to, buffer, static_cast<std::size_t>(n))) failed = true;
    }
    if (failed) break;
  }
  ::close(client);
  ::close(upstream);
}

}  // namespace harness::kube
