// CronSchedule: robfig/cron v3.0.1's standard parser and Next, checked with the cases of its own
// spec_test.go TestNext and parser_test.go (their six-field specs written with five fields: the
// standard parser has no seconds; the time-zone cases are not simulated) and its error texts.

#include <chrono>
#include <ctime>
#include <string>

#include <gtest/gtest.h>

#include "harness/sim/cron_schedule.h"
#include "harness/sim/store.h"

namespace harness::sim::controllers {
namespace {

using Clock = std::chrono::system_clock;

Clock::time_point at(const std::string& rfc3339) {
  auto t = parseRfc3339(rfc3339);
  EXPECT_TRUE(t) << rfc3339;
  return t.value_or(Clock::time_point{});
}

std::string next(const std::string& spec, const std::string& from) {
  auto schedule = CronSchedule::parse(spec);
  EXPECT_TRUE(schedule) << spec << ": " << (schedule ? "" : schedule.error().message);
  if (!schedule) return "";
  auto t = schedule->next(at(from));
  return t ? rfc3339(*t) : "never";
}

std::string parseError(const std::string& spec) {
  auto schedule = CronSchedule::parse(spec);
  return schedule ? "parsed" : schedule.error().message;
}

TEST(CronScheduleTest, NextAsRobfigComputesIt) {
  // Simple cases; wrapping around hours, days, months and years (spec_test.go TestNext).
  EXPECT_EQ(next("0/15 * * * *", "2012-07-09T14:45:00Z"), "2012-07-09T15:00:00Z");
  EXPECT_EQ(next("0/15 * * * *", "2012-07-09T14:59:00Z"), "2012-07-09T15:00:00Z");
  EXPECT_EQ(next("0/15 * * * *", "2012-07-09T14:59:59Z"), "2012-07-09T15:00:00Z");
  EXPECT_EQ(next("20-35/15 * * * *", "2012-07-09T15:45:00Z"), "2012-07-09T16:20:00Z");
  EXPECT_EQ(next("*/15 * * * *", "2012-07-09T23:46:00Z"), "2012-07-10T00:00:00Z");
  EXPECT_EQ(next("20-35/15 * * * *", "2012-07-09T23:45:00Z"), "2012-07-10T00:20:00Z");
  EXPECT_EQ(next("20-35/15 1/2 * * *", "2012-07-09T23:35:51Z"), "2012-07-10T01:20:00Z");
  EXPECT_EQ(next("20-35/15 10-12 * * *", "2012-07-09T23:35:51Z"), "2012-07-10T10:20:00Z");
  EXPECT_EQ(next("20-35/15 1/2 */2 * *", "2012-07-09T23:35:51Z"), "2012-07-11T01:20:00Z");
  EXPECT_EQ(next("20-35/15 * 9-20 * *", "2012-07-09T23:35:51Z"), "2012-07-10T00:20:00Z");
  EXPECT_EQ(next("20-35/15 * 9-20 Jul *", "2012-07-09T23:35:51Z"), "2012-07-10T00:20:00Z");
  EXPECT_EQ(next("0 0 9 Apr-Oct ?", "2012-07-09T23:35:00Z"), "2012-08-09T00:00:00Z");
  EXPECT_EQ(next("0 0 */5 Apr,Aug,Oct Mon", "2012-07-09T23:35:00Z"), "2012-08-01T00:00:00Z");
  EXPECT_EQ(next("0 0 */5 Oct Mon", "2012-07-09T23:35:00Z"), "2012-10-01T00:00:00Z");
  EXPECT_EQ(next("0 0 * Feb Mon", "2012-07-09T23:35:00Z"), "2013-02-04T00:00:00Z");
  EXPECT_EQ(next("0 0 * Feb Mon/2", "2012-07-09T23:35:00Z"), "2013-02-01T00:00:00Z");
  EXPECT_EQ(next("* * * * *", "2012-12-31T23:59:45Z"), "2013-01-01T00:00:00Z");
  EXPECT_EQ(next("0 0 29 Feb ?", "2012-07-09T23:35:00Z"), "2016-02-29T00:00:00Z");
  // Unsatisfiable within five years: robfig's zero time.
  EXPECT_EQ(next("0 0 30 Feb ?", "2012-07-09T23:35:00Z"), "never");
  // Day of month and day of week: either matches unless one of them is "*".
  EXPECT_EQ(next("0 0 13 * Fri", "2026-11-26T12:00:00Z"), "2026-11-27T00:00:00Z");
  EXPECT_EQ(next("0 0 * * Fri", "2026-11-26T12:00:00Z"), "2026-11-27T00:00:00Z");
  EXPECT_EQ(next("0 0 1 * *", "2026-11-26T12:00:00Z"), "2026-12-01T00:00:00Z");
}

TEST(CronScheduleTest, DescriptorsAndEvery) {
  EXPECT_EQ(next("@hourly", "2026-11-26T23:44:10Z"), "2026-11-27T00:00:00Z");
  EXPECT_EQ(next("@daily", "2026-11-26T23:44:10Z"), "2026-11-27T00:00:00Z");
  EXPECT_EQ(next("@midnight", "2026-11-27T00:00:00Z"), "2026-11-28T00:00:00Z");
  EXPECT_EQ(next("@weekly", "2026-11-26T23:44:10Z"), "2026-11-29T00:00:00Z");  // a Sunday
  EXPECT_EQ(next("@monthly", "2026-11-26T23:44:10Z"), "2026-12-01T00:00:00Z");
  EXPECT_EQ(next("@yearly", "2026-11-26T23:44:10Z"), "2027-01-01T00:00:00Z");
  EXPECT_EQ(next("@annually", "2026-11-26T23:44:10Z"), "2027-01-01T00:00:00Z");
  EXPECT_EQ(next("@every 90s", "2026-11-26T23:44:10Z"), "2026-11-26T23:45:40Z");
  EXPECT_EQ(next("@every 100ms", "2026-11-26T23:44:10Z"), "2026-11-26T23:44:11Z");  // 1 s least
  EXPECT_EQ(next("TZ=UTC */5 * * * *", "2026-11-26T23:44:10Z"), "2026-11-26T23:45:00Z");
  EXPECT_EQ(next("CRON_TZ=Etc/UTC 0 1 * * *", "2026-11-26T23:44:10Z"), "2026-11-27T01:00:00Z");
}

TEST(CronScheduleTest, ErrorsAreRobfigs) {
  EXPECT_EQ(parseError(""), "empty spec string");
  EXPECT_EQ(parseError("* * * *"), "expected exactly 5 fields, found 4: [* * * *]");
  EXPECT_EQ(parseError("0 0 0 * * *"), "expected exactly 5 fields, found 6: [0 0 0 * * *]");
  EXPECT_EQ(parseError("a * * * *"),
            "failed to parse int from a: strconv.Atoi: parsing \"a\": invalid syntax");
  EXPECT_EQ(parseError("60 * * * *"), "end of range (60) above maximum (59): 60");
  EXPECT_EQ(parseError("* * 0 * *"), "beginning of range (0) below minimum (1): 0");
  EXPECT_EQ(parseError("5-1 * * * *"), "beginning of range (5) beyond end of range (1): 5-1");
  EXPECT_EQ(parseError("1-2-3 * * * *"), "too many hyphens: 1-2-3");
  EXPECT_EQ(parseError("*/1/2 * * * *"), "too many slashes: */1/2");
  EXPECT_EQ(parseError("*/0 * * * *"), "step of range should be a positive number: */0");
  EXPECT_EQ(parseError("* * * Foo *"),
            "failed to parse int from Foo: strconv.Atoi: parsing \"Foo\": invalid syntax");
  EXPECT_EQ(parseError("@fortnightly"), "unrecognized descriptor: @fortnightly");
  EXPECT_EQ(parseError("@every x"),
            "failed to parse duration @every x: time: invalid duration \"x\"");
  EXPECT_NE(parseError("TZ=Europe/Paris * * * * *").find("UTC only"), std::string::npos);
  EXPECT_EQ(parseError("* * * JAN-mar SUN-sat"), "parsed");  // names in any case
}

}  // namespace
}  // namespace harness::sim::controllers
