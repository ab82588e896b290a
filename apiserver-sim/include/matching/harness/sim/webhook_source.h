#pragma once

// The webhook source of the admission plugins: which webhooks exist and in what order
// (docs/admission-chain.md §2.1; kubernetes/apiserver pkg/admission/configuration/
// mutating_webhook_manager.go and validating_webhook_manager.go).

#include <cstddef>
#include <string>
#include <vector>

#include "harness/core/webhook_config.h"

namespace harness::sim {

// One webhook of the flattened, ordered list (webhook.WebhookAccessor).
struct HookEntry {
  core::Webhook webhook;      // as given (the caller applies v1 defaults); uid assigned
  std::string configuration;  // metadata.name of its configuration
  core::WebhookKind kind = core::WebhookKind::kMutating;
  std::size_t index = 0;  // position in the flattened list of that kind (audit key index)
};

// The dispatch order of the webhooks of `kind`: configurations of that kind sorted by
// metadata.name, byte-wise ascending and stable (sort.SliceStable by Name), each configuration's
// webhooks in list order. Every entry's webhook.uid is "<config>/<webhook>/<n>", n counting
// earlier webhooks of the same name in the same configuration (core::assignWebhookUids).
// Configurations of the other kind are ignored.
std::vector<HookEntry> orderHooks(const std::vector<core::WebhookConfiguration>& configs,
                                  core::WebhookKind kind);

}  // namespace harness::sim
