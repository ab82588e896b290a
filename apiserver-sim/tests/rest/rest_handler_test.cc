// RestApiHandler without sockets: every endpoint and error of the REST API, answered the way
// kube-apiserver answers them.

#include <mutex>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/audit/policy.h"
#include "harness/core/admission_review.h"
#include "harness/core/metrics.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/caller.h"
#include "harness/sim/field_validation.h"
#include "harness/sim/rest_api.h"
#include "harness/sim/store.h"

namespace harness::sim {
namespace {

using nlohmann::json;

constexpr const char* kToken = "test-token";

class RestHandlerTest : public ::testing::Test {
 protected:
  // `authorize`: the chain authorizes as under `serve` with RBAC's bootstrap policy.
  explicit RestHandlerTest(bool authorize = false)
      : chain_(store_, caller_, metrics_, chainOptions(authorize)),
        handler_(store_, chain_, apiOptions()) {
    handler_.setServerAddress("127.0.0.1:6443");
    put("", "namespaces", {{"apiVersion", "v1"}, {"kind", "Namespace"},
                           {"metadata", {{"name", "default"}}}, {"status", {{"phase", "Active"}}}});
    put("", "namespaces", {{"apiVersion", "v1"}, {"kind", "Namespace"},
                           {"metadata", {{"name", "team"}}}, {"status", {{"phase", "Active"}}}});
    // As on a cluster, each namespace has its default ServiceAccount (the plugin requires it).
    createDefaultServiceAccount(store_, "default");
    createDefaultServiceAccount(store_, "team");
  }

  ChainOptions chainOptions(bool authorize) {
    ChainOptions options;
    options.authorize = authorize;
    auto policy = audit::parsePolicy(
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n", "policy.yaml");
    EXPECT_TRUE(policy.ok());
    if (policy.ok()) options.audit_policy = *policy;
    options.audit_sink = [this](const audit::Event& event) {
      std::lock_guard lock(events_mutex_);
      events_.push_back(event);
    };
    return options;
  }

  RestApiOptions apiOptions() {
    RestApiOptions options;
    options.bearer_token = kToken;
    options.metrics = &metrics_;
    // Families kept elsewhere (kube-cel's policy metrics in `serve`).
    options.more_metrics = [] {
      return std::string("# TYPE apiserver_validating_admission_policy_check_total counter\n");
    };
    return options;
  }

  void put(const std::string& group, const std::string& resource, json object) {
    store_.put({group, resource}, std::move(object));
  }

  net::Response send(const std::string& method, const std::string& target,
                     const std::string& body = "", const std::string& content_type = "",
                     const std::string& accept = "", bool authorized = true,
                     const std::vector<std::pair<std::string, std::string>>& headers = {}) {
    net::Request request;
    request.method = method;
    request.target = target;
    const auto question = target.find('?');
    request.path = target.substr(0, question);
    request.query = question == std::string::npos ? "" : target.substr(question + 1);
    request.body = body;
    request.peer = "10.1.2.3:45678";
    request.tls = true;
    if (authorized) request.headers.add("Authorization", std::string("Bearer ") + kToken);
    if (!content_type.empty()) request.headers.add("Content-Type", content_type);
    if (!accept.empty()) request.headers.add("Accept", accept);
    request.headers.add("User-Agent", "rest-handler-test/1.0");
    for (const auto& [name, value] : headers) request.headers.add(name, value);
    return handler_.handle(request);
  }

  static json body(const net::Response& response) { return json::parse(response.body); }

  net::Response createPod(const std::string& ns, const std::string& name,
                          json labels = json::object()) {
    json pod = {{"apiVersion", "v1"},
                {"kind", "Pod"},
                {"metadata", {{"name", name}, {"labels", labels}}},
                {"spec", {{"containers", {{{"name", "app"}, {"image", "nginx:1.27"}}}}}}};
    return send("POST", "/api/v1/namespaces/" + ns + "/pods", pod.dump(), "application/json");
  }

  net::Response createConfigMap(const std::string& ns, const std::string& name) {
    json cm = {{"apiVersion", "v1"},
               {"kind", "ConfigMap"},
               {"metadata", {{"name", name}}},
               {"data", {{"k", "v"}}}};
    return send("POST", "/api/v1/namespaces/" + ns + "/configmaps", cm.dump(),
                "application/json");
  }

  std::vector<audit::Event> events() {
    std::lock_guard lock(events_mutex_);
    return events_;
  }

  ObjectStore store_;
  InProcessWebhookCaller caller_;
  core::MetricsRegistry metrics_;
  std::mutex events_mutex_;
  std::vector<audit::Event> events_;
  AdmissionChain chain_;
  RestApiHandler handler_;
};

// --- authentication ---

TEST_F(RestHandlerTest, MissingBearerTokenIsUnauthorizedStatus) {
  const auto response = send("GET", "/api/v1/namespaces", "", "", "", false);
  EXPECT_EQ(response.status, 401);
  EXPECT_EQ(body(response), json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},
      "status":"Failure","message":"Unauthorized","reason":"Unauthorized","code":401})"));
}

TEST_F(RestHandlerTest, WrongBearerTokenIsUnauthorized) {
  net::Request request;
  request.method = "GET";
  request.target = request.path = "/version";
  request.headers.add("Authorization", "Bearer not-the-token");
  EXPECT_EQ(handler_.handle(request).status, 401);
}

TEST_F(RestHandlerTest, HealthEndpointsNeedAuthenticationLikeK3s) {
  EXPECT_EQ(send("GET", "/healthz", "", "", "", false).status, 401);
}

TEST_F(RestHandlerTest, BearerSchemeIsCaseInsensitive) {
  net::Request request;
  request.method = "GET";
  request.target = request.path = "/version";
  request.headers.add("Authorization", std::string("bearer ") + kToken);
  EXPECT_EQ(handler_.handle(request).status, 200);
}

// --- non-resource endpoints ---

TEST_F(RestHandlerTest, VersionIsAK3sVersionInfo) {
  const auto response = send("GET", "/version");
  ASSERT_EQ(response.status, 200);
  const json v = body(response);
  EXPECT_EQ(v["gitVersion"], "v1.31.4+k3s1");
  EXPECT_EQ(v["major"], "1");
  EXPECT_EQ(v["minor"], "31");
  EXPECT_EQ(v["platform"], "linux/amd64");
}

TEST_F(RestHandlerTest, HealthEndpointsAnswerOk) {
  for (const char* path : {"/healthz", "/livez", "/readyz", "/readyz/ping"}) {
    const auto response = send("GET", path);
    EXPECT_EQ(response.status, 200) << path;
    EXPECT_EQ(response.body, "ok") << path;
  }
}

TEST_F(RestHandlerTest, MetricsRendersTheRegistry) {
  metrics_.counter("test_requests_total", "Test counter.", {"code"}).add({"200"}, 3);
  const auto response = send("GET", "/metrics");
  ASSERT_EQ(response.status, 200);
  EXPECT_NE(response.body.find("test_requests_total{code=\"200\"} 3"), std::string::npos);
  EXPECT_NE(response.body.find("\n# TYPE apiserver_validating_admission_policy_check_total counter\n"),
            std::string::npos)
      << response.body;
  EXPECT_EQ(response.headers.get("Content-Type").value_or(""),
            "text/plain; version=0.0.4; charset=utf-8");
}

TEST_F(RestHandlerTest, UnknownPathIsNetHttpsNotFound) {
  const auto response = send("GET", "/foo/bar");
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(response.body, "404 page not found\n");
  EXPECT_EQ(response.headers.get("Content-Type").value_or(""), "text/plain; charset=utf-8");
}

TEST_F(RestHandlerTest, OpenApiV2IsNotServed) {
  EXPECT_EQ(send("GET", "/openapi/v2").status, 404);
}

// What kubectl's query_param_verifier_v3.go reads to decide on server-side field validation.
TEST_F(RestHandlerTest, OpenApiV3DeclaresFieldValidationOnPatchOfEveryResource) {
  const json root = body(send("GET", "/openapi/v3"));
  ASSERT_TRUE(root["paths"].contains("api/v1")) << root.dump();
  ASSERT_TRUE(root["paths"].contains("apis/apps/v1"));
  const std::string url = root["paths"]["api/v1"]["serverRelativeURL"];
  ASSERT_EQ(url.rfind("/openapi/v3/api/v1?hash=", 0), 0u) << url;
  const auto response = send("GET", url);
  ASSERT_EQ(response.status, 200);
  const json doc = body(response);
  const json& pods = doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"];
  EXPECT_EQ(pods["x-kubernetes-group-version-kind"],
            json::parse(R"({"group":"","version":"v1","kind":"Pod"})"));
  bool field_validation = false;
  for (const auto& p : pods["parameters"]) field_validation |= p["name"] == "fieldValidation";
  EXPECT_TRUE(field_validation);
  const json ns = body(send("GET", "/openapi/v3/api/v1"));
  EXPECT_TRUE(ns["paths"].contains("/api/v1/namespaces/{name}"));
  const json apps = body(send("GET", root["paths"]["apis/apps/v1"]["serverRelativeURL"]));
  EXPECT_EQ(apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
                ["x-kubernetes-group-version-kind"]["kind"],
            "Deployment");
  EXPECT_EQ(send("GET", "/openapi/v3/apis/widgets.example.com/v1").status, 404);
}

// --- discovery ---

TEST_F(RestHandlerTest, ApiListsTheLegacyVersionAndServerAddress) {
  const json doc = body(send("GET", "/api"));
  EXPECT_EQ(doc, json::parse(R"({"kind":"APIVersions","versions":["v1"],
      "serverAddressByClientCIDRs":[{"clientCIDR":"0.0.0.0/0","serverAddress":"127.0.0.1:6443"}]})"));
}

TEST_F(RestHandlerTest, ApisListsGroupsWithPreferredVersions) {
  const json doc = body(send("GET", "/apis"));
  EXPECT_EQ(doc["kind"], "APIGroupList");
  EXPECT_EQ(doc["apiVersion"], "v1");
  json apps;
  for (const auto& group : doc["groups"]) {
    if (group["name"] == "apps") apps = group;
  }
  ASSERT_FALSE(apps.is_null());
  EXPECT_EQ(apps["preferredVersion"], json::parse(R"({"groupVersion":"apps/v1","version":"v1"})"));
  EXPECT_EQ(apps["versions"][0]["version"], "v1");
}

TEST_F(RestHandlerTest, ApisPutsTheLegacyExtensionsGroupAfterApps) {
  const json doc = body(send("GET", "/apis"));
  std::vector<std::string> names;
  for (const auto& group : doc["groups"]) names.push_back(group["name"]);
  const auto apps = std::find(names.begin(), names.end(), "apps");
  const auto extensions = std::find(names.begin(), names.end(), "extensions");
  ASSERT_NE(apps, names.end());
  ASSERT_NE(extensions, names.end());
  EXPECT_LT(apps, extensions);
  EXPECT_NE(std::find(names.begin(), names.end(), "events.k8s.io"), names.end());
  EXPECT_NE(std::find(names.begin(), names.end(), "admissionregistration.k8s.io"), names.end());
}

TEST_F(RestHandlerTest, CoreResourceListDescribesPods) {
  const json doc = body(send("GET", "/api/v1"));
  EXPECT_EQ(doc["kind"], "APIResourceList");
  EXPECT_FALSE(doc.contains("apiVersion"));
  EXPECT_EQ(doc["groupVersion"], "v1");
  json pods, status, eviction;
  for (const auto& r : doc["resources"]) {
    if (r["name"] == "pods") pods = r;
    if (r["name"] == "pods/status") status = r;
    if (r["name"] == "pods/eviction") eviction = r;
  }
  EXPECT_EQ(pods, json::parse(R"({"name":"pods","singularName":"pod","namespaced":true,
      "kind":"Pod","verbs":["create","delete","deletecollection","get","list","patch","update",
      "watch"],"shortNames":["po"],"categories":["all"]})"));
  EXPECT_EQ(status, json::parse(R"({"name":"pods/status","singularName":"","namespaced":true,
      "kind":"Pod","verbs":["get","patch","update"]})"));
  EXPECT_EQ(eviction["group"], "policy");
  EXPECT_EQ(eviction["version"], "v1");
}

TEST_F(RestHandlerTest, CoreResourceListIsSortedByName) {
  const json doc = body(send("GET", "/api/v1"));
  std::vector<std::string> names;
  for (const auto& r : doc["resources"]) names.push_back(r["name"]);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST_F(RestHandlerTest, ShortNamesOfCommonResources) {
  auto shortNames = [this](const std::string& path, const std::string& name) {
    const json doc = body(send("GET", path));
    for (const auto& r : doc["resources"]) {
      if (r["name"] == name) return r.value("shortNames", json::array());
    }
    return json();
  };
  EXPECT_EQ(shortNames("/api/v1", "namespaces"), json({"ns"}));
  EXPECT_EQ(shortNames("/api/v1", "services"), json({"svc"}));
  EXPECT_EQ(shortNames("/api/v1", "configmaps"), json({"cm"}));
  EXPECT_EQ(shortNames("/api/v1", "serviceaccounts"), json({"sa"}));
  EXPECT_EQ(shortNames("/api/v1", "events"), json({"ev"}));
  EXPECT_EQ(shortNames("/apis/apps/v1", "deployments"), json({"deploy"}));
  EXPECT_EQ(shortNames("/apis/events.k8s.io/v1", "events"), json({"ev"}));
}

TEST_F(RestHandlerTest, WebhookConfigurationsHaveNoShortNamesLikeUpstream) {
  const json doc = body(send("GET", "/apis/admissionregistration.k8s.io/v1"));
  EXPECT_EQ(doc["apiVersion"], "v1");
  json mwc;
  for (const auto& r : doc["resources"]) {
    if (r["name"] == "mutatingwebhookconfigurations") mwc = r;
  }
  EXPECT_EQ(mwc, json::parse(R"({"name":"mutatingwebhookconfigurations",
      "singularName":"mutatingwebhookconfiguration","namespaced":false,
      "kind":"MutatingWebhookConfiguration","verbs":["create","delete","deletecollection","get",
      "list","patch","update","watch"],"categories":["api-extensions"]})"));
}

TEST_F(RestHandlerTest, ScaleSubresourceNamesItsAutoscalingKind) {
  json scale;
  const json apps = body(send("GET", "/apis/apps/v1"));
  for (const auto& r : apps["resources"]) {
    if (r["name"] == "deployments/scale") scale = r;
  }
  EXPECT_EQ(scale["group"], "autoscaling");
  EXPECT_EQ(scale["version"], "v1");
  EXPECT_EQ(scale["kind"], "Scale");
}

TEST_F(RestHandlerTest, NamespacesCannotBeDeletedAsACollection) {
  json namespaces;
  const json core_v1 = body(send("GET", "/api/v1"));
  for (const auto& r : core_v1["resources"]) {
    if (r["name"] == "namespaces") namespaces = r;
  }
  EXPECT_EQ(namespaces["verbs"], json({"create", "delete", "get", "list", "patch", "update",
                                       "watch"}));
  EXPECT_EQ(send("DELETE", "/api/v1/namespaces").status, 405);
}

TEST_F(RestHandlerTest, UnservedGroupVersionIsNotFound) {
  const auto response = send("GET", "/apis/apps/v2");
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(send("GET", "/apis/example.com/v1/namespaces/default/widgets").status, 404);
}

TEST_F(RestHandlerTest, UnknownResourceInServedGroupIsTheRouters404) {
  const auto response = send("GET", "/api/v1/namespaces/default/widgets");
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(body(response), json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},
      "status":"Failure","message":"the server could not find the requested resource",
      "reason":"NotFound","details":{},"code":404})"));
}

// --- reads ---

TEST_F(RestHandlerTest, GetReturnsTheObjectWithTypeMeta) {
  ASSERT_EQ(createPod("default", "web").status, 201);
  const auto response = send("GET", "/api/v1/namespaces/default/pods/web");
  ASSERT_EQ(response.status, 200);
  const json pod = body(response);
  EXPECT_EQ(pod["kind"], "Pod");
  EXPECT_EQ(pod["apiVersion"], "v1");
  EXPECT_EQ(pod["metadata"]["name"], "web");
  EXPECT_FALSE(pod["metadata"].value("uid", "").empty());
}

TEST_F(RestHandlerTest, GetOfAMissingObjectIsNotFound) {
  const auto response = send("GET", "/api/v1/namespaces/default/pods/x");
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(body(response), json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},
      "status":"Failure","message":"pods \"x\" not found","reason":"NotFound",
      "details":{"name":"x","kind":"pods"},"code":404})"));
}

TEST_F(RestHandlerTest, GetOfAMissingGroupedObjectNamesTheGroup) {
  const json status = body(send("GET", "/apis/apps/v1/namespaces/default/deployments/d"));
  EXPECT_EQ(status["message"], "deployments.apps \"d\" not found");
}

TEST_F(RestHandlerTest, GetOfAClusterScopedObject) {
  const auto response = send("GET", "/api/v1/namespaces/team");
  ASSERT_EQ(response.status, 200);
  EXPECT_EQ(body(response)["metadata"]["name"], "team");
}

TEST_F(RestHandlerTest, ListIsATypedListWithResourceVersion) {
  ASSERT_EQ(createPod("default", "a").status, 201);
  ASSERT_EQ(createPod("default", "b").status, 201);
  const json list = body(send("GET", "/api/v1/namespaces/default/pods"));
  EXPECT_EQ(list["kind"], "PodList");
  EXPECT_EQ(list["apiVersion"], "v1");
  EXPECT_EQ(list["metadata"]["resourceVersion"], std::to_string(store_.revision()));
  ASSERT_EQ(list["items"].size(), 2u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "a");
  // Items of a typed list carry no TypeMeta.
  EXPECT_FALSE(list["items"][0].contains("kind"));
  EXPECT_FALSE(list["items"][0].contains("apiVersion"));
}

TEST_F(RestHandlerTest, ListAcrossNamespaces) {
  ASSERT_EQ(createPod("default", "a").status, 201);
  ASSERT_EQ(createPod("team", "b").status, 201);
  EXPECT_EQ(body(send("GET", "/api/v1/pods"))["items"].size(), 2u);
  EXPECT_EQ(body(send("GET", "/api/v1/namespaces/team/pods"))["items"].size(), 1u);
}

TEST_F(RestHandlerTest, ListFiltersByLabelSelector) {
  ASSERT_EQ(createPod("default", "a", {{"app", "web"}, {"tier", "front"}}).status, 201);
  ASSERT_EQ(createPod("default", "b", {{"app", "db"}}).status, 201);
  ASSERT_EQ(createPod("default", "c").status, 201);
  auto names = [this](const std::string& query) {
    std::vector<std::string> out;
    const json list = body(send("GET", "/api/v1/namespaces/default/pods?" + query));
    for (const auto& item : list["items"]) {
      out.push_back(item["metadata"]["name"]);
    }
    return out;
  };
  EXPECT_EQ(names("labelSelector=app%3Dweb"), std::vector<std::string>({"a"}));
  EXPECT_EQ(names("labelSelector=app+in+%28web%2Cdb%29"), std::vector<std::string>({"a", "b"}));
  EXPECT_EQ(names("labelSelector=app%21%3Dweb"), std::vector<std::string>({"b", "c"}));
  EXPECT_EQ(names("labelSelector=%21app"), std::vector<std::string>({"c"}));
  EXPECT_EQ(names("labelSelector=app,tier%3D%3Dfront"), std::vector<std::string>({"a"}));
  EXPECT_EQ(names("labelSelector=app+notin+%28web%29"), std::vector<std::string>({"b", "c"}));
}

TEST_F(RestHandlerTest, MalformedLabelSelectorIsBadRequest) {
  const auto response = send("GET", "/api/v1/namespaces/default/pods?labelSelector=app+in+web");
  EXPECT_EQ(response.status, 400);
  const json status = body(response);
  EXPECT_EQ(status["reason"], "BadRequest");
  EXPECT_EQ(status["message"], "unable to parse requirement: found 'web' expected: '('");
}

TEST_F(RestHandlerTest, TrailingCommaInLabelSelectorIsBadRequest) {
  const json status =
      body(send("GET", "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb,"));
  EXPECT_EQ(status["message"], "found '', expected: identifier after ','");
}

TEST_F(RestHandlerTest, ListFiltersByFieldSelectorOnName) {
  ASSERT_EQ(createPod("default", "a").status, 201);
  ASSERT_EQ(createPod("default", "b").status, 201);
  const json list =
      body(send("GET", "/api/v1/namespaces/default/pods?fieldSelector=metadata.name%3Db"));
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "b");
  const json others =
      body(send("GET", "/api/v1/namespaces/default/pods?fieldSelector=metadata.name!%3Db"));
  ASSERT_EQ(others["items"].size(), 1u);
  EXPECT_EQ(others["items"][0]["metadata"]["name"], "a");
}

TEST_F(RestHandlerTest, PodFieldSelectorOnPhase) {
  put("", "pods", {{"apiVersion", "v1"}, {"kind", "Pod"},
                   {"metadata", {{"name", "run"}, {"namespace", "default"}}},
                   {"status", {{"phase", "Running"}}}});
  put("", "pods", {{"apiVersion", "v1"}, {"kind", "Pod"},
                   {"metadata", {{"name", "wait"}, {"namespace", "default"}}},
                   {"status", {{"phase", "Pending"}}}});
  const json list = body(send("GET", "/api/v1/pods?fieldSelector=status.phase%3DRunning"));
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "run");
}

TEST_F(RestHandlerTest, UnsupportedFieldLabelIsBadRequest) {
  const json status = body(send("GET", "/api/v1/namespaces/default/configmaps?fieldSelector=data.k%3Dv"));
  EXPECT_EQ(status["code"], 400);
  EXPECT_EQ(status["message"],
            "\"data.k\" is not a known field selector: only \"metadata.name\", "
            "\"metadata.namespace\"");
  const json pod_status =
      body(send("GET", "/api/v1/namespaces/default/pods?fieldSelector=spec.foo%3Dbar"));
  EXPECT_EQ(pod_status["message"], "field label not supported: spec.foo");
}

TEST_F(RestHandlerTest, MalformedFieldSelectorIsBadRequest) {
  const json status = body(send("GET", "/api/v1/namespaces/default/pods?fieldSelector=nonsense"));
  EXPECT_EQ(status["code"], 400);
  EXPECT_EQ(status["message"], "invalid selector: 'nonsense'; can't understand 'nonsense'");
}

TEST_F(RestHandlerTest, ObjectsAreReturnedInTheRequestedEquivalentVersion) {
  json deployment = {{"apiVersion", "apps/v1"},
                     {"kind", "Deployment"},
                     {"metadata", {{"name", "web"}, {"namespace", "default"}}},
                     {"spec", {{"selector", {{"matchLabels", {{"app", "web"}}}}}}}};
  put("apps", "deployments", deployment);
  const auto response = send("GET", "/apis/apps/v1beta2/namespaces/default/deployments/web");
  ASSERT_EQ(response.status, 200);
  EXPECT_EQ(body(response)["apiVersion"], "apps/v1beta2");
  const json list = body(send("GET", "/apis/extensions/v1beta1/deployments"));
  EXPECT_EQ(list["apiVersion"], "extensions/v1beta1");
  EXPECT_EQ(list["items"].size(), 1u);
}

TEST_F(RestHandlerTest, TableIsServedWhenAsked) {
  ASSERT_EQ(createPod("default", "web").status, 201);
  const auto response =
      send("GET", "/api/v1/namespaces/default/pods", "", "",
           "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;"
           "g=meta.k8s.io,application/json");
  ASSERT_EQ(response.status, 200);
  const json table = body(response);
  EXPECT_EQ(table["kind"], "Table");
  EXPECT_EQ(table["apiVersion"], "meta.k8s.io/v1");
  std::vector<std::string> columns;
  for (const auto& c : table["columnDefinitions"]) {
    if (c["priority"] == 0) columns.push_back(c["name"]);
  }
  EXPECT_EQ(columns, std::vector<std::string>({"Name", "Ready", "Status", "Restarts", "Age"}));
  ASSERT_EQ(table["rows"].size(), 1u);
  EXPECT_EQ(table["rows"][0]["cells"][0], "web");
  EXPECT_EQ(table["rows"][0]["cells"][1], "0/1");
  EXPECT_EQ(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
  EXPECT_EQ(table["rows"][0]["object"]["metadata"]["namespace"], "default");
}

// kubectl get pods on the real control plane shows 0/2 for an injected Pod whose proxy is a native
// sidecar (a restartable init container); found by e2e/run --target kube vs sim.
TEST_F(RestHandlerTest, PodTableCountsNativeSidecarsAsContainers) {
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "meshed"}}},
              {"spec",
               {{"initContainers",
                 {{{"name", "init"}, {"image", "busybox"}},
                  {{"name", "proxy"}, {"image", "proxy"}, {"restartPolicy", "Always"}}}},
                {"containers", {{{"name", "app"}, {"image", "nginx:1.27"}}}}}}};
  ASSERT_EQ(send("POST", "/api/v1/namespaces/default/pods", pod.dump(), "application/json").status,
            201);
  const auto response = send("GET", "/api/v1/namespaces/default/pods/meshed", "", "",
                             "application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_EQ(response.status, 200);
  EXPECT_EQ(body(response)["rows"][0]["cells"][1], "0/2");
}

// kubectl get replicasets: DESIRED, CURRENT, READY as on the real control plane (e2e kube vs sim).
TEST_F(RestHandlerTest, ReplicaSetTableHasKubectlsColumns) {
  json rs = {{"apiVersion", "apps/v1"},
             {"kind", "ReplicaSet"},
             {"metadata", {{"name", "web-abc"}}},
             {"spec",
              {{"replicas", 2},
               {"selector", {{"matchLabels", {{"app", "web"}}}}},
               {"template",
                {{"metadata", {{"labels", {{"app", "web"}}}}},
                 {"spec", {{"containers", {{{"name", "app"}, {"image", "nginx"}}}}}}}}}}};
  ASSERT_EQ(send("POST", "/apis/apps/v1/namespaces/default/replicasets", rs.dump(),
                 "application/json")
                .status,
            201);
  const auto response = send("GET", "/apis/apps/v1/namespaces/default/replicasets", "", "",
                             "application/json;as=Table;v=v1;g=meta.k8s.io");
  ASSERT_EQ(response.status, 200);
  const json table = body(response);
  std::vector<std::string> columns;
  for (const auto& c : table["columnDefinitions"]) {
    if (c["priority"] == 0) columns.push_back(c["name"]);
  }
  EXPECT_EQ(columns, std::vector<std::string>({"Name", "Desired", "Current", "Ready", "Age"}));
  EXPECT_EQ(table["rows"][0]["cells"][1], 2);
  EXPECT_EQ(table["rows"][0]["cells"][2], 0);
}

TEST_F(RestHandlerTest, EventTableHasKubectlsColumns) {
  put("", "events",
      json::parse(R"({"apiVersion":"v1","kind":"Event","metadata":{"name":"web.1","namespace":
      "default","creationTimestamp":"2026-01-01T00:00:00Z"},"involvedObject":{"kind":"Deployment",
      "name":"web","namespace":"default"},"reason":"Injected","message":"Linkerd sidecar proxy injected",
      "type":"Normal","source":{"component":"linkerd-proxy-injector"},"count":1,
      "firstTimestamp":"2026-01-01T00:00:00Z","lastTimestamp":"2026-01-01T00:00:00Z"})"));
  const json table = body(send("GET", "/api/v1/namespaces/default/events", "", "",
                               "application/json;as=Table;v=v1;g=meta.k8s.io"));
  std::vector<std::string> columns;
  for (const auto& c : table["columnDefinitions"]) {
    if (c["priority"] == 0) columns.push_back(c["name"]);
  }
  EXPECT_EQ(columns,
            std::vector<std::string>({"Last Seen", "Type", "Reason", "Object", "Message"}));
  ASSERT_EQ(table["rows"].size(), 1u);
  const json& cells = table["rows"][0]["cells"];
  EXPECT_EQ(cells[1], "Normal");
  EXPECT_EQ(cells[2], "Injected");
  EXPECT_EQ(cells[3], "deployment/web");
  EXPECT_EQ(cells[5], "linkerd-proxy-injector");
  EXPECT_EQ(cells[6], "Linkerd sidecar proxy injected");
  EXPECT_EQ(cells[9], "web.1");
}

TEST_F(RestHandlerTest, TableOfOneObjectHasOneRow) {
  const json table = body(send("GET", "/api/v1/namespaces/team", "", "",
                               "application/json;as=Table;v=v1;g=meta.k8s.io"));
  EXPECT_EQ(table["kind"], "Table");
  ASSERT_EQ(table["rows"].size(), 1u);
  EXPECT_EQ(table["rows"][0]["cells"], json({"team", "Active", table["rows"][0]["cells"][2]}));
}

TEST_F(RestHandlerTest, PartialObjectMetadataListIsServedWhenAsked) {
  ASSERT_EQ(createPod("default", "web").status, 201);
  const json list =
      body(send("GET", "/api/v1/namespaces/default/pods", "", "",
                "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"));
  EXPECT_EQ(list["kind"], "PartialObjectMetadataList");
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "web");
  EXPECT_FALSE(list["items"][0].contains("spec"));
}

TEST_F(RestHandlerTest, UnacceptableMediaTypeIs406) {
  const auto response = send("GET", "/api/v1/namespaces", "", "",
                             "application/vnd.kubernetes.protobuf");
  EXPECT_EQ(response.status, 406);
  EXPECT_EQ(body(response)["reason"], "NotAcceptable");
}

TEST_F(RestHandlerTest, ReadsAreAudited) {
  ASSERT_EQ(send("GET", "/api/v1/namespaces/team").status, 200);
  bool seen = false;
  for (const auto& event : events()) {
    if (event.verb == "get" && event.request_uri == "/api/v1/namespaces/team") seen = true;
  }
  EXPECT_TRUE(seen);
}

TEST_F(RestHandlerTest, InvalidTimeoutIsBadRequest) {
  const auto response = send("GET", "/api/v1/namespaces?timeout=soon");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(body(response)["message"],
            "invalid timeout specified in the request URL - time: invalid duration \"soon\"");
}

// --- routing errors ---

TEST_F(RestHandlerTest, PostToAnObjectPathIsMethodNotAllowed) {
  const auto response = send("POST", "/api/v1/namespaces/default/pods/web", "{}",
                             "application/json");
  EXPECT_EQ(response.status, 405);
  EXPECT_EQ(body(response), json::parse(R"({"kind":"Status","apiVersion":"v1","metadata":{},
      "status":"Failure","message":"the server does not allow this method on the requested resource",
      "reason":"MethodNotAllowed","details":{},"code":405})"));
}

TEST_F(RestHandlerTest, PutToACollectionIsMethodNotAllowed) {
  EXPECT_EQ(send("PUT", "/api/v1/namespaces/default/pods", "{}", "application/json").status, 405);
}

TEST_F(RestHandlerTest, WritesAcrossNamespacesAreMethodNotAllowed) {
  EXPECT_EQ(send("POST", "/api/v1/pods", "{}", "application/json").status, 405);
}

TEST_F(RestHandlerTest, NamedObjectWithoutNamespaceIsNotFound) {
  EXPECT_EQ(send("GET", "/api/v1/pods/web").status, 404);
}

TEST_F(RestHandlerTest, ClusterScopedResourceInsideANamespaceIsNotFound) {
  EXPECT_EQ(send("GET", "/api/v1/namespaces/default/nodes").status, 404);
}

TEST_F(RestHandlerTest, UnsupportedSubresourceIsMethodNotSupported) {
  ASSERT_EQ(createPod("default", "web").status, 201);
  const auto response = send("GET", "/api/v1/namespaces/default/pods/web/log");
  EXPECT_EQ(response.status, 405);
  EXPECT_EQ(body(response)["message"], "get is not supported on resources of kind \"pods/log\"");
}

// --- create ---

TEST_F(RestHandlerTest, CreateAnswers201WithTheStoredObject) {
  const auto response = createConfigMap("default", "settings");
  ASSERT_EQ(response.status, 201) << response.body;
  const json cm = body(response);
  EXPECT_EQ(cm["kind"], "ConfigMap");
  EXPECT_EQ(cm["metadata"]["namespace"], "default");
  EXPECT_TRUE(store_.get({"", "configmaps"}, "default", "settings").has_value());
}

TEST_F(RestHandlerTest, CreateDefaultsApiVersionAndKindFromTheUrl) {
  const auto response = send("POST", "/api/v1/namespaces/default/configmaps",
                             R"({"metadata":{"name":"bare"}})", "application/json");
  ASSERT_EQ(response.status, 201) << response.body;
  EXPECT_EQ(body(response)["kind"], "ConfigMap");
}

TEST_F(RestHandlerTest, CreateAcceptsYaml) {
  const auto response = send("POST", "/api/v1/namespaces/default/configmaps",
                             "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\n",
                             "application/yaml");
  EXPECT_EQ(response.status, 201) << response.body;
}

TEST_F(RestHandlerTest, CreateWithAnotherNamespaceInTheBodyIsBadRequest) {
  const auto response =
      send("POST", "/api/v1/namespaces/default/configmaps",
           R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","namespace":"team"}})",
           "application/json");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(body(response)["message"],
            "the namespace of the provided object does not match the namespace sent on the "
            "request");
}

TEST_F(RestHandlerTest, CreateOfAnotherKindIsBadRequest) {
  const auto response =
      send("POST", "/api/v1/namespaces/default/pods",
           R"({"apiVersion":"v1","kind":"Service","metadata":{"name":"x"}})", "application/json");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(body(response)["message"],
            "Service in version \"v1\" cannot be handled as a Pod: converting (v1.Service) to "
            "(core.Pod): unknown conversion");
}

TEST_F(RestHandlerTest, CreateWithAnEquivalentButOtherVersionIsBadRequest) {
  const auto response = send(
      "POST", "/apis/apps/v1/namespaces/default/deployments",
      R"({"apiVersion":"apps/v1beta1","kind":"Deployment","metadata":{"name":"x"}})",
      "application/json");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(body(response)["message"],
            "the API version in the data (apps/v1beta1) does not match the expected API version "
            "(apps/v1)");
}

TEST_F(RestHandlerTest, CreateWithMalformedJsonIsBadRequest) {
  const auto response = send("POST", "/api/v1/namespaces/default/configmaps", "{nope",
                             "application/json");
  EXPECT_EQ(response.status, 400);
  const std::string message = body(response)["message"];
  EXPECT_EQ(message.rfind("the object provided is unrecognized (must be of type ConfigMap): "
                          "couldn't get version/kind; json parse error: ",
                          0),
            0u)
      << message;
  EXPECT_NE(message.find("({nope)"), std::string::npos) << message;
}

TEST_F(RestHandlerTest, CreateWithUnsupportedContentTypeIs415) {
  const auto response = send("POST", "/api/v1/namespaces/default/configmaps", "x=1",
                             "text/plain");
  EXPECT_EQ(response.status, 415);
  EXPECT_EQ(body(response)["message"],
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json, application/yaml");
}

TEST_F(RestHandlerTest, ProtobufBodiesAreDecodedByTheInstalledDecoderOnly) {
  constexpr const char* kProtobuf = "application/vnd.kubernetes.protobuf";
  const std::string wire = std::string("k8s\0", 4) + "fake protobuf";
  // Without a decoder: 415.
  auto response = send("POST", "/api/v1/namespaces/default/configmaps", wire, kProtobuf);
  EXPECT_EQ(response.status, 415);
  std::vector<std::string> seen;
  setProtobufDecoder([&seen](const std::string& bytes) -> core::Result<json> {
    seen.push_back(bytes);
    if (bytes.find("broken") != std::string::npos) {
      return core::makeError("proto: cannot parse invalid wire-format data",
                             core::ErrorCode::kDecode);
    }
    return json{{"apiVersion", "v1"},
                {"kind", "ConfigMap"},
                {"metadata", {{"name", "from-proto"}, {"creationTimestamp", nullptr}}},
                {"data", {{"k", "v"}}}};
  });
  response = send("POST", "/api/v1/namespaces/default/configmaps", wire, kProtobuf);
  ASSERT_EQ(response.status, 201) << response.body;
  EXPECT_EQ(body(response)["metadata"]["name"], "from-proto");
  EXPECT_EQ(seen, std::vector<std::string>{wire});
  EXPECT_TRUE(store_.get({"", "configmaps"}, "default", "from-proto").has_value());
  response = send("POST", "/api/v1/namespaces/default/configmaps", "broken", kProtobuf);
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(body(response)["message"],
            "the object provided is unrecognized (must be of type ConfigMap): couldn't get "
            "version/kind; json parse error: proto: cannot parse invalid wire-format data "
            "(62726f6b656e)");
  response = send("POST", "/api/v1/namespaces/default/configmaps", "x=1", "text/plain");
  EXPECT_EQ(body(response)["message"],
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json, application/yaml, application/vnd.kubernetes.protobuf");
  setProtobufDecoder({});
}

TEST_F(RestHandlerTest, FieldValidationAsksTheInstalledCheckerForJsonBodies) {
  const std::string configmap =
      R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"foo":1})";
  const std::string path = "/api/v1/namespaces/default/configmaps";
  // Without a checker: not checked, created.
  auto response = send("POST", path + "?fieldValidation=Strict", configmap, "application/json");
  ASSERT_EQ(response.status, 201) << response.body;
  ASSERT_EQ(send("DELETE", path + "/c").status, 200);
  std::vector<std::string> seen;
  setStrictFieldChecker([&seen](const std::string& body, const core::GroupVersionKind& kind)
                            -> core::Result<std::vector<std::string>> {
    seen.push_back(kind.kind + " " + body);
    if (body.find("fail") != std::string::npos) return core::makeError("kube-cel exited");
    return std::vector<std::string>{"unknown field \"foo\"", "unknown field \"bar\""};
  });
  // Strict: transformDecodeError's 400 with the body's kind and version.
  response = send("POST", path + "?fieldValidation=Strict", configmap, "application/json");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(body(response)["message"],
            "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: "
            "unknown field \"foo\", unknown field \"bar\"");
  EXPECT_EQ(seen, std::vector<std::string>{"ConfigMap " + configmap});
  EXPECT_FALSE(store_.get({"", "configmaps"}, "default", "c").has_value());
  // No fieldValidation is Warn: created, a Warning per field; the same on update.
  response = send("POST", path, configmap, "application/json");
  ASSERT_EQ(response.status, 201) << response.body;
  EXPECT_EQ(response.headers.getAll("Warning"),
            (std::vector<std::string>{R"(299 - "unknown field \"foo\"")",
                                      R"(299 - "unknown field \"bar\"")"}));
  response = send("PUT", path + "/c?fieldValidation=Warn", configmap, "application/json");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.headers.getAll("Warning").size(), 2u);
  // Ignore, and YAML bodies, are not checked.
  seen.clear();
  EXPECT_EQ(send("PUT", path + "/c?fieldValidation=Ignore", configmap, "application/json").status,
            200);
  EXPECT_EQ(send("PUT", path + "/c?fieldValidation=Strict",
                 "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\nfoo: 1\n",
                 "application/yaml")
                .status,
            200);
  EXPECT_TRUE(seen.empty());
  // A checker that fails is a 500, not a silent pass.
  response = send("POST", path + "?fieldValidation=Strict",
                  R"({"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"fail"}})",
                  "application/json");
  EXPECT_EQ(response.status, 500);
  EXPECT_EQ(body(response)["message"], "Internal error occurred: kube-cel exited");
  setStrictFieldChecker({});
}

TEST_F(RestHandlerTest, CreateOfAnExistingObjectIsAlreadyExists) {
  ASSERT_EQ(createConfigMap("default", "dup").status, 201);
  const auto response = createConfigMap("default", "dup");
  EXPECT_EQ(response.status, 409);
  EXPECT_EQ(body(response)["reason"], "AlreadyExists");
}

TEST_F(RestHandlerTest, DryRunCreateDoesNotStore) {
  json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "dry"}}}};
  const auto response = send("POST", "/api/v1/namespaces/default/configmaps?dryRun=All",
                             cm.dump(), "application/json");
  EXPECT_EQ(response.status, 201) << response.body;
  EXPECT_FALSE(store_.get({"", "configmaps"}, "default", "dry").has_value());
}

TEST_F(RestHandlerTest, UnknownDryRunValueIsInvalid) {
  json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "dry"}}}};
  const auto response = send("POST", "/api/v1/namespaces/default/configmaps?dryRun=Maybe",
                             cm.dump(), "application/json");
  EXPECT_EQ(response.status, 422);
  EXPECT_EQ(body(response)["message"],
            "CreateOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: "
            "[]string{\"Maybe\"}: supported values: \"All\"");
}

TEST_F(RestHandlerTest, CoreAndEventsApiEventsAreCreated) {
  json core_event = {{"apiVersion", "v1"},
                     {"kind", "Event"},
                     {"metadata", {{"name", "e1"}}},
                     {"involvedObject", {{"kind", "Pod"}, {"name", "web"}, {"namespace", "default"}}},
                     {"reason", "Injected"},
                     {"message", "sidecar injected"},
                     {"type", "Normal"}};
  EXPECT_EQ(send("POST", "/api/v1/namespaces/default/events", core_event.dump(),
                 "application/json")
                .status,
            201);
  json events_event = {{"apiVersion", "events.k8s.io/v1"},
                       {"kind", "Event"},
                       {"metadata", {{"name", "e2"}}},
                       {"eventTime", "2026-01-01T00:00:00.000000Z"},
                       {"reportingController", "linkerd.io/proxy-injector"},
                       {"reportingInstance", "injector-1"},
                       {"action", "Inject"},
                       {"reason", "Injected"},
                       {"type", "Normal"},
                       {"regarding", {{"kind", "Pod"}, {"name", "web"}, {"namespace", "default"}}}};
  const auto response = send("POST", "/apis/events.k8s.io/v1/namespaces/default/events",
                             events_event.dump(), "application/json");
  EXPECT_EQ(response.status, 201) << response.body;
}

// --- webhooks seen through the REST API ---

class RestHandlerWebhookTest : public RestHandlerTest {
 protected:
  void SetUp() override {
    put("admissionregistration.k8s.io", "mutatingwebhookconfigurations", json::parse(R"({
      "apiVersion": "admissionregistration.k8s.io/v1",
      "kind": "MutatingWebhookConfiguration",
      "metadata": {"name": "policy"},
      "webhooks": [{
        "name": "policy.example.com",
        "clientConfig": {"url": "https://policy.example.com/mutate"},
        "rules": [{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                   "resources": ["configmaps"]}],
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"]
      }]})"));
    caller_.handle("https://policy.example.com/mutate",
                   [](const core::AdmissionReview& review) -> std::optional<core::AdmissionReview> {
                     core::AdmissionResponse response;
                     const std::string name = review.request->name;
                     response.allowed = name != "forbidden";
                     if (!response.allowed) {
                       core::Status status;
                       status.code = 403;
                       status.message = "no \"forbidden\" configmaps";
                       response.status = status;
                     }
                     response.warnings = {"configmap \"" + name + "\" is watched"};
                     return core::makeResponseReview(review, response);
                   });
  }
};

TEST_F(RestHandlerWebhookTest, WebhookWarningsBecomeWarningHeaders) {
  const auto response = createConfigMap("default", "plain");
  ASSERT_EQ(response.status, 201) << response.body;
  EXPECT_EQ(response.headers.getAll("Warning"),
            std::vector<std::string>({"299 - \"configmap \\\"plain\\\" is watched\""}));
}

TEST_F(RestHandlerWebhookTest, WebhookDenialIsTheStatusOfTheResponse) {
  const auto response = createConfigMap("default", "forbidden");
  EXPECT_EQ(response.status, 403);
  const json status = body(response);
  EXPECT_EQ(status["kind"], "Status");
  EXPECT_EQ(status["message"],
            "admission webhook \"policy.example.com\" denied the request: no \"forbidden\" "
            "configmaps");
  EXPECT_FALSE(store_.get({"", "configmaps"}, "default", "forbidden").has_value());
}

TEST_F(RestHandlerWebhookTest, RequestAttributesReachTheAuditEvent) {
  ASSERT_EQ(createConfigMap("default", "plain").status, 201);
  bool seen = false;
  for (const auto& event : events()) {
    if (event.verb != "create") continue;
    seen = true;
    EXPECT_EQ(event.user_agent, "rest-handler-test/1.0");
    EXPECT_EQ(event.source_ips, std::vector<std::string>({"10.1.2.3"}));
    EXPECT_EQ(event.request_uri, "/api/v1/namespaces/default/configmaps");
    EXPECT_EQ(event.user.username, "system:admin");  // k3s's admin identity
  }
  EXPECT_TRUE(seen);
}

// --- update ---

TEST_F(RestHandlerTest, UpdateReplacesTheObject) {
  ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  json cm = body(send("GET", "/api/v1/namespaces/default/configmaps/settings"));
  cm["data"]["k"] = "changed";
  const auto response = send("PUT", "/api/v1/namespaces/default/configmaps/settings", cm.dump(),
                             "application/json");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ((*store_.get({"", "configmaps"}, "default", "settings"))["data"]["k"], "changed");
}

TEST_F(RestHandlerTest, UpdateWithAnotherNameIsBadRequest) {
  ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  json cm = {{"apiVersion", "v1"}, {"kind", "ConfigMap"}, {"metadata", {{"name", "other"}}}};
  const auto response = send("PUT", "/api/v1/namespaces/default/configmaps/settings", cm.dump(),
                             "application/json");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(body(response)["message"],
            "the name of the object (other) does not match the name on the URL (settings)");
}

TEST_F(RestHandlerTest, UpdateWithAStaleResourceVersionIsAConflict) {
  ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  json cm = body(send("GET", "/api/v1/namespaces/default/configmaps/settings"));
  cm["metadata"]["resourceVersion"] = "1";
  const auto response = send("PUT", "/api/v1/namespaces/default/configmaps/settings", cm.dump(),
                             "application/json");
  EXPECT_EQ(response.status, 409);
  EXPECT_EQ(body(response)["reason"], "Conflict");
}

TEST_F(RestHandlerTest, StatusSubresourceKeepsTheSpec) {
  ASSERT_EQ(createPod("default", "web").status, 201);
  json pod = body(send("GET", "/api/v1/namespaces/default/pods/web/status"));
  EXPECT_EQ(pod["kind"], "Pod");
  pod["status"] = {{"phase", "Running"}};
  pod["spec"]["containers"][0]["image"] = "ignored:1";
  const auto response = send("PUT", "/api/v1/namespaces/default/pods/web/status", pod.dump(),
                             "application/json");
  ASSERT_EQ(response.status, 200) << response.body;
  const json stored = *store_.get({"", "pods"}, "default", "web");
  EXPECT_EQ(stored["status"]["phase"], "Running");
  EXPECT_EQ(stored["spec"]["containers"][0]["image"], "nginx:1.27");
}

// --- patch ---

TEST_F(RestHandlerTest, MergePatchAddsALabel) {
  ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  const auto response = send("PATCH", "/api/v1/namespaces/default/configmaps/settings",
                             R"({"metadata":{"labels":{"team":"a"}}})",
                             "application/merge-patch+json");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(body(response)["metadata"]["labels"]["team"], "a");
  EXPECT_EQ((*store_.get({"", "configmaps"}, "default", "settings"))["metadata"]["labels"]["team"],
            "a");
}

TEST_F(RestHandlerTest, JsonPatchIsApplied) {
  ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  const auto response =
      send("PATCH", "/api/v1/namespaces/default/configmaps/settings",
           R"([{"op":"replace","path":"/data/k","value":"patched"}])", "application/json-patch+json");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(body(response)["data"]["k"], "patched");
}

TEST_F(RestHandlerTest, JsonPatchThatDoesNotApplyIsUnprocessable) {
  ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  const auto response =
      send("PATCH", "/api/v1/namespaces/default/configmaps/settings",
           R"([{"op":"remove","path":"/data/missing"}])", "application/json-patch+json");
  EXPECT_EQ(response.status, 422);
  EXPECT_EQ(body(response)["message"],
            "the server rejected our request due to an error in our request");
}

TEST_F(RestHandlerTest, UndecodableJsonPatchIsBadRequest) {
  ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  const auto response = send("PATCH", "/api/v1/namespaces/default/configmaps/settings",
                             R"({"op":"add"})", "application/json-patch+json");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(body(response)["message"],
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch");
}

TEST_F(RestHandlerTest, MalformedMergePatchIsBadRequest) {
  ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  const auto response = send("PATCH", "/api/v1/namespaces/default/configmaps/settings", "{",
                             "application/merge-patch+json");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(body(response)["message"], "Invalid JSON Patch");
}

TEST_F(RestHandlerTest, StrategicMergePatchMergesContainersByName) {
  ASSERT_EQ(createPod("default", "web").status, 201);
  // A list of containers in a strategic merge patch merges by name: only the image of "app"
  // changes (pod updates may change images), its other fields stay.
  const auto response = send(
      "PATCH", "/api/v1/namespaces/default/pods/web",
      R"({"spec":{"containers":[{"name":"app","image":"nginx:1.28"}]}})",
      "application/strategic-merge-patch+json");
  ASSERT_EQ(response.status, 200) << response.body;
  const json containers = body(response)["spec"]["containers"];
  ASSERT_EQ(containers.size(), 1u);
  EXPECT_EQ(containers[0]["name"], "app");
  EXPECT_EQ(containers[0]["image"], "nginx:1.28");
  EXPECT_EQ(containers[0]["terminationMessagePath"], "/dev/termination-log");
}

TEST_F(RestHandlerTest, PodUpdatesMayNotAddContainers) {
  ASSERT_EQ(createPod("default", "web").status, 201);
  const auto response = send(
      "PATCH", "/api/v1/namespaces/default/pods/web",
      R"({"spec":{"containers":[{"name":"sidecar","image":"proxy:2"}]}})",
      "application/strategic-merge-patch+json");
  EXPECT_EQ(response.status, 422);
  EXPECT_NE(body(response)["message"].get<std::string>().find(
                "pod updates may not change fields other than"),
            std::string::npos);
}

TEST_F(RestHandlerTest, StrategicDirectivesAreNotStoredForKindsWithoutASchema) {
  ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  const auto response =
      send("PATCH", "/api/v1/namespaces/default/configmaps/settings",
           R"({"$setElementOrder/x":[],"data":{"k2":"v2"}})", "application/strategic-merge-patch+json");
  ASSERT_EQ(response.status, 200) << response.body;
  const json cm = body(response);
  EXPECT_EQ(cm["data"]["k2"], "v2");
  EXPECT_FALSE(cm.contains("$setElementOrder/x"));
}

TEST_F(RestHandlerTest, PatchWithAnUnsupportedContentTypeIsTheRouters415) {
  ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  const auto response = send("PATCH", "/api/v1/namespaces/default/configmaps/settings", "{}",
                             "application/json");
  EXPECT_EQ(response.status, 415);
  EXPECT_EQ(body(response)["message"], "415: Unsupported Media Type");
  EXPECT_EQ(body(response)["reason"], "UnsupportedMediaType");
}

TEST_F(RestHandlerTest, PatchOfAMissingObjectIsNotFound) {
  const auto response = send("PATCH", "/api/v1/namespaces/default/configmaps/none", "{}",
                             "application/merge-patch+json");
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(body(response)["message"], "configmaps \"none\" not found");
}

TEST_F(RestHandlerTest, PatchThatRenamesIsBadRequest) {
  ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  const auto response = send("PATCH", "/api/v1/namespaces/default/configmaps/settings",
                             R"({"metadata":{"name":"renamed"}})", "application/merge-patch+json");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(body(response)["message"],
            "the name of the object (renamed) does not match the name on the URL (settings)");
}

TEST_F(RestHandlerTest, ApplyPatchCreatesAMissingObject) {
  const auto response =
      send("PATCH", "/api/v1/namespaces/default/configmaps/applied?fieldManager=test",
           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: b\n",
           "application/apply-patch+yaml");
  ASSERT_EQ(response.status, 201) << response.body;
  EXPECT_EQ((*store_.get({"", "configmaps"}, "default", "applied"))["data"]["a"], "b");
}

TEST_F(RestHandlerTest, ApplyPatchMergesIntoAnExistingObject) {
  ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  const auto response =
      send("PATCH", "/api/v1/namespaces/default/configmaps/settings?fieldManager=test",
           "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  a: b\n",
           "application/apply-patch+yaml");
  ASSERT_EQ(response.status, 200) << response.body;
  const json data = (*store_.get({"", "configmaps"}, "default", "settings"))["data"];
  EXPECT_EQ(data, json({{"a", "b"}, {"k", "v"}}));
}

TEST_F(RestHandlerTest, ApplyPatchWithoutFieldManagerIsInvalid) {
  const auto response = send("PATCH", "/api/v1/namespaces/default/configmaps/applied",
                             "apiVersion: v1\nkind: ConfigMap\n", "application/apply-patch+yaml");
  EXPECT_EQ(response.status, 422);
  EXPECT_EQ(body(response)["message"],
            "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required "
            "for apply patch");
}

// --- delete ---

TEST_F(RestHandlerTest, DeleteOfAPodReturnsThePod) {
  ASSERT_EQ(createPod("default", "web").status, 201);
  const auto response = send("DELETE", "/api/v1/namespaces/default/pods/web",
                             R"({"propagationPolicy":"Background"})", "application/json");
  ASSERT_EQ(response.status, 200) << response.body;
  const json pod = body(response);
  EXPECT_EQ(pod["kind"], "Pod");
  EXPECT_EQ(pod["metadata"]["name"], "web");
  EXPECT_FALSE(store_.get({"", "pods"}, "default", "web").has_value());
}

TEST_F(RestHandlerTest, DeleteOfAConfigMapReturnsASuccessStatus) {
  const json created = body(createConfigMap("default", "settings"));
  const auto response = send("DELETE", "/api/v1/namespaces/default/configmaps/settings");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(body(response), json({{"kind", "Status"},
                                  {"apiVersion", "v1"},
                                  {"metadata", json::object()},
                                  {"status", "Success"},
                                  {"details",
                                   {{"name", "settings"},
                                    {"kind", "configmaps"},
                                    {"uid", created["metadata"]["uid"]}}}}));
}

TEST_F(RestHandlerTest, DeleteOfANamespaceAnswersItTerminatingAndItsFinalizeRemovesIt) {
  ASSERT_EQ(send("POST", "/api/v1/namespaces",
                 R"({"apiVersion":"v1","kind":"Namespace","metadata":{"name":"doomed"}})",
                 "application/json")
                .status,
            201);
  auto response = send("DELETE", "/api/v1/namespaces/doomed");
  ASSERT_EQ(response.status, 200) << response.body;
  json ns = body(response);
  EXPECT_EQ(ns["kind"], "Namespace");
  EXPECT_EQ(ns["status"]["phase"], "Terminating");
  EXPECT_TRUE(ns["metadata"].contains("deletionTimestamp"));
  EXPECT_EQ(ns["spec"]["finalizers"], json::array({"kubernetes"}));
  ASSERT_TRUE(store_.get({"", "namespaces"}, "", "doomed").has_value());
  // namespaces/finalize is served for PUT only.
  EXPECT_EQ(send("GET", "/api/v1/namespaces/doomed/finalize").status, 405);
  // An update of the main resource cannot remove the finalizer (the strategy keeps it).
  json update = ns;
  update["spec"]["finalizers"] = json::array();
  response = send("PUT", "/api/v1/namespaces/doomed", update.dump(), "application/json");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(body(response)["spec"]["finalizers"], json::array({"kubernetes"}));
  update["metadata"]["resourceVersion"] = body(response)["metadata"]["resourceVersion"];
  response = send("PUT", "/api/v1/namespaces/doomed/finalize", update.dump(), "application/json");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_FALSE(store_.get({"", "namespaces"}, "", "doomed").has_value());
}

TEST_F(RestHandlerTest, DeleteOfAMissingObjectIsNotFound) {
  const auto response = send("DELETE", "/api/v1/namespaces/default/configmaps/none");
  EXPECT_EQ(response.status, 404);
  EXPECT_EQ(body(response)["message"], "configmaps \"none\" not found");
}

TEST_F(RestHandlerTest, DeleteWithAWrongUidPreconditionIsAConflict) {
  ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  const auto response = send("DELETE", "/api/v1/namespaces/default/configmaps/settings",
                             R"({"preconditions":{"uid":"other"}})", "application/json");
  EXPECT_EQ(response.status, 409);
  const std::string message = body(response)["message"];
  EXPECT_EQ(message.rfind("Operation cannot be fulfilled on configmaps \"settings\": Precondition "
                          "failed: UID in precondition: other, UID in object meta: ",
                          0),
            0u)
      << message;
  EXPECT_TRUE(store_.get({"", "configmaps"}, "default", "settings").has_value());
}

TEST_F(RestHandlerTest, DeleteWithAnUnknownPropagationPolicyIsInvalid) {
  ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  const auto response =
      send("DELETE", "/api/v1/namespaces/default/configmaps/settings?propagationPolicy=Later");
  EXPECT_EQ(response.status, 422);
  EXPECT_EQ(body(response)["reason"], "Invalid");
}

TEST_F(RestHandlerTest, DryRunDeleteKeepsTheObject) {
  ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  const auto response =
      send("DELETE", "/api/v1/namespaces/default/configmaps/settings?dryRun=All");
  EXPECT_EQ(response.status, 200) << response.body;
  EXPECT_TRUE(store_.get({"", "configmaps"}, "default", "settings").has_value());
}

TEST_F(RestHandlerTest, DeleteCollectionDeletesOnlySelectedObjects) {
  ASSERT_EQ(createPod("default", "a", {{"app", "web"}}).status, 201);
  ASSERT_EQ(createPod("default", "b", {{"app", "db"}}).status, 201);
  const auto response = send("DELETE", "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb");
  ASSERT_EQ(response.status, 200) << response.body;
  const json list = body(response);
  EXPECT_EQ(list["kind"], "PodList");
  ASSERT_EQ(list["items"].size(), 1u);
  EXPECT_EQ(list["items"][0]["metadata"]["name"], "a");
  EXPECT_FALSE(store_.get({"", "pods"}, "default", "a").has_value());
  EXPECT_TRUE(store_.get({"", "pods"}, "default", "b").has_value());
}

// --- SelfSubjectAccessReview (access_reviews.cc) ---

constexpr const char* kReviews = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
constexpr const char* kCanGetPods =
    R"({"apiVersion":"authorization.k8s.io/v1","kind":"SelfSubjectAccessReview",)"
    R"("spec":{"resourceAttributes":{"namespace":"default","verb":"get","resource":"pods"}}})";

TEST_F(RestHandlerTest, AccessReviewAllowsTheAdmin) {
  const auto response = send("POST", kReviews, kCanGetPods, "application/json");
  ASSERT_EQ(response.status, 201) << response.body;
  EXPECT_EQ(body(response)["status"], json({{"allowed", true}}));
  EXPECT_EQ(body(response)["spec"]["resourceAttributes"]["verb"], "get");
}

TEST_F(RestHandlerTest, AccessReviewForAnImpersonatedUserFollowsTheirGroups) {
  auto response = send("POST", kReviews, kCanGetPods, "application/json", "", true,
                       {{"Impersonate-User", "jane"}});
  ASSERT_EQ(response.status, 201) << response.body;
  EXPECT_EQ(body(response)["status"], json({{"allowed", false}}));
  response = send("POST", kReviews, kCanGetPods, "application/json", "", true,
                  {{"Impersonate-User", "jane"}, {"Impersonate-Group", "system:masters"}});
  EXPECT_EQ(body(response)["status"], json({{"allowed", true}}));
}

TEST_F(RestHandlerTest, AccessReviewNeedsExactlyOneKindOfAttributes) {
  const auto response = send("POST", kReviews,
                             R"({"apiVersion":"authorization.k8s.io/v1",)"
                             R"("kind":"SelfSubjectAccessReview","spec":{}})",
                             "application/json");
  ASSERT_EQ(response.status, 422) << response.body;
  EXPECT_EQ(body(response)["message"],
            ".authorization.k8s.io \"\" is invalid: spec: Invalid value: null: exactly one of "
            "nonResourceAttributes or resourceAttributes must be specified");
  EXPECT_EQ(send("GET", kReviews).status, 405);
}

// --- RBAC (the chain authorizing as under `serve` with the bootstrap policy): a forbidden read
// and write as an impersonated user, the RBAC resources and their tables, SelfSubjectRulesReview
// (`kubectl auth can-i --list`), SubjectAccessReview and LocalSubjectAccessReview with upstream's
// validation, and the SelfSubjectAccessReview's reason (access_reviews.cc, authorizer.h) ---

constexpr const char* kRbac = "/apis/rbac.authorization.k8s.io/v1";
using Headers = std::vector<std::pair<std::string, std::string>>;

const json kSelfReviews = {
    {"verbs", {"create"}},
    {"apiGroups", {"authorization.k8s.io"}},
    {"resources", {"selfsubjectaccessreviews", "selfsubjectrulesreviews"}}};

class RbacRestTest : public RestHandlerTest {
 protected:
  RbacRestTest() : RestHandlerTest(true) {
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
    return RestHandlerTest::send(method, target, body, body.empty() ? "" : "application/json",
                                 "", true, headers);
  }
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

// --- fieldValidation on PATCH (field_validation.h StrictPatchChecker) ---

class PatchFieldValidationTest : public RestHandlerTest {
 protected:
  void SetUp() override {
    RestHandlerTest::SetUp();
    setStrictPatchChecker([this](const json& current, const std::string& patch,
                                 std::string_view patch_type, std::string_view directive,
                                 const core::GroupVersionKind& kind)
                              -> core::Result<PatchFieldCheck> {
      seen_.push_back(std::string(directive) + " " + std::string(patch_type) + " " + kind.kind +
                      " " + current["data"].dump() + " " + patch);
      PatchFieldCheck answer;
      if (directive == "Warn") answer.first = {"unknown field \"foo\""};
      if (directive == "Strict") {
        answer.second = core::newBadRequest("strict decoding error: unknown field \"foo\"");
      }
      return answer;
    });
    ASSERT_EQ(createConfigMap("default", "settings").status, 201);
  }
  void TearDown() override { setStrictPatchChecker({}); }

  net::Response patch(const std::string& query) {
    return send("PATCH", "/api/v1/namespaces/default/configmaps/settings" + query,
                R"({"data":{"a":"b"},"foo":1})", "application/merge-patch+json");
  }

  std::vector<std::string> seen_;
};

TEST_F(PatchFieldValidationTest, WarnIsTheDefaultAndPatches) {
  const auto response = patch("");
  ASSERT_EQ(response.status, 200) << response.body;
  EXPECT_EQ(response.headers.getAll("Warning"),
            std::vector<std::string>{"299 - \"unknown field \\\"foo\\\"\""});
  EXPECT_EQ(body(response)["data"]["a"], "b");
  ASSERT_EQ(seen_.size(), 1u);
  EXPECT_EQ(seen_[0], R"(Warn application/merge-patch+json ConfigMap {"k":"v"} )"
                      R"({"data":{"a":"b"},"foo":1})");
}

TEST_F(PatchFieldValidationTest, StrictAnswersTheCheckersStatusAndStoresNothing) {
  const auto response = patch("?fieldValidation=Strict");
  EXPECT_EQ(response.status, 400);
  EXPECT_EQ(body(response)["message"], "strict decoding error: unknown field \"foo\"");
  EXPECT_FALSE((*store_.get({"", "configmaps"}, "default", "settings"))["data"].contains("a"));
}

TEST_F(PatchFieldValidationTest, IgnoreDoesNotCheck) {
  ASSERT_EQ(patch("?fieldValidation=Ignore").status, 200);
  EXPECT_TRUE(seen_.empty());
}

}  // namespace
}  // namespace harness::sim
