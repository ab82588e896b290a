// Port of golang/go src/text/template/parse/lex.go (Go 1.22+: synchronous lexer, newlines
// allowed inside actions, trim markers "{{- " and " -}}", break/continue keywords).

#include "lex.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "harness/core/field_errors.h"
#include "harness/core/utf8.h"
#include "harness/go/strconv.h"

namespace harness::gotemplate::detail {
namespace {

constexpr std::string_view kLeftDelim = "{{";
constexpr std::string_view kRightDelim = "}}";
constexpr std::string_view kLeftComment = "/*";
constexpr std::string_view kRightComment = "*/";
constexpr std::string_view kSpaceChars = " \t\r\n";
constexpr std::size_t kTrimMarkerLen = 2;  // marker plus space before or after

bool isSpace(char32_t r) { return r == ' ' || r == '\t' || r == '\r' || r == '\n'; }

// unicode.IsLetter/IsDigit, approximated: ASCII exactly, every other valid rune as a letter.
bool isAlphaNumeric(char32_t r) {
  if (r == '_') return true;
  if (r < 0x80) {
    return (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9');
  }
  return r != 0xFFFFFFFF && r != 0xFFFD && r <= 0x10FFFF;
}

bool hasLeftTrimMarker(std::string_view s) {
  return s.size() >= 2 && s[0] == '-' && isSpace(static_cast<unsigned char>(s[1]));
}

bool hasRightTrimMarker(std::string_view s) {
  return s.size() >= 2 && isSpace(static_cast<unsigned char>(s[0])) && s[1] == '-';
}

std::size_t rightTrimLength(std::string_view s) {
  const std::size_t keep = s.find_last_not_of(kSpaceChars);
  return keep == std::string_view::npos ? s.size() : s.size() - keep - 1;
}

std::size_t leftTrimLength(std::string_view s) {
  const std::size_t first = s.find_first_not_of(kSpaceChars);
  return first == std::string_view::npos ? s.size() : first;
}

int countNewlines(std::string_view s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

// fmt's %#U.
std::string formatRune(char32_t r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "U+%04X", static_cast<unsigned>(r));
  std::string out = buf;
  if (r >= 0x20 && r != 0x7F && r <= 0x10FFFF && !(r >= 0x80 && r < 0xA0)) {
    out += " '";
    // Unchecked: a surrogate read by next() is written back as the bytes it came from.
    core::appendUtf8Unchecked(out, r);
    out += "'";
  }
  return out;
}

ItemType keyword(std::string_view word) {
  if (word == ".") return ItemType::kDot;
  if (word == "block") return ItemType::kBlock;
  if (word == "break") return ItemType::kBreak;
  if (word == "continue") return ItemType::kContinue;
  if (word == "define") return ItemType::kDefine;
  if (word == "else") return ItemType::kElse;
  if (word == "end") return ItemType::kEnd;
  if (word == "if") return ItemType::kIf;
  if (word == "range") return ItemType::kRange;
  if (word == "nil") return ItemType::kNil;
  if (word == "template") return ItemType::kTemplate;
  if (word == "with") return ItemType::kWith;
  return ItemType::kError;  // not a keyword
}

}  // namespace

std::string itemString(const Item& item) {
  if (item.type == ItemType::kEOF) return "EOF";
  if (item.type == ItemType::kError) return item.val;
  if (item.type > ItemType::kKeyword) return "<" + item.val + ">";
  // fmt "%.10q..." for long values: the first 10 runes, quoted.
  std::size_t runes = 0;
  std::size_t cut = item.val.size();
  for (std::size_t i = 0; i < item.val.size(); ++i) {
    if ((static_cast<unsigned char>(item.val[i]) & 0xC0) != 0x80) {
      if (runes == 10) {
        cut = i;
        break;
      }
      ++runes;
    }
  }
  if (cut < item.val.size()) return go::quote(item.val.substr(0, cut)) + "...";
  return go::quote(item.val);
}

Lexer::Lexer(std::string_view input, bool break_ok, bool continue_ok)
    : input_(input), break_ok_(break_ok), continue_ok_(continue_ok) {}

char32_t Lexer::next() {
  if (pos_ >= input_.size()) {
    at_eof_ = true;
    return kEof;
  }
  // kLeadBits, as this lexer always decoded: an overlong form or a surrogate is one rune here,
  // where Go's decoder reads U+FFFD byte by byte. backup() steps back by the same rule.
  const core::Rune decoded = core::decodeUtf8(input_, pos_, core::Utf8Check::kLeadBits);
  const char32_t r = decoded.code_point;
  const std::size_t w = decoded.length;
  pos_ += w;
  if (r == '\n') ++line_;
  return r;
}

char32_t Lexer::peek() {
  const char32_t r = next();
  backup();
  return r;
}

void Lexer::backup() {
  if (!at_eof_ && pos_ > 0) {
    std::size_t start = pos_ - 1;
    while (start > 0 && pos_ - start < 4 &&
           (static_cast<unsigned char>(input_[start]) & 0xC0) == 0x80) {
      --start;
    }
    // A lone continuation byte decodes as one RuneError byte.
    const auto lead = static_cast<unsigned char>(input_[start]);
    const std::size_t expect = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (expect != pos_ - start) start = pos_ - 1;
    if (input_[start] == '\n') --line_;
    pos_ = start;
  }
}

Item Lexer::thisItem(ItemType t) {
  Item i{t, start_, input_.substr(start_, pos_ - start_), start_line_};
  start_ = pos_;
  start_line_ = line_;
  return i;
}

void Lexer::emit(ItemType t) { emitItem(thisItem(t)); }

void Lexer::emitItem(Item i) {
  item_ = std::move(i);
  done_ = true;
}

void Lexer::ignore() {
  line_ += countNewlines(std::string_view(input_).substr(start_, pos_ - start_));
  start_ = pos_;
  start_line_ = line_;
}

bool Lexer::accept(std::string_view valid) {
  const char32_t r = next();
  if (r < 0x80 && valid.find(static_cast<char>(r)) != std::string_view::npos) return true;
  backup();
  return false;
}

void Lexer::acceptRun(std::string_view valid) {
  for (;;) {
    const char32_t r = next();
    if (r < 0x80 && valid.find(static_cast<char>(r)) != std::string_view::npos) continue;
    backup();
    return;
  }
}

void Lexer::errorf(std::string message) {
  item_ = Item{ItemType::kError, start_, std::move(message), start_line_};
  start_ = 0;
  pos_ = 0;
  input_.clear();
  done_ = true;
}

bool Lexer::atTerminator() {
  const char32_t r = peek();
  if (isSpace(r)) return true;
  switch (r) {
    case kEof:
    case '.':
    case ',':
    case '|':
    case ':':
    case ')':
    case '(': return true;
    default: break;
  }
  return std::string_view(input_).substr(pos_).starts_with(kRightDelim);
}

void Lexer::atRightDelim(bool* delim, bool* trim_spaces) const {
  const std::string_view rest = std::string_view(input_).substr(pos_);
  if (hasRightTrimMarker(rest) && rest.substr(kTrimMarkerLen).starts_with(kRightDelim)) {
    *delim = true;
    *trim_spaces = true;
    return;
  }
  *delim = rest.starts_with(kRightDelim);
  *trim_spaces = false;
}

Item Lexer::nextItem() {
  item_ = Item{ItemType::kEOF, pos_, "EOF", start_line_};
  state_ = inside_action_ ? State::kInsideAction : State::kText;
  done_ = false;
  while (!done_) {
    switch (state_) {
      case State::kText: lexText(); break;
      case State::kLeftDelim: lexLeftDelim(); break;
      case State::kComment: lexComment(); break;
      case State::kRightDelim: lexRightDelim(); break;
      case State::kInsideAction: lexInsideAction(); break;
      case State::kSpace: lexSpace(); break;
      case State::kIdentifier: lexIdentifier(); break;
      case State::kField: lexFieldOrVariable(ItemType::kField); break;
      case State::kVariable:
        if (atTerminator()) {
          emit(ItemType::kVariable);
        } else {
          lexFieldOrVariable(ItemType::kVariable);
        }
        break;
      case State::kChar: lexChar(); break;
      case State::kNumber: lexNumber(); break;
      case State::kQuote: lexQuote(); break;
      case State::kRawQuote: lexRawQuote(); break;
      case State::kDone: done_ = true; break;
    }
  }
  return item_;
}

void Lexer::lexText() {
  const std::size_t x = input_.find(kLeftDelim, pos_);
  if (x != std::string::npos) {
    if (x > pos_) {
      pos_ = x;
      std::size_t trim_length = 0;
      const std::size_t delim_end = pos_ + kLeftDelim.size();
      if (hasLeftTrimMarker(std::string_view(input_).substr(delim_end))) {
        trim_length = rightTrimLength(std::string_view(input_).substr(start_, pos_ - start_));
      }
      pos_ -= trim_length;
      line_ += countNewlines(std::string_view(input_).substr(start_, pos_ - start_));
      Item i = thisItem(ItemType::kText);
      pos_ += trim_length;
      ignore();
      if (!i.val.empty()) {
        emitItem(std::move(i));
        return;
      }
    }
    state_ = State::kLeftDelim;
    return;
  }
  pos_ = input_.size();
  if (pos_ > start_) {
    line_ += countNewlines(std::string_view(input_).substr(start_, pos_ - start_));
    emit(ItemType::kText);
    return;
  }
  emit(ItemType::kEOF);
}

void Lexer::lexLeftDelim() {
  pos_ += kLeftDelim.size();
  const bool trim_space = hasLeftTrimMarker(std::string_view(input_).substr(pos_));
  const std::size_t after_marker = trim_space ? kTrimMarkerLen : 0;
  if (std::string_view(input_).substr(pos_ + after_marker).starts_with(kLeftComment)) {
    pos_ += after_marker;
    ignore();
    state_ = State::kComment;
    return;
  }
  Item i = thisItem(ItemType::kLeftDelim);
  inside_action_ = true;
  pos_ += after_marker;
  ignore();
  paren_depth_ = 0;
  emitItem(std::move(i));
}

void Lexer::lexComment() {
  pos_ += kLeftComment.size();
  const std::size_t x = input_.find(kRightComment, pos_);
  if (x == std::string::npos) {
    errorf("unclosed comment");
    return;
  }
  pos_ = x + kRightComment.size();
  bool delim = false;
  bool trim_space = false;
  atRightDelim(&delim, &trim_space);
  if (!delim) {
    errorf("comment ends before closing delimiter");
    return;
  }
  line_ += countNewlines(std::string_view(input_).substr(start_, pos_ - start_));
  thisItem(ItemType::kComment);  // comments are not emitted (no ParseComments mode)
  if (trim_space) pos_ += kTrimMarkerLen;
  pos_ += kRightDelim.size();
  if (trim_space) pos_ += leftTrimLength(std::string_view(input_).substr(pos_));
  ignore();
  state_ = State::kText;
}

void Lexer::lexRightDelim() {
  bool delim = false;
  bool trim_space = false;
  atRightDelim(&delim, &trim_space);
  if (trim_space) {
    pos_ += kTrimMarkerLen;
    ignore();
  }
  pos_ += kRightDelim.size();
  Item i = thisItem(ItemType::kRightDelim);
  if (trim_space) {
    pos_ += leftTrimLength(std::string_view(input_).substr(pos_));
    ignore();
  }
  inside_action_ = false;
  emitItem(std::move(i));
}

void Lexer::lexInsideAction() {
  bool delim = false;
  bool trim = false;
  atRightDelim(&delim, &trim);
  if (delim) {
    if (paren_depth_ == 0) {
      state_ = State::kRightDelim;
      return;
    }
    errorf("unclosed left paren");
    return;
  }
  const char32_t r = next();
  if (r == kEof) {
    errorf("unclosed action");
    return;
  }
  if (isSpace(r)) {
    backup();  // put the space back in case we have " -}}"
    state_ = State::kSpace;
    return;
  }
  switch (r) {
    case '=': emit(ItemType::kAssign); return;
    case ':':
      if (next() != '=') {
        errorf("expected :=");
        return;
      }
      emit(ItemType::kDeclare);
      return;
    case '|': emit(ItemType::kPipe); return;
    case '"': state_ = State::kQuote; return;
    case '`': state_ = State::kRawQuote; return;
    case '$': state_ = State::kVariable; return;
    case '\'': state_ = State::kChar; return;
    case '.':
      // Special look-ahead for ".field" so we don't break backup().
      if (pos_ < input_.size()) {
        const char c = input_[pos_];
        if (c < '0' || c > '9') {
          state_ = State::kField;
          return;
        }
      }
      backup();
      state_ = State::kNumber;
      return;
    case '(':
      ++paren_depth_;
      emit(ItemType::kLeftParen);
      return;
    case ')':
      --paren_depth_;
      if (paren_depth_ < 0) {
        errorf("unexpected right paren");
        return;
      }
      emit(ItemType::kRightParen);
      return;
    default: break;
  }
  if (r == '+' || r == '-' || (r >= '0' && r <= '9')) {
    backup();
    state_ = State::kNumber;
    return;
  }
  if (isAlphaNumeric(r)) {
    backup();
    state_ = State::kIdentifier;
    return;
  }
  if (r < 0x80 && r >= 0x20 && r != 0x7F) {
    emit(ItemType::kChar);
    return;
  }
  errorf("unrecognized character in action: " + formatRune(r));
}

void Lexer::lexSpace() {
  int num_spaces = 0;
  while (isSpace(peek())) {
    next();
    ++num_spaces;
  }
  // Be careful about a trim-marked closing delimiter, which has a minus after a space.
  const std::string_view from = std::string_view(input_).substr(pos_ - 1);
  if (hasRightTrimMarker(from) && from.substr(kTrimMarkerLen).starts_with(kRightDelim)) {
    backup();  // before the space
    if (num_spaces == 1) {
      state_ = State::kRightDelim;
      return;
    }
  }
  emit(ItemType::kSpace);
}

void Lexer::lexIdentifier() {
  for (;;) {
    const char32_t r = next();
    if (isAlphaNumeric(r)) continue;
    backup();
    const std::string word = input_.substr(start_, pos_ - start_);
    if (!atTerminator()) {
      errorf("bad character " + formatRune(r));
      return;
    }
    const ItemType kw = keyword(word);
    if (kw > ItemType::kKeyword) {
      if ((kw == ItemType::kBreak && !break_ok_) || (kw == ItemType::kContinue && !continue_ok_)) {
        emit(ItemType::kIdentifier);
      } else {
        emit(kw);
      }
    } else if (word[0] == '.') {
      emit(ItemType::kField);
    } else if (word == "true" || word == "false") {
      emit(ItemType::kBool);
    } else {
      emit(ItemType::kIdentifier);
    }
    return;
  }
}

void Lexer::lexFieldOrVariable(ItemType typ) {
  if (atTerminator()) {  // nothing interesting follows -> "." or "$"
    emit(typ == ItemType::kVariable ? ItemType::kVariable : ItemType::kDot);
    return;
  }
  char32_t r = 0;
  for (;;) {
    r = next();
    if (!isAlphaNumeric(r)) {
      backup();
      break;
    }
  }
  if (!atTerminator()) {
    errorf("bad character " + formatRune(r));
    return;
  }
  emit(typ);
}

void Lexer::lexChar() {
  for (;;) {
    const char32_t r = next();
    if (r == '\\') {
      const char32_t n = next();
      if (n != kEof && n != '\n') continue;
      errorf("unterminated character constant");
      return;
    }
    if (r == kEof || r == '\n') {
      errorf("unterminated character constant");
      return;
    }
    if (r == '\'') break;
  }
  emit(ItemType::kCharConstant);
}

bool Lexer::scanNumber() {
  accept("+-");
  std::string_view digits = "0123456789_";
  if (accept("0")) {
    // Note: leading 0 does not mean octal in floats.
    if (accept("xX")) {
      digits = "0123456789abcdefABCDEF_";
    } else if (accept("oO")) {
      digits = "01234567_";
    } else if (accept("bB")) {
      digits = "01_";
    }
  }
  acceptRun(digits);
  if (accept(".")) acceptRun(digits);
  if (digits.size() == 10 + 1 && accept("eE")) {
    accept("+-");
    acceptRun("0123456789_");
  }
  if (digits.size() == 16 + 6 + 1 && accept("pP")) {
    accept("+-");
    acceptRun("0123456789_");
  }
  accept("i");  // imaginary?
  if (isAlphaNumeric(peek())) {
    next();
    return false;
  }
  return true;
}

void Lexer::lexNumber() {
  if (!scanNumber()) {
    errorf("bad number syntax: " + go::quote(input_.substr(start_, pos_ - start_)));
    return;
  }
  const char32_t sign = peek();
  if (sign == '+' || sign == '-') {
    // Complex: 1+2i. No spaces, must end in 'i'.
    if (!scanNumber() || input_[pos_ - 1] != 'i') {
      errorf("bad number syntax: " + go::quote(input_.substr(start_, pos_ - start_)));
      return;
    }
    emit(ItemType::kComplex);
    return;
  }
  emit(ItemType::kNumber);
}

void Lexer::lexQuote() {
  for (;;) {
    const char32_t r = next();
    if (r == '\\') {
      const char32_t n = next();
      if (n != kEof && n != '\n') continue;
      errorf("unterminated quoted string");
      return;
    }
    if (r == kEof || r == '\n') {
      errorf("unterminated quoted string");
      return;
    }
    if (r == '"') break;
  }
  emit(ItemType::kString);
}

void Lexer::lexRawQuote() {
  for (;;) {
    const char32_t r = next();
    if (r == kEof) {
      errorf("unterminated raw quoted string");
      return;
    }
    if (r == '`') break;
  }
  emit(ItemType::kRawString);
}

}  // namespace harness::gotemplate::detail
