#pragma once

// kube-apiserver's admission metrics (apiserver pkg/admission/metrics/metrics.go; see
// docs/admission-chain.md §8): names, labels and buckets as upstream, recorded into a
// core::MetricsRegistry that the REST API serves on /metrics.

#include <chrono>
#include <string>
#include <string_view>

#include "harness/core/metrics.h"

namespace harness::sim {

// error_type label values of apiserver_admission_webhook_rejection_count.
inline constexpr std::string_view kRejectionCallingWebhookError = "calling_webhook_error";
inline constexpr std::string_view kRejectionNoError = "no_error";
inline constexpr std::string_view kRejectionApiserverInternalError = "apiserver_internal_error";

// `type` of the webhook metrics: "admit" (mutating) or "validating".
inline constexpr std::string_view kWebhookTypeAdmit = "admit";
inline constexpr std::string_view kWebhookTypeValidating = "validating";

class AdmissionMetrics {
 public:
  explicit AdmissionMetrics(core::MetricsRegistry& registry);

  // ObserveWebhook: duration histogram and request counter (code > 600 recorded as 600).
  void observeWebhook(std::string_view name, std::string_view type, std::string_view operation,
                      std::chrono::nanoseconds elapsed, bool rejected, int code);
  // ObserveWebhookRejection.
  void observeWebhookRejection(std::string_view name, std::string_view type,
                               std::string_view operation, std::string_view error_type,
                               int rejection_code);
  void observeWebhookFailOpen(std::string_view name, std::string_view type);
  // ObserveAdmissionStep: type "admit" or "validate".
  void observeStep(std::string_view type, std::string_view operation,
                   std::chrono::nanoseconds elapsed, bool rejected);
  // ObserveAdmissionController: one in-tree plugin (or the webhook plugin as a whole).
  void observeController(std::string_view name, std::string_view type, std::string_view operation,
                         std::chrono::nanoseconds elapsed, bool rejected);

 private:
  core::HistogramFamily& webhook_duration_;
  core::CounterFamily& webhook_requests_;
  core::CounterFamily& webhook_rejections_;
  core::CounterFamily& webhook_fail_open_;
  core::HistogramFamily& step_duration_;
  core::HistogramFamily& controller_duration_;
};

}  // namespace harness::sim
