#pragma once

// The injection decision: pkg/inject/report.go (newReport, Injectable, disabledByAnnotation,
// the Reasons texts) and pkg/healthcheck/sidecar.go (HasExistingSidecars).
// See docs/linkerd-injector.md §1.2.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/injector/linkerd/workload.h"

namespace harness::injector::linkerd {

enum class Reason {
  kHostNetworkEnabled,
  kSidecarAlreadyExists,
  kUnsupportedResource,
  kInvalidInjectAnnotationAtNamespace,
  kInvalidInjectAnnotationAtWorkload,
  kInjectionDisableAnnotationPresent,
  kInjectionEnableAnnotationAbsent,
  kDisabledAutomountServiceAccountToken,
  kUdpPortsEnabled,  // computed for the CLI only; never blocks webhook injection
};

// The metric label value, e.g. "sidecar_already_exists".
std::string_view reasonCode(Reason reason);
// The readable text, e.g. "pod has a sidecar injected already".
std::string_view reasonText(Reason reason);

// Where the enabling inject annotation was found.
inline constexpr std::string_view kAnnotationAtNamespace = "namespace";
inline constexpr std::string_view kAnnotationAtWorkload = "workload";

struct Report {
  std::string kind;  // lower-case
  std::string name;  // Pods fall back to generateName
  bool host_network = false;
  bool sidecar = false;
  bool udp = false;
  bool unsupported_resource = false;
  bool inject_disabled = false;
  std::optional<Reason> inject_disabled_reason;
  std::string annotation_at;  // "", "namespace" or "workload"
  bool automount_service_account_token = true;

  // Injectable(): the blocking reasons in their fixed order (UDP excluded).
  [[nodiscard]] std::vector<Reason> reasons() const;
  [[nodiscard]] bool injectable() const { return reasons().empty(); }
  [[nodiscard]] std::string resName() const { return kind + "/" + name; }
  // Codes joined by "," (the skip_reason label) and texts joined by ", " (events and logs).
  [[nodiscard]] std::string reasonCodes() const;
  [[nodiscard]] std::string readableReasons() const;
};

// newReport for the webhook origin. `namespace_inject` is the namespace's linkerd.io/inject
// value ("" when absent); `service_account_token_projection` is
// identity.serviceAccountTokenProjection.
Report makeReport(const Workload& workload, std::string_view namespace_inject,
                  bool service_account_token_projection);

// healthcheck.HasExistingSidecars: a Linkerd or Istio proxy (by image prefix or container name)
// among containers and initContainers, or a proxy-init among initContainers.
bool hasExistingSidecars(const nlohmann::json& pod_spec);

// containers[0]'s volumeMount at /var/run/secrets/kubernetes.io/serviceaccount, if any.
std::optional<nlohmann::json> serviceAccountVolumeMount(const nlohmann::json& pod_spec);

}  // namespace harness::injector::linkerd
