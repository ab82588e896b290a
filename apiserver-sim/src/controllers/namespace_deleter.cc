// The namespace controller (see namespace_deleter.h for the upstream files followed).

#include "namespace_deleter.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <set>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness/core/object.h"
#include "harness/sim/custom_resources.h"

namespace harness::sim::controllers {
namespace {

using json = nlohmann::json;

constexpr std::string_view kController = "namespace-controller";
constexpr std::string_view kFinalizerToken = "kubernetes";  // v1.FinalizerKubernetes
// namespaced_resources_deleter.go: the wait for content whose finalizers are still pending.
constexpr std::int64_t kFinalizerEstimateSeconds = 15;

std::string str(const json& object, const char* a, const char* b) {
  if (!object.is_object()) return {};
  auto outer = object.find(a);
  if (outer == object.end() || !outer->is_object()) return {};
  auto inner = outer->find(b);
  return inner != outer->end() && inner->is_string() ? inner->get<std::string>() : std::string();
}

std::vector<std::string> stringList(const json& object, const char* a, const char* b) {
  std::vector<std::string> out;
  if (!object.is_object() || !object.contains(a) || !object[a].is_object()) return out;
  const json& outer = object[a];
  auto list = outer.find(b);
  if (list == outer.end() || !list->is_array()) return out;
  for (const auto& value : *list) {
    if (value.is_string()) out.push_back(value.get<std::string>());
  }
  return out;
}

core::UserInfo controllerUser() {
  core::UserInfo user;
  user.username = "system:serviceaccount:kube-system:" + std::string(kController);
  user.groups = {"system:serviceaccounts", "system:serviceaccounts:kube-system",
                 "system:authenticated"};
  return user;
}

// The namespaced resources the controller's discovery finds deletable, pods first. Objects are
// stored under the group/resource they were written to, so each one of the equivalent resources
// of a storage (apps and extensions deployments) is visited.
const std::vector<core::ResourceInfo>& deletableResources() {
  static const std::vector<core::ResourceInfo> resources = [] {
    std::vector<core::ResourceInfo> out;
    std::set<std::pair<std::string, std::string>> seen;
    for (const auto& info : core::builtinResources()) {
      if (!info.namespaced || !info.subresource.empty()) continue;
      if (!seen.insert({info.resource.group, info.resource.resource}).second) continue;
      out.push_back(info);
    }
    std::stable_partition(out.begin(), out.end(), [](const core::ResourceInfo& info) {
      return info.resource.group.empty() && info.resource.resource == "pods";
    });
    return out;
  }();
  return resources;
}

std::string collectionUri(const core::ResourceInfo& info, const std::string& ns) {
  const core::GroupVersionResource& r = info.resource;
  const std::string prefix =
      r.group.empty() ? "/api/" + r.version : fmt::format("/apis/{}/{}", r.group, r.version);
  return fmt::format("{}/namespaces/{}/{}", prefix, ns, r.resource);
}

// status_condition_utils.go: the five conditions the deleter maintains, with their "ok" forms.
struct ConditionText {
  const char* type;
  const char* reason;
  const char* message;
};
constexpr ConditionText kConditions[] = {
    {"NamespaceDeletionDiscoveryFailure", "ResourcesDiscovered",
     "All resources successfully discovered"},
    {"NamespaceDeletionGroupVersionParsingFailure", "ParsedGroupVersions",
     "All legacy kube types successfully parsed"},
    {"NamespaceDeletionContentFailure", "ContentDeleted",
     "All content successfully deleted, may be waiting on finalization"},
    {"NamespaceContentRemaining", "ContentRemoved", "All content successfully removed"},
    {"NamespaceFinalizersRemaining", "ContentHasNoFinalizers",
     "All content-preserving finalizers finished"},
};

struct NewCondition {
  std::string status;
  std::string reason;
  std::string message;
};

// updateConditions: each condition type set to its new form (or the ok form); the transition
// time changes only with the status. Returns whether the status changed.
bool updateConditions(json& ns, const std::map<std::string, NewCondition>& failing,
                      const std::string& now) {
  if (!ns.contains("status") || !ns["status"].is_object()) ns["status"] = json::object();
  json& status = ns["status"];
  if (!status.contains("conditions") || !status["conditions"].is_array()) {
    status["conditions"] = json::array();
  }
  json& conditions = status["conditions"];
  bool changed = false;
  for (const auto& text : kConditions) {
    NewCondition wanted{"False", text.reason, text.message};
    if (auto it = failing.find(text.type); it != failing.end()) wanted = it->second;
    json* old = nullptr;
    for (auto& c : conditions) {
      if (c.is_object() && c.value("type", "") == text.type) old = &c;
    }
    if (old == nullptr) {
      conditions.push_back({{"type", text.type},
                            {"status", wanted.status},
                            {"lastTransitionTime", now},
                            {"reason", wanted.reason},
                            {"message", wanted.message}});
      changed = true;
    } else if (old->value("status", "") != wanted.status ||
               old->value("message", "") != wanted.message ||
               old->value("reason", "") != wanted.reason) {
      if (old->value("status", "") != wanted.status) (*old)["lastTransitionTime"] = now;
      (*old)["status"] = wanted.status;
      (*old)["reason"] = wanted.reason;
      (*old)["message"] = wanted.message;
      changed = true;
    }
  }
  return changed;
}

std::string rfc3339(NamespaceDeleter::Clock::time_point t) {
  const std::time_t seconds = NamespaceDeleter::Clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z", tm.tm_year + 1900, tm.tm_mon + 1,
                     tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
}

}  // namespace

AdmissionResult NamespaceDeleter::write(WriteRequest request) {
  request.user_info = controllerUser();
  request.user_agent = "kube-controller-manager/" + std::string(kController);
  return chain_.handle(request);
}

std::optional<NamespaceDeleter::Clock::time_point> NamespaceDeleter::nextRequeue() const {
  std::optional<Clock::time_point> next;
  for (const auto& [uid, when] : requeue_) {
    if (!next || when < *next) next = when;
  }
  return next;
}

bool NamespaceDeleter::sync(Clock::time_point now) {
  bool wrote = false;
  std::set<std::string> live;
  for (const auto& ns : store_.list({"", "namespaces"})) {
    const std::string uid = str(ns, "metadata", "uid");
    live.insert(uid);
    if (str(ns, "metadata", "deletionTimestamp").empty()) continue;
    if (auto it = requeue_.find(uid); it != requeue_.end()) {
      if (now < it->second) continue;
      requeue_.erase(it);
    }
    wrote |= deleteNamespace(ns, now);
  }
  std::erase_if(requeue_, [&](const auto& entry) { return !live.contains(entry.first); });
  return wrote;
}

bool NamespaceDeleter::deleteNamespace(const json& original, Clock::time_point now) {
  json ns = original;
  const std::string name = str(ns, "metadata", "name");
  const std::string uid = str(ns, "metadata", "uid");
  bool wrote = false;
  auto namespaceWrite = [&](const std::string& subresource, const json& object) {
    WriteRequest request;
    request.operation = std::string(kOperationUpdate);
    request.verb = "update";
    request.resource = {"", "v1", "namespaces"};
    request.subresource = subresource;
    request.name = name;
    request.object = object;
    request.request_uri = fmt::format("/api/v1/namespaces/{}/{}", name, subresource);
    wrote = true;
    return write(std::move(request));
  };

  // updateNamespaceStatusFunc: the phase, should anything have left it Active.
  if (str(ns, "status", "phase") != "Terminating") {
    json updated = ns;
    updated["status"]["phase"] = "Terminating";
    auto result = namespaceWrite("status", updated);
    if (!result.allowed || !result.object) return wrote;
    ns = *result.object;
  }
  // finalized(namespace): nothing of ours left to do.
  const std::vector<std::string> finalizers = stringList(ns, "spec", "finalizers");
  if (std::find(finalizers.begin(), finalizers.end(), kFinalizerToken) == finalizers.end()) {
    return wrote;
  }

  // deleteAllContent.
  const auto deleted_at = parseRfc3339(str(ns, "metadata", "deletionTimestamp")).value_or(now);
  std::int64_t estimate = 0;
  std::map<std::string, int> remaining_by_resource;   // "pods. has 1 resource instances"
  std::map<std::string, int> remaining_by_finalizer;
  std::vector<std::string> delete_errors;
  // The controller's discovery also finds the custom resources the established CRDs serve.
  std::vector<core::ResourceInfo> resources = deletableResources();
  for (const auto& served : servedCustomResources(store_)) {
    if (!served.info.namespaced || !served.info.subresource.empty()) continue;
    const bool seen = std::any_of(resources.begin(), resources.end(), [&](const auto& info) {
      return info.resource.group == served.info.resource.group &&
             info.resource.resource == served.info.resource.resource;
    });
    if (!seen) resources.push_back(served.info);
  }
  for (const auto& info : resources) {
    const core::GroupResource gr{info.resource.group, info.resource.resource};
    const bool pods = gr.group.empty() && gr.resource == "pods";
    if (!pods && remaining_by_resource.contains("pods.")) break;  // pods go first
    // estimateGracefulTermination: the longest grace period of the Pods not yet terminal, or 0
    // once that long has passed since the namespace's deletion.
    std::int64_t gvr_estimate = 0;
    const std::vector<json> items = store_.list(gr, name);
    if (pods) {
      for (const auto& pod : items) {
        const std::string phase = str(pod, "status", "phase");
        if (phase == "Succeeded" || phase == "Failed") continue;
        const json* spec = pod.contains("spec") ? &pod["spec"] : nullptr;
        if (spec != nullptr && spec->is_object() && spec->contains("terminationGracePeriodSeconds") &&
            (*spec)["terminationGracePeriodSeconds"].is_number_integer()) {
          gvr_estimate = std::max(gvr_estimate,
                                  (*spec)["terminationGracePeriodSeconds"].get<std::int64_t>());
        }
      }
      if (now - deleted_at >= std::chrono::seconds(gvr_estimate)) gvr_estimate = 0;
    }
    for (const auto& item : items) {
      WriteRequest request;
      request.operation = std::string(kOperationDelete);
      request.verb = "deletecollection";
      request.resource = info.resource;
      request.namespace_name = name;
      request.name = str(item, "metadata", "name");
      request.options = json{{"kind", "DeleteOptions"},
                             {"apiVersion", "meta.k8s.io/v1"},
                             {"propagationPolicy", "Background"}};
      request.request_uri = collectionUri(info, name);
      wrote = true;
      auto result = write(std::move(request));
      if (!result.allowed && result.status && result.status->code != 404) {
        delete_errors.push_back(result.status->message);
      }
    }
    const std::vector<json> left = store_.list(gr, name);
    if (!left.empty()) {
      std::map<std::string, int> finalizer_counts;
      for (const auto& item : left) {
        for (const auto& f : stringList(item, "metadata", "finalizers")) ++finalizer_counts[f];
      }
      remaining_by_resource[gr.resource + "." + gr.group] = static_cast<int>(left.size());
      for (const auto& [f, n] : finalizer_counts) remaining_by_finalizer[f] += n;
      if (gvr_estimate == 0 && !finalizer_counts.empty()) {
        gvr_estimate = kFinalizerEstimateSeconds;
      }
    }
    estimate = std::max(estimate, gvr_estimate);
  }

  std::map<std::string, NewCondition> failing;
  if (!delete_errors.empty()) {
    std::sort(delete_errors.begin(), delete_errors.end());
    std::string joined;
    for (const auto& e : delete_errors) joined += (joined.empty() ? "" : ", ") + e;
    failing["NamespaceDeletionContentFailure"] = {
        "True", "ContentDeletionFailed",
        fmt::format("Failed to delete all resource types, {} remaining: {}", delete_errors.size(),
                    joined)};
  }
  if (!remaining_by_resource.empty() && !remaining_by_resource.contains("pods.")) {
    // ProcessContentTotals (not reached while Pods remain: deleteAllContent returns before).
    std::string text;
    for (const auto& [resource, n] : remaining_by_resource) {
      text += fmt::format("{}{} has {} resource instances", text.empty() ? "" : ", ", resource, n);
    }
    failing["NamespaceContentRemaining"] = {"True", "SomeResourcesRemain",
                                            "Some resources are remaining: " + text};
  }
  if (!remaining_by_finalizer.empty() && !remaining_by_resource.contains("pods.")) {
    std::string text;
    for (const auto& [finalizer, n] : remaining_by_finalizer) {
      text += fmt::format("{}{} in {} resource instances", text.empty() ? "" : ", ", finalizer, n);
    }
    failing["NamespaceFinalizersRemaining"] = {
        "True", "SomeFinalizersRemain",
        "Some content in the namespace has finalizers remaining: " + text};
  }
  json with_conditions = ns;
  if (updateConditions(with_conditions, failing, rfc3339(now))) {
    auto result = namespaceWrite("status", with_conditions);
    if (result.allowed && result.object) ns = *result.object;
  }
  if (estimate > 0 || !delete_errors.empty()) {
    // ResourcesRemainingError: AddAfter(estimate/2 + 1 s); other errors: the rate limiter's
    // requeue (its first delay, 5 ms, is not worth waiting for here: the next change or pass).
    requeue_[uid] = now + std::chrono::seconds(estimate / 2 + 1);
    return wrote;
  }
  if (!remaining_by_resource.empty()) {
    // "unexpected items still remain": the rate-limited requeue.
    requeue_[uid] = now + std::chrono::seconds(1);
    return wrote;
  }

  // finalizeNamespace: spec.finalizers without ours (a sorted set), PUT to /finalize.
  std::set<std::string> rest;
  for (const auto& f : stringList(ns, "spec", "finalizers")) {
    if (f != kFinalizerToken) rest.insert(f);
  }
  json finalized = ns;
  finalized["spec"]["finalizers"] = json(std::vector<std::string>(rest.begin(), rest.end()));
  namespaceWrite("finalize", finalized);
  return wrote;
}

}  // namespace harness::sim::controllers
