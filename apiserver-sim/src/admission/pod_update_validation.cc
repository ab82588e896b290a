// The process's Pod update validator (pod_update_validation.h).

#include "harness/sim/pod_update_validation.h"

#include <mutex>

namespace harness::sim {

namespace {

std::mutex& validatorMutex() {
  static std::mutex mutex;
  return mutex;
}

PodUpdateValidator& validatorSlot() {
  static PodUpdateValidator validator;
  return validator;
}

}  // namespace

void setPodUpdateValidator(PodUpdateValidator validator) {
  std::lock_guard lock(validatorMutex());
  validatorSlot() = std::move(validator);
}

PodUpdateValidator installedPodUpdateValidator() {
  std::lock_guard lock(validatorMutex());
  return validatorSlot();
}

}  // namespace harness::sim
