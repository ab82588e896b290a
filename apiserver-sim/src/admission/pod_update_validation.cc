// The process's Pod update validator (pod_update_validation.h).

#include "harness/sim/pod_update_validation.h"

#include "harness/core/process_slot.h"

namespace harness::sim {

namespace {

core::ProcessSlot<PodUpdateValidator>& validatorSlot() {
  static core::ProcessSlot<PodUpdateValidator> slot;
  return slot;
}

}  // namespace

void setPodUpdateValidator(PodUpdateValidator validator) {
  validatorSlot().set(std::move(validator));
}

PodUpdateValidator installedPodUpdateValidator() { return validatorSlot().get(); }

}  // namespace harness::sim
