// explain against a live cluster (live_explain.h).

#include "harness/sim/live_explain.h"

#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <fstream>
#include <set>
#include <thread>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/core/object.h"
#include "harness/core/status.h"
#include "harness/core/yaml.h"
#include "harness/go/regexp.h"
#include "harness/process/child_process.h"
#include "harness/sim/injector_process.h"
#include "harness/sim/webhook_source.h"
#include "live_policies.h"

namespace harness::sim::live {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr char kLinkerdWebhook[] = "linkerd-proxy-injector.linkerd.io";
constexpr char kIstioWebhookSuffix[] = "sidecar-injector.istio.io";
constexpr auto kInjectorDeadline = std::chrono::seconds(120);

std::string stringAt(const json& object, const char* key) {
  auto it = object.is_object() ? object.find(key) : object.end();
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

const json& metadataOf(const json& object) {
  static const json kEmpty = json::object();
  auto it = object.is_object() ? object.find("metadata") : object.end();
  return it != object.end() && it->is_object() ? *it : kEmpty;
}

// Runs the injector's offline `inject --explain` and returns its stdout, or an error with its
// exit status and stderr.
core::Result<std::string> runInjector(std::vector<std::string> argv, const fs::path& log) {
  auto child = process::ChildProcess::startPiped(std::move(argv), log);
  if (!child.ok()) return child.error();
  (*child)->closeStdin();
  std::string out;
  const int fd = (*child)->stdoutFd();
  const auto deadline = std::chrono::steady_clock::now() + kInjectorDeadline;
  char buffer[4096];
  while (true) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      (*child)->stop();
      return core::makeError("the injector did not finish within 120s");
    }
    pollfd ready{fd, POLLIN, 0};
    const int polled = ::poll(&ready, 1, static_cast<int>(left.count()));
    if (polled < 0 && errno == EINTR) continue;
    if (polled <= 0) continue;
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: the injector closed its stdout (it is exiting)
    out.append(buffer, static_cast<std::size_t>(n));
  }
  while ((*child)->running() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const int status = (*child)->stop();
  // 0: processed; 1: the webhook would deny (its decision is in the output).
  if (status != 0 && status != 1) {
    return core::makeError(fmt::format("injector inject failed ({}): {}",
                                       process::describeExitStatus(status),
                                       process::tailOf(log, 10)));
  }
  return out;
}

core::Result<void> writeYaml(const fs::path& file, const json& document) {
  std::ofstream out(file, std::ios::binary | std::ios::trunc);
  out << core::toYaml(document);
  if (!out) return core::makeError("cannot write " + file.string());
  return {};
}

// The injector's decision for the object, from the cluster's configuration.
struct InjectorDecision {
  std::string text;  // the injector's own explanation, indented by the caller
  std::string decision;
  std::string error;
  nlohmann::json patch;        // an injected object: the JSON patch the webhook would answer
  std::string patch_error;     // the patch could not be computed (the decision stands)
};

InjectorDecision decide(const InjectorIdentity& injector, const ClusterSnapshot& cluster,
                        const json& object, const std::string& namespace_name,
                        const LiveExplainOptions& options) {
  InjectorDecision out;
  for (const auto& name : injector.config_maps) {
    if (!cluster.config_maps.contains(injector.control_plane_namespace + "/" + name)) {
      out.error = fmt::format("ConfigMap {}/{} is not in the cluster (or not readable): the "
                              "injector's configuration is unknown",
                              injector.control_plane_namespace, name);
      return out;
    }
  }
  auto binary = findInjectorBinary(options.injector_binary);
  if (!binary.ok()) {
    out.error = binary.error().message;
    return out;
  }
  const fs::path dir = options.work_dir / ("inject-" + injector.profile);
  std::error_code ec;
  fs::create_directories(dir, ec);
  std::vector<std::string> argv = {binary->string(), "inject", "--explain", "--profile",
                                   injector.profile, "-n", namespace_name};
  auto configMap = [&](std::size_t i) {
    return cluster.config_maps.at(injector.control_plane_namespace + "/" + injector.config_maps[i]);
  };
  std::vector<std::pair<fs::path, json>> files = {{dir / "object.yaml", object}};
  if (auto ns = cluster.namespaces.find(namespace_name); ns != cluster.namespaces.end()) {
    files.emplace_back(dir / "namespace.yaml", ns->second);
    argv.insert(argv.end(), {"--namespace-file", (dir / "namespace.yaml").string()});
  }
  if (injector.profile == "linkerd") {
    files.emplace_back(dir / "linkerd-config.yaml", configMap(0));
    argv.insert(argv.end(), {"--values", (dir / "linkerd-config.yaml").string(),
                             "--linkerd-namespace", injector.control_plane_namespace});
  } else {
    files.emplace_back(dir / "istio-sidecar-injector.yaml", configMap(0));
    files.emplace_back(dir / "mesh.yaml", configMap(1));
    argv.insert(argv.end(), {"--istio-config", (dir / "istio-sidecar-injector.yaml").string(),
                             "--istio-values", (dir / "istio-sidecar-injector.yaml").string(),
                             "--istio-mesh", (dir / "mesh.yaml").string()});
  }
  for (const auto& [file, document] : files) {
    if (auto written = writeYaml(file, document); !written.ok()) {
      out.error = written.error().message;
      return out;
    }
  }
  argv.push_back((dir / "object.yaml").string());
  auto ran = runInjector(argv, dir / "injector.log");
  if (!ran.ok()) {
    out.error = ran.error().message;
    return out;
  }
  out.text = *ran;
  // The first line is "<object>: <decision>[ (...)]".
  const auto first = out.text.substr(0, out.text.find('\n'));
  if (auto colon = first.rfind(": "); colon != std::string::npos) {
    out.decision = first.substr(colon + 2, first.find(' ', colon + 2) - colon - 2);
  }
  // Linkerd says "inject", Istio "injected" (the injector's --explain words): the patch its
  // webhook would answer with, from the same inputs (`injector inject --patch -o json`: one entry
  // per object, {"decision", "object", "patch"}).
  if (out.decision != "inject" && out.decision != "injected") return out;
  std::replace(argv.begin(), argv.end(), std::string("--explain"), std::string("--patch"));
  argv.insert(argv.end() - 1, {"-o", "json"});
  auto patched = runInjector(std::move(argv), dir / "injector-patch.log");
  if (!patched.ok()) {
    out.patch_error = patched.error().message;
    return out;
  }
  const json entries = json::parse(*patched, nullptr, false);
  if (!entries.is_array() || entries.size() != 1 || !entries[0].is_object() ||
      !entries[0].contains("patch") || !entries[0]["patch"].is_array()) {
    out.patch_error = "injector inject --patch answered no patch for the object";
    return out;
  }
  out.patch = entries[0]["patch"];
  return out;
}

}  // namespace

std::optional<InjectorIdentity> identifyInjector(const core::Webhook& webhook) {
  const auto& service = webhook.client_config.service;
  if (!service) return std::nullopt;
  if (webhook.name == kLinkerdWebhook) {
    return InjectorIdentity{"linkerd", service->namespace_name, {"linkerd-config"}};
  }
  if (webhook.name.ends_with(kIstioWebhookSuffix) && service->name.starts_with("istiod")) {
    // istiod serves the default revision; istiod-<rev> the revision <rev>, whose ConfigMaps are
    // suffixed the same way (manifests/charts/istio-control/istio-discovery).
    const std::string suffix = service->name.substr(std::string("istiod").size());
    return InjectorIdentity{
        "istio", service->namespace_name, {"istio-sidecar-injector" + suffix, "istio" + suffix}};
  }
  return std::nullopt;
}

core::Result<ClusterSnapshot> readCluster(const ClusterGet& get, const std::string& namespace_name,
                                          std::string source) {
  ClusterSnapshot snapshot;
  snapshot.source = std::move(source);
  for (const auto& [resource, kind] :
       {std::pair{"mutatingwebhookconfigurations", "MutatingWebhookConfiguration"},
        std::pair{"validatingwebhookconfigurations", "ValidatingWebhookConfiguration"}}) {
    const std::string path = std::string("/apis/admissionregistration.k8s.io/v1/") + resource;
    auto listed = get(path);
    if (!listed.ok()) return listed.error().within(snapshot.source);
    if (!*listed) return core::makeError(snapshot.source + ": GET " + path + ": not found");
    const json& items = (**listed).value("items", json::array());
    if (!items.is_array()) return core::makeError(snapshot.source + ": GET " + path + ": no items");
    for (json item : items) {
      item["apiVersion"] = "admissionregistration.k8s.io/v1";
      item["kind"] = kind;
      auto parsed = core::parseWebhookConfiguration(item);
      if (!parsed.ok()) {
        return parsed.error().within(fmt::format("{}: {} {}", snapshot.source, kind,
                                                 stringAt(metadataOf(item), "name")));
      }
      snapshot.configurations.push_back(std::move(*parsed));
    }
  }
  if (auto policies = detail::readPolicies(get, snapshot); !policies.ok()) {
    return policies.error();
  }
  auto ns = get("/api/v1/namespaces/" + namespace_name);
  if (!ns.ok()) return ns.error().within(snapshot.source);
  if (*ns) {
    (**ns)["apiVersion"] = "v1";
    (**ns)["kind"] = "Namespace";
    snapshot.namespaces[namespace_name] = std::move(**ns);
  }
  std::set<std::string> wanted;
  for (const auto& configuration : snapshot.configurations) {
    for (const auto& webhook : configuration.webhooks) {
      if (auto injector = identifyInjector(webhook)) {
        for (const auto& name : injector->config_maps) {
          wanted.insert(injector->control_plane_namespace + "/" + name);
        }
      }
    }
  }
  for (const auto& key : wanted) {
    const auto slash = key.find('/');
    auto map = get(fmt::format("/api/v1/namespaces/{}/configmaps/{}", key.substr(0, slash),
                               key.substr(slash + 1)));
    if (!map.ok()) return map.error().within(snapshot.source);
    if (!*map) continue;  // the narration says it is missing
    (**map)["apiVersion"] = "v1";
    (**map)["kind"] = "ConfigMap";
    snapshot.config_maps[key] = std::move(**map);
  }
  return snapshot;
}

core::Result<LiveExplanation> explainCreate(const ClusterSnapshot& cluster, const json& object,
                                            const std::string& default_namespace,
                                            const LiveExplainOptions& options) {
  auto gvk = core::groupVersionKindOf(object);
  if (!gvk.ok()) return gvk.error().within("the object");
  auto info = core::findResourceForKind(*gvk);
  if (!info) {
    return core::makeError("the object: kind " + gvk->toString() +
                           " is not one apiserver-sim knows the resource of");
  }
  const auto& metadata = metadataOf(object);
  std::string namespace_name = stringAt(metadata, "namespace");
  if (namespace_name.empty()) namespace_name = default_namespace;
  if (!info->namespaced) namespace_name.clear();

  AdmissionAttributes attributes;
  attributes.operation = std::string(kOperationCreate);
  attributes.kind = *gvk;
  attributes.resource = info->resource;
  attributes.namespace_name = namespace_name;
  attributes.name = stringAt(metadata, "name");
  attributes.object = object;
  attributes.object->erase("status");

  const NamespaceLabelsLookup lookup = detail::namespaceLabels(cluster);

  std::vector<core::WebhookConfiguration> stored = cluster.configurations;
  for (auto& configuration : stored) core::applyV1Defaults(configuration);

  LiveExplanation out;
  std::string what = attributes.name.empty()
                         ? stringAt(metadata, "generateName") + "<generated>"
                         : attributes.name;
  out.text = fmt::format("CREATE {} {} {}{}\n", info->resource.resource, info->resource.version,
                         namespace_name.empty() ? "" : namespace_name + "/", what);
  out.text += fmt::format("  cluster: {}\n", cluster.source);
  if (!namespace_name.empty()) {
    auto ns = cluster.namespaces.find(namespace_name);
    if (ns == cluster.namespaces.end()) {
      out.text += fmt::format("  namespace {}: does not exist (a create there fails with 404 "
                              "NotFound before any webhook)\n",
                              namespace_name);
    } else {
      auto labels = core::labelsOf(ns->second);
      std::string text;
      if (labels.ok()) {
        for (const auto& [key, value] : *labels) text += (text.empty() ? "" : ",") + key + "=" + value;
      }
      out.text += fmt::format("  namespace {}: labels {}\n", namespace_name,
                              text.empty() ? "<none>" : text);
    }
  }
  out.text +=
      "  Nothing is created and no webhook is called: each webhook below is matched against the "
      "object as sent; a patch from an earlier webhook could change what a later one sees.\n";
  if (!options.evaluator && !options.cel_unavailable_reason.empty()) {
    out.text += "  matchConditions are not evaluated: " + options.cel_unavailable_reason + "\n";
  }
  out.json = {{"request", out.text.substr(0, out.text.find('\n'))},
              {"cluster", cluster.source},
              {"namespace", namespace_name}};
  json webhooks = json::array();
  json policies = json::array();
  std::size_t hidden = 0;
  std::size_t hidden_policies = 0;
  bool denied_by_policy = false;
  for (const auto kind : {core::WebhookKind::kMutating, core::WebhookKind::kValidating}) {
    // The policy plugin runs before the webhooks of its phase (AllOrderedPlugins).
    auto narrated = detail::explainPolicies(kind == core::WebhookKind::kValidating, cluster,
                                            attributes, options);
    out.text += indentText(narrated.text, "  ");
    hidden_policies += narrated.hidden;
    denied_by_policy = denied_by_policy || narrated.denied;
    for (auto& entry : narrated.entries) policies.push_back(std::move(entry));
    for (const auto& hook : orderHooks(stored, kind)) {
      MatchRecord record;
      record.kind = kind;
      record.configuration = hook.configuration;
      record.webhook = hook.webhook.name;
      record.index = hook.index;
      const MatchConditionEvaluator* evaluator =
          options.evaluator ? &options.evaluator : nullptr;
      record.match = shouldCallHook(hook, attributes, lookup, evaluator);
      const bool called = record.match.outcome == MatchOutcome::kCall;
      bool shown = !options.explain.only_called || called;
      if (shown && !options.explain.webhook_filter.empty()) {
        const auto compiled = go::Regexp::compile(options.explain.webhook_filter);
        shown = !compiled || compiled->matchString(hook.configuration + "/" + hook.webhook.name);
      }
      if (!shown) {
        ++hidden;
        continue;
      }
      std::string text = explainWebhook(record, nullptr, options.explain);
      json entry = {{"kind", kind == core::WebhookKind::kMutating ? "mutating" : "validating"},
                    {"configuration", hook.configuration},
                    {"webhook", hook.webhook.name},
                    {"index", hook.index},
                    {"decision", std::string(toString(record.match.outcome))},
                    {"skippedBy", record.match.skipped_by},
                    {"deciding", decidingClauses(record.match)},
                    {"clauses", record.match.explanation}};
      if (record.match.error) entry["error"] = record.match.error->message;
      auto injector = kind == core::WebhookKind::kMutating ? identifyInjector(hook.webhook)
                                                            : std::nullopt;
      if (called && injector) {
        const auto decision = decide(*injector, cluster, object, namespace_name, options);
        json injected = {{"profile", injector->profile},
                         {"controlPlaneNamespace", injector->control_plane_namespace}};
        if (!decision.error.empty()) {
          text += fmt::format("  {} injector's decision: unknown: {}\n", injector->profile,
                              decision.error);
          injected["error"] = decision.error;
        } else {
          text += fmt::format("  {} injector's decision (offline, on the cluster's {}):\n",
                              injector->profile, fmt::join(injector->config_maps, " and "));
          text += indentText(decision.text, "    ");
          injected["decision"] = decision.decision;
          injected["explanation"] = decision.text;
          if (!decision.patch.is_null()) {
            // As a call's patch in a scenario's explanation: each operation with the value
            // before and after, applied to the object as sent.
            text += "  predicted patch (the injector's, offline; nothing is sent):\n";
            text += indentText(explainPatch(object, decision.patch, options.explain.color),
                               "    ");
            injected["patch"] = patchDiff(object, decision.patch);
          } else if (!decision.patch_error.empty()) {
            text += "  predicted patch: unknown: " + decision.patch_error + "\n";
            injected["patchError"] = decision.patch_error;
          }
          // Linkerd says "inject", Istio "injected" (the injector's --explain words).
          if (decision.decision == "inject" || decision.decision == "injected") {
            out.would_inject = true;
          }
        }
        entry["injector"] = std::move(injected);
      }
      out.text += indentText(text, "  ");
      webhooks.push_back(std::move(entry));
    }
  }
  if (hidden > 0) {
    out.text += fmt::format("  ({} more webhook decision{} not shown: --webhook, --only-called)\n",
                            hidden, hidden == 1 ? "" : "s");
  }
  if (hidden_policies > 0) {
    out.text += fmt::format("  ({} more policy decision{} not shown: --webhook, --only-called)\n",
                            hidden_policies, hidden_policies == 1 ? "" : "s");
  }
  out.json["policies"] = std::move(policies);
  out.json["deniedByPolicy"] = denied_by_policy;
  out.json["webhooks"] = std::move(webhooks);
  out.json["wouldInject"] = out.would_inject;
  return out;
}

RunReport liveReport(const LiveExplanation& explanation, const std::string& object_file) {
  const json& live = explanation.json;
  json explain = {{"step", live.value("request", "")},
                  {"request", live.value("request", "")},
                  {"source", "live"},
                  {"cluster", live.value("cluster", "")},
                  {"plugins", json::array()},
                  {"reinvocation", {{"ran", false}, {"triggeredBy", json::array()}}},
                  {"wouldInject", explanation.would_inject}};
  json webhooks = json::array();
  for (json webhook : live.value("webhooks", json::array())) {
    webhook["round"] = 0;  // no patch is applied: no reinvocation is foreseen
    webhooks.push_back(std::move(webhook));
  }
  explain["webhooks"] = std::move(webhooks);
  explain["policies"] = live.value("policies", json::array());
  // Nothing is sent; a policy's denial is the one answer explain knows.
  json result = {{"sent", false},
                 {"allowed", true},
                 {"code", 0},
                 {"summary", "not sent: explain creates nothing and calls no webhook"}};
  StepResult step;
  step.name = live.value("request", "");
  step.status = StepStatus::kPassed;
  step.explanation = explanation.text;
  for (const auto& policy : explain["policies"]) {
    if (policy.value("decision", "") != "deny") continue;
    const bool validating = policy.value("kind", "") == "ValidatingAdmissionPolicy";
    result = {{"sent", false},
              {"allowed", false},
              {"code", policy.value("code", 0)},
              {"message", policy.value("message", "")},
              {"stage", validating ? "validation" : "mutating"},
              {"summary", fmt::format("would be denied by {} {}", policy.value("kind", ""),
                                      policy.value("policy", ""))}};
    step.status = StepStatus::kFailed;
    step.failures.push_back({"policy " + policy.value("policy", std::string()),
                             policy.value("message", std::string()), ""});
    break;
  }
  explain["result"] = std::move(result);
  step.explanation_json = std::move(explain);
  ScenarioResult scenario;
  scenario.name = "live cluster " + live.value("cluster", std::string());
  scenario.file = object_file;
  scenario.description = "explain --kubeconfig: nothing was created and no webhook was called";
  scenario.backend = "live";
  scenario.steps.push_back(std::move(step));
  RunReport report;
  report.scenarios.push_back(std::move(scenario));
  return report;
}

}  // namespace harness::sim::live
