#pragma once

// rapidcheck generators of admission webhook configurations and of the requests they are matched
// against: the matching law (property/matching_laws_test.cc) and the simulator-versus-real
// kube-apiserver law (property/sim_vs_kube_laws_test.cc) draw from them.
//
// A webhook set is one to three Mutating/ValidatingWebhookConfigurations (names drawn in random
// byte order, so that the configuration order varies) of one to three webhooks each, with random
// rules (operations, groups, versions, resources with subresource wildcards, scope),
// namespaceSelector and objectSelector (absent, {}, matchLabels or matchExpressions over a small
// label alphabet), matchPolicy, failurePolicy, reinvocationPolicy, timeoutSeconds and, when CEL
// is available, matchConditions; and three namespaces with labels from the same alphabet.
// Requests create, update and delete ConfigMaps, Secrets, Pods, Deployments, Namespaces and
// Nodes, so that namespaced, cluster-scoped and `namespaces` requests all occur.
//
// Webhooks are generated without clientConfig: the caller points them at its endpoints (an
// in-process caller's URLs, or a scenario's stubs) through `WebhookSet::endpoint_of`.

#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include <rapidcheck.h>

#include <nlohmann/json.hpp>

namespace harness::property {

struct WebhookSetOptions {
  // Rules may name versions only the simulator's resource table still serves
  // (extensions/v1beta1 and apps/v1beta1 deployments, which matchPolicy Equivalent maps to):
  // true for in-process laws, false where the real kube-apiserver v1.37.2 must agree.
  bool legacy_versions = true;
  // matchConditions (CEL) on some webhooks: only where an evaluator is available.
  bool match_conditions = false;
  // The behaviours a webhook's endpoint may have (scenario stubs); empty: every webhook is
  // "allow". See kEndpointBehaviours.
  bool varied_endpoints = false;
};

// What a generated webhook's endpoint does (sim_vs_kube_laws_test.cc turns each into a stub):
//   allow    answers allowed, no patch
//   labeler  allowed with a patch adding the label `gen-patched: "yes"` (CREATE and UPDATE)
//   deny-env allowed unless the object carries `env: prod`: then 403 "prod objects are refused"
//   broken   answers HTTP 500 with a body that is not a review (a calling error: failurePolicy)
inline const std::vector<std::string>& endpointBehaviours() {
  static const std::vector<std::string> kBehaviours = {"allow", "labeler", "deny-env", "broken"};
  return kBehaviours;
}

struct WebhookSet {
  std::vector<nlohmann::json> namespaces;      // v1 Namespaces gen-a, gen-b, gen-c
  std::vector<nlohmann::json> configurations;  // admissionregistration.k8s.io/v1, no clientConfig
  // Webhook name -> endpoint behaviour (endpointBehaviours()).
  std::map<std::string, std::string> endpoint_of;
};

// One request as a client sends it.
// The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant()
// into a throw it cannot reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct GeneratedRequest {
  std::string operation;  // CREATE, UPDATE, DELETE
  std::string group, version, resource;
  // "" for cluster-scoped resources; for `namespaces`, the namespace's own name.
  std::string namespace_name;
  std::string name;
  nlohmann::json object;      // the body (CREATE, UPDATE); null for DELETE
  nlohmann::json old_object;  // the stored object (UPDATE, DELETE); null for CREATE
};

rc::Gen<nlohmann::json> genRule(WebhookSetOptions options);
// A label selector over `keys` x `values`: absent (null), {}, matchLabels or matchExpressions
// (In, NotIn, Exists, DoesNotExist).
rc::Gen<nlohmann::json> genLabelSelector(const std::vector<std::string>& keys,
                                         const std::vector<std::string>& values);
rc::Gen<WebhookSet> genWebhookSet(WebhookSetOptions options);
// Two to eight requests in sequence: creates, then updates and deletes of objects an earlier
// request created (old_object as created) or of the set's namespaces. `create_namespaces` false:
// no Namespace is created (on a real cluster the serviceaccount controller then creates the new
// namespace's default ServiceAccount, a request of its own that reaches the webhooks at a moment
// the client does not control).
rc::Gen<std::vector<GeneratedRequest>> genRequests(const WebhookSet& set,
                                                   bool create_namespaces = true);

void showValue(const WebhookSet& set, std::ostream& os);
void showValue(const GeneratedRequest& request, std::ostream& os);

}  // namespace harness::property
