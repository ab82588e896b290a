#pragma once

// Counters and histograms with labels, rendered in the Prometheus text exposition format
// (version 0.0.4), as client_golang's promhttp handler renders them: families sorted by name,
// series sorted by label values, `le` buckets cumulative with a final "+Inf".
//
// Thread-safe (one mutex per family) so that server threads can record while /metrics renders;
// it starts no threads and does no I/O.

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace harness::core {

using LabelValues = std::vector<std::string>;

class CounterFamily {
 public:
  CounterFamily(std::string name, std::string help, std::vector<std::string> label_names);
  // Adds `amount` to the series with these label values (in the order of the label names).
  void add(const LabelValues& labels, double amount = 1.0);
  [[nodiscard]] double value(const LabelValues& labels) const;
  [[nodiscard]] std::string render() const;
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::vector<std::string>& labelNames() const { return label_names_; }
  // Every series with its value, label values in label-name order.
  [[nodiscard]] std::map<LabelValues, double> snapshot() const;

 private:
  std::string name_, help_;
  std::vector<std::string> label_names_;
  mutable std::mutex mutex_;
  std::map<LabelValues, double> series_;
};

class HistogramFamily {
 public:
  HistogramFamily(std::string name, std::string help, std::vector<std::string> label_names,
                  std::vector<double> buckets);
  void observe(const LabelValues& labels, double value);
  [[nodiscard]] std::uint64_t count(const LabelValues& labels) const;
  [[nodiscard]] double sum(const LabelValues& labels) const;
  [[nodiscard]] std::string render() const;
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] const std::vector<double>& buckets() const { return buckets_; }

 private:
  struct Series {
    std::vector<std::uint64_t> bucket_counts;  // non-cumulative per bucket
    std::uint64_t count = 0;
    double sum = 0;
  };
  std::string name_, help_;
  std::vector<std::string> label_names_;
  std::vector<double> buckets_;
  mutable std::mutex mutex_;
  std::map<LabelValues, Series> series_;
};

class MetricsRegistry {
 public:
  // Registers (or returns the already registered) family. The returned reference stays valid for
  // the registry's lifetime.
  CounterFamily& counter(const std::string& name, const std::string& help,
                         std::vector<std::string> label_names);
  HistogramFamily& histogram(const std::string& name, const std::string& help,
                             std::vector<std::string> label_names, std::vector<double> buckets);
  [[nodiscard]] const CounterFamily* findCounter(const std::string& name) const;
  [[nodiscard]] const HistogramFamily* findHistogram(const std::string& name) const;
  [[nodiscard]] std::string render() const;
  // The text of the counter families whose name starts with `prefix` only (what a step's
  // counter changes are read from: rendering every histogram for them was a tenth of a
  // scenario's CPU).
  [[nodiscard]] std::string renderCounters(std::string_view prefix) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<CounterFamily>> counters_;
  std::map<std::string, std::unique_ptr<HistogramFamily>> histograms_;
};

// A family a request handler records into, registered on first use and reached without a lookup
// by name afterwards (the registry's lookup under its mutex, with the label names built, was a
// twelfth of a webhook request's work). Two threads may both register it: the registry hands
// both the same family.
template <class Family>
class FamilySlot {
 public:
  // `register_family` registers the family (MetricsRegistry::counter or ::histogram) and
  // returns it; it is called until one call has stored its answer.
  template <class Register>
  Family& get(Register&& register_family) {
    Family* family = family_.load(std::memory_order_acquire);
    if (family == nullptr) {
      family = &register_family();
      family_.store(family, std::memory_order_release);
    }
    return *family;
  }

 private:
  std::atomic<Family*> family_{nullptr};
};

// Prometheus' default histogram buckets (.005 ... 10).
std::vector<double> defaultBuckets();
// Formats a sample value as Prometheus does (integers without a fraction, "+Inf", "NaN").
std::string formatSampleValue(double value);

}  // namespace harness::core
