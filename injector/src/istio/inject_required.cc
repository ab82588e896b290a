#include "harness/injector/istio/inject_required.h"

// Followed: istio/istio pkg/kube/inject/inject.go injectRequired (order of the checks, the
// label-over-annotation rule, selector.Empty() skipping, the policy switch and its error log),
// pkg/kube/inject/initializer.go IgnoredNamespaces, webhook_test.go TestInjectRequired.
// The 1.27+ value switch is docs/istio-injector.md §1 item 3 (commit 331d32e).

namespace harness::injector::istio {

namespace {

using nlohmann::json;

std::string_view stringOr(const json& obj, const char* key) {
  if (!obj.is_object()) return {};
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? std::string_view(it->get_ref<const std::string&>())
                                            : std::string_view();
}

const json* mapAt(const json& metadata, const char* key) {
  if (!metadata.is_object()) return nullptr;
  auto it = metadata.find(key);
  return it != metadata.end() && it->is_object() ? &*it : nullptr;
}

core::Labels podLabels(const json& metadata) {
  core::Labels out;
  if (const json* labels = mapAt(metadata, "labels")) {
    for (auto it = labels->begin(); it != labels->end(); ++it) {
      if (it->is_string()) out[it.key()] = it->get<std::string>();
    }
  }
  return out;
}

std::string podName(const json& metadata) {
  // potentialPodName: name, else generateName + "***".
  std::string name(stringOr(metadata, "name"));
  if (!name.empty()) return name;
  std::string gen(stringOr(metadata, "generateName"));
  return gen.empty() ? std::string() : gen + "***";
}

// The first non-empty selector that matches, with invalid selectors logged and skipped.
const InjectSelector* firstMatch(const std::vector<InjectSelector>& selectors,
                                 const core::Labels& labels, const char* which,
                                 std::vector<LogLine>& logs) {
  for (const auto& s : selectors) {
    if (!s.selector.ok()) {
      logs.push_back({LogLine::Level::kWarning, std::string("Invalid selector for ") + which +
                                                    ": " + s.raw.dump() + " (" +
                                                    s.selector.error().message + ")"});
      continue;
    }
    if (!s.selector->matchesEverything() && !s.selector->matchesNothing() &&
        s.selector->matches(labels)) {
      return &s;
    }
  }
  return nullptr;
}

}  // namespace

const std::vector<std::string>& ignoredNamespaces() {
  static const std::vector<std::string> kIgnored = {"kube-system", "kube-public",
                                                    "kube-node-lease", "local-path-storage"};
  return kIgnored;
}

InjectDecision injectRequired(const std::vector<std::string>& ignored, const InjectorConfig& config,
                              const json& pod_spec, const json& metadata) {
  InjectDecision d;
  if (pod_spec.is_object()) {
    auto hn = pod_spec.find("hostNetwork");
    if (hn != pod_spec.end() && hn->is_boolean() && hn->get<bool>()) {
      d.reason = "host network enabled";
      return d;
    }
  }
  const std::string ns(stringOr(metadata, "namespace"));
  for (const auto& n : ignored) {
    if (ns == n) {
      d.reason = "namespace " + ns + " is ignored";
      return d;
    }
  }

  // The label is the new API; if both are present the label wins, even when empty.
  std::string value;
  std::string source = "none";
  if (const json* annotations = mapAt(metadata, "annotations")) {
    auto it = annotations->find(std::string(kSidecarInjectKey));
    if (it != annotations->end() && it->is_string()) {
      value = it->get<std::string>();
      source = "annotation";
    }
  }
  if (const json* labels = mapAt(metadata, "labels")) {
    auto it = labels->find(std::string(kSidecarInjectKey));
    if (it != labels->end() && it->is_string()) {
      value = it->get<std::string>();
      source = "label";
    }
  }
  bool use_default = false;
  bool inject = false;
  std::string explicit_reason;
  if (value == "true") {
    inject = true;
    explicit_reason = source + " " + std::string(kSidecarInjectKey) + "=\"true\"";
  } else if (value == "false") {
    explicit_reason = source + " " + std::string(kSidecarInjectKey) + "=\"false\"";
  } else {
    use_default = true;
    if (!value.empty()) {
      // Since 1.27 anything but the exact strings "true"/"false" falls back to the policy.
      d.logs.push_back({LogLine::Level::kWarning,
                        "Invalid value \"" + value + "\" for " + source + " " +
                            std::string(kSidecarInjectKey) +
                            "; expected \"true\" or \"false\", using the default policy"});
    }
  }

  const core::Labels labels = podLabels(metadata);
  std::string selector_reason;
  if (use_default) {
    if (const auto* m = firstMatch(config.never_inject_selector, labels, "NeverInjectSelector",
                                   d.logs)) {
      d.logs.push_back({LogLine::Level::kDebug,
                        "Explicitly disabling injection for pod " + ns + "/" + podName(metadata) +
                            " due to pod labels matching NeverInjectSelector config map entry."});
      inject = false;
      use_default = false;
      selector_reason = "neverInjectSelector " + m->selector->toString() + " matches";
    }
  }
  if (use_default) {
    if (const auto* m = firstMatch(config.always_inject_selector, labels, "AlwaysInjectSelector",
                                   d.logs)) {
      d.logs.push_back({LogLine::Level::kDebug,
                        "Explicitly enabling injection for pod " + ns + "/" + podName(metadata) +
                            " due to pod labels matching AlwaysInjectSelector config map entry."});
      inject = true;
      use_default = false;
      selector_reason = "alwaysInjectSelector " + m->selector->toString() + " matches";
    }
  }

  const std::string why = !explicit_reason.empty() ? explicit_reason : selector_reason;
  if (config.policy == kPolicyEnabled || config.policy == kPolicyDisabled) {
    if (use_default) {
      d.required = config.policy == kPolicyEnabled;
      d.reason = "policy " + config.policy + " (default)";
    } else {
      d.required = inject;
      d.reason = why;
    }
  } else {
    d.logs.push_back({LogLine::Level::kError,
                      "Illegal value for autoInject:" + config.policy +
                          ", must be one of [disabled,enabled]. Auto injection disabled!"});
    d.required = false;
    d.reason = "wrong policy \"" + config.policy + "\"";
  }
  return d;
}

std::string_view logLevelName(LogLine::Level level) {
  switch (level) {
    case LogLine::Level::kDebug: return "debug";
    case LogLine::Level::kInfo: return "info";
    case LogLine::Level::kWarning: return "warn";
    case LogLine::Level::kError: return "error";
  }
  return "info";
}

}  // namespace harness::injector::istio
