// Followed: k8s.io/apimachinery pkg/labels/selector.go (Lexer, Parser: parse, parseRequirement,
// parseKeyAndInferOperator, parseOperator, parseValues, parseIdentifiersList, parseExactValue),
// pkg/fields/selector.go (splitTerms, splitTerm, UnescapeValue, parseSelector),
// pkg/runtime/conversion.go DefaultMetaV1FieldSelectorConversion, and the field label conversions
// of k8s.io/kubernetes pkg/apis/core/v1/conversion.go, pkg/apis/apps/v1/conversion.go,
// pkg/apis/batch/v1/conversion.go, pkg/apis/events/v1/conversion.go.

#include "selectors.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>

namespace harness::sim::rest {
namespace {

// --- labels.Parse ---

enum class Token {
  kError,
  kEndOfString,
  kClosedPar,
  kComma,
  kDoesNotExist,
  kDoubleEquals,
  kEquals,
  kGreaterThan,
  kIdentifier,
  kIn,
  kLessThan,
  kNotEquals,
  kNotIn,
  kOpenPar,
};

struct Lexed {
  Token token;
  std::string literal;
};

bool isWhitespace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }
bool isSpecialSymbol(char c) {
  return c == '=' || c == '!' || c == '(' || c == ')' || c == ',' || c == '>' || c == '<';
}

std::vector<Lexed> lex(std::string_view s) {
  static const std::map<std::string, Token, std::less<>> kSymbols = {
      {"!", Token::kDoesNotExist}, {"!=", Token::kNotEquals}, {"(", Token::kOpenPar},
      {")", Token::kClosedPar},    {",", Token::kComma},      {"=", Token::kEquals},
      {"==", Token::kDoubleEquals}, {">", Token::kGreaterThan}, {"<", Token::kLessThan},
  };
  std::vector<Lexed> out;
  std::size_t i = 0;
  while (true) {
    while (i < s.size() && isWhitespace(s[i])) ++i;
    if (i >= s.size()) {
      out.push_back({Token::kEndOfString, ""});
      return out;
    }
    if (isSpecialSymbol(s[i])) {
      // scanSpecialSymbol: the longest symbol that is a prefix of the input.
      std::string best;
      Token best_token = Token::kError;
      std::string candidate;
      for (std::size_t j = i; j < s.size() && isSpecialSymbol(s[j]); ++j) {
        candidate.push_back(s[j]);
        auto it = kSymbols.find(candidate);
        if (it == kSymbols.end()) break;
        best = candidate;
        best_token = it->second;
      }
      if (best_token == Token::kError) {
        out.push_back({Token::kError, fmt::format("error expected: keyword found '{}'", s[i])});
        return out;
      }
      out.push_back({best_token, best});
      i += best.size();
      continue;
    }
    std::string word;
    while (i < s.size() && !isWhitespace(s[i]) && !isSpecialSymbol(s[i])) word.push_back(s[i++]);
    if (word == "in") {
      out.push_back({Token::kIn, word});
    } else if (word == "notin") {
      out.push_back({Token::kNotIn, word});
    } else {
      out.push_back({Token::kIdentifier, word});
    }
  }
}

enum class Context { kKeyAndOperator, kValues };

class LabelParser {
 public:
  explicit LabelParser(std::vector<Lexed> tokens) : tokens_(std::move(tokens)) {}

  core::Result<nlohmann::json> parse() {
    nlohmann::json expressions = nlohmann::json::array();
    while (true) {
      const Lexed next = lookahead(Context::kValues);
      if (next.token == Token::kIdentifier || next.token == Token::kDoesNotExist) {
        auto requirement = parseRequirement();
        if (!requirement) {
          return core::makeError("unable to parse requirement: " + requirement.error().message);
        }
        expressions.push_back(std::move(*requirement));
        const Lexed after = consume(Context::kValues);
        if (after.token == Token::kEndOfString) break;
        if (after.token == Token::kComma) {
          const Lexed following = lookahead(Context::kValues);
          if (following.token != Token::kIdentifier && following.token != Token::kDoesNotExist) {
            return core::makeError(fmt::format("found '{}', expected: identifier after ','",
                                               following.literal));
          }
          continue;
        }
        return core::makeError(
            fmt::format("found '{}', expected: ',' or 'end of string'", after.literal));
      }
      if (next.token == Token::kEndOfString) break;
      return core::makeError(
          fmt::format("found '{}', expected: !, identifier, or 'end of string'", next.literal));
    }
    return nlohmann::json{{"matchExpressions", std::move(expressions)}};
  }

 private:
  Lexed lookahead(Context context) const {
    Lexed t = tokens_[std::min(position_, tokens_.size() - 1)];
    if (context == Context::kValues && (t.token == Token::kIn || t.token == Token::kNotIn)) {
      t.token = Token::kIdentifier;
    }
    return t;
  }
  Lexed consume(Context context) {
    Lexed t = lookahead(context);
    if (position_ < tokens_.size() - 1) ++position_;
    return t;
  }

  core::Result<nlohmann::json> parseRequirement() {
    Lexed t = consume(Context::kValues);
    bool does_not_exist = false;
    if (t.token == Token::kDoesNotExist) {
      does_not_exist = true;
      t = consume(Context::kValues);
    }
    if (t.token != Token::kIdentifier) {
      return core::makeError(fmt::format("found '{}', expected: identifier", t.literal));
    }
    const std::string key = t.literal;
    const Token next = lookahead(Context::kValues).token;
    if (next == Token::kEndOfString || next == Token::kComma) {
      return nlohmann::json{{"key", key}, {"operator", does_not_exist ? "DoesNotExist" : "Exists"}};
    }
    if (does_not_exist) {
      // upstream builds a DoesNotExist requirement and then reads an operator anyway.
      return nlohmann::json{{"key", key}, {"operator", "DoesNotExist"}};
    }
    const Lexed op = consume(Context::kKeyAndOperator);
    std::string op_name;
    switch (op.token) {
      case Token::kIn:
        op_name = "In";
        break;
      case Token::kNotIn:
        op_name = "NotIn";
        break;
      case Token::kEquals:
      case Token::kDoubleEquals:
        op_name = "In";
        break;
      case Token::kNotEquals:
        op_name = "NotIn";
        break;
      case Token::kGreaterThan:
      case Token::kLessThan:
        return core::makeError(fmt::format(
            "operator {} is not supported by the simulator",
            op.token == Token::kGreaterThan ? "gt" : "lt"));
      default:
        return core::makeError(fmt::format("found '{}', expected: in, notin, =, ==, !=, gt, lt",
                                           op.literal));
    }
    std::set<std::string> values;
    if (op.token == Token::kIn || op.token == Token::kNotIn) {
      auto parsed = parseValues();
      if (!parsed) return parsed.error();
      values = std::move(*parsed);
    } else {
      auto parsed = parseExactValue();
      if (!parsed) return parsed.error();
      values.insert(std::move(*parsed));
    }
    return nlohmann::json{{"key", key},
                          {"operator", op_name},
                          {"values", std::vector<std::string>(values.begin(), values.end())}};
  }

  core::Result<std::set<std::string>> parseValues() {
    const Lexed open = consume(Context::kValues);
    if (open.token != Token::kOpenPar) {
      return core::makeError(fmt::format("found '{}' expected: '('", open.literal));
    }
    const Lexed next = lookahead(Context::kValues);
    if (next.token == Token::kIdentifier || next.token == Token::kComma) {
      auto values = parseIdentifiersList();
      if (!values) return values.error();
      const Lexed close = consume(Context::kValues);
      if (close.token != Token::kClosedPar) {
        return core::makeError(fmt::format("found '{}', expected: ')'", close.literal));
      }
      return values;
    }
    if (next.token == Token::kClosedPar) {
      consume(Context::kValues);
      return std::set<std::string>{""};
    }
    return core::makeError(
        fmt::format("found '{}', expected: ',', ')' or identifier", next.literal));
  }

  core::Result<std::set<std::string>> parseIdentifiersList() {
    std::set<std::string> values;
    while (true) {
      const Lexed t = consume(Context::kValues);
      if (t.token == Token::kIdentifier) {
        values.insert(t.literal);
        const Lexed next = lookahead(Context::kValues);
        if (next.token == Token::kComma) continue;
        if (next.token == Token::kClosedPar) return values;
        return core::makeError(fmt::format("found '{}', expected: ',' or ')'", next.literal));
      }
      if (t.token == Token::kComma) {
        if (values.empty()) values.insert("");  // "(,a)" holds the empty value
        const Lexed next = lookahead(Context::kValues);
        if (next.token == Token::kClosedPar) {
          values.insert("");
          return values;
        }
        if (next.token == Token::kComma) {
          consume(Context::kValues);
          values.insert("");
        }
        continue;
      }
      return core::makeError(fmt::format("found '{}', expected: ',', or identifier", t.literal));
    }
  }

  core::Result<std::string> parseExactValue() {
    const Lexed next = lookahead(Context::kValues);
    if (next.token == Token::kEndOfString || next.token == Token::kComma) return std::string();
    const Lexed t = consume(Context::kValues);
    if (t.token == Token::kIdentifier) return t.literal;
    return core::makeError(fmt::format("found '{}', expected: identifier", t.literal));
  }

  std::vector<Lexed> tokens_;
  std::size_t position_ = 0;
};

// --- fields.ParseSelector ---

std::vector<std::string> splitTerms(std::string_view s) {
  std::vector<std::string> terms;
  if (s.empty()) return terms;
  std::string current;
  bool escaped = false;
  for (char c : s) {
    if (escaped) {
      current.push_back(c);
      escaped = false;
    } else if (c == '\\') {
      current.push_back(c);
      escaped = true;
    } else if (c == ',') {
      terms.push_back(std::move(current));
      current.clear();
    } else {
      current.push_back(c);
    }
  }
  terms.push_back(std::move(current));
  return terms;
}

core::Result<std::string> unescapeValue(const std::string& s) {
  if (s.find('\\') == std::string::npos) return s;
  std::string out;
  bool escaped = false;
  for (char c : s) {
    if (escaped) {
      if (c != '\\' && c != ',' && c != '=') {
        return core::makeError(fmt::format("invalid field selector: invalid escape sequence: \\{}",
                                           c));
      }
      out.push_back(c);
      escaped = false;
    } else if (c == '\\') {
      escaped = true;
    } else {
      out.push_back(c);
    }
  }
  if (escaped) return core::makeError("invalid field selector: unterminated escape sequence: \\");
  return out;
}

// The field labels of a kind and where their values are in the versioned object.
struct FieldLabels {
  std::map<std::string, std::string, std::less<>> paths;  // label -> dotted JSON path
  std::set<std::string, std::less<>> booleans;
  std::set<std::string, std::less<>> integers;
  bool default_conversion = true;  // DefaultMetaV1FieldSelectorConversion's error text
};

const FieldLabels& fieldLabelsFor(std::string_view group, std::string_view kind) {
  static const std::map<std::string, FieldLabels, std::less<>> kTable = [] {
    std::map<std::string, FieldLabels, std::less<>> t;
    auto meta = [](FieldLabels labels, bool with_namespace = true) {
      labels.paths["metadata.name"] = "metadata.name";
      if (with_namespace) labels.paths["metadata.namespace"] = "metadata.namespace";
      return labels;
    };
    FieldLabels pod;
    for (const char* f : {"spec.nodeName", "spec.restartPolicy", "spec.schedulerName",
                          "spec.serviceAccountName", "spec.hostNetwork", "status.phase",
                          "status.podIP", "status.nominatedNodeName"}) {
      pod.paths[f] = f;
    }
    pod.booleans.insert("spec.hostNetwork");
    pod.default_conversion = false;
    t["/Pod"] = meta(pod);

    FieldLabels event;
    for (const char* f : {"involvedObject.kind", "involvedObject.namespace", "involvedObject.name",
                          "involvedObject.uid", "involvedObject.apiVersion",
                          "involvedObject.resourceVersion", "involvedObject.fieldPath", "reason",
                          "reportingComponent", "type"}) {
      event.paths[f] = f;
    }
    event.paths["source"] = "source.component";
    event.default_conversion = false;
    t["/Event"] = meta(event);

    FieldLabels events_v1;
    for (const char* f : {"regarding.kind", "regarding.namespace", "regarding.name",
                          "regarding.uid", "regarding.apiVersion", "regarding.resourceVersion",
                          "regarding.fieldPath", "reason", "reportingController", "type"}) {
      events_v1.paths[f] = f;
    }
    events_v1.default_conversion = false;
    t["events.k8s.io/Event"] = meta(events_v1);

    FieldLabels secret;
    secret.paths["type"] = "type";
    secret.default_conversion = false;
    t["/Secret"] = meta(secret);

    FieldLabels ns;
    ns.paths["status.phase"] = "status.phase";
    ns.default_conversion = false;
    t["/Namespace"] = meta(ns, false);

    FieldLabels node;
    node.paths["spec.unschedulable"] = "spec.unschedulable";
    node.booleans.insert("spec.unschedulable");
    node.default_conversion = false;
    t["/Node"] = meta(node, false);

    FieldLabels replicas;
    replicas.paths["status.replicas"] = "status.replicas";
    replicas.integers.insert("status.replicas");
    replicas.default_conversion = false;
    t["/ReplicationController"] = meta(replicas);
    t["apps/ReplicaSet"] = meta(replicas);

    FieldLabels job;
    job.paths["status.successful"] = "status.successful";
    job.integers.insert("status.successful");
    job.default_conversion = false;
    t["batch/Job"] = meta(job);
    return t;
  }();
  static const FieldLabels kDefault = [] {
    FieldLabels labels;
    labels.paths["metadata.name"] = "metadata.name";
    labels.paths["metadata.namespace"] = "metadata.namespace";
    return labels;
  }();
  auto it = kTable.find(fmt::format("{}/{}", group, kind));
  return it == kTable.end() ? kDefault : it->second;
}

std::string fieldValue(const nlohmann::json& object, const std::string& label) {
  std::string path = label == "source" ? "source.component" : label;
  const nlohmann::json* at = &object;
  std::size_t start = 0;
  while (true) {
    const auto dot = path.find('.', start);
    const std::string key = path.substr(start, dot == std::string::npos ? dot : dot - start);
    if (!at->is_object()) return {};
    auto it = at->find(key);
    if (it == at->end()) {
      at = nullptr;
      break;
    }
    at = &*it;
    if (dot == std::string::npos) break;
    start = dot + 1;
  }
  if (at == nullptr || at->is_null()) {
    if (label == "spec.hostNetwork" || label == "spec.unschedulable") return "false";
    if (label == "status.replicas" || label == "status.successful") return "0";
    return {};
  }
  if (at->is_string()) return at->get<std::string>();
  if (at->is_boolean()) return at->get<bool>() ? "true" : "false";
  if (at->is_number_integer()) return std::to_string(at->get<std::int64_t>());
  return at->dump();
}

}  // namespace

core::Result<core::LabelSelector> parseLabelSelector(std::string_view text) {
  LabelParser parser(lex(text));
  // A lexer error surfaces where the parser meets it, with the lexer's literal.
  auto json = parser.parse();
  if (!json) return json.error();
  auto selector = core::LabelSelector::parse(*json);
  if (!selector) return core::makeError("unable to parse requirement: " + selector.error().message);
  return selector;
}

core::Result<std::vector<FieldRequirement>> parseFieldSelector(std::string_view text) {
  std::vector<std::string> terms = splitTerms(text);
  std::sort(terms.begin(), terms.end());
  std::vector<FieldRequirement> out;
  for (const auto& term : terms) {
    if (term.empty()) continue;
    // splitTerm: the first position where "!=", "==" or "=" starts.
    std::size_t at = std::string::npos;
    std::string op;
    for (std::size_t i = 0; i < term.size() && at == std::string::npos; ++i) {
      for (const char* candidate : {"!=", "==", "="}) {
        if (term.compare(i, std::char_traits<char>::length(candidate), candidate) == 0) {
          at = i;
          op = candidate;
          break;
        }
      }
    }
    if (at == std::string::npos) {
      return core::makeError(
          fmt::format("invalid selector: '{}'; can't understand '{}'", text, term));
    }
    auto value = unescapeValue(term.substr(at + op.size()));
    if (!value) return value.error();
    out.push_back({term.substr(0, at), op != "!=", std::move(*value)});
  }
  return out;
}

core::Result<void> checkFieldLabels(std::string_view group, std::string_view kind,
                                    const std::vector<FieldRequirement>& requirements) {
  const FieldLabels& labels = fieldLabelsFor(group, kind);
  for (const auto& requirement : requirements) {
    if (labels.paths.count(requirement.field) != 0) continue;
    if (labels.default_conversion) {
      return core::makeError(
          fmt::format("\"{}\" is not a known field selector: only \"metadata.name\", "
                      "\"metadata.namespace\"",
                      requirement.field));
    }
    return core::makeError("field label not supported: " + requirement.field);
  }
  return {};
}

bool matchesFields(const nlohmann::json& object,
                   const std::vector<FieldRequirement>& requirements) {
  for (const auto& requirement : requirements) {
    const bool equal = fieldValue(object, requirement.field) == requirement.value;
    if (equal != requirement.equals) return false;
  }
  return true;
}

}  // namespace harness::sim::rest
