#pragma once

// The cases of Istio's TestInjection (pkg/kube/inject/inject_test.go) that run with the chart's
// default settings, read from Istio's testdata/inject in the module cache (upstream_support.h): the
// library's golden test runs them document by document, the `injector inject` test file by file.

#include <array>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace harness::injector::istio::upstream {

// One document per file (or documents that are each a workload).
inline constexpr std::array<const char*, 26> kDefaultCases = {
    "hello", "pod", "daemonset", "statefulset", "job", "replicaset", "replicationcontroller",
    "cronjob", "multi-container", "multi-init", "hello-probes", "traffic-annotations",
    "native-sidecar-opt-out", "native-sidecar-opt-in", "prometheus-scrape",
    "resource_annotations", "grpc-agent", "grpc-simple", "gateway", "user-volume",
    "two_container", "status_annotations", "https-probes", "tcp-probes", "hello-multi",
    "truncate-canonical-name-pod"};

// Streams kube-inject writes as a whole: a Service passed through, Lists injected item by item.
inline constexpr std::array<const char*, 6> kStreamCases = {
    "hello-service", "frontend", "list", "list-frontend", "kubevirtInterfaces_list",
    "reroute-virtual-interfaces_list"};

// The cases as gtest parameters: the default ones, then (with_streams) the streams.
inline std::vector<std::string> cases(bool with_streams) {
  std::vector<std::string> out(kDefaultCases.begin(), kDefaultCases.end());
  if (with_streams) out.insert(out.end(), kStreamCases.begin(), kStreamCases.end());
  return out;
}

// A gtest name for a case ("hello-probes" -> "hello_probes").
inline std::string caseName(const ::testing::TestParamInfo<std::string>& info) {
  std::string n = info.param;
  for (char& c : n) {
    if (c == '-') c = '_';
  }
  return n;
}

}  // namespace harness::injector::istio::upstream
