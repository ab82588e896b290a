#pragma once

// Where a scenario is played: the backend interface of the scenario runner. The runner
// (runScenario) knows nothing about what serves the requests; a backend starts one isolated
// cluster per scenario (a BackendSession), plays each step as a request and reports what it
// observed in the runner's terms (AdmissionResult, metric changes, stub observations), so that
// the same expectations are checked, and the same reports written, whatever played the step.
//
// Two backends exist: the simulator (simulatorBackend(), this library) and the real control
// plane built from Kubernetes' Go modules (harness::kube::kubeBackend(), kube/).

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "harness/audit/event.h"
#include "harness/core/result.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/explain.h"
#include "harness/sim/scenario.h"
#include "harness/sim/webhook_authentication.h"

namespace harness::sim {

// What a stub endpoint received during one step.
struct StubObservation {
  int calls = 0;
  std::string last_timeout;
  std::string last_operation;
  std::optional<bool> last_dry_run;
};

// What one step produced, as the backend observed it.
struct StepOutcome {
  AdmissionResult admission;
  // The change of each expected counter (Expectation::metrics order); nullopt when the counter
  // does not exist.
  std::vector<std::optional<double>> metric_deltas;
  std::map<std::string, StubObservation> stubs;
  // Every admission-webhook counter series that changed during the step:
  // "name{label=\"v\",...}" -> change (what `compare` sets side by side).
  std::map<std::string, double> webhook_metric_changes;
  // Expectation fields this backend cannot observe for this step ("reinvoked", "calls.timeout",
  // ...): not checked, and listed in the step's notes.
  std::set<std::string> unobservable;
};

struct BackendOptions {
  double time_scale = 1.0;  // the simulator's pace of simulated waits; the real server ignores it
  std::filesystem::path work_dir;  // exists; certificates, logs
  std::function<void(const audit::Event&)> audit_sink;
  std::filesystem::path injector_binary;
  // --admission-control-config-file: credentials the simulator presents to webhooks.
  std::shared_ptr<const WebhookAuthentication> webhook_authentication;
};

// One isolated cluster for one scenario: nothing created by one session is seen by another.
class BackendSession {
 public:
  virtual ~BackendSession() = default;
  // Sends the step's request and observes its outcome. An error is a harness error (the
  // backend broke), not a failed expectation.
  virtual core::Result<StepOutcome> play(const Step& step) = 0;
  // The explanation of a step (--explain); empty when the backend has none.
  virtual std::string explain(const Step& step, const StepOutcome& outcome) = 0;
  // The same with explain's options (compact or -v, colour, filters); by default the above.
  virtual std::string explain(const Step& step, const StepOutcome& outcome,
                              const ExplainOptions& /*options*/) {
    return explain(step, outcome);
  }
  // The explanation as JSON (explain -o json); null when the backend has none.
  virtual nlohmann::json explainJson(const Step& /*step*/, const StepOutcome& /*outcome*/,
                                     const ExplainOptions& /*options*/) {
    return nullptr;
  }
  // Stops everything the session started. Idempotent; the destructor calls it.
  virtual void stop() = 0;
};

class Backend {
 public:
  virtual ~Backend() = default;
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Why the backend cannot play the scenario at all (nullopt: it can). The runner reports the
  // scenario as skipped with this reason: never silently passed.
  [[nodiscard]] virtual std::optional<std::string> unsupported(const Scenario& scenario) const = 0;
  // Why it cannot play one step (nullopt: it can); the step is skipped with the reason and,
  // since later steps may depend on it, so are the steps after it.
  [[nodiscard]] virtual std::optional<std::string> unsupportedStep(const Step& step) const = 0;
  virtual core::Result<std::unique_ptr<BackendSession>> start(const Scenario& scenario,
                                                              const BackendOptions& options) = 0;
};

// The simulated kube-apiserver admission chain (ScenarioEnvironment): plays everything.
std::unique_ptr<Backend> simulatorBackend();

// --- metrics as both backends expose them (the Prometheus text format) ---

// One sample of a counter: `name{labels} value`.
struct CounterSample {
  std::string name;
  std::map<std::string, std::string> labels;
  double value = 0;
};
// The samples of the families declared `# TYPE <name> counter` whose name starts with `prefix`.
// Lines that do not parse are ignored (the text is the server's, not the user's).
std::vector<CounterSample> parseCounterSamples(std::string_view text, std::string_view prefix);
// "name{a=\"x\",b=\"y\"}" with the labels in name order: the key of a series.
std::string seriesKey(const CounterSample& sample);
// The series that changed from `before` to `after`, by seriesKey, with their change.
std::map<std::string, double> counterChanges(const std::vector<CounterSample>& before,
                                             const std::vector<CounterSample>& after);
// The sum of the series of `name` whose labels include `labels` (metricValue on samples).
double sumMatching(const std::vector<CounterSample>& samples, const std::string& name,
                   const std::map<std::string, std::string>& labels);
// The prefix of the admission webhook counters compared between backends
// (apiserver_admission_webhook_request_total, _rejection_count, _fail_open_count).
inline constexpr std::string_view kWebhookMetricPrefix = "apiserver_admission_webhook_";

// Fills every empty clientConfig.caBundle of a webhook configuration whose `service`
// ("<name>.<namespace>.svc:<port>") or `url` host:port is a key of `ca_by_address` with that CA
// (base64 of the PEM), as a cluster operator or cert-manager's CA injector would.
void fillCaBundles(nlohmann::json& config, const std::map<std::string, std::string>& ca_by_address);

}  // namespace harness::sim
