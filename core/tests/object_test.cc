#include "harness/core/object.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/label_selector.h"

namespace harness::core {
namespace {

using nlohmann::json;

json deployment() {
  return json::parse(R"({
    "apiVersion": "apps/v1", "kind": "Deployment",
    "metadata": {"name": "web", "namespace": "prod", "uid": "u-1", "resourceVersion": "42",
                 "labels": {"app": "web"}, "annotations": {"note": "x"}},
    "spec": {"template": {"metadata": {"labels": {"app": "web"}},
                          "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}
  })");
}

// ---------------------------------------------------------------------------------------------
// Names

TEST(GroupVersionTest, ParsesGroupAndCoreVersions) {
  EXPECT_EQ(*GroupVersion::parse("apps/v1"), (GroupVersion{"apps", "v1"}));
  EXPECT_EQ(*GroupVersion::parse("v1"), (GroupVersion{"", "v1"}));
  EXPECT_EQ(*GroupVersion::parse(""), GroupVersion{});
  EXPECT_EQ(*GroupVersion::parse("/"), GroupVersion{});
}

TEST(GroupVersionTest, MoreThanOneSlashIsAnError) {
  auto gv = GroupVersion::parse("a/b/c");
  ASSERT_FALSE(gv.ok());
  EXPECT_EQ(gv.error().message, "unexpected GroupVersion string: a/b/c");
}

TEST(GroupVersionTest, ApiVersionStringOmitsTheCoreGroup) {
  EXPECT_EQ((GroupVersion{"", "v1"}).toString(), "v1");
  EXPECT_EQ((GroupVersionKind{"apps", "v1", "Deployment"}).apiVersion(), "apps/v1");
  EXPECT_EQ((GroupVersionResource{"batch", "v1", "jobs"}).apiVersion(), "batch/v1");
}

TEST(GroupVersionTest, StringFormsMatchGo) {
  EXPECT_EQ((GroupVersionKind{"apps", "v1", "Deployment"}).toString(), "apps/v1, Kind=Deployment");
  EXPECT_EQ((GroupVersionKind{"", "v1", "Pod"}).toString(), "/v1, Kind=Pod");
  EXPECT_EQ((GroupVersionResource{"", "v1", "pods"}).toString(), "/v1, Resource=pods");
}

TEST(ObjectTest, GroupVersionKindOfAnObject) {
  EXPECT_EQ(*groupVersionKindOf(deployment()), (GroupVersionKind{"apps", "v1", "Deployment"}));
  auto bad = groupVersionKindOf(json{{"apiVersion", "a/b/c"}, {"kind", "X"}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "apiVersion: unexpected GroupVersion string: a/b/c");
}

// ---------------------------------------------------------------------------------------------
// ObjectMeta reads

TEST(ObjectTest, MetadataStringAccessors) {
  const json d = deployment();
  EXPECT_EQ(*apiVersionOf(d), "apps/v1");
  EXPECT_EQ(*kindOf(d), "Deployment");
  EXPECT_EQ(*nameOf(d), "web");
  EXPECT_EQ(*namespaceOf(d), "prod");
  EXPECT_EQ(*uidOf(d), "u-1");
  EXPECT_EQ(*resourceVersionOf(d), "42");
  EXPECT_EQ(*generateNameOf(d), "");
}

TEST(ObjectTest, AbsentOrNullFieldsReadAsEmpty) {
  EXPECT_EQ(*nameOf(json::object()), "");
  EXPECT_EQ(*namespaceOf(json{{"metadata", nullptr}}), "");
  EXPECT_EQ(*nameOf(json{{"metadata", {{"name", nullptr}}}}), "");
  EXPECT_TRUE(annotationsOf(json::object())->empty());
}

TEST(ObjectTest, WrongTypeNamesTheField) {
  auto name = nameOf(json{{"metadata", {{"name", 7}}}});
  ASSERT_FALSE(name.ok());
  EXPECT_EQ(name.error().message, "metadata.name: expected string, got number");
  auto ns = namespaceOf(json{{"metadata", json::array()}});
  ASSERT_FALSE(ns.ok());
  EXPECT_EQ(ns.error().message, "metadata: expected object, got array");
  auto root = kindOf(json("Pod"));
  ASSERT_FALSE(root.ok());
  EXPECT_EQ(root.error().message, "expected object, got string");
}

TEST(ObjectTest, LabelValueThatIsNotAStringNamesItsPath) {
  auto labels = labelsOf(json{{"metadata", {{"labels", {{"app", 1}}}}}});
  ASSERT_FALSE(labels.ok());
  EXPECT_EQ(labels.error().message, "metadata.labels.app: expected string, got number");
  auto not_a_map = annotationsOf(json{{"metadata", {{"annotations", "x"}}}});
  ASSERT_FALSE(not_a_map.ok());
  EXPECT_EQ(not_a_map.error().message, "metadata.annotations: expected object, got string");
}

TEST(ObjectTest, NullLabelValueReadsAsEmptyStringLikeGoDecoding) {
  auto labels = labelsOf(json{{"metadata", {{"labels", {{"app", nullptr}}}}}});
  ASSERT_TRUE(labels.ok());
  EXPECT_EQ(*labels, (StringMap{{"app", ""}}));
}

TEST(ObjectTest, SingleLabelAndAnnotation) {
  const json d = deployment();
  EXPECT_EQ(**labelOf(d, "app"), "web");
  EXPECT_FALSE(labelOf(d, "tier")->has_value());
  EXPECT_EQ(**annotationOf(d, "note"), "x");
  EXPECT_FALSE(annotationOf(json::object(), "note")->has_value());
}

// ---------------------------------------------------------------------------------------------
// Writes

TEST(ObjectTest, SetLabelCreatesMetadataAndLabels) {
  json o = json{{"kind", "Pod"}};
  ASSERT_TRUE(setLabel(o, "app", "web").ok());
  EXPECT_EQ(o, json::parse(R"({"kind": "Pod", "metadata": {"labels": {"app": "web"}}})"));
  json with_null = json{{"metadata", {{"labels", nullptr}}}};
  ASSERT_TRUE(setLabel(with_null, "a", "b").ok());
  EXPECT_EQ(with_null["metadata"]["labels"], json({{"a", "b"}}));
}

TEST(ObjectTest, SetLabelOverwritesAnExistingValue) {
  json d = deployment();
  ASSERT_TRUE(setLabel(d, "app", "api").ok());
  EXPECT_EQ(d["metadata"]["labels"], json({{"app", "api"}}));
}

TEST(ObjectTest, SetOnAWrongTypeFailsAndLeavesTheObjectUnchanged) {
  json o = json{{"metadata", {{"labels", json::array()}}}};
  const json before = o;
  auto result = setLabel(o, "a", "b");
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message, "metadata.labels: expected object, got array");
  EXPECT_EQ(o, before);
  json scalar_metadata = json{{"metadata", 3}};
  EXPECT_FALSE(setAnnotation(scalar_metadata, "a", "b").ok());
  EXPECT_EQ(scalar_metadata, json({{"metadata", 3}}));
}

TEST(ObjectTest, RemoveReportsWhetherTheKeyWasThere) {
  json d = deployment();
  EXPECT_TRUE(*removeLabel(d, "app"));
  EXPECT_EQ(d["metadata"]["labels"], json::object());
  EXPECT_FALSE(*removeLabel(d, "app"));
  EXPECT_TRUE(*removeAnnotation(d, "note"));
  json empty = json::object();
  EXPECT_FALSE(*removeAnnotation(empty, "note"));
  EXPECT_EQ(empty, json::object());
}

TEST(ObjectTest, SetNameAndNamespace) {
  json o = json::object();
  ASSERT_TRUE(setName(o, "a").ok());
  ASSERT_TRUE(setNamespace(o, "ns").ok());
  ASSERT_TRUE(setAnnotation(o, "k", "v").ok());
  EXPECT_EQ(o, json::parse(R"({"metadata": {"name": "a", "namespace": "ns",
                                            "annotations": {"k": "v"}}})"));
}

// ---------------------------------------------------------------------------------------------
// Owner references

TEST(OwnerReferenceTest, ParsesAllFields) {
  const json o = json::parse(R"({"metadata": {"ownerReferences": [
      {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "u",
       "controller": true, "blockOwnerDeletion": false},
      {"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u2"}]}})");
  auto refs = ownerReferencesOf(o);
  ASSERT_TRUE(refs.ok()) << refs.error().message;
  ASSERT_EQ(refs->size(), 2u);
  EXPECT_EQ((*refs)[0], (OwnerReference{"apps/v1", "ReplicaSet", "web-1", "u", true, false}));
  EXPECT_EQ((*refs)[1], (OwnerReference{"v1", "ConfigMap", "c", "u2", std::nullopt, std::nullopt}));
  EXPECT_EQ(controllerOf(*refs)->name, "web-1");
}

TEST(OwnerReferenceTest, AbsentListIsEmptyAndNoControllerIsNullopt) {
  EXPECT_TRUE(ownerReferencesOf(json::object())->empty());
  EXPECT_FALSE(controllerOf({OwnerReference{"v1", "X", "x", "u", false, std::nullopt}}));
}

TEST(OwnerReferenceTest, TypeErrorsNameTheField) {
  auto bad_field = ownerReferencesOf(
      json::parse(R"({"metadata": {"ownerReferences": [{"name": "a"}, {"controller": "yes"}]}})"));
  ASSERT_FALSE(bad_field.ok());
  EXPECT_EQ(bad_field.error().message,
            "metadata.ownerReferences[1].controller: expected boolean, got string");
  auto bad_uid =
      ownerReferencesOf(json::parse(R"({"metadata": {"ownerReferences": [{"uid": 5}]}})"));
  ASSERT_FALSE(bad_uid.ok());
  EXPECT_EQ(bad_uid.error().message,
            "metadata.ownerReferences[0].uid: expected string, got number");
  auto not_a_list = ownerReferencesOf(json::parse(R"({"metadata": {"ownerReferences": {}}})"));
  ASSERT_FALSE(not_a_list.ok());
  EXPECT_EQ(not_a_list.error().message, "metadata.ownerReferences: expected array, got object");
}

TEST(OwnerReferenceTest, ToJsonOmitsUnsetOptionalFields) {
  EXPECT_EQ((OwnerReference{"v1", "Pod", "p", "u", std::nullopt, true}).toJson(),
            json::parse(R"({"apiVersion": "v1", "kind": "Pod", "name": "p", "uid": "u",
                            "blockOwnerDeletion": true})"));
}

// ---------------------------------------------------------------------------------------------
// Pod templates

TEST(PodTemplateTest, PointersForTheWorkloadKinds) {
  EXPECT_EQ(podTemplatePointer("Pod"), "");
  for (const char* kind :
       {"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job"}) {
    EXPECT_EQ(podTemplatePointer(kind), "/spec/template") << kind;
  }
  EXPECT_EQ(podTemplatePointer("CronJob"), "/spec/jobTemplate/spec/template");
  EXPECT_EQ(podTemplatePointer("PodTemplate"), "/template");
  EXPECT_EQ(podTemplatePointer("ConfigMap"), std::nullopt);
  EXPECT_EQ(podSpecPointer("Pod"), "/spec");
  EXPECT_EQ(podSpecPointer("CronJob"), "/spec/jobTemplate/spec/template/spec");
  EXPECT_EQ(podMetadataPointer("Deployment"), "/spec/template/metadata");
  EXPECT_EQ(podSpecPointer("Service"), std::nullopt);
}

TEST(PodTemplateTest, PodSpecOfAWorkloadAndOfAPod) {
  const json d = deployment();
  auto spec = podSpecOf(d);
  ASSERT_TRUE(spec.ok());
  ASSERT_NE(*spec, nullptr);
  EXPECT_EQ((**spec)["containers"][0]["name"], "app");
  const json pod = json::parse(R"({"kind": "Pod", "spec": {"containers": []}})");
  EXPECT_EQ(**podSpecOf(pod), json::parse(R"({"containers": []})"));
  auto meta = podMetadataOf(d);
  ASSERT_TRUE(meta.ok());
  EXPECT_EQ((**meta)["labels"]["app"], "web");
}

TEST(PodTemplateTest, CronJobTemplateIsReached) {
  const json cron = json::parse(R"({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {
      "template": {"spec": {"restartPolicy": "Never"}}}}}})");
  EXPECT_EQ((**podSpecOf(cron))["restartPolicy"], "Never");
}

TEST(PodTemplateTest, AbsentTemplateIsNullptr) {
  auto spec = podSpecOf(json{{"kind", "Deployment"}, {"spec", {{"replicas", 1}}}});
  ASSERT_TRUE(spec.ok());
  EXPECT_EQ(*spec, nullptr);
}

TEST(PodTemplateTest, KindWithoutTemplateAndWrongTypesAreErrors) {
  auto config_map = podSpecOf(json{{"kind", "ConfigMap"}});
  ASSERT_FALSE(config_map.ok());
  EXPECT_EQ(config_map.error().message, "kind \"ConfigMap\" has no pod template");
  auto bad = podSpecOf(json{{"kind", "Job"}, {"spec", {{"template", "x"}}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message, "spec.template: expected object, got string");
}

TEST(PodTemplateTest, MutablePodSpecCanBeEdited) {
  json d = deployment();
  auto spec = podSpecOf(d);
  ASSERT_TRUE(spec.ok());
  (**spec)["hostNetwork"] = true;
  EXPECT_EQ(d["spec"]["template"]["spec"]["hostNetwork"], true);
}

// ---------------------------------------------------------------------------------------------
// Built-in resources

TEST(ResourceTableTest, SubresourcesServeTheirOwnKinds) {
  auto eviction = findResource({"", "v1", "pods"}, "eviction");
  ASSERT_TRUE(eviction);
  EXPECT_EQ(eviction->kind, (GroupVersionKind{"policy", "v1", "Eviction"}));
  EXPECT_EQ(findResource({"apps", "v1", "deployments"}, "scale")->kind,
            (GroupVersionKind{"autoscaling", "v1", "Scale"}));
  EXPECT_EQ(findResource({"", "v1", "pods"}, "exec")->kind.kind, "PodExecOptions");
  EXPECT_EQ(findResource({"", "v1", "pods"}, "status")->kind.kind, "Pod");
  EXPECT_FALSE(findResource({"", "v1", "pods"}, "scale"));
}

TEST(ResourceTableTest, ScopeOfResources) {
  EXPECT_FALSE(findResource({"", "v1", "namespaces"})->namespaced);
  EXPECT_FALSE(findResource({"", "v1", "nodes"})->namespaced);
  EXPECT_FALSE(findResource({"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations"})
                   ->namespaced);
  EXPECT_TRUE(findResource({"", "v1", "pods"})->namespaced);
  EXPECT_TRUE(findResource({"batch", "v1", "cronjobs"})->namespaced);
}

TEST(ResourceTableTest, KindToResource) {
  EXPECT_EQ(findResourceForKind({"apps", "v1", "StatefulSet"})->resource,
            (GroupVersionResource{"apps", "v1", "statefulsets"}));
  EXPECT_EQ(findResourceForKind({"", "v1", "Pod"})->resource.resource, "pods");
  EXPECT_EQ(resourceNameForKind("batch", "CronJob"), "cronjobs");
  EXPECT_EQ(resourceNameForKind("", "ServiceAccount"), "serviceaccounts");
  EXPECT_FALSE(findResourceForKind({"", "v1", "Scale"}));
  EXPECT_FALSE(resourceNameForKind("example.com", "Widget"));
}

TEST(ResourceTableTest, DeploymentsAreEquivalentAcrossGroupsInInstallationOrder) {
  std::vector<std::string> versions;
  for (const auto& r : equivalentResources({"apps", "v1", "deployments"})) {
    versions.push_back(r.resource.apiVersion());
  }
  EXPECT_EQ(versions, (std::vector<std::string>{"extensions/v1beta1", "apps/v1", "apps/v1beta2",
                                                "apps/v1beta1"}));
}

TEST(ResourceTableTest, EquivalentScaleSubresourcesKeepTheirKinds) {
  std::vector<std::string> kinds;
  for (const auto& r : equivalentResources({"extensions", "v1beta1", "deployments"}, "scale")) {
    kinds.push_back(r.kind.toString());
  }
  EXPECT_EQ(kinds, (std::vector<std::string>{
                       "extensions/v1beta1, Kind=Scale", "autoscaling/v1, Kind=Scale",
                       "apps/v1beta2, Kind=Scale", "apps/v1beta1, Kind=Scale"}));
}

TEST(ResourceTableTest, CoreAndEventsGroupEventsAreEquivalent) {
  const auto events = equivalentResources({"events.k8s.io", "v1", "events"});
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].resource, (GroupVersionResource{"", "v1", "events"}));
  EXPECT_EQ(events[1].resource, (GroupVersionResource{"events.k8s.io", "v1", "events"}));
}

TEST(ResourceTableTest, UnsharedResourcesAreOnlyEquivalentToThemselves) {
  const auto pods = equivalentResources({"", "v1", "pods"});
  ASSERT_EQ(pods.size(), 1u);
  EXPECT_EQ(pods[0].resource.resource, "pods");
  EXPECT_EQ(equivalentResources({"apps", "v1", "statefulsets"}).size(), 1u);
  EXPECT_TRUE(equivalentResources({"example.com", "v1", "widgets"}).empty());
}

}  // namespace
}  // namespace harness::core
