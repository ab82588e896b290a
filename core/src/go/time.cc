#include "harness/go/time.h"

#include <cstdint>
#include <string>

namespace harness::go {

std::string timeQuote(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "\"";
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x80 || c < ' ') {
      out += "\\x";
      out.push_back(kHex[c >> 4]);
      out.push_back(kHex[c & 0xF]);
    } else {
      if (c == '"' || c == '\\') out.push_back('\\');
      out.push_back(static_cast<char>(c));
    }
  }
  out.push_back('"');
  return out;
}

namespace {

// time.ParseDuration's errors: "time: <text>", with the text (without Go's package prefix) as
// the detail.
core::Error durationError(std::string text) {
  return core::makeError(std::move(text), core::ErrorCode::kDecode).within("time");
}

}  // namespace

core::Result<std::int64_t> parseDuration(std::string_view s) {
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 63;
  const std::string_view orig = s;
  auto invalid = [&] { return durationError("invalid duration " + timeQuote(orig)); };
  std::uint64_t d = 0;
  bool neg = false;
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) {
    neg = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s == "0") return std::int64_t{0};
  if (s.empty()) return invalid();
  while (!s.empty()) {
    std::uint64_t v = 0;
    std::uint64_t f = 0;
    double scale = 1;
    if (s[0] != '.' && (s[0] < '0' || s[0] > '9')) return invalid();
    // leadingInt
    const size_t pl = s.size();
    {
      size_t i = 0;
      for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
        if (v > kLimit / 10) return invalid();
        v = v * 10 + static_cast<std::uint64_t>(s[i] - '0');
        if (v > kLimit) return invalid();
      }
      s.remove_prefix(i);
    }
    const bool pre = pl != s.size();
    bool post = false;
    if (!s.empty() && s[0] == '.') {
      s.remove_prefix(1);
      const size_t fl = s.size();
      // leadingFraction: stops accumulating precision on overflow.
      size_t i = 0;
      bool overflow = false;
      for (; i < s.size() && s[i] >= '0' && s[i] <= '9'; ++i) {
        if (overflow) continue;
        if (f > (kLimit - 1) / 10) {
          overflow = true;
          continue;
        }
        const std::uint64_t y = f * 10 + static_cast<std::uint64_t>(s[i] - '0');
        if (y > kLimit) {
          overflow = true;
          continue;
        }
        f = y;
        scale *= 10;
      }
      s.remove_prefix(i);
      post = fl != s.size();
    }
    if (!pre && !post) return invalid();
    size_t i = 0;
    for (; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '.' || (c >= '0' && c <= '9')) break;
    }
    if (i == 0) return durationError("missing unit in duration " + timeQuote(orig));
    const std::string_view u = s.substr(0, i);
    s.remove_prefix(i);
    std::uint64_t unit = 0;
    if (u == "ns") {
      unit = 1;
    } else if (u == "us" || u == "\xC2\xB5s" || u == "\xCE\xBCs") {
      unit = 1000;
    } else if (u == "ms") {
      unit = 1000000;
    } else if (u == "s") {
      unit = 1000000000;
    } else if (u == "m") {
      unit = 60ULL * 1000000000;
    } else if (u == "h") {
      unit = 3600ULL * 1000000000;
    } else {
      return durationError("unknown unit " + timeQuote(u) + " in duration " + timeQuote(orig));
    }
    if (v > kLimit / unit) return invalid();
    v *= unit;
    if (f > 0) {
      v += static_cast<std::uint64_t>(static_cast<double>(f) * (static_cast<double>(unit) / scale));
      if (v > kLimit) return invalid();
    }
    d += v;
    if (d > kLimit) return invalid();
  }
  if (neg) return static_cast<std::int64_t>(~d + 1);
  if (d > kLimit - 1) return invalid();
  return static_cast<std::int64_t>(d);
}

double durationSeconds(std::int64_t nanoseconds) {
  const std::int64_t sec = nanoseconds / 1000000000;
  const std::int64_t nsec = nanoseconds % 1000000000;
  return static_cast<double>(sec) + static_cast<double>(nsec) / 1e9;
}

std::string durationString(std::chrono::seconds seconds) {
  // Duration.String prints hours and minutes only when they are non-zero, then always seconds.
  const auto total = seconds.count();
  if (total == 0) return "0s";
  std::string out = total < 0 ? "-" : "";
  const auto abs = total < 0 ? -total : total;
  const auto hours = abs / 3600;
  const auto minutes = (abs % 3600) / 60;
  const auto secs = abs % 60;
  if (hours > 0) return out + std::to_string(hours) + "h" + std::to_string(minutes) + "m" + std::to_string(secs) + "s";
  if (minutes > 0) return out + std::to_string(minutes) + "m" + std::to_string(secs) + "s";
  return out + std::to_string(secs) + "s";
}

}  // namespace harness::go
