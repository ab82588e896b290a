#pragma once

// Internal: the template lexer, a port of golang/go src/text/template/parse/lex.go (the
// synchronous version: nextItem runs the state machine until it has an item).

#include <cstddef>
#include <string>
#include <string_view>

namespace harness::gotemplate::detail {

enum class ItemType {
  kError,
  kBool,
  kChar,
  kCharConstant,
  kComment,
  kComplex,
  kAssign,
  kDeclare,
  kEOF,
  kField,
  kIdentifier,
  kLeftDelim,
  kLeftParen,
  kNumber,
  kPipe,
  kRawString,
  kRightDelim,
  kRightParen,
  kSpace,
  kString,
  kText,
  kVariable,
  // Keywords appear after all the rest.
  kKeyword,
  kBlock,
  kBreak,
  kContinue,
  kDot,
  kDefine,
  kElse,
  kEnd,
  kIf,
  kNil,
  kRange,
  kTemplate,
  kWith,
};

struct Item {
  ItemType type = ItemType::kEOF;
  std::size_t pos = 0;  // byte offset in the input
  std::string val;
  int line = 1;
};

// item.String(): how the parser names a token in "unexpected <token> in <context>".
std::string itemString(const Item& item);

class Lexer {
 public:
  Lexer(std::string_view input, bool break_ok, bool continue_ok);
  Item nextItem();

 private:
  enum class State {
    kText, kLeftDelim, kComment, kRightDelim, kInsideAction, kSpace, kIdentifier, kField,
    kVariable, kChar, kNumber, kQuote, kRawQuote, kDone,
  };
  static constexpr char32_t kEof = 0xFFFFFFFF;

  char32_t next();
  char32_t peek();
  void backup();
  Item thisItem(ItemType t);
  void emit(ItemType t);
  void emitItem(Item i);
  void ignore();
  bool accept(std::string_view valid);
  void acceptRun(std::string_view valid);
  void errorf(std::string message);
  bool atTerminator();
  void atRightDelim(bool* delim, bool* trim_spaces) const;
  bool scanNumber();

  // State functions: each sets state_ and may produce an item (done_ = true).
  void lexText();
  void lexLeftDelim();
  void lexComment();
  void lexRightDelim();
  void lexInsideAction();
  void lexSpace();
  void lexIdentifier();
  void lexFieldOrVariable(ItemType typ);
  void lexChar();
  void lexNumber();
  void lexQuote();
  void lexRawQuote();

  std::string input_;
  std::size_t pos_ = 0;
  std::size_t start_ = 0;
  bool at_eof_ = false;
  int paren_depth_ = 0;
  int line_ = 1;
  int start_line_ = 1;
  bool inside_action_ = false;
  bool break_ok_;
  bool continue_ok_;
  State state_ = State::kText;
  Item item_;
  bool done_ = false;
};

}  // namespace harness::gotemplate::detail
