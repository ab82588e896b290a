#include "junit.h"

#include <fmt/format.h>

#include "harness/sim/report.h"

namespace harness::sim {

void JunitCounts::count(JunitResult result) {
  ++tests;
  switch (result) {
    case JunitResult::kPassed:
      break;
    case JunitResult::kFailed:
      ++failures;
      break;
    case JunitResult::kError:
      ++errors;
      break;
    case JunitResult::kSkipped:
      ++skipped;
      break;
  }
}

JunitCounts& JunitCounts::operator+=(const JunitCounts& other) {
  tests += other.tests;
  failures += other.failures;
  errors += other.errors;
  skipped += other.skipped;
  return *this;
}

void JunitSuite::addCase(std::string_view name, std::string_view classname,
                         std::string_view attributes, JunitResult result, std::string_view body) {
  counts_.count(result);
  cases_ += fmt::format("    <testcase name=\"{}\" classname=\"{}\"{}", xmlEscaped(name, true),
                        xmlEscaped(classname, true), attributes);
  if (body.empty()) {
    cases_ += "/>\n";
  } else {
    cases_ += fmt::format(">\n{}    </testcase>\n", body);
  }
}

void JunitDocument::addSuite(std::string_view name, std::string_view attributes,
                             const JunitSuite& suite) {
  const JunitCounts& c = suite.counts();
  counts_ += c;
  suites_ += fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\"{}>\n{}"
      "  </testsuite>\n",
      xmlEscaped(name, true), c.tests, c.failures, c.errors, c.skipped, attributes, suite.cases());
}

std::string JunitDocument::render(std::string_view name, std::string_view attributes) const {
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites name=\"{}\" tests=\"{}\" "
      "failures=\"{}\" errors=\"{}\" skipped=\"{}\"{}>\n{}</testsuites>\n",
      xmlEscaped(name, true), counts_.tests, counts_.failures, counts_.errors, counts_.skipped,
      attributes, suites_);
}

}  // namespace harness::sim
