#pragma once

// Internal: parse tree nodes, after golang/go src/text/template/parse/node.go. String() gives
// the same text as Go's, because exec errors quote it ("at <.Foo>", "at <index .A 1>").

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace harness::gotemplate::detail {

// The text a tree was parsed from, shared by every tree of one parse call; nodes point to it
// to compute Go's error context (line and column from the byte offset).
struct Source {
  std::string parse_name;  // the top-level template name of the parse call
  std::string text;
};

enum class NodeType {
  kText, kAction, kBool, kChain, kCommand, kDot, kElse, kEnd, kField, kIdentifier, kIf, kList,
  kNil, kNumber, kPipe, kRange, kString, kTemplate, kVariable, kWith, kComment, kBreak, kContinue,
};

struct Node {
  Node(NodeType t, std::size_t p, const Source* s) : type(t), pos(p), src(s) {}
  virtual ~Node() = default;
  Node(const Node&) = delete;
  Node& operator=(const Node&) = delete;

  virtual void writeTo(std::string& out) const = 0;
  [[nodiscard]] std::string str() const {
    std::string s;
    writeTo(s);
    return s;
  }

  NodeType type;
  std::size_t pos;
  const Source* src;
};

using NodePtr = std::unique_ptr<Node>;

struct ListNode final : Node {
  ListNode(std::size_t p, const Source* s) : Node(NodeType::kList, p, s) {}
  void writeTo(std::string& out) const override {
    for (const auto& n : nodes) n->writeTo(out);
  }
  std::vector<NodePtr> nodes;
};

struct TextNode final : Node {
  TextNode(std::size_t p, const Source* s, std::string t)
      : Node(NodeType::kText, p, s), text(std::move(t)) {}
  void writeTo(std::string& out) const override { out += text; }
  std::string text;
};

struct VariableNode final : Node {
  VariableNode(std::size_t p, const Source* s, std::vector<std::string> id)
      : Node(NodeType::kVariable, p, s), ident(std::move(id)) {}
  void writeTo(std::string& out) const override {
    for (std::size_t i = 0; i < ident.size(); ++i) {
      if (i > 0) out.push_back('.');
      out += ident[i];
    }
  }
  std::vector<std::string> ident;  // variable name ("$x") then fields
};

struct CommandNode;

struct PipeNode final : Node {
  PipeNode(std::size_t p, const Source* s, int l) : Node(NodeType::kPipe, p, s), line(l) {}
  void writeTo(std::string& out) const override;
  int line;
  bool is_assign = false;
  std::vector<std::unique_ptr<VariableNode>> decl;
  std::vector<std::unique_ptr<CommandNode>> cmds;
};

struct CommandNode final : Node {
  CommandNode(std::size_t p, const Source* s) : Node(NodeType::kCommand, p, s) {}
  void writeTo(std::string& out) const override {
    for (std::size_t i = 0; i < args.size(); ++i) {
      if (i > 0) out.push_back(' ');
      if (args[i]->type == NodeType::kPipe) {
        out.push_back('(');
        args[i]->writeTo(out);
        out.push_back(')');
      } else {
        args[i]->writeTo(out);
      }
    }
  }
  std::vector<NodePtr> args;
};

inline void PipeNode::writeTo(std::string& out) const {
  if (!decl.empty()) {
    for (std::size_t i = 0; i < decl.size(); ++i) {
      if (i > 0) out += ", ";
      decl[i]->writeTo(out);
    }
    out += " := ";
  }
  for (std::size_t i = 0; i < cmds.size(); ++i) {
    if (i > 0) out += " | ";
    cmds[i]->writeTo(out);
  }
}

struct ActionNode final : Node {
  ActionNode(std::size_t p, const Source* s, int l, std::unique_ptr<PipeNode> pp)
      : Node(NodeType::kAction, p, s), line(l), pipe(std::move(pp)) {}
  void writeTo(std::string& out) const override {
    out += "{{";
    pipe->writeTo(out);
    out += "}}";
  }
  int line;
  std::unique_ptr<PipeNode> pipe;
};

struct IdentifierNode final : Node {
  IdentifierNode(std::size_t p, const Source* s, std::string id)
      : Node(NodeType::kIdentifier, p, s), ident(std::move(id)) {}
  void writeTo(std::string& out) const override { out += ident; }
  std::string ident;
};

struct DotNode final : Node {
  DotNode(std::size_t p, const Source* s) : Node(NodeType::kDot, p, s) {}
  void writeTo(std::string& out) const override { out += "."; }
};

struct NilNode final : Node {
  NilNode(std::size_t p, const Source* s) : Node(NodeType::kNil, p, s) {}
  void writeTo(std::string& out) const override { out += "nil"; }
};

struct FieldNode final : Node {
  FieldNode(std::size_t p, const Source* s, std::vector<std::string> id)
      : Node(NodeType::kField, p, s), ident(std::move(id)) {}
  void writeTo(std::string& out) const override {
    for (const auto& id : ident) {
      out.push_back('.');
      out += id;
    }
  }
  std::vector<std::string> ident;
};

struct ChainNode final : Node {
  ChainNode(std::size_t p, const Source* s, NodePtr n)
      : Node(NodeType::kChain, p, s), node(std::move(n)) {}
  void writeTo(std::string& out) const override {
    if (node->type == NodeType::kPipe) {
      out.push_back('(');
      node->writeTo(out);
      out.push_back(')');
    } else {
      node->writeTo(out);
    }
    for (const auto& f : field) {
      out.push_back('.');
      out += f;
    }
  }
  NodePtr node;
  std::vector<std::string> field;
};

struct BoolNode final : Node {
  BoolNode(std::size_t p, const Source* s, bool v) : Node(NodeType::kBool, p, s), value(v) {}
  void writeTo(std::string& out) const override { out += value ? "true" : "false"; }
  bool value;
};

struct NumberNode final : Node {
  NumberNode(std::size_t p, const Source* s, std::string t)
      : Node(NodeType::kNumber, p, s), text(std::move(t)) {}
  void writeTo(std::string& out) const override { out += text; }
  bool is_int = false;
  bool is_uint = false;
  bool is_float = false;
  bool is_complex = false;
  std::int64_t int64 = 0;
  std::uint64_t uint64 = 0;
  double float64 = 0;
  std::string text;
};

struct StringNode final : Node {
  StringNode(std::size_t p, const Source* s, std::string q, std::string t)
      : Node(NodeType::kString, p, s), quoted(std::move(q)), text(std::move(t)) {}
  void writeTo(std::string& out) const override { out += quoted; }
  std::string quoted;
  std::string text;
};

struct EndNode final : Node {
  EndNode(std::size_t p, const Source* s) : Node(NodeType::kEnd, p, s) {}
  void writeTo(std::string& out) const override { out += "{{end}}"; }
};

struct ElseNode final : Node {
  ElseNode(std::size_t p, const Source* s, int l) : Node(NodeType::kElse, p, s), line(l) {}
  void writeTo(std::string& out) const override { out += "{{else}}"; }
  int line;
};

struct BreakNode final : Node {
  BreakNode(std::size_t p, const Source* s, int l) : Node(NodeType::kBreak, p, s), line(l) {}
  void writeTo(std::string& out) const override { out += "{{break}}"; }
  int line;
};

struct ContinueNode final : Node {
  ContinueNode(std::size_t p, const Source* s, int l)
      : Node(NodeType::kContinue, p, s), line(l) {}
  void writeTo(std::string& out) const override { out += "{{continue}}"; }
  int line;
};

// if / range / with.
struct BranchNode final : Node {
  BranchNode(NodeType t, std::size_t p, const Source* s, int l, std::unique_ptr<PipeNode> pp,
             std::unique_ptr<ListNode> li, std::unique_ptr<ListNode> el)
      : Node(t, p, s), line(l), pipe(std::move(pp)), list(std::move(li)), else_list(std::move(el)) {}
  void writeTo(std::string& out) const override {
    out += "{{";
    out += type == NodeType::kIf ? "if" : type == NodeType::kRange ? "range" : "with";
    out.push_back(' ');
    pipe->writeTo(out);
    out += "}}";
    list->writeTo(out);
    if (else_list) {
      out += "{{else}}";
      else_list->writeTo(out);
    }
    out += "{{end}}";
  }
  int line;
  std::unique_ptr<PipeNode> pipe;
  std::unique_ptr<ListNode> list;
  std::unique_ptr<ListNode> else_list;
};

struct TemplateNode final : Node {
  TemplateNode(std::size_t p, const Source* s, int l, std::string n, std::unique_ptr<PipeNode> pp)
      : Node(NodeType::kTemplate, p, s), line(l), name(std::move(n)), pipe(std::move(pp)) {}
  void writeTo(std::string& out) const override;
  int line;
  std::string name;
  std::unique_ptr<PipeNode> pipe;
};

// One parsed template.
struct Tree {
  std::string name;
  std::shared_ptr<const Source> source;
  std::unique_ptr<ListNode> root;
};

// parse.IsEmptyTree: nothing but space and comments.
bool isEmptyTree(const Node* n);

}  // namespace harness::gotemplate::detail
