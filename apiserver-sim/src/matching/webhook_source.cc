// Webhook ordering: kubernetes/apiserver pkg/admission/configuration/mutating_webhook_manager.go
// (getMutatingWebhookConfigurations) and validating_webhook_manager.go: configurations sorted
// with sort.SliceStable by Name, webhooks in list order, uid "<config>/<webhook>/<n>".

#include "harness/sim/webhook_source.h"

#include <algorithm>

namespace harness::sim {

std::vector<HookEntry> orderHooks(const std::vector<core::WebhookConfiguration>& configs,
                                  core::WebhookKind kind) {
  std::vector<const core::WebhookConfiguration*> selected;
  for (const auto& config : configs) {
    if (config.kind == kind) selected.push_back(&config);
  }
  // std::string's operator< compares as unsigned bytes, like Go's string comparison.
  std::stable_sort(selected.begin(), selected.end(),
                   [](const core::WebhookConfiguration* a, const core::WebhookConfiguration* b) {
                     return a->name < b->name;
                   });

  std::vector<HookEntry> out;
  for (const auto* config : selected) {
    core::WebhookConfiguration copy = *config;
    core::assignWebhookUids(copy);
    for (auto& webhook : copy.webhooks) {
      HookEntry entry;
      entry.webhook = std::move(webhook);
      entry.configuration = copy.name;
      entry.kind = kind;
      entry.index = out.size();
      out.push_back(std::move(entry));
    }
  }
  return out;
}

}  // namespace harness::sim
