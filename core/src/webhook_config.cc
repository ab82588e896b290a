#include "harness/core/webhook_config.h"

#include "harness/go/base64.h"
#include "harness/go/strconv.h"

#include <map>
#include <utility>

#include "go_json.h"

namespace harness::core {

namespace {

constexpr std::int32_t kDefaultTimeoutSeconds = 10;  // v1/defaults.go
constexpr std::int32_t kDefaultServicePort = 443;

// Type-checks a metav1.LabelSelector the way encoding/json would decode it.
void checkSelectorTypes(go_json::Reader& webhook, std::string_view key) {
  const auto* obj = webhook.readObject(key, "v1.LabelSelector");
  if (obj == nullptr) return;
  go_json::Reader r(*obj, "LabelSelector", webhook.fieldPath(key));
  std::map<std::string, std::string> labels;
  r.readStringMap("matchLabels", labels);
  if (const auto* exprs = r.readArray("matchExpressions", "[]v1.LabelSelectorRequirement")) {
    if (r.checkObjectElements(*exprs, "matchExpressions", "v1.LabelSelectorRequirement")) {
      for (const auto& e : *exprs) {
        if (!e.is_object()) continue;
        go_json::Reader er(e, "LabelSelectorRequirement", r.fieldPath("matchExpressions"));
        std::string text;
        std::vector<std::string> values;
        er.readString("key", text);
        er.readString("operator", text, "v1.LabelSelectorOperator");
        er.readStringList("values", values);
        if (!er.ok()) {
          r.fail(er.error());
          break;
        }
      }
    }
  }
  if (!r.ok()) webhook.fail(r.error());
}

void readClientConfig(go_json::Reader& webhook, WebhookClientConfig& out) {
  const auto* obj = webhook.readObject("clientConfig", "v1.WebhookClientConfig");
  if (obj == nullptr) return;
  go_json::Reader r(*obj, "WebhookClientConfig", webhook.fieldPath("clientConfig"));
  r.readOptionalString("url", out.url);
  if (const auto* svc = r.readObject("service", "v1.ServiceReference")) {
    ServiceReference ref;
    go_json::Reader sr(*svc, "ServiceReference", r.fieldPath("service"));
    sr.readString("namespace", ref.namespace_name);
    sr.readString("name", ref.name);
    sr.readOptionalString("path", ref.path);
    sr.readOptionalInt32("port", ref.port);
    if (sr.ok()) {
      out.service = std::move(ref);
    } else {
      r.fail(sr.error());
    }
  }
  r.readBytes("caBundle", out.ca_bundle);
  if (!r.ok()) webhook.fail(r.error());
}

void readRules(go_json::Reader& webhook, std::vector<RuleWithOperations>& out) {
  const auto* rules = webhook.readArray("rules", "[]v1.RuleWithOperations");
  if (rules == nullptr) return;
  if (!webhook.checkObjectElements(*rules, "rules", "v1.RuleWithOperations")) return;
  for (const auto& item : *rules) {
    RuleWithOperations rule;
    if (item.is_object()) {
      // The inline Rule's fields belong to RuleWithOperations for error purposes.
      go_json::Reader r(item, "RuleWithOperations", webhook.fieldPath("rules"));
      r.readStringList("operations", rule.operations, "[]v1.OperationType", "v1.OperationType");
      r.readStringList("apiGroups", rule.api_groups);
      r.readStringList("apiVersions", rule.api_versions);
      r.readStringList("resources", rule.resources);
      r.readOptionalString("scope", rule.scope, "v1.ScopeType");
      if (!r.ok()) {
        webhook.fail(r.error());
        return;
      }
    }
    out.push_back(std::move(rule));
  }
}

void readMatchConditions(go_json::Reader& webhook, std::vector<MatchCondition>& out) {
  const auto* conditions = webhook.readArray("matchConditions", "[]v1.MatchCondition");
  if (conditions == nullptr) return;
  if (!webhook.checkObjectElements(*conditions, "matchConditions", "v1.MatchCondition")) return;
  for (const auto& item : *conditions) {
    MatchCondition c;
    if (item.is_object()) {
      go_json::Reader r(item, "MatchCondition", webhook.fieldPath("matchConditions"));
      r.readString("name", c.name);
      r.readString("expression", c.expression);
      if (!r.ok()) {
        webhook.fail(r.error());
        return;
      }
    }
    out.push_back(std::move(c));
  }
}

Result<Webhook> readWebhook(const nlohmann::json& obj, WebhookKind kind) {
  Webhook hook;
  go_json::Reader r(obj, kind == WebhookKind::kMutating ? "MutatingWebhook" : "ValidatingWebhook",
                    "webhooks");
  r.readString("name", hook.name);
  readClientConfig(r, hook.client_config);
  readRules(r, hook.rules);
  r.readOptionalString("failurePolicy", hook.failure_policy, "v1.FailurePolicyType");
  r.readOptionalString("matchPolicy", hook.match_policy, "v1.MatchPolicyType");
  checkSelectorTypes(r, "namespaceSelector");
  checkSelectorTypes(r, "objectSelector");
  r.readOptionalString("sideEffects", hook.side_effects, "v1.SideEffectClass");
  r.readOptionalInt32("timeoutSeconds", hook.timeout_seconds);
  r.readStringList("admissionReviewVersions", hook.admission_review_versions);
  if (kind == WebhookKind::kMutating) {
    r.readOptionalString("reinvocationPolicy", hook.reinvocation_policy,
                         "v1.ReinvocationPolicyType");
  }
  readMatchConditions(r, hook.match_conditions);
  if (!r.ok()) return r.error();
  auto selector = [&](std::string_view key) {
    const auto* v = r.find(key);
    return SelectorField::fromJson(v ? std::optional<nlohmann::json>(*v) : std::nullopt);
  };
  hook.namespace_selector = selector("namespaceSelector");
  hook.object_selector = selector("objectSelector");
  return hook;
}

nlohmann::json ruleJson(const RuleWithOperations& rule) {
  nlohmann::json j = nlohmann::json::object();
  if (!rule.operations.empty()) j["operations"] = rule.operations;
  if (!rule.api_groups.empty()) j["apiGroups"] = rule.api_groups;
  if (!rule.api_versions.empty()) j["apiVersions"] = rule.api_versions;
  if (!rule.resources.empty()) j["resources"] = rule.resources;
  if (rule.scope) j["scope"] = *rule.scope;
  return j;
}

nlohmann::json webhookJson(const Webhook& hook, WebhookKind kind) {
  nlohmann::json j = nlohmann::json::object();
  j["name"] = hook.name;
  nlohmann::json cc = nlohmann::json::object();
  if (hook.client_config.url) cc["url"] = *hook.client_config.url;
  if (const auto& svc = hook.client_config.service) {
    nlohmann::json s = {{"namespace", svc->namespace_name}, {"name", svc->name}};
    if (svc->path) s["path"] = *svc->path;
    if (svc->port) s["port"] = *svc->port;
    cc["service"] = std::move(s);
  }
  if (!hook.client_config.ca_bundle.empty()) {
    cc["caBundle"] = go::base64Encode(hook.client_config.ca_bundle);
  }
  j["clientConfig"] = std::move(cc);
  if (!hook.rules.empty()) {
    nlohmann::json rules = nlohmann::json::array();
    for (const auto& rule : hook.rules) rules.push_back(ruleJson(rule));
    j["rules"] = std::move(rules);
  }
  if (hook.failure_policy) j["failurePolicy"] = *hook.failure_policy;
  if (hook.match_policy) j["matchPolicy"] = *hook.match_policy;
  if (hook.namespace_selector.json) j["namespaceSelector"] = *hook.namespace_selector.json;
  if (hook.object_selector.json) j["objectSelector"] = *hook.object_selector.json;
  j["sideEffects"] = hook.side_effects ? nlohmann::json(*hook.side_effects) : nullptr;
  if (hook.timeout_seconds) j["timeoutSeconds"] = *hook.timeout_seconds;
  j["admissionReviewVersions"] = hook.admission_review_versions.empty()
                                     ? nlohmann::json(nullptr)
                                     : nlohmann::json(hook.admission_review_versions);
  if (kind == WebhookKind::kMutating && hook.reinvocation_policy) {
    j["reinvocationPolicy"] = *hook.reinvocation_policy;
  }
  if (!hook.match_conditions.empty()) {
    nlohmann::json conditions = nlohmann::json::array();
    for (const auto& c : hook.match_conditions) {
      conditions.push_back({{"name", c.name}, {"expression", c.expression}});
    }
    j["matchConditions"] = std::move(conditions);
  }
  return j;
}

}  // namespace

std::string_view kindName(WebhookKind kind) {
  return kind == WebhookKind::kMutating ? "MutatingWebhookConfiguration"
                                        : "ValidatingWebhookConfiguration";
}

SelectorField SelectorField::fromJson(const std::optional<nlohmann::json>& json) {
  SelectorField field;
  if (!json || json->is_null()) return field;
  field.json = *json;
  auto parsed = LabelSelector::parse(*json);
  if (parsed.ok()) {
    field.selector = std::move(parsed).value();
  } else {
    field.parse_error = parsed.error().message;
  }
  return field;
}

Result<WebhookConfiguration> parseWebhookConfiguration(const nlohmann::json& json) {
  if (!json.is_object()) {
    // runtime/serializer/json meta.go Interpret: kind lookup fails first.
    return Error{
        "couldn't get version/kind; json parse error: " +
        go_json::typeError(json, "", "",
                           "struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; "
                           "Kind string \"json:\\\"kind,omitempty\\\"\" }")
            .message};
  }
  go_json::Reader top(json, "", "");
  std::string api_version;
  std::string kind_text;
  top.readString("apiVersion", api_version);
  top.readString("kind", kind_text);
  if (!top.ok())
    return Error{"couldn't get version/kind; json parse error: " + top.error().message};
  if (kind_text.empty()) {
    return Error{"Object 'Kind' is missing in '" + dumpJson(json) + "'"};
  }
  WebhookConfiguration config;
  if (kind_text == kindName(WebhookKind::kMutating)) {
    config.kind = WebhookKind::kMutating;
  } else if (kind_text == kindName(WebhookKind::kValidating)) {
    config.kind = WebhookKind::kValidating;
  } else {
    return Error{"no matches for kind " + go::quote(kind_text) + " in version " +
                 go::quote(api_version)};
  }
  if (api_version != kAdmissionRegistrationV1) {
    return Error{"no matches for kind " + go::quote(kind_text) + " in version " +
                 go::quote(api_version)};
  }

  go_json::Reader r(json, std::string(kindName(config.kind)), "");
  if (const auto* meta = r.readObject("metadata", "v1.ObjectMeta")) {
    go_json::Reader mr(*meta, "ObjectMeta", "metadata");
    std::string ignored;
    mr.readString("name", config.name);
    mr.readString("generateName", ignored);
    mr.readString("namespace", ignored);
    if (!mr.ok()) return mr.error();
    config.metadata = *meta;
  }
  const std::string list_type =
      config.kind == WebhookKind::kMutating ? "[]v1.MutatingWebhook" : "[]v1.ValidatingWebhook";
  if (const auto* hooks = r.readArray("webhooks", list_type)) {
    if (!r.checkObjectElements(*hooks, "webhooks", list_type.substr(2))) return r.error();
    for (const auto& item : *hooks) {
      auto hook = readWebhook(item.is_null() ? nlohmann::json::object() : item, config.kind);
      if (!hook.ok()) return hook.error();
      config.webhooks.push_back(std::move(hook).value());
    }
  }
  if (!r.ok()) return r.error();
  assignWebhookUids(config);
  return config;
}

Result<WebhookConfiguration> parseWebhookConfiguration(std::string_view json_text) {
  auto json = go_json::parseJsonText(json_text);
  if (!json.ok()) return json.error();
  return parseWebhookConfiguration(*json);
}

void assignWebhookUids(WebhookConfiguration& config) {
  std::map<std::string, int> seen;
  for (auto& hook : config.webhooks) {
    hook.uid = config.name + "/" + hook.name + "/" + std::to_string(seen[hook.name]++);
  }
}

void applyV1Defaults(WebhookConfiguration& config) {
  for (auto& hook : config.webhooks) {
    if (!hook.failure_policy) hook.failure_policy = std::string(kFailurePolicyFail);
    if (!hook.match_policy) hook.match_policy = std::string(kMatchPolicyEquivalent);
    if (hook.namespace_selector.isNil()) {
      hook.namespace_selector = SelectorField::fromJson(nlohmann::json::object());
    }
    if (hook.object_selector.isNil()) {
      hook.object_selector = SelectorField::fromJson(nlohmann::json::object());
    }
    if (!hook.timeout_seconds) hook.timeout_seconds = kDefaultTimeoutSeconds;
    if (config.kind == WebhookKind::kMutating && !hook.reinvocation_policy) {
      hook.reinvocation_policy = std::string(kReinvocationNever);
    }
    for (auto& rule : hook.rules) {
      if (!rule.scope) rule.scope = std::string(kScopeAll);
    }
    if (auto& svc = hook.client_config.service; svc && !svc->port) {
      svc->port = kDefaultServicePort;
    }
  }
}

nlohmann::json toJson(const WebhookConfiguration& config) {
  nlohmann::json j = nlohmann::json::object();
  j["apiVersion"] = std::string(kAdmissionRegistrationV1);
  j["kind"] = std::string(kindName(config.kind));
  j["metadata"] = config.metadata.is_object() ? config.metadata : nlohmann::json::object();
  if (!config.name.empty()) j["metadata"]["name"] = config.name;
  if (!config.webhooks.empty()) {
    nlohmann::json hooks = nlohmann::json::array();
    for (const auto& hook : config.webhooks) hooks.push_back(webhookJson(hook, config.kind));
    j["webhooks"] = std::move(hooks);
  }
  return j;
}

}  // namespace harness::core
