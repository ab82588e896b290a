// Followed: kubernetes/apiserver plugin/pkg/audit/log/backend.go (json format: the legacy codec's
// encoding/json Encoder output, one event per line) and the lumberjack writer it logs through
// (append mode, parent directories created).

#include "harness/audit/log.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <system_error>
#include <utility>

#include <nlohmann/json.hpp>

#include "harness/core/json.h"

namespace harness::audit {

struct LogWriter::State {
  std::filesystem::path path;
  std::FILE* file = nullptr;
  mutable std::mutex mutex;
  std::optional<std::string> last_error;

  ~State() {
    if (file != nullptr) std::fclose(file);
  }
};

LogWriter::LogWriter(std::unique_ptr<State> state) : state_(std::move(state)) {}
LogWriter::LogWriter(LogWriter&&) noexcept = default;
LogWriter& LogWriter::operator=(LogWriter&&) noexcept = default;
LogWriter::~LogWriter() = default;

core::Result<LogWriter> LogWriter::open(const std::filesystem::path& path) {
  std::error_code ec;
  if (path.has_parent_path()) {
    std::filesystem::create_directories(path.parent_path(), ec);
    if (ec) {
      return core::Error{"cannot create directory " + path.parent_path().string() + ": " +
                         ec.message()};
    }
  }
  std::FILE* file = std::fopen(path.c_str(), "ab");
  if (file == nullptr) {
    return core::Error{"cannot open audit log " + path.string() + ": " + std::strerror(errno)};
  }
  auto state = std::make_unique<State>();
  state->path = path;
  state->file = file;
  return LogWriter(std::move(state));
}

void LogWriter::write(const Event& event) {
  const std::string line = toJsonLine(event);
  const std::lock_guard<std::mutex> lock(state_->mutex);
  if (std::fwrite(line.data(), 1, line.size(), state_->file) != line.size() ||
      std::fflush(state_->file) != 0) {
    state_->last_error =
        "cannot write audit log " + state_->path.string() + ": " + std::strerror(errno);
  }
}

std::optional<std::string> LogWriter::lastError() const {
  const std::lock_guard<std::mutex> lock(state_->mutex);
  return state_->last_error;
}

const std::filesystem::path& LogWriter::path() const { return state_->path; }

LogReadResult readLog(std::string_view text, std::string_view file_name) {
  LogReadResult result;
  std::size_t line_number = 0;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++line_number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;

    const std::string where = std::string(file_name) + ":" + std::to_string(line_number) + ": ";
    // parseOrderedJson refuses nesting deeper than encoding/json does ("exceeded max depth").
    auto json = core::parseOrderedJson(line);
    if (!json) {
      result.errors.push_back(where + "invalid JSON: " + json.error().message);
      continue;
    }
    auto event = eventFromJson(*json);
    if (!event.ok()) {
      result.errors.push_back(where + event.error().message);
      continue;
    }
    result.events.push_back(std::move(*event));
    result.line_numbers.push_back(line_number);
  }
  return result;
}

}  // namespace harness::audit
