// The simulator's authorizer (authorizer.h): RuleAllows as RBAC matches a rule (verbs, API
// groups, "pods/status" and "*/scale", resourceNames, nonResourceURLs with a trailing *), the
// bindings in VisitRulesFor's order with their subjects, the reasons kube-apiserver gives, the
// 403 text, the rules listed for SelfSubjectRulesReview, the clusterrole-aggregation controller,
// and the admission chain answering 403 before admission when it authorizes.

#include <string>
#include <variant>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "configmap_fixture.h"
#include "harness/core/metrics.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/authorizer.h"
#include "harness/sim/caller.h"
#include "harness/sim/store.h"

namespace harness::sim {
namespace {

using nlohmann::json;

const core::GroupResource kRoles{"rbac.authorization.k8s.io", "roles"};
const core::GroupResource kClusterRoles{"rbac.authorization.k8s.io", "clusterroles"};
const core::GroupResource kRoleBindings{"rbac.authorization.k8s.io", "rolebindings"};
const core::GroupResource kClusterRoleBindings{"rbac.authorization.k8s.io", "clusterrolebindings"};

core::UserInfo user(const std::string& name, std::vector<std::string> groups = {}) {
  core::UserInfo out;
  out.username = name;
  out.groups = std::move(groups);
  out.groups.push_back("system:authenticated");
  return out;
}

AuthorizationAttributes request(const core::UserInfo& who, const std::string& verb,
                                const std::string& resource, const std::string& ns = "",
                                const std::string& group = "", const std::string& name = "",
                                const std::string& subresource = "") {
  AuthorizationAttributes a;
  a.user = who;
  a.verb = verb;
  a.resource = resource;
  a.namespace_name = ns;
  a.api_group = group;
  a.api_version = "v1";
  a.name = name;
  a.subresource = subresource;
  return a;
}

AuthorizationAttributes path(const core::UserInfo& who, const std::string& verb,
                             const std::string& url) {
  AuthorizationAttributes a;
  a.user = who;
  a.verb = verb;
  a.resource_request = false;
  a.path = url;
  return a;
}

json rule(json verbs, json groups, json resources, json names = json::array()) {
  json out = {{"verbs", std::move(verbs)}, {"apiGroups", std::move(groups)},
              {"resources", std::move(resources)}};
  if (!names.empty()) out["resourceNames"] = std::move(names);
  return out;
}

json role(const std::string& name, const std::string& ns, json rules) {
  json metadata = {{"name", name}};
  if (!ns.empty()) metadata["namespace"] = ns;
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", ns.empty() ? "ClusterRole" : "Role"},
          {"metadata", std::move(metadata)},
          {"rules", std::move(rules)}};
}

json binding(const std::string& name, const std::string& ns, const std::string& role_kind,
             const std::string& role_name, json subjects) {
  json metadata = {{"name", name}};
  if (!ns.empty()) metadata["namespace"] = ns;
  return {{"apiVersion", "rbac.authorization.k8s.io/v1"},
          {"kind", ns.empty() ? "ClusterRoleBinding" : "RoleBinding"},
          {"metadata", std::move(metadata)},
          {"roleRef",
           {{"apiGroup", "rbac.authorization.k8s.io"}, {"kind", role_kind}, {"name", role_name}}},
          {"subjects", std::move(subjects)}};
}

json subject(const std::string& kind, const std::string& name, const std::string& ns = "") {
  json out = {{"kind", kind}, {"name", name}};
  if (kind != "ServiceAccount") out["apiGroup"] = "rbac.authorization.k8s.io";
  if (!ns.empty()) out["namespace"] = ns;
  return out;
}

TEST(RuleAllowsTest, MatchesVerbsGroupsResourcesAndNames) {
  const auto jane = user("jane");
  const json pods = rule({"get", "list"}, {""}, {"pods"});
  EXPECT_TRUE(ruleAllows(request(jane, "get", "pods", "default"), pods));
  EXPECT_FALSE(ruleAllows(request(jane, "delete", "pods", "default"), pods));
  EXPECT_FALSE(ruleAllows(request(jane, "get", "pods", "default", "apps"), pods));
  // A subresource is its own resource: "pods" does not grant "pods/status" ...
  EXPECT_FALSE(ruleAllows(request(jane, "get", "pods", "default", "", "p", "status"), pods));
  EXPECT_TRUE(ruleAllows(request(jane, "get", "pods", "default", "", "p", "status"),
                         rule({"get"}, {""}, {"pods/status"})));
  // ... "*/scale" grants scale of any resource, "*" everything.
  const json scale = rule({"update"}, {"*"}, {"*/scale"});
  EXPECT_TRUE(ruleAllows(request(jane, "update", "deployments", "d", "apps", "x", "scale"), scale));
  EXPECT_FALSE(ruleAllows(request(jane, "update", "deployments", "d", "apps", "x"), scale));
  EXPECT_FALSE(
      ruleAllows(request(jane, "update", "deployments", "d", "apps", "x", "status"), scale));
  EXPECT_TRUE(ruleAllows(request(jane, "patch", "deployments", "d", "apps", "x", "status"),
                         rule({"*"}, {"*"}, {"*"})));
  // resourceNames restrict to the named objects (a list has no name: not granted).
  const json named = rule({"get", "list"}, {""}, {"configmaps"}, {"settings"});
  EXPECT_TRUE(ruleAllows(request(jane, "get", "configmaps", "d", "", "settings"), named));
  EXPECT_FALSE(ruleAllows(request(jane, "get", "configmaps", "d", "", "other"), named));
  EXPECT_FALSE(ruleAllows(request(jane, "list", "configmaps", "d"), named));
}

TEST(RuleAllowsTest, NonResourceUrlsWithATrailingStar) {
  const auto jane = user("jane");
  const json healthz = {{"verbs", {"get"}}, {"nonResourceURLs", {"/healthz", "/apis/*"}}};
  EXPECT_TRUE(ruleAllows(path(jane, "get", "/healthz"), healthz));
  EXPECT_FALSE(ruleAllows(path(jane, "get", "/healthz/ping"), healthz));
  EXPECT_TRUE(ruleAllows(path(jane, "get", "/apis/apps/v1"), healthz));
  EXPECT_TRUE(ruleAllows(path(jane, "get", "/apis/"), healthz));
  EXPECT_FALSE(ruleAllows(path(jane, "get", "/apis"), healthz));
  EXPECT_FALSE(ruleAllows(path(jane, "post", "/healthz"), healthz));
  // A resource rule grants no path, a path rule no resource.
  EXPECT_FALSE(ruleAllows(path(jane, "get", "/healthz"), rule({"*"}, {"*"}, {"*"})));
  EXPECT_FALSE(ruleAllows(request(jane, "get", "pods", "d"), healthz));
}

class AuthorizerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_.create(kClusterRoles, role("pod-reader", "", json::array({rule({"get", "list"}, {""},
                                                                          {"pods"})})));
    store_.create(kRoles, role("cm-writer", "team", json::array({rule({"create"}, {""},
                                                                      {"configmaps"})})));
  }
  ObjectStore store_;
};

TEST_F(AuthorizerTest, SystemMastersIsAllowedWithoutAReason) {
  const auto decision = authorize(store_, request(user("root", {"system:masters"}), "delete",
                                                  "nodes"));
  EXPECT_TRUE(decision.allowed());
  EXPECT_EQ(decision.reason, "");
}

TEST_F(AuthorizerTest, WithoutABindingNoOpinionAndNoReason) {
  const auto decision = authorize(store_, request(user("jane"), "get", "pods", "team"));
  EXPECT_EQ(decision.decision, Authorization::Decision::kNoOpinion);
  EXPECT_EQ(decision.reason, "");
}

TEST_F(AuthorizerTest, ClusterRoleBindingToAUserAllowsEverywhere) {
  store_.create(kClusterRoleBindings,
                binding("read-pods", "", "ClusterRole", "pod-reader",
                        json::array({subject("User", "bob"), subject("User", "jane")})));
  const auto decision = authorize(store_, request(user("jane"), "list", "pods", "other"));
  EXPECT_TRUE(decision.allowed());
  EXPECT_EQ(decision.reason,
            R"(RBAC: allowed by ClusterRoleBinding "read-pods" of ClusterRole "pod-reader" to )"
            R"(User "jane")");
  EXPECT_FALSE(authorize(store_, request(user("joe"), "list", "pods", "other")).allowed());
}

TEST_F(AuthorizerTest, RoleBindingAllowsOnlyInItsNamespace) {
  store_.create(kRoleBindings, binding("writers", "team", "Role", "cm-writer",
                                       json::array({subject("Group", "devs")})));
  store_.create(kRoleBindings, binding("readers", "team", "ClusterRole", "pod-reader",
                                       json::array({subject("Group", "devs")})));
  const auto dev = user("ann", {"devs"});
  const auto decision = authorize(store_, request(dev, "create", "configmaps", "team"));
  EXPECT_TRUE(decision.allowed());
  EXPECT_EQ(decision.reason,
            R"(RBAC: allowed by RoleBinding "writers/team" of Role "cm-writer" to Group "devs")");
  EXPECT_TRUE(authorize(store_, request(dev, "get", "pods", "team")).allowed());
  EXPECT_FALSE(authorize(store_, request(dev, "get", "pods", "elsewhere")).allowed());
  EXPECT_FALSE(authorize(store_, request(dev, "list", "pods", "")).allowed());
}

TEST_F(AuthorizerTest, ServiceAccountSubjectsTakeTheBindingsNamespace) {
  store_.create(kRoleBindings, binding("sa", "team", "Role", "cm-writer",
                                       json::array({subject("ServiceAccount", "builder")})));
  const auto builder =
      user("system:serviceaccount:team:builder", {"system:serviceaccounts"});
  const auto decision = authorize(store_, request(builder, "create", "configmaps", "team"));
  EXPECT_TRUE(decision.allowed());
  EXPECT_EQ(decision.reason, R"(RBAC: allowed by RoleBinding "sa/team" of Role "cm-writer" to )"
                             R"(ServiceAccount "builder/team")");
  EXPECT_FALSE(authorize(store_, request(user("system:serviceaccount:other:builder"), "create",
                                         "configmaps", "team"))
                   .allowed());
  // In a ClusterRoleBinding a service account without a namespace matches nobody.
  store_.create(kClusterRoleBindings, binding("sa-read", "", "ClusterRole", "pod-reader",
                                              json::array({subject("ServiceAccount", "builder")})));
  EXPECT_FALSE(authorize(store_, request(builder, "get", "pods", "else")).allowed());
}

TEST_F(AuthorizerTest, AMissingRoleIsTheReasonWhenNothingAllows) {
  store_.create(kClusterRoleBindings, binding("gone", "", "ClusterRole", "not-there",
                                              json::array({subject("User", "jane")})));
  store_.create(kRoleBindings, binding("gone-too", "team", "Role", "nope",
                                       json::array({subject("User", "jane")})));
  const auto decision = authorize(store_, request(user("jane"), "get", "pods", "team"));
  EXPECT_FALSE(decision.allowed());
  EXPECT_EQ(decision.reason,
            R"(rbac: RBAC: [clusterrole.rbac.authorization.k8s.io "not-there" not found, )"
            R"(role.rbac.authorization.k8s.io "nope" not found])");
  const auto single = authorize(store_, request(user("jane"), "get", "pods", "else"));
  // The union of authorizers names the one that gave the reason (union.go).
  EXPECT_EQ(single.reason,
            R"(rbac: RBAC: clusterrole.rbac.authorization.k8s.io "not-there" not found)");
}

TEST_F(AuthorizerTest, ForbiddenTextsAsKubeApiserverWritesThem) {
  const auto jane = user("jane");
  EXPECT_EQ(forbidden(request(jane, "list", "pods", "default"), "").message,
            R"(pods is forbidden: User "jane" cannot list resource "pods" in API group "" in )"
            R"(the namespace "default")");
  const auto named = forbidden(request(jane, "get", "deployments", "", "apps", "web", "scale"),
                               "RBAC: x");
  EXPECT_EQ(named.code, 403);
  EXPECT_EQ(named.reason, "Forbidden");
  EXPECT_EQ(named.message,
            R"(deployments.apps "web" is forbidden: User "jane" cannot get resource )"
            R"("deployments/scale" in API group "apps" at the cluster scope: RBAC: x)");
  EXPECT_EQ(forbidden(path(jane, "get", "/metrics"), "").message,
            R"(forbidden: User "jane" cannot get path "/metrics")");
}

TEST_F(AuthorizerTest, RulesForListsTheRulesOfEveryApplyingBinding) {
  const json paths_rule = {{"verbs", {"get"}}, {"nonResourceURLs", {"/x*"}}};
  store_.create(kClusterRoles, role("paths", "", json::array({paths_rule})));
  store_.create(kClusterRoleBindings,
                binding("paths", "", "ClusterRole", "paths",
                        json::array({subject("Group", "system:authenticated")})));
  store_.create(kRoleBindings, binding("writers", "team", "Role", "cm-writer",
                                       json::array({subject("User", "jane")})));
  store_.create(kRoleBindings, binding("broken", "team", "Role", "nope",
                                       json::array({subject("User", "jane")})));
  const SubjectRules rules = rulesFor(store_, user("jane"), "team");
  const json writer = {{"verbs", {"create"}}, {"apiGroups", {""}}, {"resources", {"configmaps"}}};
  EXPECT_EQ(rules.resource_rules, json::array({writer}));
  EXPECT_EQ(rules.non_resource_rules,
            json::array({{{"verbs", {"get"}}, {"nonResourceURLs", {"/x*"}}}}));
  EXPECT_EQ(rules.evaluation_error, R"(role.rbac.authorization.k8s.io "nope" not found)");
  EXPECT_EQ(rulesFor(store_, user("jane"), "elsewhere").resource_rules, json::array());
}

TEST(AggregationTest, AggregatedRolesTakeTheSelectedRulesTransitively) {
  ObjectStore store;
  json view = role("view", "", nullptr);
  view["aggregationRule"] = {
      {"clusterRoleSelectors", json::array({{{"matchLabels", {{"to-view", "true"}}}}})}};
  json edit = role("edit", "", nullptr);
  edit["aggregationRule"] = {
      {"clusterRoleSelectors", json::array({{{"matchLabels", {{"to-edit", "true"}}}}})}};
  edit["metadata"]["labels"] = {{"to-view", "ignored"}};
  json admin = role("admin", "", nullptr);
  admin["aggregationRule"] = {
      {"clusterRoleSelectors", json::array({{{"matchLabels", {{"to-admin", "true"}}}}})}};
  json view_rules = role("z-view-rules", "", json::array({rule({"get"}, {""}, {"pods"})}));
  view_rules["metadata"]["labels"] = {{"to-view", "true"}, {"to-edit", "true"}};
  json edit_rules = role("edit-rules", "", json::array({rule({"create"}, {""}, {"pods"}),
                                                        rule({"get"}, {""}, {"pods"})}));
  edit_rules["metadata"]["labels"] = {{"to-edit", "true"}};
  edit["metadata"]["labels"] = {{"to-admin", "true"}};
  for (const json& object : {view, edit, admin, view_rules, edit_rules}) {
    ASSERT_TRUE(std::holds_alternative<json>(store.create(kClusterRoles, object)));
  }
  EXPECT_GT(aggregateClusterRoles(store), 0U);
  EXPECT_EQ(store.get(kClusterRoles, "", "view")->at("rules"),
            json::array({rule({"get"}, {""}, {"pods"})}));
  // Roles by name (edit-rules before z-view-rules), each rule once.
  EXPECT_EQ(store.get(kClusterRoles, "", "edit")->at("rules"),
            json::array({rule({"create"}, {""}, {"pods"}), rule({"get"}, {""}, {"pods"})}));
  // admin selects edit, whose rules are aggregated first.
  EXPECT_EQ(store.get(kClusterRoles, "", "admin")->at("rules"),
            json::array({rule({"create"}, {""}, {"pods"}), rule({"get"}, {""}, {"pods"})}));
  EXPECT_EQ(aggregateClusterRoles(store), 0U);
}

TEST(BootstrapTest, SeedingRejectsAnAnswerOfTheWrongShapeAndSkipsStoredObjects) {
  ObjectStore store;
  EXPECT_FALSE(seedBootstrapPolicy(store, json::array()).ok());
  EXPECT_FALSE(seedBootstrapPolicy(store, {{"clusterRoles", "x"}}).ok());
  EXPECT_FALSE(seedBootstrapPolicy(store, {{"clusterRoles", json::array({json::object()})}}).ok());
  const json policy = {{"clusterRoles", json::array({role("r", "", json::array())})},
                       {"roles", json::array({role("s", "kube-system", json::array())})}};
  auto first = seedBootstrapPolicy(store, policy);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(*first, 2U);
  auto second = seedBootstrapPolicy(store, policy);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(*second, 0U);
}

TEST(ChainAuthorizationTest, AForbiddenWriteIsAnswered403BeforeAdmission) {
  ObjectStore store;
  fixture::putDemoNamespace(store);
  core::MetricsRegistry metrics;
  InProcessWebhookCaller caller;
  ChainOptions options;
  options.authorize = true;
  AdmissionChain chain(store, caller, metrics, options);
  WriteRequest write = fixture::configMapCreate(std::nullopt);
  write.user_info = user("jane");
  AdmissionResult denied = chain.handle(write);
  EXPECT_FALSE(denied.allowed);
  EXPECT_EQ(denied.code, 403);
  ASSERT_TRUE(denied.status);
  EXPECT_EQ(denied.status->message,
            R"(configmaps is forbidden: User "jane" cannot create resource "configmaps" in API )"
            R"(group "" in the namespace "demo")");
  EXPECT_FALSE(store.get({"", "configmaps"}, "demo", "settings"));

  store.create(kRoles, role("cm-writer", "demo", json::array({rule({"create"}, {""},
                                                                   {"configmaps"})})));
  store.create(kRoleBindings, binding("jane", "demo", "Role", "cm-writer",
                                      json::array({subject("User", "jane")})));
  EXPECT_TRUE(chain.handle(write).allowed);
  // Requests the REST API authorized are not authorized again.
  WriteRequest other = fixture::configMapCreate(std::nullopt);
  other.name = "second";
  (*other.object)["metadata"]["name"] = "second";
  other.user_info = user("joe");
  other.authorized = true;
  EXPECT_TRUE(chain.handle(other).allowed);
}

}  // namespace
}  // namespace harness::sim
