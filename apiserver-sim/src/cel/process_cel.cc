// The process's CEL: one kube-cel, its compiler installed for validation and its evaluator for
// the admission chains.

#include <unistd.h>

#include <mutex>
#include <system_error>

#include <fmt/format.h>

#include "harness/core/process_slot.h"
#include "harness/sim/cel.h"
#include "harness/sim/go_types.h"

namespace harness::sim::cel {

namespace {

// What install sets, replaced as a whole so that a request never reads half of one installation.
struct Installed {
  MatchConditionEvaluator evaluator;
  ValidatingPolicyDispatcher validating;
  MutatingPolicyDispatcher mutating;
  PolicyObjectAdmitter admitter;
  CustomResourceCode custom_resources;
  std::function<std::string()> metrics;
  std::function<core::Result<std::shared_ptr<const nlohmann::json>>()> bootstrap_policy;
  std::optional<std::string> unavailable_reason;
};

// kube-cel's bootstrapPolicy answer, asked once per kube-cel (the policy is the binary's).
std::function<core::Result<std::shared_ptr<const nlohmann::json>>()> bootstrapPolicyOf(
    std::shared_ptr<KubeCel> cel) {
  struct Cache {
    std::mutex mutex;
    std::shared_ptr<const nlohmann::json> policy;
  };
  return [cel = std::move(cel), cache = std::make_shared<Cache>()]()
             -> core::Result<std::shared_ptr<const nlohmann::json>> {
    std::lock_guard lock(cache->mutex);
    if (cache->policy) return cache->policy;
    auto response = cel->call({{"op", "bootstrapPolicy"}});
    if (!response) return response.error();
    if (!response->is_object() || !response->contains("clusterRoles")) {
      return core::makeError("kube-cel answered bootstrapPolicy without clusterRoles: " +
                             response->dump().substr(0, 200));
    }
    cache->policy = std::make_shared<const nlohmann::json>(std::move(*response));
    return cache->policy;
  };
}

core::ProcessSlot<Installed>& installed() {
  static core::ProcessSlot<Installed> slot;
  return slot;
}

}  // namespace

void install(std::shared_ptr<KubeCel> cel) {
  if (!cel) {
    core::setMatchConditionCompiler({});
    setPodUpdateValidator({});
    installed().set({});
    return;
  }
  core::setMatchConditionCompiler(matchConditionCompiler(cel));
  setPodUpdateValidator(podUpdateValidator(cel));
  Installed next;
  next.metrics = policyMetricsText(cel);
  next.bootstrap_policy = bootstrapPolicyOf(cel);
  next.validating = validatingPolicyDispatcher(cel);
  next.mutating = mutatingPolicyDispatcher(cel);
  next.admitter = policyObjectAdmitter(cel);
  next.custom_resources = customResourceCode(cel);
  next.evaluator = matchConditionEvaluator(std::move(cel));
  installed().set(std::move(next));
}

void installUnavailable(std::string reason) {
  core::setMatchConditionCompiler(unavailableCompiler(reason));
  setPodUpdateValidator({});
  Installed next;
  next.admitter = unavailablePolicyAdmitter(reason);
  next.custom_resources.unavailable = reason;
  next.unavailable_reason = std::move(reason);
  installed().set(std::move(next));
}

std::optional<std::string> unavailableReason() {
  return installed().get(&Installed::unavailable_reason);
}

MatchConditionEvaluator processMatchConditionEvaluator() {
  return installed().get(&Installed::evaluator);
}

ValidatingPolicyDispatcher processValidatingPolicyDispatcher() {
  return installed().get(&Installed::validating);
}

MutatingPolicyDispatcher processMutatingPolicyDispatcher() {
  return installed().get(&Installed::mutating);
}

PolicyObjectAdmitter processPolicyObjectAdmitter() { return installed().get(&Installed::admitter); }

CustomResourceCode processCustomResourceCode() {
  return installed().get(&Installed::custom_resources);
}

std::function<std::string()> processPolicyMetrics() { return installed().get(&Installed::metrics); }

std::function<core::Result<std::shared_ptr<const nlohmann::json>>()> processBootstrapPolicy() {
  return installed().get(&Installed::bootstrap_policy);
}

ProcessCel::ProcessCel() {
  std::error_code ec;
  log_ = std::filesystem::temp_directory_path(ec) / fmt::format("kube-cel-{}.log", ::getpid());
  auto cel = KubeCel::start(KubeCel::defaultBinary(), log_);
  if (!cel) {
    status_ = cel.error().message;
    installUnavailable(status_);
    std::filesystem::remove(log_, ec);
    return;
  }
  cel_ = std::move(cel).value();
  status_ = fmt::format("kube-cel {} (CEL environment {})", cel_->kubernetesVersion(),
                        cel_->compatibilityVersion());
  install(cel_);
}

ProcessCel::~ProcessCel() {
  install(nullptr);
  const bool healthy = cel_ && cel_->healthy();
  cel_.reset();
  std::error_code ec;
  if (healthy || !std::filesystem::exists(log_, ec) || std::filesystem::file_size(log_, ec) == 0) {
    std::filesystem::remove(log_, ec);
  }
}

}  // namespace harness::sim::cel
