#pragma once

// A line a real injector would log while handling a request, kept as data by the pure profile
// libraries; the server prints them, the offline command shows them with --explain.

#include <string>

namespace harness::injector {

struct LogLine {
  enum class Level { kDebug, kInfo, kWarning, kError };
  Level level = Level::kInfo;
  std::string message;

  bool operator==(const LogLine&) const = default;
};

}  // namespace harness::injector
