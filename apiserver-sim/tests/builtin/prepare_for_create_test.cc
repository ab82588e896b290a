// prepareForCreate: the status a registry strategy's PrepareForCreate resets is a Go struct
// value, so the created object is answered with that struct's fields that have no omitempty
// (found by `apiserver-sim compare --backend kube` on the seed tutorial).

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/sim/object_validation.h"

namespace harness::sim {
namespace {

using nlohmann::json;

TEST(PrepareForCreateTest, ReplicaSetStatusCarriesItsZeroReplicas) {
  // apps/v1 ReplicaSetStatus.Replicas is `json:"replicas"` (no omitempty).
  json rs = json::parse(R"({"apiVersion":"apps/v1","kind":"ReplicaSet","metadata":{"name":"r"},
      "spec":{"selector":{"matchLabels":{"a":"b"}},"template":{"metadata":{"labels":{"a":"b"}},
      "spec":{"containers":[{"name":"c","image":"nginx:1.27"}]}}},"status":{"replicas":3}})");
  prepareForCreate(rs);
  EXPECT_EQ(rs["status"], json::parse(R"({"replicas":0})"));
}

TEST(PrepareForCreateTest, ServiceStatusCarriesAnEmptyLoadBalancer) {
  // core/v1 ServiceStatus.LoadBalancer is a struct value: written even when empty.
  json service = json::parse(R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"s"},
      "spec":{"ports":[{"port":80}]}})");
  prepareForCreate(service);
  EXPECT_EQ(service["status"], json::parse(R"({"loadBalancer":{}})"));
}

TEST(PrepareForCreateTest, DeploymentStatusStaysEmpty) {
  // Every field of apps/v1 DeploymentStatus is omitempty.
  json deployment = json::parse(R"({"apiVersion":"apps/v1","kind":"Deployment",
      "metadata":{"name":"d"},"spec":{"selector":{"matchLabels":{"a":"b"}}},
      "status":{"replicas":2}})");
  prepareForCreate(deployment);
  EXPECT_EQ(deployment["status"], json::object());
}

}  // namespace
}  // namespace harness::sim
