#pragma once

// CEL for the simulator, evaluated by Kubernetes' own code: kube-cel (kube/cmd/kube-cel, built by
// scripts/build-kube.sh from the Kubernetes version pinned in kube/go.mod) runs as a helper
// process speaking JSON lines. The simulator never evaluates CEL itself.
//
// Why a process and not a Go c-archive linked in: the simulator stays free of the Go runtime (its
// signal handlers and threads inside a C++ process), builds and runs without Go, and a crash or
// a runaway expression in the helper cannot take the simulator down; one pipe round trip per
// webhook (all its conditions at once) costs far less than the webhook call it guards.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/core/webhook_config.h"
#include "harness/sim/admission_policy.h"
#include "harness/sim/custom_resources.h"
#include "harness/sim/matching.h"

namespace harness::process {
class ChildProcess;
}

namespace harness::sim::cel {

// One kube-cel process. Calls are serialised (one request line, one response line).
class KubeCel {
 public:
  // $HARNESS_KUBE_BIN_DIR/kube-cel when that variable is set, else build/kube/bin/kube-cel in
  // the source tree this was built from.
  static std::filesystem::path defaultBinary();

  // Starts the helper (stderr to `log_file`) and asks its version. Errors: "kube-cel is not built
  // (<path>; bash scripts/build-kube.sh builds it, with Go 1.26)", or the start or handshake
  // failure with the log's tail.
  static core::Result<std::shared_ptr<KubeCel>> start(const std::filesystem::path& binary,
                                                      const std::filesystem::path& log_file);
  ~KubeCel();
  KubeCel(const KubeCel&) = delete;
  KubeCel& operator=(const KubeCel&) = delete;

  // One request and its response. A response {"error": ...} is returned as an error; so are a
  // helper that exited (with its exit status and log tail) and one that does not answer within
  // `timeout` (it is then stopped: later calls fail at once).
  core::Result<nlohmann::json> call(const nlohmann::json& request,
                                    std::chrono::milliseconds timeout = kDefaultTimeout);

  // "v1.37.2" and the CEL environment's compatibility version ("1.36").
  [[nodiscard]] const std::string& kubernetesVersion() const { return kubernetes_version_; }
  [[nodiscard]] const std::string& compatibilityVersion() const { return compatibility_version_; }
  // False once a call found the helper gone, garbled or too slow (it is then stopped).
  [[nodiscard]] bool healthy();

  // Far above any evaluation the apiserver's cost budgets allow (a quarter of a second for
  // matchConditions) and the first compilation (building the environment).
  static constexpr std::chrono::milliseconds kDefaultTimeout{30'000};

 private:
  KubeCel() = default;
  core::Result<nlohmann::json> callLocked(const std::string& line,
                                          std::chrono::milliseconds timeout);
  std::string failure(const std::string& what);

  std::unique_ptr<process::ChildProcess> child_;
  std::mutex mutex_;
  std::string pending_;  // bytes read after the last response line
  bool broken_ = false;
  std::string broken_reason_;
  std::string kubernetes_version_;
  std::string compatibility_version_;
};

// matchConditions evaluated by kube-cel for ShouldCallHook: one result per condition, as
// ConditionEvaluator.ForInput gives them (matching.h MatchConditionEvaluator). A failure of the
// helper or a filter error is thrown (ShouldCallHook applies the failurePolicy to it).
MatchConditionEvaluator matchConditionEvaluator(std::shared_ptr<KubeCel> cel);

// Create/update-time compilation of match conditions by kube-cel (core::MatchConditionCompiler).
core::MatchConditionCompiler matchConditionCompiler(std::shared_ptr<KubeCel> cel);

// For a simulator without kube-cel: every non-blank expression is a field.InternalError saying
// what is missing, so a configuration with matchConditions fails at load in one line.
core::MatchConditionCompiler unavailableCompiler(std::string reason);

// --- ValidatingAdmissionPolicy (admission_policies.cc) ---
// The plugin's decision per request, by kube-cel (validating.NewDispatcher(...).Dispatch with the
// request's policies, bindings, params and namespace). kube-cel's failures are thrown.
ValidatingPolicyDispatcher validatingPolicyDispatcher(std::shared_ptr<KubeCel> cel);
// The kube-cel request for one dispatch (exposed for the benchmark and the tests).
nlohmann::json validatingPolicyRequest(const ValidatingPolicyInput& input,
                                       const AdmissionAttributes& attributes);
// --- MutatingAdmissionPolicy (admission_policies.cc) ---
// The plugin's pass per request and round, by kube-cel (mutating.NewDispatcher(...).Dispatch).
MutatingPolicyDispatcher mutatingPolicyDispatcher(const std::shared_ptr<KubeCel>& cel);
nlohmann::json mutatingPolicyRequest(const PolicyInput& input,
                                     const AdmissionAttributes& attributes,
                                     const MutatingPolicyRound& round);
// Create/update of policies and bindings by the registry's strategy (validation, defaults).
PolicyObjectAdmitter policyObjectAdmitter(std::shared_ptr<KubeCel> cel);
// The admission policy plugins' metrics kube-cel recorded (apiserver_validating_admission_policy_*
// and apiserver_mutating_admission_policy_*, upstream's names and labels), in Prometheus' text
// format; empty when kube-cel fails (the rest of /metrics is still served).
std::function<std::string()> policyMetricsText(std::shared_ptr<KubeCel> cel);
// Without kube-cel: every policy or binding is refused, naming what is missing.
PolicyObjectAdmitter unavailablePolicyAdmitter(std::string reason);
// The status kube-controller-manager's ValidatingAdmissionPolicy status controller writes for a
// policy (kube-cel's typeCheckValidatingPolicy: validating.TypeChecker over the generated OpenAPI
// schemas and a REST mapper of core::builtinResources()); nullopt when the generation is not
// past status.observedGeneration. kube-cel's failures are thrown.
std::function<std::optional<nlohmann::json>(const nlohmann::json& policy)> policyStatusWriter(
    std::shared_ptr<KubeCel> cel);

// CustomResourceDefinitions and custom resources by apiextensions-apiserver's code (kube-cel's
// admitCustomResourceDefinition, admitCustomResource, customResourceDefinitionStatus and
// customResourceTable); kube-cel's failures are thrown.
CustomResourceCode customResourceCode(const std::shared_ptr<KubeCel>& cel);

// --- the process's CEL ---
// One kube-cel serves a whole simulator process. Installing it sets the compiler configuration
// validation uses (core::setMatchConditionCompiler) and the evaluator every admission chain
// starts with (processMatchConditionEvaluator). Install before starting threads that validate
// or admit; uninstall (nullptr) after they stopped.
void install(std::shared_ptr<KubeCel> cel);
// No kube-cel: configurations with matchConditions are refused at load with `reason`.
void installUnavailable(std::string reason);
// Why CEL is unavailable, after installUnavailable; nullopt otherwise.
std::optional<std::string> unavailableReason();
// The installed evaluator; empty when none is installed.
MatchConditionEvaluator processMatchConditionEvaluator();
// The installed policy dispatcher (empty when none) and policy object admitter (the unavailable
// one after installUnavailable, empty when nothing is installed).
ValidatingPolicyDispatcher processValidatingPolicyDispatcher();
MutatingPolicyDispatcher processMutatingPolicyDispatcher();
PolicyObjectAdmitter processPolicyObjectAdmitter();
// The installed kube-cel's custom resource code; without one, its `unavailable` says why.
CustomResourceCode processCustomResourceCode();
// The installed kube-cel's policy metrics (empty function when none is installed).
std::function<std::string()> processPolicyMetrics();
// The RBAC objects kube-apiserver creates at start, from Kubernetes' bootstrappolicy (kube-cel op
// bootstrapPolicy; asked once, then cached): {"clusterRoles", "clusterRoleBindings", "roles",
// "roleBindings"}, the same shared answer on every call. Empty function when no kube-cel is
// installed.
std::function<core::Result<std::shared_ptr<const nlohmann::json>>()> processBootstrapPolicy();

// Starts KubeCel::defaultBinary() (log in the system temp directory, removed when it stops
// cleanly) and installs it, or installs the unavailable compiler when it is not built. Holds it
// until destroyed, then uninstalls and stops it.
class ProcessCel {
 public:
  ProcessCel();
  ~ProcessCel();
  ProcessCel(const ProcessCel&) = delete;
  ProcessCel& operator=(const ProcessCel&) = delete;
  // One line: "kube-cel v1.37.2 (CEL 1.36)" or why CEL is unavailable.
  [[nodiscard]] const std::string& status() const { return status_; }
  [[nodiscard]] bool available() const { return cel_ != nullptr; }
  // The running kube-cel, or null.
  [[nodiscard]] std::shared_ptr<KubeCel> kubeCel() const { return cel_; }

 private:
  std::shared_ptr<KubeCel> cel_;
  std::filesystem::path log_;
  std::string status_;
};

// controller.ComputeHash by kube-cel (op podTemplateHash): the pod-template-hash a cluster's
// deployment controller gives the ReplicaSet of `template_spec` (a Deployment's
// spec.template) with its status.collisionCount. Errors (a template Go cannot decode, kube-cel
// gone) are returned as such.
using PodTemplateHasher = std::function<core::Result<std::string>(
    const nlohmann::json& template_spec, std::optional<std::int32_t> collision_count)>;
PodTemplateHasher podTemplateHasher(std::shared_ptr<KubeCel> cel);

// A request body in Kubernetes' protobuf encoding decoded by kube-cel (op decodeProtobuf) into
// the object's JSON; an error with code kDecode when the body does not decode (the decoder's
// message), another when kube-cel failed.
std::function<core::Result<nlohmann::json>(const std::string& body)> protobufDecoder(
    std::shared_ptr<KubeCel> cel);

// The JSON kube-cel reads for admission.Attributes, and for the user in them.
nlohmann::json attributesJson(const AdmissionAttributes& attributes);
nlohmann::json userInfoJson(const core::UserInfo& user);

}  // namespace harness::sim::cel
