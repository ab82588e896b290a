#include "harness/go/base64.h"

#include <array>
#include <cstdint>
#include <cstring>

namespace harness::go {

using core::Error;
using core::Result;

namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr char kPad = '=';
constexpr std::uint8_t kInvalid = 0xff;

constexpr std::array<std::uint8_t, 256> makeDecodeMap() {
  std::array<std::uint8_t, 256> map{};
  for (auto& v : map) v = kInvalid;
  for (std::size_t i = 0; i < kAlphabet.size(); ++i) {
    map[static_cast<unsigned char>(kAlphabet[i])] = static_cast<std::uint8_t>(i);
  }
  return map;
}

constexpr std::array<std::uint8_t, 256> kDecodeMap = makeDecodeMap();

// The two characters of every 12-bit group: three input bytes are two lookups.
constexpr std::size_t kPairsSize = std::size_t{2} * 4096;
constexpr std::array<char, kPairsSize> makePairs() {
  std::array<char, kPairsSize> pairs{};
  for (std::size_t i = 0; i < 4096; ++i) {
    pairs[2 * i] = kAlphabet[i >> 6];
    pairs[2 * i + 1] = kAlphabet[i & 0x3f];
  }
  return pairs;
}

constexpr std::array<char, kPairsSize> kPairs = makePairs();

Error corruptInput(std::size_t offset) {
  return Error{"illegal base64 data at input byte " + std::to_string(offset)};
}

bool isNewline(char c) { return c == '\n' || c == '\r'; }

}  // namespace

std::string base64Encode(std::string_view bytes) {
  // Written through a pointer into the sized string: push_back's capacity check per character
  // was most of the cost of answering with a large patch.
  std::string out((bytes.size() + 2) / 3 * 4, kPad);
  const auto* in = reinterpret_cast<const unsigned char*>(bytes.data());
  char* o = out.data();
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    const std::uint32_t v = static_cast<std::uint32_t>(in[i]) << 16 |
                            static_cast<std::uint32_t>(in[i + 1]) << 8 | in[i + 2];
    std::memcpy(o, &kPairs[std::size_t{2} * (v >> 12)], 2);
    std::memcpy(o + 2, &kPairs[std::size_t{2} * (v & 0xfff)], 2);
    o += 4;
  }
  const std::size_t rest = bytes.size() - i;
  if (rest == 0) return out;
  std::uint32_t v = static_cast<std::uint32_t>(in[i]) << 16;
  if (rest == 2) v |= static_cast<std::uint32_t>(in[i + 1]) << 8;
  *o++ = kAlphabet[v >> 18 & 0x3f];
  *o++ = kAlphabet[v >> 12 & 0x3f];
  if (rest == 2) *o = kAlphabet[v >> 6 & 0x3f];  // the padding is already there
  return out;
}

Result<std::string> base64Decode(std::string_view text) {
  // A transcription of the quantum-by-quantum semantics of Go's decodeQuantum (the fast paths in
  // Go's Decode only handle quanta that decodeQuantum would accept identically).
  std::string out;
  out.reserve(text.size() / 4 * 3);
  std::size_t si = 0;
  while (si < text.size()) {
    std::array<std::uint8_t, 4> dbuf{};
    std::size_t dlen = 4;
    bool trailing_garbage = false;
    std::size_t garbage_at = 0;
    for (std::size_t j = 0; j < dbuf.size(); ++j) {
      if (si == text.size()) {
        // Go: j == 0 cannot happen here (the outer loop checked), otherwise padding is missing.
        if (j == 0) return out;
        return corruptInput(si - j);
      }
      const char in = text[si];
      ++si;
      const std::uint8_t value = kDecodeMap[static_cast<unsigned char>(in)];
      if (value != kInvalid) {
        dbuf[j] = value;
        continue;
      }
      if (isNewline(in)) {
        --j;  // wraps for j == 0; the loop increment brings it back
        continue;
      }
      if (in != kPad) return corruptInput(si - 1);
      // Padding reached.
      if (j == 0 || j == 1) return corruptInput(si - 1);
      if (j == 2) {
        // "==" is expected; the first '=' is consumed.
        while (si < text.size() && isNewline(text[si])) ++si;
        if (si == text.size()) return corruptInput(text.size());
        if (text[si] != kPad) return corruptInput(si - 1);
        ++si;
      }
      while (si < text.size() && isNewline(text[si])) ++si;
      if (si < text.size()) {
        trailing_garbage = true;
        garbage_at = si;
      }
      dlen = j;
      break;
    }
    const std::uint32_t val =
        static_cast<std::uint32_t>(dbuf[0]) << 18 | static_cast<std::uint32_t>(dbuf[1]) << 12 |
        static_cast<std::uint32_t>(dbuf[2]) << 6 | static_cast<std::uint32_t>(dbuf[3]);
    out.push_back(static_cast<char>(val >> 16 & 0xff));
    if (dlen >= 3) out.push_back(static_cast<char>(val >> 8 & 0xff));
    if (dlen == 4) out.push_back(static_cast<char>(val & 0xff));
    if (trailing_garbage) return corruptInput(garbage_at);
    if (dlen < 4) break;
  }
  return out;
}

}  // namespace harness::go
