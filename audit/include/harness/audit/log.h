#pragma once

// Audit logs as kube-apiserver's log backend writes them (--audit-log-format=json: one Event per
// line, kubernetes/apiserver plugin/pkg/audit/log/backend.go), and reading such logs back -- the
// simulator's or a real cluster's (e.g. k3d's /var/log/kubernetes/audit/audit.log).

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/audit/event.h"
#include "harness/core/result.h"

namespace harness::audit {

// Appends events to a file, one toJsonLine per event, flushed after each. write() may be called
// from several threads; lines never interleave. The only part of this library that touches files.
class LogWriter {
 public:
  // Opens `path` for appending (created, with its parent directories, when missing), like the
  // log backend's lumberjack writer. Errors name the path and the OS error.
  static core::Result<LogWriter> open(const std::filesystem::path& path);

  LogWriter(LogWriter&&) noexcept;
  LogWriter& operator=(LogWriter&&) noexcept;
  ~LogWriter();

  // Writes and flushes one line. A failure (disk full...) does not throw: it is kept, like the
  // backend's HandlePluginError, and reported by lastError().
  void write(const Event& event);
  [[nodiscard]] std::optional<std::string> lastError() const;
  [[nodiscard]] const std::filesystem::path& path() const;

 private:
  struct State;
  explicit LogWriter(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

struct LogReadResult {
  std::vector<Event> events;
  // One message per bad line, e.g. `audit.log:17: invalid JSON: parse error at line 1, column 5:
  // ...` or `audit.log:3: stage: unknown stage "Done"`. Blank lines are skipped silently.
  std::vector<std::string> errors;
  // For each event, its 1-based line number in the text.
  std::vector<std::size_t> line_numbers;
};

// Reads a JSON-lines audit log without stopping at bad lines. "\r\n" line ends are accepted.
LogReadResult readLog(std::string_view text, std::string_view file_name);

}  // namespace harness::audit
