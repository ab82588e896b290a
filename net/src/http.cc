#include "harness/net/http.h"

#include <algorithm>
#include <cctype>

#include <boost/beast/http/status.hpp>

namespace harness::net {

namespace {

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

void Headers::set(std::string name, std::string value) {
  std::erase_if(fields_, [&](const auto& f) { return equalsIgnoreCase(f.first, name); });
  fields_.emplace_back(std::move(name), std::move(value));
}

std::optional<std::string> Headers::get(std::string_view name) const {
  for (const auto& [k, v] : fields_) {
    if (equalsIgnoreCase(k, name)) return v;
  }
  return std::nullopt;
}

std::vector<std::string> Headers::getAll(std::string_view name) const {
  std::vector<std::string> out;
  for (const auto& [k, v] : fields_) {
    if (equalsIgnoreCase(k, name)) out.push_back(v);
  }
  return out;
}

std::optional<std::string> Request::queryParam(std::string_view name) const {
  std::string_view rest = query;
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    std::string_view pair = rest.substr(0, amp);
    rest = amp == std::string_view::npos ? std::string_view{} : rest.substr(amp + 1);
    const auto eq = pair.find('=');
    std::string_view key = pair.substr(0, eq);
    if (key == name) {
      return std::string(eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1));
    }
  }
  return std::nullopt;
}

Response Response::text(int status, std::string body) {
  Response r;
  r.status = status;
  r.headers.set("Content-Type", "text/plain; charset=utf-8");
  r.body = std::move(body);
  return r;
}

Response Response::json(int status, std::string body) {
  Response r;
  r.status = status;
  r.headers.set("Content-Type", "application/json");
  r.body = std::move(body);
  return r;
}

std::string_view reasonPhrase(int status) {
  if (status < 100 || status > 999) return {};
  auto sv = boost::beast::http::obsolete_reason(static_cast<boost::beast::http::status>(status));
  if (sv == "<unknown-status>") return {};
  return {sv.data(), sv.size()};
}

}  // namespace harness::net
