// The lint rules (lint.h). Each rule asks the simulator's own matching code (matching.h) which
// requests a webhook would be called for, so a finding never claims a call kube-apiserver would
// not make.

#include "harness/sim/lint.h"

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <map>
#include <set>
#include <tuple>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "harness/core/object.h"
#include "harness/sim/selector_overlap.h"
#include "policy_rules.h"
#include "harness/sim/webhook_source.h"

namespace harness::sim::lint {

namespace {

using core::kFailurePolicyFail;
using core::kReinvocationIfNeeded;
using core::kReinvocationNever;
using core::Labels;
using core::WebhookKind;

constexpr char kNamespaceNameLabel[] = "kubernetes.io/metadata.name";
constexpr char kKubeSystem[] = "kube-system";

const std::vector<RuleInfo> kRules = {
    {"invalid-configuration", "kube-apiserver would refuse the configuration (validation)"},
    {"multiple-injectors", "several mutating webhooks change the same pods at creation"},
    {"self-lockout", "a Fail webhook can block its own pods or kube-system's"},
    {"fail-closed-all-namespaces", "failurePolicy Fail with no namespace excluded"},
    {"timeouts-exceed-deadline", "the timeouts of the webhooks one request meets exceed its deadline"},
    {"dry-run-side-effects", "sideEffects that make dry-run requests fail"},
    {"reinvocation-order", "a mutator that does not see a later mutator's changes (Never)"},
    {"object-selector-bypass", "an objectSelector opt-out that whoever creates the object controls"},
    {"match-conditions-never-true", "matchConditions false for every request the rules admit"},
};

// A webhook as the apiserver stores it (v1 defaults applied), with its dispatch position.
struct Hook {
  HookEntry entry;
  std::string source;
  [[nodiscard]] const core::Webhook& webhook() const { return entry.webhook; }
  [[nodiscard]] std::string id() const { return entry.configuration + "/" + entry.webhook.name; }
  [[nodiscard]] bool failClosed() const {
    return entry.webhook.failure_policy.value_or(std::string(kFailurePolicyFail)) ==
           kFailurePolicyFail;
  }
  [[nodiscard]] bool reinvoked() const {
    return entry.kind == WebhookKind::kMutating &&
           entry.webhook.reinvocation_policy.value_or("") == kReinvocationIfNeeded;
  }
  [[nodiscard]] std::chrono::seconds timeout() const {
    return std::chrono::seconds(entry.webhook.timeout_seconds.value_or(10));
  }
  [[nodiscard]] const core::LabelSelector& namespaceSelector() const {
    return entry.webhook.namespace_selector.selector;
  }
  [[nodiscard]] const core::LabelSelector& objectSelector() const {
    return entry.webhook.object_selector.selector;
  }
};

std::string kindWord(WebhookKind kind) {
  return kind == WebhookKind::kMutating ? "mutating" : "validating";
}

Finding findingFor(const Hook& hook, std::string rule, Severity severity) {
  Finding finding;
  finding.rule = std::move(rule);
  finding.severity = severity;
  finding.kind = hook.entry.kind;
  finding.configuration = hook.entry.configuration;
  finding.webhook = hook.entry.webhook.name;
  finding.source = hook.source;
  return finding;
}

// A request the rules are probed with: operation on a resource, in a namespace or cluster-wide.
struct Probe {
  std::string operation;
  core::GroupVersionResource resource;
  core::GroupVersionKind kind;
  bool namespaced = true;

  [[nodiscard]] std::string describe() const {
    std::string what = resource.resource;
    if (!resource.group.empty()) what += "." + resource.group;
    return operation + " " + what;
  }
  bool operator<(const Probe& other) const {
    return std::tie(operation, resource.group, resource.version, resource.resource) <
           std::tie(other.operation, other.resource.group, other.resource.version,
                    other.resource.resource);
  }
};

Probe podCreate() {
  return Probe{"CREATE", {"", "v1", "pods"}, {"", "v1", "Pod"}, true};
}

AdmissionAttributes attributesFor(const Probe& probe, const std::string& namespace_name) {
  AdmissionAttributes attributes;
  attributes.operation = probe.operation;
  attributes.resource = probe.resource;
  attributes.kind = probe.kind;
  attributes.namespace_name = probe.namespaced ? namespace_name : "";
  attributes.name = "lint-probe";
  nlohmann::json object = {{"apiVersion", probe.kind.group.empty()
                                              ? probe.kind.version
                                              : probe.kind.group + "/" + probe.kind.version},
                           {"kind", probe.kind.kind},
                           {"metadata", {{"name", "lint-probe"}}}};
  if (probe.namespaced) object["metadata"]["namespace"] = namespace_name;
  if (probe.operation != "DELETE") attributes.object = object;
  if (probe.operation == "UPDATE" || probe.operation == "DELETE") attributes.old_object = object;
  return attributes;
}

// Whether a rule of the webhook covers the probe (rules.Matcher; the selectors are separate).
bool covers(const Hook& hook, const Probe& probe, const std::string& namespace_name = "lint") {
  const auto attributes = attributesFor(probe, namespace_name);
  return std::any_of(hook.webhook().rules.begin(), hook.webhook().rules.end(),
                     [&](const core::RuleWithOperations& rule) {
                       return ruleMatches(rule, attributes);
                     });
}

// The concrete requests the rules name (wildcards are left to the rules matcher: a `*` rule
// covers every probe), plus a pod CREATE.
std::vector<Probe> probesOf(const std::vector<Hook>& hooks) {
  std::set<Probe> probes = {podCreate()};
  for (const auto& hook : hooks) {
    for (const auto& rule : hook.webhook().rules) {
      for (const auto& group : rule.api_groups) {
        if (group == "*") continue;
        for (const auto& version : rule.api_versions) {
          for (const auto& resource : rule.resources) {
            if (resource.find('*') != std::string::npos || resource.find('/') != std::string::npos) {
              continue;
            }
            const std::string v = version == "*" ? "v1" : version;
            auto info = core::findResource(core::GroupVersionResource{group, v, resource});
            if (!info) continue;  // unknown to the built-in table: no kind to send
            for (const auto& operation : rule.operations) {
              const std::string op = operation == "*" ? "CREATE" : operation;
              probes.insert(Probe{op, info->resource, info->kind, info->namespaced});
            }
          }
        }
      }
    }
  }
  return {probes.begin(), probes.end()};
}

Labels namespaceLabels(const ClusterFacts& facts, const std::string& name) {
  Labels labels;
  if (auto it = facts.namespaces.find(name); it != facts.namespaces.end()) labels = it->second;
  labels.emplace(kNamespaceNameLabel, name);  // NamespaceDefaultLabelName, set by the apiserver
  return labels;
}

// "namespaceSelector `a in (b,c)`" as kubectl prints selectors; "{}" matches everything.
std::string selectorText(const core::LabelSelector& selector) {
  if (selector.matchesNothing()) return "<nil: matches nothing>";
  if (selector.matchesEverything()) return "{} (everything)";
  return selector.toString();
}

// --- invalid-configuration ---

void checkValidation(const std::vector<SourcedConfiguration>& configurations,
                     std::vector<Finding>& out) {
  for (const auto& [configuration, source] : configurations) {
    const auto errors = core::validateWebhookConfiguration(configuration);
    if (errors.empty()) continue;
    Finding finding;
    finding.rule = "invalid-configuration";
    finding.severity = Severity::kError;
    finding.kind = configuration.kind;
    finding.configuration = configuration.name;
    finding.source = source;
    finding.message = core::invalidConfigurationMessage(configuration, errors) +
                      " (kube-apiserver refuses to create or update it with 422; one already "
                      "stored, from an older API version, still behaves as written)";
    finding.fix = "Correct the fields named above.";
    out.push_back(std::move(finding));
  }
}

// --- multiple-injectors ---

// A requirement of `selector` that, negated in the other webhook's selector, separates the two:
// "{key: K, operator: DoesNotExist}" for a required key.
std::optional<std::string> separatingRequirement(const core::LabelSelector& selector) {
  for (const auto& requirement : selector.requirements()) {
    using core::SelectorOperator;
    if (requirement.op == SelectorOperator::kIn || requirement.op == SelectorOperator::kEquals ||
        requirement.op == SelectorOperator::kExists) {
      return fmt::format("{{key: {}, operator: DoesNotExist}}", requirement.key);
    }
  }
  return std::nullopt;
}

void checkInjectors(const std::vector<Hook>& mutating, std::vector<Finding>& out) {
  std::vector<const Hook*> injectors;
  for (const auto& hook : mutating) {
    if (covers(hook, podCreate())) injectors.push_back(&hook);
  }
  // One finding per pair of configurations (Istio's configuration has four webhooks), naming
  // the first overlapping pair and counting the others.
  std::map<std::pair<std::string, std::string>, std::size_t> reported;  // -> index in `out`
  for (std::size_t i = 0; i < injectors.size(); ++i) {
    for (std::size_t j = i + 1; j < injectors.size(); ++j) {
      const Hook& first = *injectors[i];
      const Hook& second = *injectors[j];
      auto ns = commonLabels({&first.namespaceSelector(), &second.namespaceSelector()});
      auto obj = commonLabels({&first.objectSelector(), &second.objectSelector()});
      if (!ns || !obj) continue;
      const auto pair = std::make_pair(first.entry.configuration, second.entry.configuration);
      if (pair.first != pair.second) {
        if (auto it = reported.find(pair); it != reported.end()) {
          auto& related = out[it->second].related;
          for (const auto& id : {first.id(), second.id()}) {
            if (id != out[it->second].configuration + "/" + out[it->second].webhook &&
                std::find(related.begin(), related.end(), id) == related.end()) {
              related.push_back(id);
            }
          }
          continue;
        }
        reported[pair] = out.size();
      }
      Finding finding = findingFor(second, "multiple-injectors", Severity::kWarning);
      finding.related = {first.id()};
      finding.message = fmt::format(
          "A pod created in a namespace labelled {} with the labels {} is sent to both {} and "
          "{}: two mutating webhooks change the same pod at creation (sidecar injectors, in "
          "dispatch order: configurations by name). The second sees the first's containers; the "
          "first sees the second's only if it is reinvoked (reinvocationPolicy {}). Two meshes "
          "injecting the same pod give it two proxies that each capture its traffic.",
          formatLabels(*ns), formatLabels(*obj), first.id(), second.id(),
          first.webhook().reinvocation_policy.value_or(std::string(kReinvocationNever)));
      if (auto separating = separatingRequirement(first.namespaceSelector())) {
        finding.fix = fmt::format(
            "Make the selectors disjoint: add {} to the namespaceSelector of {} (namespaces "
            "opted in to {} are then skipped), or choose one injector per namespace.",
            *separating, second.id(), first.webhook().name);
      } else if (auto other = separatingRequirement(second.namespaceSelector())) {
        finding.fix = fmt::format(
            "Make the selectors disjoint: add {} to the namespaceSelector of {} (namespaces "
            "opted in to {} are then skipped), or choose one injector per namespace.",
            *other, first.id(), second.webhook().name);
      } else {
        finding.fix =
            "Make the selectors disjoint (an opt-in label for one that the other's "
            "namespaceSelector excludes with DoesNotExist), or choose one injector per namespace.";
      }
      out.push_back(std::move(finding));
    }
  }
}

// --- self-lockout, fail-closed-all-namespaces ---

void checkLockout(const std::vector<Hook>& hooks, const ClusterFacts& facts,
                  std::vector<Finding>& out) {
  for (const auto& hook : hooks) {
    if (!hook.failClosed()) continue;
    bool reported = false;
    const auto& service = hook.webhook().client_config.service;
    const Probe pod = podCreate();
    if (service) {
      const std::string& ns = service->namespace_name;
      const Labels ns_labels = namespaceLabels(facts, ns);
      const auto known = facts.service_pod_labels.find(ns + "/" + service->name);
      const Labels pod_labels = known != facts.service_pod_labels.end() ? known->second : Labels{};
      if (covers(hook, pod, ns) && hook.namespaceSelector().matches(ns_labels) &&
          hook.objectSelector().matches(pod_labels)) {
        Finding finding = findingFor(hook, "self-lockout", Severity::kError);
        finding.message = fmt::format(
            "Its own pods run in namespace {} (behind Service {}/{}{}), and it is called, with "
            "failurePolicy Fail, for pod creation there (namespaceSelector {} matches the "
            "namespace's labels {}; objectSelector {}). When no replica answers (a node drain, "
            "a crash loop, a new version that does not start), the pod that would bring it back "
            "is sent to the webhook itself: pod creation in {} fails until the configuration is "
            "deleted.",
            ns, ns, service->name,
            known != facts.service_pod_labels.end()
                ? ", pod labels " + formatLabels(pod_labels)
                : "",
            selectorText(hook.namespaceSelector()), formatLabels(ns_labels),
            selectorText(hook.objectSelector()), ns);
        finding.fix = fmt::format(
            "Exclude its namespace: namespaceSelector.matchExpressions: [{{key: {}, operator: "
            "NotIn, values: [{}, {}]}}], or set failurePolicy: Ignore.",
            kNamespaceNameLabel, ns, kKubeSystem);
        out.push_back(std::move(finding));
        reported = true;
      }
    }
    const Labels system_labels = namespaceLabels(facts, kKubeSystem);
    if (!(service && service->namespace_name == kKubeSystem && reported) &&
        covers(hook, pod, kKubeSystem) && hook.namespaceSelector().matches(system_labels) &&
        hook.objectSelector().matches({})) {
      Finding finding = findingFor(hook, "self-lockout", Severity::kError);
      finding.message = fmt::format(
          "It is called, with failurePolicy Fail, for pod creation in kube-system "
          "(namespaceSelector {} matches the labels {}; objectSelector {} matches a pod without "
          "labels). When the webhook is unavailable, kube-system's pods (CoreDNS, CNI and "
          "kube-proxy DaemonSets, often the webhook's own dependencies) cannot be recreated.",
          selectorText(hook.namespaceSelector()), formatLabels(system_labels),
          selectorText(hook.objectSelector()));
      finding.fix = fmt::format(
          "Exclude kube-system: namespaceSelector.matchExpressions: [{{key: {}, operator: NotIn, "
          "values: [{}]}}], or set failurePolicy: Ignore.",
          kNamespaceNameLabel, kKubeSystem);
      out.push_back(std::move(finding));
      reported = true;
    }
    if (reported || !hook.namespaceSelector().matchesEverything()) continue;
    // Namespaced requests at all? A rule covering only cluster-scoped resources ignores the
    // namespaceSelector.
    const bool namespaced = std::any_of(
        hook.webhook().rules.begin(), hook.webhook().rules.end(),
        [](const core::RuleWithOperations& rule) {
          return rule.scope.value_or(std::string(core::kScopeAll)) != core::kScopeCluster;
        });
    if (!namespaced) continue;
    Finding finding = findingFor(hook, "fail-closed-all-namespaces", Severity::kWarning);
    finding.message =
        "failurePolicy Fail with an empty namespaceSelector ({}): while the webhook is down or "
        "slower than its timeout, every request it matches fails, in every namespace, "
        "kube-system and the webhook's own namespace included.";
    finding.fix = fmt::format(
        "Exclude the namespaces the cluster needs to recover: namespaceSelector.matchExpressions: "
        "[{{key: {}, operator: NotIn, values: [{}{}]}}].",
        kNamespaceNameLabel, kKubeSystem,
        service ? ", " + service->namespace_name : std::string());
    out.push_back(std::move(finding));
  }
}

// --- timeouts-exceed-deadline ---

void checkTimeouts(const std::vector<Hook>& mutating, const std::vector<Hook>& validating,
                   const std::vector<Probe>& probes, std::chrono::seconds deadline,
                   std::vector<Finding>& out) {
  std::set<std::vector<std::string>> reported;
  for (const auto& probe : probes) {
    // The mutating webhooks one request can meet together: greedily by cost, each kept when
    // some namespace and object labels still select it with those kept before.
    std::vector<const Hook*> candidates;
    for (const auto& hook : mutating) {
      if (covers(hook, probe)) candidates.push_back(&hook);
    }
    auto cost = [](const Hook* hook) { return hook->timeout() * (hook->reinvoked() ? 2 : 1); };
    std::stable_sort(candidates.begin(), candidates.end(),
                     [&](const Hook* a, const Hook* b) { return cost(a) > cost(b); });
    std::vector<const core::LabelSelector*> ns_selectors;
    std::vector<const core::LabelSelector*> obj_selectors;
    std::vector<const Hook*> chain;
    auto fits = [&](const Hook* hook) {
      auto ns = ns_selectors;
      auto obj = obj_selectors;
      ns.push_back(&hook->namespaceSelector());
      obj.push_back(&hook->objectSelector());
      return commonLabels(ns) && commonLabels(obj);
    };
    std::chrono::seconds total{0};
    for (const Hook* hook : candidates) {
      if (!fits(hook)) continue;
      ns_selectors.push_back(&hook->namespaceSelector());
      obj_selectors.push_back(&hook->objectSelector());
      chain.push_back(hook);
      total += cost(hook);
    }
    // Validating webhooks run in parallel: the longest one that can join counts.
    const Hook* slowest = nullptr;
    for (const auto& hook : validating) {
      if (!covers(hook, probe) || !fits(&hook)) continue;
      if (slowest == nullptr || hook.timeout() > slowest->timeout()) slowest = &hook;
    }
    if (slowest != nullptr) total += slowest->timeout();
    if (total <= deadline || chain.empty()) continue;
    std::vector<std::string> key;
    for (const Hook* hook : chain) key.push_back(hook->id());
    if (slowest != nullptr) key.push_back(slowest->id());
    if (!reported.insert(key).second) continue;
    std::string list;
    // In dispatch order, as the request meets them.
    std::vector<const Hook*> ordered = chain;
    std::sort(ordered.begin(), ordered.end(), [](const Hook* a, const Hook* b) {
      return a->entry.index < b->entry.index;
    });
    for (const Hook* hook : ordered) {
      list += fmt::format("{}{} {}s{}", list.empty() ? "" : ", ", hook->id(),
                          hook->timeout().count(),
                          hook->reinvoked() ? " (IfNeeded: twice when reinvoked)" : "");
    }
    if (slowest != nullptr) {
      list += fmt::format(", then validating {} {}s (validating webhooks run in parallel: the "
                          "longest counts)",
                          slowest->id(), slowest->timeout().count());
    }
    auto obj = commonLabels(obj_selectors);
    auto ns = commonLabels(ns_selectors);
    Finding finding = findingFor(*ordered.back(), "timeouts-exceed-deadline", Severity::kWarning);
    for (const Hook* hook : ordered) {
      if (hook != ordered.back()) finding.related.push_back(hook->id());
    }
    if (slowest != nullptr) finding.related.push_back(slowest->id());
    finding.message = fmt::format(
        "A {} {}{} meets {}: {}s in all, above the request's {}s deadline (kube-apiserver "
        "--request-timeout; every webhook shares it, and ?timeout= tells each what is left). "
        "When they are slow together, the request fails with 504 before the last of them is "
        "called, whatever their failurePolicy.",
        probe.describe(),
        probe.namespaced && ns ? " in a namespace labelled " + formatLabels(*ns) : "",
        obj ? " with the labels " + formatLabels(*obj) : "", list, total.count(),
        deadline.count());
    finding.fix =
        "Lower timeoutSeconds (an injector answers in milliseconds; 10s is the default, a few "
        "seconds is plenty), or make the selectors of webhooks that need not meet the same "
        "request disjoint.";
    out.push_back(std::move(finding));
  }
}

// --- dry-run-side-effects ---

void checkSideEffects(const std::vector<Hook>& hooks, std::vector<Finding>& out) {
  for (const auto& hook : hooks) {
    const auto& side_effects = hook.webhook().side_effects;
    if (!side_effects || (*side_effects != core::kSideEffectsSome &&
                          *side_effects != core::kSideEffectsUnknown)) {
      continue;
    }
    Finding finding = findingFor(hook, "dry-run-side-effects", Severity::kError);
    finding.message = fmt::format(
        "sideEffects {}: every dry-run request it matches (kubectl apply --dry-run=server, "
        "kubectl diff, GitOps previews) is refused with 400 `admission webhook \"{}\" does not "
        "support dry run`, without calling it and whatever its failurePolicy. "
        "(admissionregistration.k8s.io/v1 no longer accepts {} on create.)",
        *side_effects, hook.webhook().name, *side_effects);
    finding.fix =
        "sideEffects: None when the webhook has no side effects; NoneOnDryRun when it skips "
        "them for requests with request.dryRun true.";
    out.push_back(std::move(finding));
  }
}

// --- reinvocation-order ---

void checkReinvocation(const std::vector<Hook>& mutating, const std::vector<Probe>& probes,
                       std::vector<Finding>& out) {
  // One finding per pair of configurations and case (Istio's configuration has four webhooks).
  std::set<std::tuple<std::string, std::string, bool>> reported;
  for (std::size_t i = 0; i < mutating.size(); ++i) {
    for (std::size_t j = i + 1; j < mutating.size(); ++j) {
      const Hook& first = mutating[i];
      const Hook& second = mutating[j];
      const bool first_never = !first.reinvoked();
      const bool second_never = !second.reinvoked();
      if (!first_never && !second_never) continue;
      auto shared = std::find_if(probes.begin(), probes.end(), [&](const Probe& probe) {
        return covers(first, probe) && covers(second, probe);
      });
      if (shared == probes.end()) continue;
      auto ns = commonLabels({&first.namespaceSelector(), &second.namespaceSelector()});
      auto obj = commonLabels({&first.objectSelector(), &second.objectSelector()});
      if (!ns || !obj) continue;
      if (first.entry.configuration != second.entry.configuration &&
          !reported.emplace(first.entry.configuration, second.entry.configuration, first_never)
               .second) {
        continue;
      }
      Finding finding;
      if (first_never) {
        finding = findingFor(first, "reinvocation-order", Severity::kWarning);
        finding.related = {second.id()};
        finding.message = fmt::format(
            "For a {} (namespace labels {}, object labels {}) it is called before {} and, with "
            "reinvocationPolicy Never, is not called again: what {} adds (containers, volumes, "
            "annotations) is never seen by it. The result depends on the configuration names, "
            "which set the order.",
            shared->describe(), formatLabels(*ns), formatLabels(*obj), second.id(),
            second.webhook().name);
        finding.fix = fmt::format(
            "reinvocationPolicy: IfNeeded on {} (it must then be idempotent: apiserver-sim "
            "check-idempotence checks it), or rename the configurations so that the webhook "
            "that reads the others' changes is called last.",
            first.webhook().name);
      } else {
        finding = findingFor(second, "reinvocation-order", Severity::kWarning);
        finding.related = {first.id()};
        finding.message = fmt::format(
            "For a {} (namespace labels {}, object labels {}): when {} changes the object, {} "
            "(reinvocationPolicy IfNeeded) is called again after it, and {}, with "
            "reinvocationPolicy Never, never sees what that second call adds.",
            shared->describe(), formatLabels(*ns), formatLabels(*obj), second.id(), first.id(),
            second.webhook().name);
        finding.fix = fmt::format(
            "reinvocationPolicy: IfNeeded on {} too (and keep it idempotent: apiserver-sim "
            "check-idempotence), or make {} not depend on what {} adds.",
            second.webhook().name, second.webhook().name, first.webhook().name);
      }
      out.push_back(std::move(finding));
    }
  }
}

// --- object-selector-bypass ---

void checkObjectSelectors(const std::vector<Hook>& hooks, std::vector<Finding>& out) {
  for (const auto& hook : hooks) {
    std::vector<std::string> opt_outs;
    for (const auto& requirement : hook.objectSelector().requirements()) {
      if (requirement.op == core::SelectorOperator::kNotIn && !requirement.values.empty()) {
        opt_outs.push_back(requirement.key + "=" + requirement.values.front());
      } else if (requirement.op == core::SelectorOperator::kDoesNotExist) {
        opt_outs.push_back(requirement.key);
      }
    }
    if (opt_outs.empty()) continue;
    std::string labels;
    for (const auto& label : opt_outs) labels += (labels.empty() ? "" : " or ") + label;
    const bool validating = hook.entry.kind == WebhookKind::kValidating;
    Finding finding = findingFor(hook, "object-selector-bypass",
                                 validating ? Severity::kWarning : Severity::kInfo);
    finding.message = fmt::format(
        "Its objectSelector ({}) skips objects labelled {}. Object labels are chosen by whoever "
        "creates the object, so anyone allowed to create one can skip this {} webhook by adding "
        "the label{}.",
        selectorText(hook.objectSelector()), labels, kindWord(hook.entry.kind),
        validating ? ": the check it enforces is optional"
                   : " (an opt-out by design for an injector; a problem only if the mutation is "
                     "a security control)");
    finding.fix =
        validating
            ? "Select by namespace instead (namespace labels need rights on the Namespace), or "
              "keep the opt-out but decide who may use it: a matchCondition or the webhook "
              "itself checking request.userInfo."
            : "If every pod must get the mutation, drop the opt-out from the objectSelector and "
              "enforce it with a validating webhook or ValidatingAdmissionPolicy.";
    out.push_back(std::move(finding));
  }
}

// --- match-conditions-never-true ---

// Whether an expression reads only request fields that the rules fix (operation, resource,
// kind, subResource): then evaluating it for every request the rules admit decides it. A crude
// lexer over CEL: identifiers outside string literals.
bool decidedByRules(const std::string& expression) {
  static const std::set<std::string, std::less<>> kAllowedRequestFields = {
      "operation", "resource", "kind", "subResource", "requestKind", "requestResource"};
  static const std::set<std::string, std::less<>> kLiterals = {"true", "false", "null", "in"};
  std::size_t i = 0;
  while (i < expression.size()) {
    const char c = expression[i];
    if (c == '"' || c == '\'') {  // a string literal (escapes skipped)
      ++i;
      while (i < expression.size() && expression[i] != c) i += expression[i] == '\\' ? 2 : 1;
      ++i;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const bool member = i > 0 && expression[i - 1] == '.';
      std::size_t end = i;
      while (end < expression.size() &&
             (std::isalnum(static_cast<unsigned char>(expression[end])) || expression[end] == '_')) {
        ++end;
      }
      const std::string word = expression.substr(i, end - i);
      std::size_t next = end;
      while (next < expression.size() && expression[next] == ' ') ++next;
      const bool call = next < expression.size() && expression[next] == '(';
      if (!member && !call && !kLiterals.contains(word)) {
        if (word != "request") return false;  // object, oldObject, authorizer, a macro variable
        if (next >= expression.size() || expression[next] != '.') return false;
        std::size_t field = next + 1;
        std::size_t field_end = field;
        while (field_end < expression.size() &&
               std::isalnum(static_cast<unsigned char>(expression[field_end]))) {
          ++field_end;
        }
        if (!kAllowedRequestFields.contains(expression.substr(field, field_end - field))) {
          return false;
        }
        end = field_end;
      }
      i = end;
      continue;
    }
    ++i;
  }
  return true;
}

// Every request the rules admit, when they name no wildcard resource or group.
std::optional<std::vector<Probe>> requestsOf(const core::Webhook& webhook) {
  std::vector<Probe> probes;
  for (const auto& rule : webhook.rules) {
    for (const auto& group : rule.api_groups) {
      if (group == "*") return std::nullopt;
      for (const auto& version : rule.api_versions) {
        if (version == "*") return std::nullopt;
        for (const auto& resource : rule.resources) {
          if (resource.find('*') != std::string::npos || resource.find('/') != std::string::npos) {
            return std::nullopt;
          }
          auto info = core::findResource(core::GroupVersionResource{group, version, resource});
          if (!info) return std::nullopt;
          std::vector<std::string> operations = rule.operations;
          if (std::find(operations.begin(), operations.end(), "*") != operations.end()) {
            operations = {"CREATE", "UPDATE", "DELETE", "CONNECT"};
          }
          for (const auto& operation : operations) {
            probes.push_back(Probe{operation, info->resource, info->kind, info->namespaced});
          }
        }
      }
    }
  }
  return probes;
}

void checkMatchConditions(const std::vector<Hook>& hooks, const LintOptions& options,
                          std::vector<Finding>& out) {
  for (const auto& hook : hooks) {
    const auto& conditions = hook.webhook().match_conditions;
    if (conditions.empty()) continue;
    if (!options.evaluator) {
      Finding finding = findingFor(hook, "match-conditions-never-true", Severity::kInfo);
      finding.message = fmt::format(
          "Skipped: its {} matchConditions need CEL, and {}.", conditions.size(),
          options.cel_unavailable_reason.empty() ? "no CEL evaluator is available"
                                                 : options.cel_unavailable_reason);
      finding.fix = "Build kube-cel (bash scripts/build-kube.sh) and lint again.";
      out.push_back(std::move(finding));
      continue;
    }
    const auto requests = requestsOf(hook.webhook());
    if (!requests || requests->empty()) continue;  // wildcard rules: not decided here
    for (std::size_t c = 0; c < conditions.size(); ++c) {
      if (!decidedByRules(conditions[c].expression)) continue;
      HookEntry single = hook.entry;
      single.webhook.match_conditions = {conditions[c]};
      bool ever_true = false;
      for (const auto& probe : *requests) {
        std::vector<std::variant<bool, std::string>> results;
        try {
          results = options.evaluator(single, attributesFor(probe, "lint"), probe.kind);
        } catch (const std::exception&) {
          ever_true = true;  // cannot tell: say nothing
          break;
        }
        if (results.size() != 1 || !std::holds_alternative<bool>(results[0]) ||
            std::get<bool>(results[0])) {
          ever_true = true;  // true, or an error (which is not "false")
          break;
        }
      }
      if (ever_true) continue;
      std::string admitted;
      for (const auto& probe : *requests) {
        admitted += (admitted.empty() ? "" : ", ") + probe.describe();
      }
      Finding finding = findingFor(hook, "match-conditions-never-true", Severity::kWarning);
      finding.message = fmt::format(
          "matchCondition {} (`{}`) reads only what the rules fix, and is false for every "
          "request they admit ({}): the webhook is never called.",
          conditions[c].name, conditions[c].expression, admitted);
      finding.fix = "Correct the expression or the rules (compare the resource names, kinds and "
                    "operations they use).";
      out.push_back(std::move(finding));
    }
  }
}

}  // namespace

std::string_view toString(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kError:
      return "error";
  }
  return "?";
}

std::optional<Severity> parseSeverity(std::string_view text) {
  if (text == "info") return Severity::kInfo;
  if (text == "warning") return Severity::kWarning;
  if (text == "error") return Severity::kError;
  return std::nullopt;
}

const std::vector<RuleInfo>& rules() {
  static const std::vector<RuleInfo> all = [] {
    std::vector<RuleInfo> out = kRules;
    const auto& policy = detail::policyRules();
    out.insert(out.end(), policy.begin(), policy.end());
    return out;
  }();
  return all;
}

std::vector<Finding> lint(const LintInput& input, const LintOptions& options) {
  std::vector<Finding> findings;
  checkValidation(input.configurations, findings);
  // As stored: v1 defaults applied.
  std::vector<core::WebhookConfiguration> stored;
  std::map<std::string, std::string> source_of;  // "<kind>/<name>" -> source
  for (const auto& [configuration, source] : input.configurations) {
    auto defaulted = configuration;
    core::applyV1Defaults(defaulted);
    source_of[std::string(core::kindName(defaulted.kind)) + "/" + defaulted.name] = source;
    stored.push_back(std::move(defaulted));
  }
  auto hooksOf = [&](WebhookKind kind) {
    std::vector<Hook> hooks;
    for (auto& entry : orderHooks(stored, kind)) {
      std::string source = source_of[std::string(core::kindName(kind)) + "/" + entry.configuration];
      hooks.push_back(Hook{std::move(entry), std::move(source)});
    }
    return hooks;
  };
  const auto mutating = hooksOf(WebhookKind::kMutating);
  const auto validating = hooksOf(WebhookKind::kValidating);
  std::vector<Hook> all = mutating;
  all.insert(all.end(), validating.begin(), validating.end());
  const auto probes = probesOf(all);

  checkInjectors(mutating, findings);
  checkLockout(all, input.facts, findings);
  checkTimeouts(mutating, validating, probes, options.request_timeout, findings);
  checkSideEffects(all, findings);
  checkReinvocation(mutating, probes, findings);
  checkObjectSelectors(all, findings);
  checkMatchConditions(all, options, findings);
  detail::checkPolicies(input, options, findings);

  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return a.severity > b.severity;
  });
  return findings;
}

std::string renderText(const std::vector<Finding>& findings, std::size_t configurations,
                       std::size_t webhooks, std::size_t policies) {
  std::string out;
  std::map<Severity, std::size_t> counts;
  for (const auto& finding : findings) {
    ++counts[finding.severity];
    std::string subject = !finding.object_kind.empty()
                              ? fmt::format("{} {}", finding.object_kind, finding.configuration)
                          : finding.webhook.empty()
                              ? fmt::format("{} {}", core::kindName(finding.kind),
                                            finding.configuration)
                              : fmt::format("{} webhook {} ({} {})", kindWord(finding.kind),
                                            finding.webhook, core::kindName(finding.kind),
                                            finding.configuration);
    out += fmt::format("{:<8}{}  {}\n", toString(finding.severity), finding.rule, subject);
    if (!finding.source.empty()) out += "  from: " + finding.source + "\n";
    if (!finding.related.empty()) {
      std::string with;
      for (const auto& other : finding.related) with += (with.empty() ? "" : ", ") + other;
      out += "  with: " + with + "\n";
    }
    out += "  " + finding.message + "\n";
    out += "  fix: " + finding.fix + "\n\n";
  }
  out += fmt::format(
      "{} configuration{}, {} webhook{}{}: {} error{}, {} warning{}, {} info\n", configurations,
      configurations == 1 ? "" : "s", webhooks, webhooks == 1 ? "" : "s",
      policies == 0 ? std::string()
                    : fmt::format(", {} admission policy object{}", policies,
                                  policies == 1 ? "" : "s"),
      counts[Severity::kError],
      counts[Severity::kError] == 1 ? "" : "s", counts[Severity::kWarning],
      counts[Severity::kWarning] == 1 ? "" : "s", counts[Severity::kInfo]);
  return out;
}

nlohmann::json renderJson(const std::vector<Finding>& findings, std::size_t configurations,
                          std::size_t webhooks, std::size_t policies) {
  nlohmann::json list = nlohmann::json::array();
  std::map<Severity, std::size_t> counts;
  for (const auto& finding : findings) {
    ++counts[finding.severity];
    list.push_back({{"rule", finding.rule},
                    {"severity", std::string(toString(finding.severity))},
                    {"kind", finding.object_kind.empty()
                                 ? std::string(core::kindName(finding.kind))
                                 : finding.object_kind},
                    {"configuration", finding.configuration},
                    {"webhook", finding.webhook},
                    {"related", finding.related},
                    {"message", finding.message},
                    {"fix", finding.fix},
                    {"source", finding.source}});
  }
  return {{"findings", std::move(list)},
          {"summary",
           {{"configurations", configurations},
            {"webhooks", webhooks},
            {"policies", policies},
            {"error", counts[Severity::kError]},
            {"warning", counts[Severity::kWarning]},
            {"info", counts[Severity::kInfo]}}}};
}

int exitCode(const std::vector<Finding>& findings, std::optional<Severity> threshold) {
  if (!threshold) return 0;
  return std::any_of(findings.begin(), findings.end(),
                     [&](const Finding& finding) { return finding.severity >= *threshold; })
             ? 1
             : 0;
}

}  // namespace harness::sim::lint
