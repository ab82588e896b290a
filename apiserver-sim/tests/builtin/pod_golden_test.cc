// The Pod a k3s cluster (Kubernetes 1.31-1.33) stores for a minimal manifest, built the way
// kube-apiserver builds it: decode + defaulting, the in-tree mutating plugins (ServiceAccount,
// Priority, DefaultTolerationSeconds), PrepareForCreate, then the Go JSON encoding. The expected
// JSON is `kubectl get pod nginx -o json` of such a cluster without the server-set metadata
// (uid, resourceVersion, creationTimestamp) and with the token volume's random suffix fixed.

#include <map>
#include <optional>
#include <string>
#include <tuple>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/sim/builtin_plugins.h"
#include "harness/sim/defaulting.h"
#include "harness/sim/object_validation.h"

namespace harness::sim {
namespace {

using nlohmann::json;

const json kExpectedPod = json::parse(R"({
  "apiVersion": "v1",
  "kind": "Pod",
  "metadata": {"creationTimestamp": null, "name": "nginx", "namespace": "default"},
  "spec": {
    "containers": [{
      "image": "nginx",
      "imagePullPolicy": "Always",
      "name": "nginx",
      "resources": {},
      "terminationMessagePath": "/dev/termination-log",
      "terminationMessagePolicy": "File",
      "volumeMounts": [{
        "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount",
        "name": "kube-api-access-x7k2p",
        "readOnly": true
      }]
    }],
    "dnsPolicy": "ClusterFirst",
    "enableServiceLinks": true,
    "preemptionPolicy": "PreemptLowerPriority",
    "priority": 0,
    "restartPolicy": "Always",
    "schedulerName": "default-scheduler",
    "securityContext": {},
    "serviceAccount": "default",
    "serviceAccountName": "default",
    "terminationGracePeriodSeconds": 30,
    "tolerations": [
      {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists",
       "tolerationSeconds": 300},
      {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists",
       "tolerationSeconds": 300}
    ],
    "volumes": [{
      "name": "kube-api-access-x7k2p",
      "projected": {
        "defaultMode": 420,
        "sources": [
          {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
          {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}],
                         "name": "kube-root-ca.crt"}},
          {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1",
                                                   "fieldPath": "metadata.namespace"},
                                      "path": "namespace"}]}}
        ]
      }
    }]
  },
  "status": {"phase": "Pending", "qosClass": "BestEffort"}
})");

PluginContext clusterContext() {
  PluginContext context;
  context.get_object = [](const core::GroupVersionResource& gvr, const std::string& ns,
                          const std::string& name) -> std::optional<json> {
    if (gvr.resource == "serviceaccounts" && ns == "default" && name == "default") {
      return json{{"apiVersion", "v1"},
                  {"kind", "ServiceAccount"},
                  {"metadata", {{"name", "default"}, {"namespace", "default"}}}};
    }
    if (gvr.resource == "namespaces" && name == "default") {
      return json{{"apiVersion", "v1"},
                  {"kind", "Namespace"},
                  {"metadata", {{"name", "default"}}},
                  {"status", {{"phase", "Active"}}}};
    }
    return std::nullopt;
  };
  context.random_suffix = [] { return std::string("x7k2p"); };
  return context;
}

AdmissionAttributes createAttributes(const json& pod) {
  AdmissionAttributes a;
  a.operation = "CREATE";
  a.kind = {"", "v1", "Pod"};
  a.resource = {"", "v1", "pods"};
  a.namespace_name = "default";
  a.name = "nginx";
  a.object = pod;
  return a;
}

// Runs the mutating plugins of a default k3s cluster in order, as the chain does.
json admitMinimalPod() {
  json pod = json::parse(R"({"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "nginx", "namespace": "default"},
      "spec": {"containers": [{"name": "nginx", "image": "nginx"}]}})");
  applyDefaults(pod);
  auto plugins = makePlugins(defaultPluginNames());
  EXPECT_TRUE(plugins.ok());
  AdmissionAttributes attributes = createAttributes(pod);
  const PluginContext context = clusterContext();
  for (const auto& plugin : *plugins) {
    if (!plugin->mutating()) continue;
    auto rejection = plugin->admit(attributes, context);
    EXPECT_FALSE(rejection.has_value()) << plugin->name() << ": " << rejection->message;
  }
  json admitted = *attributes.object;
  prepareForCreate(admitted);
  normalizeLikeGoEncoding(admitted);
  return admitted;
}

TEST(PodGoldenTest, MinimalPodMatchesWhatK3sStores) {
  EXPECT_EQ(admitMinimalPod(), kExpectedPod) << admitMinimalPod().dump(2);
}

TEST(PodGoldenTest, StoredPodPassesValidation) {
  EXPECT_TRUE(validateObject(admitMinimalPod(), nullptr).empty());
}

TEST(PodGoldenTest, ReinvocationRoundChangesNothing) {
  // Round 1 (docs/admission-chain.md §6) re-runs every in-tree mutating plugin on the admitted
  // object.
  json once = admitMinimalPod();
  AdmissionAttributes attributes = createAttributes(once);
  attributes.reinvoke = true;
  auto plugins = makePlugins(defaultPluginNames());
  ASSERT_TRUE(plugins.ok());
  const PluginContext context = clusterContext();
  for (const auto& plugin : *plugins) {
    if (!plugin->mutating()) continue;
    EXPECT_FALSE(plugin->admit(attributes, context).has_value()) << plugin->name();
  }
  json again = *attributes.object;
  applyDefaults(again);
  normalizeLikeGoEncoding(again);
  EXPECT_EQ(again, once);
}

}  // namespace
}  // namespace harness::sim
