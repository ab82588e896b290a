#pragma once

// What the tests against Istio's own TestInjection (pkg/kube/inject/inject_test.go) share:
// where Istio's source tree and its chart's ConfigMaps are, how its goldens separate documents,
// and its webhook test's conversions (webhook_test.go objectToPod,
// normalizeAndCompareDeployments).
//
// Nothing of Istio is committed. The CTest fixture injector_istio_upstream_charts
// (chart_render/render.sh) finds each istio.io/istio module version in the Go module cache and
// renders its istio-sidecar-injector and istio ConfigMaps as TestInjection does
// (getInjectionSettings) into <build>/istio-upstream/<commit>/, with a file `source` naming the
// tree; a version it cannot render gets a SKIP file saying why and which command fetches it.

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/injector/istio/go_patch.h"
#include "harness/testing/support.h"

namespace harness::injector::istio::upstream {

// istio/istio master of 2026-04-23 (VERSION 1.31, just after release-1.30 was cut).
inline constexpr const char* kIstio131Dev = "b01690e6db7d";
// istio/istio master of 2026-08-27 (VERSION still 1.31), the newest the module proxy serves.
inline constexpr const char* kIstioNewest = "eed52ebb66ad";

// One Istio source tree as the fixture left it.
struct Tree {
  std::filesystem::path charts;  // istio-sidecar-injector.yaml and istio.yaml, as rendered
  std::filesystem::path inject;  // the tree's pkg/kube/inject/testdata/inject
  std::string skip;              // why the tree is not there; empty when it is
};

inline std::string withoutTrailingNewlines(std::string s) {
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

inline Tree tree(const std::string& commit) {
  namespace fs = std::filesystem;
  Tree t;
  const fs::path dir = harness::testing::binaryDir() / "istio-upstream" / commit;
  std::error_code ec;
  if (fs::exists(dir / "SKIP", ec)) {
    t.skip = withoutTrailingNewlines(harness::testing::readFile(dir / "SKIP"));
  } else if (!fs::exists(dir / "source", ec)) {
    t.skip = "Istio's chart of " + commit +
             " is not rendered: `ctest -R injector_istio_upstream_charts` renders it";
  } else {
    t.charts = dir;
    t.inject = fs::path(withoutTrailingNewlines(harness::testing::readFile(dir / "source"))) /
               "pkg" / "kube" / "inject" / "testdata" / "inject";
  }
  return t;
}

// In a test body: `var`, the tree of `commit`, or the test is skipped saying why.
#define HARNESS_ISTIO_TREE_OR_SKIP(var, commit)                                      \
  const ::harness::injector::istio::upstream::Tree var =                             \
      ::harness::injector::istio::upstream::tree(commit);                            \
  if (!var.skip.empty()) GTEST_SKIP() << var.skip

// Istio's goldens separate documents with "---" lines, one after each document.
inline std::vector<std::string> expectedDocuments(const std::string& text) {
  std::vector<std::string> docs;
  std::string current;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(pos, end - pos);
    if (line == "---") {
      if (!current.empty()) docs.push_back(current);
      current.clear();
    } else {
      current += line + "\n";
    }
    pos = end + 1;
  }
  if (!current.empty()) docs.push_back(current);
  return docs;
}

// objectToPod: a workload's pod template as the Pod its controller would create (owned by the
// workload, a Deployment's through a ReplicaSet "<name>-fake" with pod-template-hash "fake"); a
// Pod as it is; null for other kinds.
inline nlohmann::json podFromWorkload(const nlohmann::json& object) {
  using nlohmann::json;
  const std::string kind = object.value("kind", "");
  if (kind == "Pod") return object;
  const std::string name = object.value("metadata", json::object()).value("name", "");
  const std::string api_version = object.value("apiVersion", "");
  json tmpl;
  if (kind == "CronJob") {
    tmpl = object["spec"]["jobTemplate"]["spec"]["template"];
  } else if (kind == "DaemonSet" || kind == "ReplicaSet" || kind == "ReplicationController" ||
             kind == "StatefulSet" || kind == "Job" || kind == "Deployment" ||
             kind == "DeploymentConfig") {
    tmpl = object["spec"]["template"];
  } else {
    return nullptr;
  }
  json meta = tmpl.value("metadata", json::object());
  const bool deployment = kind == "Deployment";
  const std::string owner = deployment ? name + "-fake" : name;
  meta["generateName"] = deployment ? owner + "-" : owner;
  meta["ownerReferences"] = json::array({{{"apiVersion", deployment ? "apps/v1" : api_version},
                                          {"kind", deployment ? "ReplicaSet" : kind},
                                          {"name", owner},
                                          {"controller", true}}});
  if (deployment) meta["labels"]["pod-template-hash"] = "fake";
  return {{"metadata", meta}, {"spec", tmpl.value("spec", json::object())}};
}

// normalizeAndCompareDeployments' scrubbing (the status annotation, fieldRef apiVersions), then
// the pod as Go's json.Marshal of a corev1.Pod writes it.
inline nlohmann::json scrubbedPod(nlohmann::json pod) {
  if (pod["metadata"].contains("annotations")) {
    pod["metadata"]["annotations"].erase("sidecar.istio.io/status");
  }
  for (const char* list : {"containers", "initContainers"}) {
    if (!pod["spec"].contains(list)) continue;
    for (auto& c : pod["spec"][list]) {
      if (!c.contains("env")) continue;
      for (auto& e : c["env"]) {
        if (e.contains("valueFrom") && e["valueFrom"].contains("fieldRef")) {
          e["valueFrom"]["fieldRef"].erase("apiVersion");
        }
      }
    }
  }
  return goTypedPod(pod);
}

// TestInjection's namespace test-ns, with the ranges OpenShift preallocates for it.
inline nlohmann::json openShiftTestNamespace() {
  return {{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata",
           {{"name", "test-ns"},
            {"annotations",
             {{"openshift.io/sa.scc.uid-range", "1000620000/10000"},
              {"openshift.io/sa.scc.supplemental-groups", "1000620000/10000"}}}}}};
}

}  // namespace harness::injector::istio::upstream
