#pragma once

// kube-controller-manager's workload controllers for `apiserver-sim serve`, so that kubectl sees
// what a cluster does after `kubectl apply` of a Deployment, a Job or a CronJob: the deployment
// controller creates a ReplicaSet, the replicaset controller its Pods, the job controller a Job's
// Pods, the cronjob controller a Job at each scheduled time, the garbage collector removes what
// an owner deletion leaves. Every write goes through the admission chain as the controller's service
// account (kube-controller-manager --use-service-account-credentials), so webhooks, audit events
// and the injector's owner lookups see what they see on a cluster. Pods never run: there is no
// scheduler or kubelet (status.phase stays Pending), as on the local real control plane.
//
// Followed (k8s.io/kubernetes v1.37.2):
//   pkg/controller/deployment/sync.go        getNewReplicaSet, the ScalingReplicaSet event,
//                                            syncDeploymentStatus / calculateStatus
//   pkg/controller/controller_ref_manager.go ClaimReplicaSets: orphaned ReplicaSets the
//                                            selector matches are adopted
//   pkg/controller/deployment/rolling.go     rolloutRolling: reconcileNewReplicaSet within
//                                            maxSurge, reconcileOldReplicaSets /
//                                            cleanupUnhealthyReplicas (every old Pod unhealthy)
//   pkg/controller/deployment/progress.go    syncRolloutStatus: Progressing ReplicaSetUpdated,
//                                            DeploymentTimedOut (ProgressDeadlineExceeded),
//                                            requeueStuckDeployment
//   pkg/controller/deployment/util/deployment_util.go  NewRSNewReplicas, MaxSurge, revisions,
//                                            SetNewReplicaSetAnnotations (a rolled-back
//                                            ReplicaSet takes the next revision, revision-history)
//   pkg/controller/replicaset/replica_set.go manageReplicas (create / delete the difference),
//                                            SuccessfulCreate / FailedCreate events
//   pkg/controller/replicaset/replica_set_utils.go     calculateStatus
//   pkg/controller/controller_utils.go       GetPodFromTemplate (generateName, ownerReference)
//   pkg/controller/job                       a Job's Pods, suspension, failures and backoffLimit
//                                            (src/controllers/job_controller.h)
//   pkg/controller/cronjob                   a Job per scheduled time, concurrencyPolicy,
//                                            startingDeadlineSeconds (cronjob_controller.h)
//   pkg/controller/garbagecollector/garbagecollector.go  the graph is one scan of the store
//                                            (every resource): attemptToDeleteItem with
//                                            classifyReferences (solid, dangling, waiting for
//                                            dependents' deletion), orphanDependents and
//                                            removeFinalizer for the `orphan` finalizer,
//                                            processDeletingDependentsItem (blockOwnerDeletion)
//                                            for `foregroundDeletion`; the API server side is
//                                            src/admission/deletion.h
//                                            deletionFinalizersForGarbageCollection
//   pkg/controller/namespace                 a Namespace being deleted is emptied, then
//                                            finalized (src/controllers/namespace_deleter.h)
//   pkg/controller/clusterroleaggregation    ClusterRoles with an aggregationRule get the rules of
//                                            the roles they select (aggregateClusterRoles)
//   pkg/controller/validatingadmissionpolicystatus  a ValidatingAdmissionPolicy whose generation
//                                            is past status.observedGeneration gets the type
//                                            checker's warnings (status.typeChecking)
//   apiextensions-apiserver's naming, establishing and CRD finalizer controllers (they run in
//                                            kube-apiserver: src/controllers/crd_controllers.h)
// Differences, on purpose or not yet done (e2e/README.md lists them):
//   * pod-template-hash: Kubernetes' controller.ComputeHash hashes a spew dump of the Go struct,
//     which only Go gives; `serve` asks kube-cel for it (ControllerOptions::pod_template_hash).
//     Without kube-cel it is FNV-32a of the template's JSON, encoded as ComputeHash encodes its
//     hash (rand.SafeEncodeString): the form (and its use in names, labels and selectors) is a
//     cluster's, the value is not;
//   * no Pod becomes available, so rollouts stop where the real controller stops on a cluster
//     without kubelets (one replica: the old ReplicaSet stays; four: new 2, old 3); the
//     Recreate strategy sizes the new ReplicaSet at once instead of after the old Pods are gone,
//     and a scaling event during a rollout is not spread proportionally;
//   * Jobs never complete (no Pod runs); CronJobs are scheduled in UTC only (the two headers
//     list the rest).

#include <chrono>
#include <functional>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace harness::sim {

class ObjectStore;
class AdmissionChain;

struct ControllerOptions {
  // How long a failed Pod creation waits before the next attempt, doubled per failure up to
  // max_backoff (the workqueue's rate limiter, without its jitter).
  std::chrono::milliseconds initial_backoff{1000};
  std::chrono::milliseconds max_backoff{60'000};
  // false: no thread; the caller runs reconcileOnce() (tests).
  bool run_thread = true;
  // The namespace, job and cronjob controllers' clock (time.Now); the system clock when unset
  // (tests set it).
  std::function<std::chrono::system_clock::time_point()> now;
  // controller.ComputeHash(&d.Spec.Template, d.Status.CollisionCount), Kubernetes' own (serve
  // wires kube-cel's podTemplateHash); nullopt or unset: podTemplateHash() below.
  std::function<std::optional<std::string>(const nlohmann::json& template_spec,
                                           std::optional<std::int32_t> collision_count)>
      pod_template_hash;
  // The status the ValidatingAdmissionPolicy status controller writes for a policy
  // (validatingadmissionpolicystatus reconcile: validating.TypeChecker's warnings and
  // observedGeneration; serve wires kube-cel's typeCheckValidatingPolicy), nullopt when it
  // writes none; a failure is thrown. Unset: the controller does not run (as without kube-cel).
  std::function<std::optional<nlohmann::json>(const nlohmann::json& policy)> policy_status;
  // The status writes of apiextensions-apiserver's naming and establishing controllers for a
  // CustomResourceDefinition, given the other CRDs (serve wires kube-cel's
  // customResourceDefinitionStatus); a failure is thrown. Unset: CRDs are never established.
  std::function<std::vector<nlohmann::json>(const nlohmann::json& crd,
                                            const std::vector<nlohmann::json>& others)>
      crd_status;
};

class WorkloadControllers {
 public:
  // Starts the controllers' thread; it reconciles whenever the store changes.
  WorkloadControllers(ObjectStore& store, AdmissionChain& chain, ControllerOptions options = {});
  ~WorkloadControllers();  // stops
  WorkloadControllers(const WorkloadControllers&) = delete;
  WorkloadControllers& operator=(const WorkloadControllers&) = delete;

  // One pass over every Deployment, ReplicaSet, Job, CronJob, owned object, Namespace being
  // deleted and ValidatingAdmissionPolicy (what the thread runs); returns whether it wrote
  // anything. For tests, without the thread (ControllerOptions::run_thread).
  bool reconcileOnce();
  // Stops the thread (idempotent).
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// controller.ComputeHash's form: FNV-32a of the template (its compact JSON here, see above),
// the decimal of the hash, each character mapped by rand.SafeEncodeString.
std::string podTemplateHash(const nlohmann::json& template_spec);

}  // namespace harness::sim
