// Template execution, a port of golang/go src/text/template/exec.go (walk, walkIfOrWith,
// walkRange, walkTemplate, evalPipeline, evalCommand, evalField, evalCall, evalArg,
// validateType, idealConstant, printValue, errorf/ErrorContext) and the builtins of funcs.go
// (and, or, not, len, index, slice, print, printf, println, html, js, urlquery, eq, ne, lt, le,
// gt, ge, call). Go reports errors by panicking; here an ExecError exception carries the Go
// text to execute(), which returns it as a Result.

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness/core/field_errors.h"
#include "harness/go/strconv.h"
#include "harness/gotemplate/go_fmt.h"
#include "harness/gotemplate/go_json.h"
#include "harness/gotemplate/template.h"
#include "node.h"
#include "parse.h"

namespace harness::gotemplate {
namespace {

using detail::NodeType;

struct ExecError {
  std::string message;
};

// ----------------------------------------------------------------------------------------------
// Builtins (funcs.go).

// indirectInterface: the value inside an interface{}; a nil interface is invalid. A typed nil
// map[string]string stays a (valid, nil) map.
Value unboxed(const Value& v) {
  if (!v.valid()) return v;
  if (v.isNil() && v.stringMap()) return v.withBoxed(false);
  if (v.boxed()) return v.isNil() ? Value() : v.withBoxed(false);
  if (v.isNil()) return Value();
  return v;
}

enum class BasicKind { kInvalid, kBool, kInt, kUint, kFloat, kString };

BasicKind basicKind(const Value& v) {
  switch (v.kind()) {
    case GoKind::kBool: return BasicKind::kBool;
    case GoKind::kInt: return BasicKind::kInt;
    case GoKind::kUint: return BasicKind::kUint;
    case GoKind::kFloat: return BasicKind::kFloat;
    case GoKind::kString: return BasicKind::kString;
    default: return BasicKind::kInvalid;
  }
}

std::int64_t asInt(const Value& v) {
  const auto& j = v.json();
  return j.is_number_unsigned() ? static_cast<std::int64_t>(j.get<std::uint64_t>())
                                : j.get<std::int64_t>();
}

std::uint64_t asUint(const Value& v) { return v.json().get<std::uint64_t>(); }

Result<Value> eqValues(std::vector<Value>& args) {
  const Value arg1 = unboxed(args[0]);
  if (args.size() < 2) return Error{"missing argument for comparison"};
  const BasicKind k1 = basicKind(arg1);
  for (size_t i = 1; i < args.size(); ++i) {
    const Value arg = unboxed(args[i]);
    const BasicKind k2 = basicKind(arg);
    bool truth = false;
    if (k1 != k2) {
      if (k1 == BasicKind::kInt && k2 == BasicKind::kUint) {
        truth = asInt(arg1) >= 0 && static_cast<std::uint64_t>(asInt(arg1)) == asUint(arg);
      } else if (k1 == BasicKind::kUint && k2 == BasicKind::kInt) {
        truth = asInt(arg) >= 0 && asUint(arg1) == static_cast<std::uint64_t>(asInt(arg));
      } else if (arg1.valid() && arg.valid()) {
        return Error{"incompatible types for comparison: " + arg1.typeName() + " and " +
                     arg.typeName()};
      }
    } else {
      switch (k1) {
        case BasicKind::kBool: truth = arg1.json().get<bool>() == arg.json().get<bool>(); break;
        case BasicKind::kFloat:
          truth = arg1.json().get<double>() == arg.json().get<double>();
          break;
        case BasicKind::kInt: truth = asInt(arg1) == asInt(arg); break;
        case BasicKind::kString:
          truth = arg1.json().get_ref<const std::string&>() ==
                  arg.json().get_ref<const std::string&>();
          break;
        case BasicKind::kUint: truth = asUint(arg1) == asUint(arg); break;
        case BasicKind::kInvalid: {
          // Maps, slices and nil.
          const bool nil1 = !arg1.valid();
          const bool nil2 = !arg.valid();
          if (arg1.valid() && arg.valid() && arg1.kind() != arg.kind()) {
            return Error{"non-comparable types " + goPrintValue(arg1) + ": " +
                         arg1.typeName() + ", " + arg.typeName() + ": " + goPrintValue(arg)};
          }
          if (nil1 || nil2) {
            truth = nil1 == nil2;
          } else {
            return Error{"non-comparable type " + goPrintValue(arg) + ": " + arg.typeName()};
          }
          break;
        }
      }
    }
    if (truth) return Value(true);
  }
  return Value(false);
}

Result<bool> lessThan(const Value& a1, const Value& a2) {
  const Value arg1 = unboxed(a1);
  const Value arg2 = unboxed(a2);
  const BasicKind k1 = basicKind(arg1);
  const BasicKind k2 = basicKind(arg2);
  if (k1 == BasicKind::kInvalid || k2 == BasicKind::kInvalid) {
    return Error{"invalid type for comparison"};
  }
  if (k1 != k2) {
    if (k1 == BasicKind::kInt && k2 == BasicKind::kUint) {
      return asInt(arg1) < 0 || static_cast<std::uint64_t>(asInt(arg1)) < asUint(arg2);
    }
    if (k1 == BasicKind::kUint && k2 == BasicKind::kInt) {
      return asInt(arg2) >= 0 && asUint(arg1) < static_cast<std::uint64_t>(asInt(arg2));
    }
    return Error{"incompatible types for comparison: " + arg1.typeName() + " and " +
                 arg2.typeName()};
  }
  switch (k1) {
    case BasicKind::kBool: return Error{"invalid type for comparison"};
    case BasicKind::kFloat: return arg1.json().get<double>() < arg2.json().get<double>();
    case BasicKind::kInt: return asInt(arg1) < asInt(arg2);
    case BasicKind::kString:
      return arg1.json().get_ref<const std::string&>() < arg2.json().get_ref<const std::string&>();
    case BasicKind::kUint: return asUint(arg1) < asUint(arg2);
    case BasicKind::kInvalid: break;
  }
  return Error{"invalid type for comparison"};
}

// indexArg: an int index in [0, cap].
Result<std::int64_t> indexArg(const Value& index, std::size_t cap) {
  const Value idx = unboxed(index);
  std::int64_t x = 0;
  switch (idx.kind()) {
    case GoKind::kInt: x = asInt(idx); break;
    case GoKind::kUint: x = static_cast<std::int64_t>(asUint(idx)); break;
    case GoKind::kInvalid:
    case GoKind::kNil: return Error{"cannot index slice/array with nil"};
    default: return Error{"cannot index slice/array with type " + idx.typeName()};
  }
  if (x < 0 || static_cast<std::uint64_t>(x) > cap) {
    return Error{"index out of range: " + std::to_string(x)};
  }
  return x;
}

Result<Value> builtinIndex(std::vector<Value>& args) {
  Value item = unboxed(args[0]);
  if (!item.valid()) return Error{"index of untyped nil"};
  for (size_t i = 1; i < args.size(); ++i) {
    if (item.isNil() && item.stringMap()) {
      // A nil map[string]string: every key is missing.
      const Value key = unboxed(args[i]);
      if (!key.valid()) return Error{"value is nil; should be of type string"};
      if (key.kind() != GoKind::kString) {
        return Error{"value has type " + key.typeName() + "; should be string"};
      }
      item = Value(std::string());
      continue;
    }
    if (item.isNil()) return Error{"index of nil pointer"};
    const Value cur = item.withBoxed(false);
    switch (cur.kind()) {
      case GoKind::kSlice:
      case GoKind::kString: {
        const bool is_string = cur.kind() == GoKind::kString;
        const std::size_t len =
            is_string ? cur.json().get_ref<const std::string&>().size() : cur.json().size();
        auto x = indexArg(args[i], len);
        if (!x) return x.error();
        if (static_cast<std::size_t>(*x) == len) {
          return Error{is_string ? "reflect: string index out of range"
                                 : "reflect: slice index out of range"};
        }
        if (is_string) {
          item = Value(static_cast<std::int64_t>(static_cast<unsigned char>(
              cur.json().get_ref<const std::string&>()[static_cast<std::size_t>(*x)])));
        } else {
          item = cur.element(cur.json()[static_cast<std::size_t>(*x)]);
        }
        break;
      }
      case GoKind::kMap: {
        const Value key = unboxed(args[i]);
        if (!key.valid()) return Error{"value is nil; should be of type string"};
        if (key.kind() != GoKind::kString) {
          return Error{"value has type " + key.typeName() + "; should be string"};
        }
        const auto& k = key.json().get_ref<const std::string&>();
        const auto it = cur.json().find(k);
        if (it != cur.json().end()) {
          item = cur.element(*it);
        } else if (cur.stringMap()) {
          item = Value(std::string());
        } else {
          item = Value(nlohmann::json()).withBoxed(true);  // zero interface{}: nil
        }
        break;
      }
      default: return Error{"can't index item of type " + cur.typeName()};
    }
  }
  return item;
}

Result<Value> builtinSlice(std::vector<Value>& args) {
  const Value item = unboxed(args[0]);
  if (!item.valid()) return Error{"slice of untyped nil"};
  const size_t n = args.size() - 1;
  if (n > 3) return Error{"too many slice indexes: " + std::to_string(n)};
  std::size_t cap = 0;
  if (item.kind() == GoKind::kString) {
    if (n == 3) return Error{"cannot 3-index slice a string"};
    cap = item.json().get_ref<const std::string&>().size();
  } else if (item.kind() == GoKind::kSlice) {
    cap = item.json().size();
  } else {
    return Error{"can't slice item of type " + item.typeName()};
  }
  std::int64_t idx[3] = {0, static_cast<std::int64_t>(cap), 0};
  for (size_t i = 0; i < n; ++i) {
    auto x = indexArg(args[i + 1], cap);
    if (!x) return x.error();
    idx[i] = *x;
  }
  if (idx[0] > idx[1]) {
    return Error{"invalid slice index: " + std::to_string(idx[0]) + " > " +
                 std::to_string(idx[1])};
  }
  if (n == 3 && idx[1] > idx[2]) {
    return Error{"invalid slice index: " + std::to_string(idx[1]) + " > " +
                 std::to_string(idx[2])};
  }
  const auto b = static_cast<std::size_t>(idx[0]);
  const auto e = static_cast<std::size_t>(idx[1]);
  if (item.kind() == GoKind::kString) {
    return Value(item.json().get_ref<const std::string&>().substr(b, e - b));
  }
  nlohmann::json out = nlohmann::json::array();
  for (std::size_t i = b; i < e; ++i) out.push_back(item.json()[i]);
  return Value(std::move(out));
}

// evalArgs (funcs.go): fmt.Sprint of the arguments, nil ones printed "<no value>".
std::string evalArgs(const std::vector<Value>& args) {
  if (args.size() == 1 && args[0].valid() && args[0].kind() == GoKind::kString) {
    return args[0].json().get<std::string>();
  }
  std::vector<Value> printable;
  printable.reserve(args.size());
  for (const Value& a : args) {
    printable.push_back(!a.valid() || a.isNil() ? Value(std::string("<no value>")) : a);
  }
  return goSprint(printable);
}

std::string htmlEscape(std::string_view s) {
  std::string out;
  for (const char c : s) {
    switch (c) {
      case '\0': out += "\xEF\xBF\xBD"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string jsEscape(std::string_view s) {
  static constexpr char kHexUpper[] = "0123456789ABCDEF";
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      switch (c) {
        case '\\': out += "\\\\"; break;
        case '\'': out += "\\'"; break;
        case '"': out += "\\\""; break;
        case '<': out += "\\u003C"; break;
        case '>': out += "\\u003E"; break;
        case '&': out += "\\u0026"; break;
        case '=': out += "\\u003D"; break;
        default:
          if (c < ' ') {
            out += "\\u00";
            out.push_back(kHexUpper[c >> 4]);
            out.push_back(kHexUpper[c & 0xF]);
          } else {
            out.push_back(static_cast<char>(c));
          }
      }
    } else {
      out.push_back(static_cast<char>(c));  // printable Unicode is kept
    }
  }
  return out;
}

std::string urlQueryEscape(std::string_view s) {
  static constexpr char kHexUpper[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(kHexUpper[c >> 4]);
      out.push_back(kHexUpper[c & 0xF]);
    }
  }
  return out;
}

Function makeBuiltin(std::vector<ParamType> params, bool variadic, FunctionBody body) {
  return Function{std::move(params), variadic, std::move(body)};
}

const FuncMap& builtinFuncs() {
  static const FuncMap kBuiltins = [] {
    FuncMap m;
    const ParamType v = ParamType::value();
    const ParamType any = ParamType::any();
    // and/or/call are evaluated specially in evalCall; their bodies are never run.
    m["and"] = makeBuiltin({v, v}, true, nullptr);
    m["or"] = makeBuiltin({v, v}, true, nullptr);
    m["call"] = makeBuiltin({v, v}, true, nullptr);
    m["not"] = makeBuiltin({v}, false, [](std::vector<Value>& a) -> Result<Value> {
      return Value(!goTruth(unboxed(a[0])));
    });
    m["len"] = makeBuiltin({v}, false, [](std::vector<Value>& a) -> Result<Value> {
      const Value& item = a[0];
      if (!item.valid()) return Error{"reflect: call of reflect.Value.Type on zero Value"};
      if (item.isNil() && item.stringMap()) return Value(std::int64_t{0});
      if (item.isNil()) return Error{"len of nil pointer"};
      switch (item.kind()) {
        case GoKind::kString:
          return Value(static_cast<std::int64_t>(item.json().get_ref<const std::string&>().size()));
        case GoKind::kMap:
        case GoKind::kSlice: return Value(static_cast<std::int64_t>(item.json().size()));
        default: return Error{"len of type " + item.withBoxed(false).typeName()};
      }
    });
    m["index"] = makeBuiltin({v, v}, true, builtinIndex);
    m["slice"] = makeBuiltin({v, v}, true, builtinSlice);
    m["print"] = makeBuiltin({any}, true, [](std::vector<Value>& a) -> Result<Value> {
      return Value(goSprint(a));
    });
    m["println"] = makeBuiltin({any}, true, [](std::vector<Value>& a) -> Result<Value> {
      return Value(goSprintln(a));
    });
    m["printf"] = makeBuiltin({ParamType::string(), any}, true,
                              [](std::vector<Value>& a) -> Result<Value> {
                                const std::string format = a[0].json().get<std::string>();
                                std::vector<Value> rest(a.begin() + 1, a.end());
                                return Value(goSprintf(format, rest));
                              });
    m["html"] = makeBuiltin({any}, true, [](std::vector<Value>& a) -> Result<Value> {
      return Value(htmlEscape(evalArgs(a)));
    });
    m["js"] = makeBuiltin({any}, true, [](std::vector<Value>& a) -> Result<Value> {
      return Value(jsEscape(evalArgs(a)));
    });
    m["urlquery"] = makeBuiltin({any}, true, [](std::vector<Value>& a) -> Result<Value> {
      return Value(urlQueryEscape(evalArgs(a)));
    });
    m["eq"] = makeBuiltin({v, v}, true, eqValues);
    m["ne"] = makeBuiltin({v, v}, false, [](std::vector<Value>& a) -> Result<Value> {
      auto r = eqValues(a);
      if (!r) return r;
      return Value(!r->json().get<bool>());
    });
    m["lt"] = makeBuiltin({v, v}, false, [](std::vector<Value>& a) -> Result<Value> {
      auto r = lessThan(a[0], a[1]);
      if (!r) return r.error();
      return Value(*r);
    });
    m["le"] = makeBuiltin({v, v}, false, [](std::vector<Value>& a) -> Result<Value> {
      auto r = lessThan(a[0], a[1]);
      if (!r) return r.error();
      if (*r) return Value(true);
      return eqValues(a);
    });
    m["gt"] = makeBuiltin({v, v}, false, [](std::vector<Value>& a) -> Result<Value> {
      auto lt = lessThan(a[0], a[1]);
      if (!lt) return lt.error();
      if (*lt) return Value(false);
      auto eq = eqValues(a);
      if (!eq) return eq;
      return Value(!eq->json().get<bool>());
    });
    m["ge"] = makeBuiltin({v, v}, false, [](std::vector<Value>& a) -> Result<Value> {
      auto lt = lessThan(a[0], a[1]);
      if (!lt) return lt.error();
      return Value(!*lt);
    });
    return m;
  }();
  return kBuiltins;
}

// ----------------------------------------------------------------------------------------------
// Execution state.

enum class Flow { kNormal, kBreak, kContinue };

struct Variable {
  std::string name;
  Value value;
};

bool lowerFirstEquals(std::string_view key, std::string_view field) {
  if (key.size() != field.size() || key.empty()) return false;
  return std::tolower(static_cast<unsigned char>(field[0])) == static_cast<unsigned char>(key[0]) &&
         key.substr(1) == field.substr(1);
}

bool equalsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

class State {
 public:
  State(const TemplateSet& set, const ExecOptions& options, std::string* out)
      : set_(set), options_(options), out_(out) {}

  void run(const detail::Tree* tree, const Value& data) {
    tmpl_ = tree;
    vars_.push_back({"$", data});
    walk(data, tree->root.get());
  }

  // Errors are built out of line so that the recursive walk/eval frames stay small.
  [[noreturn, gnu::noinline, gnu::cold]] void errorf(const std::string& message) {
    const std::string name = tmpl_ != nullptr ? tmpl_->name : std::string();
    if (node_ == nullptr) throw ExecError{"template: " + name + ": " + message};
    // ErrorContext: line and 0-based byte column of the node in the text it was parsed from.
    const std::string& text = node_->src->text;
    const std::size_t pos = std::min(node_->pos, text.size());
    const std::string_view before(text.data(), pos);
    const std::size_t nl = before.rfind('\n');
    const std::size_t col = nl == std::string_view::npos ? pos : pos - (nl + 1);
    const auto line = 1 + std::count(before.begin(), before.end(), '\n');
    throw ExecError{"template: " + node_->src->parse_name + ":" + std::to_string(line) + ":" +
                    std::to_string(col) + ": executing " + go::quote(name) + " at <" +
                    node_->str() + ">: " + message};
  }

 private:
  struct Nest {
    explicit Nest(State* s) : s_(s) {
      if (++s_->nesting_ > s_->options_.max_nesting) s_->failNesting();
    }
    ~Nest() { --s_->nesting_; }
    Nest(const Nest&) = delete;
    Nest& operator=(const Nest&) = delete;
    State* s_;
  };

  void at(const detail::Node* n) { node_ = n; }

  [[noreturn, gnu::noinline, gnu::cold]] void failNesting() {
    errorf("exceeded maximum nesting depth (" + std::to_string(options_.max_nesting) + ")");
  }
  [[noreturn, gnu::noinline, gnu::cold]] void failSteps() {
    errorf("exceeded the limit of " + std::to_string(options_.max_steps) + " evaluation steps");
  }
  [[noreturn, gnu::noinline, gnu::cold]] void failOutput() {
    errorf("output exceeds the limit of " + std::to_string(options_.max_output_bytes) + " bytes");
  }
  [[noreturn, gnu::noinline, gnu::cold]] void failNode(const char* what, const detail::Node* n) {
    errorf(what + n->str());
  }
  [[noreturn, gnu::noinline, gnu::cold]] void failTemplate(const std::string& name, bool depth) {
    if (depth) {
      errorf("exceeded maximum template depth (" + std::to_string(options_.max_template_depth) +
             ")");
    }
    errorf("template " + go::quote(name) + " not defined");
  }

  [[noreturn, gnu::noinline, gnu::cold]] void failRange(int what, const Value& val) {
    const std::string v = goPrintValue(val);
    if (what == 0) errorf("can't use " + v + " to iterate over more than one variable");
    if (what == 1) {
      errorf("range over " + v + " exceeds the limit of " +
             std::to_string(options_.max_range_iterations) + " iterations");
    }
    errorf("range can't iterate over " + v);
  }

  void step() {
    if (++steps_ > options_.max_steps) failSteps();
  }

  void write(std::string_view s) {
    if (out_->size() + s.size() > options_.max_output_bytes) failOutput();
    out_->append(s);
  }

  // ---- variables
  void push(const std::string& name, Value v) { vars_.push_back({name, std::move(v)}); }
  void setVar(const std::string& name, const Value& v) {
    for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) {
      if (it->name == name) {
        it->value = v;
        return;
      }
    }
    errorf("undefined variable: " + name);
  }
  void setTopVar(std::size_t n, const Value& v) { vars_[vars_.size() - n].value = v; }
  Value varValue(const std::string& name) {
    for (auto it = vars_.rbegin(); it != vars_.rend(); ++it) {
      if (it->name == name) return it->value;
    }
    errorf("undefined variable: " + name);
  }

  // ---- walk
  Flow walk(const Value& dot, const detail::Node* node) {
    Nest nest(this);
    step();
    at(node);
    switch (node->type) {
      case NodeType::kAction: {
        const auto* a = static_cast<const detail::ActionNode*>(node);
        // Do not pop variables so they persist until next end. If the action declares
        // variables, don't print the result.
        const Value val = evalPipeline(dot, a->pipe.get());
        if (a->pipe->decl.empty()) printValue(node, val);
        return Flow::kNormal;
      }
      case NodeType::kBreak: return Flow::kBreak;
      case NodeType::kContinue: return Flow::kContinue;
      case NodeType::kComment: return Flow::kNormal;
      case NodeType::kIf:
      case NodeType::kWith:
        return walkIfOrWith(node->type, dot, static_cast<const detail::BranchNode*>(node));
      case NodeType::kList:
        for (const auto& n : static_cast<const detail::ListNode*>(node)->nodes) {
          const Flow f = walk(dot, n.get());
          if (f != Flow::kNormal) return f;
        }
        return Flow::kNormal;
      case NodeType::kRange:
        walkRange(dot, static_cast<const detail::BranchNode*>(node));
        return Flow::kNormal;
      case NodeType::kTemplate:
        walkTemplate(dot, static_cast<const detail::TemplateNode*>(node));
        return Flow::kNormal;
      case NodeType::kText:
        write(static_cast<const detail::TextNode*>(node)->text);
        return Flow::kNormal;
      default: failNode("unknown node: ", node);
    }
  }

  Flow walkIfOrWith(NodeType type, const Value& dot, const detail::BranchNode* b) {
    const std::size_t mark = vars_.size();
    const Value val = evalPipeline(dot, b->pipe.get());
    Flow f = Flow::kNormal;
    if (goTruth(val)) {
      f = walk(type == NodeType::kWith ? val : dot, b->list.get());
    } else if (b->else_list) {
      f = walk(dot, b->else_list.get());
    }
    vars_.resize(mark);
    return f;
  }

  void walkRange(const Value& dot, const detail::BranchNode* r) {
    at(r);
    const std::size_t outer_mark = vars_.size();
    const Value val = evalPipeline(dot, r->pipe.get());
    const std::size_t mark = vars_.size();
    const auto& decl = r->pipe->decl;
    // Returns false when the body executed {{break}}.
    auto one_iteration = [&](const Value& index, const Value& elem) -> bool {
      if (!decl.empty()) {
        if (r->pipe->is_assign) {
          // With two variables, index comes first; with one, we use the element.
          setVar(decl[0]->ident[0], decl.size() > 1 ? index : elem);
        } else {
          setTopVar(1, elem);
        }
      }
      if (decl.size() > 1) {
        if (r->pipe->is_assign) {
          setVar(decl[1]->ident[0], elem);
        } else {
          setTopVar(2, index);
        }
      }
      const Flow f = walk(elem, r->list.get());
      vars_.resize(mark);
      return f != Flow::kBreak;
    };
    bool ran = false;
    switch (val.kind()) {
      case GoKind::kInt:
      case GoKind::kUint: {
        if (decl.size() > 1) {
          failRange(0, val);
        }
        const std::int64_t n = val.kind() == GoKind::kUint ? INT64_MAX : asInt(val);
        if (n > options_.max_range_iterations) {
          failRange(1, val);
        }
        for (std::int64_t i = 0; i < n; ++i) {
          ran = true;
          if (!one_iteration(Value(), Value(i))) break;
        }
        break;
      }
      case GoKind::kSlice: {
        const auto& arr = val.json();
        for (std::size_t i = 0; i < arr.size(); ++i) {
          ran = true;
          if (!one_iteration(Value(static_cast<std::int64_t>(i)), val.element(arr[i]))) break;
        }
        break;
      }
      case GoKind::kMap: {
        const auto& obj = val.json();
        for (auto it = obj.begin(); it != obj.end(); ++it) {
          ran = true;
          Value elem = val.element(it.value());
          if (val.stringMap()) elem = elem.withBoxed(false);
          if (!one_iteration(Value(it.key()), elem)) break;
        }
        break;
      }
      case GoKind::kInvalid:
      case GoKind::kNil: break;  // a nil map etc. acts like an empty map
      default: failRange(2, val);
    }
    if (!ran && r->else_list) walk(dot, r->else_list.get());
    vars_.resize(outer_mark);
  }

  void walkTemplate(const Value& dot, const detail::TemplateNode* t) {
    at(t);
    const auto tree = set_.lookup(t->name);
    if (!tree) failTemplate(t->name, false);
    if (depth_ == options_.max_template_depth) failTemplate(t->name, true);
    // Variables declared by the pipeline persist.
    const Value new_dot = evalPipeline(dot, t->pipe.get());
    const detail::Tree* saved_tmpl = tmpl_;
    std::vector<Variable> saved_vars;
    saved_vars.swap(vars_);
    // No dynamic scoping: template invocations inherit no variables.
    vars_.push_back({"$", new_dot});
    tmpl_ = tree.get();
    ++depth_;
    walk(new_dot, tree->root.get());
    --depth_;
    tmpl_ = saved_tmpl;
    vars_.swap(saved_vars);
  }

  // ---- evaluation
  Value evalPipeline(const Value& dot, const detail::PipeNode* pipe) {
    if (pipe == nullptr) return Value();
    Nest nest(this);
    at(pipe);
    Value value;
    const Value* final = nullptr;  // "missing"
    for (const auto& cmd : pipe->cmds) {
      value = evalCommand(dot, cmd.get(), final);
      // If the object has type interface{}, dig down one level to the thing inside.
      value = unboxed(value);
      final = &value;
    }
    for (const auto& var : pipe->decl) {
      if (pipe->is_assign) {
        setVar(var->ident[0], value);
      } else {
        push(var->ident[0], value);
      }
    }
    return value;
  }

  void notAFunction(const std::vector<detail::NodePtr>& args, const Value* final) {
    if (args.size() > 1 || final != nullptr) {
      errorf("can't give argument to non-function " + args[0]->str());
    }
  }

  Value evalCommand(const Value& dot, const detail::CommandNode* cmd, const Value* final) {
    step();
    const detail::Node* first = cmd->args[0].get();
    switch (first->type) {
      case NodeType::kField:
        return evalFieldNode(dot, static_cast<const detail::FieldNode*>(first), &cmd->args, final);
      case NodeType::kChain:
        return evalChainNode(dot, static_cast<const detail::ChainNode*>(first), &cmd->args, final);
      case NodeType::kIdentifier:
        return evalFunction(dot, static_cast<const detail::IdentifierNode*>(first), cmd,
                            &cmd->args, final);
      case NodeType::kPipe:
        // Parenthesized pipeline. The arguments are all inside the pipeline; final must be
        // absent.
        notAFunction(cmd->args, final);
        return evalPipeline(dot, static_cast<const detail::PipeNode*>(first));
      case NodeType::kVariable:
        return evalVariableNode(dot, static_cast<const detail::VariableNode*>(first), &cmd->args,
                                final);
      default: break;
    }
    at(first);
    notAFunction(cmd->args, final);
    switch (first->type) {
      case NodeType::kBool: return Value(static_cast<const detail::BoolNode*>(first)->value);
      case NodeType::kDot: return dot;
      case NodeType::kNil: errorf("nil is not a command");
      case NodeType::kNumber: return idealConstant(static_cast<const detail::NumberNode*>(first));
      case NodeType::kString: return Value(static_cast<const detail::StringNode*>(first)->text);
      default: break;
    }
    errorf("can't evaluate command " + go::quote(first->str()));
  }

  Value idealConstant(const detail::NumberNode* n) {
    at(n);
    if (n->is_complex) errorf("complex constants are not supported");
    const std::string& t = n->text;
    const bool hex_int = t.size() > 2 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X') &&
                         t.find_first_of("pP") == std::string::npos;
    const bool rune_int = !t.empty() && t[0] == '\'';
    if (n->is_float && !hex_int && !rune_int && t.find_first_of(".eEpP") != std::string::npos) {
      return Value(n->float64);
    }
    if (n->is_int) return Value(n->int64);
    if (n->is_uint) errorf(t + " overflows int");
    return Value();
  }

  Value evalFieldNode(const Value& dot, const detail::FieldNode* field,
                      const std::vector<detail::NodePtr>* args, const Value* final) {
    at(field);
    return evalFieldChain(dot, dot, field, field->ident, 0, args, final);
  }

  Value evalChainNode(const Value& dot, const detail::ChainNode* chain,
                      const std::vector<detail::NodePtr>* args, const Value* final) {
    at(chain);
    if (chain->field.empty()) errorf("internal error: no fields in evalChainNode");
    if (chain->node->type == NodeType::kNil) {
      errorf("indirection through explicit nil in " + chain->str());
    }
    // (pipe).Field1.Field2 has pipe as .Node, fields as .Field. Eval the pipeline, then the
    // fields.
    const Value pipe = evalArg(dot, ParamType::value(), chain->node.get());
    return evalFieldChain(dot, pipe, chain, chain->field, 0, args, final);
  }

  Value evalVariableNode(const Value& dot, const detail::VariableNode* v,
                         const std::vector<detail::NodePtr>* args, const Value* final) {
    at(v);
    Value value = varValue(v->ident[0]);
    if (v->ident.size() == 1) {
      if (args != nullptr) notAFunction(*args, final);
      return value;
    }
    return evalFieldChain(dot, value, v, v->ident, 1, args, final);
  }

  Value evalFieldChain(const Value& dot, Value receiver, const detail::Node* node,
                       const std::vector<std::string>& ident, std::size_t from,
                       const std::vector<detail::NodePtr>* args, const Value* final) {
    const std::size_t n = ident.size();
    for (std::size_t i = from; i + 1 < n; ++i) {
      if (auto z = wrapperZero(ident, i, receiver)) {
        receiver = *z;
        continue;
      }
      receiver = evalField(dot, ident[i], node, nullptr, nullptr, receiver);
    }
    const bool has_args = (args != nullptr && args->size() > 1) || final != nullptr;
    if (auto z = wrapperZero(ident, n - 1, receiver); z && !has_args) return *z;
    return evalField(dot, ident[n - 1], node, args, final, receiver);
  }

  // `.X.GetValue` where X is an unset protobuf wrapper: the wrapped zero (struct emulation).
  std::optional<Value> wrapperZero(const std::vector<std::string>& ident, std::size_t i,
                                   const Value& receiver) const {
    if (!options_.struct_fields || i == 0 || ident[i] != "GetValue") return std::nullopt;
    if (receiver.valid() && !receiver.isNil()) return std::nullopt;
    const auto it = options_.wrapper_zeros.find(ident[i - 1]);
    if (it == options_.wrapper_zeros.end()) return std::nullopt;
    return Value(it->second);
  }

  // The JSON member standing for field `name`: the exact key, else (struct emulation) the
  // field's JSON name or a case-insensitive match.
  const nlohmann::json* findMember(const nlohmann::json& obj, const std::string& name) const {
    const auto it = obj.find(name);
    if (it != obj.end()) return &*it;
    if (!options_.struct_fields) return nullptr;
    for (auto i = obj.begin(); i != obj.end(); ++i) {
      if (lowerFirstEquals(i.key(), name)) return &i.value();
    }
    for (auto i = obj.begin(); i != obj.end(); ++i) {
      if (equalsIgnoreCase(i.key(), name)) return &i.value();
    }
    return nullptr;
  }

  Value typedField(const Value& receiver, const nlohmann::json& member, const std::string& name) {
    Value v = receiver.element(member);
    const auto it = options_.field_types.find(name);
    if (it != options_.field_types.end()) {
      v = v.withBoxed(false);
      if (it->second == ExecOptions::FieldType::kStringMap) v = v.withStringMap(true);
    }
    return v;
  }

  Value zeroOfField(ExecOptions::FieldType type) const {
    using FT = ExecOptions::FieldType;
    switch (type) {
      case FT::kString: return Value(std::string());
      case FT::kBool: return Value(false);
      case FT::kInt: return Value(std::int64_t{0});
      case FT::kStringMap: return Value(nlohmann::json(nullptr)).withStringMap(true);
      case FT::kMap:
      case FT::kSlice:
      case FT::kStruct: break;
    }
    return Value(nlohmann::json(nullptr));  // a nil map, slice or pointer
  }

  Value evalField(const Value& dot, const std::string& name, const detail::Node* node,
                  const std::vector<detail::NodePtr>* args, const Value* final,
                  const Value& receiver) {
    (void)dot;
    if (!receiver.valid()) {
      if (options_.missing_key == MissingKey::kError) {
        errorf("nil data; no entry for key " + go::quote(name));
      }
      return Value();
    }
    const bool has_args = (args != nullptr && args->size() > 1) || final != nullptr;
    const std::string typ = receiver.typeName();
    const GoKind kind = receiver.kind();
    if (options_.struct_fields) {
      if (auto method = structMethod(receiver, name, has_args)) return *method;
    }
    if (receiver.isNil()) {
      if (receiver.stringMap()) return lookupMissing(receiver, name);
      errorf("nil pointer evaluating " + typ + "." + name);
    }
    if (kind == GoKind::kMap) {
      if (has_args) errorf(name + " is not a method but has arguments");
      if (const nlohmann::json* m = findMember(receiver.json(), name)) {
        return typedField(receiver, *m, name);
      }
      return lookupMissing(receiver, name);
    }
    (void)node;
    errorf("can't evaluate field " + name + " in type " + typ);
  }

  Value lookupMissing(const Value& receiver, const std::string& name) {
    // A missing struct field has its type's zero value; a missing key of a real map does not.
    if (options_.struct_fields && !receiver.stringMap()) {
      if (const auto e = options_.enum_zeros.find(name); e != options_.enum_zeros.end()) {
        return Value(e->second);
      }
      const auto it = options_.field_types.find(name);
      if (it != options_.field_types.end()) return zeroOfField(it->second);
    }
    switch (options_.missing_key) {
      case MissingKey::kDefault: return Value();
      case MissingKey::kZero:
        if (receiver.stringMap()) return Value(std::string());
        return Value(nlohmann::json(nullptr)).withBoxed(true);
      case MissingKey::kError: errorf("map has no entry for key " + go::quote(name));
    }
    return Value();
  }

  // Protobuf-style getters and enum String() over JSON (struct emulation only).
  std::optional<Value> structMethod(const Value& receiver, const std::string& name, bool has_args) {
    const GoKind kind = receiver.kind();
    const bool scalar = kind == GoKind::kString || kind == GoKind::kBool ||
                        kind == GoKind::kInt || kind == GoKind::kUint || kind == GoKind::kFloat;
    if (kind == GoKind::kMap && receiver.json().contains(name)) return std::nullopt;
    if (name == "String" && scalar) {
      if (has_args) errorf("wrong number of args for String: want 0 got 1");
      return Value(goPrintValue(receiver.withBoxed(false)));
    }
    if (name == "GetValue" && (scalar || receiver.isNil())) {
      if (receiver.isNil()) return Value();
      return receiver.withBoxed(false);
    }
    if (name.size() > 3 && name.compare(0, 3, "Get") == 0 &&
        std::isupper(static_cast<unsigned char>(name[3]))) {
      // A generated getter is nil-safe: on a nil message, or for an unset field, it gives the
      // field's zero value, and a nil message for a message field.
      const std::string field = name.substr(3);
      if (kind == GoKind::kMap) {
        if (const nlohmann::json* m = findMember(receiver.json(), field)) {
          return typedField(receiver, *m, field).withBoxed(false);
        }
      }
      if (kind == GoKind::kMap || receiver.isNil()) {
        if (const auto e = options_.enum_zeros.find(field); e != options_.enum_zeros.end()) {
          return Value(e->second);
        }
        const auto it = options_.field_types.find(field);
        if (it != options_.field_types.end()) return zeroOfField(it->second);
        return Value(nlohmann::json(nullptr));
      }
    }
    return std::nullopt;
  }

  Value evalFunction(const Value& dot, const detail::IdentifierNode* node,
                     const detail::Node* cmd, const std::vector<detail::NodePtr>* args,
                     const Value* final) {
    at(node);
    const std::string& name = node->ident;
    const Function* fn = nullptr;
    bool is_builtin = false;
    if (const auto it = set_.funcs().find(name); it != set_.funcs().end()) {
      fn = &it->second;
    } else if (const auto b = builtinFuncs().find(name); b != builtinFuncs().end()) {
      fn = &b->second;
      is_builtin = true;
    }
    if (fn == nullptr) errorf(go::quote(name) + " is not a defined function");
    return evalCall(dot, *fn, is_builtin, cmd, name, args, final);
  }

  Value evalCall(const Value& dot, const Function& fn, bool is_builtin, const detail::Node* node,
                 const std::string& name, const std::vector<detail::NodePtr>* all_args,
                 const Value* final) {
    std::vector<const detail::Node*> args;
    if (all_args != nullptr) {
      for (std::size_t i = 1; i < all_args->size(); ++i) args.push_back((*all_args)[i].get());
    }
    const std::size_t nparams = fn.params.size();
    const std::size_t num_in = args.size() + (final != nullptr ? 1 : 0);
    std::size_t num_fixed = args.size();
    if (fn.variadic) {
      num_fixed = nparams - 1;
      if (num_in < num_fixed) {
        errorf("wrong number of args for " + name + ": want at least " +
               std::to_string(nparams - 1) + " got " + std::to_string(args.size()));
      }
    } else if (num_in != nparams) {
      errorf("wrong number of args for " + name + ": want " + std::to_string(nparams) + " got " +
             std::to_string(num_in));
    }

    // Special case for builtin and/or, which short-circuit.
    if (is_builtin && (name == "and" || name == "or")) {
      Value v;
      for (const detail::Node* arg : args) {
        v = evalArg(dot, ParamType::value(), arg);
        if (goTruth(unboxed(v)) == (name == "or")) return v;
      }
      if (final != nullptr) v = *final;
      return v;
    }

    std::vector<Value> argv;
    argv.reserve(num_in);
    std::size_t i = 0;
    for (; i < num_fixed && i < args.size(); ++i) argv.push_back(evalArg(dot, fn.params[i], args[i]));
    if (fn.variadic) {
      for (; i < args.size(); ++i) argv.push_back(evalArg(dot, fn.params.back(), args[i]));
    }
    if (final != nullptr) {
      const ParamType* t = &fn.params.back();
      if (fn.variadic && num_in - 1 < num_fixed) t = &fn.params[num_in - 1];
      argv.push_back(validateType(*final, *t));
    }

    if (is_builtin && name == "call") {
      at(node);
      if (argv.empty() || !argv[0].valid() || argv[0].isNil()) {
        errorf("error calling call: call of nil");
      }
      const std::string callee = args.empty() ? goPrintValue(*final) : args[0]->str();
      errorf("error calling call: non-function " + callee + " of type " +
             argv[0].withBoxed(false).typeName());
    }

    Result<Value> result = fn.body ? fn.body(argv) : Result<Value>(Error{"not callable"});
    if (!result) {
      at(node);
      errorf("error calling " + name + ": " + result.error().message);
    }
    return std::move(result).value();
  }

  bool canBeNil(const ParamType& t) const {
    switch (t.kind) {
      case ParamType::Kind::kAny:
      case ParamType::Kind::kValue:
      case ParamType::Kind::kMap:
      case ParamType::Kind::kStringMap:
      case ParamType::Kind::kSlice:
      case ParamType::Kind::kStructSlice:
      case ParamType::Kind::kPointer: return true;
      default: return false;
    }
  }

  Value zeroOf(const ParamType& t) const {
    if (t.kind == ParamType::Kind::kValue) return Value();
    Value v(nlohmann::json(nullptr));
    if (t.kind == ParamType::Kind::kStringMap) v = v.withStringMap(true);
    return v;
  }

  bool assignable(const Value& v, const ParamType& t) const {
    const GoKind k = v.kind();
    switch (t.kind) {
      case ParamType::Kind::kAny:
      case ParamType::Kind::kValue: return true;
      case ParamType::Kind::kString: return k == GoKind::kString;
      case ParamType::Kind::kInt: return k == GoKind::kInt;
      case ParamType::Kind::kFloat: return k == GoKind::kFloat;
      case ParamType::Kind::kBool: return k == GoKind::kBool;
      case ParamType::Kind::kMap: return k == GoKind::kMap && !v.stringMap();
      case ParamType::Kind::kStringMap: {
        if (k != GoKind::kMap) return false;
        if (v.stringMap()) return true;
        // Untyped JSON objects holding only strings pass as map[string]string.
        return std::all_of(v.json().begin(), v.json().end(),
                           [](const nlohmann::json& e) { return e.is_string(); });
      }
      case ParamType::Kind::kSlice:
      case ParamType::Kind::kStructSlice: return k == GoKind::kSlice;
      case ParamType::Kind::kStruct: return k == GoKind::kMap;
      case ParamType::Kind::kPointer: return true;
    }
    return false;
  }

  // validateType: the value converted to the parameter type, or Go's error.
  Value validateType(const Value& value, const ParamType& t) {
    if (t.kind == ParamType::Kind::kValue) return value;
    if (!value.valid()) {
      if (canBeNil(t)) return zeroOf(t);
      errorf("invalid value; expected " + t.go_name);
    }
    Value v = value;
    if (v.boxed()) {
      if (t.kind == ParamType::Kind::kAny) return v.withBoxed(false);
      if (v.isNil()) errorf("wrong type for value; expected " + t.go_name + "; got interface {}");
      v = v.withBoxed(false);
    }
    if (t.kind == ParamType::Kind::kAny) return v;
    if (v.isNil() && canBeNil(t)) return zeroOf(t);
    if (!assignable(v, t)) {
      errorf("wrong type for value; expected " + t.go_name + "; got " + v.typeName());
    }
    if (t.kind == ParamType::Kind::kStringMap) v = v.withStringMap(true);
    return v;
  }

  Value evalArg(const Value& dot, const ParamType& t, const detail::Node* n) {
    at(n);
    switch (n->type) {
      case NodeType::kDot: return validateType(dot, t);
      case NodeType::kNil:
        if (canBeNil(t)) return zeroOf(t);
        errorf("cannot assign nil to " + t.go_name);
      case NodeType::kField:
        return validateType(
            evalFieldNode(dot, static_cast<const detail::FieldNode*>(n), nullptr, nullptr), t);
      case NodeType::kVariable:
        return validateType(
            evalVariableNode(dot, static_cast<const detail::VariableNode*>(n), nullptr, nullptr),
            t);
      case NodeType::kPipe:
        return validateType(evalPipeline(dot, static_cast<const detail::PipeNode*>(n)), t);
      case NodeType::kIdentifier:
        return validateType(evalFunction(dot, static_cast<const detail::IdentifierNode*>(n), n,
                                         nullptr, nullptr),
                            t);
      case NodeType::kChain:
        return validateType(
            evalChainNode(dot, static_cast<const detail::ChainNode*>(n), nullptr, nullptr), t);
      default: break;
    }
    switch (t.kind) {
      case ParamType::Kind::kBool:
        if (n->type == NodeType::kBool) {
          return Value(static_cast<const detail::BoolNode*>(n)->value);
        }
        errorf("expected bool; found " + n->str());
      case ParamType::Kind::kFloat:
        if (n->type == NodeType::kNumber && static_cast<const detail::NumberNode*>(n)->is_float) {
          return Value(static_cast<const detail::NumberNode*>(n)->float64);
        }
        errorf("expected float; found " + n->str());
      case ParamType::Kind::kInt:
        if (n->type == NodeType::kNumber && static_cast<const detail::NumberNode*>(n)->is_int) {
          return Value(static_cast<const detail::NumberNode*>(n)->int64);
        }
        errorf("expected integer; found " + n->str());
      case ParamType::Kind::kAny:
      case ParamType::Kind::kValue: return evalEmptyInterface(n);
      case ParamType::Kind::kString:
        if (n->type == NodeType::kString) {
          return Value(static_cast<const detail::StringNode*>(n)->text);
        }
        errorf("expected string; found " + n->str());
      default: break;
    }
    errorf("can't handle " + n->str() + " for arg of type " + t.go_name);
  }

  Value evalEmptyInterface(const detail::Node* n) {
    at(n);
    switch (n->type) {
      case NodeType::kBool: return Value(static_cast<const detail::BoolNode*>(n)->value);
      case NodeType::kNumber: return idealConstant(static_cast<const detail::NumberNode*>(n));
      case NodeType::kString: return Value(static_cast<const detail::StringNode*>(n)->text);
      default: break;
    }
    errorf("can't handle assignment of " + n->str() + " to empty interface argument");
  }

  void printValue(const detail::Node* n, const Value& v) {
    at(n);
    if (!v.valid()) {
      write("<no value>");
      return;
    }
    write(goPrintValue(v));
  }

  const TemplateSet& set_;
  const ExecOptions& options_;
  std::string* out_;
  const detail::Tree* tmpl_ = nullptr;
  const detail::Node* node_ = nullptr;
  std::vector<Variable> vars_;
  int depth_ = 0;
  int nesting_ = 0;
  std::int64_t steps_ = 0;
};

}  // namespace

// ------------------------------------------------------------------------------------------------
// TemplateSet.

TemplateSet::TemplateSet(FuncMap funcs) : funcs_(std::move(funcs)) {}

Result<void> TemplateSet::parse(std::string_view name, std::string_view text) {
  const auto has_function = [this](std::string_view fn) {
    return funcs_.find(fn) != funcs_.end() || builtinFuncs().find(fn) != builtinFuncs().end();
  };
  auto trees = detail::parseTrees(name, text, has_function);
  if (!trees) return trees.error();
  if (name_.empty()) name_ = std::string(name);
  for (auto& [tree_name, tree] : *trees) {
    const auto it = trees_.find(tree_name);
    // AddParseTree/associate: an empty template never replaces an existing one.
    if (it != trees_.end() && detail::isEmptyTree(tree->root.get())) continue;
    trees_[tree_name] = tree;
  }
  return {};
}

bool TemplateSet::has(std::string_view name) const { return trees_.find(name) != trees_.end(); }

std::vector<std::string> TemplateSet::names() const {
  std::vector<std::string> out;
  out.reserve(trees_.size());
  for (const auto& [name, tree] : trees_) out.push_back(name);
  return out;
}

std::shared_ptr<const detail::Tree> TemplateSet::lookup(std::string_view name) const {
  const auto it = trees_.find(name);
  return it == trees_.end() ? nullptr : it->second;
}

Result<TemplateSet> parse(std::string_view name, std::string_view text, const FuncMap& funcs) {
  TemplateSet set(funcs);
  if (auto r = set.parse(name, text); !r) return r.error();
  return set;
}

Result<std::string> execute(const TemplateSet& set, std::string_view name,
                            const nlohmann::json& data, const ExecOptions& options) {
  const auto tree = set.lookup(name);
  if (!tree) {
    return Error{"template: no template " + go::quote(name) + " associated with template " +
                 go::quote(set.name())};
  }
  if (jsonDepth(data) > kMaxJsonDepth) {
    return Error{"template: " + std::string(name) + ": data nested deeper than " +
                 std::to_string(kMaxJsonDepth) + " levels"};
  }
  std::string out;
  State state(set, options, &out);
  try {
    state.run(tree.get(), data.is_null() ? Value() : Value(data));
  } catch (const ExecError& e) {
    return Error{e.message};
  } catch (const std::exception& e) {
    return Error{std::string("template: ") + std::string(name) + ": " + e.what()};
  }
  return out;
}

}  // namespace harness::gotemplate
