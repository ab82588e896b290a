// Checking a step's expectations (scenario.h Expectation) against what the admission chain
// recorded, and the diffs shown when they do not hold.

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/audit/level.h"
#include "harness/core/json.h"
#include "harness/core/json_pointer.h"
#include "harness/core/yaml.h"
#include "harness/go/regexp.h"
#include "harness/sim/scenario_runner.h"
#include "harness/sim/store.h"

namespace harness::sim {
using nlohmann::json;

namespace {

// The ServiceAccount plugin names its projected token volume kube-api-access-<utilrand.String(5)>
// (plugin/pkg/admission/serviceaccount/admission.go).
const std::regex& kubeApiAccessName() {
  static const std::regex pattern("^kube-api-access-" + randSuffixPattern() + "$");
  return pattern;
}
constexpr std::string_view kKubeApiAccessPlaceholder = "kube-api-access-*";

std::string show(const json& value) {
  std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  if (text.size() > 200) text = text.substr(0, 197) + "...";
  return text;
}

std::string showString(std::string_view text) { return show(json(std::string(text))); }

bool isRegexMatcher(const json& value) {
  return value.is_object() && value.size() == 1 && value.contains("$regex") &&
         value["$regex"].is_string();
}

bool regexFinds(const std::string& pattern, const std::string& text) {
  const auto compiled = go::Regexp::compile(pattern);  // the loader rejected invalid ones
  return compiled && compiled->matchString(text);
}

bool leafMatches(const json& expected, const json& actual) {
  if (isRegexMatcher(expected)) {
    return actual.is_string() &&
           regexFinds(expected["$regex"].get<std::string>(), actual.get<std::string>());
  }
  if (expected == actual) return true;
  // 1 and 1.0 are the same number in YAML.
  if (expected.is_number() && actual.is_number()) {
    return expected.get<double>() == actual.get<double>();
  }
  if (expected.is_string() && actual.is_string() && expected == kKubeApiAccessPlaceholder) {
    return std::regex_match(actual.get<std::string>(), kubeApiAccessName());
  }
  return false;
}

void collectMismatches(const json& expected, const json& actual, const core::JsonPointer& at,
                       std::vector<std::string>& out) {
  const std::string where = at.isRoot() ? "/" : at.toString();
  if (isRegexMatcher(expected)) {
    if (!leafMatches(expected, actual)) {
      out.push_back(fmt::format("{}: expected a string matching /{}/, got {}", where,
                                expected["$regex"].get<std::string>(), show(actual)));
    }
    return;
  }
  if (expected.is_object()) {
    if (!actual.is_object()) {
      out.push_back(fmt::format("{}: expected a mapping, got {}", where, show(actual)));
      return;
    }
    for (const auto& [key, value] : expected.items()) {
      auto it = actual.find(key);
      if (it == actual.end()) {
        out.push_back(fmt::format("{}: missing (expected {})", at.child(key).toString(),
                                  show(value)));
        continue;
      }
      collectMismatches(value, *it, at.child(key), out);
    }
    return;
  }
  if (expected.is_array()) {
    if (!actual.is_array()) {
      out.push_back(fmt::format("{}: expected a list, got {}", where, show(actual)));
      return;
    }
    const std::size_t common = std::min(expected.size(), actual.size());
    for (std::size_t i = 0; i < common; ++i) {
      collectMismatches(expected[i], actual[i], at.child(i), out);
    }
    if (expected.size() != actual.size()) {
      out.push_back(fmt::format("{}: expected {} items, got {}", where, expected.size(),
                                actual.size()));
    }
    return;
  }
  if (!leafMatches(expected, actual)) {
    out.push_back(fmt::format("{}: expected {}, got {}", where, show(expected), show(actual)));
  }
}

// `actual` reduced to the shape of `expected`, so that a diff of the two shows only what the
// expectation is about. Matched leaves take the expected form (a regex matcher, the
// kube-api-access placeholder) so that they do not show as differences.
json projectOnto(const json& expected, const json& actual) {
  if (leafMatches(expected, actual)) return expected;
  if (expected.is_object() && !isRegexMatcher(expected) && actual.is_object()) {
    json out = json::object();
    for (const auto& [key, value] : expected.items()) {
      auto it = actual.find(key);
      if (it != actual.end()) out[key] = projectOnto(value, *it);
    }
    return out;
  }
  if (expected.is_array() && actual.is_array()) {
    json out = json::array();
    for (std::size_t i = 0; i < actual.size(); ++i) {
      out.push_back(i < expected.size() ? projectOnto(expected[i], actual[i])
                                        : withoutServerSetFields(actual[i]));
    }
    return out;
  }
  return withoutServerSetFields(actual);
}

std::vector<std::string> splitLines(std::string_view text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    if (end == std::string_view::npos) {
      lines.emplace_back(text.substr(start));
      break;
    }
    lines.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string yamlOf(const json& value) { return core::toYaml(value); }

// JSON-aware equality for annotation values: both parse -> compare as JSON.
bool annotationValuesEqual(const std::string& expected, const std::string& actual) {
  if (expected == actual) return true;
  const json a = core::parseJsonOrDiscarded(expected);
  const json b = core::parseJsonOrDiscarded(actual);
  if (a.is_discarded() || b.is_discarded()) return false;
  return a == b;
}

std::string mapLines(const std::map<std::string, std::string>& values) {
  std::string out;
  for (const auto& [key, value] : values) out += fmt::format("{}: {}\n", key, value);
  return out;
}

void checkMap(const std::string& field, const std::map<std::string, std::string>& expected,
              ListMatch match, const std::map<std::string, std::string>& actual,
              std::vector<ExpectationFailure>& failures) {
  std::vector<std::string> problems;
  for (const auto& [key, value] : expected) {
    auto it = actual.find(key);
    if (it == actual.end()) {
      problems.push_back(fmt::format("{} missing", showString(key)));
    } else if (!annotationValuesEqual(value, it->second)) {
      problems.push_back(fmt::format("{}: expected {}, got {}", showString(key), showString(value),
                                     showString(it->second)));
    }
  }
  if (match == ListMatch::kExact) {
    for (const auto& [key, value] : actual) {
      if (!expected.contains(key)) problems.push_back(fmt::format("{} unexpected", showString(key)));
    }
  }
  if (problems.empty()) return;
  std::map<std::string, std::string> shown_actual;
  for (const auto& [key, value] : actual) {
    if (match == ListMatch::kExact || expected.contains(key)) shown_actual.emplace(key, value);
  }
  // Values equal as JSON are shown as expected so that only real differences stand out.
  for (auto& [key, value] : shown_actual) {
    auto it = expected.find(key);
    if (it != expected.end() && annotationValuesEqual(it->second, value)) value = it->second;
  }
  std::string message = problems.front();
  if (problems.size() > 1) message += fmt::format(" (and {} more)", problems.size() - 1);
  failures.push_back({field, message, lineDiff(mapLines(expected), mapLines(shown_actual))});
}

// --- calls ---

std::string callLine(const CallExpectation& call) {
  std::vector<std::string> parts;
  if (call.webhook) parts.push_back("webhook=" + *call.webhook);
  if (call.configuration) parts.push_back("configuration=" + *call.configuration);
  if (call.type) parts.push_back("type=" + *call.type);
  if (call.round) parts.push_back(fmt::format("round={}", *call.round));
  if (call.index) parts.push_back(fmt::format("index={}", *call.index));
  if (call.outcome) parts.push_back("outcome=" + *call.outcome);
  if (call.called) parts.push_back(fmt::format("called={}", *call.called));
  if (call.timeout) parts.push_back("timeout=" + *call.timeout);
  if (call.code) parts.push_back(fmt::format("code={}", *call.code));
  if (call.changed) parts.push_back(fmt::format("changed={}", *call.changed));
  std::string out;
  for (const auto& part : parts) {
    if (!out.empty()) out += ' ';
    out += part;
  }
  return out;
}

// A call record as an expectation with every field set.
CallExpectation describe(const CallRecord& record) {
  CallExpectation call;
  call.webhook = record.webhook;
  call.configuration = record.configuration;
  call.type = record.kind == core::WebhookKind::kMutating ? "mutating" : "validating";
  call.round = record.round;
  call.index = record.index;
  call.outcome = std::string(toString(record.outcome));
  call.called = record.called;
  call.timeout = record.timeout_param;
  call.code = record.status ? record.status->code : 0;
  call.changed = record.changed;
  return call;
}

// Keeps only the fields set in `mask`.
CallExpectation masked(const CallExpectation& full, const CallExpectation& mask) {
  CallExpectation out;
  if (mask.webhook) out.webhook = full.webhook;
  if (mask.configuration) out.configuration = full.configuration;
  if (mask.type) out.type = full.type;
  if (mask.round) out.round = full.round;
  if (mask.index) out.index = full.index;
  if (mask.outcome) out.outcome = full.outcome;
  if (mask.called) out.called = full.called;
  if (mask.timeout) out.timeout = full.timeout;
  if (mask.code) out.code = full.code;
  if (mask.changed) out.changed = full.changed;
  return out;
}

bool callMatches(const CallExpectation& expected, const CallRecord& record) {
  const CallExpectation actual = describe(record);
  return (!expected.webhook || expected.webhook == actual.webhook) &&
         (!expected.configuration || expected.configuration == actual.configuration) &&
         (!expected.type || expected.type == actual.type) &&
         (!expected.round || expected.round == actual.round) &&
         (!expected.index || expected.index == actual.index) &&
         (!expected.outcome || expected.outcome == actual.outcome) &&
         (!expected.called || expected.called == actual.called) &&
         (!expected.timeout || expected.timeout == actual.timeout) &&
         (!expected.code || expected.code == actual.code) &&
         (!expected.changed || expected.changed == actual.changed);
}

void checkCalls(const Expectation& expect, const std::vector<CallRecord>& records,
                std::vector<ExpectationFailure>& failures) {
  const auto& expected = *expect.calls;
  std::string message;
  if (expect.calls_match == ListMatch::kExact) {
    if (expected.size() != records.size()) {
      message = fmt::format("expected {} calls, got {}", expected.size(), records.size());
    } else {
      for (std::size_t i = 0; i < expected.size(); ++i) {
        if (!callMatches(expected[i], records[i])) {
          message = fmt::format("call {} differs", i);
          break;
        }
      }
    }
  } else {
    std::size_t next = 0;
    for (const auto& record : records) {
      if (next < expected.size() && callMatches(expected[next], record)) ++next;
    }
    if (next < expected.size()) {
      message = fmt::format("expected call {} ({}) not found in order", next,
                            callLine(expected[next]));
    }
  }
  if (message.empty()) return;
  // Actual calls shown with the fields the expectations use.
  CallExpectation mask;
  for (const auto& call : expected) {
    if (call.webhook) mask.webhook = "";
    if (call.configuration) mask.configuration = "";
    if (call.type) mask.type = "";
    if (call.round) mask.round = 0;
    if (call.index) mask.index = 0;
    if (call.outcome) mask.outcome = "";
    if (call.called) mask.called = false;
    if (call.timeout) mask.timeout = "";
    if (call.code) mask.code = 0;
    if (call.changed) mask.changed = false;
  }
  if (expected.empty()) mask = describe(CallRecord{});
  std::string expected_text;
  for (const auto& call : expected) expected_text += callLine(call) + "\n";
  std::string actual_text;
  for (const auto& record : records) {
    actual_text += callLine(masked(describe(record), mask)) + "\n";
  }
  failures.push_back({"calls", message, lineDiff(expected_text, actual_text)});
}

std::string statusSummary(const AdmissionResult& result) {
  if (!result.status) return fmt::format("{}", result.code);
  if (result.status->reason.empty()) {
    return fmt::format("{}: {}", result.status->code, result.status->message);
  }
  return fmt::format("{} {}: {}", result.status->code, result.status->reason,
                     result.status->message);
}

}  // namespace

nlohmann::json withoutServerSetFields(const nlohmann::json& object) {
  json out = object;
  if (out.is_object()) {
    auto metadata = out.find("metadata");
    if (metadata != out.end() && metadata->is_object()) {
      for (const char* key : {"uid", "resourceVersion", "creationTimestamp", "generation",
                              "managedFields", "selfLink"}) {
        metadata->erase(key);
      }
    }
  }
  // The random volume suffix, wherever the name appears (volumes, volumeMounts).
  std::vector<json*> stack{&out};
  while (!stack.empty()) {
    json* value = stack.back();
    stack.pop_back();
    if (value->is_string()) {
      if (std::regex_match(value->get_ref<const std::string&>(), kubeApiAccessName())) {
        *value = std::string(kKubeApiAccessPlaceholder);
      }
    } else if (value->is_structured()) {
      for (auto& child : *value) stack.push_back(&child);
    }
  }
  return out;
}

std::vector<std::string> partialMatchMismatches(const nlohmann::json& expected,
                                                const nlohmann::json& actual) {
  std::vector<std::string> out;
  collectMismatches(expected, actual, core::JsonPointer(), out);
  return out;
}

std::string lineDiff(std::string_view expected, std::string_view actual) {
  if (expected == actual) return {};
  const auto a = splitLines(expected);
  const auto b = splitLines(actual);
  std::vector<std::string> lines;  // with markers
  constexpr std::size_t kMaxCells = 4'000'000;
  if (a.size() * b.size() > kMaxCells) {
    for (const auto& line : a) lines.push_back("- " + line);
    for (const auto& line : b) lines.push_back("+ " + line);
  } else {
    // Longest common subsequence, suffix table.
    std::vector<std::vector<std::size_t>> lcs(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = a.size(); i-- > 0;) {
      for (std::size_t j = b.size(); j-- > 0;) {
        lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
      }
    }
    std::size_t i = 0;
    std::size_t j = 0;
    while (i < a.size() || j < b.size()) {
      if (i < a.size() && j < b.size() && a[i] == b[j]) {
        lines.push_back("  " + a[i]);
        ++i;
        ++j;
      } else if (i < a.size() && (j == b.size() || lcs[i + 1][j] >= lcs[i][j + 1])) {
        lines.push_back("- " + a[i++]);  // removals before additions, as diff -u shows them
      } else {
        lines.push_back("+ " + b[j++]);
      }
    }
  }
  // Three lines of context around changes; longer unchanged runs are elided.
  constexpr std::size_t kContext = 3;
  std::vector<bool> keep(lines.size(), false);
  for (std::size_t k = 0; k < lines.size(); ++k) {
    if (lines[k][0] == ' ') continue;
    const std::size_t from = k >= kContext ? k - kContext : 0;
    const std::size_t to = std::min(lines.size(), k + kContext + 1);
    for (std::size_t m = from; m < to; ++m) keep[m] = true;
  }
  std::string out;
  bool elided = false;
  for (std::size_t k = 0; k < lines.size(); ++k) {
    if (!keep[k]) {
      if (!elided) out += "  ...\n";
      elided = true;
      continue;
    }
    elided = false;
    out += lines[k];
    out += '\n';
  }
  return out;
}

std::optional<double> metricValue(const core::MetricsRegistry& registry, const std::string& name,
                                  const std::map<std::string, std::string>& labels) {
  const core::CounterFamily* counter = registry.findCounter(name);
  if (counter == nullptr) return std::nullopt;
  const auto& names = counter->labelNames();
  double sum = 0;
  for (const auto& [values, value] : counter->snapshot()) {
    bool matches = true;
    for (const auto& [label, wanted] : labels) {
      auto it = std::find(names.begin(), names.end(), label);
      if (it == names.end()) {
        matches = false;
        break;
      }
      const auto position = static_cast<std::size_t>(it - names.begin());
      if (position >= values.size() || values[position] != wanted) {
        matches = false;
        break;
      }
    }
    if (matches) sum += value;
  }
  return sum;
}

std::vector<ExpectationFailure> checkExpectations(const Expectation& expect,
                                                  const StepObservation& observed) {
  std::vector<ExpectationFailure> failures;
  if (observed.result == nullptr) return failures;
  const AdmissionResult& result = *observed.result;

  if (expect.allowed && *expect.allowed != result.allowed) {
    failures.push_back(
        {"allowed",
         *expect.allowed ? fmt::format("expected the request to be allowed, got {}",
                                       statusSummary(result))
                         : fmt::format("expected the request to be denied, got {} (allowed)",
                                       result.code),
         {}});
  }
  if (expect.code && *expect.code != result.code) {
    failures.push_back(
        {"code", fmt::format("expected {}, got {}", *expect.code, statusSummary(result)), {}});
  }
  const std::string message = result.status ? result.status->message : "";
  if (expect.message) {
    const auto& text = expect.message->text;
    bool ok = false;
    std::string wanted;
    switch (expect.message->match) {
      case TextMatch::kExact:
        ok = message == text;
        wanted = showString(text);
        break;
      case TextMatch::kContains:
        ok = message.find(text) != std::string::npos;
        wanted = "a message containing " + showString(text);
        break;
      case TextMatch::kRegex:
        ok = regexFinds(text, message);
        wanted = fmt::format("a message matching /{}/", text);
        break;
    }
    if (!ok) {
      failures.push_back({"message",
                          fmt::format("expected {}, got {}", wanted, showString(message)),
                          expect.message->match == TextMatch::kExact
                              ? lineDiff(text + "\n", message + "\n")
                              : std::string()});
    }
  }
  if (expect.reason) {
    const std::string reason = result.status ? result.status->reason : "";
    if (reason != *expect.reason) {
      failures.push_back({"reason",
                          fmt::format("expected {}, got {}", showString(*expect.reason),
                                      showString(reason)),
                          {}});
    }
  }
  if (expect.object) {
    if (!result.object) {
      failures.push_back(
          {"object", fmt::format("expected an object, got none ({})", statusSummary(result)), {}});
    } else {
      auto mismatches = partialMatchMismatches(*expect.object, *result.object);
      if (!mismatches.empty()) {
        std::string text = mismatches.front();
        if (mismatches.size() > 1) text += fmt::format(" (and {} more)", mismatches.size() - 1);
        failures.push_back({"object", text,
                            lineDiff(yamlOf(*expect.object),
                                     yamlOf(projectOnto(*expect.object, *result.object)))});
      }
    }
  }
  if (!expect.absent.empty()) {
    for (const auto& pointer : expect.absent) {
      if (!result.object) break;
      auto found = core::resolvePointer(*result.object, std::string_view(pointer));
      if (found.ok()) {
        failures.push_back({"absent",
                            fmt::format("{} exists: {}", pointer, show(**found)), {}});
      }
    }
    if (!result.object) {
      failures.push_back({"absent",
                          fmt::format("expected an object, got none ({})", statusSummary(result)),
                          {}});
    }
  }
  if (expect.calls) checkCalls(expect, result.calls, failures);
  for (const auto& [webhook, count] : expect.call_counts) {
    const auto actual = std::count_if(result.calls.begin(), result.calls.end(),
                                      [&](const CallRecord& r) { return r.webhook == webhook; });
    if (actual != count) {
      failures.push_back({fmt::format("callCounts[{}]", webhook),
                          fmt::format("expected {} calls of {}, got {}", count, webhook, actual),
                          {}});
    }
  }
  if (expect.annotations) {
    std::map<std::string, std::string> actual;
    for (const auto& [key, entry] : result.annotations.entries()) actual.emplace(key, entry.value);
    checkMap("annotations", *expect.annotations, expect.annotations_match, actual, failures);
  }
  if (expect.warnings && *expect.warnings != result.warnings) {
    std::string expected_text;
    for (const auto& w : *expect.warnings) expected_text += w + "\n";
    std::string actual_text;
    for (const auto& w : result.warnings) actual_text += w + "\n";
    failures.push_back({"warnings",
                        fmt::format("expected {} warnings, got {}", expect.warnings->size(),
                                    result.warnings.size()),
                        lineDiff(expected_text, actual_text)});
  }
  for (std::size_t i = 0; i < expect.metrics.size(); ++i) {
    const auto& metric = expect.metrics[i];
    // (An optional<double> copy here trips GCC 12's -Wmaybe-uninitialized.)
    const bool known = i < observed.metric_deltas.size() && observed.metric_deltas[i].has_value();
    const double actual = known ? observed.metric_deltas[i].value() : 0.0;
    std::string labels;
    for (const auto& [key, value] : metric.labels) {
      labels += fmt::format("{}{}={}", labels.empty() ? "" : ",", key, showString(value));
    }
    const std::string name = fmt::format("{}{{{}}}", metric.name, labels);
    if (!known) {
      failures.push_back({fmt::format("metrics[{}]", i),
                          fmt::format("no counter named {}", showString(metric.name)), {}});
      continue;
    }
    if (std::fabs(actual - metric.delta) > 1e-9) {
      failures.push_back({fmt::format("metrics[{}]", i),
                          fmt::format("{}: expected a change of {}, got {}", name,
                                      core::formatSampleValue(metric.delta),
                                      core::formatSampleValue(actual)),
                          {}});
    }
  }
  for (const auto& [name, stub] : expect.stubs) {
    auto it = observed.stubs.find(name);
    const StubObservation seen = it == observed.stubs.end() ? StubObservation{} : it->second;
    const std::string field = fmt::format("stub[{}]", name);
    if (stub.calls && *stub.calls != seen.calls) {
      failures.push_back({field, fmt::format("expected {} requests, got {}", *stub.calls,
                                             seen.calls), {}});
    }
    if (stub.last_timeout && *stub.last_timeout != seen.last_timeout) {
      failures.push_back({field, fmt::format("expected the last ?timeout= {}, got {}",
                                             showString(*stub.last_timeout),
                                             showString(seen.last_timeout)), {}});
    }
    if (stub.last_operation && *stub.last_operation != seen.last_operation) {
      failures.push_back({field, fmt::format("expected the last operation {}, got {}",
                                             showString(*stub.last_operation),
                                             showString(seen.last_operation)), {}});
    }
    if (stub.last_dry_run && stub.last_dry_run != seen.last_dry_run) {
      failures.push_back(
          {field,
           fmt::format("expected the last dryRun {}, got {}", *stub.last_dry_run,
                       seen.last_dry_run ? fmt::format("{}", *seen.last_dry_run) : "no request"),
           {}});
    }
  }
  if (expect.reinvoked && *expect.reinvoked != result.reinvoked) {
    failures.push_back({"reinvoked",
                        fmt::format("expected {}, got {}", *expect.reinvoked, result.reinvoked),
                        {}});
  }
  if (expect.audit_event) {
    const auto& wanted = *expect.audit_event;
    const auto& event = result.audit_event;
    const bool want_present = wanted.present.value_or(true);
    if (want_present != event.has_value()) {
      failures.push_back({"auditEvent",
                          want_present ? "expected an audit event, got none"
                                       : fmt::format("expected no audit event, got one at level {}",
                                                     audit::toString(event->level)),
                          {}});
    } else if (event) {
      if (wanted.level && *wanted.level != audit::toString(event->level)) {
        failures.push_back({"auditEvent.level",
                            fmt::format("expected {}, got {}", *wanted.level,
                                        audit::toString(event->level)),
                            {}});
      }
      if (wanted.annotations) {
        checkMap("auditEvent.annotations", *wanted.annotations, wanted.annotations_match,
                 event->annotations, failures);
      }
      if (wanted.request_object && *wanted.request_object != event->request_object.has_value()) {
        failures.push_back({"auditEvent.requestObject",
                            *wanted.request_object ? "expected requestObject, got none"
                                                   : "expected no requestObject, got one",
                            {}});
      }
      if (wanted.response_object &&
          *wanted.response_object != event->response_object.has_value()) {
        failures.push_back({"auditEvent.responseObject",
                            *wanted.response_object ? "expected responseObject, got none"
                                                    : "expected no responseObject, got one",
                            {}});
      }
    }
  }
  return failures;
}

}  // namespace harness::sim
