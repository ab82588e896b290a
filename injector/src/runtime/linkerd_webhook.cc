#include "linkerd_webhook.h"

#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "harness/core/admission_review.h"
#include "harness/core/json.h"
#include "harness/core/utf8.h"
#include "logging.h"
#include "harness/core/object.h"
#include "harness/core/yaml.h"
#include "harness/injector/linkerd/values_text.h"

namespace harness::injector {

namespace {

constexpr char kRequestsHelp[] = "A counter for number of admission requests to proxy injector.";
constexpr char kResponsesHelp[] =
    "A counter for number of admission responses from proxy injector.";

// Adds one to the series of `labels` (a fixed set of label names) in the family `name`,
// registered into `family` on first use.
void count(core::FamilySlot<core::CounterFamily>& family, core::MetricsRegistry& metrics,
           const char* name, const char* help, const linkerd::MetricLabels& labels) {
  core::CounterFamily& counter = family.get([&]() -> core::CounterFamily& {
    std::vector<std::string> names;
    names.reserve(labels.size());
    for (const auto& entry : labels) names.emplace_back(entry.first);
    return metrics.counter(name, help, std::move(names));
  });
  std::vector<std::string> values;
  values.reserve(labels.size());
  for (const auto& entry : labels) values.push_back(entry.second);
  counter.add(values);
}

// server.go processReq: a handler error is answered, not failed: allowed=false with the error
// as result.message (the API server then rejects the object whatever the failurePolicy).
core::AdmissionResponse handlerError(const std::string& uid, const std::string& message) {
  core::AdmissionResponse response;
  response.uid = uid;
  response.allowed = false;
  response.status = core::Status{};
  response.status->message = message;
  return response;
}

// server.go decode reads the body with sigs.k8s.io/yaml.Unmarshal, i.e. as YAML first: go-yaml's
// scanner stops at the 10,001st flow collection (scannerc.go yaml_parser_increase_flow_level,
// max_flow_level = 10000), parser.fail (decode.go) names the line when it is not the first, and
// yaml.go wraps the error. The limit is encoding/json's, so core::parseJson finds the place.
std::string yamlDepthError(std::string_view body, std::size_t offset) {
  const auto line = std::count(body.begin(), body.begin() + static_cast<std::ptrdiff_t>(
                                                                std::min(offset, body.size())),
                               '\n');
  const std::string where = line > 0 ? "line " + std::to_string(line + 1) + ": " : "";
  return "error converting YAML to JSON: yaml: " + where + "exceeded max depth of " +
         std::to_string(core::kMaxJsonDepth);
}

// What Linkerd does with the trust bundle is copy it into the proxy's environment: it is not
// validated (webhook.go Inject: values.IdentityTrustAnchorsPEM = string(caPEM)), and bytes that
// are not UTF-8 become U+FFFD when the values are marshalled. Say so once per file content, so a
// DER file or a Latin-1 comment does not go unnoticed.
void warnAboutTrustAnchors(const std::string& pem, const std::string& path) {
  if (!core::isValidUtf8(pem)) {
    spdlog::warn("{}: the trust anchors are not valid UTF-8; the proxies get each invalid byte as "
                 "U+FFFD, as Linkerd's proxy-injector does",
                 path);
  }
  if (pem.find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    spdlog::warn("{}: the trust anchors hold no PEM certificate; injected proxies will not start",
                 path);
  }
}

// The review's text (a JSON object, `empty` when it has no member) with `"response":` appended
// as its last member: `response` (a JSON object's text) with `patch_base64`, when given, as its
// first member (base64 needs no escaping). The review's own text is kept byte for byte.
std::string echoWithResponse(std::string_view review, bool empty, std::string_view response,
                             const std::string* patch_base64) {
  const std::size_t close = review.find_last_not_of(" \t\r\n");  // its closing brace
  std::string out;
  out.reserve(close + response.size() + (patch_base64 ? patch_base64->size() : 0) + 32);
  out.append(review.substr(0, close));
  if (!empty) out += ',';
  out += "\"response\":";
  if (patch_base64 == nullptr) {
    out += response;
  } else {
    out += R"({"patch":")";
    out += *patch_base64;
    out += '"';
    if (response.size() > 2) out += ',';
    out += response.substr(1);  // the other members and the closing brace
  }
  out += '}';
  return out;
}

}  // namespace

LinkerdWebhook::LinkerdWebhook(LinkerdWebhookConfig config, KubeApi& kube, EventSink& events,
                               core::MetricsRegistry& metrics)
    : config_(std::move(config)),
      kube_(kube),
      events_(events),
      metrics_(metrics),
      values_file_(config_.values_file),
      trust_file_(config_.trust_anchors_file),
      config_state_("linkerd", metrics) {}

core::Result<std::shared_ptr<const LinkerdWebhook::Loaded>> LinkerdWebhook::loaded() {
  // Linkerd re-reads both files on every request (webhook.go Inject); parsing is skipped while
  // their text is the same.
  auto values_text = values_file_.read();
  auto trust_text = trust_file_.read();
  core::Result<std::string> text = !values_text ? values_text.error()
                                   : !trust_text ? trust_text.error()
                                                 : core::Result<std::string>(*values_text + '\0' +
                                                                             *trust_text);
  return config_state_.get(text, [&](const std::string&) -> core::Result<Loaded> {
    auto values = linkerd::parseValuesText(*values_text, config_.values_file.string());
    if (!values) return values.error();
    warnAboutTrustAnchors(*trust_text, config_.trust_anchors_file.string());
    return Loaded{std::move(*values), *trust_text};
  });
}

core::Result<void> LinkerdWebhook::checkConfig() {
  if (auto l = loaded(); !l) return l.error();
  return {};
}

net::Response LinkerdWebhook::handle(const net::Request& request) {
  const auto started = std::chrono::steady_clock::now();
  if (request.body.empty()) {
    spdlog::warn("received empty payload");
    return net::Response{};  // 200 with an empty body, as server.go does
  }
  core::JsonError json_error;
  auto raw = core::parseJson(request.body, &json_error);
  // The review goes back with the response set (server.go). Its text is echoed as it came, the
  // answer written in as its last member; a review that already has a "response" member, or
  // whose text does not start with its brace (a byte order mark, which the fallback parser
  // skips), is echoed from the decoded tree (the member replaced), which then keeps its object.
  const bool echo_text = raw && raw->is_object() && !raw->contains("response") &&
                         request.body[request.body.find_first_not_of(" \t\r\n")] == '{';
  auto review = raw ? (echo_text ? core::admissionReviewFromJson(std::move(*raw))
                                 : core::admissionReviewFromJson(*raw))
                    : core::Result<core::AdmissionReview>(
                          json_error.too_deep
                              ? core::Error{yamlDepthError(request.body, json_error.offset)}
                              : core::Error{"invalid JSON: " + json_error.message});
  if (!review) {
    spdlog::error("failed to decode admission review request: {}", review.error().message);
    return net::Response::text(
        400, "failed to decode admission review request: " + review.error().message);
  }
  if (!review->request || review->request->uid.empty()) {
    spdlog::error("invalid admission review request");
    return net::Response::text(400, "invalid admission review request");
  }
  auto& req = *review->request;
  spdlog::info("received admission review request \"{}\"", req.uid);

  std::string decision = "error";
  core::AdmissionResponse response;
  std::shared_ptr<const std::string> encoded_patch;
  try {
    response = respond(req, decision, encoded_patch);
  } catch (const std::exception& e) {
    // Never an HTTP 500: under failurePolicy Ignore the API server would admit the pod without
    // a proxy. Answer as server.go answers any handler error.
    spdlog::error("failed to run webhook handler. Reason: {}", e.what());
    response = handlerError(req.uid, e.what());
    decision = "error";
    encoded_patch.reset();
  }

  // A cached patch is kept with its base64 text: encoding its 9 kB again for every replica
  // was a tenth of a request's instructions.
  nlohmann::json answer = core::toJson(response);
  std::string body;
  if (echo_text) {
    body = echoWithResponse(request.body, raw->empty(), core::dumpJson(answer),
                            encoded_patch.get());
  } else {
    if (encoded_patch) answer["patch"] = *encoded_patch;
    (*raw)["response"] = std::move(answer);
    body = core::dumpJson(*raw);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  durations_
      .get([this]() -> core::HistogramFamily& {
        return metrics_.histogram("injector_admission_duration_seconds",
                                  "Time to handle one admission review, by profile and decision.",
                                  {"profile", "decision"}, core::defaultBuckets());
      })
      .observe({"linkerd", std::move(decision)}, seconds);
  return net::Response::json(200, std::move(body));
}

core::AdmissionResponse LinkerdWebhook::respond(core::AdmissionRequest& req,
                                                std::string& decision,
                                                std::shared_ptr<const std::string>& encoded_patch) {
  auto fail = [&req](const std::string& message) {
    spdlog::error("failed to run webhook handler. Reason: {}", message);
    return handlerError(req.uid, message);
  };
  auto config = loaded();
  if (!config) return fail(config.error().message);
  linkerd::AdmissionInput input;
  // Moved out: the answer echoes the review from the raw JSON, not from `req`.
  input.object = req.object ? std::move(*req.object) : nlohmann::json(nullptr);
  input.request_kind = req.kind.kind;
  input.request_namespace = req.namespace_name;
  input.trust_anchors_pem = (*config)->trust_anchors_pem;
  input.linkerd_namespace = config_.linkerd_namespace;
  input.injector_version = config_.version;
  // The whole patch as JSON text, for a debug line that is not printed otherwise.
  input.debug_logs = spdlog::should_log(spdlog::level::debug);
  input.patch_cache = (*config)->patches.get();
  auto ns = kube_.get({"v1", "Namespace", "", req.namespace_name});
  if (!ns) return fail(ns.error().message);
  if (*ns) input.namespace_object = **ns;
  input.owner_lookup = [this](std::string_view kind, std::string_view ns_name,
                              std::string_view name) -> std::shared_ptr<const nlohmann::json> {
    auto found = kube_.get({"", std::string(kind), std::string(ns_name), std::string(name)});
    if (!found) {
      spdlog::warn("couldn't retrieve parent object {}-{}-{}; error: {}", ns_name, kind, name,
                   found.error().message);
      return nullptr;
    }
    return *found;
  };
  auto outcome = linkerd::admit((*config)->values, input);
  for (const auto& line : outcome.logs) emit(line);
  if (outcome.request_metric) {
    count(requests_, metrics_, "proxy_inject_admission_requests_total", kRequestsHelp,
          *outcome.request_metric);
  }
  if (outcome.response_metric) {
    count(responses_, metrics_, "proxy_inject_admission_responses_total", kResponsesHelp,
          *outcome.response_metric);
  }
  for (auto& event : outcome.events) {
    events_.post({std::move(event.type), std::move(event.reason), std::move(event.message),
                  std::move(event.involved_object), linkerd::kEventSourceComponent});
  }
  decision = std::string(linkerd::decisionName(outcome.decision));
  core::AdmissionResponse response;
  response.uid = req.uid;
  switch (outcome.decision) {
    case linkerd::Decision::kHandlerError:
      return handlerError(req.uid, outcome.error_message);  // already among outcome.logs
    case linkerd::Decision::kInject:
    case linkerd::Decision::kAnnotationPatch:
      response.allowed = true;
      response.patch_type = std::string(core::kPatchTypeJsonPatch);
      if (outcome.patch_base64) {
        encoded_patch = outcome.patch_base64;
      } else {
        response.patch = outcome.patch_text ? *outcome.patch_text : core::dumpJson(outcome.patch);
      }
      break;
    case linkerd::Decision::kAllow:
      response.allowed = true;
      break;
  }
  return response;
}

}  // namespace harness::injector
