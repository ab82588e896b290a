#pragma once

// A request's timeline from its audit events (every stage the policy kept): when it was received
// and by whom, the authorization decision, each mutating webhook in order, the validating
// webhooks and policies that left a trace, the stages with their times, the outcome, and the
// latencies kube-apiserver adds as annotations to slow requests (apiserver.latency.k8s.io/*,
// pkg/endpoints/filters/audit.go and request.AuditAnnotationsFromLatencyTrackers: written when
// the request took longer than 500 ms). Used by `apiserver-sim audit timeline` and reusable by
// reports.

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/audit/event.h"

namespace harness::audit {

struct TimelineEntry {
  std::optional<TimePoint> at;  // nullopt: when is not recorded (a webhook's call)
  std::string what;
};

struct Timeline {
  std::string audit_id;
  std::vector<TimelineEntry> entries;  // in time order; untimed entries where they happened
  // apiserver.latency.k8s.io/<what> = "<duration>", e.g. {"mutating-webhook", "512.3ms"}.
  std::vector<std::pair<std::string, std::string>> latencies;
  std::optional<double> total_ms;  // from requestReceivedTimestamp to the last stageTimestamp
};

// Collects the events of one request (any order; other auditIDs are ignored once the first event
// fixed it).
class TimelineBuilder {
 public:
  void add(const Event& event);
  [[nodiscard]] bool empty() const { return events_.empty(); }
  [[nodiscard]] Timeline build() const;

 private:
  std::vector<Event> events_;  // a request has at most four (one per stage)
};

std::string formatTimeline(const Timeline& timeline);
nlohmann::json timelineJson(const Timeline& timeline);

}  // namespace harness::audit
