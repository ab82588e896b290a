// RBAC at the REST API (RestApiHandler without sockets, the chain authorizing as under `serve`
// with the bootstrap policy): a forbidden read and write as an impersonated user, the RBAC
// resources and their tables, SelfSubjectRulesReview (`kubectl auth can-i --list`),
// SubjectAccessReview and LocalSubjectAccessReview with upstream's validation, and the
// SelfSubjectAccessReview's reason.

#include <string>
#include <utility>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/metrics.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/caller.h"
#include "harness/sim/rest_api.h"
#include "harness/sim/store.h"

namespace harness::sim {
namespace {

using nlohmann::json;

constexpr const char* kToken = "rbac-token";
constexpr const char* kRbac = "/apis/rbac.authorization.k8s.io/v1";
using Headers = std::vector<std::pair<std::string, std::string>>;

ChainOptions authorizing() {
  ChainOptions options;
  options.authorize = true;
  return options;
}

const json kSelfReviews = {
    {"verbs", {"create"}},
    {"apiGroups", {"authorization.k8s.io"}},
    {"resources", {"selfsubjectaccessreviews", "selfsubjectrulesreviews"}}};

RestApiOptions apiOptions() {
  RestApiOptions options;
  options.bearer_token = kToken;
  return options;
}

class RbacRestTest : public ::testing::Test {
 protected:
  RbacRestTest() : chain_(store_, caller_, metrics_, authorizing()), handler_(store_, chain_,
                                                                              apiOptions()) {
    for (const char* ns : {"default", "team"}) {
      store_.put({"", "namespaces"}, {{"apiVersion", "v1"},
                                      {"kind", "Namespace"},
                                      {"metadata", {{"name", ns}}},
                                      {"status", {{"phase", "Active"}}}});
    }
    // As the admin (system:masters): what system:basic-user grants every authenticated user on a
    // cluster (the self reviews), and a Role for pods in "team", bound to jane.
    EXPECT_EQ(send("POST", std::string(kRbac) + "/clusterroles",
                   json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                        {"kind", "ClusterRole"},
                        {"metadata", {{"name", "basic"}}},
                        {"rules", json::array({kSelfReviews})}}
                       .dump())
                  .status,
              201);
    EXPECT_EQ(send("POST", std::string(kRbac) + "/clusterrolebindings",
                   json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                        {"kind", "ClusterRoleBinding"},
                        {"metadata", {{"name", "basic"}}},
                        {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"},
                                     {"kind", "ClusterRole"},
                                     {"name", "basic"}}},
                        {"subjects", json::array({{{"apiGroup", "rbac.authorization.k8s.io"},
                                                   {"kind", "Group"},
                                                   {"name", "system:authenticated"}}})}}
                       .dump())
                  .status,
              201);
    EXPECT_EQ(send("POST", std::string(kRbac) + "/namespaces/team/roles",
                   json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                        {"kind", "Role"},
                        {"metadata", {{"name", "pod-reader"}}},
                        {"rules", json::array({{{"apiGroups", {""}},
                                                {"resources", {"pods", "pods/status"}},
                                                {"verbs", {"get", "list"}}}})}}
                       .dump())
                  .status,
              201);
    EXPECT_EQ(send("POST", std::string(kRbac) + "/namespaces/team/rolebindings",
                   json{{"apiVersion", "rbac.authorization.k8s.io/v1"},
                        {"kind", "RoleBinding"},
                        {"metadata", {{"name", "jane-reads"}}},
                        {"roleRef", {{"apiGroup", "rbac.authorization.k8s.io"},
                                     {"kind", "Role"},
                                     {"name", "pod-reader"}}},
                        {"subjects", json::array({{{"apiGroup", "rbac.authorization.k8s.io"},
                                                   {"kind", "User"},
                                                   {"name", "jane"}},
                                                  {{"kind", "ServiceAccount"},
                                                   {"name", "builder"},
                                                   {"namespace", "team"}}})}}
                       .dump())
                  .status,
              201);
  }

  net::Response send(const std::string& method, const std::string& target,
                     const std::string& body = "", const Headers& headers = {}) {
    net::Request request;
    request.method = method;
    request.target = target;
    const auto question = target.find('?');
    request.path = target.substr(0, question);
    request.query = question == std::string::npos ? "" : target.substr(question + 1);
    request.body = body;
    request.peer = "10.1.2.3:45678";
    request.tls = true;
    request.headers.add("Authorization", std::string("Bearer ") + kToken);
    if (!body.empty()) request.headers.add("Content-Type", "application/json");
    for (const auto& [name, value] : headers) request.headers.add(name, value);
    return handler_.handle(request);
  }

  static json body(const net::Response& response) { return json::parse(response.body); }

  ObjectStore store_;
  InProcessWebhookCaller caller_;
  core::MetricsRegistry metrics_;
  AdmissionChain chain_;
  RestApiHandler handler_;
};

const Headers kJane = {{"Impersonate-User", "jane"}};

TEST_F(RbacRestTest, ReadsAndWritesOfAnImpersonatedUserAreAuthorized) {
  EXPECT_EQ(send("GET", "/api/v1/namespaces/team/pods", "", kJane).status, 200);
  EXPECT_EQ(send("GET", "/api/v1/namespaces/team/pods/x/status", "", kJane).status, 404);
  const auto denied = send("GET", "/api/v1/namespaces/default/pods", "", kJane);
  ASSERT_EQ(denied.status, 403) << denied.body;
  EXPECT_EQ(body(denied)["message"],
            R"(pods is forbidden: User "jane" cannot list resource "pods" in API group "" in )"
            R"(the namespace "default")");
  EXPECT_EQ(body(denied)["details"], json({{"kind", "pods"}}));
  const auto write = send("POST", "/api/v1/namespaces/team/configmaps",
                          R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}})",
                          kJane);
  ASSERT_EQ(write.status, 403) << write.body;
  EXPECT_EQ(body(write)["message"],
            R"(configmaps is forbidden: User "jane" cannot create resource "configmaps" in API )"
            R"(group "" in the namespace "team")");
  // Non-resource paths need a rule too (system:discovery grants them on a cluster).
  const auto healthz = send("GET", "/healthz", "", kJane);
  ASSERT_EQ(healthz.status, 403);
  EXPECT_EQ(body(healthz)["message"], R"(forbidden: User "jane" cannot get path "/healthz")");
  // The admin is never asked.
  EXPECT_EQ(send("GET", "/api/v1/namespaces/default/pods").status, 200);
}

TEST_F(RbacRestTest, RoleBindingsAreServedWithTheirTable) {
  const auto table = send("GET", std::string(kRbac) + "/namespaces/team/rolebindings", "",
                          {{"Accept", "application/json;as=Table;v=v1;g=meta.k8s.io"}});
  ASSERT_EQ(table.status, 200) << table.body;
  const json doc = body(table);
  std::vector<std::string> columns;
  for (const auto& column : doc["columnDefinitions"]) columns.push_back(column["name"]);
  EXPECT_EQ(columns, (std::vector<std::string>{"Name", "Role", "Age", "Users", "Groups",
                                               "ServiceAccounts"}));
  ASSERT_EQ(doc["rows"].size(), 1U);
  const json cells = doc["rows"][0]["cells"];
  EXPECT_EQ(cells[0], "jane-reads");
  EXPECT_EQ(cells[1], "Role/pod-reader");
  EXPECT_EQ(cells[3], "jane");
  EXPECT_EQ(cells[4], "");
  EXPECT_EQ(cells[5], "team/builder");
}

TEST_F(RbacRestTest, SelfSubjectRulesReviewListsTheUsersRules) {
  const std::string review =
      R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview",)"
      R"("spec":{"namespace":"team"}})";
  const auto response = send("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
                             review, kJane);
  ASSERT_EQ(response.status, 201) << response.body;
  // ClusterRoleBindings first, then the namespace's RoleBindings.
  json expected = json::parse(
      R"({"kind":"SelfSubjectRulesReview","apiVersion":"authorization.k8s.io/v1","metadata":{},)"
      R"("spec":{},"status":{"resourceRules":[{"verbs":["get","list"],"apiGroups":[""],)"
      R"("resources":["pods","pods/status"]}],"nonResourceRules":[],"incomplete":false}})");
  expected["status"]["resourceRules"].insert(expected["status"]["resourceRules"].begin(),
                                             kSelfReviews);
  EXPECT_EQ(body(response), expected);
  const auto no_namespace =
      send("POST", "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
           R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectRulesReview"})");
  ASSERT_EQ(no_namespace.status, 400);
  EXPECT_EQ(body(no_namespace)["message"], "no namespace on request");
}

TEST_F(RbacRestTest, SubjectAccessReviewsAskAboutTheNamedSubject) {
  const auto response = send(
      "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      R"({"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","spec":{)"
      R"("user":"system:serviceaccount:team:builder","resourceAttributes":{"namespace":"team",)"
      R"("verb":"get","resource":"pods","subresource":"status"}}})");
  ASSERT_EQ(response.status, 201) << response.body;
  EXPECT_EQ(body(response)["status"],
            json({{"allowed", true},
                  {"reason", R"(RBAC: allowed by RoleBinding "jane-reads/team" of Role )"
                             R"("pod-reader" to ServiceAccount "builder/team")"}}));
  const auto no_subject = send(
      "POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews",
      R"({"kind":"SubjectAccessReview","spec":{"resourceAttributes":{"verb":"get"}}})");
  ASSERT_EQ(no_subject.status, 422);
  EXPECT_EQ(body(no_subject)["message"],
            R"(.authorization.k8s.io "" is invalid: spec.user: Invalid value: "": at least one )"
            R"(of user or group must be specified)");

  const std::string local = "/apis/authorization.k8s.io/v1/namespaces/team/"
                            "localsubjectaccessreviews";
  const auto allowed = send(
      "POST", local,
      R"({"kind":"LocalSubjectAccessReview","spec":{"user":"jane","resourceAttributes":{)"
      R"("namespace":"team","verb":"list","resource":"pods"}}})");
  ASSERT_EQ(allowed.status, 201) << allowed.body;
  EXPECT_EQ(body(allowed)["status"]["allowed"], true);
  EXPECT_EQ(body(allowed)["metadata"], json({{"namespace", "team"}}));
  const auto elsewhere = send(
      "POST", local,
      R"({"kind":"LocalSubjectAccessReview","spec":{"user":"jane","resourceAttributes":{)"
      R"("namespace":"default","verb":"list","resource":"pods"}}})");
  ASSERT_EQ(elsewhere.status, 422) << elsewhere.body;
  EXPECT_EQ(body(elsewhere)["message"],
            R"(.authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid )"
            R"(value: "default": must match metadata.namespace)");
  EXPECT_EQ(send("POST", "/apis/authorization.k8s.io/v1/localsubjectaccessreviews", "{}").status,
            404);
}

TEST_F(RbacRestTest, SelfSubjectAccessReviewGivesRbacsReason) {
  const auto response = send(
      "POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
      R"({"kind":"SelfSubjectAccessReview","spec":{"resourceAttributes":{"namespace":"team",)"
      R"("verb":"get","resource":"pods"}}})",
      kJane);
  ASSERT_EQ(response.status, 201) << response.body;
  EXPECT_EQ(body(response)["status"],
            json({{"allowed", true},
                  {"reason", R"(RBAC: allowed by RoleBinding "jane-reads/team" of Role )"
                             R"("pod-reader" to User "jane")"}}));
}

}  // namespace
}  // namespace harness::sim
