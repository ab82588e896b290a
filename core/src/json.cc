#include "harness/core/json.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <istream>
#include <streambuf>
#include <utility>
#include <vector>

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
    message_ = ex.what();
    // Drop nlohmann's "[json.exception.parse_error.101] " tag; keep "parse error at line 1, ...".
    if (const auto pos = message_.find("] ");
        message_.rfind("[json.exception.", 0) == 0 && pos != std::string::npos) {
      message_.erase(0, pos + 2);
    }
    return Base::parse_error(position, last_token, ex);
  }

  [[nodiscard]] bool tooDeep() const { return too_deep_; }
  [[nodiscard]] bool syntaxError() const { return syntax_error_; }
  // nlohmann's position: the number of characters read, so 1-based.
  [[nodiscard]] std::size_t position() const { return position_; }
  [[nodiscard]] const std::string& message() const { return message_; }

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
  }
  Error out{error.message};
  if (detail != nullptr) *detail = std::move(error);
  return out;
}

// A fast path for parseWhole: most of the JSON read here is large (audit log lines of kilobytes,
// object files, webhook bodies) and nlohmann's lexer reads it one character at a time. This
// parser builds the same value as nlohmann's DOM parser (same types: unsigned for non-negative
// integers, signed for negative ones, double beyond them or with a fraction or exponent;
// duplicate keys: the last value wins at the first key's place) for the text it is sure about,
// and gives up on anything else -- every error, a byte order mark, nesting beyond kMaxJsonDepth,
// bytes that are not UTF-8 -- so that nlohmann parses that text and words its error as before.
// It is iterative: no recursion whatever the nesting.
template <class BasicJson>
class FastJsonParser {
 public:
  explicit FastJsonParser(std::string_view text)
      : p_(text.data()), end_(text.data() + text.size()) {}

  // False: let nlohmann parse the text (`root` is then unspecified).
  bool parse(BasicJson& root) {
    std::vector<BasicJson*> stack;
    BasicJson* slot = &root;
    while (true) {
      // A value into *slot.
      skipSpace();
      if (p_ == end_) return false;
      const char c = *p_;
      if (c == '{' || c == '[') {
        ++p_;
        if (stack.size() >= static_cast<std::size_t>(kMaxJsonDepth)) return false;
        const bool object = c == '{';
        *slot = object ? BasicJson(BasicJson::value_t::object)
                       : BasicJson(BasicJson::value_t::array);
        stack.push_back(slot);
        skipSpace();
        if (p_ < end_ && *p_ == (object ? '}' : ']')) {
          ++p_;
          stack.pop_back();
        } else {
          slot = object ? member(*stack.back()) : element(*stack.back());
          if (slot == nullptr) return false;
          continue;
        }
      } else if (!scalar(*slot)) {
        return false;
      }
      // After a value: the end of the text, or what follows it in its container.
      while (true) {
        skipSpace();
        if (stack.empty()) return p_ == end_;
        if (p_ == end_) return false;
        BasicJson& top = *stack.back();
        if (*p_ == ',') {
          ++p_;
          slot = top.is_object() ? member(top) : element(top);
          if (slot == nullptr) return false;
          break;
        }
        if (*p_ != (top.is_object() ? '}' : ']')) return false;
        ++p_;
        stack.pop_back();
      }
    }
  }

 private:
  void skipSpace() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }

  // `"key":` then the member's slot.
  BasicJson* member(BasicJson& object) {
    skipSpace();
    if (p_ == end_ || *p_ != '"') return nullptr;
    key_.clear();
    if (!string(key_)) return nullptr;
    skipSpace();
    if (p_ == end_ || *p_ != ':') return nullptr;
    ++p_;
    return &object[key_];
  }

  BasicJson* element(BasicJson& array) {
    auto& items = array.template get_ref<typename BasicJson::array_t&>();
    items.emplace_back();
    return &items.back();
  }

  bool literal(std::string_view word) {
    if (static_cast<std::size_t>(end_ - p_) < word.size() ||
        std::string_view(p_, word.size()) != word) {
      return false;
    }
    p_ += word.size();
    return true;
  }

  bool scalar(BasicJson& out) {
    switch (*p_) {
      case '"': {
        std::string text;
        if (!string(text)) return false;
        out = std::move(text);
        return true;
      }
      case 't':
        out = true;
        return literal("true");
      case 'f':
        out = false;
        return literal("false");
      case 'n':
        out = nullptr;
        return literal("null");
      default:
        return number(out);
    }
  }

  // JSON's number grammar; integers as nlohmann's lexer converts them (strtoull for a
  // non-negative one, strtoll for a negative one, a double when they overflow), other numbers
  // by nlohmann itself, so that they convert exactly as they always did.
  bool number(BasicJson& out) {
    const char* const start = p_;
    const bool negative = *p_ == '-';
    if (negative) ++p_;
    if (p_ == end_ || *p_ < '0' || *p_ > '9') return false;
    bool overflow = false;
    std::uint64_t magnitude = 0;
    if (*p_ == '0') {
      ++p_;
    } else {
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
        overflow = overflow || __builtin_mul_overflow(magnitude, 10u, &magnitude) ||
                   __builtin_add_overflow(magnitude, static_cast<unsigned>(*p_ - '0'), &magnitude);
        ++p_;
      }
    }
    bool integer = true;
    if (p_ < end_ && *p_ == '.') {
      integer = false;
      ++p_;
      if (!digits()) return false;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      integer = false;
      ++p_;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digits()) return false;
    }
    if (integer && !overflow) {
      if (!negative) {
        out = static_cast<typename BasicJson::number_unsigned_t>(magnitude);
        return true;
      }
      constexpr std::uint64_t kMinMagnitude = std::uint64_t{1} << 63;
      if (magnitude <= kMinMagnitude) {
        out = magnitude == kMinMagnitude
                  ? std::numeric_limits<typename BasicJson::number_integer_t>::min()
                  : -static_cast<typename BasicJson::number_integer_t>(magnitude);
        return true;
      }
    }
    auto parsed = BasicJson::parse(start, p_, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) return false;
    out = std::move(parsed);
    return true;
  }

  bool digits() {
    const char* const first = p_;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
    return p_ != first;
  }

  static int hex(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // The 4 hex digits after "\u".
  bool codeUnit(unsigned& out) {
    if (end_ - p_ < 4) return false;
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const int digit = hex(p_[i]);
      if (digit < 0) return false;
      out = out * 16 + static_cast<unsigned>(digit);
    }
    p_ += 4;
    return true;
  }

  // The length of the well-formed UTF-8 sequence at p_ (RFC 3629, the ranges nlohmann's lexer
  // accepts), 0 when it is not one.
  [[nodiscard]] std::size_t utf8Length() const {
    const auto byte = [this](std::ptrdiff_t i) {
      return i < end_ - p_ ? static_cast<unsigned char>(p_[i]) : 0u;
    };
    const auto in = [](unsigned b, unsigned low, unsigned high) { return b >= low && b <= high; };
    const unsigned b0 = byte(0);
    if (in(b0, 0xC2, 0xDF)) return in(byte(1), 0x80, 0xBF) ? 2 : 0;
    if (in(b0, 0xE0, 0xEF)) {
      const unsigned low = b0 == 0xE0 ? 0xA0 : 0x80;
      const unsigned high = b0 == 0xED ? 0x9F : 0xBF;
      return in(byte(1), low, high) && in(byte(2), 0x80, 0xBF) ? 3 : 0;
    }
    if (in(b0, 0xF0, 0xF4)) {
      const unsigned low = b0 == 0xF0 ? 0x90 : 0x80;
      const unsigned high = b0 == 0xF4 ? 0x8F : 0xBF;
      return in(byte(1), low, high) && in(byte(2), 0x80, 0xBF) && in(byte(3), 0x80, 0xBF) ? 4
                                                                                            : 0;
    }
    return 0;
  }

  // A string starting at its opening quote, appended to `out`.
  bool string(std::string& out) {
    ++p_;
    while (true) {
      const char* const run = p_;
      while (p_ < end_) {
        const auto c = static_cast<unsigned char>(*p_);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) break;
        ++p_;
      }
      out.append(run, p_);
      if (p_ == end_) return false;
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c < 0x20) return false;
      if (c >= 0x80) {
        const std::size_t length = utf8Length();
        if (length == 0) return false;
        out.append(p_, length);
        p_ += length;
        continue;
      }
      // An escape.
      if (++p_ == end_) return false;
      const char e = *p_++;
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out.push_back(e);
          break;
        case 'b':
          out.push_back('\b');
          break;
        case 'f':
          out.push_back('\f');
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 'r':
          out.push_back('\r');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'u': {
          unsigned unit = 0;
          if (!codeUnit(unit)) return false;
          if (unit >= 0xDC00 && unit <= 0xDFFF) return false;
          if (unit >= 0xD800 && unit <= 0xDBFF) {
            unsigned low = 0;
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
            p_ += 2;
            if (!codeUnit(low) || low < 0xDC00 || low > 0xDFFF) return false;
            unit = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
          }
          appendUtf8Unchecked(out, static_cast<char32_t>(unit));
          break;
        }
        default:
          return false;
      }
    }
  }

  const char* p_;
  const char* const end_;
  std::string key_;
};

template <class BasicJson>
Result<BasicJson> parseWhole(std::string_view text, JsonError* detail) {
  BasicJson value;
  if (FastJsonParser<BasicJson>(text).parse(value)) return value;
  value = BasicJson();
  DepthLimitedDomParser<BasicJson> sax(value);
  const bool ok = BasicJson::sax_parse(text.data(), text.data() + text.size(), &sax,
                                       nlohmann::json::input_format_t::json, /*strict=*/true);
  if (!ok || sax.tooDeep() || sax.syntaxError()) return failure(sax, text, 0, detail);
  return value;
}

}  // namespace

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

std::string dumpJson(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
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
