#pragma once

// Internal: the template parser, a port of golang/go src/text/template/parse/parse.go.

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "harness/core/result.h"
#include "node.h"

namespace harness::gotemplate::detail {

// Maximum nesting of parenthesized pipelines (Go: maxStackDepth 10000) and of control
// structures (Go: none). The recursive descent takes one to two KiB of C++ stack per level;
// real templates nest fewer than ten levels.
inline constexpr int kMaxParseDepth = 300;

using TreeSet = std::map<std::string, std::shared_ptr<Tree>, std::less<>>;

// parse.Parse(name, text, "", "", funcs, builtins): the top-level tree plus every {{define}} and
// {{block}}. `has_function` answers whether a function name is defined (user or builtin).
core::Result<TreeSet> parseTrees(std::string_view name, std::string_view text,
                                 const std::function<bool(std::string_view)>& has_function);

// Whether `name` is one of Sprig's functions this library leaves out (sprig_funcs.cc); a parse
// error for an undefined function then says so.
bool unimplementedSprigFunction(std::string_view name);

// strconv.Unquote.
bool goUnquote(std::string_view s, std::string* out);

}  // namespace harness::gotemplate::detail
