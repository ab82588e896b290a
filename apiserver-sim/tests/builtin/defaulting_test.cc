// applyDefaults: one test per SetDefaults_* rule of pkg/apis/core/v1, apps/v1 and batch/v1.

#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/sim/defaulting.h"

namespace harness::sim {
namespace {

using nlohmann::json;

json pod(const json& spec) {
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}}}, {"spec", spec}};
}

json defaulted(json object) {
  applyDefaults(object);
  return object;
}

json container(const std::string& image) { return {{"name", "c"}, {"image", image}}; }

json defaultedContainer(const json& c) {
  return defaulted(pod({{"containers", json::array({c})}}))["spec"]["containers"][0];
}

// kube-apiserver v1.37.2 stores and admits a Secret's stringData as data (found by
// `apiserver-sim compare --backend kube`, scenarios audit/policy-by-resource and others).
TEST(DefaultingTest, SecretStringDataIsMergedIntoData) {
  json secret = {{"apiVersion", "v1"},
                 {"kind", "Secret"},
                 {"metadata", {{"name", "s"}}},
                 {"data", {{"a", "eA=="}, {"token", "b2xk"}}},
                 {"stringData", {{"token", "s3cr3t"}, {"b", ""}}}};
  applyDefaults(secret);
  EXPECT_FALSE(secret.contains("stringData"));
  EXPECT_EQ(secret["data"], (json{{"a", "eA=="}, {"token", "czNjcjN0"}, {"b", ""}}));
  EXPECT_EQ(secret["type"], "Opaque");
  json only_string_data = {{"apiVersion", "v1"},
                           {"kind", "Secret"},
                           {"metadata", {{"name", "s"}}},
                           {"stringData", {{"k", "v"}}}};
  applyDefaults(only_string_data);
  EXPECT_EQ(only_string_data["data"], (json{{"k", "dg=="}}));
}

TEST(DefaultingTest, PodSpecGetsSchedulingAndLifecycleDefaults) {
  json spec = defaulted(pod({{"containers", json::array({container("nginx")})}}))["spec"];
  EXPECT_EQ(spec["dnsPolicy"], "ClusterFirst");
  EXPECT_EQ(spec["restartPolicy"], "Always");
  EXPECT_EQ(spec["securityContext"], json::object());
  EXPECT_EQ(spec["terminationGracePeriodSeconds"], 30);
  EXPECT_EQ(spec["schedulerName"], "default-scheduler");
  EXPECT_EQ(spec["enableServiceLinks"], true);
}

TEST(DefaultingTest, ExplicitPodSpecValuesAreKept) {
  json spec = defaulted(pod({{"containers", json::array({container("nginx")})},
                             {"dnsPolicy", "Default"},
                             {"restartPolicy", "Never"},
                             {"terminationGracePeriodSeconds", 0},
                             {"enableServiceLinks", false}}))["spec"];
  EXPECT_EQ(spec["dnsPolicy"], "Default");
  EXPECT_EQ(spec["restartPolicy"], "Never");
  EXPECT_EQ(spec["terminationGracePeriodSeconds"], 0);
  EXPECT_EQ(spec["enableServiceLinks"], false);
}

TEST(DefaultingTest, ContainerGetsTerminationMessageDefaults) {
  json c = defaultedContainer(container("nginx:1.25"));
  EXPECT_EQ(c["terminationMessagePath"], "/dev/termination-log");
  EXPECT_EQ(c["terminationMessagePolicy"], "File");
}

TEST(DefaultingTest, ImagePullPolicyIsAlwaysForLatestOrUntaggedImages) {
  EXPECT_EQ(defaultedContainer(container("nginx"))["imagePullPolicy"], "Always");
  EXPECT_EQ(defaultedContainer(container("nginx:latest"))["imagePullPolicy"], "Always");
  EXPECT_EQ(defaultedContainer(container("localhost:5000/team/app"))["imagePullPolicy"], "Always");
}

TEST(DefaultingTest, ImagePullPolicyIsIfNotPresentForTagsDigestsAndBadReferences) {
  EXPECT_EQ(defaultedContainer(container("nginx:1.25"))["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(defaultedContainer(container("cr.l5d.io/linkerd/proxy:edge-24.1.1"))["imagePullPolicy"],
            "IfNotPresent");
  EXPECT_EQ(defaultedContainer(container("nginx@sha256:" + std::string(64, 'a')))["imagePullPolicy"],
            "IfNotPresent");
  EXPECT_EQ(defaultedContainer(container("Nginx"))["imagePullPolicy"], "IfNotPresent");
  EXPECT_EQ(defaultedContainer(container(""))["imagePullPolicy"], "IfNotPresent");
}

TEST(DefaultingTest, DefaultImagePullPolicyFollowsReferenceGrammar) {
  EXPECT_EQ(defaultImagePullPolicy("registry.example.com:5000/a/b:latest"), "Always");
  EXPECT_EQ(defaultImagePullPolicy("registry.example.com:5000/a/b"), "Always");
  EXPECT_EQ(defaultImagePullPolicy("a/b:v1"), "IfNotPresent");
  EXPECT_EQ(defaultImagePullPolicy("nginx@sha256:abc"), "IfNotPresent");  // bad digest
  EXPECT_EQ(defaultImagePullPolicy("a//b"), "IfNotPresent");
  EXPECT_EQ(defaultImagePullPolicy("nginx:latest@sha256:" + std::string(64, 'f')), "Always");
}

TEST(DefaultingTest, ExplicitImagePullPolicyIsKept) {
  json c = container("nginx");
  c["imagePullPolicy"] = "Never";
  EXPECT_EQ(defaultedContainer(c)["imagePullPolicy"], "Never");
}

TEST(DefaultingTest, ContainerPortProtocolDefaultsToTcp) {
  json c = container("nginx");
  c["ports"] = json::array({{{"containerPort", 80}}, {{"containerPort", 53}, {"protocol", "UDP"}}});
  json ports = defaultedContainer(c)["ports"];
  EXPECT_EQ(ports[0]["protocol"], "TCP");
  EXPECT_EQ(ports[1]["protocol"], "UDP");
}

TEST(DefaultingTest, EnvFieldRefApiVersionDefaultsToV1) {
  json c = container("nginx");
  c["env"] = json::array(
      {{{"name", "NS"}, {"valueFrom", {{"fieldRef", {{"fieldPath", "metadata.namespace"}}}}}}});
  EXPECT_EQ(defaultedContainer(c)["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
}

TEST(DefaultingTest, ProbesGetTimingAndHttpDefaults) {
  json c = container("nginx");
  c["livenessProbe"] = {{"httpGet", {{"port", 8080}}}};
  c["readinessProbe"] = {{"grpc", {{"port", 9090}}}, {"periodSeconds", 5}};
  json out = defaultedContainer(c);
  EXPECT_EQ(out["livenessProbe"],
            json::parse(R"({"httpGet": {"path": "/", "port": 8080, "scheme": "HTTP"},
                            "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1,
                            "failureThreshold": 3})"));
  EXPECT_EQ(out["readinessProbe"]["periodSeconds"], 5);
  EXPECT_EQ(out["readinessProbe"]["grpc"]["service"], "");
}

TEST(DefaultingTest, LifecycleHttpGetHandlersAreDefaulted) {
  json c = container("nginx");
  c["lifecycle"] = {{"preStop", {{"httpGet", {{"port", 80}, {"path", "/stop"}}}}}};
  EXPECT_EQ(defaultedContainer(c)["lifecycle"]["preStop"]["httpGet"]["scheme"], "HTTP");
  EXPECT_EQ(defaultedContainer(c)["lifecycle"]["preStop"]["httpGet"]["path"], "/stop");
}

TEST(DefaultingTest, InitAndEphemeralContainersAreDefaultedToo) {
  json spec = defaulted(pod({{"containers", json::array({container("a:1")})},
                             {"initContainers", json::array({container("b")})},
                             {"ephemeralContainers", json::array({container("c:2")})}}))["spec"];
  EXPECT_EQ(spec["initContainers"][0]["imagePullPolicy"], "Always");
  EXPECT_EQ(spec["initContainers"][0]["terminationMessagePolicy"], "File");
  EXPECT_EQ(spec["ephemeralContainers"][0]["imagePullPolicy"], "IfNotPresent");
}

TEST(DefaultingTest, PodRequestsDefaultToLimits) {
  json c = container("nginx");
  c["resources"] = {{"limits", {{"cpu", "500m"}, {"memory", "128Mi"}}},
                    {"requests", {{"cpu", "100m"}}}};
  EXPECT_EQ(defaultedContainer(c)["resources"]["requests"],
            json({{"cpu", "100m"}, {"memory", "128Mi"}}));
}

TEST(DefaultingTest, TemplateRequestsAreNotDefaultedFromLimits) {
  json c = container("nginx");
  c["resources"] = {{"limits", {{"cpu", "500m"}}}};
  json deployment = {{"apiVersion", "apps/v1"},
                     {"kind", "Deployment"},
                     {"spec", {{"template", {{"spec", {{"containers", json::array({c})}}}}}}}};
  json spec = defaulted(deployment)["spec"]["template"]["spec"];
  EXPECT_FALSE(spec["containers"][0]["resources"].contains("requests"));
  EXPECT_FALSE(spec.contains("enableServiceLinks"));  // SetDefaults_Pod is Pod-only
  EXPECT_EQ(spec["dnsPolicy"], "ClusterFirst");
}

TEST(DefaultingTest, HostNetworkPodPortsGetHostPorts) {
  json c = container("nginx");
  c["ports"] = json::array({{{"containerPort", 8080}}});
  json spec = defaulted(pod({{"hostNetwork", true}, {"containers", json::array({c})}}))["spec"];
  EXPECT_EQ(spec["containers"][0]["ports"][0]["hostPort"], 8080);
}

TEST(DefaultingTest, VolumeWithoutSourceBecomesEmptyDir) {
  json spec = defaulted(pod({{"containers", json::array({container("a:1")})},
                             {"volumes", json::array({{{"name", "scratch"}}})}}))["spec"];
  EXPECT_EQ(spec["volumes"][0]["emptyDir"], json::object());
}

TEST(DefaultingTest, VolumeSourcesGetDefaultModesAndTypes) {
  json volumes = json::array(
      {{{"name", "s"}, {"secret", {{"secretName", "x"}}}},
       {{"name", "c"}, {"configMap", {{"name", "x"}}}},
       {{"name", "d"},
        {"downwardAPI", {{"items", json::array({{{"path", "l"},
                                                 {"fieldRef", {{"fieldPath", "metadata.labels"}}}}})}}}},
       {{"name", "h"}, {"hostPath", {{"path", "/var/log"}}}},
       {{"name", "p"},
        {"projected", {{"sources", json::array({{{"serviceAccountToken", {{"path", "t"}}}}})}}}}});
  json out = defaulted(pod({{"containers", json::array({container("a:1")})},
                            {"volumes", volumes}}))["spec"]["volumes"];
  EXPECT_EQ(out[0]["secret"]["defaultMode"], 420);
  EXPECT_EQ(out[1]["configMap"]["defaultMode"], 420);
  EXPECT_EQ(out[2]["downwardAPI"]["defaultMode"], 420);
  EXPECT_EQ(out[2]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"], "v1");
  EXPECT_EQ(out[3]["hostPath"]["type"], "");
  EXPECT_EQ(out[4]["projected"]["defaultMode"], 420);
  EXPECT_EQ(out[4]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"], 3600);
}

TEST(DefaultingTest, ApplyDefaultsIsIdempotent) {
  json c = container("nginx");
  c["livenessProbe"] = {{"httpGet", {{"port", 80}}}};
  c["resources"] = {{"limits", {{"cpu", "1"}}}};
  json once = defaulted(pod({{"containers", json::array({c})},
                             {"volumes", json::array({{{"name", "v"}}})}}));
  EXPECT_EQ(defaulted(once), once);
  json deployment = defaulted({{"apiVersion", "apps/v1"}, {"kind", "Deployment"}});
  EXPECT_EQ(defaulted(deployment), deployment);
}

TEST(DefaultingTest, ServiceGetsTypeAffinityProtocolAndTargetPort) {
  json service = defaulted({{"apiVersion", "v1"},
                            {"kind", "Service"},
                            {"spec", {{"ports", json::array({{{"port", 80}}})}}}});
  EXPECT_EQ(service["spec"]["type"], "ClusterIP");
  EXPECT_EQ(service["spec"]["sessionAffinity"], "None");
  EXPECT_EQ(service["spec"]["internalTrafficPolicy"], "Cluster");
  EXPECT_EQ(service["spec"]["ports"][0]["protocol"], "TCP");
  EXPECT_EQ(service["spec"]["ports"][0]["targetPort"], 80);
  EXPECT_FALSE(service["spec"].contains("externalTrafficPolicy"));
}

TEST(DefaultingTest, LoadBalancerServiceGetsExternalPolicyAndNodePortAllocation) {
  json service = defaulted({{"apiVersion", "v1"},
                            {"kind", "Service"},
                            {"spec", {{"type", "LoadBalancer"},
                                      {"sessionAffinity", "ClientIP"},
                                      {"ports", json::array({{{"port", 443},
                                                              {"targetPort", "https"}}})}}}});
  EXPECT_EQ(service["spec"]["externalTrafficPolicy"], "Cluster");
  EXPECT_EQ(service["spec"]["allocateLoadBalancerNodePorts"], true);
  EXPECT_EQ(service["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"], 10800);
  EXPECT_EQ(service["spec"]["ports"][0]["targetPort"], "https");
}

TEST(DefaultingTest, NamespaceGetsMetadataNameLabelAndActivePhase) {
  json ns = defaulted({{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "web"}}}});
  EXPECT_EQ(ns["metadata"]["labels"]["kubernetes.io/metadata.name"], "web");
  EXPECT_EQ(ns["status"]["phase"], "Active");
  json nameless = defaulted(
      {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"generateName", "web-"}}}});
  EXPECT_FALSE(nameless["metadata"].contains("labels"));
}

TEST(DefaultingTest, SecretTypeDefaultsToOpaque) {
  EXPECT_EQ(defaulted({{"apiVersion", "v1"}, {"kind", "Secret"}})["type"], "Opaque");
}

TEST(DefaultingTest, DeploymentGetsReplicasStrategyAndLimits) {
  json spec = defaulted({{"apiVersion", "apps/v1"}, {"kind", "Deployment"}})["spec"];
  EXPECT_EQ(spec["replicas"], 1);
  EXPECT_EQ(spec["strategy"], json::parse(R"({"type": "RollingUpdate",
      "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})"));
  EXPECT_EQ(spec["revisionHistoryLimit"], 10);
  EXPECT_EQ(spec["progressDeadlineSeconds"], 600);
}

TEST(DefaultingTest, RecreateDeploymentGetsNoRollingUpdate) {
  json spec = defaulted({{"apiVersion", "apps/v1"},
                         {"kind", "Deployment"},
                         {"spec", {{"strategy", {{"type", "Recreate"}}}}}})["spec"];
  EXPECT_FALSE(spec["strategy"].contains("rollingUpdate"));
}

TEST(DefaultingTest, DaemonSetGetsRollingUpdateOfOne) {
  json spec = defaulted({{"apiVersion", "apps/v1"}, {"kind", "DaemonSet"}})["spec"];
  EXPECT_EQ(spec["updateStrategy"], json::parse(R"({"type": "RollingUpdate",
      "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})"));
  EXPECT_EQ(spec["revisionHistoryLimit"], 10);
}

TEST(DefaultingTest, StatefulSetGetsPolicyPartitionRetentionAndClaimDefaults) {
  json spec = defaulted({{"apiVersion", "apps/v1"},
                         {"kind", "StatefulSet"},
                         {"spec", {{"volumeClaimTemplates",
                                    json::array({{{"metadata", {{"name", "data"}}}}})}}}})["spec"];
  EXPECT_EQ(spec["podManagementPolicy"], "OrderedReady");
  EXPECT_EQ(spec["updateStrategy"]["rollingUpdate"]["partition"], 0);
  EXPECT_EQ(spec["persistentVolumeClaimRetentionPolicy"],
            json({{"whenDeleted", "Retain"}, {"whenScaled", "Retain"}}));
  EXPECT_EQ(spec["replicas"], 1);
  EXPECT_EQ(spec["volumeClaimTemplates"][0]["spec"]["volumeMode"], "Filesystem");
  EXPECT_EQ(spec["volumeClaimTemplates"][0]["status"]["phase"], "Pending");
}

TEST(DefaultingTest, ReplicaSetAndReplicationControllerGetOneReplica) {
  EXPECT_EQ(defaulted({{"apiVersion", "apps/v1"}, {"kind", "ReplicaSet"}})["spec"]["replicas"], 1);
  json rc = defaulted(
      {{"apiVersion", "v1"},
       {"kind", "ReplicationController"},
       {"spec", {{"template", {{"metadata", {{"labels", {{"app", "web"}}}}}}}}}});
  EXPECT_EQ(rc["spec"]["replicas"], 1);
  EXPECT_EQ(rc["spec"]["selector"], json({{"app", "web"}}));
  EXPECT_EQ(rc["metadata"]["labels"], json({{"app", "web"}}));
}

TEST(DefaultingTest, JobGetsCompletionsBackoffModeAndLabels) {
  json job = defaulted({{"apiVersion", "batch/v1"},
                        {"kind", "Job"},
                        {"spec", {{"template", {{"metadata", {{"labels", {{"app", "x"}}}}}}}}}});
  EXPECT_EQ(job["spec"]["completions"], 1);
  EXPECT_EQ(job["spec"]["parallelism"], 1);
  EXPECT_EQ(job["spec"]["backoffLimit"], 6);
  EXPECT_EQ(job["spec"]["completionMode"], "NonIndexed");
  EXPECT_EQ(job["spec"]["suspend"], false);
  EXPECT_EQ(job["spec"]["podReplacementPolicy"], "TerminatingOrFailed");
  EXPECT_EQ(job["spec"]["manualSelector"], false);
  EXPECT_EQ(job["metadata"]["labels"], json({{"app", "x"}}));
  EXPECT_EQ(job["spec"]["template"]["spec"]["restartPolicy"], "Always");
}

TEST(DefaultingTest, ParallelJobKeepsCompletionsUnset) {
  json job = defaulted(
      {{"apiVersion", "batch/v1"}, {"kind", "Job"}, {"spec", {{"parallelism", 3}}}});
  EXPECT_FALSE(job["spec"].contains("completions"));
  EXPECT_EQ(job["spec"]["parallelism"], 3);
}

TEST(DefaultingTest, CronJobGetsPolicyHistoryAndTemplateDefaults) {
  json cron = defaulted(
      {{"apiVersion", "batch/v1"},
       {"kind", "CronJob"},
       {"spec", {{"jobTemplate", {{"spec", {{"template", {{"spec", {{"containers",
            json::array({container("busybox")})}}}}}}}}}}}});
  EXPECT_EQ(cron["spec"]["concurrencyPolicy"], "Allow");
  EXPECT_EQ(cron["spec"]["suspend"], false);
  EXPECT_EQ(cron["spec"]["successfulJobsHistoryLimit"], 3);
  EXPECT_EQ(cron["spec"]["failedJobsHistoryLimit"], 1);
  json tmpl = cron["spec"]["jobTemplate"]["spec"];
  EXPECT_FALSE(tmpl.contains("backoffLimit"));  // SetDefaults_Job is for Jobs only
  EXPECT_EQ(tmpl["template"]["spec"]["containers"][0]["imagePullPolicy"], "Always");
}

TEST(DefaultingTest, LimitRangeContainerDefaultsComeFromMaxAndMin) {
  json lr = defaulted(json::parse(R"({"apiVersion": "v1", "kind": "LimitRange",
      "spec": {"limits": [{"type": "Container", "max": {"cpu": "2"},
                           "min": {"memory": "64Mi"}}]}})"));
  EXPECT_EQ(lr["spec"]["limits"][0]["default"], json({{"cpu", "2"}}));
  EXPECT_EQ(lr["spec"]["limits"][0]["defaultRequest"], json({{"cpu", "2"}, {"memory", "64Mi"}}));
}

TEST(DefaultingTest, UnknownKindsAndBadInputAreLeftAlone) {
  json custom = {{"apiVersion", "linkerd.io/v1alpha2"}, {"kind", "ServiceProfile"}, {"spec", {}}};
  EXPECT_EQ(defaulted(custom), custom);
  json extensions = {{"apiVersion", "extensions/v1beta1"}, {"kind", "Deployment"}};
  EXPECT_EQ(defaulted(extensions), extensions);
  json bad = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"spec", "not an object"}};
  EXPECT_EQ(defaulted(bad), bad);
  json bad_containers = pod({{"containers", 7}, {"volumes", json::array({1, "x"})}});
  EXPECT_NO_THROW(applyDefaults(bad_containers));
  json scalar = 42;
  EXPECT_EQ(defaulted(scalar), 42);
}

}  // namespace
}  // namespace harness::sim
