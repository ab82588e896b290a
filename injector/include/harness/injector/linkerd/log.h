#pragma once

// A log line the real proxy injector prints (logrus), kept as data.

#include <string_view>

#include "harness/injector/log_line.h"

namespace harness::injector::linkerd {

using LogLine = harness::injector::LogLine;

// logrus level names: "debug", "info", "warning", "error".
std::string_view logLevelName(LogLine::Level level);

}  // namespace harness::injector::linkerd
