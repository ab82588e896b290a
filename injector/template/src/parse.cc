// Port of golang/go src/text/template/parse/parse.go (Tree.parse, itemList, textOrAction,
// action, pipeline, checkPipeline, parseControl, else/end/if/range/with/block/template/break/
// continue, command, operand, term, useVar) and node.go's newNumber, with strconv.Unquote and
// strconv.UnquoteChar for literals. Error texts are Go's.

#include "parse.h"

#include <utility>
#include <vector>

#include "harness/core/field_errors.h"
#include "harness/core/utf8.h"
#include "harness/go/strconv.h"
#include "lex.h"

namespace harness::gotemplate::detail {
namespace {

struct ParseError {
  std::string message;
};

int hexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// strconv.UnquoteChar. Returns false on ErrSyntax.
bool unquoteChar(std::string_view s, char quote, std::uint32_t* value, bool* multibyte,
                 std::string_view* tail) {
  if (s.empty()) return false;
  const char c = s[0];
  if (c == quote && (quote == '\'' || quote == '"')) return false;
  if (static_cast<unsigned char>(c) >= 0x80) {
    // kLeadBits, as this function always decoded: an overlong form or a surrogate passes as
    // one rune, where Go's UnquoteChar reads U+FFFD byte by byte.
    const core::Rune r = core::decodeUtf8(s, 0, core::Utf8Check::kLeadBits);
    *value = r.code_point;
    *multibyte = true;
    *tail = s.substr(r.length);
    return true;
  }
  if (c != '\\') {
    *value = static_cast<unsigned char>(c);
    *multibyte = false;
    *tail = s.substr(1);
    return true;
  }
  if (s.size() <= 1) return false;
  const char e = s[1];
  s.remove_prefix(2);
  *multibyte = false;
  switch (e) {
    case 'a': *value = '\a'; break;
    case 'b': *value = '\b'; break;
    case 'f': *value = '\f'; break;
    case 'n': *value = '\n'; break;
    case 'r': *value = '\r'; break;
    case 't': *value = '\t'; break;
    case 'v': *value = '\v'; break;
    case 'x':
    case 'u':
    case 'U': {
      const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      if (s.size() < n) return false;
      std::uint32_t v = 0;
      for (size_t k = 0; k < n; ++k) {
        const int h = hexValue(s[k]);
        if (h < 0) return false;
        v = (v << 4) | static_cast<std::uint32_t>(h);
      }
      s.remove_prefix(n);
      if (e != 'x') {
        if (v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) return false;
        *multibyte = true;
      }
      *value = v;
      break;
    }
    case '0':
    case '1':
    case '2':
    case '3':
    case '4':
    case '5':
    case '6':
    case '7': {
      std::uint32_t v = static_cast<std::uint32_t>(e - '0');
      if (s.size() < 2) return false;
      for (size_t k = 0; k < 2; ++k) {
        const int d = s[k] - '0';
        if (d < 0 || d > 7) return false;
        v = (v << 3) | static_cast<std::uint32_t>(d);
      }
      s.remove_prefix(2);
      if (v > 255) return false;
      *value = v;
      break;
    }
    case '\\': *value = '\\'; break;
    case '\'':
    case '"':
      if (e != quote) return false;
      *value = static_cast<unsigned char>(e);
      break;
    default: return false;
  }
  *tail = s;
  return true;
}

}  // namespace

bool goUnquote(std::string_view s, std::string* out) {
  if (s.size() < 2) return false;
  const char quote = s[0];
  if (quote != s.back()) return false;
  std::string_view in = s.substr(1, s.size() - 2);
  out->clear();
  if (quote == '`') {
    if (in.find('`') != std::string_view::npos) return false;
    for (const char c : in) {
      if (c != '\r') out->push_back(c);
    }
    return true;
  }
  if (quote != '"' && quote != '\'') return false;
  if (in.find('\n') != std::string_view::npos) return false;
  while (!in.empty()) {
    std::uint32_t v = 0;
    bool multibyte = false;
    std::string_view tail;
    if (!unquoteChar(in, quote, &v, &multibyte, &tail)) return false;
    in = tail;
    if (v < 0x80 || !multibyte) {
      out->push_back(static_cast<char>(v));
    } else {
      // Unchecked: what unquoteChar decoded is written back as the bytes it came from.
      core::appendUtf8Unchecked(*out, v);
    }
    if (quote == '\'' && !in.empty()) return false;  // single character only
  }
  return true;
}

namespace {

struct Shared {
  Lexer* lex;
  TreeSet* tree_set;
  std::shared_ptr<const Source> source;
  const std::function<bool(std::string_view)>* has_function;
  int nesting = 0;
};

class TreeParser {
 public:
  TreeParser(std::string name, Shared* shared) : name_(std::move(name)), shared_(shared) {}

  // Tree.parse: the top-level template, running to EOF.
  void parse() {
    root_ = newList(peek().pos);
    while (peek().type != ItemType::kEOF) {
      if (peek().type == ItemType::kLeftDelim) {
        const Item delim = next();
        if (nextNonSpace().type == ItemType::kDefine) {
          TreeParser def("definition", shared_);
          def.parseDefinition();
          continue;
        }
        backup2(delim);
      }
      NodePtr n = textOrAction();
      if (n->type == NodeType::kEnd || n->type == NodeType::kElse) {
        errorf("unexpected " + n->str());
      }
      root_->nodes.push_back(std::move(n));
    }
    add();
  }

 private:
  [[noreturn]] void errorf(const std::string& message) {
    throw ParseError{"template: " + shared_->source->parse_name + ":" +
                     std::to_string(token_[0].line) + ": " + message};
  }

  Item next() {
    if (peek_count_ > 0) {
      --peek_count_;
    } else {
      token_[0] = shared_->lex->nextItem();
    }
    return token_[peek_count_];
  }
  void backup() { ++peek_count_; }
  void backup2(const Item& t1) {
    token_[1] = t1;
    peek_count_ = 2;
  }
  void backup3(const Item& t2, const Item& t1) {
    token_[1] = t1;
    token_[2] = t2;
    peek_count_ = 3;
  }
  Item peek() {
    if (peek_count_ > 0) return token_[peek_count_ - 1];
    peek_count_ = 1;
    token_[0] = shared_->lex->nextItem();
    return token_[0];
  }
  Item nextNonSpace() {
    Item t;
    do {
      t = next();
    } while (t.type == ItemType::kSpace);
    return t;
  }
  Item peekNonSpace() {
    Item t = nextNonSpace();
    backup();
    return t;
  }

  Item expect(ItemType expected, const std::string& context) {
    Item t = nextNonSpace();
    if (t.type != expected) unexpected(t, context);
    return t;
  }
  Item expectOneOf(ItemType e1, ItemType e2, const std::string& context) {
    Item t = nextNonSpace();
    if (t.type != e1 && t.type != e2) unexpected(t, context);
    return t;
  }

  [[noreturn]] void unexpected(const Item& token, const std::string& context) {
    if (token.type == ItemType::kError) {
      std::string extra;
      if (action_line_ != 0 && action_line_ != token.line) {
        extra = " in action started at " + shared_->source->parse_name + ":" +
                std::to_string(action_line_);
        const std::string_view suffix = " action";
        if (token.val.size() >= suffix.size() &&
            token.val.compare(token.val.size() - suffix.size(), suffix.size(), suffix) == 0) {
          extra = extra.substr(std::string_view(" in action").size());
        }
      }
      errorf(token.val + extra);
    }
    errorf("unexpected " + itemString(token) + " in " + context);
  }

  const Source* src() const { return shared_->source.get(); }

  std::unique_ptr<ListNode> newList(std::size_t pos) {
    return std::make_unique<ListNode>(pos, src());
  }

  // add: installs this tree in the set; a non-empty redefinition within one parse is an error.
  void add() {
    auto it = shared_->tree_set->find(name_);
    if (it == shared_->tree_set->end() || isEmptyTree(it->second->root.get())) {
      auto tree = std::make_shared<Tree>();
      tree->name = name_;
      tree->source = shared_->source;
      tree->root = std::move(root_);
      (*shared_->tree_set)[name_] = std::move(tree);
      return;
    }
    if (!isEmptyTree(root_.get())) {
      errorf("template: multiple definition of template " + go::quote(name_));
    }
  }

  void parseDefinition() {
    const std::string context = "define clause";
    const Item name = expectOneOf(ItemType::kString, ItemType::kRawString, context);
    if (!goUnquote(name.val, &name_)) errorf("invalid syntax");
    expect(ItemType::kRightDelim, context);
    auto [list, end] = itemList();
    root_ = std::move(list);
    if (end->type != NodeType::kEnd) errorf("unexpected " + end->str() + " in " + context);
    add();
  }

  // itemList: textOrAction* up to {{end}} or {{else}}, returned separately.
  std::pair<std::unique_ptr<ListNode>, NodePtr> itemList() {
    auto list = newList(peekNonSpace().pos);
    while (peekNonSpace().type != ItemType::kEOF) {
      NodePtr n = textOrAction();
      if (n->type == NodeType::kEnd || n->type == NodeType::kElse) {
        return {std::move(list), std::move(n)};
      }
      list->nodes.push_back(std::move(n));
    }
    errorf("unexpected EOF");
  }

  NodePtr textOrAction() {
    const Item token = nextNonSpace();
    switch (token.type) {
      case ItemType::kText: return std::make_unique<TextNode>(token.pos, src(), token.val);
      case ItemType::kLeftDelim: {
        action_line_ = token.line;
        struct Clear {
          int* line;
          ~Clear() { *line = 0; }
        } clear{&action_line_};
        return action();
      }
      default: unexpected(token, "input");
    }
  }

  NodePtr action() {
    const Item token = nextNonSpace();
    switch (token.type) {
      case ItemType::kBlock: return blockControl();
      case ItemType::kBreak: return breakControl(token.pos, token.line, true);
      case ItemType::kContinue: return breakControl(token.pos, token.line, false);
      case ItemType::kElse: return elseControl();
      case ItemType::kEnd: return endControl();
      case ItemType::kIf: return branchControl(NodeType::kIf, "if");
      case ItemType::kRange: return branchControl(NodeType::kRange, "range");
      case ItemType::kTemplate: return templateControl();
      case ItemType::kWith: return branchControl(NodeType::kWith, "with");
      default: break;
    }
    backup();
    const Item first = peek();
    // Do not pop variables; they persist until "end".
    auto pipe = pipeline("command", ItemType::kRightDelim);
    return std::make_unique<ActionNode>(first.pos, src(), first.line, std::move(pipe));
  }

  NodePtr breakControl(std::size_t pos, int line, bool is_break) {
    const std::string what = is_break ? "{{break}}" : "{{continue}}";
    const Item token = nextNonSpace();
    if (token.type != ItemType::kRightDelim) unexpected(token, what);
    if (range_depth_ == 0) errorf(what + " outside {{range}}");
    if (is_break) return std::make_unique<BreakNode>(pos, src(), line);
    return std::make_unique<ContinueNode>(pos, src(), line);
  }

  std::unique_ptr<VariableNode> newVariable(std::size_t pos, const std::string& ident) {
    std::vector<std::string> parts;
    std::size_t start = 0;
    for (;;) {
      const std::size_t dot = ident.find('.', start);
      parts.push_back(ident.substr(start, dot == std::string::npos ? std::string::npos
                                                                   : dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    return std::make_unique<VariableNode>(pos, src(), std::move(parts));
  }

  std::unique_ptr<FieldNode> newField(std::size_t pos, const std::string& ident) {
    std::vector<std::string> parts;
    std::size_t start = 1;  // drop the leading period
    for (;;) {
      const std::size_t dot = ident.find('.', start);
      parts.push_back(ident.substr(start, dot == std::string::npos ? std::string::npos
                                                                   : dot - start));
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    return std::make_unique<FieldNode>(pos, src(), std::move(parts));
  }

  // pipeline: declarations? command ('|' command)*
  std::unique_ptr<PipeNode> pipeline(const std::string& context, ItemType end) {
    const Item first = peekNonSpace();
    auto pipe = std::make_unique<PipeNode>(first.pos, src(), first.line);
  decls:
    if (const Item v = peekNonSpace(); v.type == ItemType::kVariable) {
      next();
      // Since space is a token, we need 3-token look-ahead here in the worst case: in
      // "$x foo" we need to read "foo" (as opposed to ":=") to know that $x is an argument
      // variable rather than a declaration.
      const Item token_after_variable = peek();
      const Item nxt = peekNonSpace();
      if (nxt.type == ItemType::kAssign || nxt.type == ItemType::kDeclare) {
        pipe->is_assign = nxt.type == ItemType::kAssign;
        nextNonSpace();
        pipe->decl.push_back(newVariable(v.pos, v.val));
        vars_.push_back(v.val);
      } else if (nxt.type == ItemType::kChar && nxt.val == ",") {
        nextNonSpace();
        pipe->decl.push_back(newVariable(v.pos, v.val));
        vars_.push_back(v.val);
        if (context == "range" && pipe->decl.size() < 2) {
          switch (peekNonSpace().type) {
            case ItemType::kVariable:
            case ItemType::kRightDelim:
            case ItemType::kRightParen: goto decls;  // second initialized variable in a range
            default: errorf("range can only initialize variables");
          }
        }
        errorf("too many declarations in " + context);
      } else if (token_after_variable.type == ItemType::kSpace) {
        backup3(v, token_after_variable);
      } else {
        backup2(v);
      }
    }
    for (;;) {
      const Item token = nextNonSpace();
      if (token.type == end) {
        checkPipeline(*pipe, context);
        return pipe;
      }
      switch (token.type) {
        case ItemType::kBool:
        case ItemType::kCharConstant:
        case ItemType::kComplex:
        case ItemType::kDot:
        case ItemType::kField:
        case ItemType::kIdentifier:
        case ItemType::kNumber:
        case ItemType::kNil:
        case ItemType::kRawString:
        case ItemType::kString:
        case ItemType::kVariable:
        case ItemType::kLeftParen:
          backup();
          pipe->cmds.push_back(command());
          if (pipe->cmds.size() > 100000) errorf("pipeline too long");
          break;
        default: unexpected(token, context);
      }
    }
  }

  void checkPipeline(const PipeNode& pipe, const std::string& context) {
    if (pipe.cmds.empty()) errorf("missing value for " + context);
    for (std::size_t i = 1; i < pipe.cmds.size(); ++i) {
      switch (pipe.cmds[i]->args[0]->type) {
        case NodeType::kBool:
        case NodeType::kDot:
        case NodeType::kNil:
        case NodeType::kNumber:
        case NodeType::kString:
          // With A|B|C, pipeline stage 2 is B.
          errorf("non executable command in pipeline stage " + std::to_string(i + 1));
        default: break;
      }
    }
  }

  NodePtr branchControl(NodeType type, const std::string& context) {
    if (++shared_->nesting > kMaxParseDepth) errorf("max nesting depth exceeded");
    const std::size_t mark = vars_.size();
    auto pipe = pipeline(context, ItemType::kRightDelim);
    if (type == NodeType::kRange) ++range_depth_;
    auto [list, nxt] = itemList();
    if (type == NodeType::kRange) --range_depth_;
    std::unique_ptr<ListNode> else_list;
    if (nxt->type == NodeType::kElse) {
      // "else if" and "else with" are parsed as "else" followed by a nested if/with whose
      // {{end}} also ends this one.
      if (context == "if" && peek().type == ItemType::kIf) {
        next();
        else_list = newList(nxt->pos);
        else_list->nodes.push_back(branchControl(NodeType::kIf, "if"));
      } else if (context == "with" && peek().type == ItemType::kWith) {
        next();
        else_list = newList(nxt->pos);
        else_list->nodes.push_back(branchControl(NodeType::kWith, "with"));
      } else {
        auto [elist, end] = itemList();
        if (end->type != NodeType::kEnd) errorf("expected end; found " + end->str());
        else_list = std::move(elist);
      }
    }
    vars_.resize(mark);
    --shared_->nesting;
    const std::size_t pos = pipe->pos;
    const int line = pipe->line;
    return std::make_unique<BranchNode>(type, pos, src(), line, std::move(pipe), std::move(list),
                                        std::move(else_list));
  }

  NodePtr endControl() {
    const Item t = expect(ItemType::kRightDelim, "end");
    return std::make_unique<EndNode>(t.pos, src());
  }

  NodePtr elseControl() {
    const Item p = peekNonSpace();
    // "{{else if ..." and "{{else with ..." are treated as "{{else}}{{if ...".
    if (p.type == ItemType::kIf || p.type == ItemType::kWith) {
      return std::make_unique<ElseNode>(p.pos, src(), p.line);
    }
    const Item t = expect(ItemType::kRightDelim, "else");
    return std::make_unique<ElseNode>(t.pos, src(), t.line);
  }

  std::string parseTemplateName(const Item& token, const std::string& context) {
    if (token.type == ItemType::kString || token.type == ItemType::kRawString) {
      std::string s;
      if (!goUnquote(token.val, &s)) errorf("invalid syntax");
      return s;
    }
    unexpected(token, context);
  }

  NodePtr blockControl() {
    const std::string context = "block clause";
    const Item token = nextNonSpace();
    std::string name = parseTemplateName(token, context);
    auto pipe = pipeline(context, ItemType::kRightDelim);
    if (++shared_->nesting > kMaxParseDepth) errorf("max nesting depth exceeded");
    TreeParser block(name, shared_);
    auto [list, end] = block.itemList();
    if (end->type != NodeType::kEnd) errorf("unexpected " + end->str() + " in " + context);
    block.root_ = std::move(list);
    block.add();
    --shared_->nesting;
    return std::make_unique<TemplateNode>(token.pos, src(), token.line, std::move(name),
                                          std::move(pipe));
  }

  NodePtr templateControl() {
    const std::string context = "template clause";
    const Item token = nextNonSpace();
    std::string name = parseTemplateName(token, context);
    std::unique_ptr<PipeNode> pipe;
    if (nextNonSpace().type != ItemType::kRightDelim) {
      backup();
      // Do not pop variables; they persist until "end".
      pipe = pipeline(context, ItemType::kRightDelim);
    }
    return std::make_unique<TemplateNode>(token.pos, src(), token.line, std::move(name),
                                          std::move(pipe));
  }

  std::unique_ptr<CommandNode> command() {
    auto cmd = std::make_unique<CommandNode>(peekNonSpace().pos, src());
    for (;;) {
      peekNonSpace();  // skip leading spaces
      if (NodePtr op = operand()) cmd->args.push_back(std::move(op));
      const Item token = next();
      switch (token.type) {
        case ItemType::kSpace: continue;
        case ItemType::kRightDelim:
        case ItemType::kRightParen: backup(); break;
        case ItemType::kPipe: break;
        default: unexpected(token, "operand");
      }
      break;
    }
    if (cmd->args.empty()) errorf("empty command");
    return cmd;
  }

  NodePtr operand() {
    NodePtr node = term();
    if (!node) return nullptr;
    if (peek().type == ItemType::kField) {
      auto chain = std::make_unique<ChainNode>(peek().pos, src(), std::move(node));
      while (peek().type == ItemType::kField) chain->field.push_back(next().val.substr(1));
      // Compatibility with Go's API: fields on a field or variable extend it; literals are
      // errors; anything else stays a chain.
      switch (chain->node->type) {
        case NodeType::kField: return newField(chain->pos, chain->str());
        case NodeType::kVariable: return newVariable(chain->pos, chain->str());
        case NodeType::kBool:
        case NodeType::kString:
        case NodeType::kNumber:
        case NodeType::kNil:
        case NodeType::kDot:
          errorf("unexpected . after term " + go::quote(chain->node->str()));
        default: return chain;
      }
    }
    return node;
  }

  NodePtr term() {
    const Item token = nextNonSpace();
    switch (token.type) {
      case ItemType::kIdentifier:
        if (!(*shared_->has_function)(token.val)) {
          std::string why = "function " + go::quote(token.val) + " not defined";
          if (unimplementedSprigFunction(token.val)) {
            why += " (Sprig's " + token.val + " is not implemented by this template engine)";
          }
          errorf(why);
        }
        return std::make_unique<IdentifierNode>(token.pos, src(), token.val);
      case ItemType::kDot: return std::make_unique<DotNode>(token.pos, src());
      case ItemType::kNil: return std::make_unique<NilNode>(token.pos, src());
      case ItemType::kVariable: return useVar(token.pos, token.val);
      case ItemType::kField: return newField(token.pos, token.val);
      case ItemType::kBool:
        return std::make_unique<BoolNode>(token.pos, src(), token.val == "true");
      case ItemType::kCharConstant:
      case ItemType::kComplex:
      case ItemType::kNumber: return newNumber(token);
      case ItemType::kLeftParen: {
        if (stack_depth_ >= kMaxParseDepth) errorf("max expression depth exceeded");
        ++stack_depth_;
        auto p = pipeline("parenthesized pipeline", ItemType::kRightParen);
        --stack_depth_;
        return p;
      }
      case ItemType::kString:
      case ItemType::kRawString: {
        std::string s;
        if (!goUnquote(token.val, &s)) errorf("invalid syntax");
        return std::make_unique<StringNode>(token.pos, src(), token.val, std::move(s));
      }
      default: break;
    }
    backup();
    return nullptr;
  }

  NodePtr useVar(std::size_t pos, const std::string& name) {
    auto v = newVariable(pos, name);
    for (const auto& var : vars_) {
      if (var == v->ident[0]) return v;
    }
    errorf("undefined variable " + go::quote(v->ident[0]));
  }

  // node.go newNumber.
  NodePtr newNumber(const Item& token) {
    auto n = std::make_unique<NumberNode>(token.pos, src(), token.val);
    const std::string& text = token.val;
    if (token.type == ItemType::kCharConstant) {
      std::uint32_t r = 0;
      bool multibyte = false;
      std::string_view tail;
      if (!unquoteChar(std::string_view(text).substr(1), text[0], &r, &multibyte, &tail)) {
        errorf("invalid syntax");
      }
      if (tail != "'") errorf("malformed character constant: " + text);
      n->int64 = r;
      n->is_int = true;
      n->uint64 = r;
      n->is_uint = true;
      n->float64 = r;
      n->is_float = true;
      return n;
    }
    if (token.type == ItemType::kComplex || (!text.empty() && text.back() == 'i')) {
      // Complex constants parse in Go; this engine has no complex values.
      n->is_complex = true;
      return n;
    }
    const auto u = go::parseUint(text, 0, 64);
    if (u.ok()) {
      n->is_uint = true;
      n->uint64 = *u;
    }
    const auto i = go::parseInt(text, 0, 64);
    if (i.ok()) {
      n->is_int = true;
      n->int64 = *i;
      if (*i == 0) {
        n->is_uint = true;  // in case of -0
        n->uint64 = u.ok() ? *u : 0;
      }
    }
    if (n->is_int) {
      n->is_float = true;
      n->float64 = static_cast<double>(n->int64);
    } else if (n->is_uint) {
      n->is_float = true;
      n->float64 = static_cast<double>(n->uint64);
    } else {
      const auto f = go::parseFloat(text);
      if (f.ok()) {
        if (text.find_first_of(".eEpP") == std::string::npos) {
          errorf("integer overflow: " + go::quote(text));
        }
        n->is_float = true;
        n->float64 = *f;
        const double v = *f;
        if (!n->is_int && v >= -9.2233720368547758e18 && v < 9.2233720368547758e18 &&
            static_cast<double>(static_cast<std::int64_t>(v)) == v) {
          n->is_int = true;
          n->int64 = static_cast<std::int64_t>(v);
        }
        if (!n->is_uint && v >= 0 && v < 1.8446744073709552e19 &&
            static_cast<double>(static_cast<std::uint64_t>(v)) == v) {
          n->is_uint = true;
          n->uint64 = static_cast<std::uint64_t>(v);
        }
      }
    }
    if (!n->is_int && !n->is_uint && !n->is_float) {
      errorf("illegal number syntax: " + go::quote(text));
    }
    return n;
  }

  std::string name_;
  Shared* shared_;
  std::unique_ptr<ListNode> root_;
  Item token_[3];
  int peek_count_ = 0;
  std::vector<std::string> vars_{"$"};
  int action_line_ = 0;
  int range_depth_ = 0;
  int stack_depth_ = 0;
};

}  // namespace

bool isEmptyTree(const Node* n) {
  if (n == nullptr) return true;
  switch (n->type) {
    case NodeType::kComment: return true;
    case NodeType::kList:
      for (const auto& c : static_cast<const ListNode*>(n)->nodes) {
        if (!isEmptyTree(c.get())) return false;
      }
      return true;
    case NodeType::kText: {
      const std::string& t = static_cast<const TextNode*>(n)->text;
      return t.find_first_not_of(" \t\n\r\v\f") == std::string::npos;
    }
    default: return false;
  }
}

void TemplateNode::writeTo(std::string& out) const {
  out += "{{template ";
  out += go::quote(name);
  if (pipe) {
    out.push_back(' ');
    pipe->writeTo(out);
  }
  out += "}}";
}

core::Result<TreeSet> parseTrees(std::string_view name, std::string_view text,
                                 const std::function<bool(std::string_view)>& has_function) {
  TreeSet trees;
  auto source = std::make_shared<Source>();
  source->parse_name = std::string(name);
  source->text = std::string(text);
  // break/continue are keywords unless a function has that name.
  Lexer lex(source->text, !has_function("break"), !has_function("continue"));
  Shared shared{&lex, &trees, source, &has_function};
  try {
    TreeParser top(std::string(name), &shared);
    top.parse();
  } catch (const ParseError& e) {
    return core::Error{e.message};
  }
  return trees;
}

}  // namespace harness::gotemplate::detail
