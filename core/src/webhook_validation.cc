// Validation of Mutating/ValidatingWebhookConfiguration (docs/admission-chain.md §9), following
// kubernetes pkg/apis/admissionregistration/validation/validation.go @ afd5df58,
// apiserver pkg/util/webhook/validation.go, apimachinery pkg/util/validation/validation.go and
// pkg/api/validate/content (dns.go, kube.go), and Go's net/url Parse for webhook URLs.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <utility>

#include <openssl/x509.h>

#include "harness/core/process_slot.h"
#include "harness/core/webhook_config.h"
#include "harness/go/base64.h"
#include "harness/go/fmt.h"
#include "harness/go/strconv.h"
#include "harness/go/strings.h"
#include "harness/validation/validation.h"

namespace harness::core {

namespace {

constexpr std::size_t kMaxMatchConditions = 64;


std::vector<std::string> split(std::string_view s, char sep) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto pos = s.find(sep, start);
    parts.emplace_back(s.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) return parts;
    start = pos + 1;
  }
}

std::string join(const std::vector<std::string>& items, std::string_view sep) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += sep;
    out += items[i];
  }
  return out;
}

FieldError invalidList(std::string field, std::string_view type,
                       const std::vector<std::string>& values, std::string detail) {
  return FieldError{FieldErrorType::kInvalid, std::move(field),
                    go::stringSliceGoSyntax(values, go::EmptySlice::kEmpty, type), std::move(detail)};
}

std::string index(const std::string& path, std::size_t i) {
  return path + "[" + std::to_string(i) + "]";
}

bool hasWildcard(const std::vector<std::string>& values) {
  return std::find(values.begin(), values.end(), "*") != values.end();
}

bool contains(const std::vector<std::string>& values, std::string_view v) {
  return std::find(values.begin(), values.end(), v) != values.end();
}

// --- Go net/url Parse, as far as ValidateWebhookURL needs it (src/net/url/url.go) ---

enum class UrlMode { kPath, kHost, kUserPassword, kFragment };

bool shouldEscape(unsigned char c, UrlMode mode) {
  if (std::isalnum(c) != 0) return false;
  if (mode == UrlMode::kHost) {
    switch (c) {
      case '!':
      case '$':
      case '&':
      case '\'':
      case '(':
      case ')':
      case '*':
      case '+':
      case ',':
      case ';':
      case '=':
      case ':':
      case '[':
      case ']':
      case '<':
      case '>':
      case '"':
        return false;
      default:
        break;
    }
  }
  switch (c) {
    case '-':
    case '_':
    case '.':
    case '~':
      return false;
    case '$':
    case '&':
    case '+':
    case ',':
    case '/':
    case ':':
    case ';':
    case '=':
    case '?':
    case '@':
      switch (mode) {
        case UrlMode::kPath:
          return c == '?';
        case UrlMode::kUserPassword:
          return c == '@' || c == '/' || c == '?' || c == ':';
        case UrlMode::kFragment:
          return false;
        case UrlMode::kHost:
          break;
      }
      break;
    default:
      break;
  }
  if (mode == UrlMode::kFragment) {
    switch (c) {
      case '!':
      case '(':
      case ')':
      case '*':
        return false;
      default:
        break;
    }
  }
  return true;
}

int unhex(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// url.unescape; returns the unescaped text or Go's error text.
Result<std::string> unescape(std::string_view s, UrlMode mode) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    if (c == '%') {
      if (i + 2 >= s.size() || unhex(s[i + 1]) < 0 || unhex(s[i + 2]) < 0) {
        return Error{"invalid URL escape " + go::quote(s.substr(i, 3))};
      }
      if (mode == UrlMode::kHost && unhex(s[i + 1]) < 8 && s.substr(i, 3) != "%25") {
        return Error{"invalid URL escape " + go::quote(s.substr(i, 3))};
      }
      out.push_back(static_cast<char>(unhex(s[i + 1]) << 4 | unhex(s[i + 2])));
      i += 3;
      continue;
    }
    if (mode == UrlMode::kHost && static_cast<unsigned char>(c) < 0x80 &&
        shouldEscape(static_cast<unsigned char>(c), mode)) {
      return Error{"invalid character " + go::quote(s.substr(i, 1)) + " in host name"};
    }
    out.push_back(c);
    ++i;
  }
  return out;
}

std::string escape(std::string_view s, UrlMode mode) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (shouldEscape(u, mode)) {
      out.push_back('%');
      out.push_back(kHex[u >> 4]);
      out.push_back(kHex[u & 15]);
    } else {
      out.push_back(c);
    }
  }
  return out;
}

struct GoUrl {
  std::string scheme;
  std::optional<std::string> user;  // Userinfo.String()
  std::string host;
  std::string raw_query;
  std::string fragment;
};

bool validOptionalPort(std::string_view port) {
  if (port.empty()) return true;
  if (port.front() != ':') return false;
  return std::all_of(port.begin() + 1, port.end(), [](char c) { return c >= '0' && c <= '9'; });
}

Result<std::string> parseHost(std::string_view host) {
  if (!host.empty() && host.front() == '[') {
    const auto i = host.rfind(']');
    if (i == std::string_view::npos) return Error{"missing ']' in host"};
    const auto colon_port = host.substr(i + 1);
    if (!validOptionalPort(colon_port)) {
      return Error{"invalid port " + go::quote(colon_port) + " after host"};
    }
  } else if (const auto i = host.rfind(':'); i != std::string_view::npos) {
    const auto colon_port = host.substr(i);
    if (!validOptionalPort(colon_port)) {
      return Error{"invalid port " + go::quote(colon_port) + " after host"};
    }
  }
  return unescape(host, UrlMode::kHost);
}

bool validUserinfo(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || std::string_view("-._:~!$&'()*+,;=%@").find(c) != std::string_view::npos;
  });
}

Result<GoUrl> parseUrlNoFragment(std::string_view raw, GoUrl url) {
  if (std::any_of(raw.begin(), raw.end(),
                  [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; })) {
    return Error{"net/url: invalid control character in URL"};
  }
  if (raw == "*") return url;
  // getScheme
  std::string_view rest = raw;
  for (std::size_t i = 0; i < raw.size(); ++i) {
    const char c = raw[i];
    if (std::isalpha(static_cast<unsigned char>(c)) != 0) continue;
    if ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.') {
      if (i == 0) break;
      continue;
    }
    if (c == ':') {
      if (i == 0) return Error{"missing protocol scheme"};
      url.scheme = std::string(raw.substr(0, i));
      rest = raw.substr(i + 1);
    }
    break;
  }
  std::transform(url.scheme.begin(), url.scheme.end(), url.scheme.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (!rest.empty() && rest.back() == '?' && std::count(rest.begin(), rest.end(), '?') == 1) {
    rest.remove_suffix(1);  // ForceQuery
  } else if (const auto q = rest.find('?'); q != std::string_view::npos) {
    url.raw_query = std::string(rest.substr(q + 1));
    rest = rest.substr(0, q);
  }
  if (rest.empty() || rest.front() != '/') {
    if (!url.scheme.empty()) return url;  // opaque: no host
    const auto segment = rest.substr(0, rest.find('/'));
    if (segment.find(':') != std::string_view::npos) {
      return Error{"first path segment in URL cannot contain colon"};
    }
  }
  if ((!url.scheme.empty() || rest.rfind("///", 0) != 0) && rest.rfind("//", 0) == 0) {
    std::string_view authority = rest.substr(2);
    rest = {};
    if (const auto slash = authority.find('/'); slash != std::string_view::npos) {
      rest = authority.substr(slash);
      authority = authority.substr(0, slash);
    }
    const auto at = authority.rfind('@');
    auto host = parseHost(at == std::string_view::npos ? authority : authority.substr(at + 1));
    if (!host.ok()) return host.error();
    url.host = *host;
    if (at != std::string_view::npos) {
      const auto userinfo = authority.substr(0, at);
      if (!validUserinfo(userinfo)) return Error{"net/url: invalid userinfo"};
      const auto colon = userinfo.find(':');
      auto username = unescape(userinfo.substr(0, colon), UrlMode::kUserPassword);
      if (!username.ok()) return username.error();
      std::string user = escape(*username, UrlMode::kUserPassword);
      if (colon != std::string_view::npos) {
        auto password = unescape(userinfo.substr(colon + 1), UrlMode::kUserPassword);
        if (!password.ok()) return password.error();
        user += ":" + escape(*password, UrlMode::kUserPassword);
      }
      url.user = std::move(user);
    }
  }
  if (auto path = unescape(rest, UrlMode::kPath); !path.ok()) return path.error();
  return url;
}

// url.Parse; errors are url.Error texts: `parse "<url>": <err>`.
Result<GoUrl> parseUrl(std::string_view raw) {
  const auto hash = raw.find('#');
  const std::string_view without_fragment = raw.substr(0, hash);
  auto url = parseUrlNoFragment(without_fragment, GoUrl{});
  if (!url.ok()) return Error{"parse " + go::quote(without_fragment) + ": " + url.error().message};
  if (hash != std::string_view::npos) {
    auto fragment = unescape(raw.substr(hash + 1), UrlMode::kFragment);
    if (!fragment.ok()) return Error{"parse " + go::quote(raw) + ": " + fragment.error().message};
    url->fragment = *fragment;
  }
  return url;
}

// --- encoding/pem Decode (src/encoding/pem/pem.go) ---

struct PemBlock {
  std::string type;
  bool has_headers = false;
  std::string bytes;
};

std::pair<std::string_view, std::string_view> getLine(std::string_view data) {
  auto i = data.find('\n');
  std::size_t j = 0;
  if (i == std::string_view::npos) {
    i = data.size();
    j = i;
  } else {
    j = i + 1;
    if (i > 0 && data[i - 1] == '\r') --i;
  }
  std::string_view line = data.substr(0, i);
  while (!line.empty() && (line.back() == ' ' || line.back() == '\t')) line.remove_suffix(1);
  return {line, data.substr(j)};
}

// Returns the block and the rest, or nullopt (rest = data) when no valid block is found.
std::pair<std::optional<PemBlock>, std::string_view> pemDecode(std::string_view data) {
  constexpr std::string_view kStart = "\n-----BEGIN ";
  constexpr std::string_view kEnd = "\n-----END ";
  constexpr std::string_view kEndOfLine = "-----";
  std::string_view rest = data;
  while (true) {
    if (rest.rfind(kStart.substr(1), 0) == 0) {
      rest = rest.substr(kStart.size() - 1);
    } else if (const auto pos = rest.find(kStart); pos != std::string_view::npos) {
      rest = rest.substr(pos + kStart.size());
    } else {
      return {std::nullopt, data};
    }
    auto [type_line, after_type] = getLine(rest);
    rest = after_type;
    if (type_line.size() < kEndOfLine.size() ||
        type_line.substr(type_line.size() - kEndOfLine.size()) != kEndOfLine) {
      continue;
    }
    type_line.remove_suffix(kEndOfLine.size());
    PemBlock block;
    block.type = std::string(type_line);
    while (true) {
      if (rest.empty()) return {std::nullopt, data};
      auto [line, next] = getLine(rest);
      const auto colon = line.find(':');
      if (colon == std::string_view::npos) break;
      block.has_headers = true;
      rest = next;
    }
    std::size_t end_index = 0;
    std::size_t end_trailer_index = 0;
    if (!block.has_headers && rest.rfind(kEnd.substr(1), 0) == 0) {
      end_index = 0;
      end_trailer_index = kEnd.size() - 1;
    } else {
      end_index = rest.find(kEnd);
      if (end_index == std::string_view::npos) continue;
      end_trailer_index = end_index + kEnd.size();
    }
    std::string_view end_trailer = rest.substr(end_trailer_index);
    const std::size_t end_trailer_len = type_line.size() + kEndOfLine.size();
    if (end_trailer.size() < end_trailer_len) continue;
    const std::string_view rest_of_end_line = end_trailer.substr(end_trailer_len);
    end_trailer = end_trailer.substr(0, end_trailer_len);
    if (end_trailer.substr(0, type_line.size()) != type_line ||
        end_trailer.substr(type_line.size()) != kEndOfLine) {
      continue;
    }
    if (!getLine(rest_of_end_line).first.empty()) continue;
    std::string base64_data;
    for (const char c : rest.substr(0, end_index)) {
      if (c != ' ' && c != '\t') base64_data.push_back(c);
    }
    auto decoded = go::base64Decode(base64_data);
    if (!decoded.ok()) continue;
    block.bytes = std::move(decoded).value();
    return {std::move(block), getLine(rest.substr(end_index + kEnd.size() - 1)).second};
  }
}

// x509.ParseCertificate, approximated with OpenSSL's DER parser.
Result<void> parseCertificate(const std::string& der) {
  const auto* p = reinterpret_cast<const unsigned char*>(der.data());
  X509* cert = d2i_X509(nullptr, &p, static_cast<long>(der.size()));
  if (cert == nullptr) return Error{"x509: malformed certificate"};
  const bool trailing = p != reinterpret_cast<const unsigned char*>(der.data()) + der.size();
  X509_free(cert);
  if (trailing) return Error{"x509: trailing data"};
  return {};
}

// --- validation.go ---

struct Options {
  bool ignore_match_conditions = false;
  // findMutatingPreexistingExpressions: the old object's match-condition expressions.
  std::vector<std::string> stored_expressions;
  bool require_no_side_effects = true;
  bool require_recognized_admission_review_version = true;
  bool require_unique_webhook_names = true;
};

const std::vector<std::string> kAcceptedReviewVersions = {"v1", "v1beta1"};
// sets.String.List() order (sorted).
const std::vector<std::string> kSupportedFailurePolicies = {"Fail", "Ignore"};
const std::vector<std::string> kSupportedMatchPolicies = {"Equivalent", "Exact"};
const std::vector<std::string> kSupportedSideEffects = {"None", "NoneOnDryRun", "Some", "Unknown"};
const std::vector<std::string> kNoSideEffects = {"None", "NoneOnDryRun"};
const std::vector<std::string> kSupportedOperations = {"*", "CONNECT", "CREATE", "DELETE",
                                                       "UPDATE"};
const std::vector<std::string> kSupportedReinvocationPolicies = {"IfNeeded", "Never"};
const std::vector<std::string> kValidScopes = {"*", "Cluster", "Namespaced"};

void append(FieldErrors& to, FieldErrors from) {
  to.insert(to.end(), std::make_move_iterator(from.begin()), std::make_move_iterator(from.end()));
}

FieldErrors validateResources(const std::vector<std::string>& resources, const std::string& path) {
  FieldErrors errs;
  if (resources.empty()) errs.push_back(FieldError::required(path));
  std::set<std::string> resources_with_wildcard_subresources;  // x/*
  std::set<std::string> subresources_with_wildcard_resource;   // */x
  bool has_double_wildcard = false;
  bool has_single_wildcard = false;
  bool has_resource_without_subresource = false;
  for (std::size_t i = 0; i < resources.size(); ++i) {
    const auto& res_sub = resources[i];
    if (res_sub.empty()) {
      errs.push_back(FieldError::required(index(path, i)));
      continue;
    }
    if (res_sub == "*/*") has_double_wildcard = true;
    if (res_sub == "*") has_single_wildcard = true;
    const auto slash = res_sub.find('/');
    if (slash == std::string::npos) {
      // Upstream overwrites the flag: only the last such entry counts.
      has_resource_without_subresource = res_sub != "*";
      continue;
    }
    const std::string res = res_sub.substr(0, slash);
    const std::string sub = res_sub.substr(slash + 1);
    auto mustNotSpecify = [&](const std::string& present) {
      return FieldError::invalid(
          index(path, i), res_sub,
          std::string("if '").append(present).append("' is present, must not specify ").append(
              res_sub));
    };
    if (resources_with_wildcard_subresources.count(res) != 0) {
      errs.push_back(mustNotSpecify(res + "/*"));
    }
    if (subresources_with_wildcard_resource.count(sub) != 0) {
      errs.push_back(mustNotSpecify("*/" + sub));
    }
    if (sub == "*") resources_with_wildcard_subresources.insert(res);
    if (res == "*") subresources_with_wildcard_resource.insert(sub);
  }
  if (resources.size() > 1 && has_double_wildcard) {
    errs.push_back(invalidList(path, "[]string", resources,
                               "if '*/*' is present, must not specify other resources"));
  }
  if (has_single_wildcard && has_resource_without_subresource) {
    errs.push_back(
        invalidList(path, "[]string", resources,
                    "if '*' is present, must not specify other resources without subresources"));
  }
  return errs;
}

FieldErrors validateRule(const RuleWithOperations& rule, const std::string& path) {
  FieldErrors errs;
  const std::string groups = path + ".apiGroups";
  const std::string versions = path + ".apiVersions";
  if (rule.api_groups.empty()) errs.push_back(FieldError::required(groups));
  if (rule.api_groups.size() > 1 && hasWildcard(rule.api_groups)) {
    errs.push_back(invalidList(groups, "[]string", rule.api_groups,
                               "if '*' is present, must not specify other API groups"));
  }
  if (rule.api_versions.empty()) errs.push_back(FieldError::required(versions));
  if (rule.api_versions.size() > 1 && hasWildcard(rule.api_versions)) {
    errs.push_back(invalidList(versions, "[]string", rule.api_versions,
                               "if '*' is present, must not specify other API versions"));
  }
  for (std::size_t i = 0; i < rule.api_versions.size(); ++i) {
    if (rule.api_versions[i].empty()) errs.push_back(FieldError::required(index(versions, i)));
  }
  append(errs, validateResources(rule.resources, path + ".resources"));
  if (rule.scope && !contains(kValidScopes, *rule.scope)) {
    errs.push_back(FieldError::notSupported(path + ".scope", *rule.scope, kValidScopes));
  }
  return errs;
}

FieldErrors validateRuleWithOperations(const RuleWithOperations& rule, const std::string& path) {
  FieldErrors errs;
  const std::string ops = path + ".operations";
  if (rule.operations.empty()) errs.push_back(FieldError::required(ops));
  if (rule.operations.size() > 1 && hasWildcard(rule.operations)) {
    errs.push_back(invalidList(ops, "[]admissionregistration.OperationType", rule.operations,
                               "if '*' is present, must not specify other operations"));
  }
  for (std::size_t i = 0; i < rule.operations.size(); ++i) {
    if (!contains(kSupportedOperations, rule.operations[i])) {
      errs.push_back(
          FieldError::notSupported(index(ops, i), rule.operations[i], kSupportedOperations));
    }
  }
  append(errs, validateRule(rule, path));
  return errs;
}

FieldErrors validateAdmissionReviewVersions(const std::vector<std::string>& versions,
                                            bool require_recognized, const std::string& path) {
  FieldErrors errs;
  if (versions.empty()) {
    errs.push_back(
        FieldError::required(path, "must specify one of " + join(kAcceptedReviewVersions, ", ")));
    return errs;
  }
  std::set<std::string> seen;
  bool has_accepted = false;
  for (std::size_t i = 0; i < versions.size(); ++i) {
    const auto& v = versions[i];
    if (!seen.insert(v).second) {
      errs.push_back(FieldError::invalid(index(path, i), v, "duplicate version"));
      continue;
    }
    for (auto& msg : validation::isDns1035Label(v)) {
      errs.push_back(FieldError::invalid(index(path, i), v, std::move(msg)));
    }
    if (contains(kAcceptedReviewVersions, v)) has_accepted = true;
  }
  if (require_recognized && !has_accepted) {
    errs.push_back(
        invalidList(path, "[]string", versions,
                    "must include at least one of " + join(kAcceptedReviewVersions, ", ")));
  }
  return errs;
}

// Go's strings.TrimSpace for the expression check.
bool isBlank(std::string_view s) { return go::trimSpace(s).empty(); }

ProcessSlot<MatchConditionCompiler>& matchConditionCompiler() {
  static ProcessSlot<MatchConditionCompiler> slot;
  return slot;
}

// The compile errors of each condition's trimmed expression (nullopt: compiles, blank, or no
// compiler set).
std::vector<std::optional<ExpressionError>> compileExpressions(
    const std::vector<MatchCondition>& conditions, const std::vector<std::string>& stored) {
  std::vector<std::optional<ExpressionError>> results(conditions.size());
  const auto compiler = matchConditionCompiler().get();
  if (!compiler) return results;
  std::vector<std::string> expressions;
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < conditions.size(); ++i) {
    if (isBlank(conditions[i].expression)) continue;
    expressions.push_back(go::trimSpace(conditions[i].expression));
    positions.push_back(i);
  }
  if (expressions.empty()) return results;
  std::vector<std::optional<ExpressionError>> compiled;
  try {
    compiled = compiler(expressions, stored);
  } catch (const std::exception& e) {
    compiled.assign(expressions.size(), ExpressionError{FieldErrorType::kInternal, e.what()});
  }
  if (compiled.size() != expressions.size()) {
    compiled.assign(expressions.size(),
                    ExpressionError{FieldErrorType::kInternal,
                                    "the CEL compiler returned " + std::to_string(compiled.size()) +
                                        " results for " + std::to_string(expressions.size()) +
                                        " expressions"});
  }
  for (std::size_t k = 0; k < positions.size(); ++k) results[positions[k]] = compiled[k];
  return results;
}

FieldErrors validateMatchConditions(const std::vector<MatchCondition>& conditions,
                                    const std::vector<std::string>& stored,
                                    const std::string& path) {
  FieldErrors errs;
  if (conditions.size() > kMaxMatchConditions) {
    errs.push_back(FieldError::tooMany(path, static_cast<std::int64_t>(conditions.size()),
                                       static_cast<std::int64_t>(kMaxMatchConditions)));
  }
  const auto compiled = compileExpressions(conditions, stored);
  std::set<std::string> names;
  for (std::size_t i = 0; i < conditions.size(); ++i) {
    const auto& c = conditions[i];
    const std::string item = index(path, i);
    if (isBlank(c.expression)) {
      errs.push_back(FieldError::required(item + ".expression"));
    } else if (const auto& e = compiled[i]) {
      // convertCELErrorToValidationError
      const std::string field = item + ".expression";
      if (e->type == FieldErrorType::kRequired) {
        errs.push_back(FieldError::required(field, e->detail));
      } else if (e->type == FieldErrorType::kInvalid) {
        errs.push_back(FieldError::invalid(field, go::trimSpace(c.expression), e->detail));
      } else {
        errs.push_back(FieldError::internal(field, e->detail));
      }
    }
    if (c.name.empty()) {
      errs.push_back(FieldError::required(item + ".name"));
    } else {
      for (auto& msg : validation::isQualifiedName(c.name)) {
        errs.push_back(FieldError::invalid(item + ".name", c.name, std::move(msg)));
      }
    }
    if (!c.name.empty() && !names.insert(c.name).second) {
      errs.push_back(FieldError::duplicate(item + ".name", c.name));
    }
  }
  return errs;
}

FieldErrors validateWebhook(const Webhook& hook, WebhookKind kind, const Options& opts,
                            const std::string& path) {
  FieldErrors errs;
  append(errs, validateFullyQualifiedName(path + ".name", hook.name));
  for (std::size_t i = 0; i < hook.rules.size(); ++i) {
    append(errs, validateRuleWithOperations(hook.rules[i], index(path + ".rules", i)));
  }
  if (hook.failure_policy && !contains(kSupportedFailurePolicies, *hook.failure_policy)) {
    errs.push_back(FieldError::notSupported(path + ".failurePolicy", *hook.failure_policy,
                                            kSupportedFailurePolicies));
  }
  if (hook.match_policy && !contains(kSupportedMatchPolicies, *hook.match_policy)) {
    errs.push_back(FieldError::notSupported(path + ".matchPolicy", *hook.match_policy,
                                            kSupportedMatchPolicies));
  }
  const auto& allowed_side_effects =
      opts.require_no_side_effects ? kNoSideEffects : kSupportedSideEffects;
  if (!hook.side_effects) {
    errs.push_back(FieldError::required(path + ".sideEffects",
                                        "must specify one of " + join(allowed_side_effects, ", ")));
  } else if (!contains(allowed_side_effects, *hook.side_effects)) {
    errs.push_back(
        FieldError::notSupported(path + ".sideEffects", *hook.side_effects, allowed_side_effects));
  }
  if (hook.timeout_seconds && (*hook.timeout_seconds > 30 || *hook.timeout_seconds < 1)) {
    errs.push_back(FieldError::invalid(path + ".timeoutSeconds",
                                       static_cast<std::int64_t>(*hook.timeout_seconds),
                                       "the timeout value must be between 1 and 30 seconds"));
  }
  if (hook.namespace_selector.json) {
    append(errs, validateLabelSelector(*hook.namespace_selector.json, path + ".namespaceSelector"));
  }
  if (hook.object_selector.json) {
    append(errs, validateLabelSelector(*hook.object_selector.json, path + ".objectSelector"));
  }
  if (kind == WebhookKind::kMutating && hook.reinvocation_policy &&
      !contains(kSupportedReinvocationPolicies, *hook.reinvocation_policy)) {
    errs.push_back(FieldError::notSupported(path + ".reinvocationPolicy", *hook.reinvocation_policy,
                                            kSupportedReinvocationPolicies));
  }
  const auto& cc = hook.client_config;
  if (cc.url.has_value() == cc.service.has_value()) {
    errs.push_back(
        FieldError::required(path + ".clientConfig", "exactly one of url or service is required"));
  } else if (cc.url) {
    append(errs, validateWebhookUrl(path + ".clientConfig.url", *cc.url, true));
  } else {
    // The internal type holds the defaulted port (443 when omitted in v1).
    append(errs, validateWebhookService(path + ".clientConfig.service", cc.service->namespace_name,
                                        cc.service->name, cc.service->path,
                                        cc.service->port.value_or(443)));
  }
  if (!opts.ignore_match_conditions) {
    append(errs, validateMatchConditions(hook.match_conditions, opts.stored_expressions,
                                         path + ".matchConditions"));
  }
  return errs;
}

FieldErrors validateObjectMeta(const WebhookConfiguration& config) {
  // genericvalidation.ValidateObjectMeta(meta, false, NameIsDNSSubdomain, "metadata"), name parts.
  // The namespace of a cluster-scoped object is cleared by rest.BeforeCreate before validation.
  FieldErrors errs;
  const auto& meta = config.metadata;
  std::string generate_name;
  if (meta.is_object()) {
    const auto it = meta.find("generateName");
    if (it != meta.end() && it->is_string()) generate_name = it->get<std::string>();
  }
  if (!generate_name.empty()) {
    // NameIsDNSSubdomain(prefix=true) masks a trailing dash (maskTrailingDash).
    std::string masked = generate_name;
    if (masked.size() > 1 && masked.back() == '-')
      masked = masked.substr(0, masked.size() - 2) + "a";
    for (auto& msg : validation::isDns1123Subdomain(masked)) {
      errs.push_back(FieldError::invalid("metadata.generateName", generate_name, std::move(msg)));
    }
  }
  if (config.name.empty()) {
    errs.push_back(FieldError::required("metadata.name", "name or generateName is required"));
  } else {
    for (auto& msg : validation::isDns1123Subdomain(config.name)) {
      errs.push_back(FieldError::invalid("metadata.name", config.name, std::move(msg)));
    }
  }
  return errs;
}

Options updateOptions(const WebhookConfiguration& config, const WebhookConfiguration& old) {
  Options opts;
  // ignore*WebhookMatchConditions: unchanged match conditions are not re-validated.
  opts.ignore_match_conditions = config.webhooks.size() == old.webhooks.size();
  for (std::size_t i = 0; opts.ignore_match_conditions && i < old.webhooks.size(); ++i) {
    opts.ignore_match_conditions =
        config.webhooks[i].match_conditions == old.webhooks[i].match_conditions;
  }
  for (const auto& hook : old.webhooks) {
    for (const auto& c : hook.match_conditions) opts.stored_expressions.push_back(c.expression);
  }
  // *HasNoSideEffects
  opts.require_no_side_effects = std::all_of(
      old.webhooks.begin(), old.webhooks.end(),
      [](const Webhook& h) { return h.side_effects && contains(kNoSideEffects, *h.side_effects); });
  // *HasAcceptedAdmissionReviewVersions
  opts.require_recognized_admission_review_version =
      std::all_of(old.webhooks.begin(), old.webhooks.end(), [](const Webhook& h) {
        if (h.admission_review_versions.empty()) return true;
        return std::any_of(
            h.admission_review_versions.begin(), h.admission_review_versions.end(),
            [](const std::string& v) { return contains(kAcceptedReviewVersions, v); });
      });
  // *HasUniqueWebhookNames
  std::set<std::string> names;
  opts.require_unique_webhook_names =
      std::all_of(old.webhooks.begin(), old.webhooks.end(),
                  [&names](const Webhook& h) { return names.insert(h.name).second; });
  return opts;
}

}  // namespace

void setMatchConditionCompiler(MatchConditionCompiler compiler) {
  matchConditionCompiler().set(std::move(compiler));
}

FieldErrors validateFullyQualifiedName(const std::string& path, std::string_view name) {
  if (name.empty()) return {FieldError::required(path)};
  if (const auto errs = validation::isDns1123Subdomain(name); !errs.empty()) {
    return {FieldError::invalid(path, name, join(errs, ","))};
  }
  if (split(name, '.').size() < 3) {
    return {FieldError::invalid(path, name,
                                "should be a domain with at least three segments separated by "
                                "dots")};
  }
  return {};
}

FieldErrors validateWebhookUrl(const std::string& path, std::string_view url, bool force_https) {
  constexpr std::string_view kForm = "; desired format: https://host[/path]";
  FieldErrors errs;
  const auto parsed = parseUrl(url);
  if (!parsed.ok()) {
    errs.push_back(FieldError::required(
        path, "url must be a valid URL: " + parsed.error().message + std::string(kForm)));
    return errs;
  }
  const auto& u = *parsed;
  if (force_https && u.scheme != "https") {
    errs.push_back(FieldError::invalid(
        path, u.scheme, "'https' is the only allowed URL scheme" + std::string(kForm)));
  }
  if (u.host.empty()) {
    errs.push_back(FieldError::invalid(path, u.host, "host must be provided" + std::string(kForm)));
  }
  if (u.user) {
    errs.push_back(
        FieldError::invalid(path, *u.user, "user information is not permitted in the URL"));
  }
  if (!u.fragment.empty()) {
    errs.push_back(FieldError::invalid(path, u.fragment, "fragments are not permitted in the URL"));
  }
  if (!u.raw_query.empty()) {
    errs.push_back(
        FieldError::invalid(path, u.raw_query, "query parameters are not permitted in the URL"));
  }
  return errs;
}

FieldErrors validateWebhookService(const std::string& path, std::string_view namespace_name,
                                   std::string_view name,
                                   const std::optional<std::string>& url_path, std::int32_t port) {
  FieldErrors errs;
  if (name.empty())
    errs.push_back(FieldError::required(path + ".name", "service name is required"));
  if (namespace_name.empty()) {
    errs.push_back(FieldError::required(path + ".namespace", "service namespace is required"));
  }
  if (port < 1 || port > 65535) {
    errs.push_back(
        FieldError::invalid(path + ".port", static_cast<std::int64_t>(port),
                            "port is not valid: must be between 1 and 65535, inclusive"));
  }
  if (!url_path) return errs;
  const std::string& p = *url_path;
  const std::string field = path + ".path";
  if (p == "/" || p.empty()) return errs;
  if (p == "//") {
    errs.push_back(FieldError::invalid(field, p, "segment[0] may not be empty"));
    return errs;
  }
  if (p.front() != '/') errs.push_back(FieldError::invalid(field, p, "must start with a '/'"));
  std::string to_check = p.substr(1);
  if (!to_check.empty() && to_check.back() == '/') to_check.pop_back();
  const auto steps = split(to_check, '/');
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (steps[i].empty()) {
      errs.push_back(
          FieldError::invalid(field, p, "segment[" + std::to_string(i) + "] may not be empty"));
      continue;
    }
    for (const auto& failure : validation::isDns1123Subdomain(steps[i])) {
      errs.push_back(
          FieldError::invalid(field, p, "segment[" + std::to_string(i) + "]: " + failure));
    }
  }
  return errs;
}

Result<void> checkCaBundle(std::string_view pem) {
  if (pem.empty()) return {};  // no bundle: system roots
  constexpr std::string_view kPrefix = "unable to load root certificates: ";
  // x509.CertPool.AppendCertsFromPEM: ok once any CERTIFICATE block without headers parses.
  for (std::string_view rest = pem; !rest.empty();) {
    auto [block, next] = pemDecode(rest);
    if (!block) break;
    rest = next;
    if (block->type != "CERTIFICATE" || block->has_headers) continue;
    if (parseCertificate(block->bytes).ok()) return {};
  }
  // createErrorParsingCAData: explain the first failure.
  for (std::string_view rest = pem; !rest.empty();) {
    auto [block, next] = pemDecode(rest);
    if (!block) return Error{std::string(kPrefix) + "unable to parse bytes as PEM block"};
    rest = next;
    if (block->type != "CERTIFICATE" || block->has_headers) continue;
    if (auto parsed = parseCertificate(block->bytes); !parsed.ok()) {
      return Error{std::string(kPrefix) + "failed to parse certificate: " + parsed.error().message};
    }
  }
  return Error{std::string(kPrefix) + "no valid certificate authority data seen"};
}

FieldErrors validateWebhookConfiguration(const WebhookConfiguration& config, ValidationMode mode,
                                         const WebhookConfiguration* old) {
  const Options opts =
      mode == ValidationMode::kUpdate && old != nullptr ? updateOptions(config, *old) : Options{};
  FieldErrors errs = validateObjectMeta(config);
  std::set<std::string> hook_names;
  for (std::size_t i = 0; i < config.webhooks.size(); ++i) {
    const auto& hook = config.webhooks[i];
    const std::string path = index("webhooks", i);
    append(errs, validateWebhook(hook, config.kind, opts, path));
    append(errs, validateAdmissionReviewVersions(hook.admission_review_versions,
                                                 opts.require_recognized_admission_review_version,
                                                 path + ".admissionReviewVersions"));
    if (opts.require_unique_webhook_names && !hook.name.empty() &&
        !hook_names.insert(hook.name).second) {
      errs.push_back(FieldError::duplicate(path + ".name", hook.name));
    }
  }
  return errs;
}

std::string invalidConfigurationMessage(const WebhookConfiguration& config,
                                        const FieldErrors& errors) {
  return newInvalid(GroupKind{std::string(kAdmissionRegistrationGroup),
                              std::string(kindName(config.kind))},
                    config.name, errors)
      .message;
}

Status invalidConfigurationStatus(const WebhookConfiguration& config, const FieldErrors& errors) {
  return newInvalid(
      GroupKind{std::string(kAdmissionRegistrationGroup), std::string(kindName(config.kind))},
      config.name, errors);
}

}  // namespace harness::core
