#pragma once

// Audit logs as kube-apiserver's log backend writes them (--audit-log-format=json: one Event per
// line, kubernetes/apiserver plugin/pkg/audit/log/backend.go), and reading such logs back -- the
// simulator's or a real cluster's (e.g. k3d's /var/log/kubernetes/audit/audit.log).

#include <cstdint>
#include <filesystem>
#include <istream>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/audit/event.h"
#include "harness/core/result.h"

namespace harness::audit {

// An event's object as simdjson parsed it (src/deferred_object.h).
struct DeferredObject;

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

// One line of a log as an Event, or why it is not one (without the file and line): `invalid
// JSON: ...`, `stage: unknown stage "Done"`. The line's JSON is parsed here and only here.
core::Result<Event> parseLogLine(std::string_view line);

// The same with requestObject and responseObject read as nlohmann::json, apart from the event
// (which has neither): for readers that do not write the event back, such as chains, since
// nlohmann::json parses much faster than the ordered_json that keeps member order.
// (Event's note: the implicit move of nlohmann::json is noexcept.)
// NOLINTNEXTLINE(bugprone-exception-escape)
struct EventObjectsApart {
  Event event;
  std::optional<nlohmann::json> request_object;
  std::optional<nlohmann::json> response_object;
  // parseLogLineDeferredResponse: the responseObject (an object) as simdjson parsed it, instead
  // of response_object.
  std::shared_ptr<const DeferredObject> deferred_response;
};
core::Result<EventObjectsApart> parseLogLineObjectsApart(std::string_view line);

// As parseLogLineObjectsApart, but a responseObject that is a JSON object is left as simdjson
// parsed it (deferred_response; the line's parse is kept for it, not built as a tree): for
// readers that only compare with it (`audit chains`' replay). The same event, objects and errors
// otherwise.
core::Result<EventObjectsApart> parseLogLineDeferredResponse(std::string_view line);

// What a log line says about its event, read with simdjson's DOM parser without building the
// event: for readers that need only some events of a log (`audit assert` the requests its
// expectations select, `audit compare` the writes) and skip the others unparsed. The views point
// into the thread's parser and are valid until its next peekEvent or parseLogLineMetadataOnly.
// Empty when the member is absent or not a string.
struct EventPeek {
  std::string_view stage, verb, user;  // user.username
  std::string_view resource, api_group, namespace_name, name;  // objectRef
  std::string_view generate_name;  // requestObject.metadata.generateName
};
// nullopt when the line is not one JSON object simdjson reads (invalid JSON, an EventList, too
// deep...): the caller then parses it whole, which words the error.
std::optional<EventPeek> peekEvent(std::string_view line);

// parseLogLineObjectsApart with requestObject and responseObject reduced to their `metadata`
// (names, labels, owners: what pairing needs), the rest of them never built. The event's other
// members are read and checked as parseLogLine does; an error is the same as its.
core::Result<EventObjectsApart> parseLogLineMetadataOnly(std::string_view line);

// The body kube-apiserver's webhook audit backend POSTs (plugin/pkg/audit/webhook: a batch of
// events as an audit.k8s.io/v1 EventList, {"kind":"EventList","apiVersion":"audit.k8s.io/v1",
// "metadata":{},"items":[...]}), or a single Event. Every item is checked before any is returned:
// errors name the item and field, `items[3].stage: unknown stage "Done"`.
core::Result<std::vector<Event>> parseEventBatch(std::string_view body);
// A webhook backend's POST body (parseEventBatch) appended to `log`, one line per event, all or
// nothing: the number of events written, or why the body is not a batch of events.
core::Result<std::size_t> appendEventBatch(std::string_view body, LogWriter& log);

// Whether a JSON text (a log line, a request body) is an EventList, from its bytes: it names the
// kind "EventList" (a log line of events never does: an Event's kind is "Event").
bool looksLikeEventList(std::string_view text);

// The events of an EventList read with their objects apart (parseLogLineObjectsApart for each
// item); errors name the item as parseEventBatch does.
core::Result<std::vector<EventObjectsApart>> parseEventListObjectsApart(std::string_view line);

// The longest line a LogLineReader holds. kube-apiserver bounds an event: a request body is at
// most 3 MiB (apiserver's MaxRequestBodyBytes), a stored object 1.5 MiB (etcd's
// --max-request-bytes), and an event carries the two objects and the webhooks' patches.
inline constexpr std::size_t kMaxLogLineBytes = std::size_t{16} << 20;

// Reads a log from a stream one line at a time, holding one line and a read buffer whatever the
// size of the log (`apiserver-sim audit` reads logs of gigabytes). A line longer than
// `max_line_bytes` is not held: it is skipped as it streams by and returned with `too_long`.
class LogLineReader {
 public:
  struct Line {
    std::string_view text;  // without "\n" or "\r\n"; valid until the next call to next()
    std::size_t number = 0;  // 1-based
    std::uint64_t offset = 0;  // of the line's first byte in the stream
    bool too_long = false;     // text is empty then
    // False for a last line without "\n": kube-apiserver was stopped, or is still writing it.
    bool complete = true;
  };

  // Starts at the stream's current position, which is byte `offset` and the start of line
  // `first_line_number` of the log (to read a line again after seeking to it). The stream is
  // read `read_chunk` bytes at a time: large for a whole log, small to read one line again
  // (compare reads each paired event again: a 1 MiB read and buffer for each was most of it).
  explicit LogLineReader(std::istream& in, std::size_t max_line_bytes = kMaxLogLineBytes,
                         std::uint64_t offset = 0, std::size_t first_line_number = 1,
                         std::size_t read_chunk = std::size_t{1} << 20);

  // The next line, nullopt at the end of the stream or on a read error (see failed()).
  std::optional<Line> next();
  // The stream failed other than by reaching its end (EIO...).
  [[nodiscard]] bool failed() const { return failed_; }

 private:
  bool fill();  // reads more into buffer_; false at the end of the stream

  std::istream& in_;
  std::size_t max_line_bytes_;
  std::size_t read_chunk_;
  std::string buffer_;
  std::size_t begin_ = 0;  // the unread part of buffer_ is [begin_, end_)
  std::size_t end_ = 0;
  std::uint64_t offset_;   // of buffer_[begin_]
  std::size_t next_number_;
  bool eof_ = false;
  bool failed_ = false;
};

// The files of a log in the order they were written, as kube-apiserver's lumberjack writer
// (gopkg.in/natefinch/lumberjack.v2, backupName) leaves them: the current file `audit.log`, its
// backups `audit-2026-11-26T12-00-00.000.log` (the rotation time, backupTimeFormat
// "2006-01-02T15-04-05.000", UTC) and, with --audit-log-compress, `...000.log.gz`. The files of
// one log (same directory, prefix and extension) are sorted by the time in their names, the
// current file last, and take the places they had among `paths`; any other file keeps its place.
std::vector<std::string> orderRotatedLogs(std::vector<std::string> paths);

// An audit log file opened for reading as kube-apiserver leaves it: plain JSON lines, or
// gzip-compressed (lumberjack's --audit-log-compress backups, recognised by their magic bytes,
// several gzip members read one after the other), decompressed as it is read.
class LogFile {
 public:
  // Errors name the path and the OS error.
  static core::Result<std::unique_ptr<LogFile>> open(const std::filesystem::path& path);
  ~LogFile();
  LogFile(const LogFile&) = delete;
  LogFile& operator=(const LogFile&) = delete;

  // The log's text (decompressed). A gzip error ends it; see error().
  std::istream& stream();
  [[nodiscard]] bool compressed() const;
  // A decompression error, e.g. `bad gzip data at compressed byte 1234: invalid block type`
  // or `gzip data truncated at compressed byte 99`; nullopt while the data is good.
  [[nodiscard]] std::optional<std::string> error() const;
  [[nodiscard]] const std::filesystem::path& path() const;

 private:
  struct State;
  explicit LogFile(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace harness::audit
