#include "harness/core/json.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <istream>
#include <streambuf>
#include <utility>
#include <vector>

#include <simdjson.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "harness/core/json_simdjson.h"
#include "harness/core/utf8.h"

namespace harness::core {

namespace {

// nlohmann's DOM builder with encoding/json's nesting limit: an open bracket beyond
// kMaxJsonDepth stops the parse before anything deeper is built. sax_parse is a template over
// the handler type, so these members hide (rather than override) the base class's.
template <class BasicJson>
class DepthLimitedDomParser : public nlohmann::detail::json_sax_dom_parser<BasicJson> {
  using Base = nlohmann::detail::json_sax_dom_parser<BasicJson>;

 public:
  explicit DepthLimitedDomParser(BasicJson& root) : Base(root, /*allow_exceptions=*/false) {}

  bool start_object(std::size_t len) { return enter() && Base::start_object(len); }
  bool start_array(std::size_t len) { return enter() && Base::start_array(len); }
  bool end_object() {
    --depth_;
    return Base::end_object();
  }
  bool end_array() {
    --depth_;
    return Base::end_array();
  }

  template <class Exception>
  bool parse_error(std::size_t position, const std::string& last_token, const Exception& ex) {
    syntax_error_ = true;
    position_ = position;
    // nlohmann's exceptions carry only their what() text, "[json.exception.parse_error.101]
    // parse error at line 1, column 2: <description>" (nlohmann/detail/exceptions.hpp,
    // parse_error::create): split here, where it enters the project, once. Drop the tag; keep
    // "parse error at line 1, ..." as the message and the text after its ": " as the description.
    message_ = ex.what();
    if (const auto pos = message_.find("] ");
        message_.rfind("[json.exception.", 0) == 0 && pos != std::string::npos) {
      message_.erase(0, pos + 2);
    }
    description_.clear();
    if (message_.rfind("parse error", 0) == 0) {
      if (const auto colon = message_.find(": "); colon != std::string::npos) {
        description_ = message_.substr(colon + 2);
      }
    }
    return Base::parse_error(position, last_token, ex);
  }

  [[nodiscard]] bool tooDeep() const { return too_deep_; }
  [[nodiscard]] bool syntaxError() const { return syntax_error_; }
  // nlohmann's position: the number of characters read, so 1-based.
  [[nodiscard]] std::size_t position() const { return position_; }
  [[nodiscard]] const std::string& message() const { return message_; }
  [[nodiscard]] const std::string& description() const { return description_; }

 private:
  bool enter() {
    if (++depth_ > kMaxJsonDepth) {
      too_deep_ = true;
      return false;
    }
    return true;
  }

  int depth_ = 0;
  bool too_deep_ = false;
  bool syntax_error_ = false;
  std::size_t position_ = 0;
  std::string message_;
  std::string description_;
};

// A read-only stream over a string_view, so that a stream of values is parsed without copies
// and the number of bytes consumed is known.
class ViewBuffer : public std::streambuf {
 public:
  explicit ViewBuffer(std::string_view text) {
    char* begin = const_cast<char*>(text.data());  // never written: no put area
    setg(begin, begin, begin + text.size());
  }
  [[nodiscard]] std::size_t consumed() const { return static_cast<std::size_t>(gptr() - eback()); }
};

// The failure of a parse that started at text[start].
template <class BasicJson>
Error failure(const DepthLimitedDomParser<BasicJson>& sax, std::string_view text,
              std::size_t start, JsonError* detail) {
  JsonError error;
  if (sax.tooDeep()) {
    error.too_deep = true;
    const std::size_t at = tooDeepOffset(text.substr(start));
    error.offset = start + (at == std::string_view::npos ? 0 : at);
    const char bracket = error.offset < text.size() ? text[error.offset] : '[';
    // scanner.go: s.error(c, "exceeded max depth") -> "invalid character " + quoteChar(c) + ...
    error.message = std::string("invalid character '") + bracket + "' exceeded max depth";
  } else {
    error.offset = start + (sax.position() > 0 ? sax.position() - 1 : 0);
    error.message = sax.syntaxError() ? sax.message() : "invalid JSON";
    if (sax.syntaxError()) error.description = sax.description();
  }
  Error out{error.message, ErrorCode::kDecode, {}, error.description};
  if (detail != nullptr) *detail = std::move(error);
  return out;
}

// A fast path for parseWhole: most of the JSON read here is large (audit log lines of kilobytes,
// object files, webhook bodies) and nlohmann's lexer reads it one character at a time. simdjson
// validates and parses the text (UTF-8 included) several times faster; its DOM is then copied
// into the same value nlohmann's DOM parser builds (unsigned for non-negative integers, signed
// for negative ones, double for the rest; duplicate keys: the last value wins at the first key's
// place, as nlohmann's operator[] does). Whatever simdjson refuses -- every syntax error, bad
// UTF-8, integers beyond 64 bits, nesting beyond its 1,024 levels -- goes to nlohmann, which
// accepts or words the error as it always did. One difference in kind only: "-0" is an unsigned
// 0 here and a signed 0 from nlohmann (the same number, dumped the same).
class SimdjsonParser {
 public:
  template <class BasicJson>
  bool parse(std::string_view text, BasicJson& root) {
    simdjson::dom::element element;
    if (parser_.parse(text.data(), text.size(), /*realloc_if_needed=*/true).get(element) !=
        simdjson::SUCCESS) {
      return false;
    }
    copy(element, root);
    return true;
  }

  // Recursion is bounded by simdjson's depth limit (DEFAULT_MAX_DEPTH, 1,024).
  template <class BasicJson>
  static void copy(simdjson::dom::element element, BasicJson& out) {
    switch (element.type()) {
      case simdjson::dom::element_type::OBJECT: {
        out = BasicJson(BasicJson::value_t::object);
        for (const auto field : simdjson::dom::object(element)) {
          copy(field.value, out[std::string(field.key)]);
        }
        break;
      }
      case simdjson::dom::element_type::ARRAY: {
        out = BasicJson(BasicJson::value_t::array);
        auto& items = out.template get_ref<typename BasicJson::array_t&>();
        const simdjson::dom::array array(element);
        items.reserve(array.size());
        for (const auto item : array) copy(item, items.emplace_back());
        break;
      }
      case simdjson::dom::element_type::STRING:
        out = std::string(std::string_view(element));
        break;
      case simdjson::dom::element_type::INT64: {
        const std::int64_t value = element.get_int64().value_unsafe();
        if (value >= 0) {
          out = static_cast<typename BasicJson::number_unsigned_t>(value);
        } else {
          out = static_cast<typename BasicJson::number_integer_t>(value);
        }
        break;
      }
      case simdjson::dom::element_type::UINT64:
        out = static_cast<typename BasicJson::number_unsigned_t>(
            element.get_uint64().value_unsafe());
        break;
      case simdjson::dom::element_type::DOUBLE:
        out = static_cast<typename BasicJson::number_float_t>(element.get_double().value_unsafe());
        break;
      case simdjson::dom::element_type::BOOL:
        out = element.get_bool().value_unsafe();
        break;
      case simdjson::dom::element_type::NULL_VALUE:
        out = nullptr;
        break;
    }
  }

 private:
  simdjson::dom::parser parser_;
};

// One simdjson parser per thread keeps its buffers between documents, which is what makes it
// fast on a stream of audit lines or webhook bodies; a document over 1 MiB gets a parser of its
// own, freed with it, so that one huge request does not keep its buffers for the thread's life.
template <class BasicJson>
bool parseWithSimdjson(std::string_view text, BasicJson& root) {
  constexpr std::size_t kKeptBufferLimit = std::size_t{1} << 20;
  if (text.size() > kKeptBufferLimit) return SimdjsonParser().parse(text, root);
  thread_local SimdjsonParser parser;
  return parser.parse(text, root);
}

template <class BasicJson>
Result<BasicJson> parseWhole(std::string_view text, JsonError* detail) {
  BasicJson value;
  if (parseWithSimdjson(text, value)) return value;
  value = BasicJson();
  DepthLimitedDomParser<BasicJson> sax(value);
  const bool ok = BasicJson::sax_parse(text.data(), text.data() + text.size(), &sax,
                                       nlohmann::json::input_format_t::json, /*strict=*/true);
  if (!ok || sax.tooDeep() || sax.syntaxError()) return failure(sax, text, 0, detail);
  return value;
}

}  // namespace

void copyFromSimdjson(simdjson::dom::element element, nlohmann::json& out) {
  SimdjsonParser::copy(element, out);
}

Result<nlohmann::json> parseJson(std::string_view text, JsonError* detail) {
  return parseWhole<nlohmann::json>(text, detail);
}

Result<nlohmann::ordered_json> parseOrderedJson(std::string_view text, JsonError* detail) {
  return parseWhole<nlohmann::ordered_json>(text, detail);
}

nlohmann::json parseJsonOrDiscarded(std::string_view text) {
  auto parsed = parseJson(text);
  if (!parsed) return nlohmann::json(nlohmann::json::value_t::discarded);
  return std::move(*parsed);
}

Result<nlohmann::json> parseJsonAt(std::string_view text, std::size_t& offset,
                                   JsonError* detail) {
  const std::size_t start = std::min(offset, text.size());
  ViewBuffer buffer(text.substr(start));
  std::istream in(&buffer);
  nlohmann::json value;
  DepthLimitedDomParser<nlohmann::json> sax(value);
  const bool ok = nlohmann::json::sax_parse(in, &sax, nlohmann::json::input_format_t::json,
                                            /*strict=*/false);
  if (!ok || sax.tooDeep() || sax.syntaxError()) return failure(sax, text, start, detail);
  offset = start + buffer.consumed();
  return value;
}

const nlohmann::json* findTooDeep(const nlohmann::json& value, int max_depth) {
  std::vector<std::pair<const nlohmann::json*, int>> stack = {{&value, 1}};
  while (!stack.empty()) {
    const auto [v, depth] = stack.back();
    stack.pop_back();
    if (!v->is_structured()) continue;
    if (depth > max_depth) return v;
    // Children in reverse, so that the first one is visited first.
    const std::size_t first = stack.size();
    for (const auto& child : *v) stack.emplace_back(&child, depth + 1);
    std::reverse(stack.begin() + static_cast<std::ptrdiff_t>(first), stack.end());
  }
  return nullptr;
}

namespace {

// nlohmann's dump() for one value (floats, strings that are not valid UTF-8, binary).
void appendNlohmann(std::string& out, const nlohmann::json& value) {
  out += value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A string as nlohmann's serializer writes it with ensure_ascii off (serializer.hpp
// dump_escaped): the two-character escapes, other bytes below 0x20 as \u00xx (lower-case hex),
// everything else as is. Its byte-by-byte UTF-8 state machine was a third of the Linkerd
// webhook's instructions; here runs of plain bytes are copied at once, and a string with bytes
// above 0x7f that is not valid UTF-8 goes to nlohmann for its replacement characters.
// False (and `out` as it was) when `s` has bytes above 0x7f and is not valid UTF-8.
bool appendEscaped(std::string& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  const char* p = s.data();
  const char* const end = p + s.size();
  const std::size_t start = out.size();
  // A long string (an answer's base64 patch, 12 kB for a Linkerd pod) grows `out` once.
  if (s.size() > 256) out.reserve(out.size() + s.size() + 2);
  out.push_back('"');
  bool checked = false;
  while (p < end) {
    const char* run = p;
#if defined(__SSE2__)
    // Sixteen bytes at a time while none needs a look: a signed compare below 0x20 flags the
    // control bytes and those above 0x7f (negative) together.
    while (end - p >= 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
      const __m128i flagged =
          _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)),
                       _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
                                    _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))));
      if (_mm_movemask_epi8(flagged) != 0) break;
      p += 16;
    }
#endif
    // Eight bytes at a time while none needs a look (SWAR: no byte below 0x20, above 0x7f, '"'
    // or '\\'), then byte by byte.
    while (end - p >= 8) {
      std::uint64_t w;
      std::memcpy(&w, p, 8);
      constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
      constexpr std::uint64_t kHigh = 0x8080808080808080ULL;
      const std::uint64_t quote = w ^ (kOnes * '"');
      const std::uint64_t backslash = w ^ (kOnes * '\\');
      // Bit-twiddling hacks' haszero / hasless: never miss a byte (may see one too many).
      const std::uint64_t flagged = (((w - kOnes * 0x20) & ~w) | ((quote - kOnes) & ~quote) |
                                     ((backslash - kOnes) & ~backslash) | w) &
                                    kHigh;
      if (flagged != 0) break;
      p += 8;
    }
    while (p < end) {
      const auto c = static_cast<unsigned char>(*p);
      if (c < 0x20 || c == '"' || c == '\\') break;
      if (c >= 0x80 && !checked) {
        if (!isValidUtf8(s)) {
          out.resize(start);
          return false;
        }
        checked = true;
      }
      ++p;
    }
    out.append(run, static_cast<std::size_t>(p - run));
    if (p == end) break;
    const auto c = static_cast<unsigned char>(*p++);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\b': out += "\\b"; break;
      case '\t': out += "\\t"; break;
      case '\n': out += "\\n"; break;
      case '\f': out += "\\f"; break;
      case '\r': out += "\\r"; break;
      default: {
        const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
        out.append(escaped, sizeof escaped);
      }
    }
  }
  out.push_back('"');
  return true;
}

void appendString(std::string& out, const nlohmann::json& value) {
  if (!appendEscaped(out, value.get_ref<const std::string&>())) appendNlohmann(out, value);
}

void appendJson(std::string& out, const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (auto it = value.begin(); it != value.end(); ++it) {
        if (!first) out.push_back(',');
        first = false;
        if (!appendEscaped(out, it.key())) appendNlohmann(out, nlohmann::json(it.key()));
        out.push_back(':');
        appendJson(out, *it);
      }
      out.push_back('}');
      return;
    }
    case nlohmann::json::value_t::array: {
      out.push_back('[');
      bool first = true;
      for (const auto& element : value) {
        if (!first) out.push_back(',');
        first = false;
        appendJson(out, element);
      }
      out.push_back(']');
      return;
    }
    case nlohmann::json::value_t::string:
      appendString(out, value);
      return;
    case nlohmann::json::value_t::boolean:
      out += value.get<bool>() ? "true" : "false";
      return;
    case nlohmann::json::value_t::null:
      out += "null";
      return;
    case nlohmann::json::value_t::number_integer: {
      char buffer[24];
      const auto r = std::to_chars(buffer, buffer + sizeof buffer, value.get<std::int64_t>());
      out.append(buffer, r.ptr);
      return;
    }
    case nlohmann::json::value_t::number_unsigned: {
      char buffer[24];
      const auto r = std::to_chars(buffer, buffer + sizeof buffer, value.get<std::uint64_t>());
      out.append(buffer, r.ptr);
      return;
    }
    default:  // floats, binary, discarded
      appendNlohmann(out, value);
      return;
  }
}

}  // namespace

std::string dumpJson(const nlohmann::json& value) { return dumpJson(value, 0); }

std::string dumpJson(const nlohmann::json& value, std::size_t expected_size) {
  std::string out;
  out.reserve(expected_size);
  appendJson(out, value);
  return out;
}

std::size_t tooDeepOffset(std::string_view text, int max_depth) {
  int depth = 0;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped byte cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '[':
      case '{':
        if (++depth > max_depth) return i;
        break;
      case ']':
      case '}':
        if (depth > 0) --depth;
        break;
      default:
        break;
    }
  }
  return std::string_view::npos;
}

}  // namespace harness::core
