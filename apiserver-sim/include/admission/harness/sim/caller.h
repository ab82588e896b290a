#pragma once

// Calling one webhook: the part of the dispatchers that talks to the network
// (mutating/dispatcher.go callAttrMutatingHook, validating/dispatcher.go callHook up to the
// decoded response; client-go rest.Request.Do for the HTTP exchange). Like Envoy's ext_authz
// client, the caller is an interface: an HTTPS implementation over harness::net for real
// webhooks, and an in-process one for unit tests. Its result keeps "could not ask" (a calling
// error, subject to failurePolicy) apart from "got an answer" (verified by the dispatcher).

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "harness/core/admission_review.h"
#include "harness/core/status.h"
#include "harness/core/webhook_config.h"
#include "harness/sim/webhook_authentication.h"

namespace harness::net {
class HttpClient;
}

namespace harness::sim {

// One HTTP exchange with a webhook, timed on the request's simulated clock
// (docs/admission-chain.md §4.3, with time counted as the simulator defines it in
// scenarios/FORMAT.md "Time"): the call may take `budget`, the time left of min(timeoutSeconds,
// the request's deadline), exactly as kube-apiserver's context would allow it.
struct WebhookCall {
  std::string webhook_name;
  core::WebhookClientConfig client_config;
  std::string body;           // the encoded AdmissionReview request
  std::string request_uid;    // its request.uid (identifies the exchange to declared endpoints)
  std::string timeout_param;  // Go duration sent as ?timeout= ("10s")
  // Simulated time the call may take; <= 0: none left (the call fails at once).
  std::chrono::nanoseconds budget{0};
  // Real seconds slept per simulated second of the waits that are simulated (a declared
  // endpoint's delay, Retry-After): only the pace of a run, never its outcome.
  double time_scale = 1.0;
  // Called by the MutatingAdmissionWebhook plugin (else ValidatingAdmissionWebhook): each has its
  // own kubeconfig of credentials (webhook_authentication.h).
  bool mutating = true;
};

enum class CallErrorKind {
  kNone,
  kClientConfig,  // could not build a client (bad caBundle, bad URL): "could not get REST client: ..."
  kTransport,     // dial, TLS, timeout, broken connection: "failed to call webhook: Post ...: ..."
  kHttpStatus,    // non-2xx answer: "failed to call webhook: <StatusError text>"
  kDecode,        // 2xx answer whose body is not an AdmissionReview
};

struct CallResult {
  CallErrorKind error = CallErrorKind::kNone;
  // The response review when error == kNone (not yet verified).
  core::AdmissionReview review;
  // For errors: the full reason text of ErrCallingWebhook (e.g. `failed to call webhook: Post
  // "https://127.0.0.1:8443/?timeout=10s": context deadline exceeded`) and its Status (the
  // StatusError from a non-2xx answer, or 503 ServiceUnavailable "error calling webhook"; its code
  // feeds the metrics).
  std::string reason;
  core::Status status;
  bool deadline_exceeded = false;
  int http_status = 0;  // 0 when no HTTP answer was read
  std::string url;      // the URL called, with ?timeout=
  std::string response_body;
  int attempts = 0;     // > 1 when Retry-After retries happened
  // How long the call took on the simulated clock: the declared delays of a declared endpoint's
  // answers, the measured time of any other endpoint, plus Retry-After waits; the whole budget when
  // the deadline passed.
  std::chrono::nanoseconds latency{0};

  [[nodiscard]] bool ok() const { return error == CallErrorKind::kNone; }
};

class WebhookCaller {
 public:
  virtual ~WebhookCaller() = default;
  // Never throws; `result.latency` <= `call.budget`.
  virtual CallResult call(const WebhookCall& call) = 0;
};

// The `context deadline exceeded` calling error of a call whose budget ran out (client-go wraps
// the context's error in a url.Error: `Post "<url>": context deadline exceeded`).
CallResult deadlineExceeded(const std::string& url, std::chrono::nanoseconds budget);

// The URL for a client config: `url` as configured, or https://<name>.<namespace>.svc:<port><path>
// (port 443 when unset; apiserver pkg/util/webhook/client.go). The timeout parameter is appended
// as the apiserver does ("?timeout=10s", or "&timeout=" when the URL has a query).
std::string webhookUrl(const core::WebhookClientConfig& config, std::string_view timeout_param);

// Calls webhooks over HTTPS with harness::net::HttpClient: one keep-alive client per caBundle,
// Go-worded transport errors, client-go's handling of non-2xx answers (a Status body is used
// as-is, else NewGenericServerResponse), and its Retry-After retries (429 or >= 500 with a
// Retry-After header: up to 10 retries within the deadline).
//
// Two kinds of endpoint. A *declared* endpoint (a stub webhook) tells how long each answer took:
// the call is charged exactly that declared delay, the deadline comparison is exact (a delay >=
// the budget is `context deadline exceeded`), and the real exchange, however slow the machine,
// counts for nothing; it is bounded only by kDeclaredExchangeLimit, a guard against a hung
// endpoint. Any other endpoint (the injector, an external webhook) is real: the exchange gets the
// budget as its real deadline and is charged its measured time, as kube-apiserver would.
class HttpsWebhookCaller : public WebhookCaller {
 public:
  // The declared delay of the answer a declared endpoint gave to the `attempt`-th (0-based) HTTP
  // request of the call whose review uid is `uid`; nullopt when that request never reached it
  // (a failed TLS handshake, a refused connection).
  using DeclaredDelay =
      std::function<std::optional<std::chrono::nanoseconds>(const std::string& uid, int attempt)>;
  static constexpr std::chrono::seconds kDeclaredExchangeLimit{60};

  HttpsWebhookCaller();
  ~HttpsWebhookCaller() override;

  // Service references and URLs resolve through this table first: "<host>:<port>" (e.g.
  // "linkerd-proxy-injector.linkerd.svc:443") -> "127.0.0.1:40123". Unlisted hosts are dialled
  // as named. With `declared`, the endpoint there is a declared one.
  void addRoute(const std::string& host_port, const std::string& connect_to,
                DeclaredDelay declared = {});
  void clearRoutes();

  // The client certificates, tokens or basic authentication presented to webhooks, chosen per
  // webhook host as kube-apiserver chooses them (--admission-control-config-file); none: every
  // call is anonymous.
  void setAuthentication(std::shared_ptr<const WebhookAuthentication> authentication);

  CallResult call(const WebhookCall& call) override;

 private:
  std::shared_ptr<net::HttpClient> clientFor(const std::string& ca_bundle,
                                             const WebhookCredentials* credentials);
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<net::HttpClient>> clients_;
  struct Route {
    std::string connect_to;
    DeclaredDelay declared;
  };
  std::map<std::string, Route> routes_;
  std::shared_ptr<const WebhookAuthentication> authentication_;
};

// Answers calls in-process: a handler per URL prefix (test doubles, and fast benchmarks of the
// chain without TLS). An unknown URL is a transport error like a refused connection. Handlers are
// declared endpoints: each answer takes the handler's declared latency on the simulated clock
// (>= the budget: `context deadline exceeded`), whatever the handler's real running time.
class InProcessWebhookCaller : public WebhookCaller {
 public:
  // The handler gets the decoded request review and returns the response review, or nullopt to
  // simulate a transport error.
  using Handler =
      std::function<std::optional<core::AdmissionReview>(const core::AdmissionReview& request)>;
  void handle(const std::string& url_prefix, Handler handler,
              std::chrono::nanoseconds latency = std::chrono::nanoseconds(0));
  CallResult call(const WebhookCall& call) override;

 private:
  struct Entry {
    Handler handler;
    std::chrono::nanoseconds latency{0};
  };
  std::mutex mutex_;
  std::map<std::string, Entry> handlers_;
};

}  // namespace harness::sim
