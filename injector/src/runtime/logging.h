#pragma once

// Log output like the real injectors: logrus' text format
//   time="2026-11-22T04:00:00Z" level=info msg="received pod/web-1"
// or its JSON format {"level":"info","msg":"...","time":"..."}.

#include <string>

#include "harness/core/result.h"
#include "harness/injector/log_line.h"

namespace harness::injector {

enum class LogFormat { kPlain, kJson };

// Sets the default spdlog logger: stderr, the given level ("debug", "info", "warn"/"warning",
// "error", "off") and format ("plain" or "json").
core::Result<void> configureLogging(const std::string& level, const std::string& format);

// Prints a profile's log line at its level on the default logger.
void emit(const LogLine& line);

}  // namespace harness::injector
