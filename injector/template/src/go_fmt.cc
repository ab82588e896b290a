// Go's fmt verbs over template values. Followed: golang/go src/fmt/print.go (doPrintf,
// printArg, printValue, badVerb, argNumber, intFromArg, doPrint, doPrintln) and format.go
// (fmtInteger, fmtFloat, pad, fmtQ, fmtC, fmtUnicode).

#include "harness/gotemplate/go_fmt.h"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "harness/core/field_errors.h"
#include "harness/core/utf8.h"
#include "harness/go/strconv.h"

namespace harness::gotemplate {
namespace {

constexpr int kTooLarge = 1000000;  // fmt's tooLarge: widths/precisions beyond 1e6 are bad

bool tooLarge(long long x) { return x > kTooLarge || x < -kTooLarge; }

size_t runeCount(std::string_view s) {
  size_t n = 0;
  for (const char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

// Decoding as this file always did (kLeadBits): any lead-byte pattern with its continuation
// bytes is one rune, where Go's decoder rejects overlong forms and surrogates byte by byte.
core::Rune decodeRune(std::string_view s, size_t i) {
  return core::decodeUtf8(s, i, core::Utf8Check::kLeadBits);
}

struct Flags {
  bool minus = false, plus = false, sharp = false, space = false, zero = false;
  bool plus_v = false, sharp_v = false;
  bool wid_present = false, prec_present = false;
  int wid = 0, prec = 0;
};

class Printer {
 public:
  std::string buf;
  Flags f;

  void clearFlags() { f = Flags{}; }

  void writePadding(int n) {
    if (n <= 0) return;
    buf.append(static_cast<size_t>(n), f.zero ? '0' : ' ');
  }

  void pad(std::string_view s) {
    if (!f.wid_present || f.wid == 0) {
      buf.append(s);
      return;
    }
    const int width = f.wid - static_cast<int>(runeCount(s));
    if (!f.minus) {
      writePadding(width);
      buf.append(s);
    } else {
      buf.append(s);
      const bool old_zero = f.zero;
      f.zero = false;
      writePadding(width);
      f.zero = old_zero;
    }
  }

  void padString(std::string_view s) { pad(s); }

  // Truncates s to the precision in runes.
  std::string_view truncate(std::string_view s) const {
    if (!f.prec_present) return s;
    int n = f.prec;
    for (size_t i = 0; i < s.size();) {
      if (n <= 0) return s.substr(0, i);
      i += decodeRune(s, i).length;
      --n;
    }
    return s;
  }

  void fmtBoolean(bool v) { padString(v ? "true" : "false"); }

  void fmtInteger(std::uint64_t u, int base, bool is_signed, char32_t verb, bool upper) {
    const bool negative = is_signed && static_cast<std::int64_t>(u) < 0;
    if (negative) u = ~u + 1;
    const char* digits = upper ? "0123456789ABCDEFX" : "0123456789abcdefx";
    int prec = 0;
    if (f.prec_present) {
      prec = f.prec;
      if (prec == 0 && u == 0) {
        const bool old_zero = f.zero;
        f.zero = false;
        writePadding(f.wid_present ? f.wid : 0);
        f.zero = old_zero;
        return;
      }
    } else if (f.zero && !f.minus && f.wid_present) {
      prec = f.wid;
      if (negative || f.plus || f.space) --prec;
    }
    std::string rev;  // digits, least significant first
    if (u == 0) rev.push_back('0');
    while (u > 0) {
      rev.push_back(digits[u % static_cast<unsigned>(base)]);
      u /= static_cast<unsigned>(base);
    }
    while (static_cast<int>(rev.size()) < prec) rev.push_back('0');
    if (f.sharp) {
      switch (base) {
        case 2: rev += "b0"; break;
        case 8:
          if (rev.back() != '0') rev.push_back('0');
          break;
        case 16:
          rev.push_back(digits[16]);
          rev.push_back('0');
          break;
        default: break;
      }
    }
    if (verb == 'O') rev += "o0";
    if (negative) {
      rev.push_back('-');
    } else if (f.plus) {
      rev.push_back('+');
    } else if (f.space) {
      rev.push_back(' ');
    }
    const std::string s(rev.rbegin(), rev.rend());
    const bool old_zero = f.zero;
    f.zero = false;
    pad(s);
    f.zero = old_zero;
  }

  void fmtC(std::uint64_t c) {
    std::string s;
    core::appendUtf8(s, c > 0x10FFFF ? 0xFFFD : static_cast<std::uint32_t>(c));
    pad(s);
  }

  void fmtQc(std::uint64_t c) {
    const std::uint32_t r = c > 0x10FFFF ? 0xFFFD : static_cast<std::uint32_t>(c);
    std::string s;
    if (r == '\'') {
      s = "'\\''";
    } else {
      std::string inner;
      core::appendUtf8(inner, r);
      // strconv.QuoteRune: like Quote but with single quotes; '"' needs no escape.
      std::string q = r == '"' ? std::string("\"") : go::quote(inner);
      if (r != '"') q = q.substr(1, q.size() - 2);
      s = "'" + q + "'";
    }
    pad(s);
  }

  void fmtUnicode(std::uint64_t u) {
    char tmp[32];
    std::snprintf(tmp, sizeof tmp, "U+%04llX", static_cast<unsigned long long>(u));
    std::string s = tmp;
    if (f.sharp && u <= 0x10FFFF && u >= 0x20 && u != 0x7F) {
      s += " '";
      core::appendUtf8(s, static_cast<std::uint32_t>(u));
      s += "'";
    }
    const bool old_zero = f.zero;
    f.zero = false;
    pad(s);
    f.zero = old_zero;
  }

  void fmtFloat(double v, char verb, int prec) {
    if (f.prec_present) prec = f.prec;
    std::string num;
    if (std::isnan(v)) {
      num = "+NaN";
    } else if (std::isinf(v)) {
      num = v > 0 ? "+Inf" : "-Inf";
    } else if (prec < 0 && (verb == 'g' || verb == 'G')) {
      num = go::formatFloat(v);
      if (verb == 'G') {
        for (char& c : num) {
          if (c == 'e') c = 'E';
        }
      }
      if (num[0] != '-') num.insert(num.begin(), '+');
    } else {
      if (prec < 0) prec = 6;
      if ((verb == 'g' || verb == 'G') && prec == 0) prec = 1;
      char spec[8] = {'%', '+', '.', '*', verb == 'F' ? 'f' : verb, '\0'};
      char tmp[512];
      const int n = std::snprintf(tmp, sizeof tmp, spec, prec, v);
      if (n >= static_cast<int>(sizeof tmp)) {
        std::string big(static_cast<size_t>(n) + 1, '\0');
        std::snprintf(big.data(), big.size(), spec, prec, v);
        big.resize(static_cast<size_t>(n));
        num = big;
      } else {
        num.assign(tmp, static_cast<size_t>(n));
      }
    }
    if (f.space && num[0] == '+' && !f.plus) num[0] = ' ';
    if (num[1] == 'I' || num[1] == 'N') {
      const bool old_zero = f.zero;
      f.zero = false;
      if (num[1] == 'N' && !f.space && !f.plus) num.erase(0, 1);
      pad(num);
      f.zero = old_zero;
      return;
    }
    if (f.plus || num[0] != '+') {
      if (f.zero && !f.minus && f.wid_present && f.wid > static_cast<int>(num.size())) {
        buf.push_back(num[0]);
        writePadding(f.wid - static_cast<int>(num.size()));
        buf.append(num, 1, std::string::npos);
        return;
      }
      pad(num);
      return;
    }
    pad(std::string_view(num).substr(1));
  }

  void fmtQ(std::string_view s) {
    s = truncate(s);
    if (f.sharp && s.find('`') == std::string_view::npos) {
      bool can_backquote = true;
      for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if ((u < 0x20 && u != '\t') || u == 0x7F) can_backquote = false;
      }
      if (can_backquote) {
        padString("`" + std::string(s) + "`");
        return;
      }
    }
    padString(go::quote(s));
  }

  void fmtSx(std::string_view s, bool upper) {
    s = truncate(s);
    const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < s.size(); ++i) {
      if (f.space && i > 0) out.push_back(' ');
      if (f.sharp && (f.space || i == 0)) out += upper ? "0X" : "0x";
      const auto c = static_cast<unsigned char>(s[i]);
      out.push_back(digits[c >> 4]);
      out.push_back(digits[c & 0xF]);
    }
    pad(out);
  }

  // p.arg-style bad verb: "%!<verb>(<type>=<value>)" or "%!<verb>(<nil>)".
  void badVerb(char32_t verb, const Value* v) {
    buf += "%!";
    core::appendUtf8(buf, verb);
    buf.push_back('(');
    if (v == nullptr || !v->valid() || v->isNil()) {
      buf += "<nil>";
    } else {
      buf += v->concreteTypeName();
      buf.push_back('=');
      const Flags saved = f;
      printScalarOrComposite(*v, 'v', 0);
      f = saved;
    }
    buf.push_back(')');
  }

  // printArg: one operand of Sprint/Sprintf (an interface{} value).
  void printArg(const Value& arg, char32_t verb) {
    if (arg.isNil() && arg.stringMap() && verb != 'T') {
      padString(f.sharp_v ? "map[string]string(nil)" : "map[]");  // a typed nil map
      return;
    }
    if (!arg.valid() || arg.isNil()) {
      if (verb == 'T' || verb == 'v') {
        padString("<nil>");
      } else {
        badVerb(verb, nullptr);
      }
      return;
    }
    if (verb == 'T') {
      padString(arg.concreteTypeName());
      return;
    }
    if (verb == 'p') {
      badVerb(verb, &arg);
      return;
    }
    printScalarOrComposite(arg, verb, 0);
  }

  void printScalarOrComposite(const Value& v, char32_t verb, int depth) {
    const nlohmann::json& j = v.json();
    switch (v.kind()) {
      case GoKind::kInvalid:
      case GoKind::kNil:
        if (depth == 0) {
          buf += "<invalid reflect.Value>";
        } else if (f.sharp_v) {
          buf += "interface {}(nil)";
        } else {
          buf += "<nil>";
        }
        return;
      case GoKind::kBool:
        if (verb == 't' || verb == 'v') {
          fmtBoolean(j.get<bool>());
        } else {
          badVerb(verb, &v);
        }
        return;
      case GoKind::kInt:
      case GoKind::kUint: {
        const bool is_signed = !(j.is_number_unsigned() &&
                                 j.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX));
        const std::uint64_t u = j.is_number_unsigned()
                                    ? j.get<std::uint64_t>()
                                    : static_cast<std::uint64_t>(j.get<std::int64_t>());
        printInteger(u, is_signed, verb, &v);
        return;
      }
      case GoKind::kFloat: {
        const double d = j.get<double>();
        switch (verb) {
          case 'v': fmtFloat(d, 'g', -1); break;
          case 'b':
          case 'g':
          case 'G':
          case 'x':
          case 'X': fmtFloat(d, static_cast<char>(verb == 'x' || verb == 'X' || verb == 'b'
                                                      ? 'g'
                                                      : verb),
                             -1);
            break;
          case 'f':
          case 'e':
          case 'E':
          case 'F': fmtFloat(d, static_cast<char>(verb), 6); break;
          default: badVerb(verb, &v);
        }
        return;
      }
      case GoKind::kString: {
        const std::string& s = j.get_ref<const std::string&>();
        switch (verb) {
          case 'v':
            if (f.sharp_v) {
              fmtQ(s);
            } else {
              padString(truncate(s));
            }
            break;
          case 's': padString(truncate(s)); break;
          case 'x': fmtSx(s, false); break;
          case 'X': fmtSx(s, true); break;
          case 'q': fmtQ(s); break;
          default: badVerb(verb, &v);
        }
        return;
      }
      case GoKind::kMap: {
        if (f.sharp_v) {
          buf += v.concreteTypeName();
          buf.push_back('{');
        } else {
          buf += "map[";
        }
        bool first = true;
        for (auto it = j.begin(); it != j.end(); ++it) {
          if (!first) buf += f.sharp_v ? ", " : " ";
          first = false;
          printScalarOrComposite(Value(nlohmann::json(it.key())), verb, depth + 1);
          buf.push_back(':');
          printElement(v.element(it.value()), verb, depth + 1);
        }
        buf.push_back(f.sharp_v ? '}' : ']');
        return;
      }
      case GoKind::kSlice: {
        if (f.sharp_v) {
          buf += v.concreteTypeName();
          buf.push_back('{');
        } else {
          buf.push_back('[');
        }
        bool first = true;
        for (const auto& e : j) {
          if (!first) buf += f.sharp_v ? ", " : " ";
          first = false;
          printElement(v.element(e), verb, depth + 1);
        }
        buf.push_back(f.sharp_v ? '}' : ']');
        return;
      }
    }
  }

  // An element of a map or slice: an interface{} that may be nil.
  void printElement(const Value& e, char32_t verb, int depth) {
    if (e.isNil()) {
      buf += f.sharp_v ? "interface {}(nil)" : "<nil>";
      return;
    }
    if (depth > 1000) {
      buf += "...";
      return;
    }
    printScalarOrComposite(e, verb, depth);
  }

  void printInteger(std::uint64_t u, bool is_signed, char32_t verb, const Value* v) {
    switch (verb) {
      case 'v':
      case 'd': fmtInteger(u, 10, is_signed, verb, false); break;
      case 'b': fmtInteger(u, 2, is_signed, verb, false); break;
      case 'o':
      case 'O': fmtInteger(u, 8, is_signed, verb, false); break;
      case 'x': fmtInteger(u, 16, is_signed, verb, false); break;
      case 'X': fmtInteger(u, 16, is_signed, verb, true); break;
      case 'c': fmtC(u); break;
      case 'q': fmtQc(u); break;
      case 'U': fmtUnicode(u); break;
      default: badVerb(verb, v);
    }
  }
};

// parsenum: digits at s[start:end); an overlong number consumes the rest of the format.
void parseNum(std::string_view s, size_t start, size_t end, int* num, bool* isnum, size_t* newi) {
  *num = 0;
  *isnum = false;
  if (start >= end) {
    *newi = end;
    return;
  }
  size_t i = start;
  long long n = 0;
  for (; i < end && s[i] >= '0' && s[i] <= '9'; ++i) {
    if (tooLarge(n)) {
      *num = 0;
      *isnum = false;
      *newi = end;
      return;
    }
    n = n * 10 + (s[i] - '0');
    *isnum = true;
  }
  *num = static_cast<int>(n);
  *newi = i;
}

bool intFromArg(const std::vector<Value>& a, size_t* arg_num, int* num) {
  bool is_int = false;
  *num = 0;
  if (*arg_num < a.size()) {
    const Value& v = a[*arg_num];
    if (v.valid() && (v.kind() == GoKind::kInt)) {
      const std::int64_t n = v.json().is_number_unsigned()
                                 ? static_cast<std::int64_t>(v.json().get<std::uint64_t>())
                                 : v.json().get<std::int64_t>();
      if (!tooLarge(n)) {
        *num = static_cast<int>(n);
        is_int = true;
      }
    }
    ++*arg_num;
  }
  return is_int;
}

bool isStringArg(const Value& v) { return v.valid() && v.kind() == GoKind::kString; }

}  // namespace

std::string goSprint(const std::vector<Value>& args) {
  Printer p;
  bool prev_string = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const bool is_string = isStringArg(args[i]);
    if (i > 0 && !is_string && !prev_string) p.buf.push_back(' ');
    p.clearFlags();
    p.printArg(args[i], 'v');
    prev_string = is_string;
  }
  return p.buf;
}

std::string goSprintln(const std::vector<Value>& args) {
  Printer p;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i > 0) p.buf.push_back(' ');
    p.clearFlags();
    p.printArg(args[i], 'v');
  }
  p.buf.push_back('\n');
  return p.buf;
}

std::string goPrintValue(const Value& v) { return goSprint({v}); }

std::string goSprintf(std::string_view format, const std::vector<Value>& a) {
  Printer p;
  const size_t end = format.size();
  size_t arg_num = 0;
  bool after_index = false;
  bool reordered = false;
  bool good_arg_num = true;

  auto arg_number = [&](size_t i, size_t* new_i, bool* found) {
    *new_i = i;
    *found = false;
    if (i >= end || format[i] != '[') return;
    reordered = true;
    // parseArgNumber: "[n]" with n 1-based.
    const std::string_view rest = format.substr(i);
    size_t wid = 1;
    bool ok = false;
    int index = 0;
    if (rest.size() >= 3) {
      for (size_t k = 1; k < rest.size(); ++k) {
        if (rest[k] == ']') {
          int n = 0;
          bool isnum = false;
          size_t ni = 0;
          parseNum(rest, 1, k, &n, &isnum, &ni);
          if (!isnum || ni != k) {
            wid = k + 1;
          } else {
            index = n - 1;
            wid = k + 1;
            ok = true;
          }
          break;
        }
      }
    }
    if (ok && index >= 0 && static_cast<size_t>(index) < a.size()) {
      arg_num = static_cast<size_t>(index);
      *new_i = i + wid;
      *found = true;
      return;
    }
    good_arg_num = false;
    *new_i = i + wid;
    *found = ok;
  };

  size_t i = 0;
  while (i < end) {
    good_arg_num = true;
    const size_t lasti = i;
    while (i < end && format[i] != '%') ++i;
    if (i > lasti) p.buf.append(format.substr(lasti, i - lasti));
    if (i >= end) break;
    ++i;  // skip '%'
    p.clearFlags();
    bool simple_done = false;
    for (; i < end; ++i) {
      const char c = format[i];
      if (c == '#') {
        p.f.sharp = true;
      } else if (c == '0') {
        p.f.zero = !p.f.minus;
      } else if (c == '+') {
        p.f.plus = true;
      } else if (c == '-') {
        p.f.minus = true;
        p.f.zero = false;
      } else if (c == ' ') {
        p.f.space = true;
      } else {
        if (c >= 'a' && c <= 'z' && arg_num < a.size()) {
          if (c == 'v') {
            p.f.sharp_v = p.f.sharp;
            p.f.sharp = false;
            p.f.plus_v = p.f.plus;
            p.f.plus = false;
          }
          p.printArg(a[arg_num], static_cast<unsigned char>(c));
          ++arg_num;
          ++i;
          simple_done = true;
        }
        break;
      }
    }
    if (simple_done) continue;

    size_t ni = i;
    arg_number(i, &ni, &after_index);
    i = ni;

    if (i < end && format[i] == '*') {
      ++i;
      int w = 0;
      p.f.wid_present = intFromArg(a, &arg_num, &w);
      p.f.wid = w;
      if (!p.f.wid_present) p.buf += "%!(BADWIDTH)";
      if (p.f.wid < 0) {
        p.f.wid = -p.f.wid;
        p.f.minus = true;
        p.f.zero = false;
      }
      after_index = false;
    } else {
      int w = 0;
      bool present = false;
      parseNum(format, i, end, &w, &present, &ni);
      p.f.wid = w;
      p.f.wid_present = present;
      i = ni;
      if (after_index && p.f.wid_present) good_arg_num = false;
    }

    if (i + 1 < end && format[i] == '.') {
      ++i;
      if (after_index) good_arg_num = false;
      arg_number(i, &ni, &after_index);
      i = ni;
      if (i < end && format[i] == '*') {
        ++i;
        int pr = 0;
        p.f.prec_present = intFromArg(a, &arg_num, &pr);
        p.f.prec = pr;
        if (p.f.prec < 0) {
          p.f.prec = 0;
          p.f.prec_present = false;
        }
        if (!p.f.prec_present) p.buf += "%!(BADPREC)";
        after_index = false;
      } else {
        int pr = 0;
        bool present = false;
        parseNum(format, i, end, &pr, &present, &ni);
        i = ni;
        p.f.prec = present ? pr : 0;
        p.f.prec_present = true;
      }
    }

    if (!after_index) {
      arg_number(i, &ni, &after_index);
      i = ni;
    }

    if (i >= end) {
      p.buf += "%!(NOVERB)";
      break;
    }

    size_t size = 1;
    char32_t verb = static_cast<unsigned char>(format[i]);
    if (verb >= 0x80) {
      const core::Rune r = decodeRune(format, i);
      verb = r.code_point;
      size = r.length;
    }
    i += size;

    if (verb == '%') {
      p.buf.push_back('%');
    } else if (!good_arg_num) {
      p.buf += "%!";
      core::appendUtf8(p.buf, verb);
      p.buf += "(BADINDEX)";
    } else if (arg_num >= a.size()) {
      p.buf += "%!";
      core::appendUtf8(p.buf, verb);
      p.buf += "(MISSING)";
    } else {
      if (verb == 'v') {
        p.f.sharp_v = p.f.sharp;
        p.f.sharp = false;
        p.f.plus_v = p.f.plus;
        p.f.plus = false;
      }
      p.printArg(a[arg_num], verb);
      ++arg_num;
    }
  }

  if (!reordered && arg_num < a.size()) {
    p.clearFlags();
    p.buf += "%!(EXTRA ";
    for (size_t k = arg_num; k < a.size(); ++k) {
      if (k > arg_num) p.buf += ", ";
      const Value& arg = a[k];
      if (!arg.valid() || arg.isNil()) {
        p.buf += "<nil>";
      } else {
        p.buf += arg.concreteTypeName();
        p.buf.push_back('=');
        p.printArg(arg, 'v');
      }
    }
    p.buf.push_back(')');
  }
  return p.buf;
}

}  // namespace harness::gotemplate
