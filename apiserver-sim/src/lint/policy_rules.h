#pragma once

// Internal to lint: the rules on admission policies and their bindings (policy_rules.cc).

#include <vector>

#include "harness/sim/lint.h"

namespace harness::sim::lint::detail {

// The policy rules' ids and summaries, in the order checkPolicies runs them.
const std::vector<RuleInfo>& policyRules();

// Adds the findings about input.policies (and their params in input.facts) to `out`.
void checkPolicies(const LintInput& input, const LintOptions& options, std::vector<Finding>& out);

}  // namespace harness::sim::lint::detail
