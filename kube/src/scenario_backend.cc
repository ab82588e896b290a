// Scenarios against the real control plane (scenario_backend.h).

#include "harness/kube/scenario_backend.h"

#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <cctype>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/audit/log.h"
#include "harness/audit/policy.h"
#include "harness/core/json.h"
#include "harness/core/object.h"
#include "harness/core/status.h"
#include "harness/go/base64.h"
#include "harness/net/certificates.h"
#include "harness/net/client.h"
#include "harness/net/url.h"
#include "harness/sim/admission_policy.h"
#include "harness/sim/builtin_plugins.h"
#include "harness/sim/injector_process.h"
#include "harness/sim/matching.h"
#include "harness/sim/scenario_runner.h"
#include "harness/sim/stub_webhook.h"

namespace harness::kube {

namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

constexpr std::string_view kSyncLabel = "apiserver-sim.harness.dev/sync";
// Sorted after every configuration a scenario can name (byte order, docs/admission-chain.md
// §2.1), so the flattened indexes of the scenario's mutating webhooks stay the same.
constexpr std::string_view kSyncConfiguration = "zzzzzzzz-apiserver-sim-sync";
constexpr std::string_view kSyncWebhook = "sync.apiserver-sim.harness.dev";
// The sync stub's Service, in a namespace of its own.
constexpr std::string_view kSyncNamespace = "apiserver-sim-sync";
constexpr std::string_view kSyncService = "sync";
constexpr std::string_view kSyncHost = "sync.apiserver-sim-sync.svc";

// A resource for the sync request (a dry-run CREATE, labelled, in kSyncNamespace when
// namespaced).
// The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant()
// into a throw it cannot reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct SyncResource {
  core::GroupVersionResource resource;
  std::string kind;
  bool namespaced;
  json spec;  // fields the object needs besides metadata
};

const std::vector<SyncResource>& syncCandidates() {
  static const std::vector<SyncResource> kCandidates = {
      {{"coordination.k8s.io", "v1", "leases"}, "Lease", true, json::object()},
      {{"node.k8s.io", "v1", "runtimeclasses"}, "RuntimeClass", false, {{"handler", "runc"}}},
      {{"scheduling.k8s.io", "v1", "priorityclasses"}, "PriorityClass", false, {{"value", 1}}},
      {{"storage.k8s.io", "v1", "storageclasses"},
       "StorageClass",
       false,
       {{"provisioner", "apiserver-sim.harness.dev/none"}}},
  };
  return kCandidates;
}

std::string syncObjectName(int token) { return fmt::format("apiserver-sim-sync-{}", token); }

json syncObject(const SyncResource& resource, int token) {
  json metadata = {{"name", syncObjectName(token)},
                   {"labels", {{kSyncLabel, std::to_string(token)}}}};
  if (resource.namespaced) metadata["namespace"] = kSyncNamespace;
  json object = {{"apiVersion", resource.resource.apiVersion()},
                 {"kind", resource.kind},
                 {"metadata", std::move(metadata)}};
  for (const auto& [key, value] : resource.spec.items()) object[key] = value;
  return object;
}

// The sync label's value on the object of an AdmissionReview a stub receives, or nullopt when
// the review is one of the scenario's (its object lacks the sync label or name).
std::optional<std::string> syncToken(const json& review) {
  if (!review.is_object() || !review.contains("request") || !review["request"].is_object()) {
    return std::nullopt;
  }
  const json& request = review["request"];
  if (!request.contains("object") || !request["object"].is_object()) return std::nullopt;
  const json metadata = request["object"].value("metadata", json::object());
  if (!metadata.is_object()) return std::nullopt;
  const json labels = metadata.value("labels", json::object());
  if (!labels.is_object() || !labels.contains(std::string(kSyncLabel)) ||
      !labels[std::string(kSyncLabel)].is_string() ||
      metadata.value("name", "").rfind("apiserver-sim-sync-", 0) != 0) {
    return std::nullopt;
  }
  return labels[std::string(kSyncLabel)].get<std::string>();
}

bool isDefaultServiceAccount(const json& object) {
  return object.value("kind", "") == "ServiceAccount" && object.value("apiVersion", "") == "v1" &&
         object.contains("metadata") && object["metadata"].value("name", "") == "default";
}

// A starting object in a namespace the starting state does not have: the simulator stores it
// as given, a real server cannot (404). The name of the first one, or nullopt.
std::optional<std::string> objectWithoutNamespace(const sim::Scenario& scenario) {
  std::set<std::string> namespaces = {"default", "kube-system", "kube-public", "kube-node-lease"};
  for (const auto& sourced : scenario.objects) {
    if (sourced.object.value("kind", "") == "Namespace" && sourced.object.contains("metadata")) {
      namespaces.insert(sourced.object["metadata"].value("name", ""));
    }
  }
  for (const auto& sourced : scenario.objects) {
    if (!sourced.object.contains("metadata") || isDefaultServiceAccount(sourced.object)) continue;
    const std::string ns = sourced.object["metadata"].value("namespace", "");
    if (!ns.empty() && !namespaces.contains(ns)) {
      return fmt::format("{}: the starting state has no namespace {} for it", sourced.location.toString(), ns);
    }
  }
  return std::nullopt;
}

bool writesWebhookConfiguration(const sim::RequestSpec& request) {
  return request.resource.group == core::kAdmissionRegistrationGroup &&
         (request.resource.resource == "mutatingwebhookconfigurations" ||
          request.resource.resource == "validatingwebhookconfigurations");
}

// A request that writes an object the admission policy plugins' informers watch: policies,
// bindings (and, for the param informers, anything: their CollectParams falls back to a direct
// read on a cache miss, so a param written just before is found).
bool writesAdmissionPolicy(const sim::RequestSpec& request) {
  return request.resource.group == core::kAdmissionRegistrationGroup &&
         (request.resource.resource == "validatingadmissionpolicies" ||
          request.resource.resource == "validatingadmissionpolicybindings" ||
          request.resource.resource == "mutatingadmissionpolicies" ||
          request.resource.resource == "mutatingadmissionpolicybindings");
}

// Whether the scenario has admission policies (in its starting state or written by a step): the
// policy informers are then synced as well.
bool usesAdmissionPolicies(const sim::Scenario& scenario) {
  for (const auto& sourced : scenario.objects) {
    if (sim::isAdmissionPolicyObject(sourced.object)) return true;
  }
  return std::any_of(scenario.steps.begin(), scenario.steps.end(),
                     [](const sim::Step& step) { return writesAdmissionPolicy(step.request); });
}

// The informer sync's request, chosen per scenario (see KubeSession::sync).
// The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant()
// into a throw it cannot reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct SyncPlan {
  SyncResource resource;
  // Webhooks of the scenario the request reaches anyway, "<configuration>/<webhook>" (when no
  // candidate is excluded by all of them): each is answered by a stub of the scenario, which
  // recognises the request (syncToken) and answers it allowed without recording it, or fails open.
  std::vector<std::string> reached;
};

// Every webhook of the scenario: its configurations and those its steps write, v1-defaulted.
// A configuration a step writes that does not parse is refused by the server and reaches nothing.
std::vector<sim::HookEntry> scenarioHooks(const sim::Scenario& scenario) {
  std::vector<const json*> configs;
  configs.reserve(scenario.webhook_configurations.size() + scenario.steps.size());
  for (const auto& sourced : scenario.webhook_configurations) configs.push_back(&sourced.object);
  for (const auto& step : scenario.steps) {
    if (writesWebhookConfiguration(step.request) && step.request.object) {
      configs.push_back(&*step.request.object);
    }
  }
  std::vector<sim::HookEntry> hooks;
  for (const json* object : configs) {
    auto config = core::parseWebhookConfiguration(*object);
    if (!config.ok()) continue;
    core::applyV1Defaults(*config);
    for (const auto& webhook : config->webhooks) {
      hooks.push_back({webhook, config->name, config->kind, 0});
    }
  }
  return hooks;
}

// The sync request as kube-apiserver's webhook dispatchers see it (admission.Attributes).
sim::AdmissionAttributes syncAttributes(const SyncResource& resource) {
  sim::AdmissionAttributes attributes;
  attributes.operation = std::string(sim::kOperationCreate);
  attributes.kind = {resource.resource.group, resource.resource.version, resource.kind};
  attributes.resource = resource.resource;
  if (resource.namespaced) attributes.namespace_name = kSyncNamespace;
  attributes.name = syncObjectName(1);
  attributes.object = syncObject(resource, 1);
  attributes.options = json{
      {"apiVersion", "meta.k8s.io/v1"}, {"kind", "CreateOptions"}, {"dryRun", {"All"}}};
  attributes.dry_run = true;
  attributes.user_info.username = "kube-local-admin";
  attributes.user_info.groups = {"system:masters", "system:authenticated"};
  return attributes;
}

// The endpoint of the scenario a webhook's clientConfig addresses (nullptr: none), and the
// address ("host:port").
std::pair<const sim::EndpointSpec*, std::string> endpointOf(
    const sim::Scenario& scenario, const core::WebhookClientConfig& client) {
  std::string address;
  if (client.service) {
    address = fmt::format("{}.{}.svc:{}", client.service->name, client.service->namespace_name,
                          client.service->port.value_or(443));
  } else if (client.url) {
    auto url = net::parseUrl(*client.url);
    address = url.ok() ? url->hostPort() : *client.url;
  }
  for (const auto& endpoint : scenario.endpoints) {
    for (const auto& service : endpoint.services) {
      if (client.service && service.hostPort() == address) return {&endpoint, address};
    }
    for (const auto& host : endpoint.hosts) {
      if (client.url && host == address) return {&endpoint, address};
    }
    if (client.url && endpoint.type == sim::EndpointType::kExternal &&
        endpoint.external.url == *client.url) {
      return {&endpoint, address};
    }
  }
  return {nullptr, address};
}

// Why the sync request cannot pass a webhook that is called for it ("" when it can): the chain
// must go on to the sentinels, so the webhook must answer it allowed without a patch, or fail
// open.
std::string syncBlocker(const sim::Scenario& scenario, const core::Webhook& webhook) {
  const bool ignore = webhook.failure_policy.value_or("Fail") == "Ignore";
  const std::string side_effects = webhook.side_effects.value_or("");
  if (side_effects != "None" && side_effects != "NoneOnDryRun") {
    // Refused for a dry-run request whatever the failurePolicy (k8s.io/apiserver
    // pkg/admission/plugin/webhook/mutating/dispatcher.go callAttrMutatingHook,
    // webhookerrors.NewDryRunUnsupportedErr).
    return fmt::format("sideEffects {}: kube-apiserver refuses a dry-run request it matches",
                       side_effects.empty() ? "unset" : side_effects);
  }
  if (!webhook.match_conditions.empty() && !ignore) {
    return "matchConditions under failurePolicy Fail (an evaluation error would deny the request)";
  }
  const auto [endpoint, address] = endpointOf(scenario, webhook.client_config);
  if (endpoint == nullptr) {
    return ignore ? "" : fmt::format("no endpoint of the scenario serves {}", address);
  }
  if (endpoint->type != sim::EndpointType::kStub) {
    return fmt::format("endpoint {} is {}, which would receive it (only the harness's stubs "
                       "recognise it)",
                       endpoint->name,
                       endpoint->type == sim::EndpointType::kInjector ? "the injector"
                                                                      : "an external webhook");
  }
  if (endpoint->stub.tls != sim::StubTls::kValid && !ignore) {
    return fmt::format(
        "endpoint {} serves a certificate kube-apiserver refuses, failurePolicy Fail",
        endpoint->name);
  }
  return "";
}

// The sync request for a scenario: a candidate no webhook of the scenario is called for (its
// rules, scope, namespaceSelector or objectSelector exclude it, as ShouldCallHook decides), else
// the candidate reaching the fewest, all of which it passes; or why none can be used.
std::variant<SyncPlan, std::string> planSync(const sim::Scenario& scenario) {
  const auto hooks = scenarioHooks(scenario);
  const sim::NamespaceLabelsLookup namespaces =
      [](const std::string& name) -> std::variant<core::StringMap, core::Status> {
    // The label kube-apiserver gives every namespace is the sync namespace's only one.
    if (name == kSyncNamespace) return core::StringMap{{"kubernetes.io/metadata.name", name}};
    return core::newNotFound({"", "namespaces"}, name);
  };
  std::optional<SyncPlan> best;
  std::vector<std::string> blocked;
  for (const auto& candidate : syncCandidates()) {
    const auto attributes = syncAttributes(candidate);
    SyncPlan plan{candidate, {}};
    std::string blocker;
    for (const auto& hook : hooks) {
      // Without a CEL evaluator a webhook with matchConditions is an error here: called, then.
      if (sim::shouldCallHook(hook, attributes, namespaces).outcome == sim::MatchOutcome::kSkip) {
        continue;
      }
      const std::string name = hook.configuration + "/" + hook.webhook.name;
      if (const std::string why = syncBlocker(scenario, hook.webhook); !why.empty()) {
        blocker = fmt::format("{} reaches {}: {}", candidate.resource.resource, name, why);
        break;
      }
      plan.reached.push_back(name);
    }
    if (!blocker.empty()) {
      blocked.push_back(std::move(blocker));
      continue;
    }
    if (!best || plan.reached.size() < best->reached.size()) best = std::move(plan);
    if (best->reached.empty()) break;
  }
  if (best) return *best;
  std::string reason = "the informer sync request (a labelled dry-run CREATE) cannot pass the "
                       "scenario's webhooks: ";
  for (std::size_t i = 0; i < blocked.size(); ++i) reason += (i ? "; " : "") + blocked[i];
  return reason;
}

// Whether a webhook of the scenario is called for kube-apiserver's identity Lease heartbeat: an
// UPDATE of kube-system/apiserver-<hash> by system:apiserver every 10 s
// (k8s.io/kubernetes pkg/controlplane/apiserver/server.go, the APIServerIdentity lease
// controller; IdentityLeaseRenewIntervalPeriod). Its calls would land in steps' stub
// observations and counters at random; the simulator has no such lease.
bool reachedByIdentityLease(const sim::Scenario& scenario) {
  const SyncResource lease = syncCandidates().front();
  sim::AdmissionAttributes attributes;
  attributes.operation = std::string(sim::kOperationUpdate);
  attributes.kind = {lease.resource.group, lease.resource.version, lease.kind};
  attributes.resource = lease.resource;
  attributes.namespace_name = "kube-system";
  attributes.name = "apiserver-identity";
  const json object = {
      {"apiVersion", lease.resource.apiVersion()},
      {"kind", lease.kind},
      {"metadata",
       {{"name", attributes.name},
        {"namespace", attributes.namespace_name},
        {"labels",
         {{"apiserver.kubernetes.io/identity", "kube-apiserver"},
          {"kubernetes.io/hostname", "localhost"}}}}}};
  attributes.object = object;
  attributes.old_object = object;
  attributes.user_info.username = "system:apiserver";
  attributes.user_info.groups = {"system:masters", "system:authenticated"};
  const sim::NamespaceLabelsLookup namespaces =
      [](const std::string& name) -> std::variant<core::StringMap, core::Status> {
    return core::StringMap{{"kubernetes.io/metadata.name", name}};
  };
  const auto hooks = scenarioHooks(scenario);
  return std::any_of(hooks.begin(), hooks.end(), [&](const sim::HookEntry& hook) {
    return sim::shouldCallHook(hook, attributes, namespaces).outcome != sim::MatchOutcome::kSkip;
  });
}

// The query parameters a client sends for the options of a CONNECT (PodExecOptions,
// PodAttachOptions, PodPortForwardOptions, PodProxyOptions...): kube-apiserver decodes them into
// the options object its webhooks receive (k8s.io/apiserver pkg/endpoints/handlers/rest.go
// ConnectResource, getRequestOptions; runtime.ParameterCodec), a list as the key repeated.
std::vector<std::string> connectParameters(const json& options) {
  std::vector<std::string> out;
  if (!options.is_object()) return out;
  for (const auto& [key, value] : options.items()) {
    if (key == "apiVersion" || key == "kind") continue;
    for (const json& item : value.is_array() ? value : json::array({value})) {
      const std::string text = item.is_string() ? item.get<std::string>() : item.dump();
      out.push_back(sim::queryEscape(key) + "=" + sim::queryEscape(text));
    }
  }
  return out;
}

// The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant()
// into a throw it cannot reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct ApiResponse {
  int status = 0;  // 0: no answer (error says why)
  std::string error;
  net::Headers headers;
  std::string body;
  json parsed;  // discarded when the body is not JSON
};

class KubeSession : public sim::BackendSession {
 public:
  KubeSession(KubeBackendOptions options, const sim::Scenario& scenario,
              sim::BackendOptions run_options)
      : options_(std::move(options)), scenario_(scenario), run_options_(std::move(run_options)) {}
  ~KubeSession() override { stop(); }

  core::Result<void> start(SyncPlan sync_plan) {
    sync_plan_ = std::move(sync_plan);
    // Short: the egress proxy's Unix socket lives in it (107 bytes at most).
    std::string pattern = "/tmp/apiserver-sim-kube-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) {
      return core::makeError("cannot create a work directory under /tmp");
    }
    work_dir_ = pattern;
    ControlPlaneOptions plane_options;
    plane_options.binaries = options_.binaries;
    plane_options.work_dir = work_dir_ / "plane";
    plane_options.keep_work_dir = options_.keep_work_dir;
    plane_options.connect_proxy = true;
    // Only the controllers whose effects the simulator reproduces (it stores no workloads'
    // children and collects no garbage): namespace deletion and the default ServiceAccount with
    // its token. The deployment, replicaset and job controllers would send requests of their
    // own through the scenario's webhooks while steps run, and the garbage collector would delete
    // starting objects whose owner UIDs the scenario wrote by hand.
    plane_options.controllers = {"namespace-controller", "serviceaccount-controller",
                                 "serviceaccount-token-controller"};
    // `url` webhooks through the proxy only when the scenario names hosts (they need it: no
    // DNS); otherwise they are dialled directly, as a cluster dials them.
    plane_options.proxy_url_webhooks = std::any_of(
        scenario_.endpoints.begin(), scenario_.endpoints.end(),
        [](const sim::EndpointSpec& endpoint) { return !endpoint.hosts.empty(); });
    // The scenario's audit policy, or one recording every admission annotation (so that
    // `expect.annotations` can be checked; no audit event is reported then, as the simulator
    // writes none without a policy).
    const fs::path policy_file = work_dir_ / "audit-policy.yaml";
    {
      std::ofstream out(policy_file);
      out << (scenario_.audit_policy_text.empty()
                  ? std::string("apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: "
                                "[RequestReceived]\nrules:\n  - level: Request\n")
                  : scenario_.audit_policy_text);
      if (!out) return core::makeError("cannot write " + policy_file.string());
    }
    plane_options.audit_policy_file = policy_file;
    plane_options.extra_apiserver_args.push_back(
        "--request-timeout=" + sim::durationParam(scenario_.request_timeout));
    if (reachedByIdentityLease(scenario_)) {
      // A catch-all webhook would see the identity Lease's renewals during the steps.
      // (UnknownVersionInteroperabilityProxy depends on it: pkg/features/kube_features.go.)
      plane_options.extra_apiserver_args.push_back(
          "--feature-gates=APIServerIdentity=false,UnknownVersionInteroperabilityProxy=false");
    }
    if (scenario_.plugins) {
      // The scenario's in-tree plugins; the webhook and admission policy plugins stay on (they
      // are what is played).
      const std::set<std::string> wanted(scenario_.plugins->begin(), scenario_.plugins->end());
      plane_options.enable_admission_plugins = *scenario_.plugins;
      plane_options.disable_admission_plugins.clear();
      for (const auto& name : sim::knownPluginNames()) {
        if (!wanted.contains(name)) plane_options.disable_admission_plugins.push_back(name);
      }
      // Default-on in v1.37.2 (pkg/kubeapiserver/options/plugins.go DefaultOffAdmissionPlugins'
      // complement) but not modelled by the simulator: off too, when the scenario lists plugins.
      for (const char* name : {"TaintNodesByCondition", "PodSecurity",
                               "StorageObjectInUseProtection", "PersistentVolumeClaimResize",
                               "RuntimeClass", "CertificateApproval", "CertificateSigning",
                               "ClusterTrustBundleAttest", "CertificateSubjectRestriction",
                               "DefaultIngressClass", "PodTopologyLabels", "ResourceQuota",
                               "NodeRestriction"}) {
        if (!wanted.contains(name) &&
            std::find(plane_options.disable_admission_plugins.begin(),
                      plane_options.disable_admission_plugins.end(),
                      name) == plane_options.disable_admission_plugins.end()) {
          plane_options.disable_admission_plugins.push_back(name);
        }
      }
      if (plane_options.enable_admission_plugins.empty()) {
        plane_options.enable_admission_plugins = {"MutatingAdmissionWebhook"};
      }
    }
    auto plane = ControlPlane::start(std::move(plane_options));
    if (!plane) return plane.error().within("starting the control plane");
    plane_ = std::move(*plane);
    net::ClientOptions client_options;
    client_options.ca_pem = plane_->caPem();
    client_options.client_certificate_pem = plane_->adminCertificatePem();
    client_options.client_key_pem = plane_->adminKeyPem();
    client_options.user_agent = "apiserver-sim";
    client_ = std::make_unique<net::HttpClient>(client_options);

    auto ca = net::CertificateAuthority::create("apiserver-sim scenario CA");
    if (!ca) return ca.error().within("creating the scenario CA");
    ca_ = std::move(*ca);

    // Namespaces of the starting state first: everything else is created in them.
    std::vector<const sim::SourcedObject*> namespaces, others;
    for (const auto& sourced : scenario_.objects) {
      (sourced.object.value("kind", "") == "Namespace" ? namespaces : others).push_back(&sourced);
    }
    for (const auto* sourced : namespaces) {
      if (auto r = createObject(sourced->object, sourced->location.toString()); !r) return r;
    }
    if (auto r = startEndpoints(); !r) return r;
    for (const auto* sourced : namespaces) {
      if (auto r = waitForDefaultServiceAccount(sourced->object["metadata"].value("name", ""));
          !r) {
        return r;
      }
    }
    for (const auto* sourced : others) {
      if (auto r = createObject(sourced->object, sourced->location.toString()); !r) return r;
    }
    for (const auto& sourced : scenario_.webhook_configurations) {
      json config = sourced.object;
      sim::fillCaBundles(config, ca_by_address_);
      if (auto r = createObject(config, sourced.location.toString()); !r) return r;
    }
    for (const bool mutating : {true, false}) {
      auto created = call("POST", syncConfigurationPath(mutating, false),
                          syncConfiguration(mutating, 0).dump());
      if (created.status != 201) {
        return core::makeError(fmt::format("creating the sync webhook configuration: {}",
                                           describe(created)));
      }
    }
    sync_policies_ = usesAdmissionPolicies(scenario_);
    if (sync_policies_) {
      for (const bool mutating : {false, true}) {
        for (const bool binding : {false, true}) {
          auto created = call("POST", syncPolicyPath(mutating, binding, false),
                              syncPolicyObject(mutating, binding, 0).dump());
          if (created.status != 201) {
            return core::makeError(
                fmt::format("creating the sync admission policy: {}", describe(created)));
          }
        }
      }
    }
    return sync();
  }

  core::Result<sim::StepOutcome> play(const sim::Step& step) override {
    const sim::RequestSpec& request = step.request;
    sim::StepOutcome outcome;
    std::string method = "POST";
    std::string name;
    if (request.operation == "UPDATE") {
      method = "PUT";
      name = request.name;
    } else if (request.operation == "DELETE") {
      method = "DELETE";
      name = request.name;
    } else if (!request.subresource.empty()) {
      name = request.name;
    }
    std::string path =
        sim::resourcePath(request.resource, request.namespace_name, name, request.subresource);
    std::vector<std::string> query;
    if (request.operation == "CONNECT" && request.object) {
      query = connectParameters(*request.object);
    }
    if (request.dry_run) query.push_back("dryRun=All");
    if (request.timeout) query.push_back("timeout=" + sim::durationParam(*request.timeout));
    for (std::size_t i = 0; i < query.size(); ++i) path += (i == 0 ? "?" : "&") + query[i];
    std::string body;
    if (request.operation == "DELETE") {
      json options = {{"apiVersion", "v1"}, {"kind", "DeleteOptions"}};
      if (request.options && request.options->is_object()) {
        // What the client sets of the scenario's DeleteOptions (the rest are the server's).
        for (const char* field : {"gracePeriodSeconds", "preconditions", "propagationPolicy",
                                  "orphanDependents"}) {
          if (request.options->contains(field)) options[field] = (*request.options)[field];
        }
      }
      if (request.dry_run) options["dryRun"] = json::array({"All"});
      body = options.dump();
    } else if (request.object && request.operation != "CONNECT") {
      body = request.object->dump();
    }
    net::Headers headers;
    if (request.user_info) {
      // Impersonation (k8s.io/apiserver pkg/endpoints/filters/impersonation.go): the webhooks
      // and the authorizer see this user; the audit event records both.
      headers.add("Impersonate-User", request.user_info->username);
      for (const auto& group : request.user_info->groups) headers.add("Impersonate-Group", group);
      if (!request.user_info->uid.empty()) headers.add("Impersonate-Uid", request.user_info->uid);
      for (const auto& [key, values] : request.user_info->extra) {
        for (const auto& value : values) headers.add("Impersonate-Extra-" + key, value);
      }
    }

    std::map<std::string, std::size_t> stub_counts;
    for (const auto& [endpoint, stub] : stubs_) stub_counts[endpoint] = stub->calls().size();
    auto before = counters();
    if (!before) return before.error();

    std::string content_type = "application/json";
    if (request.isPatch()) {
      // kubectl patch / kubectl apply --server-side: the same request the simulator answers.
      sim::PatchHttpRequest patch = sim::patchHttpRequest(request);
      method = "PATCH";
      path = std::move(patch.path);
      body = std::move(patch.body);
      content_type = std::move(patch.content_type);
    }
    auto response = call(method, path, body, std::move(headers), content_type);
    if (response.status == 0) return core::makeError(describe(response));
    if (!request.dry_run && response.status == 201 && request.operation == "CREATE" &&
        request.resource.group.empty() && request.resource.resource == "namespaces" &&
        request.subresource.empty() && response.parsed.is_object()) {
      // The serviceaccount controller's `default` (the simulator makes it at once): awaited
      // before the counters and stubs are read, so that its own admission is always counted.
      if (auto r = waitForDefaultServiceAccount(response.parsed["metadata"].value("name", ""));
          !r) {
        return r.error();
      }
    }

    auto after = counters();
    if (!after) return after.error();
    for (const auto& metric : step.expect.metrics) {
      outcome.metric_deltas.push_back(sim::sumMatching(*after, metric.name, metric.labels) -
                                      sim::sumMatching(*before, metric.name, metric.labels));
    }
    outcome.webhook_metric_changes = sim::counterChanges(
        filtered(*before, sim::kWebhookMetricPrefix), filtered(*after, sim::kWebhookMetricPrefix));
    outcome.stubs = stubObservations(stub_counts);

    sim::AdmissionResult& result = outcome.admission;
    result.code = response.status;
    result.allowed = response.status / 100 == 2;
    for (const auto& warning : response.headers.getAll("Warning")) {
      result.warnings.push_back(sim::warningText(warning));
    }
    if (result.allowed) {
      if (response.parsed.is_object() && response.parsed.value("kind", "") != "Status") {
        result.object = response.parsed;
      }
    } else if (auto status = core::statusFromJson(response.parsed); status.ok()) {
      result.status = *status;
    } else {
      core::Status status_from_text;
      status_from_text.code = response.status;
      status_from_text.message = response.body;
      result.status = status_from_text;
    }
    result.audit_id = response.headers.get("Audit-Id").value_or("");
    auto event = auditEvent(request, result.audit_id);
    if (!event) return event.error();
    if (*event) {
      if (run_options_.audit_sink) run_options_.audit_sink(**event);
      for (const auto& [key, value] : (*event)->annotations) {
        // Not admission annotations: the authorizer's decision, and the latency trackers'
        // breakdown kube-apiserver adds to slow requests (k8s.io/apiserver
        // pkg/endpoints/filters/audit.go, request.AuditAnnotationsFromLatencyTrackers).
        if (key.rfind("authorization.k8s.io/", 0) == 0 ||
            key.rfind("apiserver.latency.k8s.io/", 0) == 0) {
          continue;
        }
        result.annotations.add(key, value,
                               key.rfind("patch.webhook.admission.k8s.io/", 0) == 0
                                   ? audit::Level::kRequest
                                   : audit::Level::kMetadata);
      }
      if ((*event)->level < audit::Level::kRequest) outcome.unobservable.insert("annotations");
      if (!scenario_.audit_policy_text.empty()) result.audit_event = std::move(**event);
    } else {
      outcome.unobservable.insert("annotations");
      outcome.unobservable.insert("calls");
    }
    reconstructCalls(result, outcome.webhook_metric_changes);
    // What kube-apiserver does not expose: the ?timeout= it sent (a stub's own record is
    // `expect.stub.lastTimeout`), whether a request reached the webhook, whether round 1 ran.
    for (const char* field : {"calls.timeout", "calls.called", "reinvoked"}) {
      outcome.unobservable.insert(field);
    }

    if (!request.dry_run && result.allowed) {
      if (writesWebhookConfiguration(request) || writesAdmissionPolicy(request)) {
        if (auto r = sync(); !r) return r.error();
      }
    }
    return outcome;
  }

  std::string explain(const sim::Step&, const sim::StepOutcome& outcome) override {
    const auto& result = outcome.admission;
    std::string out = fmt::format("  kube-apiserver answered {}", result.code);
    if (result.status) out += ": " + result.status->message;
    out += fmt::format("\n  audit ID {}\n", result.audit_id);
    for (const auto& [key, entry] : result.annotations.entries()) {
      out += fmt::format("  annotation {}: {}\n", key, entry.value);
    }
    for (const auto& [series, change] : outcome.webhook_metric_changes) {
      out += fmt::format("  metric {} {:+g}\n", series, change);
    }
    for (const auto& [endpoint, seen] : outcome.stubs) {
      if (seen.calls > 0) {
        out += fmt::format("  stub {}: {} request(s), last ?timeout={}\n", endpoint, seen.calls,
                           seen.last_timeout);
      }
    }
    return out;
  }

  void stop() override {
    for (auto& [name, injector] : injectors_) injector->stop();
    for (auto& [name, stub] : stubs_) stub->stop();
    if (sync_stub_) sync_stub_->stop();
    if (plane_) plane_->stop();
    client_.reset();
    if (!work_dir_.empty() && !options_.keep_work_dir) {
      std::error_code ec;
      fs::remove_all(work_dir_, ec);
      work_dir_.clear();
    }
  }

 private:
  ApiResponse call(const std::string& method, const std::string& path, std::string body = {},
                   net::Headers headers = {},
                   const std::string& content_type = "application/json") {
    net::ClientRequest request;
    request.method = method;
    request.url = plane_->serverUrl() + path;
    request.headers = std::move(headers);
    request.headers.set("Accept", "application/json");
    if (!body.empty()) request.headers.set("Content-Type", content_type);
    request.body = std::move(body);
    // Longer than any request a scenario can make (--request-timeout is at most minutes).
    request.deadline = Clock::now() + std::max<std::chrono::milliseconds>(
                                          scenario_.request_timeout + 60s, 120s);
    auto response = client_->sendSync(std::move(request));
    ApiResponse out;
    if (!response.ok()) {
      out.error = fmt::format("{} {}: {}", method, path, response.error_message);
      return out;
    }
    out.status = response.status;
    out.headers = std::move(response.headers);
    out.body = std::move(response.body);
    out.parsed = core::parseJsonOrDiscarded(out.body);
    return out;
  }

  static std::string describe(const ApiResponse& response) {
    if (response.status == 0) return response.error;
    std::string text = response.body.substr(0, 500);
    return fmt::format("{} {}", response.status, text);
  }

  core::Result<void> createObject(const json& object, const std::string& where) {
    auto gvk = core::groupVersionKindOf(object);
    if (!gvk.ok()) return gvk.error().within(where);
    const auto resource = sim::resourceForKind(*gvk);
    std::string ns = object.contains("metadata") ? object["metadata"].value("namespace", "") : "";
    const auto info = core::findResource(resource);
    if (info && info->namespaced && ns.empty()) ns = "default";
    if (info && !info->namespaced) ns.clear();
    auto response = call("POST", sim::resourcePath(resource, ns, "", ""), object.dump());
    // The `default` Namespace, a namespace's default ServiceAccount...: the cluster has them.
    if (response.status == 201 || response.status == 200 || response.status == 409) return {};
    // A `default` ServiceAccount listed for a namespace a step creates later: the
    // serviceaccount controller makes it then (unsupported() refuses other such objects).
    if (response.status == 404 && isDefaultServiceAccount(object)) return {};
    return core::makeError(
        fmt::format("{}: creating it on kube-apiserver: {}", where, describe(response)));
  }

  core::Result<void> waitForDefaultServiceAccount(const std::string& ns) {
    if (ns.empty()) return {};
    const auto deadline = Clock::now() + options_.wait_timeout;
    while (true) {
      auto response = call("GET", fmt::format("/api/v1/namespaces/{}/serviceaccounts/default", ns));
      if (response.status == 200) return {};
      if (Clock::now() >= deadline) {
        return core::makeError(fmt::format(
            "namespace {}: no default ServiceAccount after {}s (last answer: {})", ns,
            options_.wait_timeout.count(), describe(response)));
      }
      std::this_thread::sleep_for(50ms);
    }
  }

  core::Result<void> startEndpoints() {
    const fs::path scratch = run_options_.work_dir;
    auto route = [&](const std::string& address, std::uint16_t port, const std::string& ca) {
      plane_->connectProxy()->setRoute(address, port);
      ca_by_address_[address] = ca;
    };
    // Services by namespace/name with every port an endpoint uses, created once each.
    std::map<std::pair<std::string, std::string>, std::map<int, std::uint16_t>> services;
    for (const auto& endpoint : scenario_.endpoints) {
      std::vector<std::string> dns_names;
      dns_names.reserve(endpoint.services.size() + endpoint.hosts.size());
      for (const auto& service : endpoint.services) dns_names.push_back(service.host());
      for (const auto& host : endpoint.hosts) {
        auto url = net::parseUrl("https://" + host);
        dns_names.push_back(url.ok() ? url->host : host);
      }
      const std::string where = fmt::format("endpoint {}", json(endpoint.name).dump());
      std::uint16_t port = 0;
      std::string ca_pem = ca_.certificate_pem;
      switch (endpoint.type) {
        case sim::EndpointType::kStub: {
          // Declared delays are slept for real: a real server measures real time.
          auto stub = sim::StubWebhook::start(endpoint.name, endpoint.stub, ca_, scratch,
                                              dns_names, /*time_scale=*/1.0);
          if (!stub.ok()) return stub.error().within(where);
          port = (*stub)->port();
          // The sync request reaches the stubs of catch-all webhooks (SyncPlan::reached).
          (*stub)->setHarnessRequestFilter(
              [](const json& review) { return syncToken(review).has_value(); });
          stubs_[endpoint.name] = std::move(*stub);
          break;
        }
        case sim::EndpointType::kInjector: {
          sim::InjectorLaunchOptions launch;
          launch.binary = run_options_.injector_binary;
          launch.kubeconfig = plane_->kubeconfig();
          auto injector = sim::InjectorProcess::start(endpoint.name, endpoint.injector, ca_,
                                                      scratch, dns_names, launch);
          if (!injector.ok()) return injector.error().within(where);
          port = (*injector)->port();
          injectors_[endpoint.name] = std::move(*injector);
          break;
        }
        case sim::EndpointType::kExternal: {
          auto url = net::parseUrl(endpoint.external.url);
          if (!url.ok()) return url.error().within(where);
          port = url->port;
          ca_pem = endpoint.external.ca_pem;
          route(url->hostPort(), port, ca_pem);
          break;
        }
      }
      for (const auto& service : endpoint.services) {
        services[{service.namespace_name, service.name}][service.port] = port;
        ca_by_address_[service.hostPort()] = ca_pem;
      }
      for (const auto& host : endpoint.hosts) route(host, port, ca_pem);
    }
    // The sync webhooks' stub, by a Service of its own (a `service` reference needs no DNS).
    auto sync_stub = sim::StubWebhook::start("apiserver-sim-sync", sim::StubSpec{}, ca_, scratch,
                                             {std::string(kSyncHost)}, 0);
    if (!sync_stub.ok()) return sync_stub.error().within("the sync webhook");
    sync_stub_ = std::move(*sync_stub);
    services[{std::string(kSyncNamespace), std::string(kSyncService)}][443] = sync_stub_->port();
    for (const auto& [key, ports] : services) {
      const auto& [ns, name] = key;
      if (auto r = createObject({{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", ns}}}},
                                "the namespace of service " + name);
          !r) {
        return r;
      }
      // Its default ServiceAccount is created through admission: before any webhook exists.
      if (auto r = waitForDefaultServiceAccount(ns); !r) return r;
      json port_list = json::array();
      for (const auto& [service_port, target] : ports) {
        port_list.push_back({{"name", fmt::format("p{}", service_port)},
                             {"port", service_port},
                             {"protocol", "TCP"}});
      }
      const json service = {{"apiVersion", "v1"},
                            {"kind", "Service"},
                            {"metadata", {{"name", name}, {"namespace", ns}}},
                            {"spec", {{"type", "ClusterIP"}, {"ports", port_list}}}};
      auto created = call("POST", fmt::format("/api/v1/namespaces/{}/services", ns), service.dump());
      if (created.status != 201) {
        return core::makeError(fmt::format("creating the Service {}/{} for the endpoints: {}", ns,
                                           name, describe(created)));
      }
      const std::string cluster_ip =
          created.parsed.is_object() ? created.parsed["spec"].value("clusterIP", "") : "";
      if (cluster_ip.empty()) {
        return core::makeError(fmt::format("Service {}/{} has no clusterIP", ns, name));
      }
      // kube-apiserver's service resolver dials <clusterIP>:<port> (k8s.io/apiserver
      // pkg/util/webhook/client.go, NewClusterIPServiceResolver) through the egress proxy.
      for (const auto& [service_port, target] : ports) {
        plane_->connectProxy()->setRoute(fmt::format("{}:{}", cluster_ip, service_port), target);
      }
    }
    return {};
  }

  std::string syncConfigurationPath(bool mutating, bool with_name) const {
    return fmt::format("/apis/admissionregistration.k8s.io/v1/{}webhookconfigurations{}",
                       mutating ? "mutating" : "validating",
                       with_name ? "/" + std::string(kSyncConfiguration) : "");
  }

  json syncWebhook(bool mutating, int token) const {
    return {{"name", kSyncWebhook},
            {"clientConfig",
             {{"service",
               {{"namespace", kSyncNamespace},
                {"name", kSyncService},
                {"path", mutating ? "/mutate" : "/validate"}}},
              {"caBundle", go::base64Encode(ca_.certificate_pem)}}},
            {"rules",
             json::array({{{"operations", json::array({"CREATE"})},
                           {"apiGroups", json::array({sync_plan_.resource.resource.group})},
                           {"apiVersions", json::array({sync_plan_.resource.resource.version})},
                           {"resources", json::array({sync_plan_.resource.resource.resource})}}})},
            {"objectSelector", {{"matchLabels", {{kSyncLabel, std::to_string(token)}}}}},
            {"failurePolicy", "Fail"},
            {"sideEffects", "None"},
            {"admissionReviewVersions", json::array({"v1"})}};
  }

  json syncConfiguration(bool mutating, int token) const {
    return {{"apiVersion", "admissionregistration.k8s.io/v1"},
            {"kind", mutating ? "MutatingWebhookConfiguration" : "ValidatingWebhookConfiguration"},
            {"metadata", {{"name", kSyncConfiguration}}},
            {"webhooks", json::array({syncWebhook(mutating, token)})}};
  }

  std::string syncPolicyPath(bool mutating, bool binding, bool with_name) const {
    return fmt::format("/apis/admissionregistration.k8s.io/v1/{}{}{}",
                       mutating ? "mutatingadmissionpolic" : "validatingadmissionpolic",
                       binding ? "ybindings" : "ies",
                       with_name ? "/" + std::string(kSyncConfiguration) : "");
  }

  // The sync policy denies the dry-run request of token n once the plugin has seen the policy
  // (its expression names n) and the binding (its objectSelector selects n) of token n. The
  // mutating one denies with a JSON patch that cannot apply (failurePolicy Fail): its path names
  // n, and the plugin's error quotes it.
  json syncPolicySpec(bool mutating, bool binding, int token) const {
    if (binding) {
      json spec = {{"policyName", kSyncConfiguration},
                   {"matchResources",
                    {{"objectSelector", {{"matchLabels", {{kSyncLabel, std::to_string(token)}}}}}}}};
      if (!mutating) spec["validationActions"] = json::array({"Deny"});
      return spec;
    }
    json spec = {{"failurePolicy", "Fail"},
                 {"matchConstraints",
                  {{"resourceRules",
                    json::array({{{"operations", json::array({"CREATE"})},
                                  {"apiGroups", json::array({sync_plan_.resource.resource.group})},
                                  {"apiVersions",
                                   json::array({sync_plan_.resource.resource.version})},
                                  {"resources",
                                   json::array({sync_plan_.resource.resource.resource})}}})}}}};
    const std::string name = syncObjectName(token);
    if (mutating) {
      spec["reinvocationPolicy"] = "Never";
      spec["mutations"] = json::array(
          {{{"patchType", "JSONPatch"},
            {"jsonPatch",
             {{"expression",
               fmt::format("object.metadata.name == '{}' ? [JSONPatch{{op: 'add', path: "
                           "'/apiserver-sim/{}', value: 1}}] : []",
                           name, syncPolicyMessage(true, token))}}}}});
    } else {
      spec["validations"] =
          json::array({{{"expression", fmt::format("object.metadata.name != '{}'", name)},
                        {"message", syncPolicyMessage(false, token)}}});
    }
    return spec;
  }

  static std::string syncPolicyMessage(bool mutating, int token) {
    return mutating ? fmt::format("apiserver-sim-policy-sync-{}", token)
                    : fmt::format("apiserver-sim policy sync {}", token);
  }

  json syncPolicyObject(bool mutating, bool binding, int token) const {
    return {{"apiVersion", "admissionregistration.k8s.io/v1"},
            {"kind", fmt::format("{}AdmissionPolicy{}", mutating ? "Mutating" : "Validating",
                                 binding ? "Binding" : "")},
            {"metadata", {{"name", kSyncConfiguration}}},
            {"spec", syncPolicySpec(mutating, binding, token)}};
  }

  // Until each policy plugin has seen its sync policy and binding of token n (and so every
  // policy and binding written before them: each informer's events arrive in order), its dry-run
  // request is admitted. The validating plugin first: once the mutating one (before it in the
  // chain) denies the request of token n, the validating one no longer sees it.
  core::Result<void> syncPolicies(int token) {
    for (const bool mutating : {false, true}) {
      if (auto synced = syncPolicyPlugin(mutating, token); !synced) return synced;
    }
    return {};
  }

  core::Result<void> syncPolicyPlugin(bool mutating, int token) {
    for (const bool binding : {false, true}) {
      const json patch = {{"spec", syncPolicySpec(mutating, binding, token)}};
      auto patched = call("PATCH", syncPolicyPath(mutating, binding, true), patch.dump(), {},
                          "application/merge-patch+json");
      if (patched.status != 200) {
        return core::makeError(
            fmt::format("updating the sync admission policy: {}", describe(patched)));
      }
    }
    const json object = syncObject(sync_plan_.resource, token);
    const std::string path =
        sim::resourcePath(sync_plan_.resource.resource,
                     sync_plan_.resource.namespaced ? std::string(kSyncNamespace) : "", "", "") +
        "?dryRun=All";
    const std::string expected = syncPolicyMessage(mutating, token);
    const auto deadline = Clock::now() + options_.wait_timeout;
    while (true) {
      ApiResponse last = call("POST", path, object.dump());
      if (last.status / 100 == 4 && last.body.find(expected) != std::string::npos) return {};
      if (Clock::now() >= deadline) {
        return core::makeError(fmt::format(
            "kube-apiserver's {}AdmissionPolicy plugin did not see the sync policy within "
            "{}s (last answer: {})",
            mutating ? "Mutating" : "Validating", options_.wait_timeout.count(), describe(last)));
      }
      std::this_thread::sleep_for(20ms);
    }
  }

  // Until kube-apiserver's mutating and validating configuration informers have seen the sync
  // configurations of token n (and so everything written before them), both are called for a
  // dry-run request labelled n.
  core::Result<void> sync() {
    const int token = ++sync_token_;
    for (const bool mutating : {true, false}) {
      const json patch = {{"webhooks", json::array({syncWebhook(mutating, token)})}};
      auto patched = call("PATCH", syncConfigurationPath(mutating, true), patch.dump(), {},
                          "application/merge-patch+json");
      if (patched.status != 200) {
        return core::makeError(fmt::format("updating the sync webhook configuration: {}",
                                           describe(patched)));
      }
    }
    const json object = syncObject(sync_plan_.resource, token);
    const std::string path =
        sim::resourcePath(sync_plan_.resource.resource,
                     sync_plan_.resource.namespaced ? std::string(kSyncNamespace) : "", "", "") +
        "?dryRun=All";
    const auto deadline = Clock::now() + options_.wait_timeout;
    ApiResponse last;
    while (true) {
      last = call("POST", path, object.dump());
      bool mutated = false, validated = false;
      for (const auto& seen : sync_stub_->calls()) {
        if (syncToken(seen.review) != std::to_string(token)) continue;
        (seen.path == "/mutate" ? mutated : validated) = true;
      }
      if (mutated && validated) return sync_policies_ ? syncPolicies(token) : core::Result<void>{};
      if (Clock::now() >= deadline) {
        return core::makeError(fmt::format(
            "kube-apiserver did not call the sync webhooks within {}s (mutating {}, validating "
            "{}; last answer: {})",
            options_.wait_timeout.count(), mutated, validated, describe(last)));
      }
      std::this_thread::sleep_for(20ms);
    }
  }

  core::Result<std::vector<sim::CounterSample>> counters() {
    auto response = call("GET", "/metrics");
    if (response.status != 200) {
      return core::makeError("GET /metrics: " + describe(response));
    }
    return sim::parseCounterSamples(response.body, "apiserver_admission");
  }

  static std::vector<sim::CounterSample> filtered(const std::vector<sim::CounterSample>& samples,
                                                  std::string_view prefix) {
    std::vector<sim::CounterSample> out;
    for (const auto& sample : samples) {
      // The sync webhook's own series are the harness's, not the scenario's.
      auto name = sample.labels.find("name");
      if (name != sample.labels.end() && name->second == kSyncWebhook) continue;
      if (sample.name.rfind(prefix, 0) == 0) out.push_back(sample);
    }
    return out;
  }

  std::map<std::string, sim::StubObservation> stubObservations(
      const std::map<std::string, std::size_t>& since) const {
    std::map<std::string, sim::StubObservation> out;
    for (const auto& [name, stub] : stubs_) {
      out[name] = sim::observeStubCalls(stub->calls(), since.at(name));
    }
    return out;
  }

  // The ResponseComplete event of the request, from kube-apiserver's log (nullopt when the
  // policy gives the request level None). The log is written as the request completes, so it
  // is read until the event is there.
  core::Result<std::optional<audit::Event>> auditEvent(const sim::RequestSpec& request,
                                                       const std::string& audit_id) {
    if (audit_id.empty()) return std::optional<audit::Event>();
    if (scenario_.audit_policy) {
      audit::RequestAttributes attributes;
      attributes.user = "kube-local-admin";
      attributes.groups = {"system:masters", "system:authenticated"};
      attributes.verb = request.operation == "CREATE"   ? "create"
                        : request.operation == "UPDATE" ? "update"
                        : request.operation == "DELETE" ? "delete"
                        : request.isPatch()             ? "patch"
                                                        : "create";
      attributes.api_group = request.resource.group;
      attributes.api_version = request.resource.version;
      attributes.resource = request.resource.resource;
      attributes.subresource = request.subresource;
      attributes.namespace_name = request.namespace_name;
      attributes.name = request.name;
      if (audit::evaluatePolicy(*scenario_.audit_policy, attributes).level ==
          audit::Level::kNone) {
        return std::optional<audit::Event>();
      }
    }
    const auto deadline = Clock::now() + options_.wait_timeout;
    while (true) {
      std::ifstream log(plane_->auditLog(), std::ios::binary);
      log.seekg(static_cast<std::streamoff>(audit_offset_));
      std::string line;
      while (std::getline(log, line)) {
        if (log.eof()) break;  // a line still being written: read it again next time
        audit_offset_ += line.size() + 1;
        auto event = audit::parseLogLine(line);
        if (!event.ok() || event->stage != audit::Stage::kResponseComplete) continue;
        events_[event->audit_id] = std::move(*event);
      }
      if (auto it = events_.find(audit_id); it != events_.end()) {
        audit::Event found = std::move(it->second);
        events_.erase(it);
        return std::optional<audit::Event>(std::move(found));
      }
      if (Clock::now() >= deadline) {
        if (scenario_.audit_policy) return std::optional<audit::Event>();  // its rule says so
        return core::makeError(fmt::format("no audit event for audit ID {} in {} after {}s",
                                           audit_id, plane_->auditLog().string(),
                                           options_.wait_timeout.count()));
      }
      std::this_thread::sleep_for(20ms);
    }
  }

  // Webhook calls as the audit annotations (mutating, failed-open validating) and the counters
  // (validating) show them.
  void reconstructCalls(sim::AdmissionResult& result,
                        const std::map<std::string, double>& metric_changes) const {
    static const std::regex kMutation(
        R"(^mutation\.webhook\.admission\.k8s\.io/round_(\d+)_index_(\d+)$)");
    static const std::regex kFailedOpenValidating(
        R"(^failed-open\.validating\.webhook\.admission\.k8s\.io/round_0_index_(\d+)$)");
    // The real kube-apiserver's Status names the webhook only in its message (webhook/errors
    // ToStatusErr: `admission webhook "<name>" denied the request: ...`; the dispatchers'
    // `failed calling webhook "<name>": ...`), with no cause or field for it: this text from
    // outside the project is the only record of which webhook ended the request.
    const std::string message = result.status ? result.status->message : "";
    auto failedHere = [&](const std::string& webhook, sim::CallRecord& call) {
      if (result.allowed) return;
      if (message.find(fmt::format("admission webhook \"{}\" denied the request", webhook)) !=
          std::string::npos) {
        call.outcome = sim::CallOutcome::kDenied;
        call.status = result.status;
      } else if (message.find(fmt::format("failed calling webhook \"{}\"", webhook)) !=
                 std::string::npos) {
        call.outcome = sim::CallOutcome::kCallingError;
        call.status = result.status;
      }
    };
    std::vector<sim::CallRecord> mutating, validating;
    std::set<std::string> validating_seen;
    for (const auto& [key, entry] : result.annotations.entries()) {
      std::smatch match;
      if (std::regex_match(key, match, kMutation)) {
        const json value = core::parseJsonOrDiscarded(entry.value);
        if (!value.is_object()) continue;
        sim::CallRecord call;
        call.kind = core::WebhookKind::kMutating;
        call.round = std::stoi(match[1]);
        call.index = std::stoul(match[2]);
        call.configuration = value.value("configuration", "");
        call.webhook = value.value("webhook", "");
        call.changed = value.value("mutated", false);
        call.called = true;
        const std::string suffix = fmt::format("round_{}_index_{}", call.round, call.index);
        if (result.annotations.value("failed-open.mutation.webhook.admission.k8s.io/" + suffix)) {
          call.outcome = sim::CallOutcome::kFailedOpen;
        } else if (call.changed ||
                   result.annotations.value("patch.webhook.admission.k8s.io/" + suffix)) {
          call.outcome = sim::CallOutcome::kPatched;
        } else {
          call.outcome = sim::CallOutcome::kAllowed;
        }
        mutating.push_back(std::move(call));
      } else if (std::regex_match(key, match, kFailedOpenValidating)) {
        sim::CallRecord call;
        call.kind = core::WebhookKind::kValidating;
        call.index = std::stoul(match[1]);
        call.webhook = entry.value;
        call.outcome = sim::CallOutcome::kFailedOpen;
        call.called = true;
        validating_seen.insert(call.webhook);
        validating.push_back(std::move(call));
      }
    }
    std::sort(mutating.begin(), mutating.end(), [](const auto& a, const auto& b) {
      return std::pair(a.round, a.index) < std::pair(b.round, b.index);
    });
    if (!mutating.empty()) {
      sim::CallRecord& last = mutating.back();
      failedHere(last.webhook, last);
      // A 500 after the last mutating call that neither denied nor failed calling: its patch
      // could not be applied (not subject to failurePolicy, so also with Ignore).
      if (!result.allowed && result.code == 500 && last.outcome != sim::CallOutcome::kDenied &&
          last.outcome != sim::CallOutcome::kCallingError &&
          last.outcome != sim::CallOutcome::kFailedOpen && !last.changed &&
          message.find("failed calling webhook") == std::string::npos) {
        last.outcome = sim::CallOutcome::kApplyError;
        last.status = result.status;
      }
    }
    // apiserver_admission_webhook_request_total{name,type="validating",...}: one per call.
    static const std::regex kRequestTotal(
        R"re(^apiserver_admission_webhook_request_total\{code="(\d+)",name="([^"]*)",operation="[^"]*",rejected="(true|false)",type="validating"\}$)re");
    // apiserver_admission_webhook_rejection_count{error_type="calling_webhook_error",...}: a
    // rejection that was a calling error, not a denial (the Status names only one webhook when
    // several validating webhooks reject a request in parallel).
    auto callingErrors = [&](const std::string& webhook) {
      const std::string name = fmt::format("name=\"{}\"", webhook);
      double count = 0;
      for (const auto& [series, change] : metric_changes) {
        if (series.rfind("apiserver_admission_webhook_rejection_count{", 0) == 0 &&
            series.find("error_type=\"calling_webhook_error\"") != std::string::npos &&
            series.find(name) != std::string::npos &&
            series.find("type=\"validating\"") != std::string::npos) {
          count += change;
        }
      }
      return static_cast<int>(count);
    };
    for (const auto& [series, change] : metric_changes) {
      std::smatch match;
      if (!std::regex_match(series, match, kRequestTotal)) continue;
      const std::string webhook = match[2];
      if (validating_seen.contains(webhook)) continue;
      int calling_errors = match[3] == "true" ? callingErrors(webhook) : 0;
      for (int n = 0; n < static_cast<int>(change); ++n) {
        sim::CallRecord call;
        call.kind = core::WebhookKind::kValidating;
        call.webhook = webhook;
        call.called = true;
        call.outcome = match[3] != "true"    ? sim::CallOutcome::kAllowed
                       : calling_errors-- > 0 ? sim::CallOutcome::kCallingError
                                              : sim::CallOutcome::kDenied;
        failedHere(webhook, call);
        validating.push_back(std::move(call));
      }
    }
    result.calls = std::move(mutating);
    result.calls.insert(result.calls.end(), validating.begin(), validating.end());
    result.reinvoked = std::any_of(result.calls.begin(), result.calls.end(),
                                   [](const sim::CallRecord& call) { return call.round == 1; });
  }

  KubeBackendOptions options_;
  const sim::Scenario& scenario_;
  sim::BackendOptions run_options_;
  SyncPlan sync_plan_;
  fs::path work_dir_;
  std::unique_ptr<ControlPlane> plane_;
  std::unique_ptr<net::HttpClient> client_;
  net::CertificateAuthority ca_;
  std::map<std::string, std::string> ca_by_address_;
  std::map<std::string, std::unique_ptr<sim::StubWebhook>> stubs_;
  std::map<std::string, std::unique_ptr<sim::InjectorProcess>> injectors_;
  std::unique_ptr<sim::StubWebhook> sync_stub_;
  int sync_token_ = 0;
  bool sync_policies_ = false;  // the scenario has admission policies (syncPolicies)
  std::size_t audit_offset_ = 0;
  std::map<std::string, audit::Event> events_;
};

class KubeBackend : public sim::Backend {
 public:
  explicit KubeBackend(KubeBackendOptions options) : options_(std::move(options)) {}

  [[nodiscard]] std::string_view name() const override { return "kube"; }

  [[nodiscard]] std::optional<std::string> unsupported(
      const sim::Scenario& scenario) const override {
    if (auto built = options_.binaries.check(); !built) return built.error().message;
    for (const auto& endpoint : scenario.endpoints) {
      if (endpoint.type != sim::EndpointType::kExternal) continue;
      auto url = net::parseUrl(endpoint.external.url);
      if (!url.ok() || (url->host != "127.0.0.1" && url->host != "localhost")) {
        return fmt::format(
            "endpoint {}: an external webhook off 127.0.0.1 ({}) cannot be routed to by the "
            "egress proxy, which splices to loopback ports",
            endpoint.name, endpoint.external.url);
      }
    }
    if (auto object = objectWithoutNamespace(scenario)) {
      return "spec.objects: " + *object + " (kube-apiserver refuses objects in missing namespaces)";
    }
    if (auto plan = planSync(scenario); std::holds_alternative<std::string>(plan)) {
      return std::get<std::string>(plan);
    }
    return std::nullopt;
  }

  [[nodiscard]] std::optional<std::string> unsupportedStep(const sim::Step& step) const override {
    const auto& request = step.request;
    if (request.old_object) {
      return "request.oldObject: a real server admits against the stored object; another "
             "oldObject cannot be sent";
    }
    // A DELETE's options are the request's body (gracePeriodSeconds, preconditions,
    // propagationPolicy, orphanDependents: what a client sets, sent as given below); a create's
    // or update's options are built by the server from the query.
    if (request.options && request.operation != "DELETE") {
      return "request.options: the Create/Update/DeleteOptions the webhooks receive are built by "
             "the server from the request; they cannot be sent as given";
    }
    return std::nullopt;
  }

  core::Result<std::unique_ptr<sim::BackendSession>> start(
      const sim::Scenario& scenario, const sim::BackendOptions& options) override {
    auto plan = planSync(scenario);
    if (auto* reason = std::get_if<std::string>(&plan)) return core::makeError(*reason);
    auto session = std::make_unique<KubeSession>(options_, scenario, options);
    if (auto r = session->start(std::get<SyncPlan>(std::move(plan))); !r) return r.error();
    return std::unique_ptr<sim::BackendSession>(std::move(session));
  }

 private:
  KubeBackendOptions options_;
};

}  // namespace

std::unique_ptr<sim::Backend> kubeBackend(KubeBackendOptions options) {
  return std::make_unique<KubeBackend>(std::move(options));
}

}  // namespace harness::kube
