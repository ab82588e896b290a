#pragma once

// Scheme defaulting and the Go JSON view of the built-in kinds.
//
// kube-apiserver defaults every object it decodes (request bodies, and again after every mutating
// webhook patch: docs/admission-chain.md §5 step 11) with the generated SetObjectDefaults_<Kind>
// functions of the object's group/version. applyDefaults reproduces them for the kinds a sidecar
// injector meets (pkg/apis/core/v1/defaults.go, pkg/apis/apps/v1/defaults.go,
// pkg/apis/batch/v1/defaults.go and the zz_generated.defaults.go files that say which nested
// structs are defaulted). Feature gates are taken at their Kubernetes 1.30-1.33 defaults.
//
// normalizeLikeGoEncoding gives the JSON that Go's encoding/json writes for the typed object,
// i.e. what a webhook receives and what `kubectl get -o json` shows: omitempty fields that are
// empty are dropped, fields without omitempty are written even when empty, a zero metav1.Time is
// null, and the v1<->internal conversion aliases are applied (spec.serviceAccount mirrors
// spec.serviceAccountName).
//
// Known limits: unknown fields are kept (Go would drop them with a warning), and
// resource.Quantity values are kept as written (Go re-encodes them canonically: "0.5" -> "500m").

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace harness::sim {

// SetObjectDefaults for the versioned object, chosen by apiVersion/kind: Pod (SetDefaults_Pod,
// _PodSpec, _Container, _Probe, _HTTPGetAction, volume sources, ports, env field refs),
// PodTemplate, ReplicationController, Service, Namespace, Secret, ConfigMap, LimitRange,
// PersistentVolumeClaim, Endpoints, apps/v1 Deployment, ReplicaSet, StatefulSet, DaemonSet,
// batch/v1 Job and CronJob (their own defaults plus the pod template's). Unknown kinds and
// values of the wrong JSON type are left untouched. Idempotent; never throws.
void applyDefaults(nlohmann::json& object);

// The JSON encoding/json writes for the typed object (see above). Unknown kinds (custom
// resources) are unchanged. Idempotent; never throws.
void normalizeLikeGoEncoding(nlohmann::json& object);

// The imagePullPolicy SetDefaults_Container gives a container image: "Always" when the image
// reference has the tag "latest" or no tag and no digest, "IfNotPresent" otherwise (including
// references that do not parse, as pkg/util/parsers.ParseImageName fails on them).
std::string defaultImagePullPolicy(std::string_view image);

}  // namespace harness::sim
