#pragma once

// A line istiod would log while handling an injection request, kept as data.

#include <string_view>

#include "harness/injector/log_line.h"

namespace harness::injector::istio {

using LogLine = harness::injector::LogLine;

// istio log scope level names: "debug", "info", "warn", "error".
std::string_view logLevelName(LogLine::Level level);

}  // namespace harness::injector::istio
