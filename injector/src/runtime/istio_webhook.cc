#include "istio_webhook.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <optional>

#include <spdlog/spdlog.h>

#include "harness/core/admission_review.h"
#include "harness/core/json.h"
#include "logging.h"
#include "harness/injector/istio/injector.h"
#include "harness/injector/istio/native_sidecar.h"
#include "harness/injector/istio/openshift.h"

namespace harness::injector {

namespace {

constexpr std::size_t kMaxBody = std::size_t{6} * 1024 * 1024;  // webhook.go: kube.HTTPConfigReader limit

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

// webhook.go toAdmissionResponse: allowed=false with the error as status.message.
core::AdmissionResponse injectionError(const std::string& message) {
  core::AdmissionResponse response;
  response.allowed = false;
  response.status = core::Status{};
  response.status->message = message;
  return response;
}

std::string envName(const std::string& key) {
  if (key == "cluster") return "ISTIO_META_CLUSTER_ID";
  if (key == "net") return "ISTIO_META_NETWORK";
  std::string upper = key;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return upper;
}


// The admissions kept (IstioWebhook::admit): a pod and its patch are a few kilobytes each.
constexpr std::size_t kAdmittedEntries = 256;
constexpr std::size_t kAdmittedKeyBytes = std::size_t{4} * 1024 * 1024;

}  // namespace

std::optional<std::string> goPathUnescape(std::string_view s) {
  auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') {
      out.push_back(s[i]);  // '+' stays '+' in a path
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = hex(s[i + 1]);
    const int lo = hex(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

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

IstioWebhook::IstioWebhook(IstioWebhookConfig config, core::MetricsRegistry& metrics,
                           KubeApi* nodes, KubeApi* namespaces)
    : config_(std::move(config)),
      metrics_(metrics),
      nodes_(nodes),
      namespaces_(namespaces),
      config_file_(config_.config_file),
      values_file_(config_.values_file),
      mesh_file_(config_.mesh_file),
      settings_("istio", metrics) {}

core::Result<std::shared_ptr<const istio::InjectorSettings>> IstioWebhook::settings() {
  auto ct = config_file_.read();
  auto vt = values_file_.read();
  auto mt = mesh_file_.read();
  const core::Result<std::string> all = !ct   ? ct.error()
                                        : !vt ? vt.error()
                                        : !mt ? mt.error()
                                              : core::Result<std::string>(*ct + '\0' + *vt +
                                                                          '\0' + *mt);
  return settings_.get(all, [&](const std::string&) { return istio::loadSettings(*ct, *vt, *mt); });
}

core::Result<void> IstioWebhook::checkConfig() {
  if (auto s = settings(); !s) return s.error();
  return {};
}

net::Response IstioWebhook::handle(const net::Request& request) {
  // Go's server parses the request target first (url.ParseRequestURI): a bad escape never
  // reaches serveInject, and serveInject reads the decoded r.URL.Path.
  const std::optional<std::string> path = goPathUnescape(request.path);
  if (!path) return net::Response::text(400, "400 Bad Request");
  const auto started = std::chrono::steady_clock::now();
  count(Counter::kRequests);
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
  core::JsonError json_error;
  auto body = core::parseJson(request.body, &json_error);
  auto review =
      body ? core::requestReviewFromJson(std::move(*body))
           : core::Result<core::AdmissionReview>(core::Error{
                 json_error.too_deep
                     // The universal deserializer's json serializer first reads apiVersion and
                     // kind with encoding/json (apimachinery serializer/json/meta.go Interpret).
                     ? "couldn't get version/kind; json parse error: " + json_error.message
                     : "invalid JSON: " + json_error.message});
  if (!review) {
    spdlog::error("Could not decode body: {}", review.error().message);
    response = injectionError(review.error().message);
    count(Counter::kFailure);
  } else {
    api_version = review->api_version;
    kind = review->kind;
    try {
      response = respond(*review, *path);
    } catch (const std::exception& e) {
      // Never an HTTP 500 (a calling error, which failurePolicy Ignore turns into admission
      // without a sidecar): answer as an injection error.
      spdlog::error("Pod injection failed: {}", e.what());
      response = injectionError(e.what());
      count(Counter::kFailure);
    }
    response.uid = review->request->uid;
  }
  core::AdmissionReview out;
  out.api_version = api_version;
  out.kind = kind;
  out.response = std::move(response);
  injection_time_
      .get([this]() -> core::HistogramFamily& {
        return metrics_.histogram("sidecar_injection_time_seconds",
                                  "Total time taken for injection in seconds.", {},
                                  {0.001, 0.01, 0.1, 1, 10});
      })
      .observe({}, std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  return net::Response::json(200, core::encodeAdmissionReview(out));
}

bool IstioWebhook::nativeSidecars(const istio::InjectorSettings& settings,
                                  const std::string& node_name) {
  std::vector<LogLine> logs;
  const istio::NativeSidecarMode mode =
      config_.native_sidecars ? istio::NativeSidecarMode::kEnabled
      : config_.native_sidecars_mode.empty()
          ? istio::nativeSidecarModeOf(settings, &logs)
          : istio::parseNativeSidecarMode(config_.native_sidecars_mode, &logs);
  std::optional<std::vector<nlohmann::json>> nodes;
  std::optional<nlohmann::json> pod_node;
  if (mode == istio::NativeSidecarMode::kAuto && nodes_ != nullptr) {
    // istiod reads the nodes from its informer; here they are read per request.
    if (!node_name.empty()) {
      auto node = nodes_->get(ObjectRef{"v1", "Node", "", node_name});
      if (node && *node) {
        pod_node = **node;
      } else {
        logs.push_back({LogLine::Level::kWarning,
                        "pod assigned to node \"" + node_name + "\" but node not found in cluster"});
      }
    }
    if (!pod_node) {
      auto listed = nodes_->list("Node");
      if (listed) {
        nodes = std::move(*listed);
      } else {
        // An informer that cannot list has no nodes yet: no answer, so not native.
        logs.push_back({LogLine::Level::kWarning, "listing nodes: " + listed.error().message});
      }
    } else {
      nodes.emplace();
    }
  }
  const bool native = istio::detectNativeSidecar(mode, nodes, pod_node ? &*pod_node : nullptr, &logs);
  for (const auto& line : logs) emit(line);
  return native;
}

nlohmann::json IstioWebhook::namespaceObject(const std::string& name) {
  auto ns = namespaces_->get(ObjectRef{"v1", "Namespace", "", name});
  if (!ns) {
    emit({LogLine::Level::kWarning, "reading namespace \"" + name + "\": " + ns.error().message});
    return nullptr;
  }
  return *ns ? **ns : nlohmann::json(nullptr);
}

void IstioWebhook::count(Counter counter) {
  struct Name {
    const char* name;
    const char* help;
  };
  // Indexed by Counter.
  static constexpr Name kNames[] = {
      {"sidecar_injection_requests_total", "Total number of injection requests."},
      {"sidecar_injection_success_total", "Total number of successful injection requests."},
      {"sidecar_injection_skip_total", "Total number of skipped injection requests."},
      {"sidecar_injection_failure_total", "Total number of failed injection requests."},
  };
  const auto index = static_cast<std::size_t>(counter);
  counters_[index]
      .get([&]() -> core::CounterFamily& {
        return metrics_.counter(kNames[index].name, kNames[index].help, {});
      })
      .add({});
}

core::AdmissionResponse IstioWebhook::respond(const core::AdmissionReview& review,
                                              const std::string& path) {
  auto settings = this->settings();
  if (!settings) {
    count(Counter::kFailure);
    return injectionError(settings.error().message);
  }
  istio::AdmissionInput input;
  input.pod = review.request->object.value_or(nlohmann::json(nullptr));
  input.request_namespace = review.request->namespace_name;
  input.proxy_envs = parseInjectEnvs(path);
  const nlohmann::json& spec = input.pod.is_object() ? input.pod.value("spec", nlohmann::json())
                                                     : nlohmann::json();
  const nlohmann::json node_name = spec.is_object() ? spec.value("nodeName", nlohmann::json())
                                                    : nlohmann::json();
  input.native_sidecars =
      nativeSidecars(**settings, node_name.is_string() ? node_name.get<std::string>() : "");
  // webhook.go inject: on OpenShift, with a namespace client, the pod's Namespace (its
  // metadata.namespace, else the request's).
  if (namespaces_ != nullptr && istio::isOpenShift(**settings, config_.platform)) {
    input.openshift = true;
    const nlohmann::json& meta =
        input.pod.is_object() ? input.pod.value("metadata", nlohmann::json()) : nlohmann::json();
    const nlohmann::json ns =
        meta.is_object() ? meta.value("namespace", nlohmann::json()) : nlohmann::json();
    const std::string name = ns.is_string() && !ns.get<std::string>().empty()
                                 ? ns.get<std::string>()
                                 : input.request_namespace;
    if (!name.empty()) input.namespace_object = namespaceObject(name);
  }
  const auto outcome = admit(*settings, input);
  for (const auto& line : outcome->logs) emit(line);
  core::AdmissionResponse response;
  switch (outcome->decision) {
    case istio::Decision::kSkip:
      response.allowed = true;
      count(Counter::kSkip);
      break;
    case istio::Decision::kError:
      response = injectionError(outcome->error_message);
      count(Counter::kFailure);
      break;
    case istio::Decision::kInject:
      response.allowed = true;
      response.patch = outcome->patch;
      response.patch_type = std::string(core::kPatchTypeJsonPatch);
      count(Counter::kSuccess);
      break;
  }
  return response;
}

std::shared_ptr<const IstioWebhook::Admitted> IstioWebhook::admit(
    const std::shared_ptr<const istio::InjectorSettings>& settings,
    const istio::AdmissionInput& input) {
  std::shared_ptr<TextKeyedCache<Admitted>> cache;
  {
    std::lock_guard lock(admitted_mutex_);
    if (admitted_settings_ != settings) {
      admitted_settings_ = settings;
      admitted_ = std::make_shared<TextKeyedCache<Admitted>>(kAdmittedEntries, kAdmittedKeyBytes);
    }
    cache = admitted_;
  }
  // Length-prefixed parts: different inputs never give the same key.
  std::string key;
  auto part = [&key](std::string_view text) {
    key += std::to_string(text.size());
    key += ':';
    key += text;
  };
  part(input.native_sidecars ? "native" : "classic");
  part(input.request_namespace);
  // On OpenShift the proxy's IDs come from the Namespace's annotations (openshift.h).
  part(input.openshift ? "openshift" : "");
  part(input.openshift ? core::dumpJson(input.namespace_object) : std::string());
  part(std::to_string(input.proxy_envs.size()));
  for (const auto& [name, value] : input.proxy_envs) {
    part(name);
    part(value);
  }
  part(core::dumpJson(input.pod));
  auto admitted = cache->get(key, [&]() -> core::Result<Admitted> {
    auto outcome = istio::admit(*settings, input);
    Admitted out{outcome.decision, std::move(outcome.error_message), std::move(outcome.logs), {}};
    if (outcome.decision == istio::Decision::kInject) {
      out.patch = core::dumpJson(core::encodePatch(outcome.patch));
    }
    return out;
  });
  return *admitted;  // never an error: every outcome is kept
}

}  // namespace harness::injector
