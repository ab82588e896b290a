#pragma once

// A log line the real proxy injector prints (logrus), kept as data.

#include <string>
#include <string_view>

namespace harness::injector::linkerd {

struct LogLine {
  enum class Level { kDebug, kInfo, kWarning, kError };
  Level level = Level::kInfo;
  std::string message;

  bool operator==(const LogLine&) const = default;
};

// logrus level names: "debug", "info", "warning", "error".
std::string_view logLevelName(LogLine::Level level);

}  // namespace harness::injector::linkerd
