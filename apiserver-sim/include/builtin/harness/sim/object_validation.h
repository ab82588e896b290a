#pragma once

// The registry strategies of kube-apiserver for the built-in kinds: PrepareForCreate /
// PrepareForUpdate (fields the server owns) and strategy validation, whose errors become the
// 422 Invalid of docs/admission-chain.md §1.3 (validating webhooks never run after one: §10.14).
//
// Upstream: pkg/registry/<group>/<kind>/strategy.go, pkg/apis/core/validation/validation.go,
// pkg/apis/apps/validation/validation.go, pkg/apis/batch/validation/validation.go,
// k8s.io/apimachinery/pkg/api/validation/objectmeta.go. Messages and field paths are
// apimachinery's; the subset implemented is listed with validateObject.

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/field_errors.h"

namespace harness::sim {

// PrepareForCreate: Pod status = {phase: Pending, qosClass}; Deployment, ReplicaSet,
// StatefulSet, DaemonSet, ReplicationController, Job and CronJob get generation 1 and an empty
// status; Job gets its generated selector and template labels (needs metadata.uid, which the
// registry fills before PrepareForCreate); Service status reset; Namespace phase Active and the
// "kubernetes" finalizer. Unknown kinds untouched. Never throws.
void prepareForCreate(nlohmann::json& object);

// PrepareForUpdate plus the common part of rest.BeforeUpdate: generation, uid and
// creationTimestamp come from the old object; status is kept from the old object; workloads bump
// generation when their spec changed (Deployments also on annotation changes); a Namespace keeps
// its finalizers; deletionTimestamp and deletionGracePeriodSeconds cannot be removed or changed.
// Never throws.
void prepareForUpdate(nlohmann::json& object, const nlohmann::json& old_object);
// The same for PUT namespaces/<name>/finalize (pkg/registry/core/namespace/strategy.go
// namespaceFinalizeStrategy): the new spec (its finalizers) is taken, the old status kept.
void prepareForFinalizeUpdate(nlohmann::json& object, const nlohmann::json& old_object);
// The same for an update of the status subresource: the new status, labels and annotations over
// the old object (its spec is kept). Never throws.
void prepareForStatusUpdate(nlohmann::json& object, const nlohmann::json& old_object);

// Strategy validation (Validate, or ValidateUpdate when old_object is given) for the known kinds:
//   * ObjectMeta: name/generateName by kind (DNS-1123 subdomain, DNS-1123 label for Namespace and
//     StatefulSet, DNS-1035 label for Service, CronJob names <= 52 characters), namespace
//     required / forbidden, label keys and values, annotation keys and total size, and on
//     update the immutability of name, namespace, uid and creationTimestamp;
//   * Pod specs (also inside templates): containers required, container names DNS-1123 labels
//     unique across containers and initContainers, image required, terminationMessagePolicy,
//     imagePullPolicy, ports (1-65535, names, protocols), env names required, volume names
//     unique DNS labels with exactly one source, volumeMount names referring to volumes and
//     unique mount paths, resources (requests <= limits, non-negative), probes (one handler,
//     ports, non-negative fields, successThreshold 1 for liveness/startup), init container
//     restartPolicy (only Always: sidecars) and the probe/lifecycle rules for init containers,
//     restartPolicy, dnsPolicy, serviceAccountName, tolerations;
//   * Pod updates: only images, activeDeadlineSeconds, terminationGracePeriodSeconds and
//     tolerations additions may change (the Forbidden message's diff part is summarised);
//   * Namespace; Service (type, ports, names, protocols, target ports, sessionAffinity);
//   * Deployment, ReplicaSet, StatefulSet, DaemonSet (selector required and non-empty, matching
//     the template labels, restartPolicy Always, selector immutable on update), Job (restartPolicy
//     OnFailure/Never), CronJob (schedule required), ReplicationController, PodTemplate.
// Unknown kinds: no errors. The caller builds the 422 with core::newInvalid.
core::FieldErrors validateObject(const nlohmann::json& object, const nlohmann::json* old_object);

// The registry strategy's WarningsOnCreate, sent as Warning headers when a valid object is
// created (k8s.io/apiserver pkg/registry/rest/create.go BeforeCreate, after validation). Only
// the Pod's name warning is implemented (pkg/registry/core/pod/strategy.go): a name that is not
// a DNS-1123 label (it has dots, or is longer than 63 characters) is used in the hostname.
std::vector<std::string> warningsOnCreate(const nlohmann::json& object);

// qos.GetPodQOS (pkg/apis/core/helper/qos/qos.go): "BestEffort", "Burstable" or "Guaranteed"
// from the cpu/memory requests and limits of containers and init containers.
std::string podQosClass(const nlohmann::json& pod);

}  // namespace harness::sim
