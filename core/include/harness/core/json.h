#pragma once

// The one entry point for JSON text from outside the process: webhook and REST bodies, patches in
// webhook responses, audit log lines, annotations holding JSON, API server responses, files.
//
// nlohmann's parser is iterative and its destructor too, but copying, dumping and comparing a
// value recurse once per nesting level, so a body nested 100,000 deep overflows the stack the
// first time it is copied. Go's decoders refuse such text while scanning it: encoding/json's
// scanner (src/encoding/json/scanner.go, pushParseState) stops at the 10,001st open bracket with
// the SyntaxError "invalid character '[' exceeded max depth". This parser does the same, before
// building anything deeper, so every value it returns is at most kMaxJsonDepth deep.

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::core {

// encoding/json scanner.go maxNestingDepth: 10,000 nested arrays/objects are accepted, 10,001
// are not.
inline constexpr int kMaxJsonDepth = 10000;

// Details of a parse failure, for callers that word or place the error themselves.
struct JsonError {
  // true: nesting deeper than kMaxJsonDepth; false: a syntax error.
  bool too_deep = false;
  // 0-based byte offset of the offending byte: the open bracket beyond the limit, or where
  // nlohmann's lexer stopped.
  std::size_t offset = 0;
  // too_deep: Go's SyntaxError text, "invalid character '[' exceeded max depth" (or '{').
  // Otherwise nlohmann's description, e.g. "parse error at line 1, column 2: syntax error while
  // parsing value - invalid literal; last read: 'x'".
  std::string message;
  // A syntax error's description without nlohmann's "parse error at line 1, column 2: " prefix
  // ("syntax error while parsing value - ..."); empty when there is none. Also the Error's
  // detail.
  std::string description;
};

// One JSON value, alone in `text` but for surrounding whitespace. The Error carries
// JsonError::message (code kDecode, detail JsonError::description); `detail`, when given,
// receives the whole JsonError.
Result<nlohmann::json> parseJson(std::string_view text, JsonError* detail = nullptr);
Result<nlohmann::ordered_json> parseOrderedJson(std::string_view text,
                                                JsonError* detail = nullptr);

// As parseJson, but failure gives a discarded value (value_t::discarded), like nlohmann's
// json::parse(text, nullptr, /*allow_exceptions=*/false): for callers that treat text that is not
// JSON as absent.
nlohmann::json parseJsonOrDiscarded(std::string_view text);

// The JSON value starting at text[offset] (after whitespace), for streams of values: on success
// `offset` is moved past the value. Offsets in `detail` are relative to `text`.
Result<nlohmann::json> parseJsonAt(std::string_view text, std::size_t& offset,
                                   JsonError* detail = nullptr);

// The first array or object, in the order json.Marshal writes them (object members by key),
// nested deeper than `max_depth` (the outermost value is at depth 1), or nullptr; found without
// recursion. For values built in process, e.g. a patched object the API server would re-decode.
const nlohmann::json* findTooDeep(const nlohmann::json& value, int max_depth = kMaxJsonDepth);

// JSON text that never throws: invalid UTF-8 in strings is written as U+FFFD, as Go's
// encoding/json writes it (nlohmann's dump() throws type_error 316 instead).
std::string dumpJson(const nlohmann::json& value);
// The same, into a string reserved for `expected_size` bytes first: for a large answer whose size
// the caller can tell (an echoed request and its patch), growing the string by doubling copied it
// a dozen times.
std::string dumpJson(const nlohmann::json& value, std::size_t expected_size);

// The byte offset of the first open bracket nested deeper than `max_depth` in JSON-like text
// (brackets inside strings do not count), or std::string_view::npos.
std::size_t tooDeepOffset(std::string_view text, int max_depth = kMaxJsonDepth);

}  // namespace harness::core
