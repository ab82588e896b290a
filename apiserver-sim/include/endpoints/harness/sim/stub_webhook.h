#pragma once

// Scripted stub webhooks over real HTTPS: a scenario lists rules ("when the call looks like
// this, answer like that") and the stub produces every answer kube-apiserver has to classify
// (docs/admission-chain.md §4.2, §4.4, §4.5): allowed/denied reviews with any Status, patches with
// any patchType, bad uids and versions, a missing response, raw HTTP answers, slow answers, hung
// up connections, and certificates that fail verification.
//
// Scenario format (YAML converted to JSON with core/yaml.h, then parseStubSpec):
//
//   tls: valid            # valid | untrusted (self-signed) | wrong-host (SAN mismatch)
//   responses:            # the first rule whose `when` matches answers; none: allowed: true
//     - when:             # every condition present must hold
//         operation: CREATE          # request.operation
//         dryRun: true               # request.dryRun (absent = false)
//         subResource: status        # request.subResource (absent = "")
//         kind: Pod                  # request.kind.kind
//         namespace: apps            # request.namespace (absent = "")
//         name: web                  # request.name (absent = "")
//         call: 2                    # n-th call received by this stub (1-based), or [2, 3]
//         path: /mutate              # HTTP request path
//         pointers:                  # RFC 6901 pointer into the received review -> value;
//           /request/object/metadata/labels/app: web   # null: absent (or null)
//       respond: <behaviour>         # or `sequence: [<behaviour>, ...]`: successive calls
//                                    # that reach this rule; the last one repeats
//
// Behaviour (every field optional; {} allows):
//   allowed: false
//   status: {code: 403, message: "no", reason: Forbidden}   # a metav1.Status, passed through
//   patch: [{op: add, path: /metadata/labels/x, value: y}]   # sent base64, patchType JSONPatch
//   rawPatch: "[{"                 # these bytes as the patch instead (base64-encoded here)
//   mutator: append-sidecar        # the patch an example mutator computes from the request's
//                                  # object instead (mutators.h; not with patch or rawPatch)
//   patchType: JSONPatch           # override; null: omitted; "": the empty string
//   warnings: ["w1"]
//   auditAnnotations: {key: value}
//   delay: 2s                      # Go duration: how long the answer takes (see StubCall::delay)
//   uid: other                     # response.uid instead of the request's
//   apiVersion: admission.k8s.io/v1beta1   # the review's apiVersion / kind instead of the
//   kind: Foo                              # request's apiVersion and "AdmissionReview"
//   omitResponse: true             # a review without `response`
//   http: {status: 500, body: boom, contentType: text/plain, headers: {Retry-After: "1"}}
//                                  # this raw HTTP answer instead of a review (only `delay` may
//                                  # accompany it)
//   close: true                    # close the connection without answering (only `delay`)
//
// A request body that is not JSON is still answered (pointers then never match); the review in
// that answer carries apiVersion admission.k8s.io/v1 and an empty uid unless overridden.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/net/certificates.h"
#include "harness/net/http.h"
#include "harness/net/server.h"
#include "harness/sim/mutators.h"

namespace harness::sim {

// The certificate a stub serves.
enum class StubTls {
  kValid,      // issued by the scenario CA for 127.0.0.1, localhost and the extra DNS names
  kUntrusted,  // self-signed with the same names: "x509: certificate signed by unknown authority"
  kWrongHost,  // issued by the CA for kWrongHostDnsName and kWrongHostIp only:
               // "x509: certificate is valid for <those>, not <host>"
};
inline constexpr std::string_view kWrongHostDnsName = "wrong-host.invalid";
inline constexpr std::string_view kWrongHostIp = "192.0.2.1";  // TEST-NET-1 (RFC 5737)

// A raw HTTP answer instead of an AdmissionReview.
struct StubHttpAnswer {
  int status = 200;
  std::string body;
  // nullopt: the server's default ("text/plain; charset=utf-8" when the body is not empty);
  // "": a Content-Type header with an empty value.
  std::optional<std::string> content_type;
  std::vector<std::pair<std::string, std::string>> headers;
};

struct StubBehaviour {
  bool allowed = true;
  std::optional<nlohmann::json> status;  // response.status as given (a JSON object)
  // The patch bytes (from `patch`, compact JSON, or `rawPatch` as given); nullopt: no patch.
  std::optional<std::string> patch;
  // response.patchType: not overridden -> "JSONPatch" when there is a patch, else absent;
  // overridden with nullopt (YAML null) -> absent; overridden with a string -> that string.
  // An example mutator computing the patch from request.object (mutators.h); its empty patch
  // is sent as no patch.
  std::optional<Mutator> mutator;
  bool patch_type_overridden = false;
  std::optional<std::string> patch_type;
  std::vector<std::string> warnings;
  std::map<std::string, std::string> audit_annotations;
  std::chrono::nanoseconds delay{0};  // before time scaling
  std::optional<std::string> uid;
  std::optional<std::string> api_version;
  std::optional<std::string> kind;
  bool omit_response = false;
  std::optional<StubHttpAnswer> http;
  bool close = false;
};

struct StubCondition {
  std::optional<std::string> operation;
  std::optional<bool> dry_run;
  std::optional<std::string> sub_resource;
  std::optional<std::string> kind;
  std::optional<std::string> namespace_name;
  std::optional<std::string> name;
  std::vector<std::size_t> calls;  // empty: any call
  std::optional<std::string> path;
  // (pointer text, expected value); a null value means "absent or null".
  std::vector<std::pair<std::string, nlohmann::json>> pointers;
};

struct StubRule {
  StubCondition when;
  std::vector<StubBehaviour> sequence;  // `respond: b` is a sequence of one; never empty
  bool is_sequence = false;             // written as `sequence:` (for call descriptions)
};

struct StubSpec {
  StubTls tls = StubTls::kValid;
  std::vector<StubRule> responses;
};

// Parses a stub definition ({tls, responses}). Unknown fields are errors. Every error names the
// field path below `path`, e.g. `stub.responses[1].respond.delay: invalid duration "2 seconds"`.
core::Result<StubSpec> parseStubSpec(const nlohmann::json& json, std::string_view path = "stub");

// One request the stub received.
struct StubCall {
  std::size_t number = 0;  // 1-based, in the order received
  std::string path, query, timeout_param;  // timeout_param: the `timeout` query parameter
  nlohmann::json review;   // the request body as JSON; null when it is not JSON
  std::string body;        // the request body as received
  // Which rule answered: "responses[0]", "responses[1].sequence[2]", or
  // "default (no rule matched)".
  std::string rule_description;
  std::chrono::steady_clock::time_point received;
  std::string uid;  // the review's request.uid ("" when absent)
  // The declared delay of the answer (the behaviour's `delay`, unscaled): the simulated time the
  // answer takes. The stub itself sleeps delay x its time scale (0: not at all) before answering.
  std::chrono::nanoseconds delay{0};
};

class StubWebhook {
 public:
  // Starts an HTTPS server on 127.0.0.1:0 whose certificate (per spec.tls) has the SANs
  // 127.0.0.1, localhost and `extra_dns_names` (service names like "svc.ns.svc"); the
  // certificate files go under `scratch_dir`/<name>/. `time_scale` (>= 0) multiplies the delays
  // the stub really sleeps; 0 when a caller charges the declared delays (declaredDelay) instead.
  static core::Result<std::unique_ptr<StubWebhook>> start(
      std::string name, StubSpec spec, const net::CertificateAuthority& ca,
      const std::filesystem::path& scratch_dir, std::vector<std::string> extra_dns_names,
      double time_scale = 1.0);

  // Makes, and keeps for the process, what start() makes for a stub of this TLS kind and these
  // names at most once (its certificate and its server's TLS context: several million
  // instructions of OpenSSL), so that a later start() finds them made. A run prepares the
  // stubs of the scenarios to come on another thread while one plays.
  static void prepare(StubTls tls, const net::CertificateAuthority& ca,
                      std::vector<std::string> extra_dns_names);

  ~StubWebhook();
  StubWebhook(const StubWebhook&) = delete;
  StubWebhook& operator=(const StubWebhook&) = delete;

  [[nodiscard]] const std::string& name() const { return name_; }
  // https://127.0.0.1:<port>/ (every path is served).
  [[nodiscard]] std::string url() const;
  [[nodiscard]] std::uint16_t port() const;
  // Thread-safe snapshot of the calls so far, in the order received.
  [[nodiscard]] std::vector<StubCall> calls() const;
  // How many calls were received so far, and the calls after the first `since` (a step's own):
  // what a runner reads after every step, without copying every earlier call's review and body
  // again (which made long scenarios quadratic in their calls).
  [[nodiscard]] std::size_t callCount() const;
  [[nodiscard]] std::vector<StubCall> callsSince(std::size_t since) const;
  // The declared delay of the answer to the `attempt`-th (0-based) request received with review
  // uid `uid`; nullopt when there is no such request.
  [[nodiscard]] std::optional<std::chrono::nanoseconds> declaredDelay(std::string_view uid,
                                                                      int attempt) const;
  // Forgets the calls and starts over: call numbers and sequence positions restart at 1.
  void resetCalls();
  // Requests that are the harness's own rather than the scenario's (the kube backend's informer
  // sync, a dry-run request the scenario's catch-all webhooks are called for too): `filter`
  // receives the review (null when the body is not JSON); those it accepts are answered allowed
  // at once, without a patch, and are neither recorded nor counted, so calls(), call numbers and
  // sequence positions stay those of the scenario's requests. Thread-safe.
  void setHarnessRequestFilter(std::function<bool(const nlohmann::json& review)> filter);
  // How many requests the filter took.
  [[nodiscard]] std::size_t harnessRequests() const;
  // Stops serving (the port refuses connections afterwards). Idempotent; the destructor stops.
  void stop();

  // The answer to one request with its faults (delay, hang-up) for the server (exposed for unit
  // tests of the rules without a socket).
  net::Reply answer(const net::Request& request);

 private:
  StubWebhook(std::string name, StubSpec spec, double time_scale);

  std::string name_;
  StubSpec spec_;
  double time_scale_;
  std::unique_ptr<net::Server> server_;

  mutable std::mutex mutex_;
  std::vector<StubCall> calls_;
  std::vector<std::size_t> rule_hits_;  // per rule: calls it answered (sequence position)
  std::function<bool(const nlohmann::json&)> harness_filter_;
  std::size_t harness_requests_ = 0;
};

}  // namespace harness::sim
