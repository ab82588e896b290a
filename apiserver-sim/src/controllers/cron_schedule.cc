// robfig/cron v3.0.1's standard parser and schedules, in UTC (see cron_schedule.h).

#include "harness/sim/cron_schedule.h"

#include <array>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness/go/strconv.h"
#include "harness/go/time.h"

namespace harness::sim::controllers {
namespace {

using std::chrono::days;
using std::chrono::hours;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr std::uint64_t kStarBit = std::uint64_t{1} << 63;

struct Bounds {
  unsigned min;
  unsigned max;
  const std::vector<std::pair<std::string_view, unsigned>>* names;
};

const std::vector<std::pair<std::string_view, unsigned>> kMonthNames = {
    {"jan", 1}, {"feb", 2}, {"mar", 3}, {"apr", 4},  {"may", 5},  {"jun", 6},
    {"jul", 7}, {"aug", 8}, {"sep", 9}, {"oct", 10}, {"nov", 11}, {"dec", 12}};
const std::vector<std::pair<std::string_view, unsigned>> kDowNames = {
    {"sun", 0}, {"mon", 1}, {"tue", 2}, {"wed", 3}, {"thu", 4}, {"fri", 5}, {"sat", 6}};

constexpr Bounds kMinutes{0, 59, nullptr};
constexpr Bounds kHours{0, 23, nullptr};
const Bounds kDom{1, 31, nullptr};
const Bounds kMonths{1, 12, &kMonthNames};
const Bounds kDow{0, 6, &kDowNames};

core::Error error(std::string message) {
  return core::Error{std::move(message), core::ErrorCode::kInvalid, {}, {}};
}

// strings.Split.
std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

bool isSpace(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// strings.Fields (ASCII white space).
std::vector<std::string_view> fields(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && isSpace(s[i])) ++i;
    const std::size_t start = i;
    while (i < s.size() && !isSpace(s[i])) ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

// mustParseInt.
core::Result<std::uint64_t> parseInt(std::string_view expr) {
  auto number = go::atoi(expr);
  if (!number) {
    return error(fmt::format("failed to parse int from {}: {}", expr, number.error().message));
  }
  if (*number < 0) return error(fmt::format("negative number ({}) not allowed: {}", *number, expr));
  return static_cast<std::uint64_t>(*number);
}

// parseIntOrName.
core::Result<std::uint64_t> parseIntOrName(std::string_view expr, const Bounds& r) {
  if (r.names != nullptr) {
    std::string lower(expr);
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    for (const auto& [name, value] : *r.names) {
      if (name == lower) return value;
    }
  }
  return parseInt(expr);
}

std::uint64_t bits(std::uint64_t min, std::uint64_t max, std::uint64_t step) {
  std::uint64_t out = 0;
  for (std::uint64_t i = min; i <= max; i += step) out |= std::uint64_t{1} << i;
  return out;
}

std::uint64_t all(const Bounds& r) { return bits(r.min, r.max, 1) | kStarBit; }

// getRange.
core::Result<std::uint64_t> range(std::string_view expr, const Bounds& r) {
  const auto range_and_step = split(expr, '/');
  const auto low_and_high = split(range_and_step[0], '-');
  const bool single = low_and_high.size() == 1;
  std::uint64_t start = 0;
  std::uint64_t end = 0;
  std::uint64_t step = 1;
  std::uint64_t extra = 0;
  if (low_and_high[0] == "*" || low_and_high[0] == "?") {
    start = r.min;
    end = r.max;
    extra = kStarBit;
  } else {
    auto low = parseIntOrName(low_and_high[0], r);
    if (!low) return low.error();
    start = end = *low;
    if (low_and_high.size() == 2) {
      auto high = parseIntOrName(low_and_high[1], r);
      if (!high) return high.error();
      end = *high;
    } else if (low_and_high.size() > 2) {
      return error(fmt::format("too many hyphens: {}", expr));
    }
  }
  if (range_and_step.size() == 2) {
    auto parsed = parseInt(range_and_step[1]);
    if (!parsed) return parsed.error();
    step = *parsed;
    if (single) end = r.max;  // "N/step" means "N-max/step"
    if (step > 1) extra = 0;
  } else if (range_and_step.size() > 2) {
    return error(fmt::format("too many slashes: {}", expr));
  }
  if (start < r.min) {
    return error(fmt::format("beginning of range ({}) below minimum ({}): {}", start, r.min, expr));
  }
  if (end > r.max) {
    return error(fmt::format("end of range ({}) above maximum ({}): {}", end, r.max, expr));
  }
  if (start > end) {
    return error(
        fmt::format("beginning of range ({}) beyond end of range ({}): {}", start, end, expr));
  }
  if (step == 0) return error(fmt::format("step of range should be a positive number: {}", expr));
  return bits(start, end, step) | extra;
}

// getField: ranges separated by commas (empty ones skipped, as strings.FieldsFunc does).
core::Result<std::uint64_t> field(std::string_view text, const Bounds& r) {
  std::uint64_t out = 0;
  for (const auto part : split(text, ',')) {
    if (part.empty()) continue;
    auto bit = range(part, r);
    if (!bit) return bit.error();
    out |= *bit;
  }
  return out;
}

struct Civil {
  std::chrono::year_month_day date;
  seconds time_of_day;
};

Civil civil(std::chrono::sys_seconds t) {
  const auto day = std::chrono::floor<days>(t);
  return {std::chrono::year_month_day(day), t - day};
}

}  // namespace

core::Result<CronSchedule> CronSchedule::parse(std::string_view spec) {
  if (spec.empty()) return error("empty spec string");
  if (spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=")) {
    const auto space = spec.find(' ');
    const auto eq = spec.find('=');
    const std::string_view zone =
        space == std::string_view::npos ? spec.substr(eq + 1) : spec.substr(eq + 1, space - eq - 1);
    if (zone != "UTC" && zone != "Etc/UTC" && !zone.empty()) {
      return error(fmt::format(
          "provided location {} is not simulated: apiserver-sim evaluates schedules in UTC only",
          zone));
    }
    spec = space == std::string_view::npos ? std::string_view() : spec.substr(space);
    while (!spec.empty() && isSpace(spec.front())) spec.remove_prefix(1);
    while (!spec.empty() && isSpace(spec.back())) spec.remove_suffix(1);
  }
  CronSchedule s;
  if (spec.starts_with("@")) {
    // parseDescriptor: second, minute and hour 0 unless said otherwise.
    if (spec == "@yearly" || spec == "@annually") {
      s.minute_ = 1;
      s.hour_ = 1;
      s.dom_ = std::uint64_t{1} << 1;
      s.month_ = std::uint64_t{1} << 1;
      s.dow_ = all(kDow);
    } else if (spec == "@monthly") {
      s.minute_ = 1;
      s.hour_ = 1;
      s.dom_ = std::uint64_t{1} << 1;
      s.month_ = all(kMonths);
      s.dow_ = all(kDow);
    } else if (spec == "@weekly") {
      s.minute_ = 1;
      s.hour_ = 1;
      s.dom_ = all(kDom);
      s.month_ = all(kMonths);
      s.dow_ = 1;
    } else if (spec == "@daily" || spec == "@midnight") {
      s.minute_ = 1;
      s.hour_ = 1;
      s.dom_ = all(kDom);
      s.month_ = all(kMonths);
      s.dow_ = all(kDow);
    } else if (spec == "@hourly") {
      s.minute_ = 1;
      s.hour_ = all(kHours);
      s.dom_ = all(kDom);
      s.month_ = all(kMonths);
      s.dow_ = all(kDow);
    } else if (spec.starts_with("@every ")) {
      auto duration = go::parseDuration(spec.substr(7));
      if (!duration) {
        return error(fmt::format("failed to parse duration {}: {}", spec, duration.error().message));
      }
      // Every: at least a second, rounded down to whole seconds.
      const std::int64_t whole = std::max<std::int64_t>(*duration, 1'000'000'000) / 1'000'000'000;
      s.every_ = seconds(whole);
    } else {
      return error(fmt::format("unrecognized descriptor: {}", spec));
    }
    return s;
  }
  const auto parts = fields(spec);
  if (parts.size() != 5) {
    return error(fmt::format("expected exactly 5 fields, found {}: [{}]", parts.size(),
                             fmt::join(parts, " ")));
  }
  const std::array<std::pair<std::uint64_t*, const Bounds*>, 5> targets = {
      {{&s.minute_, &kMinutes}, {&s.hour_, &kHours}, {&s.dom_, &kDom}, {&s.month_, &kMonths},
       {&s.dow_, &kDow}}};
  for (std::size_t i = 0; i < targets.size(); ++i) {
    auto bits_of = field(parts[i], *targets[i].second);
    if (!bits_of) return bits_of.error();
    *targets[i].first = *bits_of;
  }
  return s;
}

std::optional<CronSchedule::Clock::time_point> CronSchedule::next(Clock::time_point from) const {
  // Start at the upcoming whole second.
  auto t = std::chrono::floor<seconds>(from) + seconds(1);
  if (every_) return Clock::time_point(std::chrono::floor<seconds>(from) + *every_);
  auto matches = [](std::uint64_t set, unsigned value) {
    return ((std::uint64_t{1} << value) & set) != 0;
  };
  auto day_matches = [&](const Civil& c) {
    const bool dom = matches(dom_, static_cast<unsigned>(c.date.day()));
    const bool dow =
        matches(dow_, std::chrono::weekday(std::chrono::sys_days(c.date)).c_encoding());
    if ((dom_ & kStarBit) != 0 || (dow_ & kStarBit) != 0) return dom && dow;
    return dom || dow;
  };
  bool added = false;
  const int year_limit = static_cast<int>(civil(t).date.year()) + 5;
  for (;;) {  // WRAP
    Civil c = civil(t);
    if (static_cast<int>(c.date.year()) > year_limit) return std::nullopt;
    bool wrapped = false;
    // The month (reached on its first day).
    while (!matches(month_, static_cast<unsigned>(c.date.month()))) {
      std::chrono::year_month ym = c.date.year() / c.date.month();
      if (!added) added = true;
      ym += std::chrono::months(1);
      t = std::chrono::sys_days(ym / 1);
      c = civil(t);
      if (c.date.month() == std::chrono::January) {
        wrapped = true;
        break;
      }
    }
    if (wrapped) continue;
    while (!day_matches(c)) {
      if (!added) {
        added = true;
        t = std::chrono::sys_days(c.date);
      }
      t += days(1);
      c = civil(t);
      if (c.date.day() == std::chrono::day(1)) {
        wrapped = true;
        break;
      }
    }
    if (wrapped) continue;
    while (!matches(hour_, static_cast<unsigned>(
                               std::chrono::floor<hours>(c.time_of_day).count()))) {
      if (!added) {
        added = true;
        t = std::chrono::floor<hours>(t);
      }
      t += hours(1);
      c = civil(t);
      if (std::chrono::floor<hours>(c.time_of_day).count() == 0) {
        wrapped = true;
        break;
      }
    }
    if (wrapped) continue;
    auto minute_of = [](const Civil& x) {
      return static_cast<unsigned>(std::chrono::floor<minutes>(x.time_of_day).count() % 60);
    };
    while (!matches(minute_, minute_of(c))) {
      if (!added) {
        added = true;
        t = std::chrono::floor<minutes>(t);
      }
      t += minutes(1);
      c = civil(t);
      if (minute_of(c) == 0) {
        wrapped = true;
        break;
      }
    }
    if (wrapped) continue;
    auto second_of = [](const Civil& x) { return static_cast<unsigned>(x.time_of_day.count() % 60); };
    while (!matches(second_, second_of(c))) {
      if (!added) added = true;
      t += seconds(1);
      c = civil(t);
      if (second_of(c) == 0) {
        wrapped = true;
        break;
      }
    }
    if (wrapped) continue;
    return Clock::time_point(t);
  }
}

}  // namespace harness::sim::controllers
