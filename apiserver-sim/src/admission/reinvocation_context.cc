// Followed: apiserver pkg/admission/plugin/webhook/mutating/reinvocationcontext.go
// (webhookReinvokeContext).

#include "reinvocation_context.h"

#include "dispatch.h"

namespace harness::sim::detail {

bool WebhookReinvokeContext::shouldReinvokeWebhook(const std::string& uid) const {
  return reinvoke_webhooks_.count(uid) > 0;
}

bool WebhookReinvokeContext::isOutputChangedSinceLastWebhookInvocation(
    const std::optional<nlohmann::json>& object) const {
  return last_webhook_output_ && object && !semanticEqual(*last_webhook_output_, *object);
}

void WebhookReinvokeContext::setLastWebhookInvocationOutput(
    const std::optional<nlohmann::json>& object) {
  last_webhook_output_ = object;
}

void WebhookReinvokeContext::addReinvocableWebhookToPreviouslyInvoked(const std::string& uid) {
  previously_invoked_reinvocable_webhooks_.insert(uid);
}

void WebhookReinvokeContext::requireReinvokingPreviouslyInvokedPlugins() {
  reinvoke_webhooks_.insert(previously_invoked_reinvocable_webhooks_.begin(),
                            previously_invoked_reinvocable_webhooks_.end());
  previously_invoked_reinvocable_webhooks_.clear();
}

}  // namespace harness::sim::detail
