#pragma once

// The HTTPS shell around the Istio profile: pkg/kube/inject/webhook.go serveInject and
// parseInjectEnvs (docs/istio-injector.md §5): body and Content-Type checks, AdmissionReview v1 and
// v1beta1, path parameters, the sidecar_injection_* metrics, config files reloaded on change.

#include <array>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <mutex>
#include <string>
#include <vector>

#include "harness/core/admission_review.h"
#include "harness/core/metrics.h"
#include "harness/injector/istio/config.h"
#include "harness/injector/istio/injector.h"
#include "harness/injector/kube_api.h"
#include "harness/injector/object_files.h"
#include "harness/injector/text_keyed_cache.h"
#include "harness/net/http.h"
#include "config_reload.h"
#include "watched_file.h"

namespace harness::injector {

// parseInjectEnvs: "/inject/cluster/c1/net/n1" -> {ISTIO_META_CLUSTER_ID: c1,
// ISTIO_META_NETWORK: n1}; other keys upper-cased; "--slash--" in values becomes "/"; a last
// key without a value is dropped; the deprecated "/inject/:ENV:k=v:ENV:..." form too.
std::map<std::string, std::string> parseInjectEnvs(std::string_view path);

// net/url's unescape in path mode (what Go's server does to the request target before
// webhook.go reads r.URL.Path): "%XX" decoded, '+' kept; nullopt for a bad escape ("%", "%zz").
std::optional<std::string> goPathUnescape(std::string_view path);

class IstioWebhook {
 public:
  // `nodes` is the Kubernetes API the nodes are read from in auto mode, `namespaces` the one
  // the pod's Namespace is read from on OpenShift (nullptr: none, as istiod without that
  // informer).
  IstioWebhook(IstioWebhookConfig config, core::MetricsRegistry& metrics,
               KubeApi* nodes = nullptr, KubeApi* namespaces = nullptr);
  net::Response handle(const net::Request& request);
  core::Result<void> checkConfig();

 private:
  // The settings from the three files: rebuilt when they change, the last good ones kept when
  // a reload fails (see config_reload.h).
  core::Result<std::shared_ptr<const istio::InjectorSettings>> settings();
  // The response to a decoded review; may throw only on a bug, which handle() answers as an
  // injection error.
  core::AdmissionResponse respond(const core::AdmissionReview& review, const std::string& path);
  // Istio's injection counters (webhook.go: totalInjections, totalSkippedInjections, ...).
  enum class Counter { kRequests, kSuccess, kSkip, kFailure };
  void count(Counter counter);
  // DetectNativeSidecar for a pod on `node_name` ("" when not scheduled).
  bool nativeSidecars(const istio::InjectorSettings& settings, const std::string& node_name);
  // The Namespace `name` as istiod's namespace informer would give it: null when it does not
  // exist or cannot be read (logged).
  nlohmann::json namespaceObject(const std::string& name);

  // What istio::admit answered, kept by its whole input (the pod as received, the namespace, the
  // path's proxy envs, the native-sidecar answer) for the settings it was computed with: the
  // replicas of a workload are admitted alike, and rendering, parsing and merging the template
  // was most of a request's CPU. A settings change starts a new cache.
  struct Admitted {
    istio::Decision decision = istio::Decision::kSkip;
    std::string error_message;
    std::vector<LogLine> logs;
    std::string patch;  // kInject: the JSONPatch text
  };
  std::shared_ptr<const Admitted> admit(const std::shared_ptr<const istio::InjectorSettings>& settings,
                                        const istio::AdmissionInput& input);

  IstioWebhookConfig config_;
  core::MetricsRegistry& metrics_;
  // Registered on first use (see core::FamilySlot), indexed by Counter.
  std::array<core::FamilySlot<core::CounterFamily>, 4> counters_;
  core::FamilySlot<core::HistogramFamily> injection_time_;
  KubeApi* nodes_;
  KubeApi* namespaces_;
  WatchedFile config_file_, values_file_, mesh_file_;
  LastGoodConfig<istio::InjectorSettings> settings_;
  std::mutex admitted_mutex_;
  std::shared_ptr<const istio::InjectorSettings> admitted_settings_;  // what admitted_ is for
  std::shared_ptr<TextKeyedCache<Admitted>> admitted_;
};

}  // namespace harness::injector
