#pragma once

// `apiserver-sim explain --kubeconfig FILE [--context C] -f pod.yaml`: why (not) injected, for
// any cluster, without creating anything. Reads the cluster's webhook configurations, the
// object's Namespace and the injectors' ConfigMaps (Linkerd's linkerd-config, Istio's
// istio-sidecar-injector and mesh config `istio`), then narrates: each webhook in dispatch order,
// matched or skipped and the clause that decided (ShouldCallHook, matching.h, on the namespace's
// actual labels), and for a Linkerd or Istio injector webhook that would be called, the
// injector's own decision with its reasons: the project's injector (`injector inject --explain`)
// run offline on the cluster's own configuration, and when it injects, the patch its webhook would
// answer (`injector inject --patch`) as a diff on the object as sent.

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/core/webhook_config.h"
#include "harness/sim/admission_policy.h"
#include "harness/sim/explain.h"
#include "harness/sim/matching.h"
#include "harness/sim/report.h"

namespace harness::sim::live {

// What explain needs from the cluster, however it was read.
struct ClusterSnapshot {
  std::string source;  // "https://127.0.0.1:6443 (kubeconfig ..., context ...)"
  std::vector<core::WebhookConfiguration> configurations;
  // Namespaces by name (the object's, at least); a missing one is NotFound for the selector.
  std::map<std::string, nlohmann::json> namespaces;
  // "<namespace>/<name>" -> ConfigMap, for the injectors' configuration.
  std::map<std::string, nlohmann::json> config_maps;
  // Admission policies and bindings (ValidatingAdmissionPolicy, MutatingAdmissionPolicy and
  // their bindings, as stored, with apiVersion and kind), and the objects of every paramKind
  // they name, as the policy plugins' informers hold them.
  std::vector<nlohmann::json> policy_objects;
  std::vector<PolicyParamKind> params;
};

// Reads from a cluster: an object by REST path, nullopt on 404.
using ClusterGet =
    std::function<core::Result<std::optional<nlohmann::json>>(const std::string& path)>;

// The snapshot for explaining `object` in `namespace_name`: the configurations, the admission
// policies and bindings with their params (a kind the cluster does not serve has none), that
// Namespace, and the ConfigMaps of the Linkerd and Istio injectors the configurations call.
core::Result<ClusterSnapshot> readCluster(const ClusterGet& get, const std::string& namespace_name,
                                          std::string source);

// Which injector a webhook is, from its name and Service (Linkerd: linkerd-proxy-injector;
// Istio: *sidecar-injector.istio.io calling istiod[-<revision>]); nullopt for any other.
struct InjectorIdentity {
  std::string profile;  // "linkerd" or "istio"
  std::string control_plane_namespace;
  // The ConfigMaps that configure it: linkerd-config; istio-sidecar-injector[-rev] and
  // istio[-rev] (mesh config).
  std::vector<std::string> config_maps;
};
std::optional<InjectorIdentity> identifyInjector(const core::Webhook& webhook);

struct LiveExplainOptions {
  ExplainOptions explain;
  MatchConditionEvaluator evaluator;  // empty: matchConditions are reported as not evaluated
  std::string cel_unavailable_reason;
  std::filesystem::path injector_binary;  // empty: findInjectorBinary()
  std::filesystem::path work_dir;         // for the injector's input files (exists)
  // The policy plugins' decisions (kube-cel); empty: policies are listed and not evaluated, with
  // cel_unavailable_reason.
  ValidatingPolicyDispatcher validating_policies;
  MutatingPolicyDispatcher mutating_policies;
};

struct LiveExplanation {
  std::string text;
  nlohmann::json json;
  bool would_inject = false;  // an injector webhook would be called and its decision is inject
};

// Narrates the CREATE of `object` in `namespace_name` (the object's own namespace wins), in the
// order kube-apiserver's admission meets each step (k8s.io/kubernetes
// pkg/kubeapiserver/options/plugins.go AllOrderedPlugins): MutatingAdmissionPolicy, the mutating
// webhooks, ValidatingAdmissionPolicy, the validating webhooks. Each policy binding: matched or
// not (its matchConstraints, the binding's matchResources and matchConditions, decided by the
// plugin's own matcher through a probe policy; when not, the part that excluded the request,
// found with one probe per part, and its clause: namespaceSelector against the namespace's
// labels, objectSelector, excludeResourceRules, resourceRules with resourceNames and
// matchPolicy, the matchCondition that is false, or a paramRef that selects nothing), then the
// plugin's decision on the object as sent (denied with its message, warnings, the mutation as a
// diff).
core::Result<LiveExplanation> explainCreate(const ClusterSnapshot& cluster,
                                            const nlohmann::json& object,
                                            const std::string& namespace_name,
                                            const LiveExplainOptions& options);

// The explanation as a report for `apiserver-sim report --kubeconfig` (html_report.h): one
// scenario named after the cluster, one step for the request (failed when a policy denies it),
// whose explain JSON is the live explanation's in the shape of a scenario step's
// (explainStepJson) with "source": "live": the webhooks that would be called, with no call (none
// is made) and the injectors' decisions and predicted patches; the policies in their phases;
// "result" says nothing was sent, or the policy's denial.
RunReport liveReport(const LiveExplanation& explanation, const std::string& object_file);

}  // namespace harness::sim::live
