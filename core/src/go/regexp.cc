#include "harness/go/regexp.h"

#include <map>
#include <utility>

#include <re2/re2.h>

#include "harness/go/strconv.h"

namespace harness::go {

namespace {

// regexp/syntax ErrorCode texts for RE2's error codes (the two libraries share their parser's
// error taxonomy).
std::string_view errorText(RE2::ErrorCode code) {
  switch (code) {
    case RE2::ErrorBadEscape: return "invalid escape sequence";
    case RE2::ErrorBadCharClass: return "invalid character class";
    case RE2::ErrorBadCharRange: return "invalid character class range";
    case RE2::ErrorMissingBracket: return "missing closing ]";
    case RE2::ErrorMissingParen: return "missing closing )";
    case RE2::ErrorUnexpectedParen: return "unexpected )";
    case RE2::ErrorTrailingBackslash: return "trailing backslash at end of expression";
    case RE2::ErrorRepeatArgument: return "missing argument to repetition operator";
    case RE2::ErrorRepeatSize: return "invalid repeat count";
    case RE2::ErrorRepeatOp: return "invalid nested repetition operator";
    case RE2::ErrorBadPerlOp: return "invalid or unsupported Perl syntax";
    case RE2::ErrorBadUTF8: return "invalid UTF-8";
    case RE2::ErrorBadNamedCapture: return "invalid named capture";
    case RE2::ErrorPatternTooLarge: return "expression too large";
    default: return "internal error";
  }
}

// The length of the UTF-8 sequence at s[i] (1 for a byte that does not start a valid one, as
// utf8.DecodeRuneInString steps), 0 at the end.
std::size_t runeWidth(std::string_view s, std::size_t i) {
  if (i >= s.size()) return 0;
  const auto c = static_cast<unsigned char>(s[i]);
  std::size_t n = 1;
  if (c >= 0xC2 && c <= 0xDF) {
    n = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    n = 3;
  } else if (c >= 0xF0 && c <= 0xF4) {
    n = 4;
  }
  if (i + n > s.size()) return 1;
  for (std::size_t k = 1; k < n; ++k) {
    if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return 1;
  }
  return n;
}

}  // namespace

struct Regexp::Impl {
  explicit Impl(std::string_view pattern, const RE2::Options& options)
      : expr(pattern), re(re2::StringPiece(pattern.data(), pattern.size()), options) {}
  std::string expr;
  RE2 re;
  // A letter, decimal digit or '_' (unicode.IsLetter, unicode.IsDigit): the characters of a
  // $name in a replacement template.
  static const RE2& nameChars() {
    static const RE2 kNameChars("(?:\\pL|\\p{Nd}|_)+");
    return kNameChars;
  }

  // doExecute from `pos`: the match and its groups as offsets (-1 for a group not taking part);
  // empty when there is none. The whole input stays the context, so ^ and \b see what precedes.
  std::vector<std::ptrdiff_t> execute(std::string_view s, std::size_t pos, int groups) const {
    std::vector<re2::StringPiece> sub(static_cast<std::size_t>(groups) + 1);
    const re2::StringPiece text(s.data(), s.size());
    if (!re.Match(text, pos, s.size(), RE2::UNANCHORED, sub.data(), groups + 1)) return {};
    std::vector<std::ptrdiff_t> out;
    out.reserve(sub.size() * 2);
    for (const auto& piece : sub) {
      if (piece.data() == nullptr) {
        out.push_back(-1);
        out.push_back(-1);
      } else {
        out.push_back(piece.data() - s.data());
        out.push_back(piece.data() - s.data() + static_cast<std::ptrdiff_t>(piece.size()));
      }
    }
    return out;
  }

  // allMatches: calls deliver(offsets) for up to n matches.
  template <class Deliver>
  void allMatches(std::string_view s, std::int64_t n, int groups, Deliver deliver) const {
    const std::size_t end = s.size();
    if (n < 0) n = static_cast<std::int64_t>(end) + 1;
    std::ptrdiff_t prev_match_end = -1;
    std::size_t pos = 0;
    for (std::int64_t i = 0; i < n && pos <= end;) {
      const auto m = execute(s, pos, groups);
      if (m.empty()) break;
      bool accept = true;
      if (m[1] == static_cast<std::ptrdiff_t>(pos)) {
        // An empty match: none right after a previous match; then step one rune on.
        if (m[0] == prev_match_end) accept = false;
        const std::size_t width = runeWidth(s, pos);
        pos = width > 0 ? pos + width : end + 1;
      } else {
        pos = static_cast<std::size_t>(m[1]);
      }
      prev_match_end = m[1];
      if (accept) {
        deliver(m);
        ++i;
      }
    }
  }

  // replaceAll with `repl` appending the replacement for one match.
  template <class Repl>
  std::string replaceAll(std::string_view src, int groups, Repl repl) const {
    std::string out;
    std::size_t last_match_end = 0;
    std::size_t search_pos = 0;
    while (search_pos <= src.size()) {
      const auto a = execute(src, search_pos, groups);
      if (a.empty()) break;
      const auto a0 = static_cast<std::size_t>(a[0]);
      const auto a1 = static_cast<std::size_t>(a[1]);
      out.append(src.substr(last_match_end, a0 - last_match_end));
      // No replacement for an empty match right after another match.
      if (a1 > last_match_end || a0 == 0) repl(out, a);
      last_match_end = a1;
      const std::size_t width = runeWidth(src, search_pos);
      if (search_pos + width > a1) {
        search_pos += width;
      } else if (search_pos + 1 > a1) {
        ++search_pos;  // only at the end of the input, where the width is 0
      } else {
        search_pos = a1;
      }
    }
    out.append(src.substr(last_match_end));
    return out;
  }

  // expand: the $-template for one match.
  void expand(std::string& dst, std::string_view tmpl, std::string_view src,
              const std::vector<std::ptrdiff_t>& match) const {
    const std::map<int, std::string>& names = re.CapturingGroupNames();
    auto group = [&](int i) {
      const auto k = 2 * static_cast<std::size_t>(i);
      if (k + 1 < match.size() && match[k] >= 0) {
        dst.append(src.substr(static_cast<std::size_t>(match[k]),
                              static_cast<std::size_t>(match[k + 1] - match[k])));
      }
    };
    while (!tmpl.empty()) {
      const std::size_t dollar = tmpl.find('$');
      if (dollar == std::string_view::npos) break;
      dst.append(tmpl.substr(0, dollar));
      tmpl.remove_prefix(dollar + 1);
      if (!tmpl.empty() && tmpl[0] == '$') {
        dst.push_back('$');
        tmpl.remove_prefix(1);
        continue;
      }
      // extract(): a name of letters, digits and '_', in braces or not.
      std::string_view rest = tmpl;
      const bool brace = !rest.empty() && rest[0] == '{';
      if (brace) rest.remove_prefix(1);
      re2::StringPiece name_piece;
      const re2::StringPiece rest_piece(rest.data(), rest.size());
      if (!nameChars().Match(rest_piece, 0, rest.size(), RE2::ANCHOR_START, &name_piece, 1)) {
        dst.push_back('$');  // malformed: the '$' is text
        continue;
      }
      const std::string_view name(name_piece.data(), name_piece.size());
      std::size_t used = name.size();
      if (brace) {
        if (used >= rest.size() || rest[used] != '}') {
          dst.push_back('$');
          continue;
        }
        ++used;
      }
      int num = 0;
      for (const char c : name) {
        if (c < '0' || c > '9' || num >= 100000000) {
          num = -1;
          break;
        }
        num = num * 10 + (c - '0');
      }
      if (name[0] == '0' && name.size() > 1) num = -1;  // no leading zeros
      tmpl = rest.substr(used);
      if (num >= 0) {
        group(num);
      } else {
        for (const auto& [index, group_name] : names) {
          if (group_name == name) {
            group(index);
            break;
          }
        }
      }
    }
    dst.append(tmpl);
  }
};

Regexp::Regexp(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Regexp::Regexp(Regexp&&) noexcept = default;
Regexp& Regexp::operator=(Regexp&&) noexcept = default;
Regexp::~Regexp() = default;

core::Result<Regexp> Regexp::compile(std::string_view expr) {
  RE2::Options options;  // Perl-like (Go) syntax, UTF-8, leftmost-first, '.' without '\n'
  options.set_log_errors(false);
  auto impl = std::make_unique<Impl>(expr, options);
  if (!impl->re.ok()) {
    return core::Error{"error parsing regexp: " + std::string(errorText(impl->re.error_code())) +
                       ": `" + impl->re.error_arg() + "`"};
  }
  return Regexp(std::move(impl));
}

const std::string& Regexp::expr() const { return impl_->expr; }

bool Regexp::matchString(std::string_view s) const {
  return impl_->re.Match(re2::StringPiece(s.data(), s.size()), 0, s.size(), RE2::UNANCHORED,
                         nullptr, 0);
}

std::string Regexp::findString(std::string_view s) const {
  const auto m = impl_->execute(s, 0, 0);
  if (m.empty()) return {};
  return std::string(
      s.substr(static_cast<std::size_t>(m[0]), static_cast<std::size_t>(m[1] - m[0])));
}

std::vector<std::string> Regexp::findStringSubmatch(std::string_view s) const {
  const int groups = impl_->re.NumberOfCapturingGroups();
  const auto m = impl_->execute(s, 0, groups);
  std::vector<std::string> out;
  for (std::size_t k = 0; k + 1 < m.size(); k += 2) {
    out.emplace_back(m[k] < 0 ? std::string_view()
                              : s.substr(static_cast<std::size_t>(m[k]),
                                         static_cast<std::size_t>(m[k + 1] - m[k])));
  }
  return out;
}

std::vector<std::string> Regexp::findAllString(std::string_view s, std::int64_t n) const {
  std::vector<std::string> out;
  impl_->allMatches(s, n, 0, [&](const std::vector<std::ptrdiff_t>& m) {
    out.emplace_back(
        s.substr(static_cast<std::size_t>(m[0]), static_cast<std::size_t>(m[1] - m[0])));
  });
  return out;
}

std::string Regexp::replaceAllString(std::string_view s, std::string_view repl) const {
  // Go captures groups only when the template has a '$'.
  const int groups =
      repl.find('$') == std::string_view::npos ? 0 : impl_->re.NumberOfCapturingGroups();
  return impl_->replaceAll(s, groups, [&](std::string& dst, const std::vector<std::ptrdiff_t>& m) {
    impl_->expand(dst, repl, s, m);
  });
}

std::string Regexp::replaceAllLiteralString(std::string_view s, std::string_view repl) const {
  return impl_->replaceAll(
      s, 0, [&](std::string& dst, const std::vector<std::ptrdiff_t>&) { dst.append(repl); });
}

std::vector<std::string> Regexp::split(std::string_view s, std::int64_t n) const {
  std::vector<std::string> out;
  if (n == 0) return out;
  if (!impl_->expr.empty() && s.empty()) return {std::string()};
  std::size_t beg = 0;
  std::size_t end = 0;
  bool stop = false;
  impl_->allMatches(s, n, 0, [&](const std::vector<std::ptrdiff_t>& m) {
    if (stop) return;
    if (n > 0 && static_cast<std::int64_t>(out.size()) == n - 1) {
      stop = true;
      return;
    }
    end = static_cast<std::size_t>(m[0]);
    if (m[1] != 0) out.emplace_back(s.substr(beg, end - beg));
    beg = static_cast<std::size_t>(m[1]);
  });
  if (end != s.size()) out.emplace_back(s.substr(beg));
  return out;
}

std::string mustCompilePanic(std::string_view expr, const core::Error& error) {
  // strconv.CanBackquote: no '`', no control character but tab, valid UTF-8, no U+FEFF.
  bool can_backquote = true;
  for (std::size_t i = 0; i < expr.size() && can_backquote;) {
    const auto c = static_cast<unsigned char>(expr[i]);
    if (c == '`' || c == 0x7F || (c < 0x20 && c != '\t')) can_backquote = false;
    const std::size_t width = c < 0x80 ? 1 : runeWidth(expr, i);
    if (c >= 0x80 && width == 1) can_backquote = false;  // not UTF-8
    if (expr.substr(i, width) == "\xEF\xBB\xBF") can_backquote = false;
    i += width;
  }
  const std::string quoted = can_backquote ? "`" + std::string(expr) + "`" : quote(expr);
  return "regexp: Compile(" + quoted + "): " + error.message;
}

}  // namespace harness::go
