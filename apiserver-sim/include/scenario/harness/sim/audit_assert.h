#pragma once

// `apiserver-sim audit assert LOG... EXPECTATIONS`: checks an audit log (the simulator's or any
// real cluster's, e.g. in CI) against expectations in the scenario expectation language
// (scenario.h LogExpectation). The logs are streamed: memory holds one line and, per
// expectation, its count and failures.

#include <ostream>
#include <string>
#include <vector>

#include <filesystem>
#include <optional>
#include <string_view>

#include "harness/sim/scenario.h"
#include "harness/sim/scenario_runner.h"

namespace harness::sim {

// --- expectations on an audit log (`apiserver-sim audit assert`) ---

inline constexpr std::string_view kAuditExpectationsKind = "AuditExpectations";

// Which requests of a log an expectation is about; empty fields match every request.
struct LogRequestSelector {
  std::string verb;
  std::string resource;  // "pods", "deployments.apps"
  std::string namespace_name, name, user;
  std::string generate_name;  // the requestObject's metadata.generateName
};

// One expectation: every request `match` selects must meet `expect` (the scenario expectation
// language, restricted to what an audit event records: allowed, code, message, reason, object,
// absent, annotations); `count`, when given, is how many requests must be selected (else at least
// one).
struct LogExpectation {
  std::string name;
  SourceLocation location;
  LogRequestSelector match;
  std::optional<std::size_t> count;
  Expectation expect;
};

// Parses an AuditExpectations document:
//   apiVersion: apiserver-sim.harness.dev/v1alpha1
//   kind: AuditExpectations
//   expectations:
//     - name: the Pod is injected
//       match: {verb: create, resource: pods, namespace: simple-app, generateName: web-}
//       count: 1
//       expect: {allowed: true, code: 201, object: {...}, annotations: {...}}
// Errors as the scenario loader words them (file:line:column: field: problem); the fields an
// audit log cannot show (calls, callCounts, warnings, metrics, stub, reinvoked, auditEvent) are
// refused with that reason.
core::Result<std::vector<LogExpectation>> parseLogExpectations(std::string_view text,
                                                               const std::filesystem::path& path);


// What checkExpectations sees of a request recorded in an audit event: allowed and code from
// responseStatus, the Status of a request that failed, the responseObject of one that succeeded,
// and the event's admission annotations (authorization.k8s.io/* and apiserver.latency.k8s.io/*,
// written by the server's filters, left out).
AdmissionResult admissionResultOf(const audit::Event& event,
                                  const std::optional<nlohmann::json>& response_object);

// Exit status: 0 every expectation holds, 1 one does not (each failure printed as
// "FAIL <name>: <request>: <field>: <message>" with its diff), 2 bad input. Events no expectation
// selects are skipped unbuilt (audit::peekEvent); `full_parse` parses each whole instead, as
// before (the same result; for the tests that check so and for measuring).
int auditAssertCommand(const std::vector<std::string>& logs, const std::string& expectations,
                       std::ostream& out, std::ostream& err, bool full_parse = false);

}  // namespace harness::sim
