// PodSecurity in a privileged namespace: the enforce-policy audit annotation kube-apiserver
// v1.37.2 adds to every Pod create (found by `apiserver-sim compare --backend kube`), none for
// ignored subresources, insignificant updates, pod controllers or stricter namespaces.

#include <map>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/sim/builtin_plugins.h"

namespace harness::sim {
namespace {

using nlohmann::json;

struct Recorded {
  std::map<std::string, std::string> annotations;
};

PluginContext contextWith(const json& ns, Recorded& recorded) {
  PluginContext context;
  context.get_object = [ns](const core::GroupVersionResource& resource, const std::string&,
                            const std::string& name) -> std::optional<json> {
    if (resource.resource == "namespaces" && name == ns["metadata"].value("name", "")) return ns;
    return std::nullopt;
  };
  context.add_audit_annotation = [&recorded](const std::string& key, const std::string& value) {
    recorded.annotations[key] = value;
  };
  return context;
}

AdmissionAttributes podRequest(std::string operation, std::string subresource = {}) {
  AdmissionAttributes a;
  a.operation = std::move(operation);
  a.kind = {"", "v1", "Pod"};
  a.resource = {"", "v1", "pods"};
  a.subresource = std::move(subresource);
  a.namespace_name = "demo";
  a.name = "web";
  a.object = json{{"apiVersion", "v1"},
                  {"kind", "Pod"},
                  {"spec", {{"containers", json::array({{{"name", "a"}, {"image", "nginx"}}})}}}};
  return a;
}

std::map<std::string, std::string> annotationsFor(const AdmissionAttributes& a,
                                                  const json& ns = {{"metadata",
                                                                     {{"name", "demo"}}}}) {
  auto plugins = makePlugins({"PodSecurity"});
  EXPECT_TRUE(plugins.ok());
  Recorded recorded;
  const auto context = contextWith(ns, recorded);
  for (const auto& plugin : *plugins) {
    EXPECT_FALSE(plugin->validate(a, context).has_value());
  }
  return recorded.annotations;
}

TEST(PodSecurity, IsOnByDefault) {
  const auto names = defaultPluginNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "PodSecurity"), names.end());
}

TEST(PodSecurity, APodCreateInAPrivilegedNamespaceIsAnnotated) {
  const std::map<std::string, std::string> expected = {
      {"pod-security.kubernetes.io/enforce-policy", "privileged:latest"}};
  EXPECT_EQ(annotationsFor(podRequest("CREATE")), expected);
  const json privileged = {
      {"metadata",
       {{"name", "demo"}, {"labels", {{"pod-security.kubernetes.io/enforce", "privileged"}}}}}};
  EXPECT_EQ(annotationsFor(podRequest("CREATE"), privileged), expected);
}

TEST(PodSecurity, NoAnnotationWhereUpstreamShortCircuitsWithout) {
  EXPECT_TRUE(annotationsFor(podRequest("CREATE", "binding")).empty());
  EXPECT_TRUE(annotationsFor(podRequest("UPDATE", "status")).empty());
  EXPECT_TRUE(annotationsFor(podRequest("DELETE")).empty());
  auto update = podRequest("UPDATE");
  update.old_object = update.object;
  EXPECT_TRUE(annotationsFor(update).empty());  // not a significant update
  (*update.old_object)["spec"]["containers"][0]["image"] = "nginx:1.27";
  EXPECT_EQ(annotationsFor(update).size(), 1u);  // the image changed: evaluated
  auto deployment = podRequest("CREATE");
  deployment.resource = {"apps", "v1", "deployments"};
  deployment.kind = {"apps", "v1", "Deployment"};
  EXPECT_TRUE(annotationsFor(deployment).empty());
  const json restricted = {
      {"metadata",
       {{"name", "demo"}, {"labels", {{"pod-security.kubernetes.io/enforce", "restricted"}}}}}};
  EXPECT_TRUE(annotationsFor(podRequest("CREATE"), restricted).empty());
}

}  // namespace
}  // namespace harness::sim
