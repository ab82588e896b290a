// Followed: k8s.io/apiserver pkg/endpoints/request/requestinfo.go (NewRequestInfo, specialVerbs,
// namespaceSubresources) and Go's net/url (ParseQuery, unescape).

#include "request_info.h"

#include <algorithm>
#include <cctype>

#include "harness/go/strconv.h"


namespace harness::sim::rest {
namespace {

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::vector<std::string> splitPath(std::string_view path) {
  // splitPath: strings.Trim(path, "/") then strings.Split(path, "/"); "" for the root.
  while (!path.empty() && path.front() == '/') path.remove_prefix(1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  std::vector<std::string> parts;
  if (path.empty()) return parts;
  std::size_t start = 0;
  while (true) {
    const auto slash = path.find('/', start);
    parts.push_back(
        percentDecode(path.substr(start, slash == std::string_view::npos ? slash : slash - start),
                      false));
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  return parts;
}

}  // namespace

std::string percentDecode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%' && i + 2 < text.size()) {
      const int hi = hexValue(text[i + 1]);
      const int lo = hexValue(text[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_is_space && c == '+' ? ' ' : c);
  }
  return out;
}

QueryValues QueryValues::parse(std::string_view query) {
  QueryValues values;
  while (!query.empty()) {
    const auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    if (pair.empty()) continue;
    const auto eq = pair.find('=');
    std::string key = percentDecode(pair.substr(0, eq), true);
    std::string value =
        eq == std::string_view::npos ? std::string() : percentDecode(pair.substr(eq + 1), true);
    values.values_[std::move(key)].push_back(std::move(value));
  }
  return values;
}

std::optional<std::string> QueryValues::get(const std::string& key) const {
  auto it = values_.find(key);
  if (it == values_.end() || it->second.empty()) return std::nullopt;
  return it->second.front();
}

std::vector<std::string> QueryValues::all(const std::string& key) const {
  auto it = values_.find(key);
  return it == values_.end() ? std::vector<std::string>{} : it->second;
}

RequestInfo parseRequestInfo(std::string_view method, std::string_view path,
                             const QueryValues& query) {
  RequestInfo info;
  info.path = std::string(path);
  info.verb = std::string(method);
  std::transform(info.verb.begin(), info.verb.end(), info.verb.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });

  std::vector<std::string> parts = splitPath(path);
  if (parts.size() < 3) return info;
  if (parts[0] != "api" && parts[0] != "apis") return info;
  info.api_prefix = parts[0];
  std::size_t at = 1;
  if (info.api_prefix == "apis") {
    if (parts.size() - at < 3) return info;
    info.api_group = parts[at++];
  }
  info.is_resource_request = true;
  info.api_version = parts[at++];

  if (parts[at] == "proxy" || parts[at] == "watch") {
    if (parts.size() - at < 2) {
      info.is_resource_request = false;  // "unable to determine kind and namespace from url"
      return info;
    }
    info.verb = parts[at++];
  } else if (method == "POST") {
    info.verb = "create";
  } else if (method == "GET" || method == "HEAD") {
    info.verb = "get";
  } else if (method == "PUT") {
    info.verb = "update";
  } else if (method == "PATCH") {
    info.verb = "patch";
  } else if (method == "DELETE") {
    info.verb = "delete";
  } else {
    info.verb.clear();
  }

  // /namespaces/{namespace}/{resource}/...; "status" and "finalize" are subresources of the
  // namespace itself.
  if (parts[at] == "namespaces") {
    if (parts.size() - at > 1) {
      info.namespace_name = parts[at + 1];
      if (parts.size() - at > 2 && parts[at + 2] != "status" && parts[at + 2] != "finalize") {
        at += 2;
      }
    }
  }
  info.parts.assign(parts.begin() + static_cast<std::ptrdiff_t>(at), parts.end());

  const auto& p = info.parts;
  if (p.size() >= 3 && info.verb != "proxy") info.subresource = p[2];
  if (p.size() >= 2) info.name = p[1];
  if (!p.empty()) info.resource = p[0];

  if (info.name.empty() && info.verb == "get") {
    // A malformed watch parameter reads as a list (requestinfo.go logs and defaults).
    info.verb = "list";
    if (auto watch = query.get("watch")) {
      auto parsed = go::parseBool(*watch);
      if (parsed.ok() && *parsed) info.verb = "watch";
    }
  }
  if (info.name.empty() && info.verb == "delete") info.verb = "deletecollection";
  return info;
}

}  // namespace harness::sim::rest
