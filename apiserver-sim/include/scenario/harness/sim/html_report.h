#pragma once

// `apiserver-sim report`: one self-contained HTML file for a scenario run (no network needed to
// view it: inline CSS and SVG, one inline script that only marks the page rendered). Per step:
// a sequence diagram of the request through the admission phases (client, kube-apiserver's
// authentication/authorization and decoding, the mutating plugins and webhooks by round, object
// validation, the validating webhooks in parallel, storage and audit) with each call's latency
// drawn against its timeout, the per-webhook decision table (matched or skipped and the clause),
// the patches as diffs, failures highlighted. Built from the steps' explain JSON
// (explainStepJson), so the run must have RunOptions::explain set.

#include <string>

#include "harness/sim/report.h"

namespace harness::sim {

std::string renderHtmlReport(const RunReport& report, const std::string& title);

}  // namespace harness::sim
