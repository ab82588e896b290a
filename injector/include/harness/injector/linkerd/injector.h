#pragma once

// Linkerd's proxy-injector webhook handler as a pure function
// (controller/proxy-injector/webhook.go Inject; docs/linkerd-injector.md §0.2, §1, §4).
// Given the admitted object, its namespace, the values and the trust bundle, it decides what
// the real injector answers and records what it would log, count and emit as events.
// No files, sockets, clocks or informers: the caller supplies the namespace object and an
// owner lookup standing in for the informer cache.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <boost/container/flat_map.hpp>
#include <nlohmann/json.hpp>

#include "harness/injector/linkerd/log.h"
#include "harness/injector/linkerd/report.h"
#include "harness/injector/linkerd/values.h"
#include "harness/injector/text_keyed_cache.h"

namespace harness::injector::linkerd {

// Looks an object up by its Kind ("ReplicaSet", "Deployment", "Job", "CronJob", "Pod", ...),
// namespace and name; null when it is not in the cache.
using OwnerLookup = std::function<std::shared_ptr<const nlohmann::json>(
    std::string_view kind, std::string_view ns, std::string_view name)>;

class PatchCache;

struct AdmissionInput {
  nlohmann::json object;          // request.object
  std::string request_kind;       // request.kind.kind
  std::string request_namespace;  // request.namespace
  // The Namespace object from the informer cache; nullopt = not found (a handler error).
  // Only metadata.annotations is read.
  std::optional<nlohmann::json> namespace_object;
  std::string trust_anchors_pem;  // the trust bundle file's bytes
  std::string linkerd_namespace = "linkerd";
  std::string injector_version;  // version.Version, used in linkerd.io/created-by
  OwnerLookup owner_lookup;      // may be empty: nothing is found
  // false: Outcome::logs leaves out the debug lines (the whole patch as JSON text), for a caller
  // that never shows them; writing them is a large part of admitting a pod.
  bool debug_logs = true;
  // When given (and debug_logs is false), an injected pod's patch is taken from here or kept
  // here, as text: Outcome::patch_text is set instead of Outcome::patch. The cache must only
  // ever be used with the same Values, trust_anchors_pem and linkerd_namespace.
  PatchCache* patch_cache = nullptr;
};

enum class Decision {
  kInject,           // allowed, JSONPatch with the proxy
  kAnnotationPatch,  // allowed, JSONPatch adding config.linkerd.io/opaque-ports only
  kAllow,            // allowed, no patch
  kHandlerError,     // the handler failed: allowed=false with result.message
};

std::string_view decisionName(Decision decision);

struct Event {
  std::string type;    // "Normal"
  std::string reason;  // "Injected" or "InjectionSkipped"
  std::string message;
  nlohmann::json involved_object;  // {apiVersion, kind, name, namespace, uid, resourceVersion}
};

inline constexpr char kEventSourceComponent[] = "linkerd-proxy-injector";

// A metric's labels by name, in name order. The names are the program's own (string literals
// and the proxy annotations' label names, kept for the process), so only the values are
// strings; a flat map, built in order: a request builds two of about forty labels each.
using MetricLabels = boost::container::flat_map<std::string_view, std::string>;

// An injected pod's patch as core::dumpJson writes it, and the log lines written while building
// it (by GetOverriddenValues and the patch itself).
struct CachedPatch {
  std::string text;
  std::string base64;  // `text` as an answer's response.patch carries it
  std::vector<LogLine> logs;
};

// Injection patches kept by everything they are built from: the pod (template)'s metadata and
// spec, where the template is, the annotations and labels the webhook adds and the namespace's
// annotations. Replicas of a workload get the same patch, and building it (the proxy container
// and its thirty-odd env entries as JSON, then the text) was most of a request's CPU.
class PatchCache : public TextKeyedCache<CachedPatch> {
 public:
  static constexpr std::size_t kDefaultMaxEntries = 256;
  static constexpr std::size_t kDefaultMaxKeyBytes = std::size_t{4} * 1024 * 1024;
  explicit PatchCache(std::size_t max_entries = kDefaultMaxEntries,
                      std::size_t max_key_bytes = kDefaultMaxKeyBytes)
      : TextKeyedCache(max_entries, max_key_bytes) {}
};

// The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant()
// into a throw it cannot reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct Outcome {
  Decision decision = Decision::kAllow;
  std::optional<Report> report;  // absent when the object could not be parsed
  std::string owner_kind;        // lower-case resolved owner kind ("" for non-Pods)
  std::string owner_name;
  nlohmann::json patch = nullptr;  // the JSON Patch ops for kInject / kAnnotationPatch
  // Instead of `patch` for kInject with AdmissionInput::patch_cache: the ops as core::dumpJson
  // writes them (Outcome::toJson leaves it out).
  std::shared_ptr<const std::string> patch_text;
  std::shared_ptr<const std::string> patch_base64;  // with patch_text: its base64 (cached too)
  std::string error_message;       // for kHandlerError: result.message
  std::vector<Event> events;
  std::vector<LogLine> logs;
  // proxy_inject_admission_requests_total / _responses_total label sets; nullopt when the
  // counter is not incremented for this request.
  std::optional<MetricLabels> request_metric;
  std::optional<MetricLabels> response_metric;

  // A readable summary (used by golden tests): every field above as JSON.
  [[nodiscard]] nlohmann::json toJson() const;
};

// Handles one admission request the way the real webhook does.
Outcome admit(const Values& values, const AdmissionInput& input);

// GetOwnerKindAndName(retry=true) through `lookup`: (lower-case kind, name) of a Pod's owner.
std::pair<std::string, std::string> resolvePodOwner(const nlohmann::json& pod, std::string_view ns,
                                                    const OwnerLookup& lookup);

}  // namespace harness::injector::linkerd
