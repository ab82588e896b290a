#pragma once

// What the tests against Istio's own TestInjection (pkg/kube/inject/inject_test.go) share:
// where Istio's chart ConfigMaps are, how its goldens separate documents, and its webhook test's
// conversions (webhook_test.go objectToPod, normalizeAndCompareDeployments).

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/injector/istio/go_patch.h"
#include "harness/testing/support.h"

namespace harness::injector::istio::upstream {

inline std::filesystem::path upstreamDir(const std::string& release) {
  return harness::testing::sourceDir() / "injector" / "tests" / "istio" / "testdata" /
         ("upstream-" + release);
}

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
             kind == "StatefulSet" || kind == "Job" || kind == "Deployment") {
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
