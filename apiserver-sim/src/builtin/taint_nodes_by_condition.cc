// TaintNodesByCondition (kubernetes/kubernetes plugin/pkg/admission/nodetaint/admission.go):
// a Node CREATE gets the taint {key: node.kubernetes.io/not-ready, effect: NoSchedule} unless a
// taint with that key and effect is already there; the node lifecycle controller removes it
// once the node is Ready.

#include <memory>
#include <optional>
#include <string_view>

#include "json_access.h"
#include "plugins_internal.h"

namespace harness::sim::builtin_internal {
namespace {

class TaintNodesByCondition final : public AdmissionPlugin {
 public:
  std::string_view name() const override { return "TaintNodesByCondition"; }
  bool mutating() const override { return true; }
  bool validating() const override { return false; }

  std::optional<core::Status> admit(AdmissionAttributes& a,
                                    const PluginContext& /*context*/) const override {
    if (a.operation != kOperationCreate) return std::nullopt;
    if (!isResource(a, "", "nodes") || !a.subresource.empty()) return std::nullopt;
    if (!a.object || !a.object->is_object() || !isKind(a, "", "Node")) {
      return admissionForbidden(a, "unexpected type");
    }
    nlohmann::json* spec = ensureObject(*a.object, "spec");
    nlohmann::json* taints = spec != nullptr ? ensureArray(*spec, "taints") : nullptr;
    if (taints == nullptr) return std::nullopt;
    for (const auto& taint : *taints) {
      if (stringMember(taint, "key") == "node.kubernetes.io/not-ready" &&
          stringMember(taint, "effect") == "NoSchedule") {
        return std::nullopt;
      }
    }
    taints->push_back({{"key", "node.kubernetes.io/not-ready"}, {"effect", "NoSchedule"}});
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<AdmissionPlugin> makeTaintNodesByCondition() {
  return std::make_unique<TaintNodesByCondition>();
}

}  // namespace harness::sim::builtin_internal
