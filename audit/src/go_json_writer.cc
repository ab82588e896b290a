#include "go_json_writer.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "harness/core/utf8.h"

namespace harness::audit::go_json {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void appendHexEscape(std::string& out, unsigned char b) {
  out += "\\u00";
  out.push_back(kHex[b >> 4]);
  out.push_back(kHex[b & 0xF]);
}

}  // namespace

void appendString(std::string& out, std::string_view s) {
  out.push_back('"');
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      switch (b) {
        case '"':
        case '\\':
          out.push_back('\\');
          out.push_back(static_cast<char>(b));
          break;
        case '\b':
          out += "\\b";
          break;
        case '\f':
          out += "\\f";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        case '<':
        case '>':
        case '&':
          appendHexEscape(out, b);
          break;
        default:
          if (b < 0x20) {
            appendHexEscape(out, b);
          } else {
            out.push_back(static_cast<char>(b));
          }
      }
      ++i;
      continue;
    }
    const core::Rune rune = core::decodeUtf8(s, i);
    if (!rune.valid) {
      out += "\\ufffd";
      i += 1;
      continue;
    }
    if (rune.code_point == 0x2028 || rune.code_point == 0x2029) {
      out += rune.code_point == 0x2028 ? "\\u2028" : "\\u2029";
    } else {
      out.append(s.substr(i, rune.length));
    }
    i += rune.length;
  }
  out.push_back('"');
}

void appendFloat(std::string& out, double f) {
  if (!std::isfinite(f)) {  // json.Marshal refuses these; never produced from parsed JSON
    out += "null";
    return;
  }
  char buffer[64];
  const double abs = std::fabs(f);
  const bool exponent = abs != 0 && (abs < 1e-6 || abs >= 1e21);
  const auto result =
      std::to_chars(buffer, buffer + sizeof buffer, f,
                    exponent ? std::chars_format::scientific : std::chars_format::fixed);
  std::string text(buffer, result.ptr);
  if (exponent) {
    // "1e-07" -> "1e-7", as Go cleans up a two-digit negative exponent with a leading zero.
    const std::size_t n = text.size();
    if (n >= 4 && text[n - 4] == 'e' && text[n - 3] == '-' && text[n - 2] == '0') {
      text.erase(n - 2, 1);
    }
  }
  out += text;
}

std::string compact(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false;
  bool escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '<' || c == '>' || c == '&') {
      appendHexEscape(out, c);
      continue;
    }
    if (c == 0xE2 && i + 2 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0x80 &&
        (static_cast<unsigned char>(text[i + 2]) & ~1u) == 0xA8) {
      out += (static_cast<unsigned char>(text[i + 2]) == 0xA8) ? "\\u2028" : "\\u2029";
      i += 2;
      continue;
    }
    if (in_string) {
      out.push_back(static_cast<char>(c));
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') continue;
    if (c == '"') in_string = true;
    out.push_back(static_cast<char>(c));
  }
  return out;
}

}  // namespace harness::audit::go_json
