#pragma once

// Running scenarios (scenario.h): a fresh simulated cluster per scenario (object store, metrics,
// HTTPS webhook caller, admission chain, a CA, the endpoints, the REST API when the injector needs
// it), the steps in order against it, and each step's expectations checked against what the
// chain recorded. Everything started is stopped again, also when a step or the setup fails.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/audit/event.h"
#include "harness/core/metrics.h"
#include "harness/core/result.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/backend.h"
#include "harness/sim/scenario.h"
#include "harness/sim/store.h"
#include "harness/sim/stub_webhook.h"
#include "harness/sim/webhook_authentication.h"

namespace harness::sim {

// --- expectations ---

// One expectation that does not hold.
struct ExpectationFailure {
  std::string field;    // the expectation: "code", "object", "calls", "metrics[0]", ...
  std::string message;  // one line: `expected 403, got 201`
  // Expected vs actual as a readable diff ("-" expected, "+" actual), server-set fields left
  // out; empty when the message says it all.
  std::string diff;
};

// What the expectations are checked against: the chain's record of the request, the change of
// each expected metric (in `Expectation::metrics` order; nullopt when the metric does not exist),
// and the stubs' observations.
struct StepObservation {
  const AdmissionResult* result = nullptr;
  std::vector<std::optional<double>> metric_deltas;
  std::map<std::string, StubObservation> stubs;
};

// Every expectation of `expect` that does not hold, in the order of the format's fields.
std::vector<ExpectationFailure> checkExpectations(const Expectation& expect,
                                                  const StepObservation& observed);

// Partial match of an expected object against an actual one (`expect.object`): every field of
// `expected` must be in `actual` with an equal value; lists are matched element by element and
// must have the same length; a mapping {$regex: "<re>"} matches a string the regex finds a match
// in. Returns one line per mismatch: `/spec/containers/0/image: expected "a", got "b"`.
std::vector<std::string> partialMatchMismatches(const nlohmann::json& expected,
                                                const nlohmann::json& actual);

// The object without the fields the server sets on its own (metadata.uid, resourceVersion,
// creationTimestamp, generation, managedFields, selfLink) and with the random suffix of the
// ServiceAccount plugin's `kube-api-access-xxxxx` volume names replaced by `kube-api-access-*`:
// what diffs show.
nlohmann::json withoutServerSetFields(const nlohmann::json& object);

// A line diff of two texts (longest common subsequence): unchanged lines prefixed "  ", removed
// "- ", added "+ ". Empty when the texts are equal.
std::string lineDiff(std::string_view expected, std::string_view actual);

// The sum of a counter's series whose labels include `labels` (0 when none does); nullopt when no
// counter of that name is registered.
std::optional<double> metricValue(const core::MetricsRegistry& registry, const std::string& name,
                                  const std::map<std::string, std::string>& labels);

// What a stub received from its call number `since` (0-based) on.
StubObservation observeStubCalls(const std::vector<StubCall>& calls, std::size_t since);

// --- the simulated cluster of one scenario ---

struct EnvironmentOptions {
  // The pace of simulated waits (ChainOptions::time_scale); never an outcome.
  double time_scale = 1.0;
  // Certificates, the kubeconfig and endpoint logs go here; it must exist.
  std::filesystem::path work_dir;
  // Start the REST API even if no endpoint needs it (`apiserver-sim serve`).
  bool start_rest_api = false;
  std::uint16_t rest_api_port = 0;
  // Receives every audit event of the chain.
  std::function<void(const audit::Event&)> audit_sink;
  // The `injector` binary for injector endpoints; empty: next to the running executable, then
  // the build tree, then PATH.
  std::filesystem::path injector_binary;
  // What the chain presents to webhooks (--admission-control-config-file); null: anonymous.
  std::shared_ptr<const WebhookAuthentication> webhook_authentication;
};

class ScenarioEnvironment {
 public:
  // Builds the cluster: store (seeded), starting objects (defaulted), CA, endpoints with their
  // routes, webhook configurations (caBundle filled for endpoint addresses), the chain, and the
  // REST API when asked or when an injector endpoint uses it. On error everything already
  // started is stopped.
  static core::Result<std::unique_ptr<ScenarioEnvironment>> start(
      const Scenario& scenario, const EnvironmentOptions& options);
  ~ScenarioEnvironment();
  ScenarioEnvironment(const ScenarioEnvironment&) = delete;
  ScenarioEnvironment& operator=(const ScenarioEnvironment&) = delete;

  ObjectStore& store();
  AdmissionChain& chain();
  core::MetricsRegistry& metrics();

  // The WriteRequest for a step's request (user, timeout and objects resolved).
  [[nodiscard]] WriteRequest writeRequest(const RequestSpec& request) const;

  // Number of calls each stub endpoint has received so far, and what arrived after `since`.
  [[nodiscard]] std::map<std::string, std::size_t> stubCallCounts() const;
  [[nodiscard]] std::map<std::string, StubObservation> stubObservations(
      const std::map<std::string, std::size_t>& since) const;

  // The REST API (empty when not started) and the kubeconfig written for it.
  [[nodiscard]] std::string apiServerUrl() const;
  [[nodiscard]] std::filesystem::path kubeconfigPath() const;
  // Where each endpoint listens ("name" -> "https://127.0.0.1:port"), for explanations.
  [[nodiscard]] std::map<std::string, std::string> endpointUrls() const;

  // Stops the endpoints and the REST API. Idempotent; the destructor calls it.
  void stop();

 private:
  struct Impl;
  explicit ScenarioEnvironment(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// --- running ---

enum class StepStatus {
  kPassed,
  kFailed,
  kSkipped,  // not selected by the filter (run for its effect on the store, not checked), or
             // not playable by the backend (StepResult::skip_reason says why)
  kNotRun,   // after a failure with stopOnFailure, or after the last selected step
};
std::string_view toString(StepStatus status);

struct StepResult {
  std::string name;
  StepStatus status = StepStatus::kNotRun;
  std::vector<ExpectationFailure> failures;
  std::chrono::nanoseconds duration{0};
  std::optional<AdmissionResult> admission;
  std::string explanation;  // RunOptions::explain
  nlohmann::json explanation_json;  // RunOptions::explain, the same as JSON (null: none)
  // Why the backend did not play the step (empty: skipped by --run, or not skipped).
  std::string skip_reason;
  // Expectation fields the backend could not observe, so not checked ("reinvoked", ...).
  std::vector<std::string> unchecked;
  // What the backend observed beyond the AdmissionResult (compare uses it).
  std::map<std::string, double> webhook_metric_changes;
  std::map<std::string, StubObservation> stubs;
};

struct ScenarioResult {
  std::string name;
  std::filesystem::path file;
  std::string description;
  std::vector<StepResult> steps;
  // The scenario could not be run (an endpoint did not start...): a harness error.
  std::optional<std::string> error;
  // The backend cannot play the scenario (Backend::unsupported): every step is skipped.
  std::optional<std::string> skip_reason;
  std::string backend = "simulator";
  std::chrono::nanoseconds duration{0};

  [[nodiscard]] bool passed() const;
  [[nodiscard]] std::size_t failedSteps() const;
};

struct RunOptions {
  std::optional<double> time_scale;  // overrides spec.timeScale (the pace of simulated waits)
  // Go regexp (RE2) searched in step names ("" = every step).
  std::string step_filter;
  bool explain = false;
  ExplainOptions explain_options;  // compact or verbose, colour, which webhooks
  // Go regexp (RE2) searched in step names: only those steps are explained ("" = all).
  std::string explain_step_filter;
  bool stop_on_failure = false;  // in addition to spec.stopOnFailure
  std::function<void(const audit::Event&)> audit_sink;
  // Certificates and logs; empty: a fresh directory under the system temp dir, removed after.
  std::filesystem::path work_dir;
  std::filesystem::path injector_binary;
  std::shared_ptr<const WebhookAuthentication> webhook_authentication;
  // Called after each step (progress lines).
  std::function<void(const ScenarioResult&, const StepResult&)> on_step;
  // Warnings about a scenario that runs anyway (runScenarioFiles: a scenario without
  // spec.auditPolicy under an audit_sink is recorded with audit/default_policy.h).
  std::function<void(const std::string&)> on_warning;
  // Where the scenario is played; nullptr: the simulator.
  Backend* backend = nullptr;
  // Which scenarios runScenarioFiles runs, by metadata.labels[kSlowLabel].
  enum class Slow { kInclude, kExclude, kOnly } slow = Slow::kInclude;
};

// Runs one scenario. Never throws: harness failures end up in ScenarioResult::error.
ScenarioResult runScenario(const Scenario& scenario, const RunOptions& options = {});

// Makes ahead what the simulator's start of `scenario` will make for its stubs (certificates and
// server TLS contexts, kept for the process: StubWebhook::prepare). Thread-safe; never fails
// (what cannot be made is the start's to report).
void prepareScenarioStubs(const Scenario& scenario);

// Go test's -run: `scenarioRegex[/stepRegex]`, each searched (not anchored) in the name.
struct RunFilter {
  std::string scenario;
  std::string step;
};
core::Result<RunFilter> parseRunFilter(std::string_view text);
bool matchesScenario(const RunFilter& filter, std::string_view scenario_name);

}  // namespace harness::sim
