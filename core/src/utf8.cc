#include "harness/core/utf8.h"

namespace harness::core {

namespace {

constexpr Rune kInvalid{kRuneError, 1, false};

}  // namespace

Rune decodeUtf8(std::string_view s, std::size_t offset, Utf8Check check) {
  if (offset >= s.size()) return Rune{kRuneError, 0, false};
  const auto c = static_cast<unsigned char>(s[offset]);
  if (c < 0x80) return Rune{c, 1, true};
  std::size_t len = 0;
  char32_t cp = 0;
  if ((c & 0xE0) == 0xC0) {
    len = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4;
    cp = c & 0x07;
  } else {
    return kInvalid;  // a continuation byte or 0xF8..0xFF
  }
  if (check != Utf8Check::kLeadBits && (c < 0xC2 || c > 0xF4)) return kInvalid;
  if (len > s.size() - offset) return kInvalid;
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[offset + k]);
    if ((b & 0xC0) != 0x80) return kInvalid;
    cp = (cp << 6) | (b & 0x3F);
  }
  if (check == Utf8Check::kGo) {
    // Overlong 3- and 4-byte forms (2-byte ones are excluded by the 0xC2 lead), surrogates and
    // values above U+10FFFF.
    const bool overlong = (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000);
    if (overlong || !isValidRune(cp)) return kInvalid;
  }
  return Rune{cp, len, true};
}

bool isValidUtf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const Rune r = decodeUtf8(s, i);
    if (!r.valid) return false;
    i += r.length;
  }
  return true;
}

std::string replaceInvalidUtf8(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const Rune r = decodeUtf8(s, i);
    if (r.valid) {
      out.append(s.substr(i, r.length));
    } else {
      appendUtf8(out, kRuneError);
    }
    i += r.length;
  }
  return out;
}

bool isValidRune(char32_t r) { return r <= kMaxRune && !(r >= 0xD800 && r <= 0xDFFF); }

void appendUtf8(std::string& out, char32_t r) {
  appendUtf8Unchecked(out, isValidRune(r) ? r : kRuneError);
}

void appendUtf8Unchecked(std::string& out, char32_t r) {
  if (r < 0x80) {
    out.push_back(static_cast<char>(r));
  } else if (r < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (r >> 6)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else if (r < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (r >> 12)));
    out.push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (r >> 18)));
    out.push_back(static_cast<char>(0x80 | ((r >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((r >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (r & 0x3F)));
  }
}

std::string encodeUtf8(char32_t r) {
  std::string out;
  appendUtf8(out, r);
  return out;
}

}  // namespace harness::core
