#pragma once

// An HTTP CONNECT proxy on a Unix domain socket for kube-apiserver's egress selector: with an
// EgressSelectorConfiguration whose `cluster` selection uses `proxyProtocol: HTTPConnect` over
// `transport.uds.udsName: <socket>`, kube-apiserver dials webhooks referenced by `service`
// through it. (The TCP transport always dials the proxy with TLS and a client certificate in
// v1.37.2: pkg/server/egressselector/egress_selector.go connectionToDialerCreator calls
// getTLSConfig, which dereferences a nil tlsConfig for an http:// URL, so kube-apiserver panics
// at start; the UDS transport is plain HTTP CONNECT.) It is dialled (k8s.io/apiserver pkg/util/webhook/authentication.go). It sends
// `CONNECT <addr> HTTP/1.1` and requires a 200 answer with nothing buffered after it
// (pkg/server/egressselector/egress_selector.go tunnelHTTPConnect); `<addr>` is what the service
// resolver returned: the Service's ClusterIP and port (pkg/util/webhook/client.go). TLS is then
// spoken end to end, verified against `<name>.<namespace>.svc`.
//
// The proxy splices each CONNECT whose target is in its table to the table's loopback port and
// answers 502 for any other target (and 400 for anything but a CONNECT request). One thread per
// connection (kube-apiserver keeps a few webhook connections alive), joined by stop().

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "harness/core/result.h"

namespace harness::kube {

class ConnectProxy {
 public:
  // Listens on the Unix socket `socket_path` (which must not exist; removed by stop()). `routes`
  // maps "host:port" (as the client writes it in the CONNECT line, e.g. "10.43.12.7:443") to a
  // port on 127.0.0.1.
  static core::Result<std::unique_ptr<ConnectProxy>> start(
      const std::filesystem::path& socket_path, std::map<std::string, std::uint16_t> routes = {});
  ~ConnectProxy();  // stop()
  ConnectProxy(const ConnectProxy&) = delete;
  ConnectProxy& operator=(const ConnectProxy&) = delete;

  [[nodiscard]] const std::filesystem::path& socketPath() const { return socket_path_; }
  // Adds or replaces a route; later CONNECTs use it.
  void setRoute(const std::string& target, std::uint16_t loopback_port);
  // Closes the listener and every tunnel; idempotent.
  void stop();
  // The CONNECT targets seen so far, in order (for tests and explanations).
  [[nodiscard]] std::vector<std::string> targets() const;

 private:
  ConnectProxy() = default;
  void acceptLoop();
  void serve(int client);

  int listener_ = -1;
  int wake_[2] = {-1, -1};  // a pipe: written by stop() to end every poll()
  std::filesystem::path socket_path_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mutex_;
  std::map<std::string, std::uint16_t> routes_;
  std::vector<std::string> targets_;
  std::vector<std::thread> threads_;
  std::thread acceptor_;
};

}  // namespace harness::kube
