#include "harness/core/yaml.h"

#include "harness/core/yaml_reference.h"

// Upstream behaviour followed here:
//   * go-yaml v2 as vendored by sigs.k8s.io/yaml (goyaml.v2/resolve.go: resolve, the resolve map,
//     yamlStyleFloat, parseTimestamp; decode.go: scalar, mapping, merge, alias, the excessive
//     aliasing guard; readerc.go: accepted characters; encode.go: stringv, isBase60Float, floatv;
//     emitterc.go: yaml_emitter_analyze_scalar, select_scalar_style, check_simple_key and the
//     scalar writers).
//   * sigs.k8s.io/yaml yaml.go: YAMLToJSON / convertToJSONableObject (key stringification) and
//     JSONToYAML (what kubectl prints).
//   * Go's strconv (ParseInt/ParseUint with base 0, ParseFloat, FormatFloat 'g'),
//     encoding/base64 (!!binary) and encoding/json's float64 encoder: harness/go's.
//   * k8s.io/apimachinery util/yaml/decoder.go (JSON detection) and cli-runtime
//     resource/visitor.go (empty and null documents are skipped).

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <variant>

#include <libfyaml.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>

#include "harness/core/json.h"
#include "harness/core/utf8.h"
#include "harness/go/base64.h"
#include "harness/go/json.h"
#include "harness/go/strconv.h"

namespace harness::core {

namespace {

using nlohmann::json;

// ---------------------------------------------------------------------------------------------
// UTF-8

// Go's encoding/json writes invalid UTF-8 as U+FFFD; so do we, which also keeps json::dump safe.
std::string sanitizeUtf8(std::string s) {
  if (isValidUtf8(s)) return s;
  return replaceInvalidUtf8(s);
}

struct TextPosition {
  size_t line = 1;
  size_t column = 1;
};

TextPosition positionOf(std::string_view text, size_t offset) {
  TextPosition pos;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++pos.line;
      pos.column = 1;
    } else {
      ++pos.column;
    }
  }
  return pos;
}

std::string locate(size_t document, size_t line, size_t column, std::string_view what) {
  return "document " + std::to_string(document) + ", line " + std::to_string(line) + ", column " +
         std::to_string(column) + ": " + std::string(what);
}

// The characters go-yaml's reader accepts (readerc.go yaml_parser_update_buffer): anything else
// fails the whole stream before parsing starts. yaml-cpp is laxer, so check first.
std::optional<Error> checkCharacters(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const Rune r = decodeUtf8(text, i);
    const char32_t cp = r.code_point;
    const bool allowed =
        r.valid &&
        (cp == 0x09 || cp == 0x0A || cp == 0x0D || (cp >= 0x20 && cp <= 0x7E) || cp == 0x85 ||
         (cp >= 0xA0 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) || cp >= 0x10000);
    if (!allowed) {
      const TextPosition pos = positionOf(text, i);
      // The document index is that of the text before the offending byte.
      size_t document = 1;
      for (size_t k = 0; k + 3 <= i; ++k) {
        if ((k == 0 || text[k - 1] == '\n') && text.substr(k, 3) == "---") ++document;
      }
      if (text.substr(0, 3) == "---") --document;
      if (document == 0) document = 1;
      return makeError(
          locate(document, pos.line, pos.column,
                 !r.valid ? "invalid UTF-8 byte sequence" : "control characters are not allowed"));
    }
    i += r.length;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Go strconv semantics

char lowerAscii(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

bool isDigit(char c) { return c >= '0' && c <= '9'; }

// ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ (resolve.go yamlStyleFloat)
bool matchesYamlStyleFloat(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  if (i < s.size() && s[i] == '.') {
    ++i;
    const size_t start = i;
    while (i < s.size() && isDigit(s[i])) ++i;
    if (i == start) return false;
  } else {
    const size_t start = i;
    while (i < s.size() && isDigit(s[i])) ++i;
    if (i == start) return false;
    if (i < s.size() && s[i] == '.') {
      ++i;
      while (i < s.size() && isDigit(s[i])) ++i;
    }
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    const size_t start = i;
    while (i < s.size() && isDigit(s[i])) ++i;
    if (i == start) return false;
  }
  return i == s.size();
}

// strconv.FormatFloat(v, 'g', -1, 64) with go-yaml's spellings of the non-finite values
// (encode.go floatv).
std::string formatYamlFloat(double v) {
  if (std::isnan(v)) return ".nan";
  if (std::isinf(v)) return v > 0 ? ".inf" : "-.inf";
  return go::formatFloat(v);
}

// A number's JSON text read back by nlohmann, exactly as if the JSON had been written by Go and
// parsed as JSON (so 1.0 becomes the integer 1).
json jsonNumber(const std::string& text) { return std::move(parseJson(text).value()); }

// ---------------------------------------------------------------------------------------------
// Timestamps (resolve.go parseTimestamp): only used to decide whether an explicit !!timestamp
// value is acceptable and whether a string must be quoted on output; the value stays a string.

bool parseDigits(std::string_view s, size_t& i, size_t min, size_t max, int& value) {
  const size_t start = i;
  value = 0;
  while (i < s.size() && isDigit(s[i]) && i - start < max) {
    value = value * 10 + (s[i] - '0');
    ++i;
  }
  return i - start >= min;
}

bool validDate(int year, int month, int day) {
  if (month < 1 || month > 12 || day < 1) return false;
  static constexpr std::array<int, 12> kDays = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (day > kDays[static_cast<size_t>(month - 1)]) return false;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return !(month == 2 && day == 29 && !leap);
}

// The four layouts go-yaml tries with time.Parse: "2006-1-2T15:4:5.999999999Z07:00",
// the same with a lower-case t, "2006-1-2 15:4:5.999999999" and "2006-1-2".
bool isYamlTimestamp(std::string_view s) {
  size_t i = 0;
  int year = 0;
  int month = 0;
  int day = 0;
  if (!parseDigits(s, i, 4, 4, year) || i >= s.size() || s[i] != '-') return false;
  ++i;
  if (!parseDigits(s, i, 1, 2, month) || i >= s.size() || s[i] != '-') return false;
  ++i;
  if (!parseDigits(s, i, 1, 2, day) || !validDate(year, month, day)) return false;
  if (i == s.size()) return true;
  const char sep = s[i];
  if (sep != 'T' && sep != 't' && sep != ' ') return false;
  ++i;
  int hour = 0;
  int minute = 0;
  int second = 0;
  if (!parseDigits(s, i, 1, 2, hour) || hour > 23 || i >= s.size() || s[i] != ':') return false;
  ++i;
  if (!parseDigits(s, i, 1, 2, minute) || minute > 59 || i >= s.size() || s[i] != ':') {
    return false;
  }
  ++i;
  if (!parseDigits(s, i, 1, 2, second) || second > 59) return false;
  if (i < s.size() && (s[i] == '.' || s[i] == ',')) {
    ++i;
    const size_t start = i;
    while (i < s.size() && isDigit(s[i])) ++i;
    if (i == start) return false;
  }
  if (sep == ' ') return i == s.size();
  if (i == s.size()) return false;
  if (s[i] == 'Z') return i + 1 == s.size();
  if (s[i] != '+' && s[i] != '-') return false;
  ++i;
  int tz_hour = 0;
  int tz_minute = 0;
  if (!parseDigits(s, i, 2, 2, tz_hour) || i >= s.size() || s[i] != ':') return false;
  ++i;
  if (!parseDigits(s, i, 2, 2, tz_minute)) return false;
  return i == s.size() && tz_hour <= 23 && tz_minute <= 59;
}

// ---------------------------------------------------------------------------------------------
// Scalar resolution (resolve.go resolve)

enum class Tag { kNone, kNull, kBool, kInt, kFloat, kStr, kTimestamp, kMerge, kBinary };

std::string_view tagName(Tag tag) {
  switch (tag) {
    case Tag::kNull:
      return "!!null";
    case Tag::kBool:
      return "!!bool";
    case Tag::kInt:
      return "!!int";
    case Tag::kFloat:
      return "!!float";
    case Tag::kStr:
      return "!!str";
    case Tag::kTimestamp:
      return "!!timestamp";
    case Tag::kMerge:
      return "!!merge";
    case Tag::kBinary:
      return "!!binary";
    case Tag::kNone:
      break;
  }
  return "";
}

struct Resolved {
  enum class Kind { kNull, kBool, kInt, kUint, kFloat, kBigInt, kString };
  Tag tag = Tag::kStr;
  Kind kind = Kind::kString;
  bool boolean = false;
  int64_t integer = 0;
  uint64_t unsigned_integer = 0;
  double floating = 0;
  std::string text;  // the string, or the digits of a big integer (with its base prefix)

  static Resolved ofNull() { return {Tag::kNull, Kind::kNull}; }
  static Resolved ofBool(bool b) {
    Resolved r{Tag::kBool, Kind::kBool};
    r.boolean = b;
    return r;
  }
  static Resolved ofInt(int64_t v) {
    Resolved r{Tag::kInt, Kind::kInt};
    r.integer = v;
    return r;
  }
  static Resolved ofUint(uint64_t v) {
    Resolved r{Tag::kInt, Kind::kUint};
    r.unsigned_integer = v;
    return r;
  }
  static Resolved ofFloat(double v) {
    Resolved r{Tag::kFloat, Kind::kFloat};
    r.floating = v;
    return r;
  }
  static Resolved ofString(Tag tag, std::string_view s) {
    Resolved r{tag, Kind::kString};
    r.text = std::string(s);
    return r;
  }
};

std::optional<Resolved> lookupResolveMap(std::string_view in) {
  static constexpr std::array<std::string_view, 11> kTrue = {
      "y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"};
  static constexpr std::array<std::string_view, 11> kFalse = {
      "n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"};
  if (std::find(kTrue.begin(), kTrue.end(), in) != kTrue.end()) return Resolved::ofBool(true);
  if (std::find(kFalse.begin(), kFalse.end(), in) != kFalse.end()) return Resolved::ofBool(false);
  if (in.empty() || in == "~" || in == "null" || in == "Null" || in == "NULL") {
    return Resolved::ofNull();
  }
  if (in == ".nan" || in == ".NaN" || in == ".NAN") {
    return Resolved::ofFloat(std::numeric_limits<double>::quiet_NaN());
  }
  if (in == ".inf" || in == ".Inf" || in == ".INF" || in == "+.inf" || in == "+.Inf" ||
      in == "+.INF") {
    return Resolved::ofFloat(HUGE_VAL);
  }
  if (in == "-.inf" || in == "-.Inf" || in == "-.INF") return Resolved::ofFloat(-HUGE_VAL);
  if (in == "<<") return Resolved::ofString(Tag::kMerge, in);
  return std::nullopt;
}

char resolveHint(char c) {
  if (c == '+' || c == '-') return 'S';
  if (isDigit(c)) return 'D';
  if (std::strchr("yYnNtTfFoO~", c) != nullptr && c != '\0') return 'M';
  if (c == '.') return '.';
  return 0;
}

// big.Int.SetString(s, 0) for an unsigned literal: the base-10 digits, or nullopt.
std::optional<std::string> bigIntDecimal(std::string_view s) {
  int base = 10;
  if (s.size() >= 2 && s[0] == '0') {
    const char p = lowerAscii(s[1]);
    if (p == 'x' || p == 'b' || p == 'o') {
      base = p == 'x' ? 16 : (p == 'b' ? 2 : 8);
      s.remove_prefix(2);
    } else {
      base = 8;
      s.remove_prefix(1);
    }
  }
  if (s.empty()) return std::nullopt;
  std::vector<int> digits = {0};  // little-endian base-10
  for (const char c : s) {
    int d = 0;
    if (isDigit(c)) {
      d = c - '0';
    } else if (lowerAscii(c) >= 'a' && lowerAscii(c) <= 'f') {
      d = lowerAscii(c) - 'a' + 10;
    } else {
      return std::nullopt;
    }
    if (d >= base) return std::nullopt;
    int carry = d;
    for (int& digit : digits) {
      const int v = digit * base + carry;
      digit = v % 10;
      carry = v / 10;
    }
    while (carry > 0) {
      digits.push_back(carry % 10);
      carry /= 10;
    }
  }
  std::string out;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it)
    out.push_back(static_cast<char>('0' + *it));
  const size_t nz = out.find_first_not_of('0');
  return nz == std::string::npos ? "0" : out.substr(nz);
}

// go-yaml v2 resolve(tag, in) without the tag check (see resolveTagged).
Resolved resolveUnchecked(Tag tag, std::string_view in) {
  const char hint = in.empty() ? 'N' : resolveHint(in[0]);
  if (hint != 0 && tag != Tag::kStr && tag != Tag::kBinary) {
    if (auto item = lookupResolveMap(in)) return *item;
    switch (hint) {
      case '.':
        if (auto f = go::parseFloat(in)) return Resolved::ofFloat(*f);
        break;
      case 'D':
      case 'S': {
        if ((tag == Tag::kNone || tag == Tag::kTimestamp) && isYamlTimestamp(in)) {
          return Resolved::ofString(Tag::kTimestamp, in);
        }
        std::string plain;
        plain.reserve(in.size());
        for (const char c : in) {
          if (c != '_') plain.push_back(c);
        }
        if (const go::IntParse i = go::parseIntDetailed(plain, 0, 64); i.error == go::NumError::kNone) {
          return Resolved::ofInt(i.value);
        }
        const go::UintParse u = go::parseUintDetailed(plain, 0, 64);
        if (u.error == go::NumError::kNone) return Resolved::ofUint(u.value);
        if (matchesYamlStyleFloat(plain)) {
          if (auto f = go::parseFloat(plain)) return Resolved::ofFloat(*f);
        }
        const std::string_view p = plain;
        if (p.substr(0, 2) == "0b") {
          if (const go::IntParse i = go::parseIntDetailed(p.substr(2), 2, 64);
              i.error == go::NumError::kNone) {
            return Resolved::ofInt(i.value);
          }
          if (const go::UintParse b = go::parseUintDetailed(p.substr(2), 2, 64);
              b.error == go::NumError::kNone) {
            return Resolved::ofUint(b.value);
          }
        } else if (p.substr(0, 3) == "-0b") {
          if (const go::IntParse i = go::parseIntDetailed("-" + std::string(p.substr(3)), 2, 64);
              i.error == go::NumError::kNone) {
            return Resolved::ofInt(i.value);
          }
        }
        if (u.error == go::NumError::kRange) {
          if (auto big = bigIntDecimal(plain)) {
            Resolved r{Tag::kInt, Resolved::Kind::kBigInt};
            r.text = *big;
            return r;
          }
        }
        break;
      }
      default:
        break;
    }
  }
  return Resolved::ofString(Tag::kStr, in);
}

struct ScalarError {
  std::string message;
};

// resolve() with its deferred check: a tagged value must resolve to its tag (an int is accepted
// as a !!float), otherwise "cannot decode !!str `x` as a !!int".
std::variant<Resolved, ScalarError> resolveTagged(Tag tag, std::string_view in) {
  Resolved r = resolveUnchecked(tag, in);
  if (tag == Tag::kNone || tag == Tag::kStr || tag == Tag::kBinary || tag == r.tag) return r;
  if (tag == Tag::kFloat && r.tag == Tag::kInt && r.kind == Resolved::Kind::kInt) {
    return Resolved::ofFloat(static_cast<double>(r.integer));
  }
  return ScalarError{"cannot decode " + std::string(tagName(r.tag)) + " `" + std::string(in) +
                     "` as a " + std::string(tagName(tag))};
}

// ---------------------------------------------------------------------------------------------
// The node tree of one document, built from yaml-cpp events (yaml-cpp reports plain untagged
// scalars with tag "?" and quoted or block ones with "!"; null-like plain scalars and empty
// nodes arrive as OnNull).

enum class NodeKind { kNull, kScalar, kSequence, kMapping, kAlias };

struct TreeNode {
  NodeKind kind = NodeKind::kNull;
  std::string tag;
  std::string value;
  std::string anchor;  // name, for messages
  YAML::Mark mark;
  std::vector<size_t> children;
  size_t target = 0;  // kAlias: the anchored node
};

class TreeBuilder : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override {
    // yaml-cpp reports an endless series of empty documents at a token it cannot start a node
    // with (e.g. a stray ',' at document level) without consuming it: stop at the second one.
    if (documents_started_ > 0 && mark.pos == last_document_pos_) {
      in_document_ = true;  // report it against the document that never started
      throw YAML::ParserException(mark, "did not find expected node content");
    }
    last_document_pos_ = mark.pos;
    nodes_.clear();
    anchors_.clear();
    open_.clear();
    root_.reset();
    pending_anchor_.clear();
    ++documents_started_;
    in_document_ = true;
  }
  void OnDocumentEnd() override { in_document_ = false; }

  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    add(TreeNode{NodeKind::kNull, "", "", "", mark, {}, 0}, anchor);
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    TreeNode n{NodeKind::kAlias, "", "", "", mark, {}, 0};
    const auto it = anchors_.find(anchor);
    n.target = it == anchors_.end() ? 0 : it->second;
    add(std::move(n), YAML::NullAnchor);
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                const std::string& value) override {
    add(TreeNode{NodeKind::kScalar, tag, value, "", mark, {}, 0}, anchor);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                       YAML::EmitterStyle::value /*style*/) override {
    open_.push_back(add(TreeNode{NodeKind::kSequence, tag, "", "", mark, {}, 0}, anchor));
  }
  void OnSequenceEnd() override { open_.pop_back(); }
  void OnMapStart(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t anchor,
                  YAML::EmitterStyle::value /*style*/) override {
    open_.push_back(add(TreeNode{NodeKind::kMapping, tag, "", "", mark, {}, 0}, anchor));
  }
  void OnMapEnd() override { open_.pop_back(); }
  void OnAnchor(const YAML::Mark& /*mark*/, const std::string& name) override {
    pending_anchor_ = name;
  }

  [[nodiscard]] const std::vector<TreeNode>& nodes() const { return nodes_; }
  [[nodiscard]] std::optional<size_t> root() const { return root_; }
  [[nodiscard]] size_t documentsStarted() const { return documents_started_; }
  [[nodiscard]] bool inDocument() const { return in_document_; }

 private:
  size_t add(TreeNode node, YAML::anchor_t anchor) {
    const size_t index = nodes_.size();
    if (anchor != YAML::NullAnchor) {
      node.anchor = std::move(pending_anchor_);
      anchors_[anchor] = index;
    }
    pending_anchor_.clear();
    nodes_.push_back(std::move(node));
    if (open_.empty()) {
      if (!root_) root_ = index;
    } else {
      nodes_[open_.back()].children.push_back(index);
    }
    return index;
  }

  std::vector<TreeNode> nodes_;
  std::map<YAML::anchor_t, size_t> anchors_;
  std::vector<size_t> open_;
  std::optional<size_t> root_;
  std::string pending_anchor_;
  size_t documents_started_ = 0;
  int last_document_pos_ = -1;
  bool in_document_ = false;
};

// ---------------------------------------------------------------------------------------------
// Node tree -> JSON (decode.go + yaml.go convertToJSONableObject + json.Marshal)

struct DecodeError {
  YAML::Mark mark;
  std::string message;
};

constexpr std::string_view kYamlTagPrefix = "tag:yaml.org,2002:";

Tag tagOf(const std::string& tag) {
  if (tag == "?") return Tag::kNone;
  if (tag.rfind(kYamlTagPrefix, 0) == 0) {
    const std::string_view name = std::string_view(tag).substr(kYamlTagPrefix.size());
    if (name == "null") return Tag::kNull;
    if (name == "bool") return Tag::kBool;
    if (name == "int") return Tag::kInt;
    if (name == "float") return Tag::kFloat;
    if (name == "str") return Tag::kStr;
    if (name == "timestamp") return Tag::kTimestamp;
    if (name == "merge") return Tag::kMerge;
    if (name == "binary") return Tag::kBinary;
  }
  // "!" (quoted, block or explicitly non-specific) and every other tag: the value is a string.
  return Tag::kStr;
}

class Decoder {
 public:
  explicit Decoder(const std::vector<TreeNode>& nodes) : nodes_(nodes) {}

  json decode(size_t index, int depth) {
    const TreeNode& n = nodes_[index];
    count(n);
    if (depth > kMaxYamlDepth) {
      throw DecodeError{n.mark,
                        "exceeds the maximum nesting depth of " + std::to_string(kMaxYamlDepth)};
    }
    switch (n.kind) {
      case NodeKind::kNull:
        return nullptr;
      case NodeKind::kAlias: {
        AliasScope scope(*this, n);
        return decode(n.target, depth);
      }
      case NodeKind::kScalar:
        return scalarToJson(n, resolveNode(n));
      case NodeKind::kSequence: {
        json array = json::array();
        for (const size_t child : n.children) array.push_back(decode(child, depth + 1));
        return array;
      }
      case NodeKind::kMapping: {
        json object = json::object();
        decodeMappingInto(n, object, depth);
        return object;
      }
    }
    return nullptr;
  }

 private:
  // Alias expansion bookkeeping: cycle detection and go-yaml's excessive-aliasing guard.
  class AliasScope {
   public:
    AliasScope(Decoder& d, const TreeNode& alias) : d_(d), target_(alias.target) {
      if (d_.expanding_.count(target_) != 0) {
        throw DecodeError{alias.mark,
                          "anchor '" + d_.nodes_[target_].anchor + "' value contains itself"};
      }
      d_.expanding_.insert(target_);
      ++d_.alias_depth_;
    }
    ~AliasScope() {
      d_.expanding_.erase(target_);
      --d_.alias_depth_;
    }
    AliasScope(const AliasScope&) = delete;
    AliasScope& operator=(const AliasScope&) = delete;

   private:
    Decoder& d_;
    size_t target_;
  };

  static double allowedAliasRatio(int64_t decode_count) {
    constexpr double kLow = 400000;
    constexpr double kHigh = 4000000;
    const auto count = static_cast<double>(decode_count);
    if (count <= kLow) return 0.99;
    if (count >= kHigh) return 0.10;
    return 0.99 - 0.89 * ((count - kLow) / (kHigh - kLow));
  }

  void count(const TreeNode& n) {
    ++decode_count_;
    if (alias_depth_ > 0) ++alias_count_;
    if (alias_count_ > 100 && decode_count_ > 1000 &&
        static_cast<double>(alias_count_) / static_cast<double>(decode_count_) >
            allowedAliasRatio(decode_count_)) {
      throw DecodeError{n.mark, "document contains excessive aliasing"};
    }
  }

  const TreeNode& resolveAlias(const TreeNode& n) const {
    return n.kind == NodeKind::kAlias ? nodes_[n.target] : n;
  }

  Resolved resolveNode(const TreeNode& n) const {
    const Tag tag = tagOf(n.tag);
    if (tag == Tag::kBinary) {
      auto data = go::base64Decode(n.value);
      if (!data) throw DecodeError{n.mark, "!!binary value contains invalid base64 data"};
      return Resolved::ofString(Tag::kStr, *data);
    }
    if (tag == Tag::kMerge) return Resolved::ofString(Tag::kStr, n.value);
    auto r = resolveTagged(tag, n.value);
    if (auto* err = std::get_if<ScalarError>(&r)) throw DecodeError{n.mark, err->message};
    return std::get<Resolved>(std::move(r));
  }

  static json scalarToJson(const TreeNode& n, const Resolved& r) {
    switch (r.kind) {
      case Resolved::Kind::kNull:
        return nullptr;
      case Resolved::Kind::kBool:
        return r.boolean;
      case Resolved::Kind::kInt:
        return r.integer >= 0 ? json(static_cast<uint64_t>(r.integer)) : json(r.integer);
      case Resolved::Kind::kUint:
        return r.unsigned_integer;
      case Resolved::Kind::kBigInt:
        return jsonNumber(r.text);
      case Resolved::Kind::kFloat:
        if (!std::isfinite(r.floating)) {
          // json.Marshal: "json: unsupported value: +Inf"
          const std::string go =
              std::isnan(r.floating) ? "NaN" : (r.floating > 0 ? "+Inf" : "-Inf");
          throw DecodeError{n.mark, "json: unsupported value: " + go + " (`" + n.value +
                                        "` has no JSON representation)"};
        }
        return jsonNumber(go::jsonFloat(r.floating));
      case Resolved::Kind::kString:
        return sanitizeUtf8(r.text);
    }
    return nullptr;
  }

  // convertToJSONableObject's key conversion.
  std::string keyString(const TreeNode& key_node) {
    const TreeNode& k = resolveAlias(key_node);
    if (key_node.kind == NodeKind::kAlias) {
      AliasScope scope(*this, key_node);
      count(k);
    }
    if (k.kind == NodeKind::kSequence || k.kind == NodeKind::kMapping) {
      throw DecodeError{key_node.mark,
                        std::string("invalid map key: a ") +
                            (k.kind == NodeKind::kSequence ? "sequence" : "mapping") +
                            " cannot be a mapping key"};
    }
    if (k.kind == NodeKind::kNull) {
      throw DecodeError{key_node.mark, "unsupported map key of type: <nil> (a null key)"};
    }
    const Resolved r = resolveNode(k);
    switch (r.kind) {
      case Resolved::Kind::kString:
        return sanitizeUtf8(r.text);
      case Resolved::Kind::kBool:
        return r.boolean ? "true" : "false";
      case Resolved::Kind::kInt:
        return std::to_string(r.integer);
      case Resolved::Kind::kFloat:
        // yaml.go: strconv.FormatFloat(key, 'g', -1, 64), with .inf/-.inf/.nan for the others.
        return formatYamlFloat(r.floating);
      case Resolved::Kind::kNull:
        throw DecodeError{key_node.mark, "unsupported map key of type: <nil> (a null key)"};
      case Resolved::Kind::kUint:
        throw DecodeError{key_node.mark, "unsupported map key of type: uint64, key: " +
                                             std::to_string(r.unsigned_integer)};
      case Resolved::Kind::kBigInt:
        throw DecodeError{key_node.mark, "unsupported map key of type: *big.Int, key: " + r.text};
    }
    return {};
  }

  static bool isMergeKey(const TreeNode& k) {
    return k.kind == NodeKind::kScalar && k.value == "<<" &&
           (k.tag == "?" || tagOf(k.tag) == Tag::kMerge);
  }

  void decodeMappingInto(const TreeNode& mapping, json& out, int depth) {
    for (size_t i = 0; i + 1 < mapping.children.size(); i += 2) {
      const TreeNode& key = nodes_[mapping.children[i]];
      const size_t value = mapping.children[i + 1];
      count(key);
      if (isMergeKey(key)) {
        merge(value, out, depth + 1);
        continue;
      }
      std::string k = keyString(key);
      out[k] = decode(value, depth + 1);  // a later duplicate key overwrites an earlier one
    }
  }

  [[noreturn]] static void failWantMap(const TreeNode& n) {
    throw DecodeError{n.mark, "map merge requires map or sequence of maps as the value"};
  }

  // decode.go merge: the merged mapping's entries are written into `out` in place, so they
  // override keys written before the `<<` and are overridden by keys after it.
  void mergeOne(size_t index, json& out, int depth) {
    const TreeNode& n = nodes_[index];
    count(n);
    if (depth > kMaxYamlDepth) {
      throw DecodeError{n.mark,
                        "exceeds the maximum nesting depth of " + std::to_string(kMaxYamlDepth)};
    }
    if (n.kind == NodeKind::kMapping) {
      decodeMappingInto(n, out, depth);
    } else if (n.kind == NodeKind::kAlias) {
      if (nodes_[n.target].kind != NodeKind::kMapping) failWantMap(n);
      AliasScope scope(*this, n);
      mergeOne(n.target, out, depth + 1);
    } else {
      failWantMap(n);
    }
  }

  void merge(size_t index, json& out, int depth) {
    const TreeNode& n = nodes_[index];
    if (n.kind == NodeKind::kSequence) {
      count(n);
      // Step backwards as earlier nodes take precedence.
      for (auto it = n.children.rbegin(); it != n.children.rend(); ++it) {
        const TreeNode& item = nodes_[*it];
        if (item.kind == NodeKind::kAlias) {
          if (nodes_[item.target].kind != NodeKind::kMapping) failWantMap(item);
        } else if (item.kind != NodeKind::kMapping) {
          failWantMap(item);
        }
        mergeOne(*it, out, depth);
      }
      return;
    }
    mergeOne(index, out, depth);
  }

  const std::vector<TreeNode>& nodes_;
  std::set<size_t> expanding_;
  int alias_depth_ = 0;
  int64_t decode_count_ = 0;
  int64_t alias_count_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Stream parsing

bool isSkippableDocument(const json& doc) { return doc.is_null(); }

// Depth of a JSON value, without recursion.
int jsonDepth(const json& value) {
  int max_depth = 0;
  std::vector<std::pair<const json*, int>> stack = {{&value, 0}};
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    max_depth = std::max(max_depth, depth);
    if (max_depth > kMaxYamlDepth) return max_depth;
    if (v->is_structured()) {
      for (const auto& child : *v) stack.emplace_back(&child, depth + 1);
    }
  }
  return max_depth;
}

Result<std::vector<json>> parseJsonStream(std::string_view text) {
  std::vector<json> docs;
  size_t document = 0;
  size_t offset = 0;
  while (true) {
    offset = text.find_first_not_of(" \t\r\n\f\v", offset);
    if (offset == std::string_view::npos) break;
    const size_t start = offset;
    ++document;
    const auto tooDeep = [&] {
      const TextPosition pos = positionOf(text, start);
      return makeError(
          locate(document, pos.line, pos.column,
                 "exceeds the maximum nesting depth of " + std::to_string(kMaxYamlDepth)));
    };
    JsonError error;
    auto value = parseJsonAt(text, offset, &error);
    if (!value) {
      if (error.too_deep) return tooDeep();
      const TextPosition pos = positionOf(text, error.offset);
      const std::string& what = error.description.empty() ? error.message : error.description;
      return makeError(locate(document, pos.line, pos.column, what), ErrorCode::kDecode);
    }
    if (jsonDepth(*value) > kMaxYamlDepth) return tooDeep();
    if (!isSkippableDocument(*value)) docs.push_back(std::move(*value));
  }
  return docs;
}

// The same node trees from libfyaml's events, about ten times fewer instructions than yaml-cpp
// (whose scanner matches every character through its RegEx objects): libfyaml's events carry
// what yaml-cpp's do, and they are handed to TreeBuilder as yaml-cpp would (untagged plain
// scalars "?", untagged quoted and block scalars "!", untagged collections "?", untagged
// null-like plain scalars and empty nodes as OnNull; yaml-cpp's SingleDocParser::HandleNode;
// the ten-times figure is istio_request_new_workload's parse under callgrind). nullopt on any
// error, syntax or decoding: the caller parses again with yaml-cpp, so that every message and
// position stays yaml-cpp's.
class FyParser {
 public:
  FyParser() {
    // Errors are yaml-cpp's to word: libfyaml's diagnostics go nowhere.
    fy_diag_cfg diag_cfg{};
    fy_diag_cfg_default(&diag_cfg);
    diag_cfg.fp = nullptr;
    diag_cfg.output_fn = [](fy_diag*, void*, const char*, size_t) {};
    diag_cfg.colorize = false;
    diag_ = fy_diag_create(&diag_cfg);
    if (diag_ == nullptr) return;
    fy_parse_cfg cfg{};
    cfg.flags = static_cast<fy_parse_cfg_flags>(FYPCF_QUIET | FYPCF_JSON_NONE);
    cfg.diag = diag_;
    parser_ = fy_parser_create(&cfg);
  }
  ~FyParser() {
    if (parser_ != nullptr) fy_parser_destroy(parser_);
    if (diag_ != nullptr) fy_diag_destroy(diag_);
  }
  FyParser(const FyParser&) = delete;
  FyParser& operator=(const FyParser&) = delete;
  fy_parser* get() const { return parser_; }

 private:
  fy_diag* diag_ = nullptr;
  fy_parser* parser_ = nullptr;
};

struct FyEvent {
  fy_parser* parser;
  fy_event* event;
  ~FyEvent() {
    if (event != nullptr) fy_parser_event_free(parser, event);
  }
};

std::string_view fyText(fy_token* token) {
  if (token == nullptr) return {};
  size_t length = 0;
  const char* text = fy_token_get_text(token, &length);
  return text == nullptr ? std::string_view{} : std::string_view(text, length);
}

YAML::Mark fyMark(fy_token* token) {
  YAML::Mark mark;
  if (const fy_mark* m = token == nullptr ? nullptr : fy_token_start_mark(token)) {
    mark.pos = static_cast<int>(m->input_pos);
    mark.line = m->line;
    mark.column = m->column;
  }
  return mark;
}

bool isYamlCppNull(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// The source text of a token, without the quotes of a quoted scalar and without the header
// line of a block scalar (libfyaml reads `text` in place: marks are offsets into it).
std::optional<std::string_view> fySource(std::string_view text, fy_token* token) {
  const fy_mark* start = fy_token_start_mark(token);
  const fy_mark* end = fy_token_end_mark(token);
  if (start == nullptr || end == nullptr || start->input_pos > end->input_pos ||
      end->input_pos > text.size()) {
    return std::nullopt;
  }
  return text.substr(start->input_pos, end->input_pos - start->input_pos);
}

// A literal or folded scalar: its header line without "+", an indentation digit or a comment,
// content indented past the header line, a line break before the end of the text, and
// (folded) no more-indented line.
bool blockScalarAgrees(std::string_view text, std::string_view source, bool folded) {
  // The token starts on the line after its header ("|", ">-", a comment): that line.
  if (source.empty()) return false;
  const size_t start = static_cast<size_t>(source.data() - text.data());
  if (start == 0 || text[start - 1] != '\n') return false;
  const std::string_view before = text.substr(0, start - 1);
  // rfind's npos + 1 is 0: the header is the first line.
  const std::string_view header = before.substr(before.rfind('\n') + 1);
  // After the indicator, only strip chomping: no "+", indentation digit or comment.
  const size_t indicator = header.find_last_of("|>");
  if (indicator == std::string_view::npos ||
      header.find_first_not_of(" -", indicator + 1) != std::string_view::npos) {
    return false;
  }
  if (start + source.size() == text.size() && !text.ends_with('\n')) return false;
  size_t content_indent = 0;
  for (size_t line = 0; line < source.size();) {
    const size_t end = std::min(source.find('\n', line), source.size());
    const size_t indent = source.find_first_not_of(' ', line) - line;
    if (line + indent < end) {  // not a line of spaces
      if (content_indent == 0) {
        content_indent = indent;
        if (indent <= header.find_first_not_of(' ')) return false;
      } else if (folded && indent != content_indent) {
        return false;
      }
    }
    line = end + 1;
  }
  return content_indent > 0;
}

// Whether libfyaml 0.7.12 (Debian 12's) reads this scalar as yaml-cpp does. Found by comparing
// the two readers on generated scalars (core/tests/yaml_reader_test.cc keeps the cases):
// - single-quoted, two escaped quotes in a row: 'a''''b' reads as "a'''b", and longer runs
//   return bytes past the value;
// - quoted over several lines: libfyaml keeps more line breaks around empty lines and escaped
//   quotes, drops \L and \P and appends NUL bytes after escapes;
// - double-quoted \N and \_: libfyaml drops the first and reads the second as a space (yaml-cpp
//   writes the lone bytes 0x85 and 0xA0);
// - folded (>): with keep chomping (>+) libfyaml keeps every trailing empty line, yaml-cpp one;
//   a more-indented line after an empty one loses the empty line and gains a NUL byte;
// - literal and folded: content at the end of the text without a line break gains one; content
//   not indented past its header's line is taken as content (yaml-cpp: a syntax error); literal
//   keep chomping (|+) and indentation indicators (|2) agree so far, left to yaml-cpp all the
//   same.
// A scalar outside these is read alike; one inside sends the whole stream to yaml-cpp.
bool fastReaderAgrees(std::string_view text, fy_token* token) {
  if (token == nullptr) return true;  // an empty node
  const fy_scalar_style style = fy_token_scalar_style(token);
  if (style == FYSS_PLAIN) return true;
  const auto found = fySource(text, token);
  if (!found) return false;
  const std::string_view source = *found;
  switch (style) {
    case FYSS_SINGLE_QUOTED:
      return source.find('\n') == std::string_view::npos &&
             source.find("''''") == std::string_view::npos;
    case FYSS_DOUBLE_QUOTED:
      return source.find('\n') == std::string_view::npos &&
             source.find("\\N") == std::string_view::npos &&
             source.find("\\_") == std::string_view::npos;
    case FYSS_LITERAL:
      return blockScalarAgrees(text, source, false);
    case FYSS_FOLDED:
      return blockScalarAgrees(text, source, true);
    default:
      return false;
  }
}

// Whether libfyaml reads this tag as yaml-cpp does. libfyaml takes "!!str!12" (a suffix with
// another "!"), "!:]x" (a flow indicator), "!!" and "!e!" (no suffix) and "!.!x" (a handle of
// other than word characters) as tags; yaml-cpp finds two tags or an error. So a shorthand tag
// must be YAML's: a handle of word characters, then ns-tag-char (URI characters but "!" and the
// flow indicators). No tag agrees.
bool fyTagAgrees(std::string_view text, fy_token* tag) {
  if (tag == nullptr) return true;
  const auto source = fySource(text, tag);
  if (!source || !source->starts_with('!')) return false;
  if (*source == "!" || source->starts_with("!<")) return true;  // non-specific, verbatim
  const size_t handle_end = source->find('!', 1);  // "!!" or "!name!", else the primary "!"
  const std::string_view handle =
      handle_end == std::string_view::npos ? "" : source->substr(1, handle_end - 1);
  const std::string_view suffix =
      source->substr(handle_end == std::string_view::npos ? 1 : handle_end + 1);
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-'; };
  auto tagChar = [&word](char c) {
    return word(c) || std::string_view("#;/?:@&=+$_.~*'()%").find(c) != std::string_view::npos;
  };
  return !suffix.empty() && std::all_of(handle.begin(), handle.end(), word) &&
         std::all_of(suffix.begin(), suffix.end(), tagChar);
}

// Where libfyaml 0.7.12 places a node that yaml-cpp (and the YAML spec) reject or read as
// something else; found by the yaml fuzz target, which compares the two readers. A node that
// starts at or left of its block sequence's "-" ("k:\n  -\n  a"), a mapping value other than a
// block sequence at or left of its keys' column ("i: !!str\nvalue"), a plain scalar whose next
// lines are not indented past the innermost block collection ("k: a\nb"), and a plain scalar
// starting with "?" or, in a flow collection, holding one ({a: 0?5}) or a line break: the
// stream then goes to yaml-cpp.
class FyLayout {
 public:
  // A node starts: false when it sits where libfyaml is not to be trusted. `source` is its text
  // when it is a plain scalar.
  bool admit(fy_token* token, std::string_view plain_source = {}) {
    const fy_mark* m = token == nullptr ? nullptr : fy_token_start_mark(token);
    // A literal or folded scalar's token starts at the beginning of its first line;
    // blockScalarAgrees checks its indentation.
    const fy_scalar_style style =
        fy_token_get_type(token) == FYTT_SCALAR ? fy_token_scalar_style(token) : FYSS_PLAIN;
    if (open_.empty() || m == nullptr || style == FYSS_LITERAL || style == FYSS_FOLDED) {
      return countChild();
    }
    const Parent& parent = open_.back();
    if (parent.type == FYTT_BLOCK_SEQUENCE_START && m->column <= parent.column) return false;
    if (parent.type == FYTT_BLOCK_MAPPING_START && parent.children % 2 == 1) {
      const bool block_sequence = fy_token_get_type(token) == FYTT_BLOCK_SEQUENCE_START;
      if (m->column < parent.column || (m->column == parent.column && !block_sequence)) {
        return false;
      }
    }
    if (plain_source.starts_with('?') || !continuationIndented(plain_source)) return false;
    // yaml-cpp ends a plain scalar inside a flow collection at "?" (exp.h EndScalarInFlow),
    // and takes none over several lines as a key there.
    if (inFlow() && plain_source.find_first_of("?\n") != std::string_view::npos) return false;
    return countChild();
  }
  void enter(fy_token* token) {
    const fy_mark* m = fy_token_start_mark(token);
    const fy_token_type type = fy_token_get_type(token);
    const int column = m == nullptr ? -1 : m->column;
    const bool block = type == FYTT_BLOCK_SEQUENCE_START || type == FYTT_BLOCK_MAPPING_START;
    open_.push_back({type, column, 0, block ? column : blockColumn()});
  }
  void leave() {
    if (!open_.empty()) open_.pop_back();
  }
  // A scalar starts: admit, and the checks of its text (fastReaderAgrees, fyTagAgrees) and of
  // its surroundings.
  bool admitScalar(std::string_view text, const fy_event_scalar_data& s) {
    const bool plain = s.value != nullptr && fy_token_scalar_style(s.value) == FYSS_PLAIN;
    const std::string_view source =
        plain ? fySource(text, s.value).value_or(std::string_view{}) : std::string_view{};
    if (!fastReaderAgrees(text, s.value) || !fyTagAgrees(text, s.tag)) return false;
    // A tag on an empty node ("k: !!str", "- !"), which yaml-cpp reads as an error or skips
    // (a document that is a tag alone); a tagged plain scalar over several lines ("!: a\nb": the
    // tag "!:"), which yaml-cpp reads as two documents.
    if (s.tag != nullptr && (s.value == nullptr || source.find('\n') != std::string_view::npos)) {
      return false;
    }
    // In a flow collection, a scalar that ends its line ("{a: 0.\n}", "{a: b # c\n}"): yaml-cpp
    // reads on to the "}" and fails.
    if (inFlow()) {
      fy_token* last = s.value != nullptr ? s.value : s.anchor;  // an empty node: not known
      const fy_mark* end = last == nullptr ? nullptr : fy_token_end_mark(last);
      if (end == nullptr) return false;
      size_t after = end->input_pos;
      const fy_scalar_style style =
          s.value != nullptr ? fy_token_scalar_style(s.value) : FYSS_PLAIN;
      if (style == FYSS_SINGLE_QUOTED || style == FYSS_DOUBLE_QUOTED) ++after;  // the quote
      const size_t next = text.find_first_not_of(" \t", after);
      if (next == std::string_view::npos || text[next] == '\r' || text[next] == '\n' ||
          text[next] == '#') {
        return false;
      }
    }
    return admit(s.value, source);
  }

 private:
  struct Parent {
    fy_token_type type;
    int column;
    size_t children;
    int block_column;  // the column of the innermost block collection, this one or an outer one
  };
  // The column of the innermost open block collection, -1 when there is none. Kept per entry:
  // a walk up the stack per node was quadratic in the nesting (100,000 "[" took seconds).
  int blockColumn() const { return open_.empty() ? -1 : open_.back().block_column; }
  bool inFlow() const {
    return !open_.empty() && (open_.back().type == FYTT_FLOW_SEQUENCE_START ||
                              open_.back().type == FYTT_FLOW_MAPPING_START);
  }
  bool countChild() {
    if (!open_.empty()) ++open_.back().children;
    return true;
  }
  // Every line of a plain scalar after its first, but empty ones, indented past the innermost
  // block collection.
  bool continuationIndented(std::string_view source) const {
    const int column = blockColumn();
    for (size_t nl = source.find('\n'); nl != std::string_view::npos;
         nl = source.find('\n', nl + 1)) {
      const size_t content = source.find_first_not_of(' ', nl + 1);
      if (content == std::string_view::npos || source[content] == '\n') continue;
      if (static_cast<int>(content - nl - 1) <= column) return false;
    }
    return true;
  }
  std::vector<Parent> open_;
};

// Text that goes to yaml-cpp before libfyaml sees it: an explicit key ("?" before a blank or a
// line break), where libfyaml reads a key whose content is a comment as the next line's scalar
// ("? #c\n  b" as {b: null}) and yaml-cpp as a null key, an error; and a carriage return not
// followed by a line feed, a line break for libfyaml and a character of the scalar for yaml-cpp;
// a line starting with a tab, an empty line for libfyaml when it holds only blanks, an error
// ("illegal tab when looking for indentation") for yaml-cpp. All are rare in manifests: wherever
// one may be, the text goes to yaml-cpp.
// Each character is looked for on its own: find() of one character is memchr, many bytes at a
// time, where find_first_of of three called memchr once per byte of the text (4% of a new Istio
// workload's instructions).
bool fyTextAgrees(std::string_view text) {
  if (text.starts_with('\t')) return false;
  const auto next = [text](size_t at) { return at + 1 < text.size() ? text[at + 1] : '\n'; };
  constexpr auto npos = std::string_view::npos;
  for (size_t at = text.find('\n'); at != npos; at = text.find('\n', at + 1)) {
    if (next(at) == '\t') return false;
  }
  for (size_t at = text.find('\r'); at != npos; at = text.find('\r', at + 1)) {
    if (next(at) != '\n') return false;
  }
  for (size_t at = text.find('?'); at != npos; at = text.find('?', at + 1)) {
    const char after = next(at);
    if (after == ' ' || after == '\t' || after == '\r' || after == '\n') return false;
  }
  return true;
}

std::optional<std::vector<json>> parseYamlStreamFast(std::string_view text) {
  const FyParser parser;
  if (parser.get() == nullptr) return std::nullopt;
  if (!fyTextAgrees(text)) return std::nullopt;
  // libfyaml reads the text in place; it must outlive the parser.
  if (fy_parser_set_string(parser.get(), text.data(), text.size()) != 0) return std::nullopt;
  std::vector<json> docs;
  TreeBuilder builder;
  std::map<std::string, YAML::anchor_t, std::less<>> anchors;
  YAML::anchor_t next_anchor = 0;
  // The anchor of a node: announced first (OnAnchor), then its id passed with the node.
  auto anchorOf = [&](fy_token* token) -> YAML::anchor_t {
    if (token == nullptr) return YAML::NullAnchor;
    const std::string_view name = fyText(token);
    builder.OnAnchor(fyMark(token), std::string(name));
    const YAML::anchor_t id = ++next_anchor;
    anchors.insert_or_assign(std::string(name), id);
    return id;
  };
  auto tagOr = [](fy_token* tag, const char* untagged) {
    return tag == nullptr ? std::string(untagged) : std::string(fyText(tag));
  };
  FyLayout layout;
  try {
    while (true) {
      FyEvent e{parser.get(), fy_parser_parse(parser.get())};
      if (e.event == nullptr) break;
      switch (e.event->type) {
        case FYET_DOCUMENT_START:
          builder.OnDocumentStart(fyMark(e.event->document_start.document_start));
          anchors.clear();
          next_anchor = 0;
          break;
        case FYET_DOCUMENT_END: {
          builder.OnDocumentEnd();
          const auto root = builder.root();
          if (!root) break;
          Decoder decoder(builder.nodes());
          json value = decoder.decode(*root, 0);
          if (!isSkippableDocument(value)) docs.push_back(std::move(value));
          break;
        }
        case FYET_SCALAR: {
          const auto& s = e.event->scalar;
          const YAML::Mark mark = fyMark(s.value);
          const bool plain = fy_token_scalar_style(s.value) == FYSS_PLAIN;
          if (!layout.admitScalar(text, s)) return std::nullopt;
          const std::string_view value = fyText(s.value);
          const YAML::anchor_t anchor = anchorOf(s.anchor);
          if (plain && s.tag == nullptr && isYamlCppNull(value)) {
            builder.OnNull(mark, anchor);
          } else {
            builder.OnScalar(mark, tagOr(s.tag, plain ? "?" : "!"), anchor, std::string(value));
          }
          break;
        }
        case FYET_SEQUENCE_START: {
          const auto& s = e.event->sequence_start;
          if (!layout.admit(s.sequence_start) || !fyTagAgrees(text, s.tag)) return std::nullopt;
          layout.enter(s.sequence_start);
          builder.OnSequenceStart(fyMark(s.sequence_start), tagOr(s.tag, "?"), anchorOf(s.anchor),
                                  YAML::EmitterStyle::Default);
          break;
        }
        case FYET_SEQUENCE_END:
          layout.leave();
          builder.OnSequenceEnd();
          break;
        case FYET_MAPPING_START: {
          const auto& s = e.event->mapping_start;
          if (!layout.admit(s.mapping_start) || !fyTagAgrees(text, s.tag)) return std::nullopt;
          layout.enter(s.mapping_start);
          builder.OnMapStart(fyMark(s.mapping_start), tagOr(s.tag, "?"), anchorOf(s.anchor),
                             YAML::EmitterStyle::Default);
          break;
        }
        case FYET_MAPPING_END:
          layout.leave();
          builder.OnMapEnd();
          break;
        case FYET_ALIAS: {
          const auto found = anchors.find(fyText(e.event->alias.anchor));
          if (found == anchors.end() || !layout.admit(e.event->alias.anchor)) return std::nullopt;
          builder.OnAlias(fyMark(e.event->alias.anchor), found->second);
          break;
        }
        default:
          break;
      }
    }
  } catch (...) {
    return std::nullopt;
  }
  if (fy_parser_get_stream_error(parser.get())) return std::nullopt;
  return docs;
}

Result<std::vector<json>> parseYamlStreamWithYamlCpp(std::string_view text) {
  std::vector<json> docs;
  std::istringstream in{std::string(text)};
  TreeBuilder builder;
  auto documentIndex = [&builder] {
    return builder.inDocument() || builder.documentsStarted() == 0
               ? std::max<size_t>(builder.documentsStarted(), 1)
               : builder.documentsStarted() + 1;
  };
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(builder)) {
      const auto root = builder.root();
      if (!root) continue;
      Decoder decoder(builder.nodes());
      json value = decoder.decode(*root, 0);
      if (!isSkippableDocument(value)) docs.push_back(std::move(value));
    }
  } catch (const DecodeError& e) {
    return makeError(locate(builder.documentsStarted(), static_cast<size_t>(e.mark.line) + 1,
                            static_cast<size_t>(e.mark.column) + 1, e.message));
  } catch (const YAML::DeepRecursion& e) {
    return makeError(locate(documentIndex(), static_cast<size_t>(e.mark.line) + 1,
                            static_cast<size_t>(e.mark.column) + 1,
                            "exceeds the maximum nesting depth the YAML parser allows"));
  } catch (const YAML::Exception& e) {
    const int line = e.mark.line < 0 ? 0 : e.mark.line;
    const int column = e.mark.column < 0 ? 0 : e.mark.column;
    return makeError(locate(documentIndex(), static_cast<size_t>(line) + 1,
                            static_cast<size_t>(column) + 1, e.msg));
  } catch (const json::exception& e) {
    return makeError(locate(documentIndex(), 1, 1, e.what()));
  }
  return docs;
}

Result<std::vector<json>> parseYamlStream(std::string_view text) {
  if (auto err = checkCharacters(text)) return *err;
  if (auto fast = parseYamlStreamFast(text)) return std::move(*fast);
  return parseYamlStreamWithYamlCpp(text);
}

// ---------------------------------------------------------------------------------------------
// JSON -> YAML (go-yaml v2 encoder + emitter, as reached through sigs.k8s.io/yaml JSONToYAML)

// ^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$ (encode.go base60float)
bool isBase60Float(std::string_view s) {
  if (s.empty()) return false;
  const char c = s[0];
  if (!(c == '+' || c == '-' || isDigit(c)) || s.find(':') == std::string_view::npos) return false;
  size_t i = 0;
  if (s[i] == '+' || s[i] == '-') ++i;
  if (i >= s.size() || !isDigit(s[i])) return false;
  ++i;
  while (i < s.size() && (isDigit(s[i]) || s[i] == '_')) ++i;
  int groups = 0;
  while (i < s.size() && s[i] == ':') {
    ++i;
    // [0-5]?[0-9]: take two digits when the first is 0-5 and two digits follow.
    if (i + 1 < s.size() && s[i] >= '0' && s[i] <= '5' && isDigit(s[i + 1])) {
      i += 2;
    } else if (i < s.size() && isDigit(s[i])) {
      i += 1;
    } else {
      return false;
    }
    ++groups;
  }
  if (groups == 0) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && (isDigit(s[i]) || s[i] == '_')) ++i;
  }
  return i == s.size();
}

// UTF-8 width from the lead byte (input is valid UTF-8 here).
size_t widthAt(std::string_view s, size_t i) {
  const auto c = static_cast<unsigned char>(s[i]);
  if ((c & 0x80) == 0x00) return 1;
  if ((c & 0xE0) == 0xC0) return 2;
  if ((c & 0xF0) == 0xE0) return 3;
  return 4;
}

unsigned char byteAt(std::string_view s, size_t i) {
  return i < s.size() ? static_cast<unsigned char>(s[i]) : 0;
}

// emitterc.go is_printable: note that characters outside the BMP count as non-printable.
bool isPrintable(std::string_view s, size_t i) {
  const unsigned char b0 = byteAt(s, i);
  const unsigned char b1 = byteAt(s, i + 1);
  const unsigned char b2 = byteAt(s, i + 2);
  return b0 == 0x0A || (b0 >= 0x20 && b0 <= 0x7E) || (b0 == 0xC2 && b1 >= 0xA0) ||
         (b0 > 0xC2 && b0 < 0xED) || (b0 == 0xED && b1 < 0xA0) || b0 == 0xEE ||
         (b0 == 0xEF && !(b1 == 0xBB && b2 == 0xBF) && !(b1 == 0xBF && (b2 == 0xBE || b2 == 0xBF)));
}

bool isBreakAt(std::string_view s, size_t i) {
  const unsigned char b0 = byteAt(s, i);
  const unsigned char b1 = byteAt(s, i + 1);
  const unsigned char b2 = byteAt(s, i + 2);
  return b0 == '\r' || b0 == '\n' || (b0 == 0xC2 && b1 == 0x85) ||
         (b0 == 0xE2 && b1 == 0x80 && (b2 == 0xA8 || b2 == 0xA9));
}

bool isBlankzAt(std::string_view s, size_t i) {
  if (i >= s.size()) return true;
  const unsigned char b = byteAt(s, i);
  return b == ' ' || b == '\t' || b == '\0' || isBreakAt(s, i);
}

struct ScalarAnalysis {
  bool multiline = false;
  bool block_plain_allowed = false;
  bool single_quoted_allowed = false;
  bool block_allowed = false;
};

// emitterc.go yaml_emitter_analyze_scalar (block context; the flow flags are not needed).
ScalarAnalysis analyzeScalar(std::string_view s) {
  ScalarAnalysis a;
  if (s.empty()) {
    a.block_plain_allowed = true;
    a.single_quoted_allowed = true;
    return a;
  }
  bool block_indicators = s.substr(0, 3) == "---" || s.substr(0, 3) == "...";
  bool line_breaks = false;
  bool special_characters = false;
  bool leading_space = false;
  bool leading_break = false;
  bool trailing_space = false;
  bool trailing_break = false;
  bool break_space = false;
  bool space_break = false;
  bool previous_space = false;
  bool previous_break = false;
  bool preceded_by_whitespace = true;
  bool followed_by_whitespace = isBlankzAt(s, widthAt(s, 0));
  for (size_t i = 0; i < s.size();) {
    const char c = s[i];
    const size_t w = widthAt(s, i);
    if (i == 0) {
      if (std::strchr("#,[]{}&*!|>'\"%@`", c) != nullptr && c != '\0') block_indicators = true;
      if ((c == '?' || c == ':') && followed_by_whitespace) block_indicators = true;
      if (c == '-' && followed_by_whitespace) block_indicators = true;
    } else {
      if (c == ':' && followed_by_whitespace) block_indicators = true;
      if (c == '#' && preceded_by_whitespace) block_indicators = true;
    }
    if (!isPrintable(s, i)) special_characters = true;
    const bool is_break = isBreakAt(s, i);
    if (is_break) line_breaks = true;
    if (c == ' ') {
      if (i == 0) leading_space = true;
      if (i + w == s.size()) trailing_space = true;
      if (previous_break) break_space = true;
      previous_space = true;
      previous_break = false;
    } else if (is_break) {
      if (i == 0) leading_break = true;
      if (i + w == s.size()) trailing_break = true;
      if (previous_space) space_break = true;
      previous_space = false;
      previous_break = true;
    } else {
      previous_space = false;
      previous_break = false;
    }
    preceded_by_whitespace = isBlankzAt(s, i);
    i += w;
    if (i < s.size()) followed_by_whitespace = isBlankzAt(s, i + widthAt(s, i));
  }
  a.multiline = line_breaks;
  a.block_plain_allowed = true;
  a.single_quoted_allowed = true;
  a.block_allowed = true;
  if (leading_space || leading_break || trailing_space || trailing_break) {
    a.block_plain_allowed = false;
  }
  if (trailing_space) a.block_allowed = false;
  if (break_space) {
    a.block_plain_allowed = false;
    a.single_quoted_allowed = false;
  }
  if (space_break || special_characters) {
    a.block_plain_allowed = false;
    a.single_quoted_allowed = false;
    a.block_allowed = false;
  }
  if (line_breaks) a.block_plain_allowed = false;
  if (block_indicators) a.block_plain_allowed = false;
  return a;
}

// True when every byte is printable ASCII (0x20-0x7E): then the string is valid UTF-8 without
// line breaks or special characters, and analyzeAsciiScalar gives analyzeScalar's answer.
bool isPrintableAscii(std::string_view s) {
  for (const char c : s) {
    if (c < 0x20 || c > 0x7E) return false;
  }
  return true;
}

// analyzeScalar for a printable-ASCII string: one byte per character, no breaks, every character
// printable, and ' ' the only blank. Most scalars of Kubernetes objects are like this, and
// writing a large object spends much of its time here.
ScalarAnalysis analyzeAsciiScalar(std::string_view s) {
  ScalarAnalysis a;
  a.block_plain_allowed = true;
  a.single_quoted_allowed = true;
  if (s.empty()) return a;
  const size_t n = s.size();
  auto blankz = [&](size_t i) { return i >= n || s[i] == ' '; };
  bool block_indicators = s.substr(0, 3) == "---" || s.substr(0, 3) == "...";
  const char c0 = s[0];
  if (std::strchr("#,[]{}&*!|>'\"%@`", c0) != nullptr) block_indicators = true;
  if ((c0 == '?' || c0 == ':' || c0 == '-') && blankz(1)) block_indicators = true;
  for (size_t i = 1; i < n && !block_indicators; ++i) {
    if (s[i] == ':' && blankz(i + 1)) block_indicators = true;
    if (s[i] == '#' && s[i - 1] == ' ') block_indicators = true;
  }
  const bool leading_space = c0 == ' ';
  const bool trailing_space = s[n - 1] == ' ';
  a.block_allowed = !trailing_space;
  a.block_plain_allowed = !(leading_space || trailing_space || block_indicators);
  return a;
}

enum class Style { kPlain, kSingle, kDouble, kLiteral, kBinary };

// encode.go stringv + emitterc.go yaml_emitter_select_scalar_style.
Style chooseStyle(std::string_view s, bool simple_key) {
  // A scalar whose first character gives no resolve hint is a string (resolveUnchecked).
  auto resolvesToString = [](std::string_view v) {
    return (!v.empty() && resolveHint(v[0]) == 0) ||
           resolveUnchecked(Tag::kNone, v).tag == Tag::kStr;
  };
  if (isPrintableAscii(s)) {
    // As below, without the line breaks, U+2028/U+2029 and special characters it cannot hold.
    if (s == "<<" || !resolvesToString(s) || isBase60Float(s)) return Style::kDouble;
    return analyzeAsciiScalar(s).block_plain_allowed ? Style::kPlain : Style::kSingle;
  }
  if (!isValidUtf8(s)) return Style::kBinary;
  Style style = Style::kDouble;
  if (s.find('\n') != std::string_view::npos) {
    style = Style::kLiteral;
  } else if (resolvesToString(s) && !isBase60Float(s)) {
    style = Style::kPlain;
  }
  // go-yaml v2 would print "<<" plain (its resolve table is never consulted for '<'), which
  // reads back as a merge key; quote it so that the value survives.
  if (s == "<<") return Style::kDouble;
  // U+2028/U+2029 are line breaks to libyaml but not to yaml-cpp (YAML 1.2): always escape them.
  if (s.find("\xE2\x80\xA8") != std::string_view::npos ||
      s.find("\xE2\x80\xA9") != std::string_view::npos) {
    return Style::kDouble;
  }
  const ScalarAnalysis a = analyzeScalar(s);
  if (style == Style::kPlain && !a.block_plain_allowed) style = Style::kSingle;
  if (style == Style::kSingle && !a.single_quoted_allowed) style = Style::kDouble;
  if (style == Style::kLiteral && (!a.block_allowed || simple_key)) style = Style::kDouble;
  return style;
}

std::string singleQuoted(std::string_view s) {
  std::string out = "'";
  for (const char c : s) {
    if (c == '\'')
      out += "''";
    else
      out.push_back(c);
  }
  return out + "'";
}

// emitterc.go yaml_emitter_write_double_quoted_scalar, without line folding (YamlWriter::
// scalarText folds).
std::string doubleQuoted(std::string_view s) {
  static constexpr std::string_view kHex = "0123456789ABCDEF";
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    const size_t w = widthAt(s, i);
    const bool bom = byteAt(s, i) == 0xEF && byteAt(s, i + 1) == 0xBB && byteAt(s, i + 2) == 0xBF;
    if (!isPrintable(s, i) || bom || isBreakAt(s, i) || s[i] == '"' || s[i] == '\\') {
      const Rune r = decodeUtf8(s, i);
      const char32_t v = r.valid ? r.code_point : 0;
      i += w;
      out.push_back('\\');
      switch (v) {
        case 0x00:
          out.push_back('0');
          break;
        case 0x07:
          out.push_back('a');
          break;
        case 0x08:
          out.push_back('b');
          break;
        case 0x09:
          out.push_back('t');
          break;
        case 0x0A:
          out.push_back('n');
          break;
        case 0x0B:
          out.push_back('v');
          break;
        case 0x0C:
          out.push_back('f');
          break;
        case 0x0D:
          out.push_back('r');
          break;
        case 0x1B:
          out.push_back('e');
          break;
        case 0x22:
          out.push_back('"');
          break;
        case 0x5C:
          out.push_back('\\');
          break;
        // libyaml writes \N here; yaml-cpp decodes \N to a lone 0x85 byte, \x85 to U+0085.
        case 0x85:
          out += "x85";
          break;
        case 0xA0:
          out.push_back('_');
          break;
        case 0x2028:
          out.push_back('L');
          break;
        case 0x2029:
          out.push_back('P');
          break;
        default: {
          int digits = 8;
          if (v <= 0xFF) {
            out.push_back('x');
            digits = 2;
          } else if (v <= 0xFFFF) {
            out.push_back('u');
            digits = 4;
          } else {
            out.push_back('U');
          }
          for (int k = (digits - 1) * 4; k >= 0; k -= 4) out.push_back(kHex[(v >> k) & 0x0F]);
        }
      }
    } else {
      out.append(s, i, w);
      i += w;
    }
  }
  return out + "\"";
}

std::string spaces(int n) { return std::string(static_cast<size_t>(std::max(n, 0)), ' '); }

// emitterc.go yaml_emitter_write_literal_scalar with its block scalar hints.
std::string literal(std::string_view s, int content_indent) {
  std::string out = "|";
  if (!s.empty() && (s[0] == ' ' || s[0] == '\n')) out.push_back('2');
  if (s.empty() || s.back() != '\n') {
    out.push_back('-');
  } else if (s.size() == 1 || s[s.size() - 2] == '\n') {
    out.push_back('+');
  }
  out.push_back('\n');
  bool breaks = true;
  for (const char c : s) {
    if (c == '\n') {
      out.push_back('\n');
      breaks = true;
    } else {
      if (breaks) {
        out += spaces(content_indent);
        breaks = false;
      }
      out.push_back(c);
    }
  }
  if (!breaks) out.push_back('\n');
  return out;
}

// A number as kubectl prints it: JSON text (encoding/json) read back by go-yaml and re-emitted.
std::string yamlNumber(const json& v) {
  if (v.is_number_unsigned()) return std::to_string(v.get<uint64_t>());
  if (v.is_number_integer()) return std::to_string(v.get<int64_t>());
  const double d = v.get<double>();
  if (std::isfinite(d) && std::floor(d) == d && std::fabs(d) < 1e21) {
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0) {
      return std::to_string(static_cast<int64_t>(d));
    }
    if (d >= 0 && d < 18446744073709551616.0) return std::to_string(static_cast<uint64_t>(d));
  }
  return formatYamlFloat(d);
}

class YamlWriter {
 public:
  explicit YamlWriter(int fold_column) : fold_column_(fold_column) {}

  std::string take() { return std::move(out_); }

  void root(const json& v) {
    if (isNonEmptyObject(v)) {
      mappingEntries(v, 0, false);
    } else if (isNonEmptyArray(v)) {
      sequenceItems(v, 0, false);
    } else {
      scalarLine(v, 0);
    }
  }

 private:
  static bool isNonEmptyObject(const json& v) { return v.is_object() && !v.empty(); }
  static bool isNonEmptyArray(const json& v) { return v.is_array() && !v.empty(); }

  // A scalar (or an empty collection) and the end of its line; `owner_indent` is the column of
  // the key or "- " that owns it (block scalar content goes two columns further in).
  void scalarLine(const json& v, int owner_indent) {
    switch (v.type()) {
      case json::value_t::null:
        out_ += "null\n";
        return;
      case json::value_t::boolean:
        out_ += v.get<bool>() ? "true\n" : "false\n";
        return;
      case json::value_t::number_integer:
      case json::value_t::number_unsigned:
      case json::value_t::number_float:
        out_ += yamlNumber(v) + "\n";
        return;
      case json::value_t::object:
        out_ += "{}\n";
        return;
      case json::value_t::array:
      case json::value_t::binary:
        out_ += "[]\n";
        return;
      case json::value_t::string:
        break;
      case json::value_t::discarded:
        out_ += "null\n";
        return;
    }
    const auto& s = v.get_ref<const std::string&>();
    switch (const Style style = chooseStyle(s, false)) {
      case Style::kPlain:
        scalarText(s, style, owner_indent + 2);
        break;
      case Style::kSingle:
        scalarText(singleQuoted(s), style, owner_indent + 2);
        break;
      case Style::kDouble:
        scalarText(doubleQuoted(s), style, owner_indent + 2);
        break;
      case Style::kBinary:
        out_ += "!!binary " + go::base64Encode(s);
        break;
      case Style::kLiteral:
        out_ += literal(s, owner_indent + 2);
        return;
    }
    out_ += "\n";
  }

  // A plain or quoted scalar as written (`text`, quotes and escapes included), folded as go-yaml
  // v2 folds it when fold_column_ is set; continuation lines start at `indent`.
  // emitterc.go yaml_emitter_write_plain_scalar, yaml_emitter_write_single_quoted_scalar and
  // yaml_emitter_write_double_quoted_scalar: at a space of the value, when the line is already
  // past best_width columns (the emitter's column counts characters, an escape's characters
  // each), the previous character was not a space, and (quoted) the space is neither the value's
  // first nor its last character, yaml_emitter_write_indent starts a new line at the scalar's
  // indentation instead of the space. Plain and single-quoted scalars also need the next
  // character not to be a space; a double-quoted one writes "\" before a following space
  // instead. Keys written in the simple "key:" form are never folded (allow_breaks is
  // !simple_key_context). Every space of `text` is a space of the value: escapes, quotes and a
  // doubled quote hold none.
  void scalarText(std::string_view text, Style style, int indent) {
    if (fold_column_ <= 0) {
      out_ += text;
      return;
    }
    const size_t line_start = out_.rfind('\n') + 1;  // npos + 1 == 0
    // The column grows by one per byte at most: a short line cannot get past the width.
    if (out_.size() - line_start + text.size() <= static_cast<size_t>(fold_column_) + 1) {
      out_ += text;
      return;
    }
    int column = 0;
    for (size_t i = line_start; i < out_.size(); ++i) {
      if ((static_cast<unsigned char>(out_[i]) & 0xC0) != 0x80) ++column;
    }
    const bool quoted = style != Style::kPlain;
    bool spaces = false;
    for (size_t i = 0; i < text.size(); ++i) {
      const char c = text[i];
      if (c != ' ') {
        out_.push_back(c);
        if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++column;
        spaces = false;
        continue;
      }
      const bool next_space = i + 1 < text.size() && text[i + 1] == ' ';
      const bool first = i == (quoted ? 1U : 0U);
      const bool last = i + (quoted ? 2 : 1) == text.size();
      if (!spaces && column > fold_column_ && !first && !last &&
          (style == Style::kDouble || !next_space)) {
        out_.push_back('\n');
        out_.append(static_cast<size_t>(std::max(indent, 0)), ' ');
        column = std::max(indent, 0);
        if (next_space) {  // double-quoted only: "\ " keeps the space the break would eat
          out_.push_back('\\');
          ++column;
        }
      } else {
        out_.push_back(' ');
        ++column;
      }
      spaces = true;
    }
  }

  // After "key:" (or "- " for sequence items): the value.
  void mappingValue(const json& v, int indent) {
    if (isNonEmptyObject(v)) {
      out_ += "\n";
      mappingEntries(v, indent + 2, false);
    } else if (isNonEmptyArray(v)) {
      out_ += "\n";
      sequenceItems(v, indent, false);  // go-yaml v2: "- " at the key's column
    } else {
      out_ += " ";
      scalarLine(v, indent);
    }
  }

  void key(const std::string& k, int indent) {
    // emitterc.go yaml_emitter_check_simple_key: multi-line or longer than 128 bytes -> "? key".
    const bool simple = k.size() <= 128 && (isPrintableAscii(k) || !(isValidUtf8(k) &&
                                                                     analyzeScalar(k).multiline));
    if (!simple) {
      out_ += "? ";
      scalarLine(json(k), indent);
      out_.append(static_cast<size_t>(std::max(indent, 0)), ' ');
      out_ += ":";
      return;
    }
    switch (chooseStyle(k, true)) {
      case Style::kPlain:
        out_ += k;
        break;
      case Style::kSingle:
        out_ += singleQuoted(k);
        break;
      case Style::kBinary:
        out_ += "!!binary " + go::base64Encode(k);
        break;
      case Style::kDouble:
      case Style::kLiteral:
        out_ += doubleQuoted(k);
        break;
    }
    out_ += ":";
  }

  void mappingEntries(const json& object, int indent, bool first_inline) {
    bool first = true;
    for (const auto& [k, v] : object.items()) {
      if (!(first && first_inline)) out_.append(static_cast<size_t>(std::max(indent, 0)), ' ');
      first = false;
      key(k, indent);
      mappingValue(v, indent);
    }
  }

  void sequenceItems(const json& array, int indent, bool first_inline) {
    bool first = true;
    for (const auto& item : array) {
      if (!(first && first_inline)) out_.append(static_cast<size_t>(std::max(indent, 0)), ' ');
      first = false;
      out_ += "- ";
      if (isNonEmptyObject(item)) {
        mappingEntries(item, indent + 2, true);
      } else if (isNonEmptyArray(item)) {
        sequenceItems(item, indent + 2, true);
      } else {
        scalarLine(item, indent);
      }
    }
  }

  int fold_column_ = 0;
  std::string out_;
};

// A value nested deeper than kMaxYamlDepth is written on one line in flow style, without
// recursion (the block writer recurses once per level).
std::string flowYaml(const json& value) {
  std::string out;
  struct Frame {
    const json* value;
    json::const_iterator next;
  };
  std::vector<Frame> stack;
  auto scalar = [&out](const json& v) {
    if (v.is_string()) {
      out += doubleQuoted(v.get_ref<const std::string&>());
    } else if (v.is_number()) {
      out += yamlNumber(v);
    } else if (v.is_boolean()) {
      out += v.get<bool>() ? "true" : "false";
    } else {
      out += "null";
    }
  };
  auto open = [&](const json& v) {
    if (!v.is_structured()) {
      scalar(v);
      return;
    }
    out += v.is_object() ? "{" : "[";
    stack.push_back({&v, v.cbegin()});
  };
  open(value);
  while (!stack.empty()) {
    Frame& top = stack.back();
    if (top.next == top.value->cend()) {
      out += top.value->is_object() ? "}" : "]";
      stack.pop_back();
      continue;
    }
    if (top.next != top.value->cbegin()) out += ", ";
    const auto it = top.next++;
    if (top.value->is_object()) out += doubleQuoted(it.key()) + ": ";
    open(*it);  // may invalidate `top`
  }
  return out;
}

}  // namespace

Result<std::vector<nlohmann::json>> parseYamlDocuments(std::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n\f\v");
  if (first != std::string_view::npos && text[first] == '{') return parseJsonStream(text);
  return parseYamlStream(text);
}

Result<std::vector<nlohmann::json>> detail::parseYamlDocumentsWithYamlCpp(std::string_view text) {
  if (auto err = checkCharacters(text)) return *err;
  return parseYamlStreamWithYamlCpp(text);
}

bool detail::libfyamlReads(std::string_view text) {
  return !checkCharacters(text) && parseYamlStreamFast(text).has_value();
}

Result<nlohmann::json> parseYaml(std::string_view text) {
  auto docs = parseYamlDocuments(text);
  if (!docs.ok()) return docs.error();
  if (docs->empty()) return nlohmann::json(nullptr);
  if (docs->size() > 1) {
    return makeError("expected a single YAML document, found " + std::to_string(docs->size()));
  }
  return std::move(docs->front());
}

std::string toYaml(const nlohmann::json& value, const YamlWriteOptions& options) {
  if (jsonDepth(value) > kMaxYamlDepth) return flowYaml(value) + "\n";
  YamlWriter writer(options.fold_column);
  writer.root(value);
  return writer.take();
}

std::string toYamlDocuments(const std::vector<nlohmann::json>& documents,
                            const YamlWriteOptions& options) {
  std::string out;
  for (size_t i = 0; i < documents.size(); ++i) {
    if (i > 0) out += "---\n";
    out += toYaml(documents[i], options);
  }
  return out;
}

Result<std::vector<std::string>> splitYamlDocuments(std::string_view text) {
  constexpr std::string_view kSeparator = "---";
  std::vector<std::string> documents;
  std::string buffer;
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t newline = text.find('\n', pos);
    const std::size_t end = newline == std::string_view::npos ? text.size() : newline + 1;
    const std::string_view line = text.substr(pos, end - pos);
    pos = end;
    if (line.starts_with(kSeparator)) {
      // strings.TrimSpace of what follows the separator.
      std::string_view rest = line.substr(kSeparator.size());
      const auto first = rest.find_first_not_of(" \t\n\r\v\f");
      rest = first == std::string_view::npos ? std::string_view{} : rest.substr(first);
      const auto last = rest.find_last_not_of(" \t\n\r\v\f");
      rest = last == std::string_view::npos ? std::string_view{} : rest.substr(0, last + 1);
      if (!rest.empty() && rest.front() != '#') {
        return makeError("invalid Yaml document separator: " + std::string(rest));
      }
      if (!buffer.empty()) documents.push_back(std::exchange(buffer, {}));
      continue;
    }
    buffer += line;
  }
  if (!buffer.empty()) documents.push_back(std::move(buffer));
  return documents;
}

}  // namespace harness::core
