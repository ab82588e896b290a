// kube-controller-manager's job controller (see job_controller.h for what is followed).

#include "job_controller.h"

#include <algorithm>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

namespace harness::sim::controllers {
namespace {

using json = nlohmann::json;

const core::GroupResource kJobs{"batch", "jobs"};
const core::GroupResource kPods{"", "pods"};
const std::string kController = "job-controller";
constexpr std::string_view kTrackingFinalizer = "batch.kubernetes.io/job-tracking";
constexpr std::string_view kCompletionIndex = "batch.kubernetes.io/job-completion-index";
constexpr std::string_view kCompletionIndexEnv = "JOB_COMPLETION_INDEX";
// job_controller.go DefaultJobPodFailureBackOff, MaxJobPodFailureBackOff.
constexpr std::chrono::seconds kPodFailureBackoff{10};
constexpr std::chrono::minutes kMaxPodFailureBackoff{10};
// apimachinery's names.MaxGeneratedNameLength (63 - 5 random characters).
constexpr std::size_t kMaxGeneratedNameLength = 58;

bool hasFinalizer(const json& object, std::string_view finalizer) {
  if (!object.contains("/metadata/finalizers"_json_pointer)) return false;
  const json& finalizers = object.at("/metadata/finalizers"_json_pointer);
  return finalizers.is_array() &&
         std::any_of(finalizers.begin(), finalizers.end(),
                     [&](const json& f) { return f.is_string() && f.get<std::string>() == finalizer; });
}

bool conditionTrue(const json& job, std::string_view type) {
  if (!job.contains("/status/conditions"_json_pointer)) return false;
  const json& conditions = job.at("/status/conditions"_json_pointer);
  if (!conditions.is_array()) return false;
  return std::any_of(conditions.begin(), conditions.end(), [&](const json& c) {
    return c.is_object() && c.value("type", "") == type && c.value("status", "") == "True";
  });
}

// jobutil.IsJobFinished: a Complete or Failed condition that is True.
bool finished(const json& job) { return conditionTrue(job, "Complete") || conditionTrue(job, "Failed"); }

bool suspended(const json& job) {
  return job.contains("/spec/suspend"_json_pointer) &&
         job.at("/spec/suspend"_json_pointer).is_boolean() &&
         job.at("/spec/suspend"_json_pointer).get<bool>();
}

bool indexed(const json& job) { return str(job, "/spec/completionMode"_json_pointer) == "Indexed"; }

// podGenerateNameWithIndex.
std::string generateNameWithIndex(const std::string& job, std::int64_t index) {
  const std::string appended = fmt::format("-{}-", index);
  if (job.size() + appended.size() <= kMaxGeneratedNameLength) return job + appended;
  return job.substr(0, kMaxGeneratedNameLength - appended.size()) + appended;
}

// addCompletionIndexEnvVariable (PodIndexLabel is GA: the value comes from the label).
void addCompletionIndexEnv(json& container) {
  if (!container.is_object()) return;
  json& env = container["env"];
  if (!env.is_array()) env = json::array();
  for (const auto& v : env) {
    if (v.is_object() && v.value("name", "") == kCompletionIndexEnv) return;
  }
  env.push_back({{"name", kCompletionIndexEnv},
                 {"valueFrom",
                  {{"fieldRef",
                    {{"fieldPath", fmt::format("metadata.labels['{}']", kCompletionIndex)}}}}}});
}

// ensureJobConditionStatus: sets a condition of `type`, or changes its status; a new condition
// is only added when it is True. Returns whether anything changed.
bool ensureCondition(json& status, const std::string& type, const std::string& value,
                     const std::string& reason, const std::string& message,
                     const std::string& now) {
  json& conditions = status["conditions"];
  if (!conditions.is_array()) conditions = json::array();
  for (auto& c : conditions) {
    if (!c.is_object() || c.value("type", "") != type) continue;
    if (c.value("status", "") == value && c.value("reason", "") == reason &&
        c.value("message", "") == message) {
      return false;
    }
    if (c.value("status", "") != value) c["lastTransitionTime"] = now;
    c["status"] = value;
    c["reason"] = reason;
    c["message"] = message;
    c["lastProbeTime"] = now;
    return true;
  }
  if (value != "True") {
    if (conditions.empty()) status.erase("conditions");
    return false;
  }
  conditions.push_back({{"type", type},
                        {"status", value},
                        {"lastProbeTime", now},
                        {"lastTransitionTime", now},
                        {"reason", reason},
                        {"message", message}});
  return true;
}

}  // namespace

bool JobController::removeTrackingFinalizer(const json& pod) const {
  json updated = pod;
  json& finalizers = updated["metadata"]["finalizers"];
  finalizers.erase(std::remove_if(finalizers.begin(), finalizers.end(),
                                  [](const json& f) {
                                    return f.is_string() && f.get<std::string>() == kTrackingFinalizer;
                                  }),
                   finalizers.end());
  if (finalizers.empty()) updated["metadata"].erase("finalizers");
  // removeTrackingFinalizerPatch: a strategic merge patch of the Pod (the job controller's role
  // may patch Pods, not update them).
  return ctx_
      .write("UPDATE", kPods, "pods/" + nameOf(pod), namespaceOf(pod), nameOf(pod),
             std::move(updated), kController, {}, std::nullopt, "patch")
      .allowed;
}

JobController::Clock::time_point JobController::podFailureBackoffEnd(const Backoff& b) const {
  if (b.pod_failures == 0) return {};
  // backoffRecord.getRemainingTime: the default backoff doubled per failure after the first.
  auto wait = std::chrono::duration_cast<Clock::duration>(kPodFailureBackoff);
  for (int i = 1; i < b.pod_failures && wait < kMaxPodFailureBackoff; ++i) wait *= 2;
  wait = std::min<Clock::duration>(wait, kMaxPodFailureBackoff);
  return b.last_pod_failure + wait;
}

bool JobController::sync(Clock::time_point now) {
  bool wrote = false;
  std::vector<std::string> live;
  for (const auto& job : ctx_.store().list(kJobs)) {
    live.push_back(uidOf(job));
    wrote |= syncJob(job, now);
  }
  // Pods whose Job is gone keep no finalizer of the controller's (cleanupOrphanPods / the
  // orphan Pod's finalizer removal): the garbage collector's delete can then complete.
  for (const auto& pod : ctx_.store().list(kPods)) {
    auto owner = controllerOf(pod);
    if (!owner || owner->value("kind", "") != "Job" ||
        owner->value("apiVersion", "") != "batch/v1" || !hasFinalizer(pod, kTrackingFinalizer)) {
      continue;
    }
    if (std::find(live.begin(), live.end(), owner->value("uid", "")) != live.end()) continue;
    wrote |= removeTrackingFinalizer(pod);
  }
  // Forget the backoff of Jobs that are gone.
  for (auto it = backoff_.begin(); it != backoff_.end();) {
    it = std::find(live.begin(), live.end(), it->first) == live.end() ? backoff_.erase(it)
                                                                       : std::next(it);
  }
  return wrote;
}

bool JobController::syncJob(json job, Clock::time_point now) {
  if (terminating(job) || !job.contains("/spec/template"_json_pointer)) return false;
  const std::string ns = namespaceOf(job);
  const std::string name = nameOf(job);
  Backoff& backoff = backoff_[uidOf(job)];
  const std::string now_text = rfc3339(now);
  bool wrote = false;

  std::vector<json> active;
  std::int64_t failed = integer(job, "/status/failed"_json_pointer, 0);
  for (const auto& pod : ctx_.store().list(kPods, ns)) {
    if (!controlledBy(pod, job)) continue;
    const std::string phase = str(pod, "/status/phase"_json_pointer);
    if (terminating(pod)) {
      // isPodFailed: a Pod deleted before it succeeded failed; its finalizer goes and it is
      // counted (trackJobStatusAndRemoveFinalizers).
      if (hasFinalizer(pod, kTrackingFinalizer) && phase != "Succeeded" &&
          removeTrackingFinalizer(pod)) {
        ++failed;
        ++backoff.pod_failures;
        backoff.last_pod_failure = now;
        wrote = true;
      }
      continue;
    }
    if (phase != "Succeeded" && phase != "Failed") active.push_back(pod);
  }

  json status = job.value("status", json::object());
  const json before = status;
  const bool was_finished = finished(job);

  // The controller deletes a Pod by removing its finalizer first (deleteJobPods), so that the
  // Pod does not count as failed.
  auto deleteActive = [&](std::size_t count) {
    std::size_t deleted = 0;
    while (deleted < count && !active.empty()) {
      const json pod = active.back();
      active.pop_back();
      if (hasFinalizer(pod, kTrackingFinalizer)) removeTrackingFinalizer(pod);
      auto removed = ctx_.write("DELETE", kPods, "pods/" + nameOf(pod), ns, nameOf(pod),
                                std::nullopt, kController);
      wrote = true;
      if (removed.allowed) {
        ctx_.event(job, "Job", "batch/v1", "Normal", "SuccessfulDelete",
                   "Deleted pod: " + nameOf(pod), kController);
        ++deleted;
      }
    }
  };

  if (!was_finished) {
    const std::int64_t backoff_limit = integer(job, "/spec/backoffLimit"_json_pointer, 6);
    if (failed > backoff_limit) {
      // newFailedConditionsForFailureTarget, then Failed once the Pods are gone.
      deleteActive(active.size());
      const std::string message = "Job has reached the specified backoff limit";
      ensureCondition(status, "FailureTarget", "True", "BackoffLimitExceeded", message, now_text);
      ensureCondition(status, "Failed", "True", "BackoffLimitExceeded", message, now_text);
      ctx_.event(job, "Job", "batch/v1", "Warning", "BackoffLimitExceeded", message, kController);
    } else if (suspended(job)) {
      deleteActive(active.size());
      if (ensureCondition(status, "Suspended", "True", "JobSuspended", "Job suspended",
                          now_text)) {
        ctx_.event(job, "Job", "batch/v1", "Normal", "Suspended", "Job suspended", kController);
        status.erase("startTime");  // MutableSchedulingDirectivesForSuspendedJobs
      }
    } else {
      if (ensureCondition(status, "Suspended", "False", "JobResumed", "Job resumed", now_text)) {
        ctx_.event(job, "Job", "batch/v1", "Normal", "Resumed", "Job resumed", kController);
        status["startTime"] = now_text;
      }
      if (!status.contains("startTime")) status["startTime"] = now_text;
      // manageJob: no Pod ever succeeds here, so the Pods wanted are parallelism, bounded by
      // completions when set.
      std::int64_t want = integer(job, "/spec/parallelism"_json_pointer, 1);
      if (job.contains("/spec/completions"_json_pointer) &&
          job.at("/spec/completions"_json_pointer).is_number_integer()) {
        want = std::min(want, integer(job, "/spec/completions"_json_pointer, 1));
      }
      want = std::max<std::int64_t>(want, 0);
      const auto active_count = static_cast<std::int64_t>(active.size());
      if (active_count > want) {
        deleteActive(static_cast<std::size_t>(active_count - want));
      } else if (active_count < want && now >= podFailureBackoffEnd(backoff) &&
                 now >= backoff.api_next) {
        std::vector<std::int64_t> indexes;
        if (indexed(job)) {
          // firstPendingIndexes: the lowest indexes below completions without an active Pod.
          const std::int64_t completions = integer(job, "/spec/completions"_json_pointer, 0);
          std::vector<bool> taken(static_cast<std::size_t>(std::max<std::int64_t>(completions, 0)));
          for (const auto& pod : active) {
            try {
              const auto i = std::stoll(annotation(pod, kCompletionIndex));
              if (i >= 0 && i < completions) taken[static_cast<std::size_t>(i)] = true;
            } catch (const std::exception&) {
              // getCompletionIndex: a Pod without a valid index is not counted
            }
          }
          for (std::int64_t i = 0; i < completions &&
                                   static_cast<std::int64_t>(indexes.size()) < want - active_count;
               ++i) {
            if (!taken[static_cast<std::size_t>(i)]) indexes.push_back(i);
          }
        } else {
          indexes.assign(static_cast<std::size_t>(want - active_count), -1);
        }
        // GetPodFromTemplate with the job-tracking finalizer (appendJobCompletionFinalizer).
        const json& tmpl = job.at("/spec/template"_json_pointer);
        json base = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", json::object()},
                     {"spec", tmpl.value("spec", json::object())}};
        for (const char* field : {"labels", "annotations", "finalizers"}) {
          if (tmpl.contains("metadata") && tmpl["metadata"].is_object() &&
              tmpl["metadata"].contains(field)) {
            base["metadata"][field] = tmpl["metadata"][field];
          }
        }
        if (!hasFinalizer(base, kTrackingFinalizer)) {
          base["metadata"]["finalizers"].push_back(kTrackingFinalizer);
        }
        base["metadata"]["namespace"] = ns;
        base["metadata"]["ownerReferences"] =
            json::array({controllerRef(job, "batch/v1", "Job")});
        if (indexed(job)) {
          for (const char* list : {"initContainers", "containers"}) {
            if (!base["spec"].contains(list) || !base["spec"][list].is_array()) continue;
            for (auto& container : base["spec"][list]) addCompletionIndexEnv(container);
          }
        }
        for (const std::int64_t index : indexes) {
          json pod = base;
          if (index >= 0) {
            const std::string text = std::to_string(index);
            pod["metadata"]["annotations"][std::string(kCompletionIndex)] = text;
            pod["metadata"]["labels"][std::string(kCompletionIndex)] = text;
            pod["spec"]["hostname"] = fmt::format("{}-{}", name, index);
            pod["metadata"]["generateName"] = generateNameWithIndex(name, index);
          } else {
            pod["metadata"]["generateName"] = name + "-";  // getPodsPrefix
          }
          auto created = ctx_.write("CREATE", kPods, "pods", ns, "", std::move(pod), kController);
          wrote = true;
          if (!created.allowed) {
            // RealPodControl.createPods: FailedCreate with the apiserver's error; the Job is
            // synced again after the API backoff.
            const std::string message =
                created.status ? created.status->message : std::string("unknown error");
            ctx_.event(job, "Job", "batch/v1", "Warning", "FailedCreate",
                       "Error creating: " + message, kController);
            auto wait = std::chrono::duration_cast<Clock::duration>(api_backoff_);
            for (int i = 0; i < backoff.api_failures && wait < max_api_backoff_; ++i) wait *= 2;
            wait = std::min<Clock::duration>(wait, max_api_backoff_);
            ++backoff.api_failures;
            backoff.api_next = now + wait;
            break;
          }
          backoff.api_failures = 0;
          if (created.object) {
            active.push_back(*created.object);
            ctx_.event(job, "Job", "batch/v1", "Normal", "SuccessfulCreate",
                       "Created pod: " + nameOf(*created.object), kController);
          }
        }
      }
    }
  }

  // The status as the controller writes it (UpdateStatus).
  if (active.empty()) {
    status.erase("active");
  } else {
    status["active"] = active.size();
  }
  if (failed > 0) status["failed"] = failed;
  status["ready"] = 0;
  status["terminating"] = 0;
  status["uncountedTerminatedPods"] = json::object();
  if (status == before) return wrote;
  json current = ctx_.store().get(kJobs, ns, name).value_or(job);
  current["status"] = std::move(status);
  ctx_.write("UPDATE", kJobs, "jobs/" + name + "/status", ns, name, std::move(current),
             kController, "status");
  return true;
}

std::optional<JobController::Clock::time_point> JobController::nextRequeue(
    Clock::time_point now) const {
  std::optional<Clock::time_point> next;
  auto consider = [&](Clock::time_point at) {
    if (at > now && (!next || at < *next)) next = at;
  };
  for (const auto& [uid, b] : backoff_) {
    if (b.api_failures > 0) consider(b.api_next);
    consider(podFailureBackoffEnd(b));
  }
  return next;
}

}  // namespace harness::sim::controllers
