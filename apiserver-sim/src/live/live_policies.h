#pragma once

// Internal to live explain: the admission policies of a live cluster (live_policies.cc).

#include <cstddef>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/sim/live_explain.h"

namespace harness::sim::live::detail {

// The labels of the snapshot's namespaces, for the matchers (NotFound for one it does not hold);
// refers to `cluster`, which must outlive it.
NamespaceLabelsLookup namespaceLabels(const ClusterSnapshot& cluster);

// Adds the cluster's policies, bindings and their params to `snapshot`.
core::Result<void> readPolicies(const ClusterGet& get, ClusterSnapshot& snapshot);

// One plugin's narration for the request: text (not indented) and one JSON entry per policy
// binding (or unbound policy) shown; `hidden` counts those the filters left out.
struct PolicyNarration {
  std::string text;
  nlohmann::json entries = nlohmann::json::array();
  std::size_t hidden = 0;
  bool denied = false;  // a binding's decision rejects the request
};
PolicyNarration explainPolicies(bool validating, const ClusterSnapshot& cluster,
                                const AdmissionAttributes& attributes,
                                const LiveExplainOptions& options);

}  // namespace harness::sim::live::detail
