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

namespace harness::net {
class HttpClient;
}

namespace harness::sim {

// One HTTP exchange with a webhook.
struct WebhookCall {
  std::string webhook_name;
  core::WebhookClientConfig client_config;
  std::string body;           // the encoded AdmissionReview request
  std::string timeout_param;  // Go duration sent as ?timeout= ("10s")
  std::chrono::steady_clock::time_point deadline;
  // Time scale of the run (k8s-admission-chain.md §4.3 with every duration multiplied): used to
  // scale Retry-After waits.
  double time_scale = 1.0;
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
  std::chrono::nanoseconds latency{0};

  [[nodiscard]] bool ok() const { return error == CallErrorKind::kNone; }
};

class WebhookCaller {
 public:
  virtual ~WebhookCaller() = default;
  // Never throws; returns by `call.deadline`.
  virtual CallResult call(const WebhookCall& call) = 0;
};

// The URL for a client config: `url` as configured, or https://<name>.<namespace>.svc:<port><path>
// (port 443 when unset; apiserver pkg/util/webhook/client.go). The timeout parameter is appended
// as the apiserver does ("?timeout=10s", or "&timeout=" when the URL has a query).
std::string webhookUrl(const core::WebhookClientConfig& config, std::string_view timeout_param);

// Calls webhooks over HTTPS with harness::net::HttpClient: one keep-alive client per caBundle,
// Go-worded transport errors, client-go's handling of non-2xx answers (a Status body is used
// as-is, else NewGenericServerResponse), and its Retry-After retries (429 or >= 500 with a
// Retry-After header: up to 10 retries within the deadline).
class HttpsWebhookCaller : public WebhookCaller {
 public:
  HttpsWebhookCaller();
  ~HttpsWebhookCaller() override;

  // Service references and URLs resolve through this table first: "<host>:<port>" (e.g.
  // "linkerd-proxy-injector.linkerd.svc:443") -> "127.0.0.1:40123". Unlisted hosts are dialled
  // as named.
  void addRoute(const std::string& host_port, const std::string& connect_to);
  void clearRoutes();

  CallResult call(const WebhookCall& call) override;

 private:
  std::shared_ptr<net::HttpClient> clientFor(const std::string& ca_bundle);
  // Why a caBundle cannot make a client ("" when it can), parsed once per distinct bundle.
  std::string caBundleProblem(const std::string& ca_bundle);

  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<net::HttpClient>> clients_;
  std::map<std::string, std::string> ca_problems_;
  std::map<std::string, std::string> routes_;
};

// Answers calls in-process: a handler per URL prefix (test doubles, and fast benchmarks of the
// chain without TLS). An unknown URL is a transport error like a refused connection.
class InProcessWebhookCaller : public WebhookCaller {
 public:
  // The handler gets the decoded request review and returns the response review, or nullopt to
  // simulate a transport error.
  using Handler =
      std::function<std::optional<core::AdmissionReview>(const core::AdmissionReview& request)>;
  void handle(const std::string& url_prefix, Handler handler);
  CallResult call(const WebhookCall& call) override;

 private:
  std::mutex mutex_;
  std::map<std::string, Handler> handlers_;
};

}  // namespace harness::sim
