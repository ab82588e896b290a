// Priority (kubernetes/kubernetes plugin/pkg/admission/priority/admission.go).
//   Admit, pods (no subresource): on CREATE the priority and preemptionPolicy come from
//   spec.priorityClassName, or from the globalDefault PriorityClass (lowest value wins when
//   several claim it; its name is written to the pod), or 0 / PreemptLowerPriority when there is
//   none. An unknown class -> 403 "no PriorityClass with name <n> was found"; a spec.priority or
//   spec.preemptionPolicy that differs from the computed one -> 403 with upstream's text. On
//   UPDATE the old priority and preemptionPolicy are kept when the new object drops them.
//   Validate, priorityclasses.scheduling.k8s.io CREATE/UPDATE: only one globalDefault class.
// The built-in system-node-critical / system-cluster-critical classes exist in every cluster
// (created by the API server at start-up); they are used when the store does not hold them.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "json_access.h"
#include "plugins_internal.h"

namespace harness::sim::builtin_internal {
namespace {

const core::GroupVersionResource kPriorityClasses{"scheduling.k8s.io", "v1", "priorityclasses"};

struct ResolvedClass {
  std::string name;
  std::int64_t value = 0;
  std::string preemption_policy = "PreemptLowerPriority";
};

ResolvedClass fromObject(const nlohmann::json& pc) {
  ResolvedClass resolved;
  resolved.name = metadataString(pc, "name");
  resolved.value = intMember(pc, "value").value_or(0);
  // PriorityClass defaulting: preemptionPolicy PreemptLowerPriority.
  std::string policy = stringMember(pc, "preemptionPolicy");
  if (!policy.empty()) resolved.preemption_policy = policy;
  return resolved;
}

std::optional<ResolvedClass> systemClass(const std::string& name) {
  // scheduling.SystemCriticalPriority = 2000000000; node-critical is 1000 higher.
  if (name == "system-cluster-critical") return ResolvedClass{name, 2000000000};
  if (name == "system-node-critical") return ResolvedClass{name, 2000001000};
  return std::nullopt;
}

// getDefaultPriorityClass: the globalDefault class with the lowest value.
std::optional<ResolvedClass> defaultClass(const PluginContext& context) {
  std::optional<ResolvedClass> best;
  for (const auto& pc : listObjects(context, kPriorityClasses, "")) {
    if (!boolMember(pc, "globalDefault").value_or(false)) continue;
    ResolvedClass candidate = fromObject(pc);
    if (!best || candidate.value < best->value) best = candidate;
  }
  return best;
}

std::optional<core::Status> admitPod(AdmissionAttributes& a, const PluginContext& context) {
  if (!a.object || !a.object->is_object()) return std::nullopt;
  nlohmann::json* spec = ensureObject(*a.object, "spec");
  if (spec == nullptr) return std::nullopt;
  if (a.operation == kOperationUpdate) {
    const nlohmann::json* old_spec = a.old_object ? objectMember(*a.old_object, "spec") : nullptr;
    if (old_spec == nullptr) return std::nullopt;
    for (const char* key : {"priority", "preemptionPolicy"}) {
      if (isUnset(*spec, key) && !isUnset(*old_spec, key)) (*spec)[key] = (*old_spec)[key];
    }
    return std::nullopt;
  }
  const std::string class_name = stringMember(*spec, "priorityClassName");
  ResolvedClass resolved;
  if (class_name.empty()) {
    if (auto dpc = defaultClass(context)) {
      resolved = *dpc;
      (*spec)["priorityClassName"] = resolved.name;
    }
  } else {
    auto pc = getObject(context, kPriorityClasses, "", class_name);
    if (pc) {
      resolved = fromObject(*pc);
    } else if (auto system = systemClass(class_name)) {
      resolved = *system;
    } else {
      return admissionForbidden(a, "no PriorityClass with name " + class_name + " was found");
    }
  }
  if (auto given = intMember(*spec, "priority"); given && *given != resolved.value) {
    return admissionForbidden(a, "the integer value of priority (" + std::to_string(*given) +
                                     ") must not be provided in pod spec; priority admission "
                                     "controller computed " +
                                     std::to_string(resolved.value) +
                                     " from the given PriorityClass name");
  }
  (*spec)["priority"] = resolved.value;
  if (!isUnset(*spec, "preemptionPolicy") &&
      stringMember(*spec, "preemptionPolicy") != resolved.preemption_policy) {
    return admissionForbidden(a, "the string value of PreemptionPolicy (" +
                                     stringMember(*spec, "preemptionPolicy") +
                                     ") must not be provided in pod spec; priority admission "
                                     "controller computed " +
                                     resolved.preemption_policy +
                                     " from the given PriorityClass name");
  }
  (*spec)["preemptionPolicy"] = resolved.preemption_policy;
  return std::nullopt;
}

class Priority final : public AdmissionPlugin {
 public:
  std::string_view name() const override { return "Priority"; }
  bool mutating() const override { return true; }
  bool validating() const override { return true; }

  std::optional<core::Status> admit(AdmissionAttributes& a,
                                    const PluginContext& context) const override {
    if (!a.subresource.empty() || !isResource(a, "", "pods")) return std::nullopt;
    if (a.operation != kOperationCreate && a.operation != kOperationUpdate) return std::nullopt;
    return admitPod(a, context);
  }

  std::optional<core::Status> validate(const AdmissionAttributes& a,
                                       const PluginContext& context) const override {
    if (!a.subresource.empty() || !isResource(a, "scheduling.k8s.io", "priorityclasses")) {
      return std::nullopt;
    }
    if (a.operation != kOperationCreate && a.operation != kOperationUpdate) return std::nullopt;
    if (!a.object || !boolMember(*a.object, "globalDefault").value_or(false)) return std::nullopt;
    auto dpc = defaultClass(context);
    if (!dpc) return std::nullopt;
    const std::string pc_name = metadataString(*a.object, "name");
    if (a.operation == kOperationCreate || dpc->name != pc_name) {
      return admissionForbidden(a, "PriorityClass " + dpc->name +
                                       " is already marked as default. Only one default can exist");
    }
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<AdmissionPlugin> makePriority() { return std::make_unique<Priority>(); }

}  // namespace harness::sim::builtin_internal
