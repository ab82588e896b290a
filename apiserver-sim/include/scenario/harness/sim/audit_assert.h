#pragma once

// `apiserver-sim audit assert LOG... EXPECTATIONS`: checks an audit log (the simulator's or any
// real cluster's, e.g. in CI) against expectations in the scenario expectation language
// (scenario.h LogExpectation). The logs are streamed: memory holds one line and, per
// expectation, its count and failures.

#include <ostream>
#include <string>
#include <vector>

#include "harness/sim/scenario_runner.h"

namespace harness::sim {

// What checkExpectations sees of a request recorded in an audit event: allowed and code from
// responseStatus, the Status of a request that failed, the responseObject of one that succeeded,
// and the event's admission annotations (authorization.k8s.io/* and apiserver.latency.k8s.io/*,
// written by the server's filters, left out).
AdmissionResult admissionResultOf(const audit::Event& event,
                                  const std::optional<nlohmann::json>& response_object);

// Exit status: 0 every expectation holds, 1 one does not (each failure printed as
// "FAIL <name>: <request>: <field>: <message>" with its diff), 2 bad input.
int auditAssertCommand(const std::vector<std::string>& logs, const std::string& expectations,
                       std::ostream& out, std::ostream& err);

}  // namespace harness::sim
