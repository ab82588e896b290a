#pragma once

// A line istiod would log while handling an injection request, kept as data.

#include <string>
#include <string_view>

namespace harness::injector::istio {

struct LogLine {
  enum class Level { kDebug, kInfo, kWarning, kError };
  Level level = Level::kInfo;
  std::string message;

  bool operator==(const LogLine&) const = default;
};

// istio log scope level names: "debug", "info", "warn", "error".
std::string_view logLevelName(LogLine::Level level);

}  // namespace harness::injector::istio
