#pragma once

// Internal to the controllers module: kube-controller-manager's job controller, as far as a
// cluster whose Pods never run shows it (k8s.io/kubernetes v1.37.2 pkg/controller/job/
// job_controller.go syncJob and manageJob, indexed_job_utils.go, pkg/controller/
// controller_utils.go RealPodControl, backoff_utils.go).
//
// What it does, as there:
//   * creates the Pods a Job wants (parallelism, bounded by the completions left; for an Indexed
//     Job the lowest indexes without a Pod), one per request as the job-controller service
//     account: generateName "<job>-" ("<job>-<index>-" when Indexed), the template's labels and
//     annotations, the batch.kubernetes.io/job-tracking finalizer, the Job as controller owner;
//     an Indexed Pod also gets the job-completion-index annotation and label, hostname
//     "<job>-<index>" and the JOB_COMPLETION_INDEX variable in every container;
//     SuccessfulCreate / FailedCreate events, a failed creation retried after the API backoff;
//   * a Pod deleted before it finished counts as failed: its finalizer is removed, status.failed
//     grows, the replacement waits for the pod-failure backoff (10 s doubled per failure, at most
//     10 min); failed > backoffLimit ends the Job (FailureTarget and Failed conditions,
//     BackoffLimitExceeded event, the active Pods deleted);
//   * a suspended Job deletes its active Pods (not counted as failed) and has the Suspended
//     condition and event, no startTime; resuming sets JobResumed and a new startTime;
//   * a Pod whose Job is gone loses its finalizer (the orphan-Pod cleanup), so the garbage
//     collector's delete completes;
//   * status: active, ready 0, terminating, failed, startTime, conditions,
//     uncountedTerminatedPods {} (UpdateStatus).
// Not simulated: completions (no Pod ever succeeds), activeDeadlineSeconds, podFailurePolicy,
// successPolicy, backoffLimitPerIndex, managedBy.

#include <chrono>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "controller_context.h"

namespace harness::sim::controllers {

class JobController {
 public:
  using Clock = std::chrono::system_clock;

  // `api_backoff`: the first wait after a failed Pod creation, doubled per failure up to
  // `max_api_backoff` (DefaultJobApiBackOff 1 s, MaxJobApiBackOff 1 min).
  JobController(const ControllerContext& ctx, std::chrono::milliseconds api_backoff,
                std::chrono::milliseconds max_api_backoff)
      : ctx_(ctx), api_backoff_(api_backoff), max_api_backoff_(max_api_backoff) {}

  // One pass over every Job and every Pod a Job owned; returns whether it wrote anything.
  bool sync(Clock::time_point now);
  // When a Job waiting for a backoff is to be looked at again (a time after `now`).
  [[nodiscard]] std::optional<Clock::time_point> nextRequeue(Clock::time_point now) const;

 private:
  struct Backoff {
    int api_failures = 0;  // failed creations in a row
    Clock::time_point api_next;
    int pod_failures = 0;  // Pods failed (deleted before finishing)
    Clock::time_point last_pod_failure;
  };

  bool syncJob(nlohmann::json job, Clock::time_point now);
  // Removes the job-tracking finalizer of `pod`; true when the update was admitted.
  bool removeTrackingFinalizer(const nlohmann::json& pod) const;
  [[nodiscard]] Clock::time_point podFailureBackoffEnd(const Backoff& backoff) const;

  const ControllerContext& ctx_;
  std::chrono::milliseconds api_backoff_;
  std::chrono::milliseconds max_api_backoff_;
  std::map<std::string, Backoff> backoff_;  // by Job uid
};

}  // namespace harness::sim::controllers
