// The simulator as a scenario backend (backend.h), and the Prometheus text helpers both backends
// use to observe counters.

#include "harness/sim/backend.h"

#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "harness/core/json.h"
#include "harness/core/status.h"
#include "harness/sim/explain.h"
#include "harness/sim/rest_api.h"
#include "harness/sim/scenario_runner.h"

namespace harness::sim {

namespace {

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

// `a="x",b="y\"z"` (the exposition format's escapes: \\, \", \n).
bool parseLabels(std::string_view text, std::map<std::string, std::string>& out) {
  std::size_t i = 0;
  while (i < text.size()) {
    while (i < text.size() && (text[i] == ',' || text[i] == ' ')) ++i;
    if (i >= text.size()) break;
    const auto eq = text.find('=', i);
    if (eq == std::string_view::npos || eq + 1 >= text.size() || text[eq + 1] != '"') return false;
    std::string name(trimmed(text.substr(i, eq - i)));
    std::string value;
    std::size_t j = eq + 2;
    for (; j < text.size() && text[j] != '"'; ++j) {
      if (text[j] == '\\' && j + 1 < text.size()) {
        ++j;
        value += text[j] == 'n' ? '\n' : text[j];
      } else {
        value += text[j];
      }
    }
    if (j >= text.size()) return false;
    out[std::move(name)] = std::move(value);
    i = j + 1;
  }
  return true;
}

}  // namespace

std::vector<CounterSample> parseCounterSamples(std::string_view text, std::string_view prefix) {
  std::vector<CounterSample> out;
  std::set<std::string> counters;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = trimmed(text.substr(start, end - start));
    start = end + 1;
    if (line.empty()) continue;
    if (line.front() == '#') {
      // "# TYPE name counter"
      if (line.substr(0, 7) == "# TYPE ") {
        const std::string_view rest = line.substr(7);
        const auto space = rest.find(' ');
        if (space != std::string_view::npos && trimmed(rest.substr(space + 1)) == "counter") {
          counters.emplace(rest.substr(0, space));
        }
      }
      continue;
    }
    if (line.substr(0, prefix.size()) != prefix) continue;
    CounterSample sample;
    std::string_view value_text;
    const auto brace = line.find('{');
    const auto space = line.find(' ');
    if (brace != std::string_view::npos && (space == std::string_view::npos || brace < space)) {
      const auto close = line.rfind('}');
      if (close == std::string_view::npos || close < brace) continue;
      sample.name = std::string(line.substr(0, brace));
      if (!parseLabels(line.substr(brace + 1, close - brace - 1), sample.labels)) continue;
      value_text = trimmed(line.substr(close + 1));
    } else {
      if (space == std::string_view::npos) continue;
      sample.name = std::string(line.substr(0, space));
      value_text = trimmed(line.substr(space + 1));
    }
    if (!counters.contains(sample.name)) continue;
    // A timestamp may follow the value.
    value_text = value_text.substr(0, value_text.find(' '));
    const std::string number(value_text);
    char* parsed_end = nullptr;
    sample.value = std::strtod(number.c_str(), &parsed_end);
    if (parsed_end == number.c_str()) continue;
    out.push_back(std::move(sample));
  }
  return out;
}

std::string seriesKey(const CounterSample& sample) {
  std::string labels;
  for (const auto& [name, value] : sample.labels) {
    labels += fmt::format("{}{}={}", labels.empty() ? "" : ",", name, nlohmann::json(value).dump());
  }
  return fmt::format("{}{{{}}}", sample.name, labels);
}

std::map<std::string, double> counterChanges(const std::vector<CounterSample>& before,
                                             const std::vector<CounterSample>& after) {
  std::map<std::string, double> values;
  for (const auto& sample : before) values[seriesKey(sample)] -= sample.value;
  for (const auto& sample : after) values[seriesKey(sample)] += sample.value;
  std::map<std::string, double> changes;
  for (const auto& [key, change] : values) {
    if (change != 0) changes.emplace(key, change);
  }
  return changes;
}

double sumMatching(const std::vector<CounterSample>& samples, const std::string& name,
                   const std::map<std::string, std::string>& labels) {
  double sum = 0;
  for (const auto& sample : samples) {
    if (sample.name != name) continue;
    bool matches = true;
    for (const auto& [label, wanted] : labels) {
      auto it = sample.labels.find(label);
      if (it == sample.labels.end() || it->second != wanted) {
        matches = false;
        break;
      }
    }
    if (matches) sum += sample.value;
  }
  return sum;
}

namespace {

class SimulatorSession : public BackendSession {
 public:
  explicit SimulatorSession(std::unique_ptr<ScenarioEnvironment> env) : env_(std::move(env)) {}
  ~SimulatorSession() override { stop(); }

  core::Result<StepOutcome> play(const Step& step) override {
    StepOutcome outcome;
    const auto stub_counts = env_->stubCallCounts();
    std::vector<std::optional<double>> before;
    before.reserve(step.expect.metrics.size());
    for (const auto& metric : step.expect.metrics) {
      before.push_back(metricValue(env_->metrics(), metric.name, metric.labels));
    }
    const auto counters_before = webhookCounters();
    outcome.admission = step.request.isPatch()
                            ? patch(step.request)
                            : env_->chain().handle(env_->writeRequest(step.request));
    for (std::size_t m = 0; m < step.expect.metrics.size(); ++m) {
      const auto& metric = step.expect.metrics[m];
      const auto after = metricValue(env_->metrics(), metric.name, metric.labels);
      outcome.metric_deltas.push_back(before[m] && after ? std::optional(*after - *before[m])
                                                         : std::nullopt);
    }
    outcome.webhook_metric_changes = counterChanges(counters_before, webhookCounters());
    outcome.stubs = env_->stubObservations(stub_counts);
    return outcome;
  }

  std::string explain(const Step& step, const StepOutcome& outcome) override {
    return explainStep(step, outcome.admission);
  }
  std::string explain(const Step& step, const StepOutcome& outcome,
                      const ExplainOptions& options) override {
    return explainStep(step, outcome.admission, options);
  }
  nlohmann::json explainJson(const Step& step, const StepOutcome& outcome,
                             const ExplainOptions& options) override {
    return explainStepJson(step, outcome.admission, options);
  }

  void stop() override { env_->stop(); }

 private:
  // The webhook counters, read as the kube backend reads them from /metrics.
  std::vector<CounterSample> webhookCounters() const {
    return parseCounterSamples(env_->metrics().renderCounters(kWebhookMetricPrefix),
                               kWebhookMetricPrefix);
  }

  // A PATCH or APPLY step: the request kubectl sends, answered by the simulator's REST handler
  // (its patch handler: the same patching, options and admission as for `apiserver-sim serve`).
  AdmissionResult patch(const RequestSpec& spec) {
    if (!rest_) {
      RestApiOptions options;
      options.bearer_token = "scenario-step";
      options.metrics = &env_->metrics();
      rest_ = std::make_unique<RestApiHandler>(env_->store(), env_->chain(), std::move(options));
    }
    const PatchHttpRequest patch = patchHttpRequest(spec);
    net::Request request;
    request.method = "PATCH";
    request.target = patch.path;
    const auto question = patch.path.find('?');
    request.path = patch.path.substr(0, question);
    if (question != std::string::npos) request.query = patch.path.substr(question + 1);
    request.headers.set("Authorization", "Bearer scenario-step");
    request.headers.set("Content-Type", patch.content_type);
    request.headers.set("Accept", "application/json");
    request.headers.set("User-Agent", "kubectl");
    request.body = patch.body;
    request.peer = "127.0.0.1:0";
    std::optional<AdmissionResult> admitted;
    const net::Response response =
        rest_->handleAs(request, spec.user_info.value_or(defaultAdminUser()), &admitted);
    if (admitted) return std::move(*admitted);
    // Answered before admission (the request's own 4xx): what the client sees.
    AdmissionResult result;
    result.code = response.status;
    result.allowed = response.status / 100 == 2;
    for (const auto& warning : response.headers.getAll("Warning")) {
      result.warnings.push_back(warningText(warning));
    }
    auto body = core::parseJson(response.body);
    if (body.ok()) {
      if (!result.allowed) {
        if (auto status = core::statusFromJson(*body); status.ok()) result.status = *status;
      } else {
        result.object = std::move(*body);
      }
    }
    return result;
  }

  std::unique_ptr<ScenarioEnvironment> env_;
  std::unique_ptr<RestApiHandler> rest_;
};

class SimulatorBackend : public Backend {
 public:
  [[nodiscard]] std::string_view name() const override { return "simulator"; }
  [[nodiscard]] std::optional<std::string> unsupported(const Scenario&) const override {
    return std::nullopt;
  }
  [[nodiscard]] std::optional<std::string> unsupportedStep(const Step&) const override {
    return std::nullopt;
  }
  core::Result<std::unique_ptr<BackendSession>> start(const Scenario& scenario,
                                                      const BackendOptions& options) override {
    EnvironmentOptions environment;
    environment.time_scale = options.time_scale;
    environment.work_dir = options.work_dir;
    environment.audit_sink = options.audit_sink;
    environment.injector_binary = options.injector_binary;
    environment.webhook_authentication = options.webhook_authentication;
    auto env = ScenarioEnvironment::start(scenario, environment);
    if (!env.ok()) return env.error();
    return std::unique_ptr<BackendSession>(new SimulatorSession(std::move(*env)));
  }
};

}  // namespace

std::unique_ptr<Backend> simulatorBackend() { return std::make_unique<SimulatorBackend>(); }

}  // namespace harness::sim
