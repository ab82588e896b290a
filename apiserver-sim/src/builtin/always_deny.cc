// AlwaysDeny (kubernetes/kubernetes plugin/pkg/admission/deny/admission.go): every operation is
// refused, in both phases, with 403 "admission control is denying all modifications". It is
// ordered after the webhooks (runsAfterWebhooks).

#include <memory>
#include <optional>
#include <string_view>

#include "plugins_internal.h"

namespace harness::sim::builtin_internal {
namespace {

constexpr std::string_view kDenied = "admission control is denying all modifications";

class AlwaysDeny final : public AdmissionPlugin {
 public:
  std::string_view name() const override { return "AlwaysDeny"; }
  bool mutating() const override { return true; }
  bool validating() const override { return true; }

  std::optional<core::Status> admit(AdmissionAttributes& a,
                                    const PluginContext& /*context*/) const override {
    return admissionForbidden(a, kDenied);
  }
  std::optional<core::Status> validate(const AdmissionAttributes& a,
                                       const PluginContext& /*context*/) const override {
    return admissionForbidden(a, kDenied);
  }
};

}  // namespace

std::unique_ptr<AdmissionPlugin> makeAlwaysDeny() { return std::make_unique<AlwaysDeny>(); }

}  // namespace harness::sim::builtin_internal
