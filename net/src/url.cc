#include "harness/net/url.h"

#include <boost/url/parse.hpp>
#include <boost/url/url_view.hpp>

namespace harness::net {

std::string Url::hostPort() const {
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  return h + ":" + std::to_string(port);
}

std::string Url::toString() const {
  const std::string h = host.find(':') != std::string::npos ? "[" + host + "]" : host;
  const bool default_port = (scheme == "https" && port == 443) || (scheme == "http" && port == 80);
  return scheme + "://" + h + (default_port ? "" : ":" + std::to_string(port)) + target;
}

core::Result<Url> parseUrl(std::string_view text) {
  auto parsed = boost::urls::parse_absolute_uri(text);
  if (!parsed) {
    return core::makeError("parse " + std::string(1, '"') + std::string(text) + "\": " +
                           parsed.error().message());
  }
  const boost::urls::url_view& u = *parsed;
  Url url;
  url.scheme = std::string(u.scheme());
  if (url.scheme != "http" && url.scheme != "https") {
    return core::makeError("unsupported protocol scheme \"" + url.scheme + "\"");
  }
  switch (u.host_type()) {
    case boost::urls::host_type::ipv4:
      url.host = std::string(u.encoded_host());
      url.host_is_ip = true;
      break;
    case boost::urls::host_type::ipv6:
      url.host = u.host_ipv6_address().to_string();
      url.host_is_ip = true;
      break;
    case boost::urls::host_type::name:
      url.host = u.host_name();
      break;
    default:
      return core::makeError("unsupported host in URL \"" + std::string(text) + "\"");
  }
  if (url.host.empty()) return core::makeError("no Host in request URL");
  if (u.has_port()) {
    const auto n = u.port_number();
    if (n == 0) return core::makeError("invalid port \"" + std::string(u.port()) + "\" in URL");
    url.port = n;
  } else {
    url.port = url.scheme == "https" ? 443 : 80;
  }
  url.target = std::string(u.encoded_path());
  if (url.target.empty()) url.target = "/";
  if (u.has_query()) url.target += "?" + std::string(u.encoded_query());
  return url;
}

}  // namespace harness::net
