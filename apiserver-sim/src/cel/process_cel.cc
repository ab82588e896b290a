// The process's CEL: one kube-cel, its compiler installed for validation and its evaluator for
// the admission chains.

#include <unistd.h>

#include <mutex>
#include <system_error>

#include <fmt/format.h>

#include "harness/sim/cel.h"
#include "harness/sim/go_types.h"

namespace harness::sim::cel {

namespace {

std::mutex& installedMutex() {
  static std::mutex mutex;
  return mutex;
}

MatchConditionEvaluator& installedEvaluator() {
  static MatchConditionEvaluator evaluator;
  return evaluator;
}

ValidatingPolicyDispatcher& installedPolicyDispatcher() {
  static ValidatingPolicyDispatcher dispatcher;
  return dispatcher;
}

MutatingPolicyDispatcher& installedMutatingDispatcher() {
  static MutatingPolicyDispatcher dispatcher;
  return dispatcher;
}

PolicyObjectAdmitter& installedPolicyAdmitter() {
  static PolicyObjectAdmitter admitter;
  return admitter;
}

std::function<std::string()>& installedPolicyMetrics() {
  static std::function<std::string()> metrics;
  return metrics;
}

std::optional<std::string>& missingReason() {
  static std::optional<std::string> reason;
  return reason;
}

}  // namespace

void install(std::shared_ptr<KubeCel> cel) {
  std::lock_guard lock(installedMutex());
  missingReason().reset();
  if (!cel) {
    core::setMatchConditionCompiler({});
    installedEvaluator() = {};
    installedPolicyDispatcher() = {};
    installedMutatingDispatcher() = {};
    installedPolicyAdmitter() = {};
    installedPolicyMetrics() = {};
    setPodUpdateValidator({});
    return;
  }
  installedPolicyMetrics() = policyMetricsText(cel);
  core::setMatchConditionCompiler(matchConditionCompiler(cel));
  installedPolicyDispatcher() = validatingPolicyDispatcher(cel);
  installedMutatingDispatcher() = mutatingPolicyDispatcher(cel);
  installedPolicyAdmitter() = policyObjectAdmitter(cel);
  setPodUpdateValidator(podUpdateValidator(cel));
  installedEvaluator() = matchConditionEvaluator(std::move(cel));
}

void installUnavailable(std::string reason) {
  std::lock_guard lock(installedMutex());
  core::setMatchConditionCompiler(unavailableCompiler(reason));
  installedEvaluator() = {};
  installedPolicyDispatcher() = {};
  installedMutatingDispatcher() = {};
  installedPolicyAdmitter() = unavailablePolicyAdmitter(reason);
  installedPolicyMetrics() = {};
  setPodUpdateValidator({});
  missingReason() = std::move(reason);
}

std::optional<std::string> unavailableReason() {
  std::lock_guard lock(installedMutex());
  return missingReason();
}

MatchConditionEvaluator processMatchConditionEvaluator() {
  std::lock_guard lock(installedMutex());
  return installedEvaluator();
}

ValidatingPolicyDispatcher processValidatingPolicyDispatcher() {
  std::lock_guard lock(installedMutex());
  return installedPolicyDispatcher();
}

MutatingPolicyDispatcher processMutatingPolicyDispatcher() {
  std::lock_guard lock(installedMutex());
  return installedMutatingDispatcher();
}

PolicyObjectAdmitter processPolicyObjectAdmitter() {
  std::lock_guard lock(installedMutex());
  return installedPolicyAdmitter();
}

std::function<std::string()> processPolicyMetrics() {
  std::lock_guard lock(installedMutex());
  return installedPolicyMetrics();
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
