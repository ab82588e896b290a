#pragma once

// Strategic merge patch, applied the way the server side of Kubernetes applies it
// (k8s.io/apimachinery pkg/util/strategicpatch patch.go, StrategicMergePatch /
// StrategicMergeMapPatch with MergeParallelList and IgnoreUnmatchedNulls), which is also what
// Istio's injector uses to overlay each rendered sidecar template on the pod
// (docs/istio-injector.md §3 step 3, §4.2).
//
// What a patch can say:
//   - maps are merged recursively; `"key": null` deletes the key;
//   - lists whose field has patchStrategy "merge" are merged: lists of objects by their merge key
//     (containers by name, ports by containerPort, ...), lists of scalars as a set union; every
//     other list is replaced wholesale;
//   - `"$patch": "replace"` in a map replaces the map instead of merging it, `"$patch": "delete"`
//     empties it; a list element `{"<mergeKey>": k, "$patch": "delete"}` deletes the element(s)
//     with that key, and `{"$patch": "replace"}` in a merged list replaces the whole list;
//   - `"$deleteFromPrimitiveList/<field>": [...]` removes scalars from a merged scalar list;
//   - `"$setElementOrder/<field>": [...]` fixes the order of a merged list;
//   - `"$retainKeys": [...]` drops every key of the original map not listed.
// Ordering of a merged list (mergeSlice / normalizeElementOrder): patch items keep the patch's (or
// $setElementOrder's) order, server-only items keep the original's order, and the two are
// interleaved by walking both: a server-only item goes first only when both it and the next patch
// item exist in the original and it came earlier there. So new items from a patch come before
// all server-only items that follow them (Istio: injected volumes before the pod's own).
//
// Faithful quirks worth knowing: a map holding "$patch" is dropped when it has nothing to merge
// into; new list elements are appended as sent (their nulls and directives are kept); a
// "$setElementOrder/..." or "$retainKeys" key inside a map that is added wholesale stays in the
// result (the apiserver's typed decoding would drop it, this library does not decode into types).
//
// Upstream also depends on Go slice aliasing: with "$setElementOrder", the server order it uses is
// the original list as mergeSlice left it after deleting and appending in place (so it depends on
// the capacity Go's JSON decoder gave the slice); this is emulated, and upstream's own fixtures
// that depend on it pass.
//
// Deviations from upstream, all deterministic where Go is not: patch keys are processed in sorted
// order (Go ranges over a map, so e.g. "$deleteFromPrimitiveList/x" vs "x" order is random there);
// a field unknown to the schema behaves like a field without a patch strategy where upstream
// (with a typed struct) would fail with `unable to find api field in struct ...` — which it only
// can when both documents hold a map or list under a key the type does not have; the in-place
// deduplication of a merged scalar list that already held duplicates (which can reorder the
// original as Go sees it) is not emulated; where upstream panics (e.g. a list starting with null,
// merge keys that are maps) we return an error saying so.

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::core {

class StrategicSchema;

// The patch metadata of one field: the struct tags patchStrategy/patchMergeKey of its Go field.
struct StrategicFieldMeta {
  std::vector<std::string> patch_strategies;  // e.g. {"merge", "retainKeys"}; empty: none
  std::string patch_merge_key;                // e.g. "name"; empty for scalar lists
  // The type of the value; for a list, of its elements. nullptr: unknown (no metadata below).
  const StrategicSchema* schema = nullptr;
};

// Patch metadata for one Go type, as StrategicMergePatch reads it from struct tags.
class StrategicSchema {
 public:
  enum class Kind {
    kStruct,          // known fields carry metadata; unknown ones behave as fields without it
    kAny,             // a map or an unknown type: no metadata anywhere below
    kJsonMergePatch,  // not strategic: the document is merged as an RFC 7386 JSON merge patch
  };

  StrategicSchema(std::string name, Kind kind) : name_(std::move(name)), kind_(kind) {}
  StrategicSchema(const StrategicSchema&) = delete;
  StrategicSchema& operator=(const StrategicSchema&) = delete;

  void addField(std::string json_name, StrategicFieldMeta meta);

  // The Go type name (Pod, Container, string, ...).
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] Kind kind() const { return kind_; }
  // reflect.Kind of the Go type as upstream prints it in `cannot merge lists without merge key
  // for <kind>`: "struct" for structs, else the name.
  [[nodiscard]] std::string goKind() const { return kind_ == Kind::kStruct ? "struct" : name_; }
  // The metadata of `json_name`; fields without metadata (and unknown ones) get an empty one.
  [[nodiscard]] const StrategicFieldMeta& lookup(std::string_view json_name) const;
  [[nodiscard]] const std::map<std::string, StrategicFieldMeta, std::less<>>& fields() const {
    return fields_;
  }

 private:
  std::string name_;
  Kind kind_;
  std::map<std::string, StrategicFieldMeta, std::less<>> fields_;
};

// core/v1 Pod: metadata (ObjectMeta), spec (PodSpec), status (PodStatus), with the merge keys of
// k8s.io/api core/v1 types.go and apimachinery meta/v1 ObjectMeta:
//   metadata.ownerReferences by uid, metadata.finalizers (scalar set),
//   spec.containers / initContainers / ephemeralContainers by name, and in each container
//   ports by containerPort (not by containerPort+protocol: two ports that differ only by protocol
//   merge into one), env by name, volumeMounts by mountPath, volumeDevices by devicePath;
//   spec.volumes by name (merge,retainKeys), imagePullSecrets by name, hostAliases by ip,
//   topologySpreadConstraints by topologyKey, schedulingGates by name, resourceClaims by name
//   (merge,retainKeys); status.conditions by type, podIPs and hostIPs by ip,
//   resourceClaimStatuses by name. Everything else (tolerations, args, command, envFrom,
//   resources.claims, readinessGates, ...) is replaced.
const StrategicSchema& podSchema();

// Pod, PodTemplate, and the workloads embedding a PodTemplateSpec (Deployment, StatefulSet,
// DaemonSet, ReplicaSet, ReplicationController, Job, and CronJob via spec.jobTemplate), with
// status.conditions merged by type and Deployment spec.strategy tagged retainKeys. Any other kind
// gets jsonMergePatchSchema(): upstream refuses strategic merge for types it has no struct for
// (custom resources: "strategic merge patch format is not supported"), and clients such as kubectl
// fall back to a JSON merge patch for them.
const StrategicSchema& schemaForKind(std::string_view kind);

// The schema that makes strategicMerge behave as jsonMergePatch.
const StrategicSchema& jsonMergePatchSchema();

struct StrategicMergeOptions {
  // Prefix error messages with the JSON pointer (into the patch) where merging failed, e.g.
  // `/spec/containers/1: map: map[image:x] does not contain declared merge key: name`. Set it to
  // false for upstream's bare text (which Istio wraps as "strategic merge: <err>").
  bool name_path_in_errors = true;
};

// Applies `patch` to `original` (both objects; null counts as {}). Errors carry upstream's texts,
// e.g. `map: map[image:x] does not contain declared merge key: name`,
// `unknown patch type: foo in map: map[$patch:foo]`, `invalid JSON document`.
Result<nlohmann::json> strategicMerge(const nlohmann::json& original, const nlohmann::json& patch,
                                      const StrategicSchema& schema,
                                      const StrategicMergeOptions& options = {});

// RFC 7386 JSON merge patch with evanphx/json-patch v4 MergePatch's details (merge.go): null
// deletes; a value added where there was nothing (or null) has its null members pruned, also
// inside objects in arrays (null array elements stay); a non-object patch replaces a non-object
// document. Errors: `Invalid JSON Document` (null document; code kInternal), `Invalid JSON Patch`
// (null or scalar patch; code kInvalid, the only one).
Result<nlohmann::json> jsonMergePatch(const nlohmann::json& original, const nlohmann::json& patch);

}  // namespace harness::core
