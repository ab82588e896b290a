#pragma once

// Decoding and encoding of single UTF-8 sequences, shared by every caller that walks text rune
// by rune. Followed: golang/go src/unicode/utf8/utf8.go (DecodeRuneInString, ValidString,
// ValidRune, AppendRune).

#include <cstddef>
#include <string>
#include <string_view>

namespace harness::core {

inline constexpr char32_t kRuneError = 0xFFFD;  // utf8.RuneError
inline constexpr char32_t kMaxRune = 0x10FFFF;  // utf8.MaxRune

// How strictly decodeUtf8 checks a multi-byte sequence. kGo is Go's decoder; the two laxer
// modes exist because some callers have always accepted more and their output depends on it.
enum class Utf8Check {
  // utf8.DecodeRuneInString: overlong forms, surrogates and values above U+10FFFF are invalid.
  kGo,
  // A lead byte 0xC2..0xF4 followed by the right number of continuation bytes; the decoded
  // value is not checked (3- and 4-byte overlong forms, surrogates and values up to U+13FFFF
  // pass).
  kLeadC2ToF4,
  // Any 110xxxxx / 1110xxxx / 11110xxx lead byte followed by the right number of continuation
  // bytes; the decoded value is not checked (every overlong form passes, values up to
  // U+1FFFFF).
  kLeadBits,
};

// One decoded sequence. An invalid sequence is {kRuneError, 1, false}, as in Go, so that a
// caller stepping by `length` always makes progress; a valid U+FFFD is {kRuneError, 3, true}.
struct Rune {
  char32_t code_point = kRuneError;
  std::size_t length = 0;
  bool valid = false;
};

// Decodes the sequence starting at s[offset]. An offset at or past the end gives
// {kRuneError, 0, false} (Go's result for an empty string).
Rune decodeUtf8(std::string_view s, std::size_t offset, Utf8Check check = Utf8Check::kGo);

// utf8.ValidString.
bool isValidUtf8(std::string_view s);

// Each byte that does not start a valid sequence (kGo) becomes U+FFFD, as encoding/json does
// when it decodes or encodes a string (unlike strings.ToValidUTF8, which merges runs).
std::string replaceInvalidUtf8(std::string_view s);

// utf8.ValidRune: at most U+10FFFF and not a surrogate.
bool isValidRune(char32_t r);

// utf8.AppendRune: appends the encoding of r, or of U+FFFD when r is not a valid rune.
void appendUtf8(std::string& out, char32_t r);

// Appends the 1..4-byte bit pattern of r without validating it: surrogates and values up to
// U+1FFFFF are written as they are. For callers that re-emit what kLeadBits decoding read.
void appendUtf8Unchecked(std::string& out, char32_t r);

// appendUtf8 into a new string.
std::string encodeUtf8(char32_t r);

}  // namespace harness::core
