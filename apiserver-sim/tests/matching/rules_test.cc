// Rules: a port of kubernetes/apiserver pkg/admission/plugin/webhook/predicates/rules/
// rules_test.go (TestGroup, TestVersion, TestOperation, TestResource, TestScope), plus the
// combined matcher, the explanation texts and the exempt kinds.

#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/sim/matching.h"

namespace harness::sim {
namespace {

// rules_test.go a()/namespacedAttributes(): namespace "ns", kind "k"+resource.
AdmissionAttributes attrs(const std::string& group, const std::string& version,
                          const std::string& resource, const std::string& subresource,
                          const std::string& name, std::string_view operation,
                          const std::string& ns = "ns") {
  AdmissionAttributes a;
  a.kind = {group, version, "k" + resource};
  a.namespace_name = ns;
  a.name = name;
  a.resource = {group, version, resource};
  a.subresource = subresource;
  a.operation = std::string(operation);
  return a;
}

// clusterScopedAttributes(): no namespace.
AdmissionAttributes clusterAttrs(const std::string& group, const std::string& version,
                                 const std::string& resource, const std::string& subresource,
                                 const std::string& name) {
  return attrs(group, version, resource, subresource, name, kOperationCreate, "");
}

struct ClauseCase {
  std::string name;
  core::RuleWithOperations rule;
  std::vector<AdmissionAttributes> match;
  std::vector<AdmissionAttributes> no_match;
};

template <class Clause>
void runTable(const std::vector<ClauseCase>& table, Clause clause) {
  for (const auto& tc : table) {
    for (std::size_t i = 0; i < tc.match.size(); ++i) {
      SCOPED_TRACE(tc.name + " match " + std::to_string(i));
      EXPECT_TRUE(clause(evaluateRule(tc.rule, tc.match[i])));
    }
    for (std::size_t i = 0; i < tc.no_match.size(); ++i) {
      SCOPED_TRACE(tc.name + " no match " + std::to_string(i));
      EXPECT_FALSE(clause(evaluateRule(tc.rule, tc.no_match[i])));
    }
  }
}

core::RuleWithOperations groups(std::vector<std::string> g) {
  core::RuleWithOperations r;
  r.api_groups = std::move(g);
  return r;
}
core::RuleWithOperations versions(std::vector<std::string> v) {
  core::RuleWithOperations r;
  r.api_versions = std::move(v);
  return r;
}
core::RuleWithOperations operations(std::vector<std::string> o) {
  core::RuleWithOperations r;
  r.operations = std::move(o);
  return r;
}
core::RuleWithOperations resources(std::vector<std::string> res,
                                   std::optional<std::string> scope = std::nullopt) {
  core::RuleWithOperations r;
  r.resources = std::move(res);
  r.scope = std::move(scope);
  return r;
}

TEST(RuleGroupTest, WildcardAndExactGroupsAsInUpstreamTestGroup) {
  const auto c = kOperationCreate;
  runTable({{"wildcard", groups({"*"}), {attrs("g", "v", "r", "", "name", c)}, {}},
            {"exact",
             groups({"g1", "g2"}),
             {attrs("g1", "v", "r", "", "name", c), attrs("g2", "v2", "r3", "", "name", c)},
             {attrs("g3", "v", "r", "", "name", c), attrs("g4", "v", "r", "", "name", c)}}},
           [](const RuleEvaluation& e) { return e.group; });
}

TEST(RuleVersionTest, WildcardAndExactVersionsAsInUpstreamTestVersion) {
  const auto c = kOperationCreate;
  runTable({{"wildcard", versions({"*"}), {attrs("g", "v", "r", "", "name", c)}, {}},
            {"exact",
             versions({"v1", "v2"}),
             {attrs("g1", "v1", "r", "", "name", c), attrs("g2", "v2", "r", "", "name", c)},
             {attrs("g1", "v3", "r", "", "name", c), attrs("g2", "v4", "r", "", "name", c)}}},
           [](const RuleEvaluation& e) { return e.version; });
}

TEST(RuleOperationTest, OperationsAsInUpstreamTestOperation) {
  auto op = [](std::string_view o) { return attrs("g", "v", "r", "", "name", o); };
  const auto create = op(kOperationCreate);
  const auto update = op(kOperationUpdate);
  const auto del = op(kOperationDelete);
  const auto connect = op(kOperationConnect);
  runTable({{"wildcard", operations({"*"}), {create, update, del, connect}, {}},
            {"create", operations({"CREATE"}), {create}, {update, del, connect}},
            {"update", operations({"UPDATE"}), {update}, {create, del, connect}},
            {"delete", operations({"DELETE"}), {del}, {create, update, connect}},
            {"connect", operations({"CONNECT"}), {connect}, {create, update, del}},
            {"multiple", operations({"UPDATE", "DELETE"}), {update, del}, {create, connect}}},
           [](const RuleEvaluation& e) { return e.operation; });
}

TEST(RuleResourceTest, SubresourcePatternsAsInUpstreamTestResource) {
  const auto c = kOperationCreate;
  runTable({{"no subresources",
             resources({"*"}),
             {attrs("g", "v", "r", "", "name", c), attrs("2", "v", "r2", "", "name", c)},
             {attrs("g", "v", "r", "exec", "name", c), attrs("2", "v", "r2", "proxy", "name", c)}},
            {"r & subresources",
             resources({"r/*"}),
             {attrs("g", "v", "r", "", "name", c), attrs("g", "v", "r", "exec", "name", c)},
             {attrs("2", "v", "r2", "", "name", c), attrs("2", "v", "r2", "proxy", "name", c)}},
            {"r & subresources or r2",
             resources({"r/*", "r2"}),
             {attrs("g", "v", "r", "", "name", c), attrs("g", "v", "r", "exec", "name", c),
              attrs("2", "v", "r2", "", "name", c)},
             {attrs("2", "v", "r2", "proxy", "name", c)}},
            {"proxy or exec",
             resources({"*/proxy", "*/exec"}),
             {attrs("g", "v", "r", "exec", "name", c), attrs("2", "v", "r2", "proxy", "name", c),
              attrs("2", "v", "r3", "proxy", "name", c)},
             {attrs("g", "v", "r", "", "name", c), attrs("2", "v", "r2", "", "name", c),
              attrs("2", "v", "r4", "scale", "name", c)}}},
           [](const RuleEvaluation& e) { return e.resource; });
}

TEST(RuleResourceTest, StarSlashStarMatchesResourcesAndSubresources) {
  const auto rule = resources({"*/*"});
  EXPECT_TRUE(evaluateRule(rule, attrs("", "v1", "pods", "", "p", kOperationCreate)).resource);
  EXPECT_TRUE(evaluateRule(rule, attrs("", "v1", "pods", "exec", "p", kOperationCreate)).resource);
}

TEST(RuleResourceTest, PlainResourceDoesNotMatchItsSubresources) {
  const auto rule = resources({"pods"});
  EXPECT_TRUE(evaluateRule(rule, attrs("", "v1", "pods", "", "p", kOperationCreate)).resource);
  EXPECT_FALSE(
      evaluateRule(rule, attrs("", "v1", "pods", "status", "p", kOperationCreate)).resource);
}

TEST(RuleResourceTest, OnlyTheFirstSlashSplitsResourceFromSubresource) {
  // SplitN(x, "/", 2): "pods/a/b" is resource "pods", subresource "a/b".
  const auto rule = resources({"pods/a/b"});
  EXPECT_TRUE(evaluateRule(rule, attrs("", "v1", "pods", "a/b", "p", kOperationCreate)).resource);
  EXPECT_FALSE(evaluateRule(rule, attrs("", "v1", "pods", "a", "p", kOperationCreate)).resource);
}

TEST(RuleScopeTest, ScopesAsInUpstreamTestScope) {
  const auto c = kOperationCreate;
  const std::vector<AdmissionAttributes> cluster_match = {
      clusterAttrs("g", "v", "r", "", "name"),
      clusterAttrs("g", "v", "r", "exec", "name"),
      clusterAttrs("", "v1", "namespaces", "", "ns"),
      clusterAttrs("", "v1", "namespaces", "finalize", "ns"),
      attrs("", "v1", "namespaces", "", "ns", c),
      attrs("", "v1", "namespaces", "finalize", "ns", c),
  };
  const std::vector<AdmissionAttributes> namespaced_match = {
      attrs("g", "v", "r", "", "name", c),
      attrs("g", "v", "r", "exec", "name", c),
  };
  std::vector<AdmissionAttributes> all = cluster_match;
  all.insert(all.end(), namespaced_match.begin(), namespaced_match.end());
  runTable({{"cluster scope", resources({"*"}, "Cluster"), cluster_match, namespaced_match},
            {"namespace scope", resources({"*"}, "Namespaced"), namespaced_match, cluster_match},
            {"all scopes", resources({"*"}, "*"), all, {}}},
           [](const RuleEvaluation& e) { return e.scope; });
}

TEST(RuleScopeTest, UnsetScopeMatchesEverything) {
  EXPECT_TRUE(evaluateRule(resources({"*"}), clusterAttrs("g", "v", "r", "", "n")).scope);
  EXPECT_TRUE(
      evaluateRule(resources({"*"}), attrs("g", "v", "r", "", "n", kOperationCreate)).scope);
}

TEST(RuleScopeTest, UnknownScopeMatchesNothing) {
  const auto rule = resources({"*"}, "Global");
  EXPECT_FALSE(evaluateRule(rule, clusterAttrs("g", "v", "r", "", "n")).scope);
  EXPECT_FALSE(evaluateRule(rule, attrs("g", "v", "r", "", "n", kOperationCreate)).scope);
}

core::RuleWithOperations podRule() {
  core::RuleWithOperations r;
  r.operations = {"CREATE"};
  r.api_groups = {""};
  r.api_versions = {"v1"};
  r.resources = {"pods"};
  r.scope = "*";
  return r;
}

TEST(RuleMatchesTest, AllFiveClausesMustHold) {
  EXPECT_TRUE(ruleMatches(podRule(), attrs("", "v1", "pods", "", "p", kOperationCreate)));
  EXPECT_FALSE(ruleMatches(podRule(), attrs("", "v1", "pods", "", "p", kOperationUpdate)));
  EXPECT_FALSE(ruleMatches(podRule(), attrs("", "v2", "pods", "", "p", kOperationCreate)));
  EXPECT_FALSE(ruleMatches(podRule(), attrs("apps", "v1", "pods", "", "p", kOperationCreate)));
}

TEST(RuleMatchesTest, EmptyRuleMatchesNothing) {
  EXPECT_FALSE(
      ruleMatches(core::RuleWithOperations{}, attrs("", "v1", "pods", "", "p", kOperationCreate)));
}

TEST(RuleMatchesTest, GroupAndVersionComeFromTheResourceNotTheKind) {
  // deployments/scale in apps/v1 is served as autoscaling/v1 Scale.
  auto a = attrs("apps", "v1", "deployments", "scale", "d", kOperationUpdate);
  a.kind = {"autoscaling", "v1", "Scale"};
  core::RuleWithOperations apps;
  apps.operations = {"*"};
  apps.api_groups = {"apps"};
  apps.api_versions = {"v1"};
  apps.resources = {"deployments/scale"};
  EXPECT_TRUE(ruleMatches(apps, a));
  core::RuleWithOperations autoscaling = apps;
  autoscaling.api_groups = {"autoscaling"};
  EXPECT_FALSE(ruleMatches(autoscaling, a));
}

TEST(RuleMatchesTest, ExplainsAMatchWithTheWholeRule) {
  std::string why;
  ASSERT_TRUE(ruleMatches(podRule(), attrs("", "v1", "pods", "", "p", kOperationCreate), &why));
  EXPECT_EQ(why,
            "operations [CREATE] apiGroups [\"\"] apiVersions [v1] resources [pods] scope *: "
            "matches");
}

TEST(RuleMatchesTest, ExplainsAResourceMiss) {
  std::string why;
  EXPECT_FALSE(
      ruleMatches(podRule(), attrs("", "v1", "deployments", "", "d", kOperationCreate), &why));
  EXPECT_EQ(why, "resource \"deployments\" not in [pods]");
  EXPECT_FALSE(
      ruleMatches(podRule(), attrs("", "v1", "pods", "exec", "d", kOperationCreate), &why));
  EXPECT_EQ(why, "resource \"pods/exec\" not in [pods]");
}

TEST(RuleMatchesTest, ExplainsTheFirstFailingClauseInUpstreamOrder) {
  std::string why;
  // Operation, group, version and resource all fail: the operation is reported.
  EXPECT_FALSE(ruleMatches(podRule(), attrs("apps", "v2", "x", "", "d", kOperationDelete), &why));
  EXPECT_EQ(why, "operation DELETE not in [CREATE]");
  EXPECT_FALSE(ruleMatches(podRule(), attrs("apps", "v2", "x", "", "d", kOperationCreate), &why));
  EXPECT_EQ(why, "apiGroup \"apps\" not in [\"\"]");
  EXPECT_FALSE(ruleMatches(podRule(), attrs("", "v2", "x", "", "d", kOperationCreate), &why));
  EXPECT_EQ(why, "apiVersion \"v2\" not in [v1]");
}

TEST(RuleMatchesTest, ExplainsScopeMisses) {
  std::string why;
  auto rule = podRule();
  rule.resources = {"*"};
  rule.scope = "Namespaced";
  EXPECT_FALSE(ruleMatches(rule, clusterAttrs("", "v1", "namespaces", "", "ns"), &why));
  EXPECT_EQ(why,
            "scope Namespaced does not match a cluster-scoped request (namespaces are "
            "cluster-scoped)");
  rule.scope = "Cluster";
  EXPECT_FALSE(ruleMatches(rule, attrs("", "v1", "pods", "", "p", kOperationCreate), &why));
  EXPECT_EQ(why, "scope Cluster does not match a request in namespace \"ns\"");
  rule.scope = "Global";
  EXPECT_FALSE(ruleMatches(rule, attrs("", "v1", "pods", "", "p", kOperationCreate), &why));
  EXPECT_EQ(why, "scope \"Global\" is not one of \"*\", \"Cluster\", \"Namespaced\"");
}

TEST(RuleDescribeTest, UnsetScopeIsShownAsUnset) {
  core::RuleWithOperations rule;
  rule.operations = {"*"};
  rule.api_groups = {"", "apps"};
  rule.api_versions = {"*"};
  rule.resources = {"*/*"};
  EXPECT_EQ(describeRule(rule),
            "operations [*] apiGroups [\"\" \"apps\"] apiVersions [*] resources [*/*] scope "
            "<unset>");
}

AdmissionAttributes kindAttrs(const std::string& group, const std::string& kind) {
  AdmissionAttributes a;
  a.kind = {group, "v1", kind};
  a.operation = std::string(kOperationCreate);
  return a;
}

TEST(ExemptTest, WebhookConfigurationAndPolicyKindsAreExempt) {
  for (const char* kind : {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration",
                           "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
                           "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"}) {
    SCOPED_TRACE(kind);
    EXPECT_TRUE(isExemptFromWebhooks(kindAttrs("admissionregistration.k8s.io", kind)));
  }
}

TEST(ExemptTest, OtherKindsAndGroupsAreNotExempt) {
  EXPECT_FALSE(isExemptFromWebhooks(kindAttrs("admissionregistration.k8s.io", "Other")));
  EXPECT_FALSE(isExemptFromWebhooks(kindAttrs("example.com", "MutatingWebhookConfiguration")));
  EXPECT_FALSE(isExemptFromWebhooks(kindAttrs("", "Pod")));
}

TEST(ExemptTest, TheKindDecidesNotTheResource) {
  auto a = kindAttrs("", "Pod");
  a.resource = {"admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations"};
  EXPECT_FALSE(isExemptFromWebhooks(a));
}

}  // namespace
}  // namespace harness::sim
