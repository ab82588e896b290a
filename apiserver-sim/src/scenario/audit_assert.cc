// `apiserver-sim audit assert` (audit_assert.h).

#include "harness/sim/audit_assert.h"

#include <algorithm>
#include <fstream>
#include <optional>
#include <string_view>
#include <sstream>

#include <fmt/format.h>

#include "harness/audit/annotations.h"
#include "harness/audit/chain.h"
#include "harness/audit/log.h"
#include "harness/sim/scenario.h"

namespace harness::sim {
namespace {

// What an expectation's `match` looks at, from an event or from a peek at its line.
struct RequestFields {
  std::string_view verb, user, resource, api_group, namespace_name, name;
  std::optional<std::string_view> generate_name;  // nullopt: none, or not a string
};

RequestFields fieldsOf(const audit::Event& event,
                       const std::optional<nlohmann::json>& request_object) {
  RequestFields fields{event.verb, event.user.username, {}, {}, {}, {}, std::nullopt};
  if (event.object_ref) {
    fields.resource = event.object_ref->resource;
    fields.api_group = event.object_ref->api_group;
    fields.namespace_name = event.object_ref->namespace_name;
    fields.name = event.object_ref->name;
  }
  if (request_object && request_object->is_object()) {
    const auto metadata = request_object->find("metadata");
    if (metadata != request_object->end() && metadata->is_object()) {
      const auto generate_name = metadata->find("generateName");
      if (generate_name != metadata->end() && generate_name->is_string()) {
        fields.generate_name = generate_name->get_ref<const std::string&>();
      }
    }
  }
  return fields;
}

RequestFields fieldsOf(const audit::EventPeek& peek) {
  RequestFields fields{peek.verb,           peek.user, peek.resource, peek.api_group,
                       peek.namespace_name, peek.name, std::nullopt};
  if (!peek.generate_name.empty()) fields.generate_name = peek.generate_name;
  return fields;
}

bool selects(const LogRequestSelector& match, const RequestFields& request) {
  if (!match.verb.empty() && request.verb != match.verb) return false;
  if (!match.user.empty() && request.user != match.user) return false;
  if (!match.resource.empty() && match.resource != request.resource &&
      match.resource != std::string(request.resource) + "." + std::string(request.api_group)) {
    return false;
  }
  if (!match.namespace_name.empty() && request.namespace_name != match.namespace_name) {
    return false;
  }
  if (!match.name.empty() && request.name != match.name) return false;
  if (!match.generate_name.empty() && request.generate_name != match.generate_name) return false;
  return true;
}

std::string describeRequest(const audit::Event& event, std::size_t line) {
  std::string object;
  if (event.object_ref) {
    object = event.object_ref->resource + " " +
             (event.object_ref->namespace_name.empty()
                  ? event.object_ref->name
                  : event.object_ref->namespace_name + "/" + event.object_ref->name);
  }
  return fmt::format("line {}: {} {} (auditID {})", line, event.verb, object, event.audit_id);
}

}  // namespace

AdmissionResult admissionResultOf(const audit::Event& event,
                                  const std::optional<nlohmann::json>& response_object) {
  AdmissionResult result;
  result.audit_id = event.audit_id;
  if (event.response_status) {
    result.code = event.response_status->code;
    result.allowed = result.code >= 200 && result.code < 300;
    if (!result.allowed) result.status = *event.response_status;
  }
  if (result.allowed && response_object) result.object = *response_object;
  for (const auto& [key, value] : event.annotations) {
    if (key.rfind("authorization.k8s.io/", 0) == 0 ||
        key.rfind("apiserver.latency.k8s.io/", 0) == 0) {
      continue;
    }
    // The event records each annotation at most once; its level is not in the log.
    (void)result.annotations.add(key, value, audit::Level::kMetadata);
  }
  return result;
}

int auditAssertCommand(const std::vector<std::string>& logs, const std::string& expectations_path,
                       std::ostream& out, std::ostream& err, bool full_parse) {
  std::ifstream in(expectations_path, std::ios::binary);
  if (!in) {
    err << "apiserver-sim: cannot read " << expectations_path << "\n";
    return 2;
  }
  std::ostringstream text;
  text << in.rdbuf();
  auto expectations = parseLogExpectations(text.str(), expectations_path);
  if (!expectations.ok()) {
    err << expectations.error().message << "\n";
    return 2;
  }
  std::vector<std::size_t> selected(expectations->size(), 0);
  std::vector<std::size_t> failed(expectations->size(), 0);
  std::size_t bad_lines = 0;
  bool unreadable = false;
  // Rotated files in the order they were written.
  for (const auto& path : audit::orderRotatedLogs(logs)) {
    auto file = audit::LogFile::open(path);
    if (!file.ok()) {
      err << "apiserver-sim: " << file.error().message << "\n";
      unreadable = true;
      continue;
    }
    audit::LogLineReader lines((*file)->stream());
    while (auto line = lines.next()) {
      const std::string where = path + ":" + std::to_string(line->number);
      if (line->too_long) {
        err << where << ": line longer than " << (audit::kMaxLogLineBytes >> 20)
            << " MiB, skipped\n";
        ++bad_lines;
        continue;
      }
      if (line->text.find_first_not_of(" \t") == std::string_view::npos) continue;
      // Only ResponseComplete events hold the outcome: the other lines are not parsed.
      if (!audit::mayHoldChain(line->text, true)) continue;
      // Nor are the events no expectation selects: peeked at (simdjson), skipped unbuilt.
      if (!full_parse && !audit::looksLikeEventList(line->text)) {
        if (const auto peek = audit::peekEvent(line->text)) {
          if (peek->stage != audit::toString(audit::Stage::kResponseComplete)) continue;
          const RequestFields fields = fieldsOf(*peek);
          if (std::none_of(expectations->begin(), expectations->end(),
                           [&](const LogExpectation& e) { return selects(e.match, fields); })) {
            continue;
          }
        }
      }
      // A line may be an EventList (the webhook backend's batch, e.g. as `audit sink` received
      // it): its items are the events.
      core::Result<std::vector<audit::EventObjectsApart>> events =
          std::vector<audit::EventObjectsApart>();
      if (audit::looksLikeEventList(line->text)) {
        events = audit::parseEventListObjectsApart(line->text);
      } else if (auto event = audit::parseLogLineObjectsApart(line->text); event.ok()) {
        events->push_back(std::move(*event));
      } else {
        events = event.error();
      }
      if (!events.ok()) {
        if (!line->complete) {
          err << "note: " << where << ": last line incomplete, skipped\n";
          continue;
        }
        err << where << ": " << events.error().message << "\n";
        ++bad_lines;
        continue;
      }
      for (const audit::EventObjectsApart& event : *events) {
        if (event.event.stage != audit::Stage::kResponseComplete) continue;
        std::optional<AdmissionResult> result;
        for (std::size_t i = 0; i < expectations->size(); ++i) {
          const LogExpectation& expectation = (*expectations)[i];
          if (!selects(expectation.match, fieldsOf(event.event, event.request_object))) continue;
          ++selected[i];
          if (!result) result = admissionResultOf(event.event, event.response_object);
          StepObservation observed;
          observed.result = &*result;
          for (const auto& failure : checkExpectations(expectation.expect, observed)) {
            ++failed[i];
            out << "FAIL " << expectation.name << ": " << path << " "
                << describeRequest(event.event, line->number) << ": " << failure.field << ": "
                << failure.message << "\n";
            if (!failure.diff.empty()) out << failure.diff;
          }
        }
      }
    }
    if (auto error = (*file)->error()) {
      err << "apiserver-sim: " << *error << "\n";
      unreadable = true;
    } else if (lines.failed()) {
      err << "apiserver-sim: cannot read " << path << "\n";
      unreadable = true;
    }
  }
  std::size_t failing = 0;
  for (std::size_t i = 0; i < expectations->size(); ++i) {
    const LogExpectation& expectation = (*expectations)[i];
    bool ok = failed[i] == 0;
    if (expectation.count ? selected[i] != *expectation.count : selected[i] == 0) {
      ok = false;
      out << "FAIL " << expectation.name << ": "
          << (expectation.count ? fmt::format("expected {} matching request{}, got {}",
                                              *expectation.count,
                                              *expectation.count == 1 ? "" : "s", selected[i])
                                : std::string("no request of the log matches"))
          << " (" << expectation.location.toString() << ")\n";
    }
    if (ok) {
      out << "PASS " << expectation.name << " (" << selected[i] << " request"
          << (selected[i] == 1 ? "" : "s") << ")\n";
    } else {
      ++failing;
    }
  }
  out << expectations->size() << " expectations: " << expectations->size() - failing
      << " passed, " << failing << " failed\n";
  if (bad_lines > 0) {
    err << "apiserver-sim: " << bad_lines << " line" << (bad_lines == 1 ? "" : "s")
        << " could not be read as audit events\n";
  }
  if (bad_lines > 0 || unreadable) return 2;
  return failing == 0 ? 0 : 1;
}

}  // namespace harness::sim
