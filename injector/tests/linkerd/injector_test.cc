#include "harness/injector/linkerd/injector.h"

#include <gtest/gtest.h>

#include "fixtures.h"
#include "harness/injector/linkerd/annotations.h"

namespace harness::injector::linkerd {
namespace {

using nlohmann::json;
using testing::lookupOver;
using testing::namespaceWith;
using testing::opValue;
using testing::paths;
using testing::pod;
using testing::podRequest;
using testing::proxyOf;

json replicaSet(const std::string& name, const json& owners) {
  json rs = {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata", {{"name", name}, {"namespace", "emojivoto"}, {"uid", "rs-uid"}}}};
  if (!owners.is_null()) rs["metadata"]["ownerReferences"] = owners;
  return rs;
}

json deployment(const std::string& name) {
  return {
      {"apiVersion", "apps/v1"},
      {"kind", "Deployment"},
      {"metadata",
       {{"name", name}, {"namespace", "emojivoto"}, {"uid", "d-uid"}, {"resourceVersion", "7"}}}};
}

json ownedPod(const std::string& kind, const std::string& name,
              const std::map<std::string, std::string>& annotations = {}) {
  json p = pod(annotations);
  p["metadata"]["ownerReferences"] = {{{"apiVersion", "apps/v1"}, {"kind", kind}, {"name", name}}};
  return p;
}

bool hasLog(const Outcome& o, LogLine::Level level, const std::string& message) {
  for (const auto& l : o.logs) {
    if (l.level == level && l.message == message) return true;
  }
  return false;
}

TEST(Admit, MissingNamespaceIsAHandlerError) {
  AdmissionInput in = podRequest(pod(), namespaceWith({}));
  in.namespace_object.reset();
  const Outcome o = admit(Values{}, in);
  EXPECT_EQ(o.decision, Decision::kHandlerError);
  EXPECT_EQ(o.error_message, "namespace \"emojivoto\" not found");
  EXPECT_FALSE(o.request_metric.has_value());
  EXPECT_TRUE(hasLog(o, LogLine::Level::kError,
                     "failed to run webhook handler. Reason: namespace \"emojivoto\" not found"));
}

TEST(Admit, UndecodableObjectIsAHandlerErrorWithoutMetrics) {
  json p = pod();
  p["spec"]["containers"] = "web";
  const Outcome o =
      admit(Values{}, podRequest(p, namespaceWith({{"linkerd.io/inject", "enabled"}})));
  EXPECT_EQ(o.decision, Decision::kHandlerError);
  EXPECT_FALSE(o.report.has_value());
  EXPECT_FALSE(o.request_metric.has_value());
}

TEST(Admit, RenderErrorCountsTheRequestButNotTheResponse) {
  Values v;
  v.proxy_init.iptables_mode = "bogus";
  const Outcome o = admit(v, podRequest(pod(), namespaceWith({{"linkerd.io/inject", "enabled"}})));
  EXPECT_EQ(o.decision, Decision::kHandlerError);
  EXPECT_TRUE(o.request_metric.has_value());
  EXPECT_FALSE(o.response_metric.has_value());
  EXPECT_TRUE(o.events.empty());
}

TEST(Admit, InjectsWithCreatedByAndInheritedInjectAnnotation) {
  const Outcome o =
      admit(Values{}, podRequest(pod(), namespaceWith({{"linkerd.io/inject", "enabled"}})));
  ASSERT_EQ(o.decision, Decision::kInject);
  EXPECT_EQ(opValue(o.patch, "/metadata/annotations/linkerd.io~1created-by"),
            "linkerd/proxy-injector edge-26.8.3");
  EXPECT_EQ(opValue(o.patch, "/metadata/annotations/linkerd.io~1inject"), "enabled");
  EXPECT_EQ(o.report->annotation_at, "namespace");
  EXPECT_TRUE(hasLog(o, LogLine::Level::kInfo, "received pod/web-1"));
  EXPECT_TRUE(hasLog(o, LogLine::Level::kInfo, "injection patch generated for: pod/web-1"));
}

// The debug lines hold the whole patch as text; a caller that never shows them (offline
// `inject`) leaves them out, and everything else is the same.
TEST(Admit, DebugLogsCanBeLeftOut) {
  // An inject and an annotation patch (the pod's ports are among the default opaque ports).
  for (const auto& ns : {namespaceWith({{"linkerd.io/inject", "enabled"}}), namespaceWith({})}) {
    AdmissionInput in = podRequest(pod({}, {3306}), ns);
    const Outcome with = admit(Values{}, in);
    in.debug_logs = false;
    const Outcome without = admit(Values{}, in);
    std::vector<LogLine> expected;
    for (const auto& line : with.logs) {
      if (line.level != LogLine::Level::kDebug) expected.push_back(line);
    }
    ASSERT_LT(expected.size(), with.logs.size());
    ASSERT_EQ(without.logs.size(), expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      EXPECT_EQ(without.logs[i].level, expected[i].level);
      EXPECT_EQ(without.logs[i].message, expected[i].message);
    }
    auto summary = [](const Outcome& o) {
      json j = o.toJson();
      j.erase("logs");
      return j;
    };
    EXPECT_EQ(summary(without), summary(with));
  }
}

TEST(Admit, NamespaceConfigIsInheritedOnlyWhenThePodLacksTheKey) {
  const json ns = namespaceWith({{"linkerd.io/inject", "enabled"},
                                 {"config.linkerd.io/proxy-log-level", "debug"},
                                 {"config.linkerd.io/skip-outbound-ports", "34567"},
                                 {"config.alpha.linkerd.io/proxy-wait-before-exit-seconds", "300"},
                                 {"config.linkerd.io/enable-gateway", "true"},
                                 {"config.linkerd.io/invalid-key", "invalid-value"}});
  const Outcome o =
      admit(Values{}, podRequest(pod({{"config.linkerd.io/proxy-log-level", "info"}}), ns));
  ASSERT_EQ(o.decision, Decision::kInject);
  EXPECT_TRUE(
      opValue(o.patch, "/metadata/annotations/config.linkerd.io~1proxy-log-level").is_null());
  EXPECT_EQ(opValue(o.patch, "/metadata/annotations/config.linkerd.io~1skip-outbound-ports"),
            "34567");
  EXPECT_EQ(
      opValue(o.patch,
              "/metadata/annotations/config.alpha.linkerd.io~1proxy-wait-before-exit-seconds"),
      "300");
  EXPECT_TRUE(
      opValue(o.patch, "/metadata/annotations/config.linkerd.io~1enable-gateway").is_null());
  EXPECT_TRUE(opValue(o.patch, "/metadata/annotations/config.linkerd.io~1invalid-key").is_null());
  const json proxy = proxyOf(o.patch);
  EXPECT_EQ(testing::envOf(proxy, "LINKERD2_PROXY_LOG"), "info,[{headers}]=off,[{request}]=off");
  EXPECT_FALSE(testing::envOf(proxy, "LINKERD2_PROXY_INBOUND_GATEWAY_SUFFIXES").has_value());
}

TEST(Admit, InheritanceForTemplatesChecksTopLevelAnnotations) {
  // The template sets a log level, the Deployment's own metadata does not: the namespace value
  // is copied over the template's (upstream quirk).
  json d = json::parse(R"({"apiVersion": "apps/v1", "kind": "Deployment",
      "metadata": {"name": "web", "namespace": "emojivoto"},
      "spec": {"template": {
          "metadata": {"annotations": {"config.linkerd.io/proxy-log-level": "info"}},
                            "spec": {"containers": [{"name": "web", "image": "web"}]}}}})");
  AdmissionInput in =
      podRequest(d, namespaceWith({{"linkerd.io/inject", "enabled"},
                                   {"config.linkerd.io/proxy-log-level", "debug"}}));
  in.request_kind = "Deployment";
  const Outcome o = admit(Values{}, in);
  ASSERT_EQ(o.decision, Decision::kInject);
  EXPECT_EQ(
      opValue(o.patch, "/spec/template/metadata/annotations/config.linkerd.io~1proxy-log-level"),
      "debug");
  EXPECT_EQ(opValue(o.patch, "/spec/template/metadata/labels/linkerd.io~1proxy-deployment"), "web");
  EXPECT_EQ(opValue(o.patch, "/spec/template/metadata/labels/linkerd.io~1workload-ns"),
            "emojivoto");
  EXPECT_EQ(o.owner_kind, "");
  EXPECT_TRUE(o.events.empty());
}

TEST(Admit, ReplicaSetOwnedPodResolvesToDeployment) {
  AdmissionInput in = podRequest(ownedPod("ReplicaSet", "web-5f8d"),
                                 namespaceWith({{"linkerd.io/inject", "enabled"}}));
  in.owner_lookup = lookupOver(
      {replicaSet("web-5f8d", {{{"kind", "Deployment"}, {"name", "web"}}}), deployment("web")});
  const Outcome o = admit(Values{}, in);
  ASSERT_EQ(o.decision, Decision::kInject);
  EXPECT_EQ(o.owner_kind, "deployment");
  EXPECT_EQ(o.owner_name, "web");
  EXPECT_EQ(opValue(o.patch, "/metadata/labels/linkerd.io~1proxy-deployment"), "web");
  ASSERT_EQ(o.events.size(), 1u);
  EXPECT_EQ(o.events[0].type, "Normal");
  EXPECT_EQ(o.events[0].reason, "Injected");
  EXPECT_EQ(o.events[0].message, "Linkerd sidecar proxy injected");
  EXPECT_EQ(o.events[0].involved_object,
            json::parse(R"({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                            "namespace": "emojivoto", "uid": "d-uid", "resourceVersion": "7"})"));
}

TEST(Admit, ReplicaSetWithUnsupportedOwnerStaysReplicaSet) {
  AdmissionInput in = podRequest(ownedPod("ReplicaSet", "web-5f8d"),
                                 namespaceWith({{"linkerd.io/inject", "enabled"}}));
  in.owner_lookup = lookupOver({replicaSet("web-5f8d", {{{"kind", "Rollout"}, {"name", "web"}}})});
  const Outcome o = admit(Values{}, in);
  EXPECT_EQ(o.owner_kind, "replicaset");
  EXPECT_EQ(opValue(o.patch, "/metadata/labels/linkerd.io~1proxy-replicaset"), "web-5f8d");
  EXPECT_EQ(o.events.size(), 1u);
}

TEST(Admit, JobOwnedByCronJobGetsNoOwnerLabel) {
  json job = {{"apiVersion", "batch/v1"},
              {"kind", "Job"},
              {"metadata",
               {{"name", "nightly-123"},
                {"namespace", "emojivoto"},
                {"ownerReferences", {{{"kind", "CronJob"}, {"name", "nightly"}}}}}}};
  json cronjob = {{"apiVersion", "batch/v1"},
                  {"kind", "CronJob"},
                  {"metadata", {{"name", "nightly"}, {"namespace", "emojivoto"}}}};
  AdmissionInput in =
      podRequest(ownedPod("Job", "nightly-123"), namespaceWith({{"linkerd.io/inject", "enabled"}}));
  in.owner_lookup = lookupOver({job, cronjob});
  const Outcome o = admit(Values{}, in);
  ASSERT_EQ(o.decision, Decision::kInject);
  EXPECT_EQ(o.owner_kind, "cronjob");
  for (const auto& path : paths(o.patch)) {
    EXPECT_EQ(path.find("/metadata/labels/linkerd.io~1proxy-"), std::string::npos) << path;
  }
  ASSERT_EQ(o.events.size(), 1u);
  EXPECT_EQ(o.events[0].involved_object["kind"], "CronJob");
}

TEST(Admit, StandalonePodHasNoEventAndWarnsAboutParent) {
  const Outcome o =
      admit(Values{}, podRequest(pod(), namespaceWith({{"linkerd.io/inject", "enabled"}})));
  EXPECT_EQ(o.owner_kind, "pod");
  EXPECT_TRUE(o.events.empty());
  EXPECT_TRUE(
      hasLog(o, LogLine::Level::kWarning, "couldn't retrieve parent object emojivoto-pod-web-1"));
}

TEST(Admit, UnknownOwnerKindHasEmptyOwnerKindLabel) {
  const Outcome o = admit(Values{}, podRequest(ownedPod("Node", "node-1"),
                                               namespaceWith({{"linkerd.io/inject", "enabled"}})));
  EXPECT_EQ(o.owner_kind, "");
  EXPECT_EQ(o.request_metric->at("owner_kind"), "");
}

TEST(Admit, SkippedEventEvenWhenAnAnnotationPatchFollows) {
  AdmissionInput in =
      podRequest(ownedPod("ReplicaSet", "web-5f8d", {{"linkerd.io/inject", "disabled"}}),
                 namespaceWith({{"linkerd.io/inject", "enabled"},
                                {"config.linkerd.io/opaque-ports", "4000-4100"}}));
  in.owner_lookup = lookupOver(
      {replicaSet("web-5f8d", {{{"kind", "Deployment"}, {"name", "web"}}}), deployment("web")});
  const Outcome o = admit(Values{}, in);
  ASSERT_EQ(o.decision, Decision::kAnnotationPatch);
  EXPECT_EQ(o.patch, json::parse(R"([{"op": "add",
      "path": "/metadata/annotations/config.linkerd.io~1opaque-ports", "value": "4000-4100"}])"));
  ASSERT_EQ(o.events.size(), 1u);
  EXPECT_EQ(o.events[0].reason, "InjectionSkipped");
  EXPECT_EQ(o.events[0].message,
            "Linkerd sidecar proxy injection skipped: pod has the annotation "
            "\"linkerd.io/inject:disabled\"");
  EXPECT_EQ(o.response_metric->at("skip"), "false");
  EXPECT_EQ(o.response_metric->at("skip_reason"), "");
  EXPECT_TRUE(hasLog(o, LogLine::Level::kInfo, "annotation patch generated for: pod/web-1"));
}

TEST(Admit, SkippedPodWithoutPatchCountsSkipReasons) {
  const Outcome o = admit(Values{}, podRequest(pod(), namespaceWith({})));
  ASSERT_EQ(o.decision, Decision::kAllow);
  EXPECT_TRUE(o.patch.is_null());
  EXPECT_EQ(o.response_metric->at("skip"), "true");
  EXPECT_EQ(o.response_metric->at("skip_reason"), "injection_enable_annotation_absent");
  EXPECT_TRUE(hasLog(o, LogLine::Level::kInfo,
                     "skipped pod/web-1: neither the namespace nor the pod have the annotation "
                     "\"linkerd.io/inject:enabled\""));
}

TEST(Admit, SkippedPodGetsFilteredDefaultOpaquePorts) {
  const Outcome o =
      admit(Values{}, podRequest(pod({}, {11211, 8080, 3306, 11211}), namespaceWith({})));
  ASSERT_EQ(o.decision, Decision::kAnnotationPatch);
  EXPECT_EQ(o.patch, json::parse(R"([
      {"op": "add", "path": "/metadata/annotations", "value": {}},
      {"op": "add", "path": "/metadata/annotations/config.linkerd.io~1opaque-ports",
       "value": "11211,3306,11211"}])"));
}

TEST(Admit, PodWithOwnOpaquePortsGetsNoAnnotationPatch) {
  const Outcome o =
      admit(Values{}, podRequest(pod({{"config.linkerd.io/opaque-ports", "8080"}}, {3306}),
                                 namespaceWith({{"config.linkerd.io/opaque-ports", "1"}})));
  EXPECT_EQ(o.decision, Decision::kAllow);
}

TEST(Admit, InjectedPodFilteredOpaquePortsDriveTheEnv) {
  const Outcome o = admit(Values{}, podRequest(pod({}, {11211, 3306, 80}),
                                               namespaceWith({{"linkerd.io/inject", "enabled"}})));
  ASSERT_EQ(o.decision, Decision::kInject);
  EXPECT_EQ(opValue(o.patch, "/metadata/annotations/config.linkerd.io~1opaque-ports"),
            "11211,3306");
  EXPECT_EQ(
      testing::envOf(proxyOf(o.patch), "LINKERD2_PROXY_INBOUND_PORTS_DISABLE_PROTOCOL_DETECTION"),
      "11211,3306");
  EXPECT_EQ(testing::envOf(proxyOf(o.patch), "LINKERD2_PROXY_INBOUND_PORTS"), "11211,3306,80");
}

TEST(Admit, NoMatchingPortsKeepsTheFullDefaultInEnv) {
  const Outcome o = admit(
      Values{}, podRequest(pod({}, {8080}), namespaceWith({{"linkerd.io/inject", "enabled"}})));
  ASSERT_EQ(o.decision, Decision::kInject);
  EXPECT_TRUE(opValue(o.patch, "/metadata/annotations/config.linkerd.io~1opaque-ports").is_null());
  EXPECT_EQ(
      testing::envOf(proxyOf(o.patch), "LINKERD2_PROXY_INBOUND_PORTS_DISABLE_PROTOCOL_DETECTION"),
      "25,587,3306,4444,5432,6379,9300,11211");
}

TEST(Admit, ServiceGetsFilteredOpaquePortsAnnotation) {
  json svc = json::parse(R"({"apiVersion": "v1", "kind": "Service",
      "metadata": {"name": "db", "namespace": "emojivoto", "annotations": {"a": "b"}},
      "spec": {"ports": [{"port": 9090, "targetPort": 3306}, {"port": 3306}, {"port": 80}]}})");
  AdmissionInput in = podRequest(svc, namespaceWith({{"linkerd.io/inject", "enabled"}}));
  in.request_kind = "Service";
  const Outcome o = admit(Values{}, in);
  ASSERT_EQ(o.decision, Decision::kAnnotationPatch);
  EXPECT_EQ(o.patch, json::parse(R"([{"op": "add",
      "path": "/metadata/annotations/config.linkerd.io~1opaque-ports", "value": "9090,3306"}])"));
  EXPECT_EQ(o.request_metric->at("owner_kind"), "");
  EXPECT_EQ(o.response_metric->at("skip"), "false");
}

TEST(Admit, ServiceWithoutDefaultPortsIsAllowedWithoutMetricOrLog) {
  json svc = json::parse(R"({"apiVersion": "v1", "kind": "Service",
      "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80, "targetPort": 8080}]}})");
  AdmissionInput in = podRequest(svc, namespaceWith({}));
  in.request_kind = "Service";
  const Outcome o = admit(Values{}, in);
  EXPECT_EQ(o.decision, Decision::kAllow);
  EXPECT_TRUE(o.request_metric.has_value());
  EXPECT_FALSE(o.response_metric.has_value());
  for (const auto& l : o.logs) EXPECT_EQ(l.message.find("skipped"), std::string::npos);
}

TEST(Admit, NamespaceOpaquePortsAreCopiedVerbatimToAnyKind) {
  json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "cfg"}}}};
  AdmissionInput in =
      podRequest(cm, namespaceWith({{"config.linkerd.io/opaque-ports", " 3306, x"}}));
  in.request_kind = "ConfigMap";
  const Outcome o = admit(Values{}, in);
  ASSERT_EQ(o.decision, Decision::kAnnotationPatch);
  EXPECT_EQ(o.patch.back()["value"], " 3306, x");
  EXPECT_EQ(o.report->reasonCodes(), "unsupported_resource");
}

TEST(Admit, AlreadyInjectedPodIsSkipped) {
  const Outcome first =
      admit(Values{}, podRequest(pod(), namespaceWith({{"linkerd.io/inject", "enabled"}})));
  ASSERT_EQ(first.decision, Decision::kInject);
  // Apply the patch's container ops to build the injected pod.
  json injected = pod();
  injected["metadata"]["annotations"] = json::object();
  injected["spec"]["initContainers"] = json::array();
  for (const auto& op : first.patch) {
    const std::string path = op["path"];
    if (path.rfind("/spec/initContainers/", 0) == 0)
      injected["spec"]["initContainers"].push_back(op["value"]);
    if (path.rfind("/metadata/annotations/", 0) == 0) {
      injected["metadata"]["annotations"][op["path"].get<std::string>().substr(22)] = op["value"];
    }
  }
  const Outcome second =
      admit(Values{}, podRequest(injected, namespaceWith({{"linkerd.io/inject", "enabled"}})));
  EXPECT_EQ(second.report->reasonCodes(), "sidecar_already_exists");
  EXPECT_NE(second.decision, Decision::kInject);
}

TEST(Metrics, LabelsCarryThePodsOwnConfigAnnotations) {
  const Outcome o =
      admit(Values{}, podRequest(pod({{"config.linkerd.io/proxy-cpu-limit", "1"},
                                      {"config.linkerd.io/opaque-ports", "8080"}}),
                                 namespaceWith({{"linkerd.io/inject", "enabled"},
                                                {"config.linkerd.io/proxy-memory-limit", "1Gi"}})));
  ASSERT_TRUE(o.request_metric.has_value());
  const MetricLabels& l = *o.request_metric;
  EXPECT_EQ(l.size(), 3 + proxyAnnotations().size());
  EXPECT_EQ(l.at("owner_kind"), "pod");
  EXPECT_EQ(l.at("namespace"), "emojivoto");
  EXPECT_EQ(l.at("annotation_at"), "namespace");
  EXPECT_EQ(l.at("proxy_cpu_limit"), "1");
  EXPECT_EQ(l.at("opaque_ports"), "8080");
  EXPECT_EQ(l.at("proxy_memory_limit"), "");  // inherited values are not labels
  EXPECT_EQ(l.at("proxy_additional_env"), "");
  ASSERT_TRUE(o.response_metric.has_value());
  EXPECT_EQ(o.response_metric->size(), l.size() + 2);
  EXPECT_EQ(o.response_metric->at("skip"), "false");
}

TEST(Metrics, ProxyAnnotationsHasFortyKeys) {
  EXPECT_EQ(proxyAnnotations().size(), 40u);
  EXPECT_EQ(metricLabelName("config.linkerd.io/proxy-cpu-limit"), "proxy_cpu_limit");
  EXPECT_EQ(metricLabelName("config.alpha.linkerd.io/proxy-wait-before-exit-seconds"),
            "proxy_wait_before_exit_seconds");
}

TEST(Owners, PodWithSeveralOwnersIsItsOwnOwner) {
  json p = pod();
  p["metadata"]["ownerReferences"] = {{{"kind", "ReplicaSet"}, {"name", "a"}},
                                      {{"kind", "ReplicaSet"}, {"name", "b"}}};
  EXPECT_EQ(resolvePodOwner(p, "emojivoto", nullptr),
            (std::pair<std::string, std::string>{"pod", "web-1"}));
}

TEST(Owners, MissingReplicaSetFallsBackToItself) {
  EXPECT_EQ(resolvePodOwner(ownedPod("ReplicaSet", "web-5f8d"), "emojivoto", lookupOver({})),
            (std::pair<std::string, std::string>{"replicaset", "web-5f8d"}));
}

TEST(Owners, OtherOwnerKindsAreLowerCased) {
  EXPECT_EQ(resolvePodOwner(ownedPod("StatefulSet", "db"), "emojivoto", nullptr),
            (std::pair<std::string, std::string>{"statefulset", "db"}));
}

TEST(Outcome, ToJsonSummarizes) {
  const Outcome o = admit(Values{}, podRequest(pod(), namespaceWith({})));
  const json j = o.toJson();
  EXPECT_EQ(j["decision"], "allow");
  EXPECT_EQ(j["report"]["reasons"], json::parse(R"(["injection_enable_annotation_absent"])"));
  EXPECT_EQ(j["report"]["injectable"], false);
}

}  // namespace
}  // namespace harness::injector::linkerd
