#pragma once

// A CronJob's schedule as the cronjob controller reads it,
// github.com/robfig/cron/v3 v3.0.1 (the version k8s.io/kubernetes v1.37.2 requires):
// parser.go ParseStandard (five fields: minute, hour, day of month, month, day of week; "*" and
// "?", ranges, steps, lists, month and weekday names in any case; the descriptors @yearly,
// @annually, @monthly, @weekly, @daily, @midnight, @hourly and "@every <duration>"), with its
// error texts; spec.go SpecSchedule.Next and dayMatches; constantdelay.go Every and Next.
// Times are UTC: a schedule with a "TZ=" / "CRON_TZ=" prefix other than UTC is refused here (the
// cronjob controller evaluates those in the named zone).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

#include "harness/core/result.h"

namespace harness::sim::controllers {

class CronSchedule {
 public:
  using Clock = std::chrono::system_clock;

  static core::Result<CronSchedule> parse(std::string_view spec);

  // Schedule.Next: the first activation after `t` (at a whole second), or nullopt when there is
  // none within five years (robfig's zero time, e.g. "0 0 30 2 *").
  [[nodiscard]] std::optional<Clock::time_point> next(Clock::time_point t) const;

 private:
  CronSchedule() = default;

  // Bit sets as robfig keeps them (bit 63: the field was "*" or "?").
  std::uint64_t second_ = 1;
  std::uint64_t minute_ = 0;
  std::uint64_t hour_ = 0;
  std::uint64_t dom_ = 0;
  std::uint64_t month_ = 0;
  std::uint64_t dow_ = 0;
  std::optional<std::chrono::seconds> every_;  // "@every": ConstantDelaySchedule's delay
};

}  // namespace harness::sim::controllers
