#include "harness/go/strings.h"

#include "harness/core/utf8.h"

namespace harness::go {

bool isSpace(char32_t r) {
  switch (r) {
    case '\t':
    case '\n':
    case '\v':
    case '\f':
    case '\r':
    case ' ':
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000:
      return true;
    default:
      return r >= 0x2000 && r <= 0x200A;
  }
}

// Structural check only, as TrimSpace here always did: a 3- or 4-byte overlong form of a space
// counts as a space here, where Go's decoder would read U+FFFD.
constexpr core::Utf8Check kTrimSpaceCheck = core::Utf8Check::kLeadC2ToF4;

std::string trimSpace(std::string_view s) {
  std::size_t begin = 0;
  while (begin < s.size()) {
    const core::Rune r = core::decodeUtf8(s, begin, kTrimSpaceCheck);
    if (!isSpace(r.code_point)) break;
    begin += r.length;
  }
  std::size_t end = s.size();
  while (end > begin) {
    // Step back to the start of the last sequence.
    std::size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(s[start]) & 0xC0) == 0x80 &&
           end - start < 4) {
      --start;
    }
    const core::Rune r = core::decodeUtf8(s, start, kTrimSpaceCheck);
    if (start + r.length != end || !isSpace(r.code_point)) break;
    end = start;
  }
  return std::string(s.substr(begin, end - begin));
}

}  // namespace harness::go
