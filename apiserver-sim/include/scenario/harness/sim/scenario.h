#pragma once

// The scenario format (scenarios/FORMAT.md, scenarios/schema/scenario.schema.json): a cluster's
// starting state, the webhook endpoints, and ordered steps, each a write request with the outcome
// it must have. This is the typed form of one scenario file after loading: every file it names is
// read, every object parsed, every webhook configuration v1-defaulted and validated, so that a
// loaded scenario can only fail at run time for reasons of the run itself (an endpoint that does
// not start, an expectation that does not hold).
//
// Loading errors name the file, the line and column, and the field path:
//   scenarios/x.yaml:14:15: spec.steps[2].expect.code: expected integer, got string

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/audit/policy.h"
#include "harness/core/admission_review.h"
#include "harness/core/object.h"
#include "harness/core/result.h"
#include "harness/sim/endpoint.h"
#include "harness/sim/injector_process.h"
#include "harness/sim/stub_webhook.h"

namespace harness::sim {

inline constexpr std::string_view kScenarioApiVersion = "apiserver-sim.harness.dev/v1alpha1";
inline constexpr std::string_view kScenarioKind = "Scenario";
// metadata.labels[kSlowLabel] == "true": the scenario takes long in real time (declared stub
// delays are slept for real on a real server, where time cannot be scaled); CI runs these apart.
inline constexpr std::string_view kSlowLabel = "apiserver-sim.harness.dev/slow";

// Where a value came from, for messages: "scenarios/x.yaml:12:7".
struct SourceLocation {
  std::string file;
  int line = 0;  // 1-based; 0 when unknown
  int column = 0;

  [[nodiscard]] std::string toString() const;
};

// --- expectations ---

enum class TextMatch { kExact, kContains, kRegex };
std::string_view toString(TextMatch match);

// `message: {exact|contains|regex: ...}` (a plain string means exact).
struct TextExpectation {
  TextMatch match = TextMatch::kExact;
  std::string text;  // for kRegex: Go regexp (RE2) syntax, searched (not anchored)
};

// One entry of `expect.calls`: every given field must equal the call record's.
struct CallExpectation {
  std::optional<std::string> webhook;
  std::optional<std::string> configuration;
  std::optional<std::string> type;  // "mutating" / "validating"
  std::optional<int> round;
  std::optional<std::size_t> index;
  std::optional<std::string> outcome;  // toString(CallOutcome): "Allowed", "Patched", ...
  std::optional<bool> called;          // an HTTP request was sent
  std::optional<std::string> timeout;  // the ?timeout= sent, e.g. "10s"
  std::optional<int> code;             // the denial/error Status code
  std::optional<bool> changed;         // the patch changed the object
};

enum class ListMatch { kExact, kSubset };

// `expect.metrics[]`: the change of a counter during the step, summed over every series whose
// labels include the given ones.
struct MetricExpectation {
  std::string name;
  std::map<std::string, std::string> labels;
  double delta = 0;
};

// `expect.stub.<endpoint>`: what a stub endpoint received during the step.
struct StubExpectation {
  std::optional<int> calls;
  std::optional<std::string> last_timeout;    // the ?timeout= of the last request ("10s")
  std::optional<std::string> last_operation;  // request.operation of the last review
  std::optional<bool> last_dry_run;           // request.dryRun of the last review
};

// `expect.auditEvent`: the audit event written for the request (needs spec.auditPolicy).
struct AuditEventExpectation {
  std::optional<bool> present;      // false: no event (level None)
  std::optional<std::string> level;  // Metadata, Request, RequestResponse
  std::optional<std::map<std::string, std::string>> annotations;
  ListMatch annotations_match = ListMatch::kExact;
  std::optional<bool> request_object;   // requestObject present
  std::optional<bool> response_object;  // responseObject present
};

struct Expectation {
  std::optional<bool> allowed;
  std::optional<int> code;
  std::optional<TextExpectation> message;
  std::optional<std::string> reason;
  // A partial object: every given field must match; lists element by element and of the same
  // length; a mapping {$regex: "..."} matches a string by regex search.
  std::optional<nlohmann::json> object;
  std::vector<std::string> absent;  // JSON pointers that must not exist in the final object
  std::optional<std::vector<CallExpectation>> calls;
  ListMatch calls_match = ListMatch::kExact;  // kSubset: the given calls, in order, among others
  std::map<std::string, int> call_counts;     // webhook name -> call records
  // Admission annotations (every level); values compared as JSON when both parse as JSON.
  std::optional<std::map<std::string, std::string>> annotations;
  ListMatch annotations_match = ListMatch::kExact;
  std::optional<std::vector<std::string>> warnings;  // exact, in order
  std::vector<MetricExpectation> metrics;
  std::map<std::string, StubExpectation> stubs;  // endpoint name -> expectation
  std::optional<bool> reinvoked;                 // a reinvocation round happened
  std::optional<AuditEventExpectation> audit_event;

  [[nodiscard]] bool empty() const;
};

// --- requests ---

struct RequestSpec {
  // CREATE UPDATE DELETE CONNECT, or the step kinds PATCH and APPLY: an HTTP PATCH as kubectl
  // sends it (patchRequest), admitted as kube-apiserver's patch handler admits it (UPDATE, or
  // CREATE for an apply that creates).
  std::string operation = "CREATE";
  std::optional<nlohmann::json> object;  // the body (DELETE, PATCH: only names the target;
                                         // APPLY: the applied configuration)
  core::GroupVersionResource resource;   // resolved at load time
  std::string subresource;
  std::string namespace_name;
  std::string name;
  bool dry_run = false;
  std::optional<std::chrono::milliseconds> timeout;  // the client's ?timeout=
  std::optional<core::UserInfo> user_info;           // default: defaultAdminUser()
  std::optional<nlohmann::json> old_object;          // default: the stored object
  std::optional<nlohmann::json> options;             // Create/Update/DeleteOptions
  // PATCH: "json", "merge" or "strategic", and the patch as sent (JSON text).
  std::string patch_type;
  std::string patch;
  // PATCH and APPLY: the query's fieldManager, fieldValidation (Strict, Warn, Ignore) and force.
  std::string field_manager;
  std::string field_validation;
  bool force = false;

  [[nodiscard]] bool isPatch() const { return operation == "PATCH" || operation == "APPLY"; }
};

// The HTTP request of a PATCH or APPLY step, as kubectl sends it (`kubectl patch --type`,
// `kubectl apply --server-side`): both backends send exactly this.
struct PatchHttpRequest {
  std::string path;          // with the query: ?dryRun=All&fieldManager=...&force=true&timeout=
  std::string content_type;  // application/{json-patch+json,merge-patch+json,
                             // strategic-merge-patch+json,apply-patch+yaml}
  std::string body;
};
PatchHttpRequest patchHttpRequest(const RequestSpec& request);
// /api/v1/namespaces/<ns>/<resource>[/<name>[/<subresource>]], /apis/<group>/<version>/...
std::string resourcePath(const core::GroupVersionResource& resource, const std::string& ns,
                         const std::string& name, const std::string& subresource);
// Go's url.QueryEscape.
std::string queryEscape(std::string_view text);
// The text of a Warning header `299 - "text"` (RFC 7234 warn-code, warn-agent, quoted
// warn-text), as k8s.io/apiserver pkg/endpoints/handlers/responsewriters/warning.go writes it.
std::string warningText(const std::string& header);
// A Go duration for ?timeout= ("1m", "250ms").
std::string durationParam(std::chrono::milliseconds duration);

struct Step {
  std::string name;
  SourceLocation location;
  RequestSpec request;
  Expectation expect;
};

// --- endpoints ---

// A Kubernetes Service address routed to an endpoint: "<name>.<namespace>.svc:<port>".
struct ServiceAddress {
  std::string namespace_name;
  std::string name;
  int port = 443;

  [[nodiscard]] std::string hostPort() const;  // "linkerd-proxy-injector.linkerd.svc:443"
  [[nodiscard]] std::string host() const;      // "linkerd-proxy-injector.linkerd.svc"
};

enum class EndpointType { kStub, kInjector, kExternal };
std::string_view toString(EndpointType type);

struct EndpointSpec {
  std::string name;
  SourceLocation location;
  EndpointType type = EndpointType::kStub;
  StubSpec stub;               // kStub (stub_webhook.h)
  InjectorSpec injector;       // kInjector: the real injector binary (injector_process.h)
  ExternalEndpoint external;   // kExternal: a webhook the user runs (endpoint.h)
  std::vector<ServiceAddress> services;
  std::vector<std::string> hosts;  // "host:port"
};

// --- the scenario ---

// An object of the starting state or a webhook configuration, with where it came from.
struct SourcedObject {
  nlohmann::json object;
  SourceLocation location;
};

struct Scenario {
  std::filesystem::path path;  // the file, as given
  std::string name;            // metadata.name
  std::string description;
  double time_scale = 1.0;
  std::chrono::milliseconds request_timeout{60'000};
  std::optional<std::vector<std::string>> plugins;  // nullopt: ChainOptions' default
  std::optional<audit::Policy> audit_policy;
  std::string audit_policy_text;  // the policy as written (YAML or JSON), for a real server
  bool slow = false;              // metadata.labels[kSlowLabel]
  std::optional<std::uint64_t> seed;                // the store's random generator
  bool stop_on_failure = false;
  std::vector<SourcedObject> objects;
  std::vector<SourcedObject> webhook_configurations;  // v1-defaulted and valid
  std::vector<EndpointSpec> endpoints;
  std::vector<Step> steps;

  [[nodiscard]] const EndpointSpec* findEndpoint(std::string_view name) const;
};

// Parses a scenario from text; `path` names it in errors and anchors relative file references.
core::Result<Scenario> parseScenario(std::string_view text, const std::filesystem::path& path);
// Reads and parses a scenario file.
core::Result<Scenario> loadScenario(const std::filesystem::path& path);

// Whether a YAML text's first document is a Scenario (`kind: Scenario`); used to pick scenario
// files out of a folder that also holds the objects they name.
bool looksLikeScenario(std::string_view text);

// The scenario files among `paths`: files as given (whatever their content), folders searched
// recursively for *.yaml / *.yml files that look like scenarios, in path order. A path that does
// not exist is an error.
core::Result<std::vector<std::filesystem::path>> findScenarioFiles(
    const std::vector<std::filesystem::path>& paths);

// The resource for a kind: the built-in table (core::findResourceForKind), else apimachinery's
// UnsafeGuessKindToResource pluralization ("Foo" -> "foos", "Policy" -> "policies").
core::GroupVersionResource resourceForKind(const core::GroupVersionKind& kind);

}  // namespace harness::sim
