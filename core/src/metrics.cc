#include "harness/core/metrics.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace harness::core {

namespace {

std::string escapeLabelValue(const std::string& v) {
  std::string out;
  out.reserve(v.size());
  for (char c : v) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out.push_back(c);
    }
  }
  return out;
}

std::string escapeHelp(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out.push_back(c);
    }
  }
  return out;
}

std::string labelSet(const std::vector<std::string>& names, const LabelValues& values,
                     const std::string& extra_name = {}, const std::string& extra_value = {}) {
  std::string out;
  for (size_t i = 0; i < names.size(); ++i) {
    if (!out.empty()) out += ",";
    out += names[i] + "=\"" + escapeLabelValue(i < values.size() ? values[i] : "") + "\"";
  }
  if (!extra_name.empty()) {
    if (!out.empty()) out += ",";
    out += extra_name + "=\"" + extra_value + "\"";
  }
  return out.empty() ? "" : "{" + out + "}";
}

void checkArity(const std::string& name, const std::vector<std::string>& names,
                const LabelValues& values) {
  // A programming error, not input: label values come from code, not from users.
  if (names.size() != values.size()) {
    throw std::invalid_argument("metric " + name + ": expected " + std::to_string(names.size()) +
                                " label values, got " + std::to_string(values.size()));
  }
}

std::string header(const std::string& name, const std::string& help, const char* type) {
  return "# HELP " + name + " " + escapeHelp(help) + "\n# TYPE " + name + " " + type + "\n";
}

}  // namespace

std::string formatSampleValue(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  if (value == std::floor(value) && std::fabs(value) < 1e15) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", value);
    return buf;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", value);
  // Shortest representation that round-trips.
  for (int precision = 1; precision <= 17; ++precision) {
    char candidate[32];
    std::snprintf(candidate, sizeof candidate, "%.*g", precision, value);
    if (std::strtod(candidate, nullptr) == value) return candidate;
  }
  return buf;
}

std::vector<double> defaultBuckets() {
  return {.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10};
}

CounterFamily::CounterFamily(std::string name, std::string help,
                             std::vector<std::string> label_names)
    : name_(std::move(name)), help_(std::move(help)), label_names_(std::move(label_names)) {}

void CounterFamily::add(const LabelValues& labels, double amount) {
  checkArity(name_, label_names_, labels);
  std::lock_guard lock(mutex_);
  series_[labels] += amount;
}

double CounterFamily::value(const LabelValues& labels) const {
  std::lock_guard lock(mutex_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0.0 : it->second;
}

std::map<LabelValues, double> CounterFamily::snapshot() const {
  std::lock_guard lock(mutex_);
  return series_;
}

std::string CounterFamily::render() const {
  std::lock_guard lock(mutex_);
  if (series_.empty()) return {};
  std::string out = header(name_, help_, "counter");
  for (const auto& [labels, value] : series_) {
    out += name_ + labelSet(label_names_, labels) + " " + formatSampleValue(value) + "\n";
  }
  return out;
}

HistogramFamily::HistogramFamily(std::string name, std::string help,
                                 std::vector<std::string> label_names,
                                 std::vector<double> buckets)
    : name_(std::move(name)),
      help_(std::move(help)),
      label_names_(std::move(label_names)),
      buckets_(std::move(buckets)) {
  std::sort(buckets_.begin(), buckets_.end());
}

void HistogramFamily::observe(const LabelValues& labels, double value) {
  checkArity(name_, label_names_, labels);
  std::lock_guard lock(mutex_);
  auto& s = series_[labels];
  if (s.bucket_counts.empty()) s.bucket_counts.assign(buckets_.size(), 0);
  // Prometheus buckets are "less than or equal" upper bounds.
  auto it = std::lower_bound(buckets_.begin(), buckets_.end(), value);
  if (it != buckets_.end()) ++s.bucket_counts[static_cast<size_t>(it - buckets_.begin())];
  ++s.count;
  s.sum += value;
}

std::uint64_t HistogramFamily::count(const LabelValues& labels) const {
  std::lock_guard lock(mutex_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.count;
}

double HistogramFamily::sum(const LabelValues& labels) const {
  std::lock_guard lock(mutex_);
  auto it = series_.find(labels);
  return it == series_.end() ? 0 : it->second.sum;
}

std::string HistogramFamily::render() const {
  std::lock_guard lock(mutex_);
  if (series_.empty()) return {};
  std::string out = header(name_, help_, "histogram");
  for (const auto& [labels, s] : series_) {
    std::uint64_t cumulative = 0;
    for (size_t i = 0; i < buckets_.size(); ++i) {
      cumulative += s.bucket_counts[i];
      out += name_ + "_bucket" +
             labelSet(label_names_, labels, "le", formatSampleValue(buckets_[i])) + " " +
             std::to_string(cumulative) + "\n";
    }
    out += name_ + "_bucket" + labelSet(label_names_, labels, "le", "+Inf") + " " +
           std::to_string(s.count) + "\n";
    out += name_ + "_sum" + labelSet(label_names_, labels) + " " + formatSampleValue(s.sum) + "\n";
    out += name_ + "_count" + labelSet(label_names_, labels) + " " + std::to_string(s.count) +
           "\n";
  }
  return out;
}

CounterFamily& MetricsRegistry::counter(const std::string& name, const std::string& help,
                                        std::vector<std::string> label_names) {
  std::lock_guard lock(mutex_);
  auto& slot = counters_[name];
  if (!slot) slot = std::make_unique<CounterFamily>(name, help, std::move(label_names));
  return *slot;
}

HistogramFamily& MetricsRegistry::histogram(const std::string& name, const std::string& help,
                                            std::vector<std::string> label_names,
                                            std::vector<double> buckets) {
  std::lock_guard lock(mutex_);
  auto& slot = histograms_[name];
  if (!slot) {
    slot = std::make_unique<HistogramFamily>(name, help, std::move(label_names),
                                             std::move(buckets));
  }
  return *slot;
}

const CounterFamily* MetricsRegistry::findCounter(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto it = counters_.find(name);
  return it == counters_.end() ? nullptr : it->second.get();
}

const HistogramFamily* MetricsRegistry::findHistogram(const std::string& name) const {
  std::lock_guard lock(mutex_);
  auto it = histograms_.find(name);
  return it == histograms_.end() ? nullptr : it->second.get();
}

std::string MetricsRegistry::render() const {
  std::lock_guard lock(mutex_);
  // Families sorted by name across both kinds.
  std::map<std::string, std::string> rendered;
  for (const auto& [name, family] : counters_) rendered[name] = family->render();
  for (const auto& [name, family] : histograms_) rendered[name] = family->render();
  std::string out;
  for (const auto& [name, text] : rendered) out += text;
  return out;
}

std::string MetricsRegistry::renderCounters(std::string_view prefix) const {
  std::lock_guard lock(mutex_);
  std::string out;
  for (auto it = counters_.lower_bound(std::string(prefix));
       it != counters_.end() && it->first.starts_with(prefix); ++it) {
    out += it->second->render();
  }
  return out;
}

}  // namespace harness::core
