// defaultImagePullPolicy: the tag half of pkg/util/parsers.ParseImageName, which parses the image
// with github.com/distribution/reference ParseNormalizedNamed (grammar in reference.go /
// regexp.go: domain, lowercase path components, tag [\w][\w.-]{0,127}, digest
// algorithm:hex) and returns the tag, "latest" when there is neither tag nor digest.

#include <cctype>
#include <optional>
#include <string>
#include <string_view>

#include "harness/sim/defaulting.h"

namespace harness::sim {
namespace {

bool isLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool isAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }
bool isHex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }

// path-component := [a-z0-9]+ (separator [a-z0-9]+)*, separator := [_.] | __ | [-]+
bool validPathComponent(std::string_view s) {
  std::size_t i = 0;
  auto run = [&] {
    std::size_t start = i;
    while (i < s.size() && isLowerAlnum(s[i])) ++i;
    return i > start;
  };
  if (!run()) return false;
  while (i < s.size()) {
    if (s[i] == '.') {
      ++i;
    } else if (s[i] == '_') {
      ++i;
      if (i < s.size() && s[i] == '_') ++i;
    } else if (s[i] == '-') {
      while (i < s.size() && s[i] == '-') ++i;
    } else {
      return false;
    }
    if (!run()) return false;
  }
  return true;
}

// domain-component := [a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]
bool validDomainComponent(std::string_view s) {
  if (s.empty() || !isAlnum(s.front()) || !isAlnum(s.back())) return false;
  for (char c : s) {
    if (!isAlnum(c) && c != '-') return false;
  }
  return true;
}

bool validDomain(std::string_view domain) {
  std::string_view host = domain;
  if (!host.empty() && host.front() == '[') {  // [IPv6]
    auto close = host.find(']');
    if (close == std::string_view::npos) return false;
    for (char c : host.substr(1, close - 1)) {
      if (!isHex(c) && c != ':') return false;
    }
    host = host.substr(close + 1);
    if (host.empty()) return true;
    if (host.front() != ':') return false;
  } else {
    auto colon = host.find(':');
    std::string_view name = host.substr(0, colon);
    std::size_t start = 0;
    while (true) {
      auto dot = name.find('.', start);
      if (!validDomainComponent(name.substr(start, dot == std::string_view::npos ? dot
                                                                                   : dot - start))) {
        return false;
      }
      if (dot == std::string_view::npos) break;
      start = dot + 1;
    }
    if (colon == std::string_view::npos) return true;
    host = host.substr(colon);
  }
  std::string_view port = host.substr(1);
  if (port.empty()) return false;
  for (char c : port) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

bool validTag(std::string_view tag) {
  if (tag.empty() || tag.size() > 128) return false;
  auto word = [](char c) { return isAlnum(c) || c == '_'; };
  if (!word(tag.front())) return false;
  for (char c : tag) {
    if (!word(c) && c != '.' && c != '-') return false;
  }
  return true;
}

bool validDigest(std::string_view digest) {
  auto colon = digest.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view algorithm = digest.substr(0, colon);
  std::string_view hex = digest.substr(colon + 1);
  for (char c : hex) {
    if (!isHex(c)) return false;
  }
  // go-digest only accepts the registered algorithms, each with its exact length.
  if (algorithm == "sha256") return hex.size() == 64;
  if (algorithm == "sha384") return hex.size() == 96;
  if (algorithm == "sha512") return hex.size() == 128;
  return false;
}

// The tag of a reference ("" for a digest-only reference), nullopt when it does not parse.
std::optional<std::string> imageTag(std::string_view image) {
  if (image.empty()) return std::nullopt;
  if (image.size() == 64) {  // anchoredIdentifierRegexp: a bare image ID is refused
    bool all_hex = true;
    for (char c : image) all_hex = all_hex && ((c >= 'a' && c <= 'f') || (c >= '0' && c <= '9'));
    if (all_hex) return std::nullopt;
  }
  std::string_view rest = image;
  bool has_digest = false;
  if (auto at = rest.find('@'); at != std::string_view::npos) {
    if (!validDigest(rest.substr(at + 1))) return std::nullopt;
    has_digest = true;
    rest = rest.substr(0, at);
  }
  std::string tag;
  auto last_slash = rest.rfind('/');
  auto last_colon = rest.rfind(':');
  if (last_colon != std::string_view::npos &&
      (last_slash == std::string_view::npos || last_colon > last_slash)) {
    tag = std::string(rest.substr(last_colon + 1));
    if (!validTag(tag)) return std::nullopt;
    rest = rest.substr(0, last_colon);
  }
  if (rest.empty() || rest.size() > 255) return std::nullopt;
  // splitDockerDomain: the first component is a domain when it has '.' or ':', is "localhost",
  // or has upper case letters.
  std::string_view path = rest;
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    std::string_view first = rest.substr(0, slash);
    bool upper = false;
    for (char c : first) upper = upper || std::isupper(static_cast<unsigned char>(c)) != 0;
    if (first.find_first_of(".:") != std::string_view::npos || first == "localhost" || upper) {
      if (!validDomain(first)) return std::nullopt;
      path = rest.substr(slash + 1);
    }
  }
  std::size_t start = 0;
  while (true) {
    auto slash = path.find('/', start);
    if (!validPathComponent(
            path.substr(start, slash == std::string_view::npos ? slash : slash - start))) {
      return std::nullopt;
    }
    if (slash == std::string_view::npos) break;
    start = slash + 1;
  }
  if (tag.empty() && !has_digest) tag = "latest";
  return tag;
}

}  // namespace

std::string defaultImagePullPolicy(std::string_view image) {
  auto tag = imageTag(image);
  return tag && *tag == "latest" ? "Always" : "IfNotPresent";
}

}  // namespace harness::sim
