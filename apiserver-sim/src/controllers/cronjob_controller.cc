// kube-controller-manager's cronjob controller (see cronjob_controller.h for what is followed).

#include "cronjob_controller.h"

#include <algorithm>
#include <ctime>
#include <utility>

#include <fmt/format.h>

#include "harness/sim/cron_schedule.h"

namespace harness::sim::controllers {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::system_clock;

const core::GroupResource kCronJobs{"batch", "cronjobs"};
const core::GroupResource kJobs{"batch", "jobs"};
const std::string kController = "cronjob-controller";
constexpr std::string_view kScheduledTimestamp = "batch.kubernetes.io/cronjob-scheduled-timestamp";

// time.RFC1123Z in UTC ("Mon, 02 Jan 2006 15:04:05 -0700").
std::string rfc1123z(Clock::time_point t) {
  const std::time_t seconds = Clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char text[64];
  std::strftime(text, sizeof text, "%a, %d %b %Y %H:%M:%S +0000", &tm);
  return text;
}

// jobutil.FinishedCondition: the type of a Complete or Failed condition that is True.
std::optional<std::string> finishedCondition(const json& job) {
  if (!job.contains("/status/conditions"_json_pointer)) return std::nullopt;
  for (const auto& c : job.at("/status/conditions"_json_pointer)) {
    if (!c.is_object() || c.value("status", "") != "True") continue;
    const std::string type = c.value("type", "");
    if (type == "Complete" || type == "Failed") return type;
  }
  return std::nullopt;
}

// mostRecentScheduleTime: the latest scheduled time not after `now` since the last one (or the
// creation), bounded by startingDeadlineSeconds; `missed` counts the times in between
// (robfig's approximation).
struct MostRecent {
  std::optional<Clock::time_point> time;
  std::int64_t missed = 0;
  std::optional<std::string> error;
};

MostRecent mostRecentScheduleTime(const json& cron_job, Clock::time_point now,
                                  const CronSchedule& schedule) {
  MostRecent out;
  auto earliest = parseRfc3339(str(cron_job, "/metadata/creationTimestamp"_json_pointer))
                      .value_or(now);
  if (auto last = parseRfc3339(str(cron_job, "/status/lastScheduleTime"_json_pointer))) {
    earliest = *last;
  }
  if (cron_job.contains("/spec/startingDeadlineSeconds"_json_pointer)) {
    const auto deadline =
        now - std::chrono::seconds(integer(cron_job, "/spec/startingDeadlineSeconds"_json_pointer, 0));
    earliest = std::max(earliest, deadline);
  }
  const auto t1 = schedule.next(earliest);
  if (!t1 || now < *t1) return out;
  const auto t2 = schedule.next(*t1);
  if (!t2 || now < *t2) {
    out.time = t1;
    return out;
  }
  const auto between = std::chrono::round<std::chrono::seconds>(*t2 - *t1).count();
  if (between < 1) {
    out.error = "time difference between two schedules is less than 1 second";
    return out;
  }
  const auto elapsed = std::chrono::duration_cast<std::chrono::seconds>(now - *t1).count();
  out.missed = elapsed / between + 1;
  auto t = schedule.next(*t1 + std::chrono::seconds((out.missed - 2) * between));
  for (; t && *t <= now; t = schedule.next(*t)) out.time = t;
  return out;
}

json jobReference(const json& job) {
  return {{"kind", "Job"},
          {"namespace", namespaceOf(job)},
          {"name", nameOf(job)},
          {"uid", uidOf(job)},
          {"apiVersion", "batch/v1"},
          {"resourceVersion", resourceVersionOf(job)}};
}

}  // namespace

void CronJobController::warnOnce(const json& cron_job, const std::string& reason,
                                 const std::string& message) {
  if (!warned_.insert(uidOf(cron_job) + "/" + resourceVersionOf(cron_job) + "/" + reason).second) {
    return;
  }
  ctx_.event(cron_job, "CronJob", "batch/v1", "Warning", reason, message, kController);
}

bool CronJobController::sync(Clock::time_point now) {
  bool wrote = false;
  const auto jobs = ctx_.store().list(kJobs);
  std::set<std::string> live;
  for (const auto& cron_job : ctx_.store().list(kCronJobs)) {
    live.insert(uidOf(cron_job));
    std::vector<json> owned;
    for (const auto& job : jobs) {
      if (controlledBy(job, cron_job)) owned.push_back(job);
    }
    wrote |= syncCronJob(cron_job, owned, now);
  }
  std::erase_if(next_, [&](const auto& entry) { return !live.contains(entry.first); });
  std::erase_if(handled_, [&](const auto& entry) { return !live.contains(entry.first); });
  return wrote;
}

bool CronJobController::syncCronJob(json cron_job, const std::vector<json>& jobs,
                                    Clock::time_point now) {
  const std::string uid = uidOf(cron_job);
  const std::string ns = namespaceOf(cron_job);
  const std::string name = nameOf(cron_job);
  next_.erase(uid);
  json status = cron_job.value("status", json::object());
  const json before = status;
  json active = status.value("active", json::array());
  if (!active.is_array()) active = json::array();
  auto inActive = [&](const std::string& job_uid) {
    return std::any_of(active.begin(), active.end(),
                       [&](const json& ref) { return ref.value("uid", "") == job_uid; });
  };
  auto removeFromActive = [&](const std::string& job_uid) {
    active.erase(std::remove_if(active.begin(), active.end(),
                                [&](const json& ref) { return ref.value("uid", "") == job_uid; }),
                 active.end());
  };

  // Jobs that finished leave the active list (SawCompletedJob); active Jobs that are gone too
  // (MissingJob).
  for (const auto& job : jobs) {
    const auto condition = finishedCondition(job);
    if (condition && inActive(uidOf(job))) {
      removeFromActive(uidOf(job));
      ctx_.event(cron_job, "CronJob", "batch/v1", "Normal", "SawCompletedJob",
                 fmt::format("Saw completed job: {}, condition: {}", nameOf(job), *condition),
                 kController);
    }
  }
  for (const auto& ref : json(active)) {
    const std::string job_uid = ref.value("uid", "");
    const bool found = std::any_of(jobs.begin(), jobs.end(),
                                   [&](const json& job) { return uidOf(job) == job_uid; });
    if (!found && !ctx_.store().get(kJobs, ref.value("namespace", ns), ref.value("name", ""))) {
      ctx_.event(cron_job, "CronJob", "batch/v1", "Normal", "MissingJob",
                 "Active job went missing: " + ref.value("name", ""), kController);
      removeFromActive(job_uid);
    }
  }

  auto writeStatus = [&]() {
    if (active.empty()) {
      status.erase("active");
    } else {
      status["active"] = active;
    }
    if (status == before) return false;
    json current = ctx_.store().get(kCronJobs, ns, name).value_or(cron_job);
    current["status"] = status;
    ctx_.write("UPDATE", kCronJobs, "cronjobs/" + name + "/status", ns, name, std::move(current),
               kController, "status");
    return true;
  };

  if (terminating(cron_job)) return writeStatus();
  const std::string zone = str(cron_job, "/spec/timeZone"_json_pointer);
  if (cron_job.contains("/spec/timeZone"_json_pointer) && zone != "UTC" && zone != "Etc/UTC" &&
      !zone.empty()) {
    warnOnce(cron_job, "UnsupportedTimeZone",
             fmt::format("apiserver-sim schedules CronJobs in UTC only: timeZone \"{}\" is not "
                         "simulated, no Job is created",
                         zone));
    return writeStatus();
  }
  if (cron_job.contains("/spec/suspend"_json_pointer) &&
      cron_job.at("/spec/suspend"_json_pointer) == true) {
    return writeStatus();
  }
  const std::string spec = str(cron_job, "/spec/schedule"_json_pointer);
  auto schedule = CronSchedule::parse(spec);
  if (!schedule) {
    warnOnce(cron_job, "UnparseableSchedule",
             fmt::format("unparseable schedule: \"{}\" : {}", spec, schedule.error().message));
    return writeStatus();
  }
  const auto recent = mostRecentScheduleTime(cron_job, now, *schedule);
  if (recent.missed > 100) {
    warnOnce(cron_job, "TooManyMissedTimes",
             "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check "
             "clock skew");
  }
  if (recent.error) {
    warnOnce(cron_job, "InvalidSchedule",
             fmt::format("invalid schedule: {} : {}", spec, *recent.error));
    return writeStatus();
  }
  // nextScheduleTimeDuration: the controller looks again at the next scheduled time.
  if (auto next = schedule->next(recent.time.value_or(now))) next_[uid] = *next;
  if (!recent.time) return writeStatus();
  const Clock::time_point scheduled = *recent.time;
  auto handled = handled_.find(uid);
  if (handled != handled_.end() && handled->second == scheduled) return writeStatus();
  handled_[uid] = scheduled;

  if (cron_job.contains("/spec/startingDeadlineSeconds"_json_pointer) &&
      scheduled + std::chrono::seconds(integer(cron_job, "/spec/startingDeadlineSeconds"_json_pointer,
                                               0)) < now) {
    ctx_.event(cron_job, "CronJob", "batch/v1", "Warning", "MissSchedule",
               "Missed scheduled time to start a job: " + rfc1123z(scheduled), kController);
    return writeStatus();
  }
  // getJobName: the scheduled time in minutes since the epoch.
  const std::string job_name = fmt::format(
      "{}-{}", name,
      std::chrono::duration_cast<std::chrono::minutes>(scheduled.time_since_epoch()).count());
  const bool already = std::any_of(active.begin(), active.end(), [&](const json& ref) {
    return ref.value("name", "") == job_name && ref.value("namespace", "") == ns;
  });
  if (already || parseRfc3339(str(cron_job, "/status/lastScheduleTime"_json_pointer)) == scheduled) {
    return writeStatus();
  }
  const std::string policy = str(cron_job, "/spec/concurrencyPolicy"_json_pointer);
  if (policy == "Forbid" && !active.empty()) {
    ctx_.event(cron_job, "CronJob", "batch/v1", "Normal", "JobAlreadyActive",
               "Not starting job because prior execution is running and concurrency policy is "
               "Forbid",
               kController);
    return writeStatus();
  }
  if (policy == "Replace") {
    for (const auto& ref : json(active)) {
      // deleteJob: DeleteOptions{PropagationPolicy: Background}.
      auto deleted = ctx_.write("DELETE", kJobs, "jobs/" + ref.value("name", ""),
                                ref.value("namespace", ns), ref.value("name", ""), std::nullopt,
                                kController, {},
                                json{{"kind", "DeleteOptions"},
                                     {"apiVersion", "meta.k8s.io/v1"},
                                     {"propagationPolicy", "Background"}});
      if (!deleted.allowed) {
        ctx_.event(cron_job, "CronJob", "batch/v1", "Warning", "FailedDelete",
                   "Deleted job: " +
                       (deleted.status ? deleted.status->message : std::string("unknown error")),
                   kController);
        return writeStatus();
      }
      removeFromActive(ref.value("uid", ""));
      ctx_.event(cron_job, "CronJob", "batch/v1", "Normal", "SuccessfulDelete",
                 "Deleted job " + ref.value("name", ""), kController);
    }
  }

  // getJobFromTemplate2.
  const json job_template = cron_job.value("spec", json::object()).value("jobTemplate", json::object());
  const json template_metadata = job_template.value("metadata", json::object());
  json annotations = template_metadata.value("annotations", json::object());
  annotations[std::string(kScheduledTimestamp)] = rfc3339(scheduled);
  json metadata = {{"name", job_name},
                   {"namespace", ns},
                   {"annotations", annotations},
                   {"creationTimestamp", rfc3339(scheduled)},
                   {"ownerReferences",
                    json::array({controllerRef(cron_job, "batch/v1", "CronJob")})}};
  if (template_metadata.contains("labels")) metadata["labels"] = template_metadata["labels"];
  json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata", std::move(metadata)},
              {"spec", job_template.value("spec", json::object())}};
  auto created = ctx_.write("CREATE", kJobs, "jobs", ns, "", std::move(job), kController);
  std::optional<json> made;
  if (created.allowed) {
    made = created.object;
    ctx_.event(cron_job, "CronJob", "batch/v1", "Normal", "SuccessfulCreate",
               "Created job " + job_name, kController);
  } else if (created.code == 409) {
    // AlreadyExists: a Job this controller made before its status write; another's is left.
    auto existing = ctx_.store().get(kJobs, ns, job_name);
    if (!existing || !controlledBy(*existing, cron_job) || inActive(uidOf(*existing))) {
      return writeStatus();
    }
    made = existing;
  } else {
    ctx_.event(cron_job, "CronJob", "batch/v1", "Warning", "FailedCreate",
               "Error creating job: " +
                   (created.status ? created.status->message : std::string("unknown error")),
               kController);
    return writeStatus();
  }
  if (made) active.push_back(jobReference(*made));
  status["lastScheduleTime"] = rfc3339(scheduled);
  return writeStatus();
}

std::optional<Clock::time_point> CronJobController::nextRequeue(Clock::time_point now) const {
  std::optional<Clock::time_point> next;
  for (const auto& [uid, at] : next_) {
    if (at > now && (!next || at < *next)) next = at;
  }
  return next;
}

}  // namespace harness::sim::controllers
