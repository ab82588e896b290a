// warningsOnCreate: the Warning headers the Pod registry strategy adds to a valid create
// (pkg/registry/core/pod/strategy.go WarningsOnCreate; seen on kube-apiserver v1.37.2 by
// `apiserver-sim compare --backend kube scenarios/istio-revisions`).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness/sim/object_validation.h"

namespace harness::sim {
namespace {

using nlohmann::json;

json pod(const std::string& name) {
  return {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", name}}}};
}

TEST(WarningsOnCreate, APodNameWithDotsIsNotADnsLabel) {
  EXPECT_EQ(warningsOnCreate(pod("web.v1")),
            std::vector<std::string>{
                "metadata.name: this is used in the Pod's hostname, which can result in "
                "surprising behavior; a DNS label is recommended: [must not contain dots]"});
}

TEST(WarningsOnCreate, ALongNameListsEveryProblem) {
  const std::string name = std::string(60, 'a') + ".bcdef";  // 66 characters
  EXPECT_EQ(warningsOnCreate(pod(name)),
            std::vector<std::string>{
                "metadata.name: this is used in the Pod's hostname, which can result in "
                "surprising behavior; a DNS label is recommended: [must be no more than 63 "
                "characters must not contain dots]"});
}

TEST(WarningsOnCreate, ADnsLabelOrAnotherKindHasNone) {
  EXPECT_TRUE(warningsOnCreate(pod("web-v1")).empty());
  EXPECT_TRUE(warningsOnCreate({{"apiVersion", "v1"},
                                {"kind", "ConfigMap"},
                                {"metadata", {{"name", "a.b"}}}})
                  .empty());
}

}  // namespace
}  // namespace harness::sim
