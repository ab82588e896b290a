#include "harness/sim/admission_metrics.h"

#include <algorithm>

namespace harness::sim {
namespace {

// metrics.go: webhook latencies use these buckets; step and controller latencies the first six.
const std::vector<double> kWebhookBuckets = {0.005, 0.025, 0.1, 0.5, 1.0, 2.5, 10, 25};
const std::vector<double> kStepBuckets = {0.005, 0.025, 0.1, 0.5, 1.0, 2.5};

std::string boolLabel(bool value) { return value ? "true" : "false"; }

double seconds(std::chrono::nanoseconds elapsed) {
  return std::chrono::duration<double>(elapsed).count();
}

}  // namespace

AdmissionMetrics::AdmissionMetrics(core::MetricsRegistry& registry)
    : webhook_duration_(registry.histogram(
          "apiserver_admission_webhook_admission_duration_seconds",
          "Admission webhook latency histogram in seconds, identified by name and broken out for "
          "each operation and API resource and type (validate or admit).",
          {"name", "type", "operation", "rejected"}, kWebhookBuckets)),
      webhook_requests_(registry.counter(
          "apiserver_admission_webhook_request_total",
          "Admission webhook request total, identified by name and broken out for each admission "
          "type (validating or mutating) and operation. Additional labels specify whether the "
          "request was rejected or not and an HTTP status code. Codes greater than 600 are "
          "truncated to 600, to keep the metrics cardinality bounded.",
          {"name", "type", "operation", "code", "rejected"})),
      webhook_rejections_(registry.counter(
          "apiserver_admission_webhook_rejection_count",
          "Admission webhook rejection count, identified by name and broken out for each "
          "admission type (validating or admit) and operation. Additional labels specify an error "
          "type (calling_webhook_error or apiserver_internal_error if an error occurred; no_error "
          "otherwise) and optionally a non-zero rejection code if the webhook rejects the request "
          "with an HTTP status code (honored by the apiserver when the code is greater or equal "
          "to 400). Codes greater than 600 are truncated to 600, to keep the metrics cardinality "
          "bounded.",
          {"name", "type", "operation", "error_type", "rejection_code"})),
      webhook_fail_open_(registry.counter(
          "apiserver_admission_webhook_fail_open_count",
          "Admission webhook fail open count, identified by name and broken out for each "
          "admission type (validating or admit).",
          {"name", "type"})),
      step_duration_(registry.histogram(
          "apiserver_admission_step_admission_duration_seconds",
          "Admission sub-step latency histogram in seconds, broken out for each operation and API "
          "resource and step type (validate or admit).",
          {"type", "operation", "rejected"}, kStepBuckets)),
      controller_duration_(registry.histogram(
          "apiserver_admission_controller_admission_duration_seconds",
          "Admission controller latency histogram in seconds, identified by name and broken out "
          "for each operation and API resource and type (validate or admit).",
          {"name", "type", "operation", "rejected"}, kStepBuckets)) {}

void AdmissionMetrics::observeWebhook(std::string_view name, std::string_view type,
                                      std::string_view operation,
                                      std::chrono::nanoseconds elapsed, bool rejected, int code) {
  const int truncated = std::min(code, 600);
  webhook_duration_.observe(
      {std::string(name), std::string(type), std::string(operation), boolLabel(rejected)},
      seconds(elapsed));
  webhook_requests_.add({std::string(name), std::string(type), std::string(operation),
                         std::to_string(truncated), boolLabel(rejected)});
}

void AdmissionMetrics::observeWebhookRejection(std::string_view name, std::string_view type,
                                               std::string_view operation,
                                               std::string_view error_type, int rejection_code) {
  webhook_rejections_.add({std::string(name), std::string(type), std::string(operation),
                           std::string(error_type), std::to_string(std::min(rejection_code, 600))});
}

void AdmissionMetrics::observeWebhookFailOpen(std::string_view name, std::string_view type) {
  webhook_fail_open_.add({std::string(name), std::string(type)});
}

void AdmissionMetrics::observeStep(std::string_view type, std::string_view operation,
                                   std::chrono::nanoseconds elapsed, bool rejected) {
  step_duration_.observe({std::string(type), std::string(operation), boolLabel(rejected)},
                         seconds(elapsed));
}

void AdmissionMetrics::observeController(std::string_view name, std::string_view type,
                                         std::string_view operation,
                                         std::chrono::nanoseconds elapsed, bool rejected) {
  controller_duration_.observe(
      {std::string(name), std::string(type), std::string(operation), boolLabel(rejected)},
      seconds(elapsed));
}

}  // namespace harness::sim
