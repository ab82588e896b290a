#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "harness/core/result.h"

namespace harness::net {

// An absolute http(s) URL split into the parts the client needs.
struct Url {
  std::string scheme;  // "https"
  std::string host;    // "webhook.ns.svc", "127.0.0.1", "::1" (no brackets)
  std::uint16_t port = 0;  // explicit or the scheme's default
  bool host_is_ip = false;
  std::string target;  // path + "?" + query, "/" when empty

  // "host:port", with brackets around IPv6 literals.
  [[nodiscard]] std::string hostPort() const;
  // The URL as text, normalised ("https://host:port/target"; default ports omitted).
  [[nodiscard]] std::string toString() const;
};

core::Result<Url> parseUrl(std::string_view text);

}  // namespace harness::net
