#include "harness/go/strconv.h"

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>

#include "harness/core/utf8.h"

namespace harness::go {

using core::Error;
using core::Result;

namespace {

constexpr std::uint64_t kMaxUint64 = std::numeric_limits<std::uint64_t>::max();

char lower(char c) { return static_cast<char>(static_cast<unsigned char>(c) | 0x20); }

// strconv.NumError.Error(): "strconv." + Func + ": parsing " + Quote(Num) + ": " + Err.
Error numError(std::string_view fn, std::string_view num, std::string_view err) {
  return Error{"strconv." + std::string(fn) + ": parsing " + quote(num) + ": " +
               std::string(err)};
}

constexpr std::string_view kSyntax = "invalid syntax";
constexpr std::string_view kRange = "value out of range";

// strconv/atoi.go underscoreOK: '_' only between digits or between a base prefix and a digit.
bool underscoreOk(std::string_view s) {
  char saw = '^';
  size_t i = 0;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  bool hex = false;
  if (s.size() >= 2 && s[0] == '0' &&
      (lower(s[1]) == 'b' || lower(s[1]) == 'o' || lower(s[1]) == 'x')) {
    i = 2;
    saw = '0';
    hex = lower(s[1]) == 'x';
  }
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if ((c >= '0' && c <= '9') || (hex && lower(c) >= 'a' && lower(c) <= 'f')) {
      saw = '0';
      continue;
    }
    if (c == '_') {
      if (saw != '0') return false;
      saw = '_';
      continue;
    }
    if (saw == '_') return false;
    saw = '!';
  }
  return saw != '_';
}

template <class T>
struct IntegerParse {
  T value = 0;
  NumError error = NumError::kNone;
  int bad = 0;  // the invalid base or bit size
};
using UintCore = IntegerParse<std::uint64_t>;
using IntCore = IntegerParse<std::int64_t>;

UintCore parseUintCore(std::string_view s, int base, int bit_size) {
  UintCore out;
  if (s.empty()) {
    out.error = NumError::kSyntax;
    return out;
  }
  const bool base0 = base == 0;
  const std::string_view s0 = s;
  if (base >= 2 && base <= 36) {
    // explicit base
  } else if (base == 0) {
    base = 10;
    if (s[0] == '0') {
      if (s.size() >= 3 && lower(s[1]) == 'b') {
        base = 2;
        s.remove_prefix(2);
      } else if (s.size() >= 3 && lower(s[1]) == 'o') {
        base = 8;
        s.remove_prefix(2);
      } else if (s.size() >= 3 && lower(s[1]) == 'x') {
        base = 16;
        s.remove_prefix(2);
      } else {
        base = 8;
        s.remove_prefix(1);
      }
    }
  } else {
    out.error = NumError::kBase;
    out.bad = base;
    return out;
  }
  if (bit_size == 0) {
    bit_size = 64;
  } else if (bit_size < 0 || bit_size > 64) {
    out.error = NumError::kBitSize;
    out.bad = bit_size;
    return out;
  }
  const std::uint64_t cutoff = kMaxUint64 / static_cast<std::uint64_t>(base) + 1;
  const std::uint64_t max_val = bit_size == 64 ? kMaxUint64 : (std::uint64_t{1} << bit_size) - 1;
  bool underscores = false;
  std::uint64_t n = 0;
  for (const char c : s) {
    int d = 0;
    if (c == '_' && base0) {
      underscores = true;
      continue;
    }
    if (c >= '0' && c <= '9') {
      d = c - '0';
    } else if (lower(c) >= 'a' && lower(c) <= 'z') {
      d = lower(c) - 'a' + 10;
    } else {
      out.error = NumError::kSyntax;
      return out;
    }
    if (d >= base) {
      out.error = NumError::kSyntax;
      return out;
    }
    if (n >= cutoff) {
      out.value = max_val;
      out.error = NumError::kRange;
      return out;
    }
    n *= static_cast<std::uint64_t>(base);
    const std::uint64_t n1 = n + static_cast<std::uint64_t>(d);
    if (n1 < n || n1 > max_val) {
      out.value = max_val;
      out.error = NumError::kRange;
      return out;
    }
    n = n1;
  }
  if (underscores && !underscoreOk(s0)) {
    out.error = NumError::kSyntax;
    return out;
  }
  out.value = n;
  return out;
}

template <class T>
Error numParseError(const IntegerParse<T>& p, std::string_view fn, std::string_view num) {
  switch (p.error) {
    case NumError::kRange:
      return numError(fn, num, kRange);
    case NumError::kBase:
      return numError(fn, num, "invalid base " + std::to_string(p.bad));
    case NumError::kBitSize:
      return numError(fn, num, "invalid bit size " + std::to_string(p.bad));
    default:
      return numError(fn, num, kSyntax);
  }
}

// strconv.ParseInt: on ErrRange the value is the nearest bound, as in Go.
IntCore parseIntCore(std::string_view s, int base, int bit_size) {
  IntCore out;
  if (s.empty()) {
    out.error = NumError::kSyntax;
    return out;
  }
  bool neg = false;
  if (s[0] == '+') {
    s.remove_prefix(1);
  } else if (s[0] == '-') {
    neg = true;
    s.remove_prefix(1);
  }
  const UintCore p = parseUintCore(s, base, bit_size);
  if (p.error != NumError::kNone && p.error != NumError::kRange) {
    out.error = p.error;
    out.bad = p.bad;
    return out;
  }
  if (bit_size == 0) bit_size = 64;
  const std::uint64_t cutoff = std::uint64_t{1} << (bit_size - 1);
  if (!neg && p.value >= cutoff) {
    out.value = static_cast<std::int64_t>(cutoff - 1);
    out.error = NumError::kRange;
  } else if (neg && p.value > cutoff) {
    out.value = static_cast<std::int64_t>(~cutoff + 1);
    out.error = NumError::kRange;
  } else if (neg) {
    // -cutoff fits; avoid overflow when negating 2^63.
    out.value = static_cast<std::int64_t>(~p.value + 1);
  } else {
    out.value = static_cast<std::int64_t>(p.value);
  }
  return out;
}

Result<std::int64_t> parseIntNamed(std::string_view s, int base, int bit_size,
                                   std::string_view fn) {
  const IntCore p = parseIntCore(s, base, bit_size);
  if (p.error != NumError::kNone) return numParseError(p, fn, s);
  return p.value;
}

// strconv/atof.go special(): infinities and NaN. Returns the number of bytes consumed.
size_t special(std::string_view s, double* out) {
  if (s.empty()) return 0;
  auto prefixIgnoreCase = [](std::string_view a, std::string_view b) {
    size_t n = 0;
    while (n < a.size() && n < b.size() && lower(a[n]) == b[n]) ++n;
    return n;
  };
  int sign = 1;
  size_t nsign = 0;
  switch (s[0]) {
    case '+':
    case '-':
      if (s[0] == '-') sign = -1;
      nsign = 1;
      s.remove_prefix(1);
      [[fallthrough]];
    case 'i':
    case 'I': {
      size_t n = prefixIgnoreCase(s, "infinity");
      if (n > 3 && n < 8) n = 3;
      if (n == 3 || n == 8) {
        *out = sign * std::numeric_limits<double>::infinity();
        return nsign + n;
      }
      break;
    }
    case 'n':
    case 'N':
      if (prefixIgnoreCase(s, "nan") == 3) {
        *out = std::numeric_limits<double>::quiet_NaN();
        return 3;
      }
      break;
    default:
      break;
  }
  return 0;
}

// strconv/atof.go readFloat: the length of the longest valid float literal prefix of s, or 0.
// `hex` tells whether the literal is hexadecimal.
size_t readFloat(std::string_view s, bool* hex) {
  size_t i = 0;
  bool underscores = false;
  if (i >= s.size()) return 0;
  if (s[i] == '+' || s[i] == '-') ++i;
  int base = 10;
  char exp_char = 'e';
  if (i + 2 < s.size() && s[i] == '0' && lower(s[i + 1]) == 'x') {
    base = 16;
    i += 2;
    exp_char = 'p';
  }
  *hex = base == 16;
  bool saw_dot = false;
  bool saw_digits = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '_') {
      underscores = true;
      continue;
    }
    if (c == '.') {
      if (saw_dot) break;
      saw_dot = true;
      continue;
    }
    if (c >= '0' && c <= '9') {
      saw_digits = true;
      continue;
    }
    if (base == 16 && lower(c) >= 'a' && lower(c) <= 'f') {
      saw_digits = true;
      continue;
    }
    break;
  }
  if (!saw_digits) return 0;
  if (i < s.size() && lower(s[i]) == exp_char) {
    ++i;
    if (i >= s.size()) return 0;
    if (s[i] == '+' || s[i] == '-') ++i;
    if (i >= s.size() || s[i] < '0' || s[i] > '9') return 0;
    for (; i < s.size() && ((s[i] >= '0' && s[i] <= '9') || s[i] == '_'); ++i) {
      if (s[i] == '_') underscores = true;
    }
  } else if (base == 16) {
    return 0;  // a hexadecimal mantissa requires a 'p' exponent
  }
  if (underscores && !underscoreOk(s.substr(0, i))) return 0;
  return i;
}

std::string twoDigitExponent(int exp) {
  std::string out = exp < 0 ? "-" : "+";
  const int a = exp < 0 ? -exp : exp;
  if (a < 10) out.push_back('0');
  out += std::to_string(a);
  return out;
}

}  // namespace

Result<bool> parseBool(std::string_view s) {
  if (s == "1" || s == "t" || s == "T" || s == "TRUE" || s == "true" || s == "True") return true;
  if (s == "0" || s == "f" || s == "F" || s == "FALSE" || s == "false" || s == "False") {
    return false;
  }
  return numError("ParseBool", s, kSyntax);
}

Result<std::uint64_t> parseUint(std::string_view s, int base, int bit_size) {
  const UintCore p = parseUintCore(s, base, bit_size);
  if (p.error != NumError::kNone) return numParseError(p, "ParseUint", s);
  return p.value;
}

UintParse parseUintDetailed(std::string_view s, int base, int bit_size) {
  const UintCore p = parseUintCore(s, base, bit_size);
  return UintParse{p.value, p.error};
}

IntParse parseIntDetailed(std::string_view s, int base, int bit_size) {
  const IntCore p = parseIntCore(s, base, bit_size);
  return IntParse{p.value, p.error};
}

Result<std::int64_t> parseInt(std::string_view s, int base, int bit_size) {
  return parseIntNamed(s, base, bit_size, "ParseInt");
}

Result<std::int64_t> atoi(std::string_view s) {
  // The fast path and the slow path (ParseInt base 10) accept the same strings on 64-bit
  // platforms; only the function name in errors differs from ParseInt.
  return parseIntNamed(s, 10, 0, "Atoi");
}

Result<double> parseFloat(std::string_view s) {
  constexpr std::string_view kFn = "ParseFloat";
  double special_value = 0;
  if (const size_t n = special(s, &special_value); n > 0) {
    if (n != s.size()) return numError(kFn, s, kSyntax);
    return special_value;
  }
  bool hex = false;
  const size_t n = readFloat(s, &hex);
  if (n == 0 || n != s.size()) return numError(kFn, s, kSyntax);
  std::string cleaned;
  cleaned.reserve(s.size());
  for (const char c : s) {
    if (c != '_') cleaned.push_back(c);
  }
  // strtod is correctly rounded for decimal and hexadecimal input; the syntax was checked above
  // with Go's rules, so strtod only computes the value.
  errno = 0;
  char* end = nullptr;
  const double v = std::strtod(cleaned.c_str(), &end);
  if (end != cleaned.c_str() + cleaned.size()) return numError(kFn, s, kSyntax);
  if (errno == ERANGE && std::isinf(v)) return numError(kFn, s, kRange);
  return v;
}

std::string formatFloat(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  // to_chars in scientific form gives the shortest round-tripping digits, like Go's Ryu path.
  char buf[64];
  const auto res = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool neg = false;
  if (!sci.empty() && sci[0] == '-') {
    neg = true;
    sci.erase(0, 1);
  }
  const size_t e_pos = sci.find('e');
  std::string digits;
  for (size_t i = 0; i < e_pos; ++i) {
    if (sci[i] != '.') digits.push_back(sci[i]);
  }
  const int exp = std::stoi(sci.substr(e_pos + 1));
  // Trim trailing zeros of the mantissa (to_chars never emits them, but be safe).
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out = neg ? "-" : "";
  const int nd = static_cast<int>(digits.size());
  if (digits == "0") {
    return out + "0";
  }
  if (exp < -4 || exp >= 6) {
    out.push_back(digits[0]);
    if (nd > 1) {
      out.push_back('.');
      out.append(digits, 1, std::string::npos);
    }
    out.push_back('e');
    out += twoDigitExponent(exp);
    return out;
  }
  const int dp = exp + 1;  // digits before the decimal point
  if (dp <= 0) {
    out += "0.";
    out.append(static_cast<size_t>(-dp), '0');
    out += digits;
  } else if (dp >= nd) {
    out += digits;
    out.append(static_cast<size_t>(dp - nd), '0');
  } else {
    out.append(digits, 0, static_cast<size_t>(dp));
    out.push_back('.');
    out.append(digits, static_cast<size_t>(dp), std::string::npos);
  }
  return out;
}

std::string quote(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 2);
  out.push_back('"');
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '\a': out += "\\a"; break;
        case '\b': out += "\\b"; break;
        case '\f': out += "\\f"; break;
        case '\n': out += "\\n"; break;
        case '\r': out += "\\r"; break;
        case '\t': out += "\\t"; break;
        case '\v': out += "\\v"; break;
        case '"': out += "\\\""; break;
        case '\\': out += "\\\\"; break;
        default:
          if (c < 0x20 || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
      ++i;
      continue;
    }
    // Structural check only (kLeadC2ToF4): overlong 3/4-byte forms and surrogates are copied
    // as they are, as this function always did, where Go's Quote would write \x escapes.
    const core::Rune r = core::decodeUtf8(s, i, core::Utf8Check::kLeadC2ToF4);
    if (!r.valid) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
      ++i;
    } else {
      out.append(s.substr(i, r.length));
      i += r.length;
    }
  }
  out.push_back('"');
  return out;
}

}  // namespace harness::go
