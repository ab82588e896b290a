#pragma once
// The JUnit XML document both reports write (`run --output junit` and `compare --output junit`):
// test cases, their suites, and the tests/failures/errors/skipped counters of each level.

#include <cstddef>
#include <string>
#include <string_view>

namespace harness::sim {

enum class JunitResult { kPassed, kFailed, kError, kSkipped };

struct JunitCounts {
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  void count(JunitResult result);
  JunitCounts& operator+=(const JunitCounts& other);
};

// One <testsuite>: its test cases, as they are added, and their counts.
class JunitSuite {
 public:
  // `name` and `classname` are escaped here. `attributes` follow them as given (escaped, each
  // with a leading space, e.g. ` time="0.5"`); `body` is the case's child elements, each line
  // indented six spaces and ended by "\n" ("" writes an empty <testcase/>).
  void addCase(std::string_view name, std::string_view classname, std::string_view attributes,
               JunitResult result, std::string_view body);

  [[nodiscard]] const JunitCounts& counts() const { return counts_; }
  [[nodiscard]] const std::string& cases() const { return cases_; }

 private:
  std::string cases_;
  JunitCounts counts_;
};

// The <testsuites> document: the suites, in order, and the totals.
class JunitDocument {
 public:
  // `name` is escaped here; `attributes` follow the counters as given (see addCase).
  void addSuite(std::string_view name, std::string_view attributes, const JunitSuite& suite);
  [[nodiscard]] std::string render(std::string_view name, std::string_view attributes) const;

 private:
  std::string suites_;
  JunitCounts counts_;
};

}  // namespace harness::sim
