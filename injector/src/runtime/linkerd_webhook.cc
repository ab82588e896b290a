#include "linkerd_webhook.h"

#include <chrono>

#include <spdlog/spdlog.h>

#include "harness/core/admission_review.h"
#include "logging.h"
#include "harness/core/object.h"
#include "harness/core/yaml.h"

namespace harness::injector {

namespace {

constexpr char kRequestsHelp[] = "A counter for number of admission requests to proxy injector.";
constexpr char kResponsesHelp[] =
    "A counter for number of admission responses from proxy injector.";


void count(core::MetricsRegistry& metrics, const char* name, const char* help,
           const linkerd::MetricLabels& labels) {
  std::vector<std::string> names, values;
  for (const auto& [k, v] : labels) {
    names.push_back(k);
    values.push_back(v);
  }
  metrics.counter(name, help, names).add(values);
}

net::Response jsonResponse(const nlohmann::json& body) {
  return net::Response::json(200, body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace

core::Result<linkerd::Values> parseLinkerdValuesText(const std::string& text,
                                                     const std::string& where) {
  auto doc = core::parseYaml(text);
  if (!doc) return doc.error().within(where);
  nlohmann::json values = std::move(*doc);
  if (values.is_object() && values.value("kind", "") == "ConfigMap") {
    const auto data = values.find("data");
    if (data == values.end() || !data->is_object() || !data->contains("values") ||
        !(*data)["values"].is_string()) {
      return core::makeError(where + ": data.values: the linkerd-config ConfigMap has no values");
    }
    auto inner = core::parseYaml((*data)["values"].get<std::string>());
    if (!inner) return inner.error().within(where + ": data.values");
    values = std::move(*inner);
  }
  if (values.is_null()) values = nlohmann::json::object();
  auto parsed = linkerd::parseValues(values);
  if (!parsed) return parsed.error().within(where);
  return parsed;
}

LinkerdWebhook::LinkerdWebhook(LinkerdWebhookConfig config, KubeApi& kube, EventSink& events,
                               core::MetricsRegistry& metrics)
    : config_(std::move(config)),
      kube_(kube),
      events_(events),
      metrics_(metrics),
      values_file_(config_.values_file),
      trust_file_(config_.trust_anchors_file) {}

core::Result<std::shared_ptr<const linkerd::Values>> LinkerdWebhook::values() {
  // Linkerd re-reads the values on every request; parsing is skipped while the text is the same.
  auto text = values_file_.read();
  if (!text) return text.error();
  std::lock_guard lock(values_mutex_);
  if (values_ && *text == values_text_) return values_;
  auto parsed = parseLinkerdValuesText(*text, config_.values_file.string());
  if (!parsed) return parsed.error();
  values_ = std::make_shared<const linkerd::Values>(std::move(*parsed));
  values_text_ = *text;
  return values_;
}

core::Result<void> LinkerdWebhook::checkConfig() {
  if (auto v = values(); !v) return v.error();
  if (auto t = trust_file_.read(); !t) return t.error();
  return {};
}

net::Response LinkerdWebhook::handle(const net::Request& request) {
  const auto started = std::chrono::steady_clock::now();
  if (request.body.empty()) {
    spdlog::warn("received empty payload");
    return net::Response{};  // 200 with an empty body, as server.go does
  }
  auto raw = nlohmann::json::parse(request.body, nullptr, false);
  auto review = core::decodeAdmissionReview(request.body);
  if (raw.is_discarded() || !raw.is_object() || !review) {
    const std::string why = review ? "the review is not a JSON object" : review.error().message;
    spdlog::error("failed to decode admission review request: {}", why);
    return net::Response::text(400, "failed to decode admission review request: " + why);
  }
  if (!review->request || review->request->uid.empty()) {
    spdlog::error("invalid admission review request");
    return net::Response::text(400, "invalid admission review request");
  }
  const auto& req = *review->request;
  spdlog::info("received admission review request \"{}\"", req.uid);

  core::AdmissionResponse response;
  response.uid = req.uid;
  std::string decision = "error";

  auto fail = [&](const std::string& message, bool log = true) {
    if (log) spdlog::error("failed to run webhook handler. Reason: {}", message);
    response.allowed = false;
    core::Status status;
    status.message = message;
    response.status = status;
  };

  auto vals = values();
  auto trust = trust_file_.read();
  if (!vals) {
    fail(vals.error().message);
  } else if (!trust) {
    fail(trust.error().message);
  } else {
    linkerd::AdmissionInput input;
    input.object = req.object.value_or(nlohmann::json(nullptr));
    input.request_kind = req.kind.kind;
    input.request_namespace = req.namespace_name;
    input.trust_anchors_pem = *trust;
    input.linkerd_namespace = config_.linkerd_namespace;
    input.injector_version = config_.version;
    bool namespace_error = false;
    auto ns = kube_.get({"v1", "Namespace", "", req.namespace_name});
    if (!ns) {
      fail(ns.error().message);
      namespace_error = true;
    } else {
      input.namespace_object = *ns;
    }
    if (!namespace_error) {
      input.owner_lookup = [this](std::string_view kind, std::string_view ns_name,
                                  std::string_view name) -> std::optional<nlohmann::json> {
        auto found = kube_.get({"", std::string(kind), std::string(ns_name), std::string(name)});
        if (!found) {
          spdlog::warn("couldn't retrieve parent object {}-{}-{}; error: {}", ns_name, kind, name,
                       found.error().message);
          return std::nullopt;
        }
        return *found;
      };
      auto outcome = linkerd::admit(**vals, input);
      for (const auto& line : outcome.logs) emit(line);
      if (outcome.request_metric) {
        count(metrics_, "proxy_inject_admission_requests_total", kRequestsHelp,
              *outcome.request_metric);
      }
      if (outcome.response_metric) {
        count(metrics_, "proxy_inject_admission_responses_total", kResponsesHelp,
              *outcome.response_metric);
      }
      for (const auto& event : outcome.events) {
        events_.post({event.type, event.reason, event.message, event.involved_object,
                      linkerd::kEventSourceComponent});
      }
      decision = std::string(linkerd::decisionName(outcome.decision));
      switch (outcome.decision) {
        case linkerd::Decision::kHandlerError:
          fail(outcome.error_message, /*log=*/false);  // already among outcome.logs
          break;
        case linkerd::Decision::kInject:
        case linkerd::Decision::kAnnotationPatch:
          response.allowed = true;
          response.patch_type = std::string(core::kPatchTypeJsonPatch);
          response.patch = outcome.patch.dump();
          break;
        case linkerd::Decision::kAllow:
          response.allowed = true;
          break;
      }
    }
  }

  // The decoded review goes back with the response set (request echoed, as server.go does).
  raw["response"] = core::toJson(response);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  metrics_
      .histogram("injector_admission_duration_seconds",
                 "Time to handle one admission review, by profile and decision.",
                 {"profile", "decision"}, core::defaultBuckets())
      .observe({"linkerd", decision}, seconds);
  return jsonResponse(raw);
}

}  // namespace harness::injector
