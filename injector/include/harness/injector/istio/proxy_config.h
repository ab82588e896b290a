#pragma once

// The `proxy.istio.io/config` annotation: a ProxyConfig (istio.io/api mesh/v1alpha1) written as
// YAML or JSON. Decoding follows protomarshal.ApplyYAML (sigs.k8s.io/yaml, then the legacy
// golang/protobuf jsonpb unmarshaler, retried with unknown fields allowed); merging follows
// mesh.MergeProxyConfig; checking follows agent.ValidateMeshConfigProxyConfig. Every error
// carries Go's text. See docs/istio-injector.md §4.3.
// ProxyConfig values are JSON with proto JSON names (configPath, statusPort, ...), durations
// as jsonpb writes them ("45s", "1.500s") and enums as their names.

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::injector::istio {

// protomarshal.ApplyYAML(yaml, base): each field present in the document replaces the field of
// `base` (jsonpb sets a fresh value per field: messages and maps are replaced, not merged);
// setting one member of the cluster_name oneof (serviceCluster, tracingServiceName) clears the
// other. Snake-case proto names are accepted too. Unknown fields are dropped. Errors are the
// bare decoder texts, e.g. `json: cannot unmarshal string into Go value of type bool`,
// `unknown value "\"FOO\"" for enum istio.mesh.v1alpha1.ProxyConfig.InboundInterceptionMode`,
// `bad Duration: time: invalid duration "x"`.
core::Result<nlohmann::json> applyProxyConfigYaml(std::string_view yaml, nlohmann::json base);

// mesh.MergeProxyConfig: applyProxyConfigYaml, then proxyMetadata merged key by key over the
// base's (the annotation's keys win). Error: "could not parse proxy config: <why>".
core::Result<nlohmann::json> mergeProxyConfig(std::string_view yaml, nlohmann::json base);

// agent.ValidateMeshConfigProxyConfig: config and binary paths, the service cluster, the drain
// duration, the discovery, tracer, statsd, metrics and access log service addresses, the admin
// port, the control plane auth policy and the status port. The error is go-multierror's text
// ("1 error occurred:\n\t* invalid status port: port number 0 must be in the range
// 1..65535\n\n").
core::Result<void> validateMeshConfigProxyConfig(const nlohmann::json& config);

// validate.go validateProxyConfig: the annotation applied over mesh.DefaultProxyConfig() (not
// the mesh's own defaultConfig), then validated. Decoding errors read
// "failed to convert to apply proxy config: <why>".
core::Result<void> validateProxyConfigAnnotation(std::string_view value);

}  // namespace harness::injector::istio
