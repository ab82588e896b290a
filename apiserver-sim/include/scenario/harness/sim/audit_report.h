#pragma once

// `apiserver-sim report --audit-log LOG...`: the requests of kube-apiserver audit logs (the
// simulator's, or a real cluster's: JSON lines, rotated, gzip) drawn as the HTML report draws a
// scenario run (html_report.h). Each request with an admission chain is one step: its mutating
// webhooks by round and index as the audit annotations recorded them (mutated or not, the patch
// at level Request and above, failed open), the webhook, policy or plugin that denied it, and
// its outcome; requests that were not admitted are the failures. An audit log does not record
// the webhooks that were skipped, the validating webhooks that allowed, or latencies: the report
// says so instead of inventing them. The chains are the audit library's (audit/chain.h).

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "harness/audit/commands.h"
#include "harness/core/result.h"
#include "harness/sim/report.h"

namespace harness::sim {

// One ScenarioResult per log (in the order given), one step per request chain kept by `filter`
// (audit::ChainReader: rejections and requests with webhook annotations, every request with
// `keep_all`). Bad lines are passed to `on_bad_line` ("FILE:LINE: message") and skipped.
// Errors: a log that cannot be opened or decompressed.
core::Result<RunReport> reportFromAuditLogs(
    const std::vector<std::filesystem::path>& logs, const audit::ChainFilter& filter,
    bool keep_all, const std::function<void(const std::string&)>& on_bad_line);

// The explain JSON html_report.h draws, for one audit chain.
nlohmann::json explainJsonFromAuditChain(const audit::MutationChain& chain);

}  // namespace harness::sim
