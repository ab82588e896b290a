#pragma once

// What every fuzz target shares: the libFuzzer entry point's signature, splitting one input into
// parts, and failing a checked property loudly (abort, so that libFuzzer saves the input).

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

namespace harness::fuzz {

inline std::string_view asText(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// Splits at the first newline: ("a", "b\nc") for "a\nb\nc"; (text, "") without one. Targets that
// take two documents read compact JSON, one document per line.
inline std::pair<std::string_view, std::string_view> splitFirstLine(std::string_view text) {
  const auto newline = text.find('\n');
  if (newline == std::string_view::npos) return {text, {}};
  return {text.substr(0, newline), text.substr(newline + 1)};
}

// JSON text, or nullopt-like discarded value when it is not JSON (never throws).
inline nlohmann::json parseJsonOrDiscarded(std::string_view text) {
  return nlohmann::json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
}

// A documented property does not hold: print why and abort (libFuzzer saves the input).
[[noreturn]] inline void propertyFailed(const char* file, int line, const char* condition,
                                        const std::string& detail) {
  std::fprintf(stderr, "%s:%d: property violated: %s\n%s\n", file, line, condition,
               detail.c_str());
  std::abort();
}

}  // namespace harness::fuzz

#define FUZZ_CHECK(condition, detail)                                                  \
  do {                                                                                 \
    if (!(condition)) ::harness::fuzz::propertyFailed(__FILE__, __LINE__, #condition, (detail)); \
  } while (false)

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
