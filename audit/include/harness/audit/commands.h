#pragma once

// The `apiserver-sim audit ...` commands, as functions writing to streams (the CLI in
// apiserver-sim/src/main.cc only parses options). Every command streams its logs: memory holds
// one line of each log and, for `compare`, the keys and byte offsets of one log's requests.
// Logs are files as kube-apiserver leaves them: JSON lines (or EventList lines, the webhook
// backend's batches), gzip-compressed backups, several files (rotated), a last line cut short
// (skipped with a note).
//
// Rotated files are read in the order kube-apiserver wrote them (orderRotatedLogs), whatever the
// order they are given in.
//
// Exit status: 0 done (compare: nothing differs; assert: every expectation holds), 1 differences
// or failed expectations (compare: also nothing paired), 2 bad input: an unreadable file, a line
// that is not an audit event ("FILE:LINE: field: problem"), bad gzip data, a bad policy.

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "harness/audit/chain.h"
#include "harness/audit/outcome.h"

namespace harness::audit {

// Which requests a command looks at. Empty fields match everything.
struct ChainFilter {
  std::string namespace_name, resource, user, verb;
  std::string webhook;  // a mutating step, the webhook that denied, or one that failed open
  std::optional<OutcomeKind> outcome;

  [[nodiscard]] bool matches(const MutationChain& chain) const;
  [[nodiscard]] bool empty() const;
};

struct ChainsOptions {
  std::vector<std::string> logs;
  ChainFilter filter;
  bool all = false;              // also requests no admission annotation marks
  std::string output = "text";   // text or json (one JSON document: {"chains": [...], ...})
};
int chainsCommand(const ChainsOptions& options, std::ostream& out, std::ostream& err);

struct CompareOptions {
  std::vector<std::string> expected;  // e.g. the simulator's log
  std::vector<std::string> actual;    // e.g. a real cluster's
  PairBy pair_by = PairBy::kAuto;
  ChainFilter filter;
  bool all = false;
  std::string output = "text";
  // Index `actual` by parsing each of its events whole, as before the fast path (every line
  // peeked at, reads skipped unbuilt, only the objects' metadata built): the same output, for
  // the tests that check so and for measuring (HARNESS_AUDIT_FULL_PARSE=1).
  bool full_parse = false;
};
int compareCommand(const CompareOptions& options, std::ostream& out, std::ostream& err);

// `audit policy-check POLICY REQUEST`: the level the policy gives each request of REQUEST (a
// YAML/JSON document of request attributes {user, groups, verb, apiGroup, apiVersion, resource,
// subresource, namespace, name, path}, or audit events: one document or JSON lines) and the rule
// that decided (first match, k8s.io/apiserver pkg/audit/policy/checker.go). For events, also
// whether the level they were recorded at agrees.
int policyCheckCommand(const std::string& policy_path, const std::string& request_path,
                       std::ostream& out, std::ostream& err);

// `audit timeline LOG... AUDIT_ID`: the request's timeline (timeline.h).
int timelineCommand(const std::vector<std::string>& logs, const std::string& audit_id,
                    const std::string& output, std::ostream& out, std::ostream& err);

// The chain as JSON (`chains -o json`): what formatChain prints, without the objects.
nlohmann::json chainJson(const MutationChain& chain);

}  // namespace harness::audit
