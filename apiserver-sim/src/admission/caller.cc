#include "harness/sim/caller.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "harness/core/recent_cache.h"
#include "harness/go/base64.h"
#include "harness/go/strconv.h"
#include "harness/net/client.h"
#include "harness/net/url.h"

namespace harness::sim {
namespace {

using Clock = std::chrono::steady_clock;

// client-go rest/with_retry.go: maxRetries for a rest.Request defaults to 10.
constexpr int kMaxRetries = 10;

// The Status attached to a calling error that is not a StatusError (docs/admission-chain.md §4.4:
// transport errors count as 503 for the metrics).
core::Status transportStatus() { return core::newServiceUnavailable("error calling webhook"); }

CallResult callingError(CallErrorKind kind, std::string reason, core::Status status) {
  CallResult result;
  result.error = kind;
  result.reason = std::move(reason);
  result.status = std::move(status);
  return result;
}

std::int32_t retryAfterSeconds(const net::Headers& headers) {
  auto value = headers.get("Retry-After");
  if (!value) return 0;
  auto parsed = go::parseInt(*value, 10, 32);
  if (!parsed.ok() || *parsed < 0) return 0;
  return static_cast<std::int32_t>(*parsed);
}

// The body of a response as a decoded AdmissionReview, or the calling error (client-go decodes
// 2xx bodies into the response object; a failure is an error, not a StatusError -> 503).
CallResult decodeAnswer(CallResult result, std::string_view body, const std::string& url) {
  auto review = core::decodeAdmissionReview(body);
  if (!review.ok()) {
    result.error = CallErrorKind::kDecode;
    // rest.Result.Into: the decode error is returned as is; the dispatcher prefixes
    // "failed to call webhook: ".
    result.reason = fmt::format("failed to call webhook: {}", review.error().message);
    result.status = transportStatus();
    (void)url;
    return result;
  }
  result.review = std::move(review).value();
  return result;
}

// A simulated wait at the run's pace: `simulated` x `time_scale` of real time.
void pace(std::chrono::nanoseconds simulated, double time_scale) {
  if (simulated.count() <= 0 || !(time_scale > 0)) return;
  std::this_thread::sleep_for(std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double, std::nano>(static_cast<double>(simulated.count()) *
                                               time_scale)));
}

}  // namespace

CallResult deadlineExceeded(const std::string& url, std::chrono::nanoseconds budget) {
  CallResult result = callingError(
      CallErrorKind::kTransport,
      fmt::format("failed to call webhook: Post \"{}\": context deadline exceeded", url),
      transportStatus());
  result.deadline_exceeded = true;
  result.url = url;
  result.attempts = 1;
  result.latency = std::max(budget, std::chrono::nanoseconds(0));
  return result;
}

std::string webhookUrl(const core::WebhookClientConfig& config, std::string_view timeout_param) {
  std::string url;
  if (config.url) {
    url = *config.url;
    // The path becomes the REST client's APIPath, joined to "/" (k8s.io/client-go rest
    // NewRequest, path.Join): a URL without one is requested as "/".
    const auto authority = url.find("://");
    if (authority != std::string::npos && url.find('/', authority + 3) == std::string::npos) {
      url += "/";
    }
  } else if (config.service) {
    // apiserver pkg/util/webhook/client.go: https://<name>.<namespace>.svc:<port><path>, the
    // path joined to "/" as above.
    const auto& service = *config.service;
    const std::string path = service.path.value_or("");
    url = fmt::format("https://{}.{}.svc:{}{}", service.name, service.namespace_name,
                      service.port.value_or(443), path.empty() ? "/" : path);
  }
  if (!timeout_param.empty()) {
    url += url.find('?') == std::string::npos ? "?" : "&";
    url += fmt::format("timeout={}", timeout_param);
  }
  return url;
}

HttpsWebhookCaller::HttpsWebhookCaller() = default;
HttpsWebhookCaller::~HttpsWebhookCaller() = default;

void HttpsWebhookCaller::addRoute(const std::string& host_port, const std::string& connect_to,
                                  DeclaredDelay declared) {
  std::lock_guard lock(mutex_);
  routes_[host_port] = Route{connect_to, std::move(declared)};
}

void HttpsWebhookCaller::clearRoutes() {
  std::lock_guard lock(mutex_);
  routes_.clear();
}

namespace {

// Why a caBundle cannot make a client ("" when it can): checkCaBundle's verdict, kept for the
// process (every call of a webhook checks its bundle, and decoding a certificate costs OpenSSL 3
// about a million instructions).
std::string caBundleProblem(const std::string& ca_bundle) {
  static core::RecentCache<std::string, std::string> problems(64);
  return problems.findOrMake(ca_bundle, [&ca_bundle] {
    auto ca = core::checkCaBundle(ca_bundle);
    return ca.ok() ? std::string() : ca.error().message;
  });
}

}  // namespace

void HttpsWebhookCaller::setAuthentication(
    std::shared_ptr<const WebhookAuthentication> authentication) {
  std::lock_guard lock(mutex_);
  authentication_ = std::move(authentication);
  clients_.clear();
}

std::shared_ptr<net::HttpClient> HttpsWebhookCaller::clientFor(
    const std::string& ca_bundle, const WebhookCredentials* credentials) {
  std::lock_guard lock(mutex_);
  // One client per CA and client certificate, as HookClient caches one per client config.
  std::string key = ca_bundle;
  if (credentials != nullptr) {
    key += '\0' + credentials->client_certificate_pem + '\0' + credentials->client_key_pem;
  }
  auto& client = clients_[key];
  if (!client) {
    net::ClientOptions options;
    options.ca_pem = ca_bundle;
    if (credentials != nullptr) {
      options.client_certificate_pem = credentials->client_certificate_pem;
      options.client_key_pem = credentials->client_key_pem;
    }
    options.threads = 2;
    options.user_agent = "kube-apiserver-admission";
    client = std::make_shared<net::HttpClient>(options);
  }
  return client;
}

CallResult HttpsWebhookCaller::call(const WebhookCall& call) {
  const std::string url = webhookUrl(call.client_config, call.timeout_param);

  // GetRESTClient: a client config that cannot make a client is a calling error with
  // "could not get REST client: ..." (webhook/client.go; the caBundle is parsed here, not when
  // the configuration was created).
  if (!call.client_config.ca_bundle.empty()) {
    if (std::string problem = caBundleProblem(call.client_config.ca_bundle); !problem.empty()) {
      return callingError(CallErrorKind::kClientConfig,
                          fmt::format("could not get REST client: {}", problem),
                          core::newInternalError("error getting REST client"));
    }
  }
  auto parsed = net::parseUrl(url);
  if (!parsed.ok()) {
    return callingError(CallErrorKind::kClientConfig,
                        fmt::format("could not get REST client: {}", parsed.error().message),
                        core::newInternalError("error getting REST client"));
  }
  // A context that is already done fails the request before it is sent (client-go request.go).
  if (call.budget.count() <= 0) return deadlineExceeded(url, call.budget);

  Route route;
  {
    std::lock_guard lock(mutex_);
    auto it = routes_.find(parsed->hostPort());
    if (it != routes_.end()) route = it->second;
  }
  std::shared_ptr<const WebhookAuthentication> authentication;
  {
    std::lock_guard lock(mutex_);
    authentication = authentication_;
  }
  const WebhookCredentials* credentials =
      authentication ? authentication->forCall(call.client_config, call.mutating) : nullptr;
  auto client = clientFor(call.client_config.ca_bundle, credentials);

  CallResult result;
  result.url = url;
  std::chrono::nanoseconds elapsed{0};  // simulated
  for (int attempt = 0;; ++attempt) {
    const std::chrono::nanoseconds left = call.budget - elapsed;
    net::ClientRequest request;
    request.method = "POST";
    request.url = url;
    request.headers.add("Content-Type", "application/json");
    request.headers.add("Accept", "application/json, */*");
    request.body = call.body;
    if (credentials != nullptr) {
      // client-go's transport: a bearer token, else basic authentication (round_trippers.go).
      if (!credentials->bearer_token.empty()) {
        request.headers.add("Authorization", "Bearer " + credentials->bearer_token);
      } else if (!credentials->username.empty() || !credentials->password.empty()) {
        request.headers.add("Authorization",
                            "Basic " + go::base64Encode(credentials->username + ":" +
                                                          credentials->password));
      }
    }
    if (!route.connect_to.empty()) request.connect_to = route.connect_to;
    const auto sent = Clock::now();
    request.deadline = sent + std::chrono::duration_cast<Clock::duration>(
                                  route.declared ? kDeclaredExchangeLimit : left);
    net::ClientResponse response = client->sendSync(std::move(request));
    result.attempts = attempt + 1;
    if (route.declared) {
      const std::chrono::nanoseconds took =
          route.declared(call.request_uid, attempt).value_or(std::chrono::nanoseconds(0));
      if (took >= left) {
        // The answer would have come at or after the deadline: the context ended first.
        pace(left, call.time_scale);
        CallResult timed_out = deadlineExceeded(url, call.budget);
        timed_out.attempts = result.attempts;
        return timed_out;
      }
      pace(took, call.time_scale);
      elapsed += took;
    } else if (response.error == net::ClientErrorKind::kTimeout) {
      elapsed = call.budget;
    } else {
      elapsed += std::min<std::chrono::nanoseconds>(Clock::now() - sent, left);
    }
    if (!response.ok()) {
      result.error = CallErrorKind::kTransport;
      result.deadline_exceeded = response.error == net::ClientErrorKind::kTimeout;
      result.reason = fmt::format("failed to call webhook: {}", response.error_message);
      result.status = transportStatus();
      break;
    }
    result.http_status = response.status;
    result.response_body = response.body;
    if (response.status >= 200 && response.status < 300) {
      result = decodeAnswer(std::move(result), response.body, url);
      break;
    }
    const std::int32_t retry_after = retryAfterSeconds(response.headers);
    const bool retriable = (response.status == 429 || response.status >= 500) &&
                           response.headers.get("Retry-After").has_value();
    if (retriable && attempt < kMaxRetries) {
      // client-go with_retry.go: wait Retry-After seconds unless the context ends first.
      const std::chrono::nanoseconds wait = std::chrono::seconds(retry_after);
      if (elapsed + wait < call.budget) {
        pace(wait, call.time_scale);
        elapsed += wait;
        continue;
      }
    }
    const auto content_type = response.headers.get("Content-Type").value_or("");
    core::Status status =
        core::statusFromErrorResponse(response.status, content_type, response.body, retry_after);
    result.error = CallErrorKind::kHttpStatus;
    result.reason = fmt::format("failed to call webhook: {}", status.message);
    result.status = std::move(status);
    break;
  }
  result.latency = elapsed;
  return result;
}

void InProcessWebhookCaller::handle(const std::string& url_prefix, Handler handler,
                                    std::chrono::nanoseconds latency) {
  std::lock_guard lock(mutex_);
  handlers_[url_prefix] = Entry{std::move(handler), latency};
}

CallResult InProcessWebhookCaller::call(const WebhookCall& call) {
  const std::string url = webhookUrl(call.client_config, call.timeout_param);
  if (call.budget.count() <= 0) return deadlineExceeded(url, call.budget);
  Entry entry;
  {
    std::lock_guard lock(mutex_);
    std::size_t best = 0;
    for (const auto& [prefix, candidate] : handlers_) {
      if (url.rfind(prefix, 0) == 0 && prefix.size() >= best) {
        best = prefix.size();
        entry = candidate;
      }
    }
  }
  CallResult result;
  result.url = url;
  result.attempts = 1;
  if (!entry.handler) {
    result = callingError(CallErrorKind::kTransport,
                          fmt::format("failed to call webhook: Post \"{}\": dial tcp: connect: "
                                      "connection refused",
                                      url),
                          transportStatus());
    result.url = url;
    result.attempts = 1;
    return result;
  }
  auto request = core::decodeAdmissionReview(call.body);
  std::optional<core::AdmissionReview> answer;
  if (request.ok()) answer = entry.handler(*request);
  // The handler's declared latency, not its running time, is what the answer took.
  if (entry.latency >= call.budget) return deadlineExceeded(url, call.budget);
  result.latency = entry.latency;
  if (!answer) {
    const auto latency = result.latency;
    result = callingError(CallErrorKind::kTransport,
                          fmt::format("failed to call webhook: Post \"{}\": EOF", url),
                          transportStatus());
    result.url = url;
    result.attempts = 1;
    result.latency = latency;
    return result;
  }
  result.http_status = 200;
  result.review = std::move(*answer);
  return result;
}

}  // namespace harness::sim
