// The cost of a ValidatingAdmissionPolicy per request (never a test; scripts/bench.sh runs it):
// a ConfigMap CREATE (dry run, so the store does not grow) through the whole admission chain with
// the default in-tree plugins,
//   * BM_ChainWithoutPolicy: no policy (the baseline);
//   * BM_ChainPolicyFiveValidations: one policy with five validations (all true) and its binding,
//     evaluated by kube-cel with Kubernetes' validating dispatcher: one pipe round trip, the
//     request and the policies encoded, Go's matching and evaluation of the five;
//   * BM_ChainPolicyOneValidation: the same policy with one validation.
// Per expression = (five - one) / 4, which leaves out the round trip and the fixed costs.
// The combined chain (issue 14), each a ConfigMap CREATE as above:
//   * BM_CombinedWebhooks: a mutating webhook with three matchConditions (all true) and a
//     validating webhook, answered in process (no TLS: the chain's own cost);
//   * BM_CombinedPolicies: the five-validation policy and a MutatingAdmissionPolicy with one
//     ApplyConfiguration (a label), both by kube-cel;
//   * BM_CombinedWebhooksAndPolicies: both sets in one chain.
// Read as ratios: each to BM_ChainWithoutPolicy, and the combined one to the sum of its parts
// (on a shared machine a ratio of times measured side by side moves far less than the times).
// Needs build/kube/bin/kube-cel (bash scripts/build-kube.sh); without it the policy benchmarks
// report an error, not a number.

#include <benchmark/benchmark.h>

#include <unistd.h>

#include <filesystem>
#include <mutex>
#include <string>

#include "harness/sim/admission_chain.h"
#include "harness/sim/cel.h"

namespace {

namespace sim = harness::sim;
namespace core = harness::core;
using nlohmann::json;

std::shared_ptr<sim::cel::KubeCel>& kubeCel() {
  static std::shared_ptr<sim::cel::KubeCel> cel = [] {
    auto started = sim::cel::KubeCel::start(
        sim::cel::KubeCel::defaultBinary(),
        std::filesystem::temp_directory_path() /
            ("policy-bench-" + std::to_string(::getpid()) + ".log"));
    return started.ok() ? std::move(started).value() : nullptr;
  }();
  return cel;
}

// matchConstraints of ConfigMap CREATEs.
json configMapCreates() {
  return {{"resourceRules", json::array({{{"apiGroups", {""}},
                                          {"apiVersions", {"v1"}},
                                          {"operations", {"CREATE"}},
                                          {"resources", {"configmaps"}}}})}};
}

json policy(int validations) {
  static const char* kExpressions[] = {
      "object.metadata.name.size() < 64",
      "!has(object.data) || object.data.all(k, k.size() < 32)",
      "has(object.metadata.labels) && 'app' in object.metadata.labels",
      "request.userInfo.username != ''",
      "!has(object.metadata.annotations) || !('forbidden' in object.metadata.annotations)",
  };
  json list = json::array();
  for (int i = 0; i < validations; ++i) {
    list.push_back({{"expression", kExpressions[i]}, {"message", "rule " + std::to_string(i)}});
  }
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", "ValidatingAdmissionPolicy"},
          {"metadata", {{"name", "bench"}, {"uid", "u1"}, {"generation", 1}}},
          {"spec",
           {{"failurePolicy", "Fail"},
            {"matchConstraints", configMapCreates()},
            {"validations", list}}}};
}

json mutatingPolicy() {
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", "MutatingAdmissionPolicy"},
          {"metadata", {{"name", "stamp"}, {"uid", "u2"}, {"generation", 1}}},
          {"spec",
           {{"failurePolicy", "Fail"},
            {"reinvocationPolicy", "Never"},
            {"matchConstraints", configMapCreates()},
            {"mutations",
             json::array({{{"patchType", "ApplyConfiguration"},
                           {"applyConfiguration",
                            {{"expression",
                              "Object{metadata: Object.metadata{labels: {\"stamped\": "
                              "\"yes\"}}}"}}}}})}}}};
}

// A webhook configuration of `kind` with one webhook on ConfigMap CREATE at `url`.
json webhookConfiguration(const std::string& kind, const std::string& url, json conditions) {
  json webhook = {{"name", kind == "MutatingWebhookConfiguration" ? "mutate.bench.example.com"
                                                                    : "validate.bench.example.com"},
                  {"clientConfig", {{"url", url}}},
                  {"rules",
                   json::array({{{"operations", {"CREATE"}},
                                 {"apiGroups", {""}},
                                 {"apiVersions", {"v1"}},
                                 {"resources", {"configmaps"}}}})},
                  {"sideEffects", "None"},
                  {"admissionReviewVersions", {"v1"}},
                  {"failurePolicy", "Fail"}};
  if (!conditions.empty()) webhook["matchConditions"] = std::move(conditions);
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", kind},
          {"metadata", {{"name", "bench-" + url.substr(8, 6)}}},
          {"webhooks", json::array({webhook})}};
}

struct ChainSetup {
  int validations = 0;     // a validating policy with this many validations (0: none)
  bool mutating_policy = false;
  bool webhooks = false;
};

void run(benchmark::State& state, ChainSetup setup) {
  sim::ObjectStore store;
  store.put({"", "namespaces"},
            {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "demo"}}}});
  sim::ChainOptions options;
  const bool needs_cel = setup.validations > 0 || setup.mutating_policy || setup.webhooks;
  if (needs_cel) {
    if (!kubeCel()) {
      state.SkipWithError("kube-cel is not built (bash scripts/build-kube.sh)");
      return;
    }
    // The configuration's matchConditions are compiled when it is read (as at creation).
    static std::once_flag installed;
    std::call_once(installed, [] { sim::cel::install(kubeCel()); });
  }
  if (setup.validations > 0) {
    options.validating_policies = sim::cel::validatingPolicyDispatcher(kubeCel());
    store.put({"admissionregistration.k8s.io", "validatingadmissionpolicies"},
              policy(setup.validations));
    store.put({"admissionregistration.k8s.io", "validatingadmissionpolicybindings"},
              {{"apiVersion", "admissionregistration.k8s.io/v1"},
               {"kind", "ValidatingAdmissionPolicyBinding"},
               {"metadata", {{"name", "bench"}}},
               {"spec", {{"policyName", "bench"}, {"validationActions", {"Deny"}}}}});
  }
  if (setup.mutating_policy) {
    options.mutating_policies = sim::cel::mutatingPolicyDispatcher(kubeCel());
    store.put({"admissionregistration.k8s.io", "mutatingadmissionpolicies"}, mutatingPolicy());
    store.put({"admissionregistration.k8s.io", "mutatingadmissionpolicybindings"},
              {{"apiVersion", "admissionregistration.k8s.io/v1"},
               {"kind", "MutatingAdmissionPolicyBinding"},
               {"metadata", {{"name", "stamp"}}},
               {"spec", {{"policyName", "stamp"}}}});
  }
  sim::InProcessWebhookCaller caller;
  if (setup.webhooks) {
    options.match_conditions = sim::cel::matchConditionEvaluator(kubeCel());
    auto allow = [](const core::AdmissionReview& review) {
      core::AdmissionResponse response;
      response.uid = review.request->uid;
      response.allowed = true;
      return core::AdmissionReview{review.api_version, review.kind, std::nullopt, response};
    };
    caller.handle("https://mutate.bench.example.com/", allow);
    caller.handle("https://validate.bench.example.com/", allow);
    store.put({"admissionregistration.k8s.io", "mutatingwebhookconfigurations"},
              webhookConfiguration(
                  "MutatingWebhookConfiguration", "https://mutate.bench.example.com/",
                  json::array({{{"name", "not-system"},
                                {"expression", "!request.userInfo.username.startsWith('system:')"}},
                               {{"name", "labelled"},
                                {"expression", "has(object.metadata.labels)"}},
                               {{"name", "small"}, {"expression", "size(object.data) < 16"}}})));
    store.put({"admissionregistration.k8s.io", "validatingwebhookconfigurations"},
              webhookConfiguration("ValidatingWebhookConfiguration",
                                   "https://validate.bench.example.com/", json::array()));
  }
  core::MetricsRegistry metrics;
  sim::AdmissionChain chain(store, caller, metrics, options);
  sim::WriteRequest request;
  request.operation = "CREATE";
  request.resource = {"", "v1", "configmaps"};
  request.namespace_name = "demo";
  request.name = "settings";
  request.dry_run = true;
  request.user_info = {"jane", "", {"developers", "system:authenticated"}, {}};
  request.object = json{{"apiVersion", "v1"},
                        {"kind", "ConfigMap"},
                        {"metadata",
                         {{"name", "settings"},
                          {"namespace", "demo"},
                          {"labels", {{"app", "web"}}}}},
                        {"data", {{"mode", "strict"}, {"level", "3"}}}};
  // What each setup must have run, checked once before timing: a setup that silently skipped a
  // part would measure nothing.
  const std::size_t want_calls = setup.webhooks ? 2 : 0;
  for (auto _ : state) {
    auto result = chain.handle(request);
    if (!result.allowed) {
      state.SkipWithError(("the request was rejected: " +
                           (result.status ? result.status->message : std::string("?")))
                              .c_str());
      return;
    }
    if (result.calls.size() != want_calls ||
        (setup.mutating_policy &&
         !result.object->at("metadata").at("labels").contains("stamped"))) {
      state.SkipWithError("the chain did not run every part of the setup");
      return;
    }
    benchmark::DoNotOptimize(result);
  }
}

void BM_ChainWithoutPolicy(benchmark::State& state) { run(state, {}); }
void BM_ChainPolicyOneValidation(benchmark::State& state) { run(state, {.validations = 1}); }
void BM_ChainPolicyFiveValidations(benchmark::State& state) { run(state, {.validations = 5}); }
void BM_CombinedWebhooks(benchmark::State& state) { run(state, {.webhooks = true}); }
void BM_CombinedPolicies(benchmark::State& state) {
  run(state, {.validations = 5, .mutating_policy = true});
}
void BM_CombinedWebhooksAndPolicies(benchmark::State& state) {
  run(state, {.validations = 5, .mutating_policy = true, .webhooks = true});
}

BENCHMARK(BM_ChainWithoutPolicy)->UseRealTime();
BENCHMARK(BM_ChainPolicyOneValidation)->UseRealTime();
BENCHMARK(BM_ChainPolicyFiveValidations)->UseRealTime();
BENCHMARK(BM_CombinedWebhooks)->UseRealTime();
BENCHMARK(BM_CombinedPolicies)->UseRealTime();
BENCHMARK(BM_CombinedWebhooksAndPolicies)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
