#pragma once

// The audit policy `apiserver-sim run|serve --audit-log` records a scenario without
// spec.auditPolicy with (a scenario's own policy always wins): every request at RequestResponse,
// the objects and patches that chains, replay and comparison need, without the RequestReceived
// stage (which repeats the request without its outcome). In the Policy format of policy.h.

#include <string_view>

namespace harness::audit {

inline constexpr std::string_view kDefaultLogPolicyText =
    "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n"
    "  - level: RequestResponse\n";

}  // namespace harness::audit
