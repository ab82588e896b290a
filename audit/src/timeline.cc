// Request timelines from audit events. The annotations read are kube-apiserver's: authorization
// (pkg/endpoints/filters/authorization.go), admission (annotations.h, outcome.h) and latency
// (apiserver.latency.k8s.io/*, pkg/endpoints/request/webhook_duration.go and
// pkg/endpoints/filters/audit.go).

#include "harness/audit/timeline.h"

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "harness/audit/chain.h"
#include "harness/audit/outcome.h"

namespace harness::audit {
namespace {

constexpr std::string_view kLatencyPrefix = "apiserver.latency.k8s.io/";

std::string formatMs(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3f ms", ms);
  return text;
}

double msBetween(TimePoint from, TimePoint to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace

void TimelineBuilder::add(const Event& event) {
  if (!events_.empty() && events_.front().audit_id != event.audit_id) return;
  Event kept = event;
  // The objects are not part of a timeline: a request holds at most one copy of the small rest.
  kept.request_object.reset();
  kept.response_object.reset();
  events_.push_back(std::move(kept));
}

Timeline TimelineBuilder::build() const {
  Timeline out;
  if (events_.empty()) return out;
  std::vector<const Event*> events;
  events.reserve(events_.size());
  for (const auto& event : events_) events.push_back(&event);
  std::stable_sort(events.begin(), events.end(), [](const Event* a, const Event* b) {
    return static_cast<int>(a->stage) < static_cast<int>(b->stage);
  });
  const Event& first = *events.front();
  const Event& last = *events.back();
  out.audit_id = first.audit_id;

  std::string object;
  if (first.object_ref) {
    const auto& ref = *first.object_ref;
    object = ref.resource + (ref.api_group.empty() ? "" : "." + ref.api_group) +
             (ref.subresource.empty() ? "" : "/" + ref.subresource) + " " +
             (ref.namespace_name.empty() ? ref.name : ref.namespace_name + "/" + ref.name);
  } else {
    object = first.request_uri;
  }
  std::string received = "received: " + first.verb + " " + object + " from " +
                         (first.user.username.empty() ? "(no user)" : first.user.username);
  if (first.impersonated_user) {
    received += " as " + first.impersonated_user->username + " (impersonated)";
  }
  if (!first.user_agent.empty()) received += ", user agent " + first.user_agent;
  out.entries.push_back({first.request_received_timestamp, received});

  // The annotations of the most complete event (ResponseComplete has them all).
  const auto& annotations = last.annotations;
  if (const auto decision = annotations.find(std::string(kAuthorizationDecisionAnnotation));
      decision != annotations.end()) {
    std::string line = "authorization: " + decision->second;
    if (const auto reason = annotations.find(std::string(kAuthorizationReasonAnnotation));
        reason != annotations.end() && !reason->second.empty()) {
      line += " (" + reason->second + ")";
    }
    out.entries.push_back({std::nullopt, line});
  }
  for (const auto& event : events) {
    if (event->stage == Stage::kRequestReceived) continue;
    if (event->stage == Stage::kResponseComplete || event->stage == Stage::kPanic) {
      // Admission happened before the response: list it before the stage.
      const MutationChain chain = chainOf(*event);
      for (const auto& step : chain.steps) {
        std::string line = "mutating webhook " + step.webhook + " (round " +
                           std::to_string(step.round) + " index " + std::to_string(step.index) +
                           "): " + (step.failed_open ? "failed open"
                                    : step.mutated  ? "mutated"
                                                    : "not mutated");
        if (step.patch && step.patch->is_array()) {
          line += ", " + std::to_string(step.patch->size()) + " patch operation" +
                  (step.patch->size() == 1 ? "" : "s");
        }
        out.entries.push_back({std::nullopt, line});
      }
      const RequestOutcome outcome = outcomeOf(*event);
      for (const auto& failed : outcome.failed_open) {
        if (failed.rfind("validating", 0) == 0) {
          out.entries.push_back({std::nullopt, failed + ": failed open"});
        }
      }
      for (const auto& [key, value] : chain.webhook_annotations) {
        if (key.rfind(kValidatingFailedOpenAnnotationPrefix, 0) == 0) continue;
        if (key.rfind(kLatencyPrefix, 0) == 0) continue;
        out.entries.push_back(
            {std::nullopt, std::string("annotation ").append(key).append(" = ").append(value)});
      }
      std::string line = std::string(toString(event->stage)) + ": " + formatOutcome(outcome);
      if (first.request_received_timestamp && event->stage_timestamp) {
        line += " (+" + formatMs(msBetween(*first.request_received_timestamp,
                                           *event->stage_timestamp)) + ")";
      }
      out.entries.push_back({event->stage_timestamp, line});
      continue;
    }
    std::string line = std::string(toString(event->stage));
    if (first.request_received_timestamp && event->stage_timestamp) {
      line += " (+" +
              formatMs(msBetween(*first.request_received_timestamp, *event->stage_timestamp)) +
              ")";
    }
    out.entries.push_back({event->stage_timestamp, line});
  }
  for (const auto& [key, value] : annotations) {
    if (key.rfind(kLatencyPrefix, 0) == 0) {
      out.latencies.emplace_back(key.substr(kLatencyPrefix.size()), value);
    }
  }
  if (first.request_received_timestamp && last.stage_timestamp) {
    out.total_ms = msBetween(*first.request_received_timestamp, *last.stage_timestamp);
  }
  return out;
}

std::string formatTimeline(const Timeline& timeline) {
  std::string out = "request " + timeline.audit_id + "\n";
  for (const auto& entry : timeline.entries) {
    out += "  " + (entry.at ? formatMicroTime(*entry.at) : std::string(27, ' ')) + "  " +
           entry.what + "\n";
  }
  if (timeline.total_ms) out += "  total " + formatMs(*timeline.total_ms) + "\n";
  for (const auto& [what, duration] : timeline.latencies) {
    out.append("  latency ").append(what).append(": ").append(duration).append("\n");
  }
  return out;
}

nlohmann::json timelineJson(const Timeline& timeline) {
  nlohmann::json out = {{"auditID", timeline.audit_id}, {"entries", nlohmann::json::array()}};
  for (const auto& entry : timeline.entries) {
    nlohmann::json item = {{"what", entry.what}};
    if (entry.at) item["at"] = formatMicroTime(*entry.at);
    out["entries"].push_back(std::move(item));
  }
  if (timeline.total_ms) out["totalMs"] = *timeline.total_ms;
  nlohmann::json latencies = nlohmann::json::object();
  for (const auto& [what, duration] : timeline.latencies) latencies[what] = duration;
  out["latencies"] = std::move(latencies);
  return out;
}

}  // namespace harness::audit
