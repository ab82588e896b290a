#pragma once

// Plain HTTP message types shared by the server and the client. Beast stays out of this header
// (it is included widely); the conversions live in the library's sources.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harness::net {

// Ordered header list with case-insensitive lookup (HTTP field names are case-insensitive).
class Headers {
 public:
  void add(std::string name, std::string value) {
    fields_.emplace_back(std::move(name), std::move(value));
  }
  // Replaces every field named `name` with one field.
  void set(std::string name, std::string value);
  [[nodiscard]] std::optional<std::string> get(std::string_view name) const;
  [[nodiscard]] std::vector<std::string> getAll(std::string_view name) const;
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& fields() const {
    return fields_;
  }
  [[nodiscard]] bool empty() const { return fields_.empty(); }

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

struct Request {
  std::string method;   // "POST"
  std::string target;   // "/inject?timeout=10s" as received
  std::string path;     // "/inject" (percent-decoding not applied)
  std::string query;    // "timeout=10s"
  Headers headers;
  std::string body;
  std::string peer;     // "127.0.0.1:54321"
  bool tls = false;
  // Subject of a verified client certificate, when the server verifies clients.
  std::optional<std::string> client_certificate_subject;
  // The server name the client asked for in the TLS handshake (SNI), when it sent one.
  std::optional<std::string> tls_server_name;

  // The value of query parameter `name` ("timeout" -> "10s"), without percent-decoding.
  [[nodiscard]] std::optional<std::string> queryParam(std::string_view name) const;
};

// A response body produced over time (a Kubernetes watch): the server sends the response head at
// once with chunked transfer encoding, then whatever pull() yields as chunks until it reports the
// end, the client goes away, or the server stops. The server calls pull() on the connection's
// thread, never concurrently, each time it is woken by the function start() received or when the
// time pull() last asked for comes; pull() must not block (it takes what a producer on another
// thread queued). cancel() is called once at the end whatever the reason, so the producer can drop
// its subscription; after it, wake() does nothing.
class BodySource {
 public:
  struct Pull {
    std::string data;  // the next bytes of the body, possibly empty
    bool end = false;  // the body is complete
    // When to call pull() again without being woken (a timeout, a periodic event).
    std::chrono::steady_clock::time_point wake_at = std::chrono::steady_clock::time_point::max();
  };
  virtual ~BodySource() = default;
  // Called once before the first pull() with a function that wakes the connection (any thread).
  virtual void start(std::function<void()> wake) = 0;
  virtual Pull pull() = 0;
  virtual void cancel() = 0;
};

struct Response {
  int status = 200;
  Headers headers;
  std::string body;
  // When set, the body comes from it (chunked) and `body` is not sent; the connection is closed
  // after the stream ends.
  std::shared_ptr<BodySource> stream;

  static Response text(int status, std::string body);
  static Response json(int status, std::string body);
};

// The reason phrase for a status code ("OK", "Bad Request", ...), or "" when unknown.
std::string_view reasonPhrase(int status);

}  // namespace harness::net
