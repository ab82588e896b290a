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
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/audit/event.h"
#include "harness/audit/log.h"
#include "harness/audit/outcome.h"
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
  // Instead of response_object when read by a ChainReader with Options::defer_response_object:
  // the responseObject as simdjson parsed it, which the replay (replayReport, replayChain,
  // admittedBase) compares with as with response_object, without building it as a tree.
  // responseObjectOf() gives it as a tree either way.
  std::shared_ptr<const DeferredObject> deferred_response;
  // The other admission-related annotations, sorted by key: "<webhook>/<key>" annotations from
  // webhook responses and failed-open.validating.webhook.admission.k8s.io/... keys (the
  // authorization.k8s.io/* ones are left out).
  std::vector<std::pair<std::string, std::string>> webhook_annotations;
  // Annotation values that could not be read (bad JSON, unexpected shape), one line each.
  std::vector<std::string> problems;
  // What the event says besides the chain: the level and stage it was recorded at (which decide
  // what can be replayed), who sent the request, when, and how it ended.
  Level level = Level::kNone;
  Stage stage = Stage::kResponseComplete;
  std::string user;
  std::optional<TimePoint> received, completed;  // requestReceivedTimestamp, stageTimestamp
  RequestOutcome outcome;

  bool operator==(const MutationChain&) const = default;
};

// One chain per auditID, from the events at stage ResponseComplete, in log order (the first
// such event of an auditID wins). Events without any mutation/patch/failed-open annotation are
// skipped unless `keep_all` or the request was a write (create, update, patch, delete,
// deletecollection) that did not succeed: rejections are what a reader looks for. The name is taken from objectRef, or from the responseObject's
// metadata.name when objectRef has none (generateName creates).
std::vector<MutationChain> reconstructChains(const std::vector<Event>& events,
                                             bool keep_all = false);

// The responseObject of a chain as a tree, read from deferred_response when it is deferred.
std::optional<nlohmann::json> responseObjectOf(const MutationChain& chain);

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
// "webhook.admission.k8s.io/" or a responseStatus "Failure", so the line holds these words, literally or with JSON escapes
// (\u0052, \/). False only when neither can be there and the line is one balanced JSON value, so
// that a truncated or garbled line still goes to the parser and is reported.
bool mayHoldChain(std::string_view line, bool keep_all);

// The chains of a log read from a stream, as reconstructChains would build them from readLog,
// holding one line at a time (a line may also be an EventList, the webhook backend's batch): lines for which mayHoldChain is false are not parsed (the parse is
// most of the cost of reading a log). For `apiserver-sim audit` on logs of any size.
class ChainReader {
 public:
  struct Entry {
    MutationChain chain;
    std::size_t line_number = 0;
    std::uint64_t offset = 0;  // of the event's line: LogLineReader reads it again from there
    // A line holding an EventList (the webhook backend's batch, saved as one line): the event's
    // index in its items.
    std::size_t item = 0;
  };
  struct Options {
    bool keep_all = false;
    // Objects reduced to their metadata (parseLogLineMetadataOnly): enough for pairingKey and
    // the filters, for an index of a log's requests (`audit compare`).
    bool metadata_only = false;
    // With it, a line is first peeked at (peekEvent, simdjson) and skipped unparsed when it is
    // not at stage ResponseComplete or `wanted` refuses it (reads, which compare does not index).
    std::function<bool(const EventPeek&)> wanted;
    // The responseObject of a chain left as simdjson parsed it (MutationChain::deferred_response):
    // for readers that only replay and print chains (`audit chains`).
    bool defer_response_object = false;
  };
  // `file_name` prefixes the error messages.
  ChainReader(std::istream& in, std::string file_name, bool keep_all);
  ChainReader(std::istream& in, std::string file_name, Options options);
  // The next chain, nullopt at the end. Each bad line is passed to `on_error` as
  // "FILE:LINE: message" and skipped.
  std::optional<Entry> next(const std::function<void(const std::string&)>& on_error);
  // The stream failed other than by reaching its end.
  [[nodiscard]] bool failed() const { return lines_.failed(); }
  // A last line without "\n" that is not a whole event is not an error (kube-apiserver was
  // stopped while writing it, or is writing it now): it is skipped and said here,
  // "FILE:LINE: last line incomplete (N bytes, no newline), skipped".
  [[nodiscard]] const std::optional<std::string>& incompleteLastLine() const {
    return incomplete_last_line_;
  }

 private:
  LogLineReader lines_;
  std::string file_name_;
  bool keep_all_;
  Options options_;
  ChainBuilder builder_;
  std::optional<std::string> incomplete_last_line_;
  std::vector<Entry> pending_;  // the kept events of an EventList line, last one first
};

// How `audit compare` pairs the requests of two logs. Each mode gives every chain a key; the
// n-th chain of a key in one log is paired with the n-th chain of the same key in the other.
//   kAuto:   an object the client named: resource, namespace, verb and name; an object named by
//            the server (generateName: each run gets other random names): resource, namespace,
//            verb and its controller owner (kind and name, the pod-template-hash /
//            controller-revision-hash suffix removed: it differs between clusters), else its
//            generateName (the same suffix removed);
//   kName:   resource, namespace, verb and name, as recorded;
//   kLabels: resource, namespace, verb and the object's labels (without the hash labels);
//   kOrder:  resource, namespace and verb only: the n-th Pod create of a namespace with the n-th.
enum class PairBy { kAuto, kName, kLabels, kOrder };
// "auto", "name", "labels", "order".
std::optional<PairBy> parsePairBy(std::string_view text);
std::string_view toString(PairBy by);

// The key of `chain` under `by`, readable: fields separated by " ", e.g.
// `create pods simple-app owner ReplicaSet/simple-app-v1`.
std::string pairingKey(const MutationChain& chain, PairBy by);

// Pairs the chains of two logs (`apiserver-sim audit compare`) holding only the keys of one
// log's chains and where they are, not the chains: memory grows with the number of requests of
// the indexed log, never with its bytes.
class ChainIndex {
 public:
  struct Position {
    std::size_t line_number = 0;
    std::uint64_t offset = 0;
    std::size_t file = 0;  // which of the indexed log's files (rotated logs)
    std::size_t item = 0;  // in an EventList line
  };
  explicit ChainIndex(PairBy by = PairBy::kAuto) : by_(by) {}
  // `reported`: whether unpaired() lists it when nothing takes it (false for a request indexed
  // only so that a chain of the other log finds its partner, e.g. one no webhook touched here).
  void add(const MutationChain& chain, Position position, bool reported = true);
  // The next chain of the same key not paired yet, in log order (it counts as paired then).
  std::optional<Position> take(const MutationChain& chain);
  // The chains never taken, in log order, with their keys.
  [[nodiscard]] std::vector<std::pair<Position, std::string>> unpaired() const;
  [[nodiscard]] std::size_t size() const { return size_; }

 private:
  struct Slot {
    std::vector<std::pair<Position, bool>> positions;  // with `reported`
    std::size_t taken = 0;
  };
  PairBy by_;
  std::map<std::string, Slot> slots_;
  std::size_t size_ = 0;
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

// The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant()
// into a throw it cannot reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
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

// The object the first mutating webhook saw, as far as the event tells it: kube-apiserver records
// the requestObject as the client sent it, before defaulting and the in-tree mutating plugins
// (the ServiceAccount plugin's kube-api-access volume and mounts, DefaultTolerationSeconds'
// tolerations, Priority...), so a webhook's patch may need members the requestObject lacks
// ("add /spec/volumes/-"). This is the requestObject completed with the responseObject's members
// that no webhook patch wrote: a member the requestObject lacks is taken from the response
// unless a patch operation adds it; in arrays of named elements (containers, volumes,
// volumeMounts...), response elements are taken unless a patch added an element of that name to
// that array. `filled` lists what was taken, as JSON pointers into the result, each with what it
// is, e.g. `/spec/volumes/0 (volume "kube-api-access-7xk2p", ServiceAccount plugin)`; the
// members the server sets on every object (uid, resourceVersion, creationTimestamp,
// managedFields, generation, status) are neither taken nor listed.
// (NOLINT: the implicit move of nlohmann::json is noexcept, as for ReplayResult.)
// NOLINTNEXTLINE(bugprone-exception-escape)
struct AdmittedBase {
  nlohmann::json object;
  std::vector<std::string> filled;
};
AdmittedBase admittedBase(const MutationChain& chain);

// What replaying a chain gives, from the stage and level its event was recorded at:
//   level None/Metadata: which webhooks ran and whether they mutated, no objects or patches;
//   level Request: the requestObject and the patches, no responseObject to check against;
//   level RequestResponse: everything, replayed onto the requestObject and, when a patch needs
//     what admission added before the webhooks, onto admittedBase();
// and nothing is replayed for a request that did not succeed (its responseObject is a Status,
// nothing was stored) or whose requestObject is not the object (patch: the client's patch;
// delete: DeleteOptions).
struct ReplayReport {
  enum class Kind {
    kMatches,         // the patches turn the (completed) requestObject into the responseObject
    kDiffers,         // they apply, but the result differs from the responseObject
    kAppliedOnly,     // they apply; no responseObject to check against (level Request)
    kNotReplayable,   // the log does not hold what a replay needs (see `lines`)
    kPatchFails,      // a recorded patch does not apply even onto admittedBase()
    kNothingToReplay, // no mutating webhook changed the object
  };
  Kind kind = Kind::kNothingToReplay;
  // Readable lines, the first one the verdict, e.g. "replay: not possible at level Metadata:
  // the event records neither the objects nor the patches".
  std::vector<std::string> lines;
};
ReplayReport replayReport(const MutationChain& chain);

// Compares two chains for the same object (e.g. simulator vs real cluster): the same webhooks at
// the same round/index, the same configuration, mutated and failed-open flags, and the same
// patches (as JSON, operation order significant). One readable line per difference, empty when
// they agree, e.g.
//   round 0 index 1: webhook "b.example.com" missing in actual
//   round 0 index 0 (linkerd-proxy-injector.linkerd.io): mutated: expected true, got false
//   round 0 index 0 (linkerd-proxy-injector.linkerd.io): patch differs at operation 3: expected
//       {...}, got {...}
// Members only one side recorded (one log's level is lower: no patches at Metadata, no objects
// below Request; a request that got no ResponseComplete event has no outcome) are not compared:
// one line each says what was left out, e.g.
//   patches not compared: recorded at level Metadata in actual
// The outcomes (admitted, denied by which webhook, the code) are compared when both recorded one.
std::vector<std::string> compareChains(const MutationChain& expected, const MutationChain& actual);
// The lines of compareChains that are differences (not the "not compared" notes).
bool isDifference(std::string_view compare_line);

// A chain for people, e.g.
//   create pods simple-app/simple-app-v1-7b9c6f5d4-82hcz (auditID 9f0c...)
//     round 0 index 0  linkerd-proxy-injector.linkerd.io (linkerd-proxy-injector-webhook-config): mutated, patch of 14 operations
//     replay: the patches turn the requestObject into the responseObject
// The replay line says why a replay was not possible (level too low...) or where it diverged.
std::string formatChain(const MutationChain& chain);

}  // namespace harness::audit
