// The deployment, replicaset, job, cronjob and garbage-collector controllers of
// kube-controller-manager, as far as `apiserver-sim serve` needs them (see the header for what is
// followed and what differs; the job and cronjob controllers have their own files).

#include "harness/sim/workload_controllers.h"

#include <algorithm>
#include <functional>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness/core/label_selector.h"
#include "harness/core/object.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/authorizer.h"
#include "harness/sim/store.h"
#include "controller_context.h"
#include "crd_controllers.h"
#include "cronjob_controller.h"
#include "job_controller.h"
#include "namespace_deleter.h"

namespace harness::sim {
namespace {

using json = nlohmann::json;
using controllers::annotation;
using controllers::controlledBy;
using controllers::controllerOf;
using controllers::controllerRef;
using controllers::integer;
using controllers::nameOf;
using controllers::namespaceOf;
using controllers::resourceVersionOf;
using controllers::serviceAccount;
using controllers::str;
using controllers::terminating;
using controllers::uidOf;

const core::GroupResource kDeployments{"apps", "deployments"};
const core::GroupResource kReplicaSets{"apps", "replicasets"};
const core::GroupResource kPods{"", "pods"};
const core::GroupResource kJobs{"batch", "jobs"};
const core::GroupResource kCronJobs{"batch", "cronjobs"};
const core::GroupResource kValidatingPolicies{"admissionregistration.k8s.io",
                                              "validatingadmissionpolicies"};

constexpr std::string_view kHashLabel = "pod-template-hash";
constexpr std::string_view kRevision = "deployment.kubernetes.io/revision";
constexpr std::string_view kRevisionHistory = "deployment.kubernetes.io/revision-history";
constexpr std::string_view kDesiredReplicas = "deployment.kubernetes.io/desired-replicas";
constexpr std::string_view kMaxReplicas = "deployment.kubernetes.io/max-replicas";

// intstr.GetScaledValueFromIntOrPercent for a rolling update's maxSurge (rounded up) and
// maxUnavailable (rounded down); the defaults are 25% (pkg/apis/apps/v1/defaults.go).
std::int64_t scaledValue(const json& value, std::int64_t total, bool round_up) {
  if (value.is_number_integer()) return value.get<std::int64_t>();
  std::string text = value.is_string() ? value.get<std::string>() : "25%";
  if (text.empty() || text.back() != '%') return 0;
  text.pop_back();
  std::int64_t percent = 0;
  try {
    percent = std::stoll(text);
  } catch (...) {
    return 0;
  }
  const double scaled = static_cast<double>(percent) * static_cast<double>(total) / 100.0;
  return static_cast<std::int64_t>(round_up ? std::ceil(scaled) : std::floor(scaled));
}

// deployment_util.MaxSurge / MaxUnavailable (ResolveFenceposts: both 0 means unavailable 1).
std::pair<std::int64_t, std::int64_t> surgeAndUnavailable(const json& deployment) {
  const std::int64_t replicas = integer(deployment, "/spec/replicas"_json_pointer, 1);
  if (str(deployment, "/spec/strategy/type"_json_pointer) == "Recreate") return {0, replicas};
  const json rolling = deployment.contains("/spec/strategy/rollingUpdate"_json_pointer)
                           ? deployment.at("/spec/strategy/rollingUpdate"_json_pointer)
                           : json::object();
  std::int64_t surge = scaledValue(rolling.value("maxSurge", json("25%")), replicas, true);
  std::int64_t unavailable =
      scaledValue(rolling.value("maxUnavailable", json("25%")), replicas, false);
  if (surge == 0 && unavailable == 0) unavailable = 1;
  return {surge, std::min(unavailable, replicas)};
}

// The template without the pod-template-hash label: what EqualIgnoreHash compares.
json withoutHash(json template_spec) {
  if (template_spec.contains("/metadata/labels"_json_pointer)) {
    template_spec["metadata"]["labels"].erase(std::string(kHashLabel));
    if (template_spec["metadata"]["labels"].empty()) template_spec["metadata"].erase("labels");
  }
  return template_spec;
}

}  // namespace

std::string podTemplateHash(const nlohmann::json& template_spec) {
  // hash/fnv New32a.
  std::uint32_t hash = 2166136261u;
  for (const unsigned char c : template_spec.dump()) {
    hash ^= c;
    hash *= 16777619u;
  }
  // rand.SafeEncodeString(fmt.Sprint(hash)) (k8s.io/apimachinery pkg/util/rand/rand.go).
  std::string out = std::to_string(hash);
  for (char& c : out) {
    c = kRandAlphabet[static_cast<unsigned char>(c) % kRandAlphabet.size()];
  }
  return out;
}

struct WorkloadControllers::Impl {
  // Shared with the store's change listener, which can outlive the controllers.
  struct Signal {
    std::mutex mutex;
    std::condition_variable cv;
    bool dirty = true;
    bool stopping = false;
  };

  Impl(ObjectStore& s, AdmissionChain& c, ControllerOptions o)
      : store(s),
        chain(c),
        options(std::move(o)),
        ctx(s, c),
        jobs(ctx, options.initial_backoff, options.max_backoff),
        cron_jobs(ctx),
        signal(std::make_shared<Signal>()),
        namespaces(s, c),
        crds(s, c, options.crd_status) {}

  ObjectStore& store;
  AdmissionChain& chain;
  ControllerOptions options;
  controllers::ControllerContext ctx;
  controllers::JobController jobs;
  controllers::CronJobController cron_jobs;
  std::shared_ptr<Signal> signal;
  std::thread thread;
  // Pod creation backoff per ReplicaSet uid (the replicaset controller's rate-limited requeue).
  struct Backoff {
    std::chrono::steady_clock::time_point next;
    std::chrono::milliseconds delay{0};
  };
  std::map<std::string, Backoff> backoff;
  controllers::NamespaceDeleter namespaces;
  controllers::CustomResourceDefinitionControllers crds;
  // When each Deployment's progress deadline passes (by uid), for the requeue.
  std::map<std::string, std::chrono::system_clock::time_point> deadlines;
  // Policy versions (uid/resourceVersion) whose status could not be computed or written: not
  // tried again until the policy changes, so a failure cannot spin the loop.
  std::set<std::string> failed_policy_status;

  [[nodiscard]] std::chrono::system_clock::time_point now() const {
    return options.now ? options.now() : std::chrono::system_clock::now();
  }

  bool reconcile() {
    bool wrote = false;
    wrote |= collectGarbage();
    for (const auto& deployment : store.list(kDeployments)) wrote |= syncDeployment(deployment);
    for (const auto& rs : store.list(kReplicaSets)) wrote |= syncReplicaSet(rs);
    wrote |= cron_jobs.sync(now());
    wrote |= jobs.sync(now());
    wrote |= namespaces.sync(now());
    wrote |= crds.sync(now());
    wrote |= syncPolicyStatuses();
    // clusterrole-aggregation-controller: roles with an aggregationRule take the rules of the
    // roles their selectors match (authorizer.h); written to the store directly.
    wrote |= aggregateClusterRoles(store) > 0;
    return wrote;
  }

  // --- validatingadmissionpolicy-status-controller (validatingadmissionpolicystatus/
  // controller.go reconcile): the status is applied (ApplyStatus, force) for each policy whose
  // generation is past status.observedGeneration. A failed write is tried again at the next
  // change of the store (upstream: the workqueue's rate-limited requeue).
  bool syncPolicyStatuses() {
    if (!options.policy_status) return false;
    static const std::string kController = "validatingadmissionpolicy-status-controller";
    bool wrote = false;
    for (auto policy : store.list(kValidatingPolicies)) {
      if (integer(policy, "/metadata/generation"_json_pointer, 0) <=
          integer(policy, "/status/observedGeneration"_json_pointer, 0)) {
        continue;
      }
      const std::string name = nameOf(policy);
      const std::string version = uidOf(policy) + "/" + resourceVersionOf(policy);
      if (failed_policy_status.contains(version)) continue;
      std::optional<json> status;
      try {
        status = options.policy_status(policy);
      } catch (const std::exception& e) {
        std::cerr << "apiserver-sim: " << kController << ": " << name << ": " << e.what() << "\n";
      }
      if (!status) {
        failed_policy_status.insert(version);
        continue;
      }
      policy["status"] = std::move(*status);
      WriteRequest request;
      request.operation = "UPDATE";
      request.verb = "patch";
      request.resource = {kValidatingPolicies.group, "v1", kValidatingPolicies.resource};
      request.subresource = "status";
      request.name = name;
      request.object = std::move(policy);
      request.user_info = serviceAccount(kController);
      request.user_agent = "kube-controller-manager/" + kController;
      request.request_uri = fmt::format(
          "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/{}/status?"
          "fieldManager=validatingadmissionpolicy-status&force=true",
          name);
      if (chain.handle(request).allowed) {
        wrote = true;
      } else {
        failed_policy_status.insert(version);
      }
    }
    return wrote;
  }

  // --- garbage collector (pkg/controller/garbagecollector/garbagecollector.go) ---
  // One scan of the store (every resource but Events and Leases) stands for the GC's dependency graph (graph_builder.go): every
  // object's uid, the objects with ownerReferences, and the owners being deleted with a
  // propagation finalizer. Then, as the GC's workers do:
  //   * an owner with the "orphan" finalizer: orphanDependents removes its ownerReference from
  //     each dependent (a PATCH of the dependent), then removeFinalizer (the owner goes);
  //   * an owner with "foregroundDeletion": processDeletingDependentsItem removes the finalizer
  //     once no dependent refers to it with blockOwnerDeletion, else its dependents are
  //     attempted;
  //   * attemptToDeleteItem for each dependent not being deleted: classifyReferences into solid,
  //     dangling (no object has the owner's uid) and waitingForDependentsDeletion (the owner is
  //     being deleted in the foreground); with a solid owner the dangling and waiting references
  //     are removed; else with a waiting owner and dependents of its own the item is deleted in
  //     the foreground; else it is deleted with the policy its own finalizers say (Background
  //     by default). References to kinds outside the builtin table are left alone (the GC
  //     cannot map them: the item is retried, never deleted).
  struct GcItem {
    core::GroupResource resource;
    json object;
  };

  static bool hasFinalizer(const json& object, std::string_view finalizer) {
    if (!object.contains("/metadata/finalizers"_json_pointer)) return false;
    const json& finalizers = object.at("/metadata/finalizers"_json_pointer);
    return finalizers.is_array() &&
           std::any_of(finalizers.begin(), finalizers.end(), [&](const json& f) {
             return f.is_string() && f.get<std::string>() == finalizer;
           });
  }

  static std::vector<json> ownerRefs(const json& object) {
    std::vector<json> out;
    if (!object.contains("/metadata/ownerReferences"_json_pointer)) return out;
    const json& refs = object.at("/metadata/ownerReferences"_json_pointer);
    if (!refs.is_array()) return out;
    for (const auto& ref : refs) {
      if (ref.is_object()) out.push_back(ref);
    }
    return out;
  }

  // The resources the GC's graph covers: every builtin one (each group/resource once: objects
  // are stored under the group they were written to), Events and Leases aside (never owners
  // here, and the most numerous).
  static const std::vector<core::GroupResource>& graphResources() {
    static const std::vector<core::GroupResource> resources = [] {
      std::vector<core::GroupResource> out;
      std::set<std::pair<std::string, std::string>> seen;
      for (const auto& info : core::builtinResources()) {
        const auto& r = info.resource;
        if (!info.subresource.empty() || r.resource == "events" || r.resource == "leases") {
          continue;
        }
        if (seen.insert({r.group, r.resource}).second) out.push_back({r.group, r.resource});
      }
      return out;
    }();
    return resources;
  }

  // The ownerReference's kind is one the GC's REST mapping resolves.
  static bool mappable(const json& ref) {
    const std::string api_version = ref.value("apiVersion", "");
    const auto slash = api_version.find('/');
    const std::string group = slash == std::string::npos ? "" : api_version.substr(0, slash);
    return core::resourceNameForKind(group, ref.value("kind", "")).has_value();
  }

  // The item with the entries of its metadata list `field` that `drop` selects removed (an
  // empty list is omitted, as the API server encodes it), written back as the collector's PATCH.
  bool patchMetadataList(const GcItem& item, const char* field,
                         const std::function<bool(const json&)>& drop) {
    json updated = item.object;
    json& list = updated["metadata"][field];
    list.erase(std::remove_if(list.begin(), list.end(), drop), list.end());
    if (list.empty()) updated["metadata"].erase(field);
    const std::string name = nameOf(item.object);
    return ctx
        .write("UPDATE", item.resource, item.resource.resource + "/" + name,
               namespaceOf(item.object), name, std::move(updated), "generic-garbage-collector",
               {}, std::nullopt, "patch")
        .allowed;
  }

  // gc.patch: the item's ownerReferences without those of `uids`.
  bool removeOwnerRefs(const GcItem& item, const std::set<std::string>& uids) {
    return patchMetadataList(item, "ownerReferences", [&](const json& ref) {
      return ref.is_object() && uids.contains(ref.value("uid", ""));
    });
  }

  // gc.removeFinalizer: a PATCH of the owner's finalizers; the last one removed deletes it.
  void removeFinalizer(const GcItem& item, std::string_view finalizer) {
    patchMetadataList(item, "finalizers", [&](const json& f) {
      return f.is_string() && f.get<std::string>() == finalizer;
    });
  }

  // gc.deleteObject with its propagation policy.
  void deleteItem(const GcItem& item, const std::string& policy) {
    const std::string name = nameOf(item.object);
    const json options = {{"kind", "DeleteOptions"},
                          {"apiVersion", "meta.k8s.io/v1"},
                          {"preconditions", {{"uid", uidOf(item.object)}}},
                          {"propagationPolicy", policy}};
    ctx.write("DELETE", item.resource, item.resource.resource + "/" + name,
              namespaceOf(item.object), name, std::nullopt, "generic-garbage-collector", {},
              options);
  }

  bool collectGarbage() {
    static constexpr std::string_view kOrphan = "orphan";
    static constexpr std::string_view kForeground = "foregroundDeletion";
    std::set<std::string> uids;        // every stored object's
    std::set<std::string> referenced;  // uids some ownerReference names (items with dependents)
    std::vector<GcItem> dependents;    // objects with ownerReferences
    std::map<std::string, GcItem> deleting;  // by uid: owners with a propagation finalizer
    for (const auto& resource : graphResources()) {
      for (auto& object : store.list(resource)) {
        const std::string uid = uidOf(object);
        if (!uid.empty()) uids.insert(uid);
        if (terminating(object) &&
            (hasFinalizer(object, kOrphan) || hasFinalizer(object, kForeground))) {
          deleting.emplace(uid, GcItem{resource, object});
        }
        const std::vector<json> refs = ownerRefs(object);
        if (refs.empty()) continue;
        for (const auto& ref : refs) referenced.insert(ref.value("uid", ""));
        dependents.push_back({resource, std::move(object)});
      }
    }
    bool wrote = false;
    std::set<std::string> handled;  // dependents patched this pass
    for (const auto& [owner_uid, owner] : deleting) {
      if (hasFinalizer(owner.object, kOrphan)) {
        // attemptToOrphanWorker: orphanDependents, then removeFinalizer.
        bool orphaned = true;
        for (const auto& item : dependents) {
          const auto refs = ownerRefs(item.object);
          if (std::none_of(refs.begin(), refs.end(), [&](const json& ref) {
                return ref.value("uid", "") == owner_uid;
              })) {
            continue;
          }
          orphaned &= removeOwnerRefs(item, {owner_uid});
          handled.insert(uidOf(item.object));
          wrote = true;
        }
        if (orphaned) removeFinalizer(owner, kOrphan);
        wrote = true;
        continue;
      }
      // processDeletingDependentsItem: blockingDependents are those whose reference to the owner
      // has blockOwnerDeletion.
      const bool blocked = std::any_of(dependents.begin(), dependents.end(), [&](const GcItem& d) {
        const auto refs = ownerRefs(d.object);
        return std::any_of(refs.begin(), refs.end(), [&](const json& ref) {
          return ref.value("uid", "") == owner_uid && ref.value("blockOwnerDeletion", false);
        });
      });
      if (!blocked) {
        removeFinalizer(owner, kForeground);
        wrote = true;
      }
    }
    for (const auto& item : dependents) {
      // attemptToDeleteItem: an item being deleted waits for its final deletion (those deleting
      // their dependents were handled above).
      if (terminating(item.object) || handled.contains(uidOf(item.object))) continue;
      const auto refs = ownerRefs(item.object);
      if (!std::all_of(refs.begin(), refs.end(), mappable)) continue;
      std::set<std::string> solid;
      std::set<std::string> dangling;
      std::set<std::string> waiting;
      for (const auto& ref : refs) {
        const std::string uid = ref.value("uid", "");
        if (!uids.contains(uid)) {
          dangling.insert(uid);
        } else if (auto it = deleting.find(uid);
                   it != deleting.end() && hasFinalizer(it->second.object, kForeground)) {
          waiting.insert(uid);
        } else {
          solid.insert(uid);
        }
      }
      if (!solid.empty()) {
        if (dangling.empty() && waiting.empty()) continue;
        std::set<std::string> gone = dangling;
        gone.insert(waiting.begin(), waiting.end());
        removeOwnerRefs(item, gone);
      } else if (!waiting.empty() && referenced.contains(uidOf(item.object))) {
        deleteItem(item, "Foreground");
      } else {
        deleteItem(item, hasFinalizer(item.object, kOrphan)       ? "Orphan"
                         : hasFinalizer(item.object, kForeground) ? "Foreground"
                                                                  : "Background");
      }
      wrote = true;
    }
    return wrote;
  }

  // deployment_util.SetNewReplicaSetAnnotations: the existing new ReplicaSet's revision must be
  // the greatest, MaxRevision of the old ones + 1; an older one (kubectl rollout undo brought its
  // template back) takes it (and keeps its previous revision in revision-history). nullopt when
  // its revision is already that high.
  static std::optional<std::int64_t> takenRevision(const std::vector<json>& owned,
                                                   const json& new_rs) {
    auto revisionOf = [](const json& rs) -> std::int64_t {
      try {
        return std::stoll(annotation(rs, kRevision));
      } catch (const std::exception&) {
        return 0;  // deployment_util.Revision: an unparsable revision counts as 0
      }
    };
    std::int64_t old_max = 0;
    for (const auto& rs : owned) {
      if (uidOf(rs) != uidOf(new_rs)) old_max = std::max(old_max, revisionOf(rs));
    }
    if (revisionOf(new_rs) >= old_max + 1) return std::nullopt;
    return old_max + 1;
  }

  // The Deployment's spec.selector matches the object's labels (an invalid selector, which
  // validation refuses, matches nothing).
  static bool selects(const json& deployment, const json& object) {
    if (!deployment.contains("/spec/selector"_json_pointer)) return false;
    auto selector = core::LabelSelector::parse(deployment.at("/spec/selector"_json_pointer));
    auto labels = core::labelsOf(object);
    return selector.ok() && labels.ok() && !selector->matchesEverything() &&
           selector->matches(*labels);
  }

  // sync.go scaleReplicaSet: the ReplicaSet's replicas and its desired-replicas / max-replicas
  // annotations (SetReplicasAnnotations), the ScalingReplicaSet event. The updated ReplicaSet,
  // or nullopt when the update was refused.
  std::optional<json> scaleReplicaSet(const json& deployment, json rs, std::int64_t size,
                                      std::int64_t surge) {
    const std::int64_t replicas = integer(deployment, "/spec/replicas"_json_pointer, 1);
    const std::int64_t current = integer(rs, "/spec/replicas"_json_pointer, 0);
    rs["spec"]["replicas"] = size;
    rs["metadata"]["annotations"][std::string(kDesiredReplicas)] = std::to_string(replicas);
    rs["metadata"]["annotations"][std::string(kMaxReplicas)] = std::to_string(replicas + surge);
    auto updated = ctx.write("UPDATE", kReplicaSets, "replicasets/" + nameOf(rs),
                             namespaceOf(rs), nameOf(rs), rs, "deployment-controller");
    if (!updated.allowed) return std::nullopt;
    ctx.event(deployment, "Deployment", "apps/v1", "Normal", "ScalingReplicaSet",
              fmt::format("Scaled {} replica set {} from {} to {}",
                          size > current ? "up" : "down", nameOf(rs), current, size),
              "deployment-controller");
    return updated.object ? *updated.object : rs;
  }

  // rolling.go rolloutRolling with Pods that never become available: reconcileNewReplicaSet
  // scales the new ReplicaSet up within maxSurge (NewRSNewReplicas); else
  // reconcileOldReplicaSets scales old ones down by at most allPods - minAvailable - the new
  // ReplicaSet's unavailable Pods, oldest first (cleanupUnhealthyReplicas: every old Pod is
  // unhealthy here; scaleDownOldReplicaSetsForRollingUpdate then finds nothing available).
  bool rolloutRolling(const json& deployment, const std::vector<json>& owned, const json& new_rs,
                      std::int64_t replicas, std::int64_t surge, std::int64_t max_unavailable) {
    std::int64_t all = 0;
    std::vector<json> old;
    for (const auto& rs : owned) {
      all += integer(rs, "/spec/replicas"_json_pointer, 0);
      if (uidOf(rs) != uidOf(new_rs)) old.push_back(rs);
    }
    const std::int64_t new_replicas = integer(new_rs, "/spec/replicas"_json_pointer, 0);
    if (new_replicas < replicas && all < replicas + surge) {
      const std::int64_t up = std::min(replicas + surge - all, replicas - new_replicas);
      scaleReplicaSet(deployment, new_rs, new_replicas + up, surge);
      return true;
    }
    const std::int64_t max_scaled_down = all - (replicas - max_unavailable) - new_replicas;
    if (max_scaled_down <= 0) return false;
    // controller.ReplicaSetsByCreationTimestamp.
    std::sort(old.begin(), old.end(), [](const json& a, const json& b) {
      return std::make_pair(str(a, "/metadata/creationTimestamp"_json_pointer), nameOf(a)) <
             std::make_pair(str(b, "/metadata/creationTimestamp"_json_pointer), nameOf(b));
    });
    bool wrote = false;
    std::int64_t scaled_down = 0;
    for (const auto& rs : old) {
      if (scaled_down >= max_scaled_down) break;
      const std::int64_t size = integer(rs, "/spec/replicas"_json_pointer, 0);
      if (size == 0) continue;
      const std::int64_t down = std::min(max_scaled_down - scaled_down, size);
      scaleReplicaSet(deployment, rs, size - down, surge);
      scaled_down += down;
      wrote = true;
    }
    return wrote;
  }

  // --- deployment controller (RollingUpdate and Recreate, as far as the header says) ---
  bool syncDeployment(json deployment) {
    if (terminating(deployment) || !deployment.contains("/spec/template"_json_pointer)) {
      return false;
    }
    const std::string ns = namespaceOf(deployment);
    const std::string name = nameOf(deployment);
    const std::int64_t replicas = integer(deployment, "/spec/replicas"_json_pointer, 1);
    const json& template_spec = deployment.at("/spec/template"_json_pointer);

    std::vector<json> owned;
    bool wrote = false;
    for (const auto& rs : store.list(kReplicaSets, ns)) {
      if (controlledBy(rs, deployment) && !terminating(rs)) {
        owned.push_back(rs);
      } else if (!controllerOf(rs) && !terminating(rs) && selects(deployment, rs)) {
        // controller_ref_manager.go ClaimReplicaSets / AdoptReplicaSet: an orphan the selector
        // matches (one left by --cascade=orphan) is adopted with a PATCH adding the Deployment
        // as its controller.
        json adopted = rs;
        adopted["metadata"]["ownerReferences"].push_back(
            controllerRef(deployment, "apps/v1", "Deployment"));
        auto updated = ctx.write("UPDATE", kReplicaSets, "replicasets/" + nameOf(rs), ns,
                                 nameOf(rs), adopted, "deployment-controller", {}, std::nullopt,
                                 "patch");
        wrote = true;
        if (updated.allowed && updated.object) owned.push_back(*updated.object);
      }
    }
    std::optional<json> new_rs;
    std::int64_t max_revision = 0;
    std::int64_t current_pods = 0;
    for (const auto& rs : owned) {
      try {
        max_revision = std::max<std::int64_t>(max_revision, std::stoll(annotation(rs, kRevision)));
      } catch (const std::exception&) {
        // deployment_util.Revision: an unparsable revision counts as 0
      }
      current_pods += integer(rs, "/spec/replicas"_json_pointer, 0);
      if (rs.contains("/spec/template"_json_pointer) &&
          withoutHash(rs.at("/spec/template"_json_pointer)) == withoutHash(template_spec)) {
        new_rs = rs;
      }
    }
    const auto [surge, unavailable] = surgeAndUnavailable(deployment);
    if (!new_rs) {
      // getNewReplicaSet: a ReplicaSet named <deployment>-<hash>, its template and selector
      // labelled with the hash, sized by NewRSNewReplicas.
      std::optional<std::string> exact;
      if (options.pod_template_hash) {
        std::optional<std::int32_t> collision_count;
        if (deployment.contains("/status/collisionCount"_json_pointer) &&
            deployment.at("/status/collisionCount"_json_pointer).is_number_integer()) {
          collision_count =
              deployment.at("/status/collisionCount"_json_pointer).get<std::int32_t>();
        }
        exact = options.pod_template_hash(template_spec, collision_count);
      }
      const std::string hash = exact ? *exact : podTemplateHash(withoutHash(template_spec));
      json rs_template = template_spec;
      rs_template["metadata"]["labels"][std::string(kHashLabel)] = hash;
      json selector = deployment.contains("/spec/selector"_json_pointer)
                          ? deployment.at("/spec/selector"_json_pointer)
                          : json::object();
      selector["matchLabels"][std::string(kHashLabel)] = hash;
      std::int64_t size = replicas;
      if (surge > 0 || str(deployment, "/spec/strategy/type"_json_pointer) != "Recreate") {
        const std::int64_t max_total = replicas + surge;
        size = current_pods >= max_total ? 0 : std::min(max_total - current_pods, replicas);
      }
      json labels = rs_template["metadata"]["labels"];
      json annotations = json::object();
      if (deployment.contains("/metadata/annotations"_json_pointer)) {
        for (const auto& [key, value] : deployment["metadata"]["annotations"].items()) {
          // deployment_util.skipCopyAnnotation
          if (key != "kubectl.kubernetes.io/last-applied-configuration" && key != kRevision) {
            annotations[key] = value;
          }
        }
      }
      annotations[std::string(kRevision)] = std::to_string(max_revision + 1);
      annotations[std::string(kDesiredReplicas)] = std::to_string(replicas);
      annotations[std::string(kMaxReplicas)] = std::to_string(replicas + surge);
      json rs = {{"apiVersion", "apps/v1"},
                 {"kind", "ReplicaSet"},
                 {"metadata",
                  {{"name", name + "-" + hash},
                   {"namespace", ns},
                   {"labels", labels},
                   {"annotations", annotations},
                   {"ownerReferences", json::array({controllerRef(deployment, "apps/v1", "Deployment")})}}},
                 {"spec",
                  {{"replicas", size},
                   {"minReadySeconds", integer(deployment, "/spec/minReadySeconds"_json_pointer, 0)},
                   {"selector", selector},
                   {"template", rs_template}}}};
      auto created = ctx.write("CREATE", kReplicaSets, "replicasets", ns, "", rs,
                           "deployment-controller");
      wrote = true;
      if (created.allowed && created.object) {
        new_rs = *created.object;
        if (size > 0) {
          ctx.event(deployment, "Deployment", "apps/v1", "Normal", "ScalingReplicaSet",
                fmt::format("Scaled up replica set {} from 0 to {}", nameOf(*new_rs), size),
                "deployment-controller");
        }
      } else {
        return wrote;  // retried on the next change, as the controller requeues
      }
    } else if (const auto revision = takenRevision(owned, *new_rs)) {
      json updated_rs = *new_rs;
      const std::string previous_revision = annotation(updated_rs, kRevision);
      json& annotations = updated_rs["metadata"]["annotations"];
      annotations[std::string(kRevision)] = std::to_string(*revision);
      if (!previous_revision.empty()) {
        const std::string history = annotation(updated_rs, kRevisionHistory);
        annotations[std::string(kRevisionHistory)] =
            history.empty() ? previous_revision : history + "," + previous_revision;
      }
      auto updated = ctx.write("UPDATE", kReplicaSets, "replicasets/" + nameOf(updated_rs), ns,
                               nameOf(updated_rs), updated_rs, "deployment-controller");
      wrote = true;
      if (!updated.allowed || !updated.object) return wrote;
      new_rs = *updated.object;
    } else if (owned.size() == 1) {
      // sync/scale: the only ReplicaSet follows the Deployment's replicas.
      if (integer(*new_rs, "/spec/replicas"_json_pointer, 0) != replicas) {
        wrote = true;
        if (auto scaled = scaleReplicaSet(deployment, *new_rs, replicas, surge)) new_rs = scaled;
      }
    } else if (str(deployment, "/spec/strategy/type"_json_pointer) != "Recreate") {
      wrote |= rolloutRolling(deployment, owned, *new_rs, replicas, surge, unavailable);
    }
    // The Deployment carries its newest revision (SetDeploymentRevision), written with
    // UpdateStatus as getNewReplicaSet does: the status strategy keeps the annotations and does
    // not bump the generation (the main resource's strategy would: annotations are copied to
    // ReplicaSets).
    const std::string revision = annotation(*new_rs, kRevision);
    if (!revision.empty() && annotation(deployment, kRevision) != revision) {
      deployment["metadata"]["annotations"][std::string(kRevision)] = revision;
      auto updated = ctx.write("UPDATE", kDeployments, "deployments/" + name + "/status", ns,
                               name, deployment, "deployment-controller", "status");
      wrote = true;
      if (!updated.allowed || !updated.object) return wrote;
      deployment = *updated.object;
    }
    return syncDeploymentStatus(deployment, owned, *new_rs, unavailable) || wrote;
  }

  // sync.go calculateStatus and progress.go's conditions for a rollout whose Pods never become
  // available.
  bool syncDeploymentStatus(const json& deployment, const std::vector<json>& owned,
                            const json& new_rs, std::int64_t max_unavailable) {
    std::int64_t actual = 0;
    std::int64_t spec_total = 0;
    bool new_counted = false;
    for (const auto& rs : owned) {
      actual += integer(rs, "/status/replicas"_json_pointer, 0);
      spec_total += integer(rs, "/spec/replicas"_json_pointer, 0);
      new_counted |= uidOf(rs) == uidOf(new_rs);
    }
    if (!new_counted) {
      actual += integer(new_rs, "/status/replicas"_json_pointer, 0);
      spec_total += integer(new_rs, "/spec/replicas"_json_pointer, 0);
    }
    const std::int64_t replicas = integer(deployment, "/spec/replicas"_json_pointer, 1);
    json status = json::object();
    status["observedGeneration"] = integer(deployment, "/metadata/generation"_json_pointer, 1);
    if (actual > 0) status["replicas"] = actual;
    const std::int64_t updated = integer(new_rs, "/status/replicas"_json_pointer, 0);
    if (updated > 0) status["updatedReplicas"] = updated;
    if (spec_total > 0) status["unavailableReplicas"] = spec_total;
    const json old = deployment.value("status", json::object());
    auto previous = [&](const std::string& type) -> json {
      for (const auto& c : old.value("conditions", json::array())) {
        if (c.value("type", "") == type) return c;
      }
      return nullptr;
    };
    auto condition = [&](const std::string& type, const std::string& value,
                         const std::string& reason, const std::string& message) {
      json before = previous(type);
      const std::string now = rfc3339(this->now());
      json c = {{"type", type},        {"status", value},         {"lastUpdateTime", now},
                {"lastTransitionTime", now}, {"reason", reason}, {"message", message}};
      if (before.is_object()) {
        if (before.value("status", "") == value) {
          c["lastTransitionTime"] = before.value("lastTransitionTime", now);
        }
        if (before.value("status", "") == value && before.value("reason", "") == reason &&
            before.value("message", "") == message) {
          c["lastUpdateTime"] = before.value("lastUpdateTime", now);
        }
      }
      return c;
    };
    const bool available = replicas - max_unavailable <= 0;
    status["conditions"] = json::array(
        {available ? condition("Available", "True", "MinimumReplicasAvailable",
                               "Deployment has minimum availability.")
                   : condition("Available", "False", "MinimumReplicasUnavailable",
                               "Deployment does not have minimum availability.")});
    // progress.go syncRolloutStatus: with a progress deadline (HasProgressDeadline: set and not
    // MaxInt32), Progressing is True ReplicaSetUpdated while the rollout progresses
    // (DeploymentProgressing: more updated replicas, fewer old ones; a new ReplicaSet here);
    // without progress for progressDeadlineSeconds after its lastUpdateTime it turns False
    // ProgressDeadlineExceeded (DeploymentTimedOut), which kubectl rollout status reports.
    const std::int64_t deadline =
        integer(deployment, "/spec/progressDeadlineSeconds"_json_pointer, 2147483647);
    deadlines.erase(uidOf(deployment));
    if (deadline != 2147483647) {
      const std::string message =
          fmt::format("ReplicaSet \"{}\" is progressing.", nameOf(new_rs));
      const json before = previous("Progressing");
      const std::int64_t old_updated = old.value("updatedReplicas", json(0)).is_number_integer()
                                           ? old.value("updatedReplicas", std::int64_t{0})
                                           : 0;
      const std::int64_t old_total = old.value("replicas", json(0)).is_number_integer()
                                         ? old.value("replicas", std::int64_t{0})
                                         : 0;
      // Both messages name the new ReplicaSet: another one there is a new rollout.
      const std::string named = fmt::format("ReplicaSet \"{}\" ", nameOf(new_rs));
      const bool progressed = !before.is_object() ||
                              !before.value("message", "").starts_with(named) ||
                              updated > old_updated || actual - updated < old_total - old_updated;
      std::optional<std::chrono::system_clock::time_point> last_update;
      if (before.is_object()) last_update = parseRfc3339(before.value("lastUpdateTime", ""));
      const auto at = last_update ? *last_update + std::chrono::seconds(deadline) : now();
      if (!progressed && before.is_object() &&
          (before.value("reason", "") == "ProgressDeadlineExceeded" || at < now())) {
        status["conditions"].push_back(condition(
            "Progressing", "False", "ProgressDeadlineExceeded",
            fmt::format("ReplicaSet \"{}\" has timed out progressing.", nameOf(new_rs))));
      } else {
        status["conditions"].push_back(
            condition("Progressing", "True", "ReplicaSetUpdated", message));
        // requeueStuckDeployment: checked again when the deadline passes (a second later).
        if (!progressed && last_update) {
          deadlines[uidOf(deployment)] = at + std::chrono::seconds(1);
        } else {
          deadlines[uidOf(deployment)] = now() + std::chrono::seconds(deadline + 1);
        }
      }
    }
    if (old == status) return false;
    json next = deployment;
    next["status"] = status;
    ctx.write("UPDATE", kDeployments, "deployments/" + nameOf(deployment) + "/status",
          namespaceOf(deployment), nameOf(deployment), next, "deployment-controller", "status");
    return true;
  }

  // --- replicaset controller ---
  bool syncReplicaSet(const json& rs) {
    if (terminating(rs)) return false;
    const std::string ns = namespaceOf(rs);
    const std::int64_t replicas = integer(rs, "/spec/replicas"_json_pointer, 1);
    std::vector<json> active;
    for (const auto& pod : store.list(kPods, ns)) {
      const std::string phase = str(pod, "/status/phase"_json_pointer);
      if (controlledBy(pod, rs) && !terminating(pod) && phase != "Succeeded" &&
          phase != "Failed") {
        active.push_back(pod);
      }
    }
    bool wrote = false;
    const auto now = std::chrono::steady_clock::now();
    auto& retry = backoff[uidOf(rs)];
    if (static_cast<std::int64_t>(active.size()) < replicas && now >= retry.next) {
      // GetPodFromTemplate: the template's labels, annotations and spec; generateName
      // "<rs>-"; controlled by the ReplicaSet.
      const json& tmpl = rs.at("/spec/template"_json_pointer);
      json metadata = {{"generateName", nameOf(rs) + "-"},
                       {"namespace", ns},
                       {"ownerReferences", json::array({controllerRef(rs, "apps/v1", "ReplicaSet")})}};
      for (const char* field : {"labels", "annotations", "finalizers"}) {
        if (tmpl.contains("metadata") && tmpl["metadata"].contains(field)) {
          metadata[field] = tmpl["metadata"][field];
        }
      }
      json pod = {{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"metadata", metadata},
                  {"spec", tmpl.value("spec", json::object())}};
      for (auto missing = replicas - static_cast<std::int64_t>(active.size()); missing > 0;
           --missing) {
        auto created = ctx.write("CREATE", kPods, "pods", ns, "", pod, "replicaset-controller");
        wrote = true;
        if (!created.allowed) {
          // manageReplicas: FailedCreate with the apiserver's error, then a rate-limited retry.
          const std::string message =
              created.status ? created.status->message : std::string("unknown error");
          ctx.event(rs, "ReplicaSet", "apps/v1", "Warning", "FailedCreate",
                "Error creating: " + message, "replicaset-controller");
          retry.delay = retry.delay.count() == 0
                            ? options.initial_backoff
                            : std::min(retry.delay * 2, options.max_backoff);
          retry.next = std::chrono::steady_clock::now() + retry.delay;
          break;
        }
        retry = {};
        if (created.object) {
          active.push_back(*created.object);
          ctx.event(rs, "ReplicaSet", "apps/v1", "Normal", "SuccessfulCreate",
                "Created pod: " + nameOf(*created.object), "replicaset-controller");
        }
      }
    } else if (static_cast<std::int64_t>(active.size()) > replicas) {
      // getPodsToDelete: every Pod here is unscheduled and Pending, so the newest go first.
      std::sort(active.begin(), active.end(), [](const json& a, const json& b) {
        const auto ka = std::make_pair(str(a, "/metadata/creationTimestamp"_json_pointer),
                                       nameOf(a));
        const auto kb = std::make_pair(str(b, "/metadata/creationTimestamp"_json_pointer),
                                       nameOf(b));
        return ka > kb;
      });
      while (static_cast<std::int64_t>(active.size()) > replicas) {
        const json victim = active.front();
        active.erase(active.begin());
        auto removed = ctx.write("DELETE", kPods, "pods/" + nameOf(victim), ns, nameOf(victim),
                             std::nullopt, "replicaset-controller");
        wrote = true;
        if (removed.allowed) {
          ctx.event(rs, "ReplicaSet", "apps/v1", "Normal", "SuccessfulDelete",
                "Deleted pod: " + nameOf(victim), "replicaset-controller");
        }
      }
    }
    // replica_set_utils.go calculateStatus: no Pod is ever ready or available here.
    json status = json::object();
    if (!active.empty()) {
      status["replicas"] = active.size();
      status["fullyLabeledReplicas"] = active.size();
    } else {
      status["replicas"] = 0;
    }
    status["observedGeneration"] = integer(rs, "/metadata/generation"_json_pointer, 1);
    json current = store.get(kReplicaSets, ns, nameOf(rs)).value_or(rs);
    if (current.value("status", json::object()) != status) {
      current["status"] = status;
      ctx.write("UPDATE", kReplicaSets, "replicasets/" + nameOf(rs) + "/status", ns, nameOf(rs),
            current, "replicaset-controller", "status");
      wrote = true;
    }
    return wrote;
  }

  std::optional<std::chrono::steady_clock::time_point> nextRetry() const {
    std::optional<std::chrono::steady_clock::time_point> next;
    const auto now = std::chrono::steady_clock::now();
    for (const auto& [uid, retry] : backoff) {
      if (retry.delay.count() > 0 && retry.next > now && (!next || retry.next < *next)) {
        next = retry.next;
      }
    }
    // The namespace, job and cronjob controllers' queues run on the wall clock.
    const auto wall = this->now();
    std::optional<std::chrono::system_clock::time_point> deadline;
    for (const auto& [uid, at] : deadlines) {
      if (at > wall && (!deadline || at < *deadline)) deadline = at;
    }
    for (const auto requeue : {namespaces.nextRequeue(), jobs.nextRequeue(wall),
                               cron_jobs.nextRequeue(wall), deadline}) {
      if (!requeue) continue;
      const auto at =
          now + std::chrono::duration_cast<std::chrono::steady_clock::duration>(*requeue - wall);
      if (!next || at < *next) next = at;
    }
    return next;
  }

  void loop() {
    while (true) {
      {
        std::unique_lock lock(signal->mutex);
        auto ready = [&] { return signal->dirty || signal->stopping; };
        if (auto next = nextRetry()) {
          signal->cv.wait_until(lock, *next, ready);
        } else {
          signal->cv.wait(lock, ready);
        }
        if (signal->stopping) return;
        signal->dirty = false;
      }
      // A bounded number of passes: each write changes the store (and sets dirty again); the
      // passes stop when one writes nothing.
      for (int pass = 0; pass < 16 && reconcile(); ++pass) {
        std::lock_guard lock(signal->mutex);
        if (signal->stopping) return;
      }
    }
  }
};

WorkloadControllers::WorkloadControllers(ObjectStore& store, AdmissionChain& chain,
                                         ControllerOptions options)
    : impl_(std::make_unique<Impl>(store, chain, std::move(options))) {
  std::weak_ptr<Impl::Signal> weak = impl_->signal;
  store.onChange([weak](const core::GroupResource& resource) {
    // Any object can own or be owned (the garbage collector's graph covers every resource);
    // Events and Leases are only written, never reconciled.
    if (resource.resource == "events" || resource.resource == "leases") return;
    if (auto signal = weak.lock()) {
      std::lock_guard lock(signal->mutex);
      signal->dirty = true;
      signal->cv.notify_all();
    }
  });
  if (options.run_thread) impl_->thread = std::thread([this] { impl_->loop(); });
}

WorkloadControllers::~WorkloadControllers() { stop(); }

bool WorkloadControllers::reconcileOnce() { return impl_->reconcile(); }

void WorkloadControllers::stop() {
  {
    std::lock_guard lock(impl_->signal->mutex);
    impl_->signal->stopping = true;
    impl_->signal->cv.notify_all();
  }
  if (impl_->thread.joinable()) impl_->thread.join();
}

}  // namespace harness::sim
