#pragma once

// Kubernetes' apimachinery string-format checks, returning upstream's messages byte for byte
// (kube-apiserver prints them in 422 responses). Followed (apimachinery v0.37):
// pkg/api/validate/content/dns.go (IsDNS1123Label, IsDNS1123Subdomain), content/kube.go
// (IsLabelKey, which pkg/util/validation.IsQualifiedName now is; IsLabelValue, which
// IsValidLabelValue is), content/errors.go (MaxLenError, EmptyError, RegexError) and
// pkg/util/validation/validation.go (IsDNS1035Label).

#include <cstddef>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace harness::validation {

// IsDNS1123Subdomain: at most 253 characters of lowercase RFC 1123 labels joined by dots.
std::vector<std::string> isDns1123Subdomain(std::string_view value);
// IsDNS1123Label: at most 63 characters, [a-z0-9]([-a-z0-9]*[a-z0-9])?.
std::vector<std::string> isDns1123Label(std::string_view value);
// IsDNS1035Label: a DNS-1123 label that starts with a letter.
std::vector<std::string> isDns1035Label(std::string_view value);
// IsQualifiedName (content.IsLabelKey): an optional DNS-1123 subdomain prefix and '/', then a
// name of at most 63 alphanumerics, '-', '_' or '.', starting and ending alphanumeric.
std::vector<std::string> isQualifiedName(std::string_view value);
// IsValidLabelValue (content.IsLabelValue): empty, or a qualified name's name part.
std::vector<std::string> isValidLabelValue(std::string_view value);

// The message builders, for checks written next to their callers.
std::string maxLenError(std::size_t length);  // "must be no more than <n> characters"
std::string emptyError();                     // "must be non-empty"
// "<msg> (e.g. 'a',  or 'b', regex used for validation is '<fmt>')": the double space after
// each comma but the last is upstream's.
std::string regexError(std::string_view msg, std::string_view fmt,
                       std::initializer_list<std::string_view> examples);

}  // namespace harness::validation
