// The scenario runner (scenario_runner.h): one simulated cluster per scenario, its steps in order.

#include "harness/sim/scenario_runner.h"

#include <stdlib.h>  // mkdtemp

#include <algorithm>
#include <cctype>
#include <chrono>
#include <exception>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/core/object.h"
#include "harness/core/unstructured.h"
#include "harness/core/webhook_config.h"
#include "harness/go/base64.h"
#include "harness/go/regexp.h"
#include "harness/net/certificates.h"
#include "harness/net/url.h"
#include "harness/sim/authorizer.h"
#include "harness/sim/caller.h"
#include "harness/sim/cel.h"
#include "harness/sim/defaulting.h"
#include "harness/sim/explain.h"
#include "harness/sim/injector_process.h"
#include "harness/sim/object_validation.h"
#include "harness/sim/rest_api.h"
#include "harness/sim/stub_webhook.h"

namespace harness::sim {
namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

namespace {

// The `default` ServiceAccount of a namespace that is not stored (yet).
bool isDefaultServiceAccountOfMissingNamespace(const json& object, const ObjectStore& store) {
  if (object.value("apiVersion", "") != "v1" || object.value("kind", "") != "ServiceAccount" ||
      core::nestedString(object, {"metadata", "name"}) != "default") {
    return false;
  }
  const std::string ns = core::nestedString(object, {"metadata", "namespace"});
  return !store.get({"", "namespaces"}, "", ns).has_value();
}

// Where an address routed to an endpoint leads, and the CA its certificate chains to.
struct RouteTarget {
  std::string connect_to;  // "127.0.0.1:40123"
  std::string ca_pem;      // for empty caBundles ("" = leave empty)
  HttpsWebhookCaller::DeclaredDelay declared;  // set for stubs
};

std::string hostOf(const std::string& host_port) {
  const auto colon = host_port.rfind(':');
  std::string host = host_port.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return host;
}

// The host names an endpoint is reached at: its services' and its hosts' (its certificate's
// names).
std::vector<std::string> endpointDnsNames(const EndpointSpec& endpoint) {
  std::vector<std::string> names;
  names.reserve(endpoint.services.size() + endpoint.hosts.size());
  for (const auto& service : endpoint.services) names.push_back(service.host());
  for (const auto& host : endpoint.hosts) names.push_back(hostOf(host));
  return names;
}

core::GroupResource groupResourceOf(const core::GroupVersionResource& resource) {
  return {resource.group, resource.resource};
}

// The CA of every scenario environment of this process, made once, with one key pair for all
// the leaves it signs: a CA key, its PEM encoding and a key per stub cost about a third of a
// small scenario's start (issue 19). Scenarios stay apart: each has its own store, chain, caller
// (routes and connection pools), servers, ports and certificates; sharing the trust root only
// means a certificate of one scenario would verify in another, which never dials it.
const core::Result<net::CertificateAuthority>& processScenarioAuthority() {
  static const core::Result<net::CertificateAuthority> ca = net::CertificateAuthority::create(
      "apiserver-sim scenario CA", std::chrono::hours(24 * 365),
      net::CertificateAuthority::LeafKeys::kShared);
  return ca;
}

// RBAC's bootstrap policy stored as kube-apiserver stores it at start (authorizer.h
// seedBootstrapPolicy: the objects created, the aggregated ClusterRoles filled), once per policy
// and process: every scenario's store starts from this snapshot. Stored with a fixed generator
// seed, so the bootstrap objects' uids are the same in every run; a scenario's own seed then
// decides everything it creates.
core::Result<std::shared_ptr<const ObjectStore::Snapshot>> bootstrapSnapshot(
    const std::shared_ptr<const json>& policy) {
  static std::mutex mutex;
  static std::weak_ptr<const json> seeded_from;
  static std::shared_ptr<const ObjectStore::Snapshot> snapshot;
  std::lock_guard lock(mutex);
  if (snapshot && seeded_from.lock() == policy) return snapshot;
  ObjectStore store;
  store.seed(0);
  auto seeded = seedBootstrapPolicy(store, *policy);
  if (!seeded.ok()) return seeded.error();
  snapshot = store.snapshot();
  seeded_from = policy;
  return snapshot;
}

}  // namespace

void fillCaBundles(json& config, const std::map<std::string, std::string>& ca_by_address) {
  auto webhooks = config.find("webhooks");
  if (webhooks == config.end() || !webhooks->is_array()) return;
  for (auto& webhook : *webhooks) {
    if (!webhook.is_object()) continue;
    auto client = webhook.find("clientConfig");
    if (client == webhook.end() || !client->is_object()) continue;
    if (auto bundle = client->find("caBundle");
        bundle != client->end() && bundle->is_string() && !bundle->get<std::string>().empty()) {
      continue;
    }
    std::string address;
    if (auto service = client->find("service"); service != client->end() && service->is_object()) {
      const auto port = service->contains("port") && (*service)["port"].is_number_integer()
                            ? (*service)["port"].get<int>()
                            : 443;
      address = fmt::format("{}.{}.svc:{}", service->value("name", ""),
                            service->value("namespace", ""), port);
    } else if (auto url = client->find("url"); url != client->end() && url->is_string()) {
      auto parsed = net::parseUrl(url->get<std::string>());
      if (parsed.ok()) address = parsed->hostPort();
    }
    auto ca = ca_by_address.find(address);
    if (ca != ca_by_address.end() && !ca->second.empty()) {
      (*client)["caBundle"] = go::base64Encode(ca->second);
    }
  }
}

// --- ScenarioEnvironment ---

struct ScenarioEnvironment::Impl {
  EnvironmentOptions options;
  net::CertificateAuthority ca;
  ObjectStore store;
  core::MetricsRegistry metrics;
  HttpsWebhookCaller caller;
  std::unique_ptr<AdmissionChain> chain;
  std::unique_ptr<RestApiServer> rest;
  fs::path kubeconfig;
  std::map<std::string, std::unique_ptr<StubWebhook>> stubs;
  std::map<std::string, std::unique_ptr<InjectorProcess>> injectors;
  std::map<std::string, std::string> urls;

  ~Impl() { stop(); }

  void stop() {
    for (auto& [name, injector] : injectors) {
      if (injector) injector->stop();
    }
    for (auto& [name, stub] : stubs) {
      if (stub) stub->stop();
    }
    if (rest) rest->stop();
  }
};

ScenarioEnvironment::ScenarioEnvironment(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
ScenarioEnvironment::~ScenarioEnvironment() {
  if (impl_) impl_->stop();
}

ObjectStore& ScenarioEnvironment::store() { return impl_->store; }
AdmissionChain& ScenarioEnvironment::chain() { return *impl_->chain; }
core::MetricsRegistry& ScenarioEnvironment::metrics() { return impl_->metrics; }
void ScenarioEnvironment::stop() { impl_->stop(); }

std::string ScenarioEnvironment::apiServerUrl() const {
  return impl_->rest ? impl_->rest->url() : std::string();
}
fs::path ScenarioEnvironment::kubeconfigPath() const { return impl_->kubeconfig; }
std::map<std::string, std::string> ScenarioEnvironment::endpointUrls() const { return impl_->urls; }

core::Result<std::unique_ptr<ScenarioEnvironment>> ScenarioEnvironment::start(
    const Scenario& scenario, const EnvironmentOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  if (options.work_dir.empty()) return core::makeError("no work directory for the scenario");
  if (scenario.seed) impl->store.seed(*scenario.seed);

  const auto& ca = processScenarioAuthority();
  if (!ca.ok()) return ca.error().within("creating the scenario CA");
  impl->ca = *ca;

  ChainOptions chain_options;
  if (scenario.plugins) chain_options.plugins = *scenario.plugins;
  chain_options.request_timeout = scenario.request_timeout;
  chain_options.time_scale = options.time_scale;
  chain_options.audit_policy = scenario.audit_policy;
  chain_options.audit_sink = options.audit_sink;
  chain_options.match_conditions = cel::processMatchConditionEvaluator();
  chain_options.validating_policies = cel::processValidatingPolicyDispatcher();
  chain_options.mutating_policies = cel::processMutatingPolicyDispatcher();
  chain_options.admit_policy_object = cel::processPolicyObjectAdmitter();
  chain_options.custom_resources = cel::processCustomResourceCode();
  // RBAC's bootstrap policy, stored as kube-apiserver creates it at start (before anything else),
  // its aggregated ClusterRoles filled; from then on requests are authorized by RBAC
  // (authorizer.h). Without kube-cel there is none, and every request is allowed.
  if (auto bootstrap = cel::processBootstrapPolicy()) {
    auto policy = bootstrap();
    if (!policy.ok()) return policy.error().within("reading RBAC's bootstrap policy");
    auto seeded = bootstrapSnapshot(*policy);
    if (!seeded.ok()) return seeded.error();
    impl->store.restore(**seeded);
    chain_options.authorize = true;
  } else if (std::any_of(scenario.objects.begin(), scenario.objects.end(),
                         [](const SourcedObject& sourced) {
                           return sourced.object.value("apiVersion", "") ==
                                  "rbac.authorization.k8s.io/v1";
                         })) {
    // Once, for a scenario whose roles would decide: its expectations cannot hold.
    std::cerr << "apiserver-sim: RBAC's bootstrap roles are absent (they come from kube-cel: "
                 "bash scripts/build-kube.sh builds it): requests are not authorized\n";
  }
  impl->caller.setAuthentication(options.webhook_authentication);
  impl->chain = std::make_unique<AdmissionChain>(impl->store, impl->caller, impl->metrics,
                                                 std::move(chain_options));

  // Starting state, stored as the real backend creates it: namespaces first (with the default
  // ServiceAccount the serviceaccount controller makes in each), then the other objects in order,
  // each through the in-tree mutating plugins and PrepareForCreate, before any webhook
  // configuration or admission policy exists (AdmissionChain::admitStartingObject).
  std::vector<const SourcedObject*> ordered;
  for (const auto& sourced : scenario.objects) {
    if (sourced.object.value("kind", "") == "Namespace") ordered.push_back(&sourced);
  }
  for (const auto& sourced : scenario.objects) {
    if (sourced.object.value("kind", "") != "Namespace") ordered.push_back(&sourced);
  }
  for (const SourcedObject* sourced : ordered) {
    json object = sourced->object;
    auto gvk = core::groupVersionKindOf(object);
    if (!gvk.ok()) return gvk.error().within(sourced->location.toString());
    const core::GroupVersionResource resource = resourceForKind(*gvk);
    const auto info = core::findResource(resource);
    if (info && info->namespaced) {
      auto ns = core::namespaceOf(object);
      if (ns.ok() && ns->empty()) object["metadata"]["namespace"] = "default";
    }
    if (isAdmissionPolicyObject(object)) {
      applyDefaults(object);
      normalizeLikeGoEncoding(object);
      // Stored as the registry would have stored it (defaults, generation); the loader checked
      // that it is valid.
      if (auto admit = cel::processPolicyObjectAdmitter()) {
        try {
          auto admitted = admit(object.value("kind", ""), object, nullptr, nullptr);
          if (auto* status = std::get_if<core::Status>(&admitted)) {
            return core::makeError(fmt::format("{}: {}", sourced->location.toString(),
                                               status->message));
          }
          object = std::get<json>(std::move(admitted));
        } catch (const std::exception& e) {
          return core::makeError(fmt::format("{}: {}", sourced->location.toString(), e.what()));
        }
      }
    } else if (isDefaultServiceAccountOfMissingNamespace(object, impl->store)) {
      // Listed for a namespace a step creates: the serviceaccount controller makes it then
      // (the real backend's POST answers 404 and is skipped the same way).
      continue;
    } else {
      auto admitted = impl->chain->admitStartingObject(resource, std::move(object));
      if (!admitted.ok()) return admitted.error().within(sourced->location.toString());
      object = std::move(*admitted);
    }
    const bool is_namespace = gvk->group.empty() && gvk->kind == "Namespace";
    auto stored = impl->store.put(groupResourceOf(resource), std::move(object));
    if (is_namespace && impl->chain->options().default_service_accounts) {
      if (auto name = core::nameOf(stored); name.ok()) {
        createDefaultServiceAccount(impl->store, *name);
      }
    }
  }

  bool needs_api = options.start_rest_api;
  for (const auto& endpoint : scenario.endpoints) {
    if (endpoint.type == EndpointType::kInjector) needs_api = true;
  }
  if (needs_api) {
    RestApiOptions rest_options;
    rest_options.port = options.rest_api_port;
    rest_options.scratch_dir = options.work_dir / "rest-api";
    rest_options.metrics = &impl->metrics;
    // The policy plugins' metrics live in kube-cel, which runs them.
    rest_options.more_metrics = cel::processPolicyMetrics();
    auto rest = RestApiServer::start(impl->store, *impl->chain, impl->ca, rest_options);
    if (!rest.ok()) return rest.error().within("starting the REST API");
    impl->rest = std::move(*rest);
    auto written = impl->rest->writeKubeconfig(options.work_dir / "kubeconfig");
    if (!written.ok()) return written.error();
    impl->kubeconfig = *written;
  }

  // Endpoints, and the addresses routed to them.
  std::map<std::string, RouteTarget> routes;
  for (const auto& endpoint : scenario.endpoints) {
    std::vector<std::string> addresses;
    addresses.reserve(endpoint.services.size() + endpoint.hosts.size());
    for (const auto& service : endpoint.services) addresses.push_back(service.hostPort());
    for (const auto& host : endpoint.hosts) addresses.push_back(host);
    std::vector<std::string> dns_names = endpointDnsNames(endpoint);
    RouteTarget target;
    const std::string where = fmt::format("endpoint {}", json(endpoint.name).dump());
    switch (endpoint.type) {
      case EndpointType::kStub: {
        // The stub answers at once; the caller charges its declared delays to the simulated
        // clock and paces them (caller.h).
        auto stub = StubWebhook::start(endpoint.name, endpoint.stub, impl->ca, options.work_dir,
                                       dns_names, /*time_scale=*/0);
        if (!stub.ok()) return stub.error().within(where);
        const StubWebhook* served = stub->get();
        target = {fmt::format("127.0.0.1:{}", (*stub)->port()), impl->ca.certificate_pem,
                  [served](const std::string& uid, int attempt) {
                    return served->declaredDelay(uid, attempt);
                  }};
        impl->urls[endpoint.name] = (*stub)->url();
        impl->stubs[endpoint.name] = std::move(*stub);
        break;
      }
      case EndpointType::kInjector: {
        InjectorLaunchOptions launch;
        launch.binary = options.injector_binary;
        launch.kubeconfig = impl->kubeconfig;
        auto injector = InjectorProcess::start(endpoint.name, endpoint.injector, impl->ca,
                                               options.work_dir, dns_names, launch);
        if (!injector.ok()) return injector.error().within(where);
        target = {fmt::format("127.0.0.1:{}", (*injector)->port()), impl->ca.certificate_pem};
        impl->urls[endpoint.name] = (*injector)->url();
        impl->injectors[endpoint.name] = std::move(*injector);
        break;
      }
      case EndpointType::kExternal: {
        auto url = net::parseUrl(endpoint.external.url);
        if (!url.ok()) return url.error().within(where);
        target = {url->hostPort(), endpoint.external.ca_pem};
        impl->urls[endpoint.name] = endpoint.external.url;
        routes[url->hostPort()] = {url->hostPort(), endpoint.external.ca_pem};
        break;
      }
    }
    for (const auto& address : addresses) {
      impl->caller.addRoute(address, target.connect_to, target.declared);
      routes[address] = target;
    }
  }

  // Webhook configurations, with the caBundles of the endpoints they point at.
  std::map<std::string, std::string> ca_by_address;
  for (const auto& [address, target] : routes) ca_by_address[address] = target.ca_pem;
  for (const auto& sourced : scenario.webhook_configurations) {
    json config = sourced.object;
    fillCaBundles(config, ca_by_address);
    const bool mutating = config.value("kind", "") == "MutatingWebhookConfiguration";
    impl->store.put({std::string(core::kAdmissionRegistrationGroup),
                     mutating ? "mutatingwebhookconfigurations" : "validatingwebhookconfigurations"},
                    std::move(config));
  }
  return std::unique_ptr<ScenarioEnvironment>(new ScenarioEnvironment(std::move(impl)));
}

WriteRequest ScenarioEnvironment::writeRequest(const RequestSpec& request) const {
  WriteRequest out;
  out.operation = request.operation;
  out.resource = request.resource;
  out.subresource = request.subresource;
  out.namespace_name = request.namespace_name;
  out.name = request.name;
  // A DELETE's object only names its target: the body of a delete is DeleteOptions.
  if (request.operation != "DELETE") out.object = request.object;
  out.old_object = request.old_object;
  out.options = request.options;
  out.dry_run = request.dry_run;
  out.user_info = request.user_info.value_or(defaultAdminUser());
  out.timeout = request.timeout;
  return out;
}

std::map<std::string, std::size_t> ScenarioEnvironment::stubCallCounts() const {
  std::map<std::string, std::size_t> counts;
  for (const auto& [name, stub] : impl_->stubs) counts[name] = stub->callCount();
  return counts;
}

StubObservation observeStubCalls(const std::vector<StubCall>& calls, std::size_t since) {
  const std::size_t first = std::min(since, calls.size());
  StubObservation observation;
  observation.calls = static_cast<int>(calls.size() - first);
  if (calls.size() > first) {
    const StubCall& last = calls.back();
    observation.last_timeout = last.timeout_param;
    if (last.review.is_object() && last.review.contains("request") &&
        last.review["request"].is_object()) {
      const json& request = last.review["request"];
      observation.last_operation = request.value("operation", "");
      if (request.contains("dryRun") && request["dryRun"].is_boolean()) {
        observation.last_dry_run = request["dryRun"].get<bool>();
      }
    }
  }
  return observation;
}

std::map<std::string, StubObservation> ScenarioEnvironment::stubObservations(
    const std::map<std::string, std::size_t>& since) const {
  std::map<std::string, StubObservation> out;
  for (const auto& [name, stub] : impl_->stubs) {
    const auto it = since.find(name);
    out[name] = observeStubCalls(stub->callsSince(it == since.end() ? 0 : it->second), 0);
  }
  return out;
}

// --- running ---

std::string_view toString(StepStatus status) {
  switch (status) {
    case StepStatus::kPassed:
      return "passed";
    case StepStatus::kFailed:
      return "failed";
    case StepStatus::kSkipped:
      return "skipped";
    case StepStatus::kNotRun:
      return "notRun";
  }
  return "notRun";
}

bool ScenarioResult::passed() const { return !error && failedSteps() == 0; }

std::size_t ScenarioResult::failedSteps() const {
  std::size_t failed = 0;
  for (const auto& step : steps) {
    if (step.status == StepStatus::kFailed) ++failed;
  }
  return failed;
}

core::Result<RunFilter> parseRunFilter(std::string_view text) {
  RunFilter filter;
  const auto slash = text.find('/');
  filter.scenario = std::string(text.substr(0, slash));
  if (slash != std::string_view::npos) filter.step = std::string(text.substr(slash + 1));
  for (const auto& pattern : {filter.scenario, filter.step}) {
    if (auto compiled = go::Regexp::compile(pattern); !compiled) {
      return core::makeError(fmt::format("--run: invalid regular expression {}: {}",
                                         json(pattern).dump(), compiled.error().message));
    }
  }
  return filter;
}

bool matchesScenario(const RunFilter& filter, std::string_view scenario_name) {
  if (filter.scenario.empty()) return true;
  const auto compiled = go::Regexp::compile(filter.scenario);
  return compiled && compiled->matchString(scenario_name);
}

namespace {

// Whether explain's --step filter keeps a step (a regex that does not compile keeps all: the
// command checks it first).
bool explained(const std::string& filter, const std::string& step_name) {
  if (filter.empty()) return true;
  const auto compiled = go::Regexp::compile(filter);
  return !compiled || compiled->matchString(step_name);
}

// A directory for one run of one scenario: under options.work_dir, or a fresh temporary one.
class WorkDir {
 public:
  static core::Result<WorkDir> create(const fs::path& parent, const std::string& scenario_name) {
    WorkDir dir;
    std::error_code ec;
    if (parent.empty()) {
      std::string pattern = (fs::temp_directory_path(ec) / "apiserver-sim-XXXXXX").string();
      if (mkdtemp(pattern.data()) == nullptr) {
        return core::makeError("cannot create a temporary work directory");
      }
      dir.path_ = pattern;
      dir.owned_ = true;
      return dir;
    }
    // One folder per scenario (names are unique enough; a counter separates repeats).
    std::string safe;
    for (char c : scenario_name) safe += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
    for (int n = 0;; ++n) {
      fs::path candidate = parent / (n == 0 ? safe : fmt::format("{}-{}", safe, n));
      if (fs::create_directories(candidate, ec)) {
        dir.path_ = candidate;
        return dir;
      }
      if (ec) {
        return core::makeError(fmt::format("cannot create {}: {}", candidate.string(),
                                           ec.message()));
      }
    }
  }
  WorkDir() = default;
  WorkDir(WorkDir&& other) noexcept : path_(std::move(other.path_)), owned_(other.owned_) {
    other.owned_ = false;
  }
  WorkDir& operator=(WorkDir&&) = delete;
  ~WorkDir() {
    if (owned_) {
      std::error_code ec;
      fs::remove_all(path_, ec);
    }
  }
  [[nodiscard]] const fs::path& path() const { return path_; }
  [[nodiscard]] bool temporary() const { return owned_; }
  void keep() { owned_ = false; }

 private:
  fs::path path_;
  bool owned_ = false;
};

// The expectation without the fields the backend could not observe.
Expectation observableExpectation(const Expectation& expect,
                                  const std::set<std::string>& unobservable) {
  Expectation out = expect;
  auto drop = [&](const char* field) { return unobservable.contains(field); };
  if (drop("reinvoked")) out.reinvoked.reset();
  if (drop("annotations")) out.annotations.reset();
  if (drop("calls")) {
    out.calls.reset();
    out.call_counts.clear();
  }
  if (out.calls) {
    for (auto& call : *out.calls) {
      if (drop("calls.timeout")) call.timeout.reset();
      if (drop("calls.called")) call.called.reset();
      if (drop("calls.outcome")) call.outcome.reset();
      if (drop("calls.code")) call.code.reset();
      if (drop("calls.index")) call.index.reset();
      if (drop("calls.changed")) call.changed.reset();
    }
  }
  return out;
}

}  // namespace

void prepareScenarioStubs(const Scenario& scenario) {
  const auto& ca = processScenarioAuthority();
  if (!ca.ok()) return;  // the scenario's start reports it
  for (const auto& endpoint : scenario.endpoints) {
    if (endpoint.type == EndpointType::kStub) {
      StubWebhook::prepare(endpoint.stub.tls, *ca, endpointDnsNames(endpoint));
    }
  }
}

ScenarioResult runScenario(const Scenario& scenario, const RunOptions& options) {
  ScenarioResult out;
  out.name = scenario.name;
  out.file = scenario.path;
  out.description = scenario.description;
  const auto started = Clock::now();
  auto notRun = [&](std::size_t from) {
    for (std::size_t i = from; i < scenario.steps.size(); ++i) {
      StepResult step;
      step.name = scenario.steps[i].name;
      step.status = StepStatus::kNotRun;
      out.steps.push_back(std::move(step));
    }
  };
  try {
    std::optional<go::Regexp> step_filter;
    if (!options.step_filter.empty()) {
      auto compiled = go::Regexp::compile(options.step_filter);
      if (!compiled) {
        out.error = fmt::format("invalid step filter {}: {}", json(options.step_filter).dump(),
                                compiled.error().message);
        notRun(0);
        return out;
      }
      step_filter.emplace(std::move(compiled).value());
    }
    auto selected = [&](const Step& step) {
      return !step_filter || step_filter->matchString(step.name);
    };
    // Steps after the last selected one have no effect on what is reported.
    std::size_t last_selected = 0;
    bool any_selected = false;
    for (std::size_t i = 0; i < scenario.steps.size(); ++i) {
      if (selected(scenario.steps[i])) {
        last_selected = i;
        any_selected = true;
      }
    }
    if (!any_selected) {
      notRun(0);
      out.duration = Clock::now() - started;
      return out;
    }

    auto work_dir = WorkDir::create(options.work_dir, scenario.name);
    if (!work_dir.ok()) {
      out.error = work_dir.error().message;
      notRun(0);
      return out;
    }
    std::unique_ptr<Backend> simulator;
    Backend* backend = options.backend;
    if (backend == nullptr) {
      simulator = simulatorBackend();
      backend = simulator.get();
    }
    out.backend = std::string(backend->name());
    if (auto reason = backend->unsupported(scenario)) {
      out.skip_reason = *reason;
      for (const auto& step : scenario.steps) {
        StepResult skipped;
        skipped.name = step.name;
        skipped.status = StepStatus::kSkipped;
        skipped.skip_reason = *reason;
        out.steps.push_back(std::move(skipped));
        if (options.on_step) options.on_step(out, out.steps.back());
      }
      out.duration = Clock::now() - started;
      return out;
    }
    BackendOptions backend_options;
    backend_options.time_scale = options.time_scale.value_or(scenario.time_scale);
    backend_options.work_dir = work_dir->path();
    backend_options.audit_sink = options.audit_sink;
    backend_options.injector_binary = options.injector_binary;
    backend_options.webhook_authentication = options.webhook_authentication;
    auto session = backend->start(scenario, backend_options);
    if (!session.ok()) {
      out.error = session.error().message;
      if (work_dir->temporary()) {
        // The message can name files in it (an endpoint's log): they must outlive the report.
        work_dir->keep();
        *out.error += "\n(work directory kept: " + work_dir->path().string() + ")";
      }
      notRun(0);
      out.duration = Clock::now() - started;
      return out;
    }
    BackendSession& env = **session;
    const bool stop_on_failure = scenario.stop_on_failure || options.stop_on_failure;
    bool stopped = false;
    std::string unplayable;  // set once a step cannot be played: the later ones depend on it
    for (std::size_t i = 0; i < scenario.steps.size(); ++i) {
      const Step& step = scenario.steps[i];
      if (stopped || i > last_selected) {
        notRun(i);
        break;
      }
      StepResult result;
      result.name = step.name;
      if (unplayable.empty()) {
        if (auto reason = backend->unsupportedStep(step)) unplayable = *reason;
      }
      if (!unplayable.empty()) {
        result.status = StepStatus::kSkipped;
        result.skip_reason = unplayable;
        out.steps.push_back(std::move(result));
        if (options.on_step) options.on_step(out, out.steps.back());
        continue;
      }
      const auto step_started = Clock::now();
      auto played = env.play(step);
      result.duration = Clock::now() - step_started;
      if (!played.ok()) {
        out.error = fmt::format("step {}: {}", json(step.name).dump(), played.error().message);
        notRun(i);
        break;
      }
      StepOutcome& outcome = *played;
      if (selected(step)) {
        StepObservation observation;
        observation.result = &outcome.admission;
        observation.metric_deltas = outcome.metric_deltas;
        observation.stubs = outcome.stubs;
        result.failures = checkExpectations(
            observableExpectation(step.expect, outcome.unobservable), observation);
        result.status = result.failures.empty() ? StepStatus::kPassed : StepStatus::kFailed;
        result.unchecked.assign(outcome.unobservable.begin(), outcome.unobservable.end());
      } else {
        result.status = StepStatus::kSkipped;
      }
      if (options.explain && explained(options.explain_step_filter, step.name)) {
        result.explanation = env.explain(step, outcome, options.explain_options);
        result.explanation_json = env.explainJson(step, outcome, options.explain_options);
      }
      result.webhook_metric_changes = std::move(outcome.webhook_metric_changes);
      result.stubs = std::move(outcome.stubs);
      result.admission = std::move(outcome.admission);
      if (result.status == StepStatus::kFailed && stop_on_failure) stopped = true;
      out.steps.push_back(std::move(result));
      if (options.on_step) options.on_step(out, out.steps.back());
    }
    env.stop();
  } catch (const std::exception& error) {
    out.error = fmt::format("harness error: {}", error.what());
    notRun(out.steps.size());
  }
  out.duration = Clock::now() - started;
  return out;
}

}  // namespace harness::sim
