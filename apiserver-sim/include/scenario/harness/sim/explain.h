#pragma once

// `apiserver-sim run --explain` / `apiserver-sim explain`: what happened to one request and why,
// from the chain's records (admission_chain.h): for every webhook and round whether it matched
// and which clause decided (MatchResult::explanation, skipped_by), its round and index, the call
// (URL, review version, latency against its timeout), the failurePolicy outcome, the patch as a
// before/after diff of the paths it changed, the in-tree plugins that changed the object, the
// audit annotations and warnings, and the response.

#include <chrono>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/sim/admission_chain.h"
#include "harness/sim/scenario.h"

namespace harness::sim {

// The whole explanation of one step, several indented lines ending in "\n".
std::string explainStep(const Step& step, const AdmissionResult& result);

// One webhook considered in one round: the match decision, and the call when there was one
// (`call` may be null).
std::string explainWebhook(const MatchRecord& match, const CallRecord* call);

// A patch as before/after lines per operation, e.g.
//   add /metadata/labels/injected
//     + "true"
//   replace /spec/containers/0/image
//     - "nginx:1.25"
//     + "nginx:1.27"
// `before` is the object the patch was applied to; operations whose effect cannot be computed
// (the patch does not apply) are listed without values.
std::string explainPatch(const nlohmann::json& before, const nlohmann::json& patch);

// Go's time.Duration.String() rounded for humans: "850µs", "12.3ms", "1.5s".
std::string formatDuration(std::chrono::nanoseconds duration);

}  // namespace harness::sim
