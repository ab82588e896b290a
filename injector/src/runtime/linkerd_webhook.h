#pragma once

// The HTTPS shell around the Linkerd profile: controller/webhook/server.go (decode, bad input,
// echo the review with its response) and controller/proxy-injector/webhook.go (values and trust
// bundle read on every request, namespace from the API, owner lookups, events, metrics).
// See docs/linkerd-injector.md §0, §4, §5.

#include <filesystem>
#include <memory>
#include <string>

#include "harness/core/admission_review.h"
#include "harness/core/metrics.h"
#include "harness/injector/kube_api.h"
#include "harness/injector/linkerd/injector.h"
#include "harness/net/http.h"
#include "config_reload.h"
#include "event_sink.h"
#include "watched_file.h"

namespace harness::injector {

struct LinkerdWebhookConfig {
  std::filesystem::path values_file;         // linkerd-config `values` (YAML), or the ConfigMap
  std::filesystem::path trust_anchors_file;  // identity trust roots (PEM)
  std::string linkerd_namespace = "linkerd";
  std::string version;                       // written into linkerd.io/created-by
};

class LinkerdWebhook {
 public:
  LinkerdWebhook(LinkerdWebhookConfig config, KubeApi& kube, EventSink& events,
                 core::MetricsRegistry& metrics);

  net::Response handle(const net::Request& request);

  // Checks that values and trust anchors loaded at least once (readiness and start-up).
  core::Result<void> checkConfig();

 private:
  struct Loaded {
    linkerd::Values values;
    std::string trust_anchors_pem;  // the bundle file's bytes
    // The patches built with these values and trust anchors (a new configuration, a new cache).
    std::unique_ptr<linkerd::PatchCache> patches = std::make_unique<linkerd::PatchCache>();
  };

  // Values and trust anchors: re-read when the files change, the last good ones kept when a
  // reload fails (see config_reload.h).
  core::Result<std::shared_ptr<const Loaded>> loaded();
  // The review's answer once decoded (its object is moved out); may throw only on a bug, which
  // handle() turns into a handler error. A patch taken from the patch cache comes back already
  // encoded, in `encoded_patch` (the response's own patch is then empty).
  core::AdmissionResponse respond(core::AdmissionRequest& req, std::string& decision,
                                  std::shared_ptr<const std::string>& encoded_patch);

  LinkerdWebhookConfig config_;
  KubeApi& kube_;
  EventSink& events_;
  core::MetricsRegistry& metrics_;
  // The families this webhook records into, registered on first use: looking each up by name
  // (and building its label names) for every request was a twelfth of the request's work.
  core::FamilySlot<core::CounterFamily> requests_;
  core::FamilySlot<core::CounterFamily> responses_;
  core::FamilySlot<core::HistogramFamily> durations_;
  WatchedFile values_file_;
  WatchedFile trust_file_;
  LastGoodConfig<Loaded> config_state_;
};

}  // namespace harness::injector
