#include "logging.h"

#include <ctime>
#include <memory>

#include <nlohmann/json.hpp>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace harness::injector {

namespace {

std::string logrusLevel(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace: return "trace";
    case spdlog::level::debug: return "debug";
    case spdlog::level::info: return "info";
    case spdlog::level::warn: return "warning";
    case spdlog::level::err: return "error";
    case spdlog::level::critical: return "fatal";
    default: return "info";
  }
}

std::string rfc3339(spdlog::log_clock::time_point tp) {
  const std::time_t t = spdlog::log_clock::to_time_t(tp);
  struct tm tm {};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// logrus TextFormatter quoting: values with spaces or quotes are written as Go %q strings.
std::string quoted(std::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out.push_back('\\');
      out.push_back(c);
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out + "\"";
}

class LogrusFormatter final : public spdlog::formatter {
 public:
  explicit LogrusFormatter(LogFormat format) : format_(format) {}
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    const std::string_view text(msg.payload.data(), msg.payload.size());
    std::string line;
    if (format_ == LogFormat::kJson) {
      nlohmann::ordered_json j;
      j["level"] = logrusLevel(msg.level);
      j["msg"] = std::string(text);
      j["time"] = rfc3339(msg.time);
      line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    } else {
      line = "time=\"" + rfc3339(msg.time) + "\" level=" + logrusLevel(msg.level) +
             " msg=" + quoted(text);
    }
    line.push_back('\n');
    dest.append(line.data(), line.data() + line.size());
  }
  [[nodiscard]] std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<LogrusFormatter>(format_);
  }

 private:
  LogFormat format_;
};

}  // namespace

core::Result<void> configureLogging(const std::string& level, const std::string& format) {
  LogFormat f;
  if (format == "plain" || format == "text") {
    f = LogFormat::kPlain;
  } else if (format == "json") {
    f = LogFormat::kJson;
  } else {
    return core::makeError("--log-format: unknown format \"" + format +
                           "\" (expected plain or json)");
  }
  spdlog::level::level_enum l;
  if (level == "trace") {
    l = spdlog::level::trace;
  } else if (level == "debug") {
    l = spdlog::level::debug;
  } else if (level == "info") {
    l = spdlog::level::info;
  } else if (level == "warn" || level == "warning") {
    l = spdlog::level::warn;
  } else if (level == "error") {
    l = spdlog::level::err;
  } else if (level == "off" || level == "panic") {
    l = spdlog::level::off;
  } else {
    return core::makeError("--log-level: unknown level \"" + level +
                           "\" (expected debug, info, warn, error or off)");
  }
  auto logger = std::make_shared<spdlog::logger>("injector",
                                                 std::make_shared<spdlog::sinks::stderr_sink_mt>());
  logger->set_formatter(std::make_unique<LogrusFormatter>(f));
  logger->set_level(l);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);
  return {};
}

void emit(const LogLine& line) {
  switch (line.level) {
    case LogLine::Level::kDebug: spdlog::debug("{}", line.message); break;
    case LogLine::Level::kInfo: spdlog::info("{}", line.message); break;
    case LogLine::Level::kWarning: spdlog::warn("{}", line.message); break;
    case LogLine::Level::kError: spdlog::error("{}", line.message); break;
  }
}

}  // namespace harness::injector
