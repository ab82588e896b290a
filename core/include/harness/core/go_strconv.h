#pragma once

// Go's number and duration parsing, with Go's exact accepted syntax and error texts.
// Followed: go/src/strconv/atoi.go (ParseUint, ParseInt, Atoi, underscoreOK),
// strconv/atob.go (ParseBool), strconv/atof.go (readFloat, special, ParseFloat),
// strconv/ftoa.go (FormatFloat 'g' with precision -1), time/format.go (ParseDuration, quote)
// and time/time.go (Duration.Seconds).

#include <cstdint>
#include <string>
#include <string_view>

#include "harness/core/result.h"

namespace harness::core {

// strconv.ParseBool: "1", "t", "T", "TRUE", "true", "True" and their false counterparts.
// Error: `strconv.ParseBool: parsing "x": invalid syntax`.
Result<bool> goParseBool(std::string_view s);

// strconv.ParseUint(s, base, bitSize). base 0 selects the base from the prefix (0b, 0o, 0x,
// leading 0) and allows '_' separators; bit_size 0 means 64.
Result<std::uint64_t> goParseUint(std::string_view s, int base, int bit_size);

// strconv.ParseInt(s, base, bitSize), same conventions as goParseUint plus a leading sign.
Result<std::int64_t> goParseInt(std::string_view s, int base, int bit_size);

// Why strconv.ParseUint / ParseInt failed: NumError.Err (ErrSyntax, ErrRange) or a bad base or
// bit size argument. For callers that branch on the reason and need no message, like go-yaml's
// resolver, which treats an out-of-range integer differently from a non-integer.
enum class GoNumError { kNone, kSyntax, kRange, kBase, kBitSize };

// goParseUint without the message. On kRange, value is the largest value of bit_size bits, as
// Go returns it; on other errors it is 0.
struct GoUintParse {
  std::uint64_t value = 0;
  GoNumError error = GoNumError::kNone;
};
GoUintParse goParseUintDetailed(std::string_view s, int base, int bit_size);

// goParseInt without the message. On kRange, value is the bound nearest to the input, as Go
// returns it; on other errors it is 0.
struct GoIntParse {
  std::int64_t value = 0;
  GoNumError error = GoNumError::kNone;
};
GoIntParse goParseIntDetailed(std::string_view s, int base, int bit_size);

// strconv.Atoi (errors name "Atoi").
Result<std::int64_t> goAtoi(std::string_view s);

// strconv.ParseFloat(s, 64): decimal and hexadecimal (0x..p..) literals, '_' separators where
// Go allows them, "inf"/"infinity"/"nan" in any case. Overflow is an error
// (`strconv.ParseFloat: parsing "1e400": value out of range`); underflow rounds to 0 without one.
Result<double> goParseFloat(std::string_view s);

// strconv.FormatFloat(v, 'g', -1, 64): the shortest digits that round-trip, in %e form when
// the decimal exponent is < -4 or >= 6 ("1e+06", "100000", "1e-05", "0.0001", "0.1", "NaN",
// "+Inf", "-Inf").
std::string goFormatFloat(double v);

// time.ParseDuration, returning nanoseconds. Accepts "[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+" with the
// units ns, us, µs, μs, ms, s, m, h, and the bare "0". Errors are Go's
// (`time: invalid duration "x"`, `time: missing unit in duration "1"`,
// `time: unknown unit "x" in duration "1x"`), code kDecode, with the text after Go's "time: " as
// the detail.
Result<std::int64_t> goParseDuration(std::string_view s);

// time.Duration.Seconds(): whole seconds plus the nanosecond remainder as a float64.
double goDurationSeconds(std::int64_t nanoseconds);

// time's own quote(): '"' + s + '"' with '"' and '\' escaped and every byte outside
// printable ASCII written as \xNN (used in duration errors).
std::string goTimeQuote(std::string_view s);

}  // namespace harness::core
