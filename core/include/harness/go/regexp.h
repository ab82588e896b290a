#pragma once

// Go's regexp package on RE2 (Go's regexp is RE2's syntax and semantics: leftmost-first, UTF-8,
// no backreferences, linear time in the input, so no input needs a size cap). What RE2's C++ API
// leaves to the caller is Go's here: the iteration rules of FindAll, ReplaceAll and Split around
// empty matches, the $-template of Expand, and the error text of Compile.
// Followed: go/src/regexp/regexp.go (Compile, allMatches, replaceAll, Split, expand, extract)
// and regexp/syntax/parse.go (Error.Error and the ErrorCode texts).

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/core/result.h"

namespace harness::go {

class Regexp {
 public:
  // regexp.Compile. Errors read as Go's: "error parsing regexp: missing closing ): `(a`".
  static core::Result<Regexp> compile(std::string_view expr);

  Regexp(Regexp&& other) noexcept;
  Regexp& operator=(Regexp&& other) noexcept;
  ~Regexp();

  // MatchString: whether `s` contains a match.
  [[nodiscard]] bool matchString(std::string_view s) const;
  // FindString: the leftmost match, "" when none.
  [[nodiscard]] std::string findString(std::string_view s) const;
  // FindStringSubmatch: the match and its groups ("" for a group that did not take part); empty
  // when there is no match.
  [[nodiscard]] std::vector<std::string> findStringSubmatch(std::string_view s) const;
  // FindAllString(s, n): at most n matches (all when n < 0), an empty match right after a
  // previous match skipped.
  [[nodiscard]] std::vector<std::string> findAllString(std::string_view s, std::int64_t n) const;
  // ReplaceAllString: each match replaced by `repl` with $1, ${1}, $name, ${name} and $$
  // expanded as Expand does.
  [[nodiscard]] std::string replaceAllString(std::string_view s, std::string_view repl) const;
  // ReplaceAllLiteralString: each match replaced by `repl` as it is.
  [[nodiscard]] std::string replaceAllLiteralString(std::string_view s,
                                                    std::string_view repl) const;
  // Split(s, n): the pieces between matches (n < 0: all; n == 0: none; n > 0: at most n, the
  // last holding the rest).
  [[nodiscard]] std::vector<std::string> split(std::string_view s, std::int64_t n) const;

  [[nodiscard]] const std::string& expr() const;

 private:
  struct Impl;
  explicit Regexp(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// The text regexp.MustCompile panics with for `expr` and its Compile error:
// "regexp: Compile(`(`): error parsing regexp: missing closing ): `(`" (the expression in
// backquotes when strconv.CanBackquote allows, else strconv.Quote'd).
std::string mustCompilePanic(std::string_view expr, const core::Error& error);

}  // namespace harness::go
