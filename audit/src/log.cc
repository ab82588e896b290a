// Followed: kubernetes/apiserver plugin/pkg/audit/log/backend.go (json format: the legacy codec's
// encoding/json Encoder output, one event per line) and the lumberjack writer it logs through
// (append mode, parent directories created).

#include "harness/audit/log.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <system_error>
#include <utility>

#include <fstream>
#include <streambuf>

#include <nlohmann/json.hpp>
#include <simdjson.h>
#include <zlib.h>

#include "harness/core/json.h"
#include "harness/core/json_simdjson.h"
#include "deferred_object.h"

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

core::Result<Event> parseLogLine(std::string_view line) {
  // core::parseOrderedJson refuses nesting deeper than encoding/json does ("exceeded max depth").
  auto json = core::parseOrderedJson(line);
  if (!json) return core::Error{"invalid JSON: " + json.error().message};
  return eventFromJson(std::move(*json));
}

core::Result<EventObjectsApart> parseLogLineObjectsApart(std::string_view line) {
  auto json = core::parseJson(line);
  if (!json) return core::Error{"invalid JSON: " + json.error().message};
  EventObjectsApart read;
  if (json->is_object()) {
    // Left as null members, which eventFromJson skips as it skips absent ones.
    auto take = [&json](const char* key, std::optional<nlohmann::json>& out) {
      const auto it = json->find(key);
      if (it != json->end() && !it->is_null()) out = std::exchange(*it, nullptr);
    };
    take("requestObject", read.request_object);
    take("responseObject", read.response_object);
  }
  auto event = eventFromJson(*json);
  if (!event.ok()) return event.error();
  read.event = std::move(*event);
  return read;
}

namespace {

// One simdjson parser per thread, its buffers kept between lines (they grow to the longest line
// read, at most kMaxLogLineBytes). simdjson needs SIMDJSON_PADDING readable bytes after the text:
// the line is copied into a padded buffer (the line reader's buffer does not promise them).
struct LineDom {
  simdjson::dom::parser parser;
  simdjson::padded_string padded;

  // Into the parser's own document, or into `into`.
  std::optional<simdjson::dom::element> parse(std::string_view line,
                                              simdjson::dom::document* into = nullptr) {
    if (padded.size() < line.size()) padded = simdjson::padded_string(line.size() * 2);
    std::memcpy(padded.data(), line.data(), line.size());
    simdjson::dom::element root;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(padded.data());
    const auto parsed =
        into != nullptr
            ? parser.parse_into_document(*into, bytes, line.size(), /*realloc_if_needed=*/false)
            : parser.parse(bytes, line.size(), /*realloc_if_needed=*/false);
    if (parsed.get(root) != simdjson::SUCCESS || !root.is_object()) return std::nullopt;
    return root;
  }
};

LineDom& lineDom() {
  thread_local LineDom dom;
  return dom;
}

std::string_view stringAt(simdjson::dom::element object, std::string_view key) {
  std::string_view out;
  if (object.is_object() && object.get_object().at_key(key).get(out) == simdjson::SUCCESS) {
    return out;
  }
  return {};
}

std::optional<simdjson::dom::element> memberOf(simdjson::dom::element object,
                                               std::string_view key) {
  simdjson::dom::element out;
  if (object.is_object() && object.get_object().at_key(key).get(out) == simdjson::SUCCESS) {
    return out;
  }
  return std::nullopt;
}

}  // namespace

std::optional<EventPeek> peekEvent(std::string_view line) {
  const auto root = lineDom().parse(line);
  if (!root || stringAt(*root, "kind") == "EventList") return std::nullopt;
  EventPeek peek;
  peek.stage = stringAt(*root, "stage");
  peek.verb = stringAt(*root, "verb");
  if (const auto user = memberOf(*root, "user")) peek.user = stringAt(*user, "username");
  if (const auto ref = memberOf(*root, "objectRef")) {
    peek.resource = stringAt(*ref, "resource");
    peek.api_group = stringAt(*ref, "apiGroup");
    peek.namespace_name = stringAt(*ref, "namespace");
    peek.name = stringAt(*ref, "name");
  }
  if (const auto object = memberOf(*root, "requestObject")) {
    if (const auto metadata = memberOf(*object, "metadata")) {
      peek.generate_name = stringAt(*metadata, "generateName");
    }
  }
  return peek;
}

namespace {

enum class ObjectsRead { kMetadataOnly, kDeferResponse };

// The event of a line simdjson parsed (`root`), as parseLogLineObjectsApart reads it, with its
// objects read as `how` says. The event's other members are copied as nlohmann values and read by
// eventFromJson, which words the errors as for any line.
core::Result<EventObjectsApart> readParsedLine(simdjson::dom::element root, ObjectsRead how,
                                               std::shared_ptr<DeferredObject> deferred) {
  nlohmann::json event = nlohmann::json::object();
  EventObjectsApart read;
  // The last of each member, as parseJson keeps it (duplicate keys: the last value).
  std::optional<simdjson::dom::element> objects[2];
  for (const auto field : simdjson::dom::object(root)) {
    nlohmann::json& value = event[std::string(field.key)];
    const bool request = field.key == "requestObject";
    if (request || field.key == "responseObject") {
      objects[request ? 0 : 1] = field.value;
      continue;  // left null, as parseLogLineObjectsApart leaves it
    }
    core::copyFromSimdjson(field.value, value);
  }
  for (int i = 0; i < 2; ++i) {
    if (!objects[i] || objects[i]->is_null()) continue;
    std::optional<nlohmann::json>& out = i == 0 ? read.request_object : read.response_object;
    const simdjson::dom::element object = *objects[i];
    if (how == ObjectsRead::kDeferResponse) {
      if (i == 1 && object.is_object()) {
        // Only on the loop's last pass (i == 1): `deferred` is moved once, after this line.
        // NOLINTNEXTLINE(bugprone-use-after-move)
        deferred->value = object;
        read.deferred_response = std::move(deferred);
      } else {
        core::copyFromSimdjson(object, out.emplace());
      }
      continue;
    }
    nlohmann::json reduced;
    if (object.is_object()) {
      reduced = nlohmann::json::object();
      if (const auto metadata = memberOf(object, "metadata")) {
        core::copyFromSimdjson(*metadata, reduced["metadata"]);
      }
    } else {
      core::copyFromSimdjson(object, reduced);
    }
    out = std::move(reduced);
  }
  auto parsed = eventFromJson(event);
  if (!parsed.ok()) return parsed.error();
  read.event = std::move(*parsed);
  return read;
}

}  // namespace

nlohmann::json DeferredObject::tree() const {
  nlohmann::json out;
  core::copyFromSimdjson(value, out);
  return out;
}

core::Result<EventObjectsApart> parseLogLineMetadataOnly(std::string_view line) {
  const auto root = lineDom().parse(line);
  if (!root) return parseLogLineObjectsApart(line);  // words the error, or reads it whole
  return readParsedLine(*root, ObjectsRead::kMetadataOnly, nullptr);
}

core::Result<EventObjectsApart> parseLogLineDeferredResponse(std::string_view line) {
  // Parsed into a document of its own, which the deferred responseObject keeps.
  auto deferred = std::make_shared<DeferredObject>();
  const auto root = lineDom().parse(line, &deferred->document);
  if (!root) return parseLogLineObjectsApart(line);
  return readParsedLine(*root, ObjectsRead::kDeferResponse, std::move(deferred));
}

bool looksLikeEventList(std::string_view text) {
  return text.find("\"EventList\"") != std::string_view::npos;
}

namespace {

// The items of a parsed EventList (nullptr: none), or why it is not one.
core::Result<nlohmann::json*> eventListItems(nlohmann::json& list) {
  if (!list.is_object()) return core::Error{"expected an EventList object"};
  const auto kind = list.find("kind");
  if (kind == list.end() || !kind->is_string() || kind->get<std::string>() != "EventList") {
    return core::Error{"kind: expected \"EventList\""};
  }
  const auto api_version = list.find("apiVersion");
  if (api_version != list.end() &&
      (!api_version->is_string() ||
       api_version->get<std::string>().rfind("audit.k8s.io/", 0) != 0)) {
    return core::Error{"apiVersion: expected audit.k8s.io/v1, got " + api_version->dump()};
  }
  const auto items = list.find("items");
  if (items == list.end() || items->is_null()) return nullptr;  // an empty batch
  if (!items->is_array()) {
    return core::Error{"items: expected a list of events, got " + std::string(items->type_name())};
  }
  return &*items;
}

}  // namespace

core::Result<std::vector<EventObjectsApart>> parseEventListObjectsApart(std::string_view line) {
  auto json = core::parseJson(line);
  if (!json) return core::Error{"invalid JSON: " + json.error().message};
  auto items = eventListItems(*json);
  if (!items.ok()) return items.error();
  std::vector<EventObjectsApart> out;
  if (*items == nullptr) return out;
  out.reserve((*items)->size());
  for (std::size_t i = 0; i < (*items)->size(); ++i) {
    nlohmann::json& item = (**items)[i];
    EventObjectsApart read;
    if (item.is_object()) {
      auto take = [&item](const char* key, std::optional<nlohmann::json>& into) {
        const auto it = item.find(key);
        if (it != item.end() && !it->is_null()) into = std::exchange(*it, nullptr);
      };
      take("requestObject", read.request_object);
      take("responseObject", read.response_object);
    }
    auto event = eventFromJson(item);
    if (!event.ok()) {
      return core::Error{"items[" + std::to_string(i) + "]." + event.error().message};
    }
    read.event = std::move(*event);
    out.push_back(std::move(read));
  }
  return out;
}

core::Result<std::vector<Event>> parseEventBatch(std::string_view body) {
  auto json = core::parseOrderedJson(body);
  if (!json) return core::Error{"invalid JSON: " + json.error().message};
  std::vector<Event> out;
  if (json->is_object() && json->contains("kind") && (*json)["kind"] == "Event") {
    auto event = eventFromJson(std::move(*json));
    if (!event.ok()) return event.error();
    out.push_back(std::move(*event));
    return out;
  }
  if (!json->is_object() || !json->contains("kind") || (*json)["kind"] != "EventList") {
    return core::Error{"kind: expected \"EventList\" or \"Event\""};
  }
  if (json->contains("apiVersion") &&
      (!(*json)["apiVersion"].is_string() ||
       (*json)["apiVersion"].get<std::string>().rfind("audit.k8s.io/", 0) != 0)) {
    return core::Error{"apiVersion: expected audit.k8s.io/v1, got " + (*json)["apiVersion"].dump()};
  }
  auto& items = (*json)["items"];
  if (items.is_null()) return out;
  if (!items.is_array()) {
    return core::Error{"items: expected a list of events, got " + std::string(items.type_name())};
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    auto event = eventFromJson(std::move(items[i]));
    if (!event.ok()) {
      return core::Error{"items[" + std::to_string(i) + "]." + event.error().message};
    }
    out.push_back(std::move(*event));
  }
  return out;
}

core::Result<std::size_t> appendEventBatch(std::string_view body, LogWriter& log) {
  auto events = parseEventBatch(body);
  if (!events.ok()) return events.error();
  for (const Event& event : *events) log.write(event);
  if (auto error = log.lastError()) return core::Error{*error};
  return events->size();
}

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

    auto event = parseLogLine(line);
    if (!event.ok()) {
      result.errors.push_back(std::string(file_name) + ":" + std::to_string(line_number) + ": " +
                              event.error().message);
      continue;
    }
    result.events.push_back(std::move(*event));
    result.line_numbers.push_back(line_number);
  }
  return result;
}

LogLineReader::LogLineReader(std::istream& in, std::size_t max_line_bytes, std::uint64_t offset,
                             std::size_t first_line_number, std::size_t read_chunk)
    : in_(in),
      max_line_bytes_(max_line_bytes),
      read_chunk_(std::max<std::size_t>(read_chunk, 1)),
      offset_(offset),
      next_number_(first_line_number) {}

bool LogLineReader::fill() {
  if (eof_ || failed_) return false;
  // Drop what was consumed, then append one chunk. The buffer only grows (std::string::resize
  // writes zeros over what it adds: 1 MiB for each MiB read, were it shrunk and grown again).
  if (begin_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (buffer_.size() < end_ + read_chunk_) buffer_.resize(end_ + read_chunk_);
  in_.read(buffer_.data() + end_, static_cast<std::streamsize>(read_chunk_));
  const auto got = static_cast<std::size_t>(in_.gcount());
  end_ += got;
  if (!in_) {
    if (in_.bad()) failed_ = true;
    eof_ = true;
  }
  return got > 0;
}

std::optional<LogLineReader::Line> LogLineReader::next() {
  std::size_t searched = 0;  // bytes after begin_ known to hold no newline
  while (true) {
    const std::string_view pending(buffer_.data() + begin_, end_ - begin_);
    const std::size_t newline = pending.find('\n', searched);
    if (newline != std::string_view::npos || (eof_ && !pending.empty())) {
      const std::size_t length = newline == std::string_view::npos ? pending.size() : newline;
      Line line;
      line.number = next_number_++;
      line.offset = offset_;
      line.text = pending.substr(0, length);
      line.complete = newline != std::string_view::npos;
      if (!line.text.empty() && line.text.back() == '\r') line.text.remove_suffix(1);
      const std::size_t consumed = std::min(pending.size(), length + 1);
      begin_ += consumed;
      offset_ += consumed;
      return line;
    }
    if (pending.size() > max_line_bytes_) {
      // Too long to hold: skip to the end of the line without keeping it.
      Line line;
      line.number = next_number_++;
      line.offset = offset_;
      line.too_long = true;
      std::uint64_t skipped = pending.size();
      begin_ = end_ = 0;
      while (true) {
        if (!fill()) break;
        const std::size_t end = std::string_view(buffer_.data(), end_).find('\n');
        if (end != std::string::npos) {
          begin_ = end + 1;
          skipped += end + 1;
          break;
        }
        skipped += end_;
        end_ = 0;
      }
      offset_ += skipped;
      return line;
    }
    searched = pending.size();
    if (!fill()) {
      if (begin_ == end_) return std::nullopt;
    }
  }
}

namespace {

// lumberjack's backupTimeFormat, "2006-01-02T15-04-05.000": digits at every other place.
constexpr std::string_view kBackupTimeShape = "dddd-dd-ddTdd-dd-dd.ddd";

bool isBackupTime(std::string_view text) {
  if (text.size() != kBackupTimeShape.size()) return false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const bool digit = text[i] >= '0' && text[i] <= '9';
    if (kBackupTimeShape[i] == 'd' ? !digit : text[i] != kBackupTimeShape[i]) return false;
  }
  return true;
}

// The log a file belongs to (directory and the current file's name) and its place in it: the
// backup's time, or nullopt for the current file.
std::pair<std::string, std::optional<std::string>> rotationOf(const std::string& path) {
  const std::filesystem::path as_path(path);
  const std::string directory = as_path.parent_path().lexically_normal().string();
  std::string name = as_path.filename().string();
  constexpr std::string_view kCompressed = ".gz";  // lumberjack's compressSuffix
  const bool compressed =
      name.size() > kCompressed.size() &&
      name.compare(name.size() - kCompressed.size(), kCompressed.size(), kCompressed) == 0;
  const std::string plain = compressed ? name.substr(0, name.size() - kCompressed.size()) : name;
  // backupName: prefix + "-" + time + ext, where ext is the current file's extension (possibly
  // none): the last "-<time>" in the name.
  const std::size_t width = kBackupTimeShape.size();
  for (std::size_t at = plain.size() >= width + 2 ? plain.size() - width : 0; at >= 2; --at) {
    if (plain[at - 1] == '-' && isBackupTime(std::string_view(plain).substr(at, width))) {
      return {directory + "/" + plain.substr(0, at - 1) + plain.substr(at + width),
              plain.substr(at, width)};
    }
  }
  return {directory + "/" + name, std::nullopt};
}

}  // namespace

std::vector<std::string> orderRotatedLogs(std::vector<std::string> paths) {
  // Per log: the places its files hold in `paths`, and the files.
  std::map<std::string, std::vector<std::size_t>> places;
  std::vector<std::optional<std::string>> times(paths.size());
  for (std::size_t i = 0; i < paths.size(); ++i) {
    auto [log, time] = rotationOf(paths[i]);
    places[log].push_back(i);
    times[i] = std::move(time);
  }
  std::vector<std::string> out(paths.size());
  for (const auto& [log, at] : places) {
    std::vector<std::size_t> files = at;
    // The backups by time (the format sorts as text), the current file (no time) last.
    std::stable_sort(files.begin(), files.end(), [&times](std::size_t a, std::size_t b) {
      if (!times[a] || !times[b]) return times[a].has_value() && !times[b].has_value();
      return *times[a] < *times[b];
    });
    for (std::size_t k = 0; k < at.size(); ++k) out[at[k]] = std::move(paths[files[k]]);
  }
  return out;
}

namespace {

// Inflates a gzip file as it is read (zlib, windowBits 15 + 16: gzip only). Concatenated members
// (gzip -c a >> b) are read one after the other, as gunzip does.
class GzipBuffer : public std::streambuf {
 public:
  explicit GzipBuffer(std::ifstream& file) : file_(file) {
    stream_.zalloc = Z_NULL;
    stream_.zfree = Z_NULL;
    stream_.opaque = Z_NULL;
    ready_ = inflateInit2(&stream_, 15 + 16) == Z_OK;
    if (!ready_) error_ = "cannot start zlib";
  }
  ~GzipBuffer() override {
    if (ready_) inflateEnd(&stream_);
  }
  GzipBuffer(const GzipBuffer&) = delete;
  GzipBuffer& operator=(const GzipBuffer&) = delete;

  [[nodiscard]] const std::optional<std::string>& error() const { return error_; }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (!ready_ || error_) return traits_type::eof();
    while (true) {
      if (stream_.avail_in == 0 && !input_done_) {
        file_.read(in_.data(), static_cast<std::streamsize>(in_.size()));
        const auto got = static_cast<uInt>(file_.gcount());
        if (got == 0) input_done_ = true;
        stream_.next_in = reinterpret_cast<Bytef*>(in_.data());
        stream_.avail_in = got;
      }
      if (stream_.avail_in == 0 && input_done_) {
        if (in_member_) {
          error_ = "gzip data truncated at compressed byte " + std::to_string(consumed());
        }
        return traits_type::eof();
      }
      stream_.next_out = reinterpret_cast<Bytef*>(out_.data());
      stream_.avail_out = static_cast<uInt>(out_.size());
      const uInt before_in = stream_.avail_in;
      const int status = inflate(&stream_, Z_NO_FLUSH);
      total_in_ += before_in - stream_.avail_in;
      const std::size_t produced = out_.size() - stream_.avail_out;
      if (status == Z_STREAM_END) {
        in_member_ = false;
        inflateReset(&stream_);
      } else if (status == Z_OK || status == Z_BUF_ERROR) {
        in_member_ = true;
      } else {
        error_ = "bad gzip data at compressed byte " + std::to_string(consumed()) + ": " +
                 (stream_.msg != nullptr ? stream_.msg : "zlib error " + std::to_string(status));
        if (produced == 0) return traits_type::eof();
      }
      if (produced > 0) {
        setg(out_.data(), out_.data(), out_.data() + produced);
        return traits_type::to_int_type(*gptr());
      }
      if (status == Z_BUF_ERROR && stream_.avail_in > 0) {
        error_ = "bad gzip data at compressed byte " + std::to_string(consumed());
        return traits_type::eof();
      }
    }
  }

 private:
  [[nodiscard]] std::uint64_t consumed() const { return total_in_; }

  std::ifstream& file_;
  z_stream stream_{};
  bool ready_ = false;
  bool input_done_ = false;
  bool in_member_ = false;
  std::uint64_t total_in_ = 0;
  std::array<char, 1 << 16> in_{};
  std::array<char, 1 << 18> out_{};
  std::optional<std::string> error_;
};

}  // namespace

struct LogFile::State {
  std::filesystem::path path;
  std::ifstream file;
  std::unique_ptr<GzipBuffer> gzip;
  std::unique_ptr<std::istream> inflated;
};

LogFile::LogFile(std::unique_ptr<State> state) : state_(std::move(state)) {}
LogFile::~LogFile() = default;

core::Result<std::unique_ptr<LogFile>> LogFile::open(const std::filesystem::path& path) {
  auto state = std::make_unique<State>();
  state->path = path;
  state->file.open(path, std::ios::binary);
  if (!state->file) {
    return core::Error{"cannot read " + path.string() + ": " + std::strerror(errno)};
  }
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return core::Error{"cannot read " + path.string() + ": it is a directory"};
  }
  std::array<char, 2> magic{};
  state->file.read(magic.data(), 2);
  const bool gzip = state->file.gcount() == 2 && static_cast<unsigned char>(magic[0]) == 0x1f &&
                    static_cast<unsigned char>(magic[1]) == 0x8b;
  state->file.clear();
  state->file.seekg(0);
  if (gzip) {
    state->gzip = std::make_unique<GzipBuffer>(state->file);
    state->inflated = std::make_unique<std::istream>(state->gzip.get());
  }
  return std::unique_ptr<LogFile>(new LogFile(std::move(state)));
}

std::istream& LogFile::stream() {
  return state_->inflated ? *state_->inflated : static_cast<std::istream&>(state_->file);
}

bool LogFile::compressed() const { return state_->gzip != nullptr; }

std::optional<std::string> LogFile::error() const {
  if (state_->gzip && state_->gzip->error()) {
    return state_->path.string() + ": " + *state_->gzip->error();
  }
  return std::nullopt;
}

const std::filesystem::path& LogFile::path() const { return state_->path; }

}  // namespace harness::audit
