#pragma once

// Kubernetes resource.Quantity parsing with the exact accepted syntax and error texts of
// k8s.io/apimachinery/pkg/api/resource (quantity.go ParseQuantity/parseQuantityString,
// suffix.go interpret). The value is kept exactly (a decimal digit string and a power of ten),
// so rounding questions are answered without floating point.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "harness/core/result.h"

namespace harness::core {

class Quantity {
 public:
  enum class Format { kDecimalExponent, kBinarySI, kDecimalSI };

  // resource.ParseQuantity. Errors carry apimachinery's messages:
  //   "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
  //   "unable to parse quantity's suffix" (ErrNumeric cannot occur for strings that pass the
  //   syntax check).
  // Quirks kept: "+", "-" and "." parse as zero; "1." is accepted; an exponent suffix is
  // truncated to int32 like Go's int32(parsed).
  static Result<Quantity> parse(std::string_view text);

  [[nodiscard]] Format format() const { return format_; }
  [[nodiscard]] bool isZero() const { return digits_ == "0"; }
  [[nodiscard]] int sign() const { return isZero() ? 0 : (negative_ ? -1 : 1); }

  // q * 1000 like Quantity.MilliValue: a fraction of a milli-unit rounds away from zero
  // ("1.0001m" -> 2). nullopt when it does not fit in an int64.
  [[nodiscard]] std::optional<std::int64_t> milliValue() const { return roundedUp(-3); }

  // The value rounded away from zero to a multiple of 10^scale, in units of 10^scale
  // (Quantity.RoundUp(scale) followed by AsInt64 on the scaled amount). roundedUp(0) is the
  // whole-unit value: "1001m" -> 2, "-0.5" -> -1. nullopt when it does not fit in an int64.
  [[nodiscard]] std::optional<std::int64_t> roundedUp(int scale) const;

 private:
  bool negative_ = false;
  std::string digits_ = "0";   // magnitude without leading zeros ("0" for zero)
  std::int64_t exponent_ = 0;  // value = digits_ * 10^exponent_
  Format format_ = Format::kDecimalSI;
};

}  // namespace harness::core
