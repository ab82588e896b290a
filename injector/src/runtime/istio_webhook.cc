#include "istio_webhook.h"

#include <algorithm>
#include <cctype>
#include <chrono>

#include <spdlog/spdlog.h>

#include "harness/core/admission_review.h"
#include "logging.h"
#include "harness/injector/istio/injector.h"

namespace harness::injector {

namespace {

constexpr std::size_t kMaxBody = 6 * 1024 * 1024;  // webhook.go: kube.HTTPConfigReader limit

// Go's http.Error: the text plus a newline, as text/plain, with nosniff.
net::Response httpError(int status, const std::string& text) {
  net::Response r = net::Response::text(status, text + "\n");
  r.headers.set("X-Content-Type-Options", "nosniff");
  return r;
}

// "--slash--" stands for "/" in path values.
std::string unescapeSlashes(std::string_view s) {
  constexpr std::string_view kSlash = "--slash--";
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size();) {
    if (s.substr(i, kSlash.size()) == kSlash) {
      out.push_back('/');
      i += kSlash.size();
    } else {
      out.push_back(s[i++]);
    }
  }
  return out;
}

std::string envName(const std::string& key) {
  if (key == "cluster") return "ISTIO_META_CLUSTER_ID";
  if (key == "net") return "ISTIO_META_NETWORK";
  std::string upper = key;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return upper;
}


}  // namespace

std::map<std::string, std::string> parseInjectEnvs(std::string_view path) {
  std::map<std::string, std::string> envs;
  std::string p(path);
  while (!p.empty() && p.back() == '/') p.pop_back();
  const std::string prefix = "/inject";
  if (!p.starts_with(prefix)) return envs;
  std::string rest = p.substr(prefix.size());
  if (rest.starts_with("/")) rest = rest.substr(1);
  if (rest.empty()) return envs;
  if (rest.starts_with(":ENV:")) {
    // Deprecated form: /inject/:ENV:k=v:ENV:k2=v2
    size_t pos = 0;
    while ((pos = rest.find(":ENV:", pos)) != std::string::npos) {
      pos += 5;
      const size_t end = rest.find(":ENV:", pos);
      const std::string pair = rest.substr(pos, end == std::string::npos ? end : end - pos);
      const size_t eq = pair.find('=');
      if (eq != std::string::npos && eq > 0) {
        envs[envName(pair.substr(0, eq))] = unescapeSlashes(pair.substr(eq + 1));
      }
      if (end == std::string::npos) break;
      pos = end;
    }
    return envs;
  }
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= rest.size()) {
    const size_t slash = rest.find('/', start);
    parts.push_back(rest.substr(start, slash == std::string::npos ? std::string::npos
                                                                  : slash - start));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  for (size_t i = 0; i + 1 < parts.size(); i += 2) {
    envs[envName(parts[i])] = unescapeSlashes(parts[i + 1]);
  }
  return envs;
}

core::Result<istio::InjectorSettings> loadIstioSettings(const IstioWebhookConfig& c) {
  WatchedFile config(c.config_file), values(c.values_file), mesh(c.mesh_file);
  auto ct = config.read();
  if (!ct) return ct.error();
  auto vt = values.read();
  if (!vt) return vt.error();
  auto mt = mesh.read();
  if (!mt) return mt.error();
  return istio::loadSettings(*ct, *vt, *mt);
}

IstioWebhook::IstioWebhook(IstioWebhookConfig config, core::MetricsRegistry& metrics)
    : config_(std::move(config)),
      metrics_(metrics),
      config_file_(config_.config_file),
      values_file_(config_.values_file),
      mesh_file_(config_.mesh_file) {}

core::Result<std::shared_ptr<const istio::InjectorSettings>> IstioWebhook::settings() {
  auto ct = config_file_.read();
  if (!ct) return ct.error();
  auto vt = values_file_.read();
  if (!vt) return vt.error();
  auto mt = mesh_file_.read();
  if (!mt) return mt.error();
  const std::string all = *ct + '\0' + *vt + '\0' + *mt;
  std::lock_guard lock(mutex_);
  if (settings_ && all == loaded_text_) return settings_;
  auto loaded = istio::loadSettings(*ct, *vt, *mt);
  if (!loaded) {
    // Like watcher.go: a parse error keeps the previous configuration (and is logged).
    if (settings_) {
      spdlog::error("failed to reload injection config, keeping the previous one: {}",
                    loaded.error().message);
      loaded_text_ = all;
      return settings_;
    }
    return loaded.error();
  }
  settings_ = std::make_shared<const istio::InjectorSettings>(std::move(*loaded));
  loaded_text_ = all;
  return settings_;
}

core::Result<void> IstioWebhook::checkConfig() {
  if (auto s = settings(); !s) return s.error();
  return {};
}

net::Response IstioWebhook::handle(const net::Request& request) {
  const auto started = std::chrono::steady_clock::now();
  auto count = [this](const char* name, const char* help) {
    metrics_.counter(name, help, {}).add({});
  };
  count("sidecar_injection_requests_total", "Total number of injection requests.");
  if (request.body.size() > kMaxBody) {
    return httpError(400, "http: request body too large");
  }
  if (request.body.empty()) {
    spdlog::error("no body found");
    return httpError(400, "no body found");
  }
  const std::string content_type = request.headers.get("Content-Type").value_or("");
  if (content_type != "application/json") {
    spdlog::error("contentType={}, expect application/json", content_type);
    return httpError(415, "invalid Content-Type, want `application/json`");
  }

  core::AdmissionResponse response;
  std::string api_version = std::string(core::apiVersionOf(core::ReviewVersion::kV1));
  std::string kind = "AdmissionReview";
  auto review = core::decodeRequestReview(request.body);
  if (!review) {
    spdlog::error("Could not decode body: {}", review.error().message);
    response.allowed = false;
    response.status = core::Status{};
    response.status->message = review.error().message;
    count("sidecar_injection_failure_total", "Total number of failed injection requests.");
  } else {
    api_version = review->api_version;
    kind = review->kind;
    response.uid = review->request->uid;
    auto settings = this->settings();
    if (!settings) {
      response.allowed = false;
      response.status = core::Status{};
      response.status->message = settings.error().message;
      count("sidecar_injection_failure_total", "Total number of failed injection requests.");
    } else {
      istio::AdmissionInput input;
      input.pod = review->request->object.value_or(nlohmann::json(nullptr));
      input.request_namespace = review->request->namespace_name;
      input.proxy_envs = parseInjectEnvs(request.path);
      input.native_sidecars = config_.native_sidecars;
      auto outcome = istio::admit(**settings, input);
      for (const auto& line : outcome.logs) emit(line);
      switch (outcome.decision) {
        case istio::Decision::kSkip:
          response.allowed = true;
          count("sidecar_injection_skip_total", "Total number of skipped injection requests.");
          break;
        case istio::Decision::kError:
          response.allowed = false;
          response.status = core::Status{};
          response.status->message = outcome.error_message;
          count("sidecar_injection_failure_total", "Total number of failed injection requests.");
          break;
        case istio::Decision::kInject:
          response.allowed = true;
          response.patch = core::encodePatch(outcome.patch).dump();
          response.patch_type = std::string(core::kPatchTypeJsonPatch);
          count("sidecar_injection_success_total",
                "Total number of successful injection requests.");
          break;
      }
    }
  }
  core::AdmissionReview out;
  out.api_version = api_version;
  out.kind = kind;
  out.response = std::move(response);
  metrics_
      .histogram("sidecar_injection_time_seconds", "Total time taken for injection in seconds.",
                 {}, {0.001, 0.01, 0.1, 1, 10})
      .observe({}, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return net::Response::json(200, core::encodeAdmissionReview(out));
}

}  // namespace harness::injector
