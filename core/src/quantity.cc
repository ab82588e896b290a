#include "harness/core/quantity.h"

#include "harness/go/strconv.h"

#include <limits>
#include <string>
#include <utility>


// Followed: k8s.io/apimachinery/pkg/api/resource/quantity.go (ParseQuantity,
// parseQuantityString, RoundUp, AsInt64), suffix.go (quantitySuffixer.interpret),
// amount.go (negativeScaleInt64: rounding away from zero) and gopkg.in/inf.v0 (Dec.SetString).

namespace harness::core {

namespace {

const char kFormatInvalid[] =
    "quantities must match the regular expression "
    "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
// apimachinery's ErrNumeric ("unable to parse numeric part of quantity") cannot happen for
// strings that pass parseQuantityString: the int64 fast path handles every digit-less value.
const char kSuffix[] = "unable to parse quantity's suffix";

bool isDigit(char c) { return c >= '0' && c <= '9'; }

struct QuantityString {
  bool positive = true;
  std::string_view value;
  std::string_view num;
  std::string_view denom;
  std::string_view suffix;
};

// parseQuantityString: sign, numerator (leading zeros stripped), optional '.' denominator,
// then the suffix characters [eEinumkKMGTP]* optionally followed by a signed integer.
Result<QuantityString> splitQuantity(std::string_view str) {
  QuantityString out;
  size_t pos = 0;
  const size_t end = str.size();
  if (pos < end) {
    if (str[0] == '-') {
      out.positive = false;
      ++pos;
    } else if (str[0] == '+') {
      ++pos;
    }
  }
  // strip leading zeros
  for (size_t i = pos;; ++i) {
    if (i >= end) {
      out.num = "0";
      out.value = out.num;
      return out;
    }
    if (str[i] != '0') break;
    ++pos;
  }
  // numerator
  for (size_t i = pos;; ++i) {
    if (i >= end) {
      out.num = str.substr(pos, end - pos);
      out.value = str.substr(0, end);
      return out;
    }
    if (!isDigit(str[i])) {
      out.num = str.substr(pos, i - pos);
      pos = i;
      break;
    }
  }
  if (out.num.empty()) out.num = "0";
  // denominator
  if (pos < end && str[pos] == '.') {
    ++pos;
    for (size_t i = pos;; ++i) {
      if (i >= end) {
        out.denom = str.substr(pos, end - pos);
        out.value = str.substr(0, end);
        return out;
      }
      if (!isDigit(str[i])) {
        out.denom = str.substr(pos, i - pos);
        pos = i;
        break;
      }
    }
  }
  out.value = str.substr(0, pos);
  const size_t suffix_start = pos;
  for (size_t i = pos;; ++i) {
    if (i >= end) {
      out.suffix = str.substr(suffix_start, end - suffix_start);
      return out;
    }
    if (std::string_view("eEinumkKMGTP").find(str[i]) == std::string_view::npos) {
      pos = i;
      break;
    }
  }
  if (pos < end && (str[pos] == '-' || str[pos] == '+')) ++pos;
  for (size_t i = pos;; ++i) {
    if (i >= end) {
      out.suffix = str.substr(suffix_start, end - suffix_start);
      return out;
    }
    if (!isDigit(str[i])) break;
  }
  return Error{kFormatInvalid};
}

struct Suffix {
  int base = 10;
  std::int32_t exponent = 0;
  Quantity::Format format = Quantity::Format::kDecimalSI;
};

std::optional<Suffix> interpretSuffix(std::string_view s) {
  using F = Quantity::Format;
  struct Entry {
    std::string_view name;
    int base;
    std::int32_t exponent;
    F format;
  };
  static constexpr Entry kTable[] = {
      {"n", 10, -9, F::kDecimalSI}, {"u", 10, -6, F::kDecimalSI}, {"m", 10, -3, F::kDecimalSI},
      {"", 10, 0, F::kDecimalSI},   {"k", 10, 3, F::kDecimalSI},  {"M", 10, 6, F::kDecimalSI},
      {"G", 10, 9, F::kDecimalSI},  {"T", 10, 12, F::kDecimalSI}, {"P", 10, 15, F::kDecimalSI},
      {"E", 10, 18, F::kDecimalSI}, {"Ki", 2, 10, F::kBinarySI},  {"Mi", 2, 20, F::kBinarySI},
      {"Gi", 2, 30, F::kBinarySI},  {"Ti", 2, 40, F::kBinarySI},  {"Pi", 2, 50, F::kBinarySI},
      {"Ei", 2, 60, F::kBinarySI},
  };
  for (const auto& e : kTable) {
    if (e.name == s) return Suffix{e.base, e.exponent, e.format};
  }
  if (s.size() > 1 && (s[0] == 'E' || s[0] == 'e')) {
    auto parsed = go::parseInt(s.substr(1), 10, 64);
    if (!parsed.ok()) return std::nullopt;
    // Go: int32(parsed) keeps the low 32 bits.
    const auto low = static_cast<std::uint32_t>(static_cast<std::uint64_t>(*parsed));
    return Suffix{10, static_cast<std::int32_t>(low), F::kDecimalExponent};
  }
  return std::nullopt;
}

std::string stripLeadingZeros(const std::string& s) {
  const size_t first = s.find_first_not_of('0');
  if (first == std::string::npos) return "0";
  return s.substr(first);
}

std::string doubled(const std::string& digits) {
  std::string out(digits.size() + 1, '0');
  int carry = 0;
  for (size_t i = digits.size(); i-- > 0;) {
    const int v = (digits[i] - '0') * 2 + carry;
    out[i + 1] = static_cast<char>('0' + v % 10);
    carry = v / 10;
  }
  out[0] = static_cast<char>('0' + carry);
  return stripLeadingZeros(out);
}

std::string incremented(const std::string& digits) {
  std::string out = digits;
  for (size_t i = out.size(); i-- > 0;) {
    if (out[i] == '9') {
      out[i] = '0';
    } else {
      ++out[i];
      return out;
    }
  }
  return "1" + out;
}

// Compares two digit strings without leading zeros.
int compareMagnitude(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return a.size() < b.size() ? -1 : 1;
  return a.compare(b) < 0 ? -1 : (a == b ? 0 : 1);
}

// The integer part of digits * 10^exponent (capped at 21 digits, enough for int64 checks) and
// whether a non-zero fraction remains.
std::pair<std::string, bool> splitAtPoint(const std::string& digits, std::int64_t exponent) {
  if (digits == "0") return {"0", false};
  if (exponent >= 0) {
    if (static_cast<std::int64_t>(digits.size()) + exponent > 21) {
      return {std::string(21, '9'), false};
    }
    return {digits + std::string(static_cast<size_t>(exponent), '0'), false};
  }
  const std::int64_t k = -exponent;
  if (k >= static_cast<std::int64_t>(digits.size())) return {"0", true};
  const size_t keep = digits.size() - static_cast<size_t>(k);
  return {stripLeadingZeros(digits.substr(0, keep)),
          digits.find_first_not_of('0', keep) != std::string::npos};
}

constexpr char kMaxInt64[] = "9223372036854775807";
constexpr char kMinInt64Magnitude[] = "9223372036854775808";

}  // namespace

Result<Quantity> Quantity::parse(std::string_view text) {
  if (text.empty()) return Error{kFormatInvalid};
  Quantity q;
  if (text == "0") return q;
  auto split = splitQuantity(text);
  if (!split.ok()) return split.error();
  const auto suffix = interpretSuffix(split->suffix);
  if (!suffix) return Error{kSuffix};
  q.negative_ = !split->positive;
  q.format_ = suffix->format;
  std::string digits = stripLeadingZeros(std::string(split->num) + std::string(split->denom));
  std::int64_t exponent = -static_cast<std::int64_t>(split->denom.size());
  if (suffix->base == 10) {
    exponent += suffix->exponent;
  } else {
    for (int i = 0; i < suffix->exponent; ++i) digits = doubled(digits);
    // BinarySI amounts are capped at the largest int64 (maxAllowed).
    const auto [whole, fraction] = splitAtPoint(digits, exponent);
    const int cmp = compareMagnitude(whole, kMaxInt64);
    if (cmp > 0 || (cmp == 0 && fraction)) {
      digits = kMaxInt64;
      exponent = 0;
    }
  }
  // Non-zero values are rounded up (away from zero) to a whole number of nano-units.
  if (digits != "0" && exponent < -9) {
    const std::int64_t drop = -9 - exponent;
    if (drop >= static_cast<std::int64_t>(digits.size())) {
      digits = "1";
    } else {
      const size_t keep = digits.size() - static_cast<size_t>(drop);
      const bool fraction = digits.find_first_not_of('0', keep) != std::string::npos;
      std::string head = stripLeadingZeros(digits.substr(0, keep));
      digits = fraction ? incremented(head) : head;
      if (digits == "0" && fraction) digits = "1";
    }
    exponent = -9;
  }
  if (digits == "0") {
    q.negative_ = false;
    exponent = 0;
  }
  if (q.format_ == Format::kBinarySI && digits != "0" && exponent < 0) {
    // 0 < value < 1 would need a binary fraction: apimachinery switches to DecimalSI.
    const bool below_one = static_cast<std::int64_t>(digits.size()) <= -exponent;
    if (below_one) q.format_ = Format::kDecimalSI;
  }
  q.digits_ = std::move(digits);
  q.exponent_ = exponent;
  return q;
}

std::optional<std::int64_t> Quantity::roundedUp(int scale) const {
  if (digits_ == "0") return 0;
  auto [magnitude, fraction] = splitAtPoint(digits_, exponent_ - scale);
  if (fraction) magnitude = incremented(magnitude);
  const char* limit = negative_ ? kMinInt64Magnitude : kMaxInt64;
  if (compareMagnitude(magnitude, limit) > 0) return std::nullopt;
  if (negative_ && magnitude == kMinInt64Magnitude) {
    return std::numeric_limits<std::int64_t>::min();
  }
  const std::int64_t v = std::stoll(magnitude);
  return negative_ ? -v : v;
}

}  // namespace harness::core
