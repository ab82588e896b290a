#pragma once

// Mutation chains rebuilt from audit events: which mutating webhooks ran on a request, in which
// order (round, then index in the flattened webhook list), whether each changed the object, the
// patch each applied, and which failed open -- all read back from the admission annotations of
// docs/admission-chain.md §7.1. Used to replay a chain and to compare the simulator's chain with a
// real cluster's for the same object.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/audit/event.h"
#include "harness/audit/log.h"
#include "harness/core/result.h"

namespace harness::audit {

struct MutationStep {
  int round = 0;
  std::size_t index = 0;
  std::string configuration, webhook;
  bool mutated = false;
  // The patch annotation's "patch" (only recorded at level Request and above, and only when the
  // webhook returned a non-empty patch).
  std::optional<nlohmann::json> patch;
  bool failed_open = false;

  bool operator==(const MutationStep&) const = default;
};

struct MutationChain {
  std::string audit_id, verb, resource, namespace_name, name;
  std::string api_group, api_version, subresource;
  std::vector<MutationStep> steps;  // ordered by round then index
  std::optional<nlohmann::json> request_object;
  std::optional<nlohmann::json> response_object;
  // The other admission-related annotations, sorted by key: "<webhook>/<key>" annotations from
  // webhook responses and failed-open.validating.webhook.admission.k8s.io/... keys (the
  // authorization.k8s.io/* ones are left out).
  std::vector<std::pair<std::string, std::string>> webhook_annotations;
  // Annotation values that could not be read (bad JSON, unexpected shape), one line each.
  std::vector<std::string> problems;

  bool operator==(const MutationChain&) const = default;
};

// One chain per auditID, from the events at stage ResponseComplete, in log order (the first
// such event of an auditID wins). Events without any mutation/patch/failed-open annotation are
// skipped unless `keep_all`. The name is taken from objectRef, or from the responseObject's
// metadata.name when objectRef has none (generateName creates).
std::vector<MutationChain> reconstructChains(const std::vector<Event>& events,
                                             bool keep_all = false);

// The chain of one event, whatever its stage and annotations.
MutationChain chainOf(const Event& event);
// The same for an event read by parseLogLineObjectsApart, its objects moved into the chain.
MutationChain chainOf(EventObjectsApart read);

// reconstructChains one event at a time.
class ChainBuilder {
 public:
  explicit ChainBuilder(bool keep_all = false) : keep_all_(keep_all) {}
  // The event's chain when it is one reconstructChains keeps.
  std::optional<MutationChain> add(const Event& event);
  // Whether it is (then it counts as seen).
  bool keeps(const Event& event);

 private:
  bool keep_all_;
  std::set<std::string> seen_;  // the auditIDs of the chains returned
};

// Whether a log line can hold an event reconstructChains keeps, from its bytes alone: such an
// event is at stage "ResponseComplete" and, unless `keep_all`, has an annotation key containing
// "webhook.admission.k8s.io/", so the line holds these words, literally or with JSON escapes
// (\u0052, \/). False only when neither can be there and the line is one balanced JSON value, so
// that a truncated or garbled line still goes to the parser and is reported.
bool mayHoldChain(std::string_view line, bool keep_all);

// The chains of a log read from a stream, as reconstructChains would build them from readLog,
// holding one line at a time: lines for which mayHoldChain is false are not parsed (the parse is
// most of the cost of reading a log). For `apiserver-sim audit` on logs of any size.
class ChainReader {
 public:
  struct Entry {
    MutationChain chain;
    std::size_t line_number = 0;
    std::uint64_t offset = 0;  // of the event's line: LogLineReader reads it again from there
  };
  // `file_name` prefixes the error messages.
  ChainReader(std::istream& in, std::string file_name, bool keep_all);
  // The next chain, nullopt at the end. Each bad line is passed to `on_error` as
  // "FILE:LINE: message" and skipped.
  std::optional<Entry> next(const std::function<void(const std::string&)>& on_error);
  // The stream failed other than by reaching its end.
  [[nodiscard]] bool failed() const { return lines_.failed(); }

 private:
  LogLineReader lines_;
  std::string file_name_;
  bool keep_all_;
  ChainBuilder builder_;
};

// Pairs the chains of two logs (`apiserver-sim audit --compare`) holding only the keys of one
// log's chains and where they are, not the chains.
class ChainIndex {
 public:
  struct Position {
    std::size_t line_number = 0;
    std::uint64_t offset = 0;
  };
  void add(const MutationChain& chain, Position position);
  // Where the chain to compare `chain` with is: the first chain of the same object and verb;
  // else, for an object created with generateName (which gets another random name in each run),
  // the first chain of the same resource, namespace, verb and generateName.
  [[nodiscard]] std::optional<Position> partnerOf(const MutationChain& chain) const;

 private:
  // Keys: resource, namespace, name and verb; resource, namespace and name; resource, namespace,
  // verb and generateName.
  std::map<std::string, Position> by_name_;
  std::map<std::string, Position> by_object_;
  std::map<std::string, Position> by_generate_name_;
};

// The first chain for that object (resource "pods", namespace, name) and verb ("" = any), or
// nullptr.
const MutationChain* findChain(const std::vector<MutationChain>& chains, std::string_view resource,
                               std::string_view namespace_name, std::string_view name,
                               std::string_view verb = {});

struct ReplayOptions {
  // Start from this object instead of the chain's requestObject. kube-apiserver records the
  // request as received, before defaulting and the in-tree mutating plugins (ServiceAccount,
  // DefaultTolerationSeconds...) ran, so a real cluster's first webhook saw a different object.
  std::optional<nlohmann::json> base_object;
  // Also ignore members present only in the responseObject (defaulted by the server).
  bool ignore_fields_only_in_response = false;
  // More JSON pointers to ignore on both sides (e.g. "/spec/nodeName").
  std::vector<std::string> ignored_paths;
};

struct ReplayResult {
  nlohmann::json patched;  // the requestObject after every step's patch
  bool matches = false;
  // The first difference, in document order: its JSON pointer ("" when matches; "" for the
  // root) and what differs, e.g. `replayed "a", response "b"` or `missing in the response`.
  std::string first_difference;
  std::string detail;
};

// Applies the steps' patches in order (core applyPatch, the apiserver's JSON patch semantics)
// onto the requestObject and compares the result with the responseObject, ignoring server-set
// members: metadata.uid, resourceVersion, creationTimestamp, managedFields, generation, status,
// and metadata.name/namespace when the request did not carry them. Errors: no requestObject or
// responseObject (level below RequestResponse), a step that mutated without a recorded patch
// (level below Request) -- code kFailedPrecondition --, or a patch that does not apply ("round 0
// index 1 (webhook x): ..."; code kNotFound with the pointer as the field when the document lacks
// a path the patch needs, as applyPatch reports it).
core::Result<ReplayResult> replayChain(const MutationChain& chain,
                                       const ReplayOptions& options = {});

// Compares two chains for the same object (e.g. simulator vs real cluster): the same webhooks at
// the same round/index, the same configuration, mutated and failed-open flags, and the same
// patches (as JSON, operation order significant). One readable line per difference, empty when
// they agree, e.g.
//   round 0 index 1: webhook "b.example.com" missing in actual
//   round 0 index 0 (linkerd-proxy-injector.linkerd.io): mutated: expected true, got false
//   round 0 index 0 (linkerd-proxy-injector.linkerd.io): patch differs at operation 3: expected
//       {...}, got {...}
std::vector<std::string> compareChains(const MutationChain& expected, const MutationChain& actual);

// A chain for people, e.g.
//   create pods simple-app/simple-app-v1-7b9c6f5d4-82hcz (auditID 9f0c...)
//     round 0 index 0  linkerd-proxy-injector.linkerd.io (linkerd-proxy-injector-webhook-config): mutated, patch of 14 operations
//     replay: the patches turn the requestObject into the responseObject
// The replay line says why a replay was not possible (level too low...) or where it diverged.
std::string formatChain(const MutationChain& chain);

}  // namespace harness::audit
