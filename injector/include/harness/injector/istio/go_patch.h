#pragma once

// The JSON patch Istio's webhook returns: webhook.go createPatch runs gomodules.xyz/jsonpatch/v2
// CreatePatch over json.Marshal of the original and of the injected corev1.Pod. Both halves are
// reproduced here: the Go-typed JSON of a pod (goTypedPod) and the diff (createPatchGomodules).
// See docs/istio-injector.md §3 step 7.

#include <nlohmann/json.hpp>

#include "harness/core/json_patch.h"

namespace harness::injector::istio {

// gomodules.xyz/jsonpatch/v2 CreatePatch(a, b) on already decoded documents:
//   - objects: every member of `b` first (missing in `a`: `add`; present: recursive), then a
//     `remove` for every member of `a` missing in `b`;
//   - arrays: `remove` of the surplus tail of `a` from the last index down, `add` of the surplus
//     tail of `b` in index order, then element-wise recursion over the common prefix (no LCS:
//     an element inserted at the front shows up as changes to every later index);
//   - scalars: `replace` when the value differs; all numbers compare as float64, like Go's
//     interface{} decoding; a change of JSON type is a `replace` of the whole value;
//   - null against null is no change.
// Go ranges over maps in random order, so the relative order of sibling object members varies
// from run to run in Istio; here they come in sorted key order, which makes the output stable.
// The order of array operations and of removals after additions is Go's.
core::JsonPatch createPatchGomodules(const nlohmann::json& original, const nlohmann::json& modified);

// json.Marshal of a corev1.Pod decoded from `pod`, as far as it differs from the decoded JSON:
// the fields without `omitempty` appear even when unset (metadata.creationTimestamp: null,
// spec.containers: null, status: {}, every container's resources: {}, ports' containerPort,
// env and volume names, probe handler ports, grpc.service: null, projected sources, ...). The
// patch is computed between two such documents, and kube-apiserver applies it to its own
// encoding of the object, which has the same shape. Unknown fields are kept.
nlohmann::json goTypedPod(const nlohmann::json& pod);

// sigs.k8s.io/yaml.Marshal of the typed object istioctl kube-inject decoded (IntoObject): the
// pod template's spec typed as in goTypedPod, the template's `metadata: {}` when unset, the
// Deployment's `strategy: {}`, the DaemonSet's and StatefulSet's `updateStrategy: {}`, and
// `status` with the members its kind's Status has without omitempty (`{}` for Pod, Deployment,
// Job, CronJob; `replicas: 0` for ReplicaSet and ReplicationController, ...). Other kinds come
// back unchanged. Every ObjectMeta's unset creationTimestamp is written as `null` when
// `creation_timestamp_null` (Istio built with apimachinery before 0.34) and left out otherwise
// (an input's `creationTimestamp: null` is dropped).
nlohmann::json goTypedWorkload(const nlohmann::json& object, bool creation_timestamp_null);

}  // namespace harness::injector::istio
