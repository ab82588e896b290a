#pragma once

// Go's time package: Duration parsing and printing, with Go's exact syntax and error texts.
// Followed: go/src/time/format.go (ParseDuration, quote) and time/time.go (Duration.String,
// Duration.Seconds).

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

#include "harness/core/result.h"

namespace harness::go {

// time.ParseDuration, returning nanoseconds. Accepts "[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+" with the
// units ns, us, µs, μs, ms, s, m, h, and the bare "0". Errors are Go's
// (`time: invalid duration "x"`, `time: missing unit in duration "1"`,
// `time: unknown unit "x" in duration "1x"`), code kDecode, with the text after Go's "time: " as
// the detail.
core::Result<std::int64_t> parseDuration(std::string_view s);

// time.Duration.Seconds(): whole seconds plus the nanosecond remainder as a float64.
double durationSeconds(std::int64_t nanoseconds);

// time's own quote(): '"' + s + '"' with '"' and '\' escaped and every byte outside
// printable ASCII written as \xNN (used in duration errors).
std::string timeQuote(std::string_view s);

// time.Duration.String() for a whole number of seconds ("0s", "10s", "1m0s", "1h0m0s").
std::string durationString(std::chrono::seconds seconds);

}  // namespace harness::go
