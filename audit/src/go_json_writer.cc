#include "go_json_writer.h"

#include <charconv>
#include <cmath>
#include <system_error>

#include "harness/core/utf8.h"
#include "harness/go/json.h"

namespace harness::audit::go_json {
namespace {

constexpr char kHex[] = "0123456789abcdef";

void appendHexEscape(std::string& out, unsigned char b) {
  out += "\\u00";
  out.push_back(kHex[b >> 4]);
  out.push_back(kHex[b & 0xF]);
}

}  // namespace

void appendString(std::string& out, std::string_view s) { go::appendJsonString(out, s, true); }

void appendFloat(std::string& out, double f) {
  if (!std::isfinite(f)) {  // json.Marshal refuses these; never produced from parsed JSON
    out += "null";
    return;
  }
  out += go::jsonFloat(f);
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
