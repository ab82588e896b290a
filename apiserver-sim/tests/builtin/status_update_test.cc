// prepareForStatusUpdate: the status strategies of pkg/registry keep the old spec and take the
// new status; pods take new labels and annotations, apps workloads keep their old labels.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/sim/object_validation.h"

namespace harness::sim {
namespace {

using nlohmann::json;

TEST(PrepareForStatusUpdateTest, PodKeepsItsSpecAndTakesTheNewStatusAndLabels) {
  const json old_pod = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
      "labels":{"a":"1"},"ownerReferences":[{"name":"rs"}]},"spec":{"containers":[{"name":"c",
      "image":"nginx:1.27"}]},"status":{"phase":"Pending"}})");
  json pod = json::parse(R"({"apiVersion":"v1","kind":"Pod","metadata":{"name":"p",
      "labels":{"a":"2"},"resourceVersion":"7"},"spec":{"containers":[{"name":"c",
      "image":"changed"}]},"status":{"phase":"Running"}})");
  prepareForStatusUpdate(pod, old_pod);
  EXPECT_EQ(pod["status"]["phase"], "Running");
  EXPECT_EQ(pod["spec"]["containers"][0]["image"], "nginx:1.27");
  EXPECT_EQ(pod["metadata"]["labels"]["a"], "2");
  EXPECT_EQ(pod["metadata"]["resourceVersion"], "7");
  EXPECT_EQ(pod["metadata"]["ownerReferences"][0]["name"], "rs");
}

TEST(PrepareForStatusUpdateTest, DeploymentKeepsItsLabels) {
  const json old_deployment = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
      "metadata":{"name":"d","labels":{"a":"1"}},"spec":{"replicas":1},"status":{}})");
  json deployment = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
      "metadata":{"name":"d","labels":{"a":"2"},"annotations":{"x":"y"}},"spec":{"replicas":5},
      "status":{"replicas":1}})");
  prepareForStatusUpdate(deployment, old_deployment);
  EXPECT_EQ(deployment["metadata"]["labels"]["a"], "1");
  EXPECT_EQ(deployment["metadata"]["annotations"]["x"], "y");
  EXPECT_EQ(deployment["spec"]["replicas"], 1);
  EXPECT_EQ(deployment["status"]["replicas"], 1);
}

}  // namespace
}  // namespace harness::sim
