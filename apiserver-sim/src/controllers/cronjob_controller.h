#pragma once

// Internal to the controllers module: kube-controller-manager's cronjob controller
// (k8s.io/kubernetes v1.37.2 pkg/controller/cronjob/cronjob_controllerv2.go syncCronJob,
// utils.go mostRecentScheduleTime, nextScheduleTime, getJobFromTemplate2, injection.go).
//
// At each scheduled time (in UTC, cron_schedule.h) a CronJob gets a Job named
// "<cronjob>-<scheduled time in minutes since the epoch>", created as the cronjob-controller
// service account with the template's labels and annotations, the
// batch.kubernetes.io/cronjob-scheduled-timestamp annotation and the CronJob as controller owner;
// status.active and lastScheduleTime follow (UpdateStatus). As there: startingDeadlineSeconds
// (MissSchedule), more than 100 missed times (TooManyMissedTimes), concurrencyPolicy Forbid
// (JobAlreadyActive) and Replace (the active Jobs deleted, SuccessfulDelete), suspend, an active
// Job that failed (SawCompletedJob) or went missing (MissingJob), UnparseableSchedule and
// InvalidSchedule, FailedCreate. Each scheduled time is acted on once (the real controller may
// repeat JobAlreadyActive when a Job changes meanwhile). Not simulated: spec.timeZone other than
// UTC (an UnsupportedTimeZone warning event says so and nothing is scheduled), the history limits
// (no Job ever completes here).

#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "controller_context.h"

namespace harness::sim::controllers {

class CronJobController {
 public:
  using Clock = std::chrono::system_clock;

  explicit CronJobController(const ControllerContext& ctx) : ctx_(ctx) {}

  // One pass over every CronJob; returns whether it wrote anything.
  bool sync(Clock::time_point now);
  // The next scheduled time of any CronJob after `now` (the controller's requeue).
  [[nodiscard]] std::optional<Clock::time_point> nextRequeue(Clock::time_point now) const;

 private:
  bool syncCronJob(nlohmann::json cron_job, const std::vector<nlohmann::json>& jobs,
                   Clock::time_point now);
  // An event posted once per version of the CronJob (a bad schedule is not retried upstream).
  void warnOnce(const nlohmann::json& cron_job, const std::string& reason,
                const std::string& message);

  const ControllerContext& ctx_;
  std::map<std::string, Clock::time_point> next_;     // by CronJob uid
  std::map<std::string, Clock::time_point> handled_;  // the last scheduled time acted on
  std::set<std::string> warned_;                      // uid/resourceVersion/reason
};

}  // namespace harness::sim::controllers
