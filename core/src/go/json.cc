#include "harness/go/json.h"

// Followed: go/src/encoding/json/scanner.go (checkValid, the state functions, quoteChar) and
// encoding/json/encode.go (floatEncoder).

#include <charconv>
#include <cmath>
#include <cstdio>
#include <string>

#include "harness/core/utf8.h"
#include "harness/go/strconv.h"

namespace harness::go {

namespace {

constexpr char kHex[] = "0123456789abcdef";

// encoding/json syntax checking (scanner.go). Go validates the whole input before
// decoding, so a syntax error always wins over a type error, and its texts are what kube-apiserver
// reports for an undecodable webhook patch.

// encoding/json quoteChar: the offending byte as a Go character literal.
std::string quoteChar(unsigned char c) {
  if (c == '\'') return "'\\''";
  if (c == '"') return "'\"'";
  std::string inner;
  if (c < 0x80) {
    inner = quote(std::string(1, static_cast<char>(c)));
    inner = inner.substr(1, inner.size() - 2);
  } else if (c <= 0xA0 || c == 0xAD) {
    // string(rune(c)) is U+0080..U+00FF; Go's Quote escapes the non-printable ones.
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\u%04x", c);
    inner = buf;
  } else {
    inner.push_back(static_cast<char>(0xC0 | (c >> 6)));
    inner.push_back(static_cast<char>(0x80 | (c & 0x3F)));
  }
  return "'" + inner + "'";
}

bool isGoJsonSpace(unsigned char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool isDigit(unsigned char c) { return c >= '0' && c <= '9'; }
bool isHex(unsigned char c) {
  return isDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

std::string jsonSyntaxError(std::string_view text) {
  enum class Parse { kObjectKey, kObjectValue, kArrayValue };
  enum class State {
    kBeginValue,
    kBeginValueOrEmpty,
    kBeginStringOrEmpty,
    kBeginString,
    kEndValue,
    kEndTop,
    kInString,
    kInStringEsc,
    kInStringEscU,
    kInStringEscU1,
    kInStringEscU12,
    kInStringEscU123,
    kNeg,
    k1,
    k0,
    kDot,
    kDot0,
    kE,
    kESign,
    kE0,
    kLiteral,  // inside true/false/null: `literal`, next expected byte at `literal_pos`
  };
  constexpr std::size_t kMaxNestingDepth = 10000;  // scanner.go maxNestingDepth
  std::vector<Parse> stack;
  State state = State::kBeginValue;
  std::string_view literal;
  std::size_t literal_pos = 0;
  auto error = [](unsigned char c, const std::string& context) {
    return "invalid character " + quoteChar(c) + " " + context;
  };

  // One step of the state machine; returns an error text or "".
  auto step = [&](unsigned char c) -> std::string {
    while (true) {
      switch (state) {
        case State::kBeginValueOrEmpty:
          if (isGoJsonSpace(c)) return "";
          if (c == ']') {
            state = State::kEndValue;
            continue;
          }
          state = State::kBeginValue;
          continue;
        case State::kBeginValue:
          if (isGoJsonSpace(c)) return "";
          switch (c) {
            case '{':
              state = State::kBeginStringOrEmpty;
              stack.push_back(Parse::kObjectKey);
              if (stack.size() > kMaxNestingDepth) return error(c, "exceeded max depth");
              return "";
            case '[':
              state = State::kBeginValueOrEmpty;
              stack.push_back(Parse::kArrayValue);
              if (stack.size() > kMaxNestingDepth) return error(c, "exceeded max depth");
              return "";
            case '"':
              state = State::kInString;
              return "";
            case '-':
              state = State::kNeg;
              return "";
            case '0':
              state = State::k0;
              return "";
            case 't':
            case 'f':
            case 'n':
              literal = c == 't' ? "true" : c == 'f' ? "false" : "null";
              literal_pos = 1;
              state = State::kLiteral;
              return "";
            default:
              if (c >= '1' && c <= '9') {
                state = State::k1;
                return "";
              }
              return error(c, "looking for beginning of value");
          }
        case State::kBeginStringOrEmpty:
          if (isGoJsonSpace(c)) return "";
          if (c == '}') {
            stack.back() = Parse::kObjectValue;
            state = State::kEndValue;
            continue;
          }
          state = State::kBeginString;
          continue;
        case State::kBeginString:
          if (isGoJsonSpace(c)) return "";
          if (c == '"') {
            state = State::kInString;
            return "";
          }
          return error(c, "looking for beginning of object key string");
        case State::kEndValue: {
          if (stack.empty()) {
            state = State::kEndTop;
            continue;
          }
          if (isGoJsonSpace(c)) return "";
          switch (stack.back()) {
            case Parse::kObjectKey:
              if (c == ':') {
                stack.back() = Parse::kObjectValue;
                state = State::kBeginValue;
                return "";
              }
              return error(c, "after object key");
            case Parse::kObjectValue:
              if (c == ',') {
                stack.back() = Parse::kObjectKey;
                state = State::kBeginString;
                return "";
              }
              if (c == '}') {
                stack.pop_back();
                state = stack.empty() ? State::kEndTop : State::kEndValue;
                return "";
              }
              return error(c, "after object key:value pair");
            case Parse::kArrayValue:
              if (c == ',') {
                state = State::kBeginValue;
                return "";
              }
              if (c == ']') {
                stack.pop_back();
                state = stack.empty() ? State::kEndTop : State::kEndValue;
                return "";
              }
              return error(c, "after array element");
          }
          return "";
        }
        case State::kEndTop:
          if (!isGoJsonSpace(c)) return error(c, "after top-level value");
          return "";
        case State::kInString:
          if (c == '"') {
            state = State::kEndValue;
            return "";
          }
          if (c == '\\') {
            state = State::kInStringEsc;
            return "";
          }
          if (c < 0x20) return error(c, "in string literal");
          return "";
        case State::kInStringEsc:
          switch (c) {
            case 'b':
            case 'f':
            case 'n':
            case 'r':
            case 't':
            case '\\':
            case '/':
            case '"':
              state = State::kInString;
              return "";
            case 'u':
              state = State::kInStringEscU;
              return "";
            default:
              return error(c, "in string escape code");
          }
        case State::kInStringEscU:
        case State::kInStringEscU1:
        case State::kInStringEscU12:
        case State::kInStringEscU123:
          if (!isHex(c)) return error(c, "in \\u hexadecimal character escape");
          state = state == State::kInStringEscU     ? State::kInStringEscU1
                  : state == State::kInStringEscU1  ? State::kInStringEscU12
                  : state == State::kInStringEscU12 ? State::kInStringEscU123
                                                    : State::kInString;
          return "";
        case State::kNeg:
          if (c == '0') {
            state = State::k0;
            return "";
          }
          if (c >= '1' && c <= '9') {
            state = State::k1;
            return "";
          }
          return error(c, "in numeric literal");
        case State::k1:
          if (isDigit(c)) return "";
          state = State::k0;
          continue;
        case State::k0:
          if (c == '.') {
            state = State::kDot;
            return "";
          }
          if (c == 'e' || c == 'E') {
            state = State::kE;
            return "";
          }
          state = State::kEndValue;
          continue;
        case State::kDot:
          if (isDigit(c)) {
            state = State::kDot0;
            return "";
          }
          return error(c, "after decimal point in numeric literal");
        case State::kDot0:
          if (isDigit(c)) return "";
          if (c == 'e' || c == 'E') {
            state = State::kE;
            return "";
          }
          state = State::kEndValue;
          continue;
        case State::kE:
          if (c == '+' || c == '-') {
            state = State::kESign;
            return "";
          }
          state = State::kESign;
          continue;
        case State::kESign:
          if (isDigit(c)) {
            state = State::kE0;
            return "";
          }
          return error(c, "in exponent of numeric literal");
        case State::kE0:
          if (isDigit(c)) return "";
          state = State::kEndValue;
          continue;
        case State::kLiteral:
          if (c != static_cast<unsigned char>(literal[literal_pos])) {
            return error(c, "in literal " + std::string(literal) + " (expecting '" +
                                std::string(1, literal[literal_pos]) + "')");
          }
          if (++literal_pos == literal.size()) state = State::kEndValue;
          return "";
      }
      return "";
    }
  };

  for (unsigned char c : text) {
    std::string err = step(c);
    if (!err.empty()) return err;
  }
  // scanner.eof(): a trailing space completes a pending number or literal.
  // A byte that is invalid there (input "-", "1.", "tru") reports that error, as Go does.
  if (state == State::kEndTop) return "";
  if (std::string err = step(' '); !err.empty()) return err;
  if (state != State::kEndTop) return "unexpected end of JSON input";
  return "";
}


std::string marshalString(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  appendJsonString(out, s, true);
  return out;
}

void appendJsonString(std::string& out, std::string_view s, bool escape_html) {
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b < 0x80) {
      const bool html = b == '<' || b == '>' || b == '&';
      if (b >= 0x20 && b != '"' && b != '\\' && !(escape_html && html)) {
        out.push_back(static_cast<char>(b));
        ++i;
        continue;
      }
      switch (b) {
        case '\\': out += "\\\\"; break;
        case '"': out += "\\\""; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        default:
          out += "\\u00";
          out.push_back(kHex[b >> 4]);
          out.push_back(kHex[b & 0xF]);
      }
      ++i;
      continue;
    }
    // Multi-byte: Go's decoder, so overlong forms and surrogates become \ufffd.
    const core::Rune decoded = core::decodeUtf8(s, i);
    if (!decoded.valid) {
      out += "\\ufffd";
      ++i;
      continue;
    }
    const char32_t r = decoded.code_point;
    const size_t len = decoded.length;
    if (r == 0x2028 || r == 0x2029) {
      out += "\\u202";
      out.push_back(kHex[r & 0xF]);
    } else {
      out.append(s.substr(i, len));
    }
    i += len;
  }
  out.push_back('"');
}

std::string jsonFloat(double f) {
  // floatEncoder: the shortest digits that round-trip, in %f form unless the magnitude is below
  // 1e-6 or at least 1e21; then %e, with a two-digit negative exponent cleaned ("1e-07" ->
  // "1e-7").
  const double abs = std::fabs(f);
  const bool exponent = abs != 0 && (abs < 1e-6 || abs >= 1e21);
  char buffer[64];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, f,
                                    exponent ? std::chars_format::scientific
                                             : std::chars_format::fixed);
  std::string text(buffer, result.ptr);
  if (exponent) {
    const std::size_t n = text.size();
    if (n >= 4 && text[n - 4] == 'e' && text[n - 3] == '-' && text[n - 2] == '0') {
      text.erase(n - 2, 1);
    }
  }
  return text;
}

}  // namespace harness::go
