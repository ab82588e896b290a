#pragma once

// `apiserver-sim run --explain` / `apiserver-sim explain`: what happened to one request and why,
// from the chain's records (admission_chain.h): for every webhook and round whether it matched
// and which clause decided (MatchResult::explanation, skipped_by), its round and index, the call
// (URL, review version, latency against its timeout), the failurePolicy outcome, the patch as a
// before/after diff of the paths it changed, the in-tree plugins that changed the object, the
// audit annotations and warnings, and the response.

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/sim/admission_chain.h"
#include "harness/sim/scenario.h"

namespace harness::sim {

// How much to say, and about what.
struct ExplainOptions {
  // Every clause of every webhook and the audit annotations; the default (compact) gives a
  // skipped webhook one line with the clause that decided, and a called one its call and patch.
  bool verbose = false;
  // Patch lines in colour (ANSI: removed red, added green); the command sets it for a terminal
  // unless NO_COLOR or --no-color.
  bool color = false;
  // Go regexp (RE2) searched in "<configuration>/<webhook>": only those webhooks ("" = all).
  std::string webhook_filter;
  // Only the webhooks that were called (or rejected the request without a call).
  bool only_called = false;
};

// The whole explanation of one step, several indented lines ending in "\n".
std::string explainStep(const Step& step, const AdmissionResult& result,
                        const ExplainOptions& options = {});

// The same content as a JSON document: {step, request, result, plugins, reinvocation,
// webhooks: [{kind, configuration, webhook, round, index, decision, skipped_by, deciding,
// clauses, call: {...}, patch: [{op, path, from, before, after}]}], annotations, warnings}.
// `options.verbose` and `options.color` do not apply (everything is there, uncoloured).
nlohmann::json explainStepJson(const Step& step, const AdmissionResult& result,
                               const ExplainOptions& options = {});

// One webhook considered in one round: the match decision, and the call when there was one
// (`call` may be null). Compact unless options.verbose.
std::string explainWebhook(const MatchRecord& match, const CallRecord* call,
                           const ExplainOptions& options = {});

// The clause lines that decided a skip (MatchResult::skipped_by): the selector's line, the
// rules' lines, the matchConditions' lines; every line for a call or an error.
std::vector<std::string> decidingClauses(const MatchResult& match);

// The webhooks of round 0 whose patch changed the object: what made round 1 run.
std::vector<std::string> reinvocationCauses(const AdmissionResult& result);

// A patch as before/after lines per operation, e.g.
//   add /metadata/labels/injected
//     + "true"
//   replace /spec/containers/0/image
//     - "nginx:1.25"
//     + "nginx:1.27"
// `before` is the object the patch was applied to; operations whose effect cannot be computed
// (the patch does not apply) are listed without values.
// With `color`, "- " lines are red and "+ " lines green (ANSI SGR 31/32).
std::string explainPatch(const nlohmann::json& before, const nlohmann::json& patch,
                         bool color = false);

// The patch's operations with the value before and after each (null when absent), for JSON.
nlohmann::json patchDiff(const nlohmann::json& before, const nlohmann::json& patch);

// Every line of `text` prefixed (each ends in "\n").
std::string indentText(const std::string& text, std::string_view prefix);

// Go's time.Duration.String() rounded for humans: "850µs", "12.3ms", "1.5s".
std::string formatDuration(std::chrono::nanoseconds duration);

}  // namespace harness::sim
