#pragma once

// Reinvocation bookkeeping (docs/admission-chain.md §6).
// Followed: apiserver pkg/admission/plugin/webhook/mutating/reinvocationcontext.go
// (webhookReinvokeContext and its five methods) and pkg/admission/attributes.go
// (reinvocationContext: IsReinvoke, ShouldReinvoke, the plugin's value).

#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

namespace harness::sim::detail {

// The MutatingAdmissionWebhook plugin's part: which webhooks are reinvoked in the second pass.
// Webhooks are named by their uid (HookEntry::webhook.uid).
class WebhookReinvokeContext {
 public:
  // ShouldReinvokeWebhook.
  [[nodiscard]] bool shouldReinvokeWebhook(const std::string& uid) const;
  // IsOutputChangedSinceLastWebhookInvocation: apiequality.Semantic.DeepEqual on the object the
  // last webhook pass left and the object now. With no object on either side (a DELETE, or no
  // webhook pass yet) nothing has changed.
  [[nodiscard]] bool isOutputChangedSinceLastWebhookInvocation(
      const std::optional<nlohmann::json>& object) const;
  // SetLastWebhookInvocationOutput.
  void setLastWebhookInvocationOutput(const std::optional<nlohmann::json>& object);
  // AddReinvocableWebhookToPreviouslyInvoked: an IfNeeded webhook was called.
  void addReinvocableWebhookToPreviouslyInvoked(const std::string& uid);
  // RequireReinvokingPreviouslyInvokedPlugins: the object changed after the webhooks invoked so
  // far; each of them is reinvoked, and none is previously invoked any more.
  void requireReinvokingPreviouslyInvokedPlugins();

 private:
  std::optional<nlohmann::json> last_webhook_output_;
  std::set<std::string> previously_invoked_reinvocable_webhooks_;
  std::set<std::string> reinvoke_webhooks_;
};

// The request's reinvocation context (admission.ReinvocationContext), with the webhook plugin's
// value.
struct ReinvocationContext {
  bool is_reinvoke = false;      // IsReinvoke: this is the second pass of the mutating chain
  bool should_reinvoke = false;  // ShouldReinvoke: a webhook changed the object (SetShouldReinvoke)
  WebhookReinvokeContext webhooks;

  // The round annotations and records carry: 0, or 1 in the reinvocation pass.
  [[nodiscard]] int round() const { return is_reinvoke ? 1 : 0; }
};

}  // namespace harness::sim::detail
