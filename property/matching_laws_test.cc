// The chain's matching agrees with an independent restatement of kube-apiserver's rules on
// generated webhook configurations and requests (webhook_sets.h): which webhooks are called, in
// which order, and with which resource and kind (matchPolicy Equivalent).
//
// The restatement below is written from the upstream predicates, clause by clause, without the
// simulator's code (only the label selector is shared: property/selector_laws_test.cc checks it
// against its own reference):
//   k8s.io/apiserver pkg/admission/plugin/webhook/generic/webhook.go   ShouldCallHook
//   .../webhook/predicates/rules/rules.go                               Matcher (scope, operation,
//                                                                       group, version, resource)
//   .../webhook/predicates/namespace/matcher.go                         MatchNamespaceSelector,
//                                                                       GetNamespaceLabels
//   .../webhook/predicates/object/matcher.go                            MatchObjectSelector
//   .../plugin/webhook/mutating/dispatcher.go, .../configuration/        configurations sorted by
//   mutating_webhook_manager.go                                         name, webhooks in order
//   pkg/apis/admissionregistration/v1/defaults.go                       matchPolicy Equivalent,
//                                                                       scope "*", selectors {}
//   pkg/apis/core/v1/defaults.go SetDefaults_Namespace                  kubernetes.io/metadata.name

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "harness/core/label_selector.h"
#include "harness/core/metrics.h"
#include "harness/core/webhook_config.h"
#include "harness/property/webhook_sets.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/caller.h"
#include "harness/sim/store.h"

namespace harness::property {
namespace {

using nlohmann::json;

struct Resource {
  std::string group, version, resource;
  bool operator==(const Resource&) const = default;
};

// The restatement's equivalence table for the generated resources: resources stored together,
// in the order kube-apiserver installs their groups (extensions before apps; apps' preferred
// version first), as runtime.EquivalentResourceMapper returns them.
std::vector<Resource> equivalentsOf(const Resource& resource) {
  if (resource.resource == "deployments" &&
      (resource.group == "apps" || resource.group == "extensions")) {
    return {{"extensions", "v1beta1", "deployments"},
            {"apps", "v1", "deployments"},
            {"apps", "v1beta2", "deployments"},
            {"apps", "v1beta1", "deployments"}};
  }
  return {resource};
}

bool contains(const json& list, const std::string& value) {
  for (const auto& item : list) {
    if (item == value || item == "*") return true;
  }
  return false;
}

// rules.Matcher: all five clauses.
bool ruleMatches(const json& rule, const std::string& operation, const Resource& resource,
                 const std::string& namespace_name) {
  const std::string scope = rule.value("scope", "*");
  const bool is_namespaces = resource.group.empty() && resource.version == "v1" &&
                             resource.resource == "namespaces";
  if (scope == "Namespaced" && (is_namespaces || namespace_name.empty())) return false;
  if (scope == "Cluster" && !(is_namespaces || namespace_name.empty())) return false;
  if (!contains(rule["operations"], operation)) return false;
  if (!contains(rule["apiGroups"], resource.group)) return false;
  if (!contains(rule["apiVersions"], resource.version)) return false;
  for (const std::string entry : rule["resources"]) {
    const auto slash = entry.find('/');
    const std::string res = entry.substr(0, slash);
    const std::string sub = slash == std::string::npos ? "" : entry.substr(slash + 1);
    // The generated requests have no subresource.
    if ((res == "*" || res == resource.resource) && (sub == "*" || sub.empty())) return true;
  }
  return false;
}

bool selectorMatches(const json& webhook, const char* field, const json& labels) {
  if (!webhook.contains(field)) return true;  // defaulted to {}
  const auto selector = core::LabelSelector::parse(webhook[field]);
  return selector.ok() && selector->matches(labels.get<core::Labels>());
}

json labelsOf(const json& object) {
  if (!object.is_object()) return json::object();
  return object.value("metadata", json::object()).value("labels", json::object());
}

// A Namespace as kube-apiserver decodes and stores it: with the name label defaulted.
json defaultedNamespace(json ns) {
  ns["metadata"]["labels"]["kubernetes.io/metadata.name"] = ns["metadata"]["name"];
  return ns;
}

struct ExpectedCall {
  std::string webhook;
  Resource resource;  // the invocation's resource
  std::string kind;   // "group/version, Kind=X"
};

std::string kindFor(const Resource& resource) {
  const std::string kind = resource.resource == "configmaps"    ? "ConfigMap"
                           : resource.resource == "secrets"     ? "Secret"
                           : resource.resource == "pods"        ? "Pod"
                           : resource.resource == "deployments" ? "Deployment"
                           : resource.resource == "namespaces"  ? "Namespace"
                                                                : "Node";
  return resource.group + "/" + resource.version + ", Kind=" + kind;
}

// ShouldCallHook, restated.
std::optional<ExpectedCall> restatedCall(const json& webhook, const GeneratedRequest& request,
                                         const std::vector<json>& stored_namespaces) {
  const Resource requested{request.group, request.version, request.resource};
  // namespaceSelector: cluster-scoped requests other than on namespaces always match; for a
  // namespace's own CREATE/UPDATE the (defaulted) object's labels, else the stored namespace's.
  if (!(request.namespace_name.empty() && request.resource != "namespaces")) {
    json labels;
    if (request.resource == "namespaces" && request.operation != "DELETE") {
      labels = labelsOf(defaultedNamespace(request.object));
    } else {
      for (const auto& ns : stored_namespaces) {
        if (ns["metadata"]["name"] == request.namespace_name) labels = labelsOf(ns);
      }
    }
    if (!selectorMatches(webhook, "namespaceSelector", labels)) return std::nullopt;
  }
  // objectSelector: the object or the old object (a namespace object as defaulted).
  if (webhook.contains("objectSelector") && !webhook["objectSelector"].empty()) {
    auto defaulted = [&](const json& object) {
      return object.is_object() && request.resource == "namespaces" ? defaultedNamespace(object)
                                                                     : object;
    };
    const bool new_matches = request.object.is_object() &&
                             selectorMatches(webhook, "objectSelector",
                                             labelsOf(defaulted(request.object)));
    const bool old_matches = request.old_object.is_object() &&
                             selectorMatches(webhook, "objectSelector",
                                             labelsOf(defaulted(request.old_object)));
    if (!new_matches && !old_matches) return std::nullopt;
  }
  for (const auto& rule : webhook["rules"]) {
    if (ruleMatches(rule, request.operation, requested, request.namespace_name)) {
      return ExpectedCall{webhook["name"], requested, kindFor(requested)};
    }
  }
  if (webhook.value("matchPolicy", "Equivalent") != "Equivalent") return std::nullopt;
  const auto equivalents = equivalentsOf(requested);
  for (const auto& rule : webhook["rules"]) {
    for (const auto& equivalent : equivalents) {
      if (equivalent == requested) continue;
      if (ruleMatches(rule, request.operation, equivalent, request.namespace_name)) {
        return ExpectedCall{webhook["name"], equivalent, kindFor(equivalent)};
      }
    }
  }
  return std::nullopt;
}

// Every call, restated: mutating configurations sorted by name (webhooks in their order), then
// the validating ones (called in parallel; compared as a set).
std::vector<ExpectedCall> restatedCalls(const WebhookSet& set, const GeneratedRequest& request,
                                        bool mutating) {
  std::vector<json> configurations;
  for (const auto& c : set.configurations) {
    if ((c["kind"] == "MutatingWebhookConfiguration") == mutating) configurations.push_back(c);
  }
  std::sort(configurations.begin(), configurations.end(), [](const json& a, const json& b) {
    return a["metadata"]["name"].get<std::string>() < b["metadata"]["name"].get<std::string>();
  });
  std::vector<json> namespaces;
  namespaces.reserve(set.namespaces.size());
  for (const auto& ns : set.namespaces) namespaces.push_back(defaultedNamespace(ns));
  std::vector<ExpectedCall> calls;
  for (const auto& c : configurations) {
    for (const auto& webhook : c["webhooks"]) {
      if (auto call = restatedCall(webhook, request, namespaces)) calls.push_back(*call);
    }
  }
  return calls;
}

std::string describe(const ExpectedCall& call) {
  return call.webhook + " as " + call.resource.group + "/" + call.resource.version + " " +
         call.resource.resource + " (" + call.kind + ")";
}

std::vector<std::string> describeAll(const std::vector<ExpectedCall>& calls, bool sorted) {
  std::vector<std::string> out;
  out.reserve(calls.size());
  for (const auto& call : calls) out.push_back(describe(call));
  if (sorted) std::sort(out.begin(), out.end());
  return out;
}

std::string kindText(const core::GroupVersionKind& kind) {
  return kind.group + "/" + kind.version + ", Kind=" + kind.kind;
}

// The simulator's calls for the request (every webhook answers allowed without a patch).
std::vector<ExpectedCall> simulatedCalls(const WebhookSet& set, const GeneratedRequest& request,
                                         bool mutating, std::string* rejection) {
  sim::ObjectStore store;
  sim::InProcessWebhookCaller caller;
  core::MetricsRegistry metrics;
  sim::ChainOptions options;
  options.time_scale = 0;
  options.plugins.clear();
  for (const auto& ns : set.namespaces) store.put({"", "namespaces"}, defaultedNamespace(ns));
  sim::AdmissionChain chain(store, caller, metrics, options);
  // The old object is stored as kube-apiserver stores it (defaulted), by a create through the
  // chain before any webhook configuration exists.
  const std::string stored_in = request.resource == "namespaces" ? "" : request.namespace_name;
  if (request.old_object.is_object() &&
      !store.get({request.group, request.resource}, stored_in, request.name)) {
    sim::WriteRequest create;
    create.operation = "CREATE";
    create.resource = {request.group, request.version, request.resource};
    create.namespace_name = stored_in;
    create.name = request.name;
    create.object = request.old_object;
    const auto created = chain.handle(create);
    RC_ASSERT(created.allowed);
  }
  for (auto configuration : set.configurations) {
    for (auto& webhook : configuration["webhooks"]) {
      webhook["clientConfig"] = {{"url", "https://" + webhook["name"].get<std::string>() + "/"}};
    }
    // Only configurations kube-apiserver would accept (the generator keeps to them).
    auto parsed = core::parseWebhookConfiguration(configuration);
    RC_ASSERT(parsed.ok());
    core::applyV1Defaults(*parsed);
    const auto errors = core::validateWebhookConfiguration(*parsed);
    if (!errors.empty()) RC_LOG() << core::invalidConfigurationMessage(*parsed, errors) << "\n";
    RC_ASSERT(errors.empty());
    const bool is_mutating = configuration["kind"] == "MutatingWebhookConfiguration";
    store.put({"admissionregistration.k8s.io",
               is_mutating ? "mutatingwebhookconfigurations" : "validatingwebhookconfigurations"},
              configuration);
  }
  caller.handle("https://", [](const core::AdmissionReview& review) {
    core::AdmissionResponse response;
    response.uid = review.request->uid;
    response.allowed = true;
    return std::optional(core::AdmissionReview{review.api_version, review.kind, std::nullopt,
                                               response});
  });
  sim::WriteRequest write;
  write.operation = request.operation;
  write.resource = {request.group, request.version, request.resource};
  write.namespace_name = request.namespace_name;
  write.name = request.name;
  if (request.object.is_object()) write.object = request.object;
  write.dry_run = true;
  const auto result = chain.handle(write);
  if (!result.allowed && rejection) {
    *rejection = result.status ? result.status->message : "rejected";
  }
  std::vector<ExpectedCall> calls;
  for (const auto& call : result.calls) {
    if ((call.kind == core::WebhookKind::kMutating) != mutating) continue;
    const auto& invocation = call.invocation;
    calls.push_back({call.webhook,
                     {invocation.resource.group, invocation.resource.version,
                      invocation.resource.resource},
                     kindText(invocation.kind)});
  }
  return calls;
}

RC_GTEST_PROP(MatchingLaws, TheChainCallsWhatTheRestatedRulesSelect, ()) {
  const auto set = *genWebhookSet({});
  bool any_called = false;
  for (const auto& request : *genRequests(set)) {
    RC_LOG() << "request: ";
    showValue(request, RC_LOG());
    std::string rejection;
    const auto mutating = simulatedCalls(set, request, true, &rejection);
    RC_LOG() << "rejection: " << rejection << "\n";
    // Every webhook allows without a patch and every generated object is valid: nothing rejects.
    RC_ASSERT(rejection.empty());
    RC_ASSERT(describeAll(mutating, false) ==
              describeAll(restatedCalls(set, request, true), false));
    const auto validating = simulatedCalls(set, request, false, nullptr);
    RC_ASSERT(describeAll(validating, true) ==
              describeAll(restatedCalls(set, request, false), true));
    any_called = any_called || !mutating.empty() || !validating.empty();
  }
  RC_TAG(any_called ? "some called" : "none called");
}

// The generators reach every matching clause (so that the law above is not vacuous): over a
// fixed number of generated cases, webhooks are called and skipped, some through matchPolicy
// Equivalent, some on namespaces and cluster-scoped requests.
TEST(MatchingLaws, GeneratedCasesCoverTheClauses) {
  int called = 0, skipped = 0, equivalent = 0, namespaces = 0, cluster = 0;
  const auto cases = rc::gen::exec([] {
    const auto set = *genWebhookSet({});
    return std::pair(set, *genRequests(set));
  });
  for (int seed = 0; seed < 200; ++seed) {
    const auto [set, requests] = cases(rc::Random(seed), 30).value();
    for (const auto& request : requests) {
      const auto calls = restatedCalls(set, request, true);
      std::size_t webhooks = 0;
      for (const auto& c : set.configurations) {
        if (c["kind"] == "MutatingWebhookConfiguration") webhooks += c["webhooks"].size();
      }
      called += static_cast<int>(calls.size());
      skipped += static_cast<int>(webhooks - calls.size());
      for (const auto& call : calls) {
        if (call.resource.version != request.version || call.resource.group != request.group) {
          ++equivalent;
        }
        if (request.resource == "namespaces") ++namespaces;
        if (request.resource == "nodes") ++cluster;
      }
    }
  }
  EXPECT_GT(called, 100);
  EXPECT_GT(skipped, 100);
  EXPECT_GT(equivalent, 5);
  EXPECT_GT(namespaces, 5);
  EXPECT_GT(cluster, 5);
}

}  // namespace
}  // namespace harness::property
