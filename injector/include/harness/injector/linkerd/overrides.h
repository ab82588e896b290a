#pragma once

// Per-workload configuration: pkg/inject/inject.go ApplyAnnotationOverrides,
// MergeAdditionalEnv, GetOverriddenValues, getPodInboundPorts, FilterPodOpaquePorts,
// the Service opaque-port filter, and pkg/util's opaque-port parsing.
// See docs/linkerd-injector.md §3.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/injector/linkerd/log.h"
#include "harness/injector/linkerd/values.h"
#include "harness/injector/linkerd/workload.h"

namespace harness::injector::linkerd {

using NamedPorts = std::map<std::string, std::int32_t>;

// util.GetNamedPorts over initContainers then containers: port name -> containerPort.
NamedPorts namedPorts(const nlohmann::json& pod_spec);

// GetOverriddenValues: a copy of `base` with the effective annotation set applied (invalid
// values are ignored, some with a warning appended to `logs`), proxy.additionalEnv merged with
// the namespace's and then the workload's proxy-additional-env, and proxy.podInboundPorts set
// from the pod spec. `namespace_annotations` is used only for that env merge.
Values overriddenValues(const Values& base, const StringMap& annotations,
                        const StringMap& namespace_annotations, const nlohmann::json& pod_spec,
                        std::vector<LogLine>* logs);

// The config.linkerd.io/opaque-ports value as the proxy env gets it: trailing comma dropped,
// entries trimmed, named container ports resolved, "a-b" ranges kept, invalid entries dropped
// with a warning; joined by ",".
std::string resolveOpaquePorts(std::string_view annotation, const NamedPorts& named_ports,
                               std::vector<LogLine>* logs);

// getPodInboundPorts: containerPorts of initContainers and containers plus integer httpGet
// ports of readiness and liveness probes, de-duplicated and sorted as strings.
std::string podInboundPorts(const nlohmann::json& pod_spec);

// FilterPodOpaquePorts: each containerPort (initContainers, then containers) whose decimal
// string is in `default_ports`; duplicates kept, spec order.
std::vector<std::string> filterPodOpaquePorts(const nlohmann::json& pod_spec,
                                              const std::vector<std::string>& default_ports);

// The Service filter: spec.ports in order, keeping `port` when targetPort is unset (or 0) and
// `port` is a default, or when targetPort's integer value is a default. A named targetPort
// never matches.
std::vector<std::string> filterServiceOpaquePorts(const nlohmann::json& service_spec,
                                                  const std::vector<std::string>& default_ports);

// strings.Split(s, ",").
std::vector<std::string> splitComma(std::string_view s);

// A Go corev1.EnvVar round-tripped through JSON: name, value (omitted when empty) and
// valueFrom (omitted when null).
nlohmann::json normalizeEnvVar(const nlohmann::json& env);

}  // namespace harness::injector::linkerd
