#pragma once

// Go's strconv package: number parsing and formatting and Quote, with Go's exact accepted syntax
// and error texts. Followed: go/src/strconv/atoi.go (ParseUint, ParseInt, Atoi, underscoreOK),
// strconv/atob.go (ParseBool), strconv/atof.go (readFloat, special, ParseFloat),
// strconv/ftoa.go (FormatFloat 'g' with precision -1) and strconv/quote.go (Quote).
//
// Exact Go behaviour lives in harness/go/ (one header per Go package emulated: strconv, time,
// fmt, strings, encoding/base64, encoding/json); Kubernetes' apimachinery validation helpers
// live in harness/validation/.

#include <cstdint>
#include <string>
#include <string_view>

#include "harness/core/result.h"

namespace harness::go {

// strconv.ParseBool: "1", "t", "T", "TRUE", "true", "True" and their false counterparts.
// Error: `strconv.ParseBool: parsing "x": invalid syntax`.
core::Result<bool> parseBool(std::string_view s);

// strconv.ParseUint(s, base, bitSize). base 0 selects the base from the prefix (0b, 0o, 0x,
// leading 0) and allows '_' separators; bit_size 0 means 64.
core::Result<std::uint64_t> parseUint(std::string_view s, int base, int bit_size);

// strconv.ParseInt(s, base, bitSize), same conventions as parseUint plus a leading sign.
core::Result<std::int64_t> parseInt(std::string_view s, int base, int bit_size);

// Why strconv.ParseUint / ParseInt failed: NumError.Err (ErrSyntax, ErrRange) or a bad base or
// bit size argument. For callers that branch on the reason and need no message, like go-yaml's
// resolver, which treats an out-of-range integer differently from a non-integer.
enum class NumError { kNone, kSyntax, kRange, kBase, kBitSize };

// parseUint without the message. On kRange, value is the largest value of bit_size bits, as
// Go returns it; on other errors it is 0.
struct UintParse {
  std::uint64_t value = 0;
  NumError error = NumError::kNone;
};
UintParse parseUintDetailed(std::string_view s, int base, int bit_size);

// parseInt without the message. On kRange, value is the bound nearest to the input, as Go
// returns it; on other errors it is 0.
struct IntParse {
  std::int64_t value = 0;
  NumError error = NumError::kNone;
};
IntParse parseIntDetailed(std::string_view s, int base, int bit_size);

// strconv.Atoi (errors name "Atoi").
core::Result<std::int64_t> atoi(std::string_view s);

// strconv.ParseFloat(s, 64): decimal and hexadecimal (0x..p..) literals, '_' separators where
// Go allows them, "inf"/"infinity"/"nan" in any case. Overflow is an error
// (`strconv.ParseFloat: parsing "1e400": value out of range`); underflow rounds to 0 without one.
core::Result<double> parseFloat(std::string_view s);

// strconv.FormatFloat(v, 'g', -1, 64): the shortest digits that round-trip, in %e form when
// the decimal exponent is < -4 or >= 6 ("1e+06", "100000", "1e-05", "0.0001", "0.1", "NaN",
// "+Inf", "-Inf").
std::string formatFloat(double v);

// strconv.Quote (fmt's %q of a string): Go escapes (\a \b \f \n \r \t \v \" \\), \xNN for other
// control bytes and for bytes that are not UTF-8.
std::string quote(std::string_view s);

}  // namespace harness::go
