#pragma once

// Configuration built from files that may change while the injector runs (ConfigMaps and
// Secrets mounted as volumes). A file that cannot be read or parsed must never go unnoticed: the
// failure is logged once and counted in injector_config_errors_total{profile}, the last good
// configuration stays in use (as Istio's watcher.go does: "a parse error keeps the old config"),
// and until one loads every review is answered with the error and /readyz is not ready.

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>

#include "harness/core/metrics.h"
#include "harness/core/result.h"

namespace harness::injector {

inline constexpr char kConfigErrorsMetric[] = "injector_config_errors_total";
inline constexpr char kConfigErrorsHelp[] =
    "Configuration files that could not be read or parsed, by profile. The last good "
    "configuration stays in use.";

template <class Config>
class LastGoodConfig {
 public:
  using Parse = std::function<core::Result<Config>(const std::string& text)>;

  LastGoodConfig(std::string profile, core::MetricsRegistry& metrics)
      : profile_(std::move(profile)), metrics_(metrics) {
    metrics_.counter(kConfigErrorsMetric, kConfigErrorsHelp, {"profile"}).add({profile_}, 0);
  }

  // The configuration for `text` (the files' contents, or the error reading them); `parse` runs
  // only when the text changed since the last call.
  core::Result<std::shared_ptr<const Config>> get(const core::Result<std::string>& text,
                                                  const Parse& parse) {
    std::lock_guard lock(mutex_);
    if (!text) return failed(text.error());
    if (current_ && *text == current_text_) {
      failed_text_.reset();
      failed_error_.reset();
      return current_;
    }
    if (failed_text_ && *text == *failed_text_) return failed(*failed_error_);
    auto parsed = parse(*text);
    if (!parsed) {
      failed_text_ = std::make_unique<std::string>(*text);
      return failed(parsed.error());
    }
    if (current_) spdlog::info("{} configuration reloaded", profile_);
    current_ = std::make_shared<const Config>(std::move(*parsed));
    current_text_ = *text;
    failed_text_.reset();
    failed_error_.reset();
    return current_;
  }

 private:
  // Reports a failure the first time it is seen; keeps the last good configuration if any.
  core::Result<std::shared_ptr<const Config>> failed(const core::Error& error) {
    if (!failed_error_ || failed_error_->message != error.message) {
      failed_error_ = std::make_unique<core::Error>(error);
      metrics_.counter(kConfigErrorsMetric, kConfigErrorsHelp, {"profile"}).add({profile_});
      if (current_) {
        spdlog::error("failed to reload the {} configuration, keeping the previous one: {}",
                      profile_, error.message);
      } else {
        spdlog::error("failed to load the {} configuration: {}", profile_, error.message);
      }
    }
    if (current_) return current_;
    return error;
  }

  std::string profile_;
  core::MetricsRegistry& metrics_;
  std::mutex mutex_;
  std::shared_ptr<const Config> current_;
  std::string current_text_;
  std::unique_ptr<std::string> failed_text_;
  std::unique_ptr<core::Error> failed_error_;
};

}  // namespace harness::injector
