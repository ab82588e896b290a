#include "harness/validation/validation.h"

#include <algorithm>
#include <cctype>

namespace harness::validation {

namespace {


constexpr std::string_view kDns1123LabelFmt = "[a-z0-9]([-a-z0-9]*[a-z0-9])?";
constexpr std::string_view kDns1123LabelErrMsg =
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and "
    "must start and end with an alphanumeric character";
constexpr std::string_view kDns1123SubdomainFmt =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
constexpr std::string_view kDns1123SubdomainErrMsg =
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
    "'.', and must start and end with an alphanumeric character";
constexpr std::string_view kDns1035LabelFmt = "[a-z]([-a-z0-9]*[a-z0-9])?";
constexpr std::string_view kDns1035LabelErrMsg =
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
    "alphabetic character, and end with an alphanumeric character";
constexpr std::string_view kQualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
constexpr std::string_view kQualifiedNameErrMsg =
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character";
constexpr std::size_t kDns1123LabelMaxLength = 63;
constexpr std::size_t kDns1123SubdomainMaxLength = 253;
constexpr std::size_t kDns1035LabelMaxLength = 63;
constexpr std::size_t kQualifiedNameMaxLength = 63;
constexpr std::string_view kLabelValueFmt = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?";
constexpr std::string_view kLabelValueErrMsg =
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or "
    "'.', and must start and end with an alphanumeric character";
constexpr std::size_t kLabelValueMaxLength = 63;

bool isLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }
bool isAlnum(char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; }

// ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$
bool matchesDns1123Label(std::string_view v) {
  if (v.empty() || !isLowerAlnum(v.front()) || !isLowerAlnum(v.back())) return false;
  return std::all_of(v.begin(), v.end(), [](char c) { return isLowerAlnum(c) || c == '-'; });
}

bool matchesDns1123Subdomain(std::string_view v) {
  std::size_t start = 0;
  while (true) {
    const auto dot = v.find('.', start);
    if (!matchesDns1123Label(v.substr(start, dot == std::string_view::npos ? dot : dot - start))) {
      return false;
    }
    if (dot == std::string_view::npos) return true;
    start = dot + 1;
  }
}

bool matchesDns1035Label(std::string_view v) {
  return matchesDns1123Label(v) && v.front() >= 'a' && v.front() <= 'z';
}

bool matchesQualifiedNamePart(std::string_view v) {
  if (v.empty() || !isAlnum(v.front()) || !isAlnum(v.back())) return false;
  return std::all_of(v.begin(), v.end(),
                     [](char c) { return isAlnum(c) || c == '-' || c == '_' || c == '.'; });
}

}  // namespace

std::string maxLenError(std::size_t length) {
  return "must be no more than " + std::to_string(length) + " characters";
}

std::string emptyError() { return "must be non-empty"; }

std::string regexError(std::string_view msg, std::string_view fmt,
                       std::initializer_list<std::string_view> examples) {
  std::string out(msg);
  if (examples.size() == 0)
    return out + " (regex used for validation is '" + std::string(fmt) + "')";
  out += " (e.g. ";
  bool first = true;
  for (const auto example : examples) {
    if (!first) out += " or ";
    first = false;
    out += "'" + std::string(example) + "', ";
  }
  return out + "regex used for validation is '" + std::string(fmt) + "')";
}

std::vector<std::string> isDns1123Subdomain(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDns1123SubdomainMaxLength) {
    errs.push_back(maxLenError(kDns1123SubdomainMaxLength));
  }
  if (!matchesDns1123Subdomain(value)) {
    errs.push_back(regexError(kDns1123SubdomainErrMsg, kDns1123SubdomainFmt, {"example.com"}));
  }
  return errs;
}

std::vector<std::string> isDns1123Label(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDns1123LabelMaxLength) errs.push_back(maxLenError(kDns1123LabelMaxLength));
  if (!matchesDns1123Label(value)) {
    if (matchesDns1123Subdomain(value)) {
      errs.emplace_back("must not contain dots");
    } else {
      errs.push_back(regexError(kDns1123LabelErrMsg, kDns1123LabelFmt, {"my-name", "123-abc"}));
    }
  }
  return errs;
}

std::vector<std::string> isDns1035Label(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kDns1035LabelMaxLength) errs.push_back(maxLenError(kDns1035LabelMaxLength));
  if (!matchesDns1035Label(value)) {
    errs.push_back(regexError(kDns1035LabelErrMsg, kDns1035LabelFmt, {"my-name", "abc-123"}));
  }
  return errs;
}

std::vector<std::string> isQualifiedName(std::string_view value) {
  // strings.Split(value, "/"): one part is a name, two a prefix and a name, more an error.
  std::vector<std::string> errs;
  std::string_view name = value;
  const auto slash = value.find('/');
  if (slash != std::string_view::npos) {
    if (value.find('/', slash + 1) != std::string_view::npos) {
      errs.push_back(
          "a valid label key " +
          regexError(kQualifiedNameErrMsg, kQualifiedNameFmt, {"MyName", "my.name", "123-abc"}) +
          " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')");
      return errs;
    }
    const std::string_view prefix = value.substr(0, slash);
    name = value.substr(slash + 1);
    if (prefix.empty()) {
      errs.push_back("prefix part " + emptyError());
    } else {
      for (const auto& msg : isDns1123Subdomain(prefix)) errs.push_back("prefix part " + msg);
    }
  }
  if (name.empty()) {
    errs.push_back("name part " + emptyError());
  } else if (name.size() > kQualifiedNameMaxLength) {
    errs.push_back("name part " + maxLenError(kQualifiedNameMaxLength));
  }
  if (!matchesQualifiedNamePart(name)) {
    errs.push_back("name part " + regexError(kQualifiedNameErrMsg, kQualifiedNameFmt,
                                             {"MyName", "my.name", "123-abc"}));
  }
  return errs;
}

std::vector<std::string> isValidLabelValue(std::string_view value) {
  std::vector<std::string> errs;
  if (value.size() > kLabelValueMaxLength) errs.push_back(maxLenError(kLabelValueMaxLength));
  if (!value.empty() && !matchesQualifiedNamePart(value)) {
    errs.push_back(regexError(kLabelValueErrMsg, kLabelValueFmt, {"MyValue", "my_value", "12345"}));
  }
  return errs;
}

}  // namespace harness::validation
