// The rule-evaluation table of kubernetes/apiserver pkg/audit/policy/checker_test.go
// (TestChecker, TestCheckerPolicyOmitStages, TestUnionStages, TestOmitManagedFields), ported.

#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/audit/policy.h"

namespace harness::audit {
namespace {

RequestAttributes tim() {
  RequestAttributes a;
  a.user = "tim@k8s.io";
  a.groups = {"humans", "developers"};
  a.verb = "get";
  return a;
}

std::map<std::string, RequestAttributes> requests() {
  std::map<std::string, RequestAttributes> out;
  auto namespaced = tim();
  namespaced.namespace_name = "default";
  namespaced.api_version = "v1";
  namespaced.resource = "pods";
  namespaced.name = "busybox";
  namespaced.path = "/api/v1/namespaces/default/pods/busybox";
  out["namespaced"] = namespaced;

  auto cluster = tim();
  cluster.api_group = "rbac.authorization.k8s.io";
  cluster.api_version = "v1beta1";
  cluster.resource = "clusterroles";
  cluster.name = "edit";
  cluster.path = "/apis/rbac.authorization.k8s.io/v1beta1/clusterroles/edit";
  out["cluster"] = cluster;

  auto non_resource = tim();
  non_resource.resource_request = false;
  non_resource.path = "/logs/kubelet.log";
  out["nonResource"] = non_resource;

  auto subresource = namespaced;
  subresource.subresource = "log";
  out["subresource"] = subresource;

  auto unauthorized = namespaced;
  unauthorized.user.clear();
  unauthorized.groups.clear();
  unauthorized.has_user = false;
  out["Unauthorized"] = unauthorized;
  return out;
}

std::map<std::string, PolicyRule> rules() {
  std::map<std::string, PolicyRule> r;
  r["default"] = {.level = Level::kMetadata};
  r["create"] = {.level = Level::kRequest, .verbs = {"create"}};
  r["tims"] = {.level = Level::kMetadata, .users = {"tim@k8s.io"}};
  r["humans"] = {.level = Level::kMetadata, .user_groups = {"humans"}};
  r["serviceAccounts"] = {.level = Level::kRequest, .user_groups = {"system:serviceaccounts"}};
  r["getPods"] = {
      .level = Level::kRequestResponse, .verbs = {"get"}, .resources = {{"", {"pods"}, {}}}};
  r["getPodLogs"] = {
      .level = Level::kRequest, .verbs = {"get"}, .resources = {{"", {"pods/log"}, {}}}};
  r["getPodWildcardMatching"] = {
      .level = Level::kRequest, .verbs = {"get"}, .resources = {{"", {"*"}, {}}}};
  r["getPodResourceWildcardMatching"] = {
      .level = Level::kRequest, .verbs = {"get"}, .resources = {{"", {"*/log"}, {}}}};
  r["getPodSubResourceWildcardMatching"] = {
      .level = Level::kRequest, .verbs = {"get"}, .resources = {{"", {"pods/*"}, {}}}};
  r["getClusterRoles"] = {.level = Level::kRequestResponse,
                          .verbs = {"get"},
                          .resources = {{"rbac.authorization.k8s.io", {"clusterroles"}, {}}},
                          .namespaces = {""}};
  r["getLogs"] = {
      .level = Level::kRequestResponse, .verbs = {"get"}, .non_resource_urls = {"/logs*"}};
  r["getMetrics"] = {.level = Level::kRequest, .verbs = {"get"}, .non_resource_urls = {"/metrics"}};
  r["clusterRoleEdit"] = {.level = Level::kRequest,
                          .resources = {{"rbac.authorization.k8s.io", {"clusterroles"}, {"edit"}}}};
  r["omit RequestReceived"] = {.level = Level::kRequest, .omit_stages = {Stage::kRequestReceived}};
  r["only audit panic"] = {
      .level = Level::kRequest,
      .omit_stages = {Stage::kRequestReceived, Stage::kResponseStarted, Stage::kResponseComplete}};
  return r;
}

struct Case {
  std::string request;
  Level level;
  std::vector<std::string> rules;
};

// testAuditLevel: the expected level for each request under each rule list.
const std::vector<Case>& levelCases() {
  static const std::vector<Case> cases = {
      {"namespaced", Level::kMetadata, {"default"}},
      {"namespaced", Level::kNone, {"create"}},
      {"namespaced", Level::kMetadata, {"tims"}},
      {"namespaced", Level::kMetadata, {"humans"}},
      {"namespaced", Level::kNone, {"serviceAccounts"}},
      {"namespaced", Level::kRequestResponse, {"getPods"}},
      {"namespaced", Level::kNone, {"getClusterRoles"}},
      {"namespaced", Level::kNone, {"getLogs"}},
      {"namespaced", Level::kNone, {"getMetrics"}},
      {"namespaced", Level::kMetadata, {"getMetrics", "serviceAccounts", "default"}},
      {"namespaced", Level::kRequestResponse, {"getMetrics", "getPods", "default"}},
      {"namespaced", Level::kRequestResponse, {"getPodLogs", "getPods"}},

      {"cluster", Level::kMetadata, {"default"}},
      {"cluster", Level::kNone, {"create"}},
      {"cluster", Level::kMetadata, {"tims"}},
      {"cluster", Level::kMetadata, {"humans"}},
      {"cluster", Level::kNone, {"serviceAccounts"}},
      {"cluster", Level::kNone, {"getPods"}},
      {"cluster", Level::kRequestResponse, {"getClusterRoles"}},
      {"cluster", Level::kRequest, {"clusterRoleEdit", "getClusterRoles"}},
      {"cluster", Level::kNone, {"getLogs"}},
      {"cluster", Level::kNone, {"getMetrics"}},
      {"cluster", Level::kMetadata, {"getMetrics", "serviceAccounts", "default"}},
      {"cluster", Level::kRequestResponse, {"getMetrics", "getClusterRoles", "default"}},
      {"cluster", Level::kNone, {"getPodLogs", "getPods"}},

      {"nonResource", Level::kMetadata, {"default"}},
      {"nonResource", Level::kNone, {"create"}},
      {"nonResource", Level::kMetadata, {"tims"}},
      {"nonResource", Level::kMetadata, {"humans"}},
      {"nonResource", Level::kNone, {"serviceAccounts"}},
      {"nonResource", Level::kNone, {"getPods"}},
      {"nonResource", Level::kNone, {"getClusterRoles"}},
      {"nonResource", Level::kRequestResponse, {"getLogs"}},
      {"nonResource", Level::kNone, {"getMetrics"}},
      {"nonResource", Level::kMetadata, {"getMetrics", "serviceAccounts", "default"}},
      {"nonResource", Level::kRequestResponse, {"getLogs", "getClusterRoles", "default"}},
      {"nonResource", Level::kNone, {"getPodLogs", "getPods"}},

      {"subresource", Level::kRequest, {"getPodLogs", "getPods"}},
      {"subresource", Level::kRequest, {"getPodWildcardMatching"}},
      {"subresource", Level::kRequest, {"getPodResourceWildcardMatching"}},
      {"subresource", Level::kRequest, {"getPodSubResourceWildcardMatching"}},

      {"Unauthorized", Level::kNone, {"tims"}},
      {"Unauthorized", Level::kMetadata, {"tims", "default"}},
      {"Unauthorized", Level::kNone, {"humans"}},
      {"Unauthorized", Level::kMetadata, {"humans", "default"}},
  };
  return cases;
}

Policy policyOf(const std::vector<std::string>& names, std::vector<Stage> policy_stages) {
  const auto all = rules();
  Policy policy;
  policy.omit_stages = std::move(policy_stages);
  for (const auto& name : names) policy.rules.push_back(all.at(name));
  return policy;
}

std::string describe(const Case& c) {
  std::string out = c.request + " with";
  for (const auto& r : c.rules) out += " " + r;
  return out;
}

void checkLevels(const std::vector<Stage>& policy_stages) {
  const auto reqs = requests();
  for (const Case& c : levelCases()) {
    const auto config = evaluatePolicy(policyOf(c.rules, policy_stages), reqs.at(c.request));
    EXPECT_EQ(config.level, c.level) << describe(c);
    EXPECT_EQ(config.omit_stages, policy_stages) << describe(c);
  }
}

TEST(PolicyChecker, LevelsWithoutPolicyStages) { checkLevels({}); }

TEST(PolicyChecker, LevelsWithPolicyStages) {
  checkLevels({Stage::kRequestReceived, Stage::kResponseStarted});
}

TEST(PolicyChecker, RuleOmitStagesApply) {
  const auto reqs = requests();
  for (const char* request : {"namespaced", "cluster", "nonResource"}) {
    auto config = evaluatePolicy(policyOf({"omit RequestReceived", "getPods", "default"}, {}),
                                 reqs.at(request));
    EXPECT_EQ(config.level, Level::kRequest) << request;
    EXPECT_EQ(config.omit_stages, std::vector<Stage>{Stage::kRequestReceived}) << request;
    config =
        evaluatePolicy(policyOf({"only audit panic", "getPods", "default"}, {}), reqs.at(request));
    EXPECT_EQ(config.omit_stages,
              (std::vector<Stage>{Stage::kRequestReceived, Stage::kResponseStarted,
                                  Stage::kResponseComplete}))
        << request;
    EXPECT_FALSE(config.omits(Stage::kPanic));
  }
}

TEST(PolicyChecker, PolicyAndRuleOmitStagesAreUnited) {
  const std::vector<Stage> policy_stages{Stage::kRequestReceived, Stage::kResponseStarted};
  const auto reqs = requests();
  auto config =
      evaluatePolicy(policyOf({"omit RequestReceived", "getPods", "default"}, policy_stages),
                     reqs.at("namespaced"));
  EXPECT_EQ(config.omit_stages, policy_stages);
  config = evaluatePolicy(policyOf({"only audit panic", "getPods", "default"}, policy_stages),
                          reqs.at("cluster"));
  EXPECT_EQ(config.omit_stages,
            (std::vector<Stage>{Stage::kRequestReceived, Stage::kResponseStarted,
                                Stage::kResponseComplete}));
  // The first matching rule decides, even when a later one omits fewer stages.
  config = evaluatePolicy(policyOf({"default", "omit RequestReceived", "getPods"}, policy_stages),
                          reqs.at("nonResource"));
  EXPECT_EQ(config.level, Level::kMetadata);
  EXPECT_EQ(config.omit_stages, policy_stages);
}

TEST(PolicyChecker, UnionStagesDropsDuplicates) {
  Policy policy;
  policy.omit_stages = {Stage::kPanic, Stage::kRequestReceived, Stage::kRequestReceived};
  policy.rules = {PolicyRule{.level = Level::kMetadata,
                             .omit_stages = {Stage::kRequestReceived, Stage::kResponseStarted}}};
  const auto config = evaluatePolicy(policy, tim());
  EXPECT_EQ(config.omit_stages,
            (std::vector<Stage>{Stage::kRequestReceived, Stage::kResponseStarted, Stage::kPanic}));
}

TEST(PolicyChecker, NoMatchingRuleGivesNoneAndNoRuleIndex) {
  const auto config = evaluatePolicy(policyOf({"create"}, {}), requests().at("namespaced"));
  EXPECT_EQ(config.level, Level::kNone);
  EXPECT_EQ(config.rule_index, std::nullopt);
}

TEST(PolicyChecker, RuleIndexNamesTheFirstMatch) {
  const auto config = evaluatePolicy(policyOf({"getMetrics", "getPods", "default"}, {}),
                                     requests().at("namespaced"));
  EXPECT_EQ(config.rule_index, std::optional<std::size_t>(1));
}

TEST(PolicyChecker, ResourceNamesRestrictMatches) {
  auto other = requests().at("cluster");
  other.name = "view";
  EXPECT_EQ(evaluatePolicy(policyOf({"clusterRoleEdit"}, {}), other).level, Level::kNone);
  EXPECT_EQ(evaluatePolicy(policyOf({"clusterRoleEdit"}, {}), requests().at("cluster")).level,
            Level::kRequest);
}

TEST(PolicyChecker, PlainResourceDoesNotMatchItsSubresources) {
  EXPECT_EQ(evaluatePolicy(policyOf({"getPods"}, {}), requests().at("subresource")).level,
            Level::kNone);
}

TEST(PolicyChecker, SubresourceWildcardAlsoMatchesTheResource) {
  EXPECT_EQ(evaluatePolicy(policyOf({"getPodSubResourceWildcardMatching"}, {}),
                           requests().at("namespaced"))
                .level,
            Level::kRequest);
}

TEST(PolicyChecker, ResourceWildcardSubresourceNeedsASubresource) {
  EXPECT_EQ(
      evaluatePolicy(policyOf({"getPodResourceWildcardMatching"}, {}), requests().at("namespaced"))
          .level,
      Level::kNone);
}

TEST(PolicyChecker, EmptyNamespaceMatchesClusterScopedOnly) {
  Policy policy;
  policy.rules = {PolicyRule{.level = Level::kMetadata, .namespaces = {""}}};
  EXPECT_EQ(evaluatePolicy(policy, requests().at("cluster")).level, Level::kMetadata);
  EXPECT_EQ(evaluatePolicy(policy, requests().at("namespaced")).level, Level::kNone);
  EXPECT_EQ(evaluatePolicy(policy, requests().at("nonResource")).level, Level::kNone);
}

TEST(PolicyChecker, GroupWithoutResourcesMatchesTheWholeGroup) {
  Policy policy;
  policy.rules = {
      PolicyRule{.level = Level::kRequest, .resources = {{"rbac.authorization.k8s.io", {}, {}}}}};
  EXPECT_EQ(evaluatePolicy(policy, requests().at("cluster")).level, Level::kRequest);
  EXPECT_EQ(evaluatePolicy(policy, requests().at("namespaced")).level, Level::kNone);
}

TEST(PolicyChecker, NonResourceUrlPatterns) {
  auto request = requests().at("nonResource");
  Policy policy;
  policy.rules = {PolicyRule{.level = Level::kMetadata, .non_resource_urls = {"/logs/**"}}};
  EXPECT_EQ(evaluatePolicy(policy, request).level, Level::kMetadata);
  policy.rules[0].non_resource_urls = {"*"};
  EXPECT_EQ(evaluatePolicy(policy, request).level, Level::kMetadata);
  policy.rules[0].non_resource_urls = {"/logs"};
  EXPECT_EQ(evaluatePolicy(policy, request).level, Level::kNone);
}

TEST(PolicyChecker, OmitManagedFieldsDefaultsToThePolicy) {
  RequestAttributes get;
  get.verb = "get";
  const PolicyRule matching{.level = Level::kRequestResponse, .verbs = {"get"}};
  struct {
    bool policy_default;
    std::optional<bool> rule;
    bool want;
  } cases[] = {{false, std::nullopt, false},
               {true, std::nullopt, true},
               {true, false, false},
               {false, true, true}};
  for (const auto& c : cases) {
    Policy policy;
    policy.omit_managed_fields = c.policy_default;
    policy.rules = {matching};
    policy.rules[0].omit_managed_fields = c.rule;
    EXPECT_EQ(evaluatePolicy(policy, get).omit_managed_fields, c.want);
  }
  Policy no_match;
  no_match.omit_managed_fields = true;
  no_match.rules = {PolicyRule{.level = Level::kMetadata, .verbs = {"list"}}};
  EXPECT_TRUE(evaluatePolicy(no_match, get).omit_managed_fields);
}

}  // namespace
}  // namespace harness::audit
