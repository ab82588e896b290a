// DefaultTolerationSeconds (kubernetes/kubernetes plugin/pkg/admission/defaulttolerationseconds/
// admission.go): pods, CREATE and UPDATE, not subresources. Unless the pod already tolerates them
// (a toleration with that key or an empty key, and effect NoExecute or empty), adds
//   {key: node.kubernetes.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
//   {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
// (the --default-not-ready-toleration-seconds / --default-unreachable-toleration-seconds
// defaults). A pods request whose object is not a Pod is a 400.

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "json_access.h"
#include "plugins_internal.h"

namespace harness::sim::builtin_internal {
namespace {

constexpr int kDefaultTolerationSeconds = 300;

class DefaultTolerationSeconds final : public AdmissionPlugin {
 public:
  std::string_view name() const override { return "DefaultTolerationSeconds"; }
  bool mutating() const override { return true; }
  bool validating() const override { return false; }

  std::optional<core::Status> admit(AdmissionAttributes& a,
                                    const PluginContext& /*context*/) const override {
    if (a.operation != kOperationCreate && a.operation != kOperationUpdate) return std::nullopt;
    if (!isResource(a, "", "pods") || !a.subresource.empty()) return std::nullopt;
    if (!a.object || !a.object->is_object() || !isKind(a, "", "Pod")) {
      return core::newBadRequest("expected *api.Pod but got " +
                                 std::string(a.object ? "*unstructured.Unstructured" : "<nil>"));
    }
    nlohmann::json* spec = ensureObject(*a.object, "spec");
    if (spec == nullptr) return std::nullopt;
    bool not_ready = false;
    bool unreachable = false;
    forEachObjectIn(*spec, "tolerations", [&](const nlohmann::json& t) {
      const std::string key = stringMember(t, "key");
      const std::string effect = stringMember(t, "effect");
      const bool no_execute = effect == "NoExecute" || effect.empty();
      not_ready = not_ready || ((key == "node.kubernetes.io/not-ready" || key.empty()) && no_execute);
      unreachable =
          unreachable || ((key == "node.kubernetes.io/unreachable" || key.empty()) && no_execute);
    });
    if (not_ready && unreachable) return std::nullopt;
    nlohmann::json* tolerations = ensureArray(*spec, "tolerations");
    if (tolerations == nullptr) return std::nullopt;
    auto toleration = [](const char* key) {
      return nlohmann::json{{"key", key},
                            {"operator", "Exists"},
                            {"effect", "NoExecute"},
                            {"tolerationSeconds", kDefaultTolerationSeconds}};
    };
    if (!not_ready) tolerations->push_back(toleration("node.kubernetes.io/not-ready"));
    if (!unreachable) tolerations->push_back(toleration("node.kubernetes.io/unreachable"));
    return std::nullopt;
  }
};

}  // namespace

std::unique_ptr<AdmissionPlugin> makeDefaultTolerationSeconds() {
  return std::make_unique<DefaultTolerationSeconds>();
}

}  // namespace harness::sim::builtin_internal
