// Followed: golang/go src/encoding/json/encode.go (floatEncoder, appendString with
// htmlSafeSet, map key sorting), indent.go (MarshalIndent layout) and decode.go (numbers decode
// to float64 in interface{}).

#include "harness/gotemplate/go_json.h"

#include <charconv>
#include <cmath>
#include <utility>
#include <vector>

#include "harness/core/json.h"
#include "harness/core/utf8.h"
#include "harness/go/json.h"
#include "harness/go/strconv.h"

namespace harness::gotemplate {
namespace {

core::Result<std::string> floatText(double f) {
  if (std::isnan(f) || std::isinf(f)) {
    return core::Error{"json: unsupported value: " + go::formatFloat(f)};
  }
  return go::jsonFloat(f);
}

struct Encoder {
  const GoJsonOptions& options;
  std::string out;

  void newline(int depth) {
    out.push_back('\n');
    for (int i = 0; i < depth; ++i) out += options.indent;
  }

  core::Result<void> encode(const nlohmann::json& v, int depth) {
    if (depth > kMaxJsonDepth) return core::Error{"json: value nested too deeply"};
    const bool pretty = !options.indent.empty();
    switch (v.type()) {
      case nlohmann::json::value_t::null: out += "null"; return {};
      case nlohmann::json::value_t::boolean: out += v.get<bool>() ? "true" : "false"; return {};
      case nlohmann::json::value_t::number_integer:
        out += std::to_string(v.get<std::int64_t>());
        return {};
      case nlohmann::json::value_t::number_unsigned:
        out += std::to_string(v.get<std::uint64_t>());
        return {};
      case nlohmann::json::value_t::number_float: {
        auto t = floatText(v.get<double>());
        if (!t) return t.error();
        out += *t;
        return {};
      }
      case nlohmann::json::value_t::string:
        go::appendJsonString(out, v.get_ref<const std::string&>(), options.escape_html);
        return {};
      case nlohmann::json::value_t::array: {
        out.push_back('[');
        if (v.empty()) {
          out.push_back(']');
          return {};
        }
        bool first = true;
        for (const auto& e : v) {
          if (!first) out.push_back(',');
          first = false;
          if (pretty) newline(depth + 1);
          if (auto r = encode(e, depth + 1); !r) return r;
        }
        if (pretty) newline(depth);
        out.push_back(']');
        return {};
      }
      case nlohmann::json::value_t::object: {
        out.push_back('{');
        if (v.empty()) {
          out.push_back('}');
          return {};
        }
        bool first = true;
        for (auto it = v.begin(); it != v.end(); ++it) {
          if (!first) out.push_back(',');
          first = false;
          if (pretty) newline(depth + 1);
          go::appendJsonString(out, it.key(), options.escape_html);
          out += pretty ? ": " : ":";
          if (auto r = encode(it.value(), depth + 1); !r) return r;
        }
        if (pretty) newline(depth);
        out.push_back('}');
        return {};
      }
      default: out += "null"; return {};
    }
  }
};

}  // namespace

core::Result<std::string> goJsonMarshal(const nlohmann::json& v, const GoJsonOptions& options) {
  Encoder e{options, {}};
  if (auto r = e.encode(v, 0); !r) return r.error();
  return std::move(e.out);
}

int jsonDepth(const nlohmann::json& v) {
  int max_depth = 0;
  std::vector<std::pair<const nlohmann::json*, int>> stack{{&v, 0}};
  while (!stack.empty()) {
    auto [node, depth] = stack.back();
    stack.pop_back();
    if (!node->is_structured()) continue;
    if (depth + 1 > max_depth) max_depth = depth + 1;
    for (const auto& e : *node) stack.emplace_back(&e, depth + 1);
  }
  return max_depth;
}

nlohmann::json goJsonNumbers(const nlohmann::json& v) {
  if (v.is_number_integer() || v.is_number_unsigned()) {
    return v.is_number_unsigned() ? static_cast<double>(v.get<std::uint64_t>())
                                  : static_cast<double>(v.get<std::int64_t>());
  }
  if (v.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (auto it = v.begin(); it != v.end(); ++it) out[it.key()] = goJsonNumbers(it.value());
    return out;
  }
  if (v.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& e : v) out.push_back(goJsonNumbers(e));
    return out;
  }
  return v;
}

core::Result<nlohmann::json> goJsonUnmarshal(std::string_view text) {
  nlohmann::json j = core::parseJsonOrDiscarded(text);
  if (j.is_discarded()) {
    return core::Error{"invalid JSON"};
  }
  if (jsonDepth(j) > kMaxJsonDepth) return core::Error{"exceeded max depth"};
  return goJsonNumbers(j);
}

}  // namespace harness::gotemplate
