#pragma once

// Go's strings and unicode packages, the functions the simulator's messages depend on.
// Followed: go/src/strings/strings.go (TrimSpace, TrimFunc) and unicode/graphic.go (IsSpace).

#include <string>
#include <string_view>

namespace harness::go {

// unicode.IsSpace: '\t', '\n', '\v', '\f', '\r', ' ', U+0085, U+00A0 and the Unicode White_Space
// characters above Latin-1.
bool isSpace(char32_t r);

// strings.TrimSpace (Unicode White_Space at both ends of UTF-8 text).
std::string trimSpace(std::string_view s);

}  // namespace harness::go
