#include "yaml_locations.h"

#include <algorithm>
#include <exception>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <libfyaml.h>
#include <yaml-cpp/yaml.h>

namespace harness::sim::detail {
namespace {

// Aliases share nodes, so a small document can name millions of paths; stop indexing there.
constexpr std::size_t kMaxIndexedValues = 200'000;
constexpr int kMaxDepth = 200;

bool isPlainKey(std::string_view key) {
  if (key.empty()) return false;
  for (char c : key) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '$';
    if (!ok) return false;
  }
  return true;
}

// yaml-cpp's IsNullString: the plain, untagged scalars that are null nodes.
bool isYamlCppNull(std::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

// One node of a document as yaml-cpp's Node API shows it to the walk: its kind, position, key
// text and children (a map's keys and values alternate). An alias is the anchored node again.
struct TreeNode {
  enum class Kind { kNull, kScalar, kMap, kSequence } kind = Kind::kNull;
  Position position;
  std::string scalar;
  std::vector<std::size_t> children;
};

// The walk over either tree: yaml-cpp's nodes (the reference reader) or TreeNodes (libfyaml).
template <typename Source>
struct Walker {
  std::unordered_map<std::string, Position>& values;
  std::unordered_map<std::string, Position>& keys;
  const Source& source;

  void walk(typename Source::Node node, const std::string& path, int depth) {
    if (values.size() >= kMaxIndexedValues || depth > kMaxDepth) return;
    values.emplace(path, source.position(node));
    if (source.isMap(node)) {
      source.forEachEntry(node, [&](typename Source::Node key, typename Source::Node value) {
        if (!source.isScalar(key)) return;
        const std::string& text = source.scalar(key);
        const std::string child = childPath(path, text);
        keys.emplace(child, source.position(key));
        if (text == "<<") return;  // merge keys: positions of the anchor
        walk(value, child, depth + 1);
      });
    } else if (source.isSequence(node)) {
      std::size_t i = 0;
      source.forEachItem(node, [&](typename Source::Node item) {
        walk(item, indexPath(path, i++), depth + 1);
      });
    }
  }
};

struct YamlCppSource {
  using Node = const YAML::Node&;
  Position position(Node node) const {
    const YAML::Mark mark = node.Mark();
    if (mark.is_null()) return {};
    return {mark.line + 1, mark.column + 1};
  }
  bool isMap(Node node) const { return node.IsMap(); }
  bool isSequence(Node node) const { return node.IsSequence(); }
  bool isScalar(Node node) const { return node.IsScalar(); }
  const std::string& scalar(Node node) const { return node.Scalar(); }
  template <typename F>
  void forEachEntry(Node node, F&& f) const {
    for (const auto& entry : node) f(entry.first, entry.second);
  }
  template <typename F>
  void forEachItem(Node node, F&& f) const {
    for (const auto& item : node) f(item);
  }
};

struct TreeSource {
  const std::vector<TreeNode>& nodes;
  using Node = std::size_t;
  Position position(Node node) const { return nodes[node].position; }
  bool isMap(Node node) const { return nodes[node].kind == TreeNode::Kind::kMap; }
  bool isSequence(Node node) const { return nodes[node].kind == TreeNode::Kind::kSequence; }
  bool isScalar(Node node) const { return nodes[node].kind == TreeNode::Kind::kScalar; }
  const std::string& scalar(Node node) const { return nodes[node].scalar; }
  template <typename F>
  void forEachEntry(Node node, F&& f) const {
    const auto& children = nodes[node].children;
    for (std::size_t i = 0; i + 1 < children.size(); i += 2) f(children[i], children[i + 1]);
  }
  template <typename F>
  void forEachItem(Node node, F&& f) const {
    for (std::size_t child : nodes[node].children) f(child);
  }
};

struct FyParserPtr {
  fy_diag* diag = nullptr;
  fy_parser* parser = nullptr;
  FyParserPtr() {
    fy_diag_cfg diag_cfg{};
    fy_diag_cfg_default(&diag_cfg);
    diag_cfg.fp = nullptr;
    diag_cfg.output_fn = [](fy_diag*, void*, const char*, size_t) {};
    diag_cfg.colorize = false;
    diag = fy_diag_create(&diag_cfg);
    if (diag == nullptr) return;
    fy_parse_cfg cfg{};
    cfg.flags = static_cast<fy_parse_cfg_flags>(FYPCF_QUIET | FYPCF_JSON_NONE);
    cfg.diag = diag;
    parser = fy_parser_create(&cfg);
  }
  ~FyParserPtr() {
    if (parser != nullptr) fy_parser_destroy(parser);
    if (diag != nullptr) fy_diag_destroy(diag);
  }
  FyParserPtr(const FyParserPtr&) = delete;
  FyParserPtr& operator=(const FyParserPtr&) = delete;
};

struct FyEventPtr {
  fy_parser* parser;
  fy_event* event;
  ~FyEventPtr() {
    if (event != nullptr) fy_parser_event_free(parser, event);
  }
};

std::string_view tokenText(fy_token* token) {
  if (token == nullptr) return {};
  size_t length = 0;
  const char* text = fy_token_get_text(token, &length);
  return text == nullptr ? std::string_view{} : std::string_view(text, length);
}

// Line and column as yaml-cpp counts them: lines end at '\n', columns count bytes.
class Lines {
 public:
  explicit Lines(std::string_view text) {
    starts_.push_back(0);
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (text[i] == '\n') starts_.push_back(i + 1);
    }
  }
  Position at(std::size_t offset) const {
    const auto next = std::upper_bound(starts_.begin(), starts_.end(), offset);
    const auto line = static_cast<std::size_t>(next - starts_.begin()) - 1;
    return {static_cast<int>(line) + 1, static_cast<int>(offset - starts_[line]) + 1};
  }

 private:
  std::vector<std::size_t> starts_;
};

// Where yaml-cpp's scanner starts the token libfyaml gives: libfyaml starts an anchor or alias
// after its '&' or '*', a quoted scalar after its quote, and a block scalar at its first line
// of content; yaml-cpp at the indicator ('&', '*', the quote, the '|' or '>' of the header).
std::size_t yamlCppStart(std::string_view text, fy_token* token, std::size_t start) {
  const fy_token_type type = fy_token_get_type(token);
  if (type == FYTT_ANCHOR || type == FYTT_ALIAS) {
    return start > 0 && (text[start - 1] == '&' || text[start - 1] == '*') ? start - 1 : start;
  }
  if (type != FYTT_SCALAR) return start;
  switch (fy_token_scalar_style(token)) {
    case FYSS_SINGLE_QUOTED:
    case FYSS_DOUBLE_QUOTED:
      return start > 0 && (text[start - 1] == '\'' || text[start - 1] == '"') ? start - 1 : start;
    case FYSS_LITERAL:
    case FYSS_FOLDED: {
      // The header is the last line before the content that holds an indicator outside its
      // comment: "key: |-  # note", "- >2".
      std::size_t end = std::min(start, text.size());
      while (end > 0) {
        const std::size_t line_start = text.rfind('\n', end - 1) == std::string_view::npos
                                           ? 0
                                           : text.rfind('\n', end - 1) + 1;
        std::string_view line = text.substr(line_start, end - line_start);
        if (const auto comment = line.find(" #"); comment != std::string_view::npos) {
          line = line.substr(0, comment);
        }
        if (const auto indicator = line.find_last_of("|>"); indicator != std::string_view::npos) {
          return line_start + indicator;
        }
        if (line_start == 0) break;
        end = line_start - 1;
      }
      return start;
    }
    default:
      return start;
  }
}

// The start of the first of `tokens` that has one (yaml-cpp marks a node where its first
// token, anchor or tag included, starts).
std::optional<std::size_t> startOf(std::string_view text, std::initializer_list<fy_token*> tokens) {
  std::optional<std::size_t> first;
  for (fy_token* token : tokens) {
    if (token == nullptr) continue;
    const fy_mark* mark = fy_token_start_mark(token);
    if (mark == nullptr) continue;
    const std::size_t start = yamlCppStart(text, token, mark->input_pos);
    if (!first || start < *first) first = start;
  }
  return first;
}

// Document `document`'s tree read by libfyaml, as yaml-cpp's LoadAll would give it (the same
// nodes, nulls and positions); nullopt when libfyaml finds an error anywhere in the stream (the
// caller then asks yaml-cpp, whose LoadAll rejects the whole stream on an error).
std::optional<std::pair<std::vector<TreeNode>, std::optional<std::size_t>>> readTree(
    std::string_view text, std::size_t document) {
  const FyParserPtr parser;
  if (parser.parser == nullptr) return std::nullopt;
  if (fy_parser_set_string(parser.parser, text.data(), text.size()) != 0) return std::nullopt;
  const Lines lines(text);
  std::vector<TreeNode> nodes, kept;
  std::optional<std::size_t> root, kept_root;
  std::vector<std::size_t> open;  // collections not yet ended
  std::map<std::string, std::size_t, std::less<>> anchors;
  // Empty nodes (and collections without a start token) take the position of the next token,
  // as yaml-cpp marks them with the token it peeked at.
  std::vector<std::size_t> pending;
  std::size_t seen = 0;
  bool done = false;
  auto settle = [&](std::optional<std::size_t> offset) {
    if (!offset) return;
    for (std::size_t node : pending) nodes[node].position = lines.at(*offset);
    pending.clear();
  };
  auto add = [&](std::size_t node) {
    if (open.empty()) {
      root = node;
    } else {
      nodes[open.back()].children.push_back(node);
    }
  };
  auto newNode = [&](TreeNode::Kind kind, fy_token* anchor, std::optional<std::size_t> start) {
    const std::size_t id = nodes.size();
    nodes.push_back(TreeNode{kind, {}, {}, {}});
    if (start) {
      nodes[id].position = lines.at(*start);
    } else {
      pending.push_back(id);
    }
    if (anchor != nullptr) anchors.insert_or_assign(std::string(tokenText(anchor)), id);
    add(id);
    return id;
  };
  while (true) {
    FyEventPtr e{parser.parser, fy_parser_parse(parser.parser)};
    if (e.event == nullptr) break;
    switch (e.event->type) {
      case FYET_DOCUMENT_START:
        nodes.clear();
        root.reset();
        open.clear();
        anchors.clear();
        pending.clear();
        break;
      case FYET_DOCUMENT_END:
        settle(startOf(text, {e.event->document_end.document_end}));
        if (!done && root && nodes[*root].kind != TreeNode::Kind::kNull && seen++ == document) {
          kept = std::exchange(nodes, {});
          kept_root = root;
          done = true;
        }
        break;
      case FYET_STREAM_END:
        break;
      case FYET_SCALAR: {
        const auto& s = e.event->scalar;
        const std::string_view value = tokenText(s.value);
        const bool plain = fy_token_scalar_style(s.value) == FYSS_PLAIN;
        const bool null = plain && s.tag == nullptr && isYamlCppNull(value);
        // An empty value without properties has no token of its own in yaml-cpp.
        const bool empty = value.empty() && plain && s.anchor == nullptr && s.tag == nullptr;
        const auto start = startOf(text, {s.anchor, s.tag, s.value});
        settle(start);
        const std::size_t id = newNode(null ? TreeNode::Kind::kNull : TreeNode::Kind::kScalar,
                                       s.anchor, empty ? std::nullopt : start);
        if (!null) nodes[id].scalar = std::string(value);
        break;
      }
      case FYET_SEQUENCE_START: {
        const auto& s = e.event->sequence_start;
        const auto start = startOf(text, {s.anchor, s.tag, s.sequence_start});
        settle(start);
        open.push_back(newNode(TreeNode::Kind::kSequence, s.anchor, start));
        break;
      }
      case FYET_MAPPING_START: {
        const auto& s = e.event->mapping_start;
        const auto start = startOf(text, {s.anchor, s.tag, s.mapping_start});
        settle(start);
        open.push_back(newNode(TreeNode::Kind::kMap, s.anchor, start));
        break;
      }
      case FYET_SEQUENCE_END:
        settle(startOf(text, {e.event->sequence_end.sequence_end}));
        if (!open.empty()) open.pop_back();
        break;
      case FYET_MAPPING_END:
        settle(startOf(text, {e.event->mapping_end.mapping_end}));
        if (!open.empty()) open.pop_back();
        break;
      case FYET_ALIAS: {
        const auto found = anchors.find(tokenText(e.event->alias.anchor));
        if (found == anchors.end()) return std::nullopt;
        settle(startOf(text, {e.event->alias.anchor}));
        add(found->second);
        break;
      }
      default:
        break;
    }
  }
  if (fy_parser_get_stream_error(parser.parser)) return std::nullopt;
  return std::make_pair(std::move(kept), kept_root);
}

}  // namespace

std::string childPath(const std::string& parent, std::string_view key) {
  std::string path = parent;
  if (isPlainKey(key)) {
    if (!path.empty()) path += '.';
    path.append(key);
  } else {
    path += '[';
    path.append(key);
    path += ']';
  }
  return path;
}

std::string indexPath(const std::string& parent, std::size_t index) {
  std::string path = parent;
  path += '[';
  path += std::to_string(index);
  path += ']';
  return path;
}

std::string parentPath(const std::string& path) {
  if (path.empty()) return {};
  if (path.back() == ']') {
    const auto open = path.rfind('[');
    if (open == std::string::npos) return {};
    return path.substr(0, open);
  }
  const auto dot = path.find_last_of(".]");
  if (dot == std::string::npos) return {};
  if (path[dot] == ']') return path.substr(0, dot + 1);
  return path.substr(0, dot);
}

struct LocationIndexBuilder {
  template <typename Source>
  static void walk(LocationIndex& index, const Source& source, typename Source::Node root) {
    Walker<Source>{index.values_, index.keys_, source}.walk(root, "", 0);
  }
};

LocationIndex LocationIndex::build(std::string_view text, std::size_t document) {
  // Callers build the index only for text core::parseYamlDocuments accepted (its nesting and
  // aliasing limits); the walk is bounded again by kMaxDepth and kMaxIndexedValues. libfyaml
  // reads it (about a tenth of yaml-cpp's instructions); text it refuses goes to yaml-cpp, as
  // core::parseYamlDocuments does, so that both give the same index.
  auto tree = readTree(text, document);
  if (!tree) return buildWithYamlCpp(text, document);
  LocationIndex index;
  if (tree->second) LocationIndexBuilder::walk(index, TreeSource{tree->first}, *tree->second);
  return index;
}

LocationIndex LocationIndex::buildWithYamlCpp(std::string_view text, std::size_t document) {
  LocationIndex index;
  try {
    const std::vector<YAML::Node> documents = YAML::LoadAll(std::string(text));
    std::size_t seen = 0;
    for (const auto& node : documents) {
      if (!node.IsDefined() || node.IsNull()) continue;
      if (seen++ != document) continue;
      LocationIndexBuilder::walk<YamlCppSource>(index, YamlCppSource{}, node);
      break;
    }
  } catch (const std::exception&) {
    // Positions are a convenience: the values' own parser reports syntax errors.
  }
  return index;
}

Position LocationIndex::value(const std::string& path) const {
  std::string current = path;
  while (true) {
    if (auto it = values_.find(current); it != values_.end() && it->second.line > 0) {
      return it->second;
    }
    if (current.empty()) return {};
    current = parentPath(current);
  }
}

Position LocationIndex::key(const std::string& path) const {
  if (auto it = keys_.find(path); it != keys_.end() && it->second.line > 0) return it->second;
  return value(path);
}

}  // namespace harness::sim::detail
