// CustomResourceDefinitions and their custom resources through the REST API, the admission chain
// and the controllers, by apiextensions-apiserver's code in kube-cel (skipped, with one line,
// when scripts/build-kube.sh has not built it); and what is served from stored CRDs
// (custom_resources.h), which needs no Go.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/metrics.h"
#include "harness/process/kube_bin_dir.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/caller.h"
#include "harness/sim/cel.h"
#include "harness/sim/custom_resources.h"
#include "harness/sim/rest_api.h"
#include "harness/sim/store.h"
#include "harness/sim/workload_controllers.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A CRD as the controllers leave it: names accepted, Established.
json establishedCrd(const std::string& plural, const std::string& group, const std::string& kind,
                    json versions, const std::string& scope = "Namespaced") {
  return {{"apiVersion", "apiextensions.k8s.io/v1"},
          {"kind", "CustomResourceDefinition"},
          {"metadata", {{"name", plural + "." + group}}},
          {"spec",
           {{"group", group},
            {"scope", scope},
            {"names", {{"plural", plural}, {"kind", kind}}},
            {"versions", std::move(versions)}}},
          {"status",
           {{"acceptedNames",
             {{"plural", plural},
              {"singular", "widget"},
              {"kind", kind},
              {"listKind", kind + "List"},
              {"shortNames", {"wd"}},
              {"categories", {"all"}}}},
            {"conditions", {{{"type", "Established"}, {"status", "True"}}}}}}};
}

TEST(ServedCustomResourcesTest, EstablishedServedVersionsWithTheirSubresources) {
  ObjectStore store;
  store.put(kCustomResourceDefinitions,
            establishedCrd("widgets", "example.com", "Widget",
                           {{{"name", "v1"},
                             {"served", true},
                             {"storage", true},
                             {"subresources", {{"status", json::object()},
                                               {"scale", {{"specReplicasPath", ".spec.r"}}}}}},
                            {{"name", "v1alpha1"}, {"served", false}, {"storage", false}},
                            {{"name", "v2beta1"}, {"served", true}, {"storage", false}}}));
  json pending = establishedCrd("gadgets", "example.com", "Gadget",
                                {{{"name", "v1"}, {"served", true}, {"storage", true}}});
  pending["status"]["conditions"] = json::array();  // not yet Established
  store.put(kCustomResourceDefinitions, pending);

  const auto served = servedCustomResources(store);
  std::vector<std::string> names;
  names.reserve(served.size());
  for (const auto& s : served) {
    names.push_back(s.info.resource.version + "/" + s.info.resource.resource +
                    (s.info.subresource.empty() ? "" : "/" + s.info.subresource) + " " +
                    s.info.kind.group + "/" + s.info.kind.kind);
  }
  EXPECT_THAT(names, ElementsAre("v1/widgets example.com/Widget", "v1/widgets/status example.com/Widget",
                                 "v1/widgets/scale autoscaling/Scale",
                                 "v2beta1/widgets example.com/Widget"));
  EXPECT_THAT(served[0].verbs, ElementsAre("delete", "deletecollection", "get", "list", "patch",
                                           "create", "update", "watch"));
  EXPECT_THAT(served[0].short_names, ElementsAre("wd"));
  EXPECT_EQ(served[0].list_kind, "WidgetList");
  EXPECT_TRUE(served[0].info.namespaced);

  EXPECT_TRUE(findCustomResource(store, {"example.com", "v2beta1", "widgets"}).has_value());
  EXPECT_FALSE(findCustomResource(store, {"example.com", "v1alpha1", "widgets"}).has_value());
  EXPECT_FALSE(findCustomResource(store, {"example.com", "v1", "gadgets"}).has_value());
  // The definition a write is admitted against is found whether or not it is established.
  EXPECT_TRUE(customResourceDefinitionFor(store, {"example.com", "gadgets"}).has_value());
}

TEST(ServedCustomResourcesTest, KubernetesVersionPriority) {
  // version.CompareKubeAwareVersionStrings' own example order.
  std::vector<std::string> versions = {"foo10", "v1", "v11alpha2", "v10beta3", "v3beta1", "v12alpha1",
                                       "foo1", "v2", "v11beta2", "v10"};
  std::stable_sort(versions.begin(), versions.end(), kubeAwareVersionBefore);
  EXPECT_THAT(versions, ElementsAre("v10", "v2", "v1", "v11beta2", "v10beta3", "v3beta1",
                                    "v12alpha1", "v11alpha2", "foo1", "foo10"));
}

TEST(ServedCustomResourcesTest, ATerminatingDefinitionOnlyReadsAndDeletes) {
  ObjectStore store;
  json crd = establishedCrd("widgets", "example.com", "Widget",
                            {{{"name", "v1"}, {"served", true}, {"storage", true}}});
  crd["status"]["conditions"].push_back({{"type", "Terminating"}, {"status", "True"}});
  store.put(kCustomResourceDefinitions, crd);
  const auto served = servedCustomResources(store);
  ASSERT_EQ(served.size(), 1U);
  EXPECT_THAT(served[0].verbs, ElementsAre("delete", "deletecollection", "get", "list", "watch"));
}

// --- with kube-cel ---

constexpr const char* kToken = "crd-test-token";

// A CRD with what users put in one: a schema with a default and an x-kubernetes-validations
// rule, the status subresource, printer columns, short names.
const char* kWidgetsCrd = R"({
  "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
  "metadata": {"name": "widgets.example.com"},
  "spec": {"group": "example.com", "scope": "Namespaced",
    "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "shortNames": ["wd"]},
    "versions": [{"name": "v1", "served": true, "storage": true,
      "subresources": {"status": {}},
      "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"},
                                   {"name": "Color", "type": "string", "jsonPath": ".spec.color"}],
      "schema": {"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object",
          "x-kubernetes-validations": [{"rule": "self.size <= 10", "message": "size is at most 10"}],
          "properties": {"size": {"type": "integer"}, "color": {"type": "string", "default": "blue"}}},
        "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}}}}}]}})";

class CustomResourceRestTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const auto binary = process::kubeBinDir() / "kube-cel";
    if (auto reason = testing::notBuiltReason(binary); !reason.empty()) {
      skip_reason_ = reason;
      return;
    }
    scratch_ = new testing::ScratchDir("crd");
    auto cel = cel::KubeCel::start(binary, scratch_->path() / "kube-cel.log");
    ASSERT_TRUE(cel.ok()) << cel.error().message;
    cel_ = new std::shared_ptr<cel::KubeCel>(std::move(*cel));
  }
  static void TearDownTestSuite() {
    delete cel_;
    delete scratch_;
    cel_ = nullptr;
    scratch_ = nullptr;
  }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ChainOptions options;
    options.custom_resources = cel::customResourceCode(*cel_);
    chain_ = std::make_unique<AdmissionChain>(store_, caller_, metrics_, options);
    RestApiOptions rest;
    rest.bearer_token = kToken;
    handler_ = std::make_unique<RestApiHandler>(store_, *chain_, rest);
    ControllerOptions controller_options;
    controller_options.run_thread = false;
    controller_options.crd_status = options.custom_resources.definition_status;
    controllers_ = std::make_unique<WorkloadControllers>(store_, *chain_, controller_options);
    store_.put({"", "namespaces"}, {{"apiVersion", "v1"},
                                    {"kind", "Namespace"},
                                    {"metadata", {{"name", "default"}}},
                                    {"status", {{"phase", "Active"}}}});
    createDefaultServiceAccount(store_, "default");
  }

  net::Response send(const std::string& method, const std::string& target,
                     const std::string& body = "",
                     const std::string& content_type = "application/json",
                     const std::string& accept = "application/json") {
    net::Request request;
    request.method = method;
    request.target = target;
    const auto question = target.find('?');
    request.path = target.substr(0, question);
    request.query = question == std::string::npos ? "" : target.substr(question + 1);
    request.body = body;
    request.peer = "127.0.0.1:40000";
    request.tls = true;
    request.headers.add("Authorization", std::string("Bearer ") + kToken);
    if (!body.empty()) request.headers.add("Content-Type", content_type);
    request.headers.add("Accept", accept);
    return handler_->handle(request);
  }

  static json body(const net::Response& response) { return json::parse(response.body); }

  // Creates the CRD and lets the controllers name and establish it.
  void establishWidgets() {
    const auto created =
        send("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", kWidgetsCrd);
    ASSERT_EQ(created.status, 201) << created.body;
    while (controllers_->reconcileOnce()) {
    }
  }

  static inline std::string skip_reason_;
  static inline testing::ScratchDir* scratch_ = nullptr;
  static inline std::shared_ptr<cel::KubeCel>* cel_ = nullptr;
  ObjectStore store_;
  InProcessWebhookCaller caller_;
  core::MetricsRegistry metrics_;
  std::unique_ptr<AdmissionChain> chain_;
  std::unique_ptr<RestApiHandler> handler_;
  std::unique_ptr<WorkloadControllers> controllers_;
};

TEST_F(CustomResourceRestTest, ADefinitionIsNamedEstablishedAndDiscovered) {
  // Before the controllers run, the group is not served.
  const auto created =
      send("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", kWidgetsCrd);
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(body(created)["metadata"]["generation"], 1);
  EXPECT_EQ(body(created)["status"]["storedVersions"], json::array({"v1"}));
  EXPECT_EQ(send("GET", "/apis/example.com/v1").status, 404);
  while (controllers_->reconcileOnce()) {
  }
  const json crd = body(send("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                                    "widgets.example.com"));
  std::vector<std::string> conditions;
  for (const auto& c : crd["status"]["conditions"]) {
    conditions.push_back(c["type"].get<std::string>() + "=" + c["status"].get<std::string>() +
                         " " + c["reason"].get<std::string>());
  }
  EXPECT_THAT(conditions, ElementsAre("NamesAccepted=True NoConflicts",
                                      "Established=True InitialNamesAccepted"));
  EXPECT_EQ(crd["status"]["acceptedNames"]["listKind"], "WidgetList");

  const json list = body(send("GET", "/apis/example.com/v1"));
  ASSERT_EQ(list["resources"].size(), 2U) << list.dump();
  EXPECT_EQ(list["resources"][0],
            json({{"name", "widgets"},
                  {"singularName", "widget"},
                  {"namespaced", true},
                  {"kind", "Widget"},
                  {"verbs", {"delete", "deletecollection", "get", "list", "patch", "create",
                             "update", "watch"}},
                  {"shortNames", {"wd"}}}));
  EXPECT_EQ(list["resources"][1]["name"], "widgets/status");
  bool grouped = false;
  const json groups = body(send("GET", "/apis"));
  for (const auto& group : groups["groups"]) {
    if (group["name"] == "example.com") grouped = group["preferredVersion"]["version"] == "v1";
  }
  EXPECT_TRUE(grouped) << groups.dump();
  EXPECT_TRUE(body(send("GET", "/openapi/v3"))["paths"].contains("apis/example.com/v1"));
}

TEST_F(CustomResourceRestTest, AnInvalidDefinitionIsThe422OfItsValidation) {
  json crd = json::parse(kWidgetsCrd);
  crd["metadata"]["name"] = "gadgets.example.com";
  crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
     ["x-kubernetes-validations"][0]["rule"] = "self.size <=";
  const auto response =
      send("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd.dump());
  EXPECT_EQ(response.status, 422);
  const std::string message = body(response)["message"];
  EXPECT_THAT(message, HasSubstr(R"(CustomResourceDefinition.apiextensions.k8s.io "gadgets.example.com" is invalid: [metadata.name: Invalid value: "gadgets.example.com": must be spec.names.plural+"."+spec.group)"));
  EXPECT_THAT(message, HasSubstr("compilation failed"));
  EXPECT_FALSE(store_.get(kCustomResourceDefinitions, "", "gadgets.example.com").has_value());
}

TEST_F(CustomResourceRestTest, CustomResourcesAreDefaultedValidatedPrunedAndPrinted) {
  establishWidgets();
  const std::string widgets = "/apis/example.com/v1/namespaces/default/widgets";
  // Defaulted (color), pruned (an unknown field: a warning under the default Warn), status
  // dropped on create (the status subresource).
  const auto created = send("POST", widgets,
                            R"({"apiVersion":"example.com/v1","kind":"Widget",)"
                            R"("metadata":{"name":"w1"},"spec":{"size":3,"shape":"round"},)"
                            R"("status":{"ready":true}})");
  ASSERT_EQ(created.status, 201) << created.body;
  const json w1 = body(created);
  EXPECT_EQ(w1["spec"], json({{"size", 3}, {"color", "blue"}}));
  EXPECT_FALSE(w1.contains("status"));
  EXPECT_EQ(w1["metadata"]["generation"], 1);
  EXPECT_THAT(created.headers.get("Warning").value_or(""),
              HasSubstr(R"(unknown field \"spec.shape\")"));

  // The CEL rule's 422.
  const auto refused = send("POST", widgets,
                            R"({"apiVersion":"example.com/v1","kind":"Widget",)"
                            R"("metadata":{"name":"w2"},"spec":{"size":11}})");
  EXPECT_EQ(refused.status, 422);
  EXPECT_EQ(body(refused)["message"],
            R"(Widget.example.com "w2" is invalid: spec: Invalid value: size is at most 10)");
  // A wrong type: the schema's 422.
  const auto mistyped = send("POST", widgets,
                             R"({"apiVersion":"example.com/v1","kind":"Widget",)"
                             R"("metadata":{"name":"w3"},"spec":{"size":"big"}})");
  EXPECT_EQ(mistyped.status, 422);
  EXPECT_THAT(body(mistyped)["message"].get<std::string>(),
              HasSubstr(R"(spec.size: Invalid value: "string": spec.size in body must be of type integer: "string")"));
  // fieldValidation=Strict: the unknown field is the 400.
  const auto strict = send("POST", widgets + "?fieldValidation=Strict",
                           R"({"apiVersion":"example.com/v1","kind":"Widget",)"
                           R"("metadata":{"name":"w4"},"spec":{"size":1,"shape":"round"}})");
  EXPECT_EQ(strict.status, 400);
  EXPECT_EQ(body(strict)["message"],
            R"(Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "spec.shape")");

  // A merge patch moves the generation; a strategic merge patch is refused.
  const auto patched = send("PATCH", widgets + "/w1", R"({"spec":{"size":4}})",
                            "application/merge-patch+json");
  ASSERT_EQ(patched.status, 200) << patched.body;
  EXPECT_EQ(body(patched)["metadata"]["generation"], 2);
  const auto strategic = send("PATCH", widgets + "/w1", R"({"spec":{"size":5}})",
                              "application/strategic-merge-patch+json");
  EXPECT_EQ(strategic.status, 415);
  EXPECT_EQ(body(strategic)["message"],
            "the body of the request was in an unknown format - accepted media types include: "
            "application/json-patch+json, application/merge-patch+json, "
            "application/apply-patch+yaml");
  // The status subresource changes the status only.
  const auto status = send("PATCH", widgets + "/w1/status",
                           R"({"spec":{"size":9},"status":{"ready":true}})",
                           "application/merge-patch+json");
  ASSERT_EQ(status.status, 200) << status.body;
  EXPECT_EQ(body(status)["status"]["ready"], true);
  EXPECT_EQ(body(status)["spec"]["size"], 4);
  EXPECT_EQ(body(status)["metadata"]["generation"], 2);

  // kubectl get's Table: the printer columns.
  const json table = body(send("GET", widgets, "", "",
                               "application/json;as=Table;v=v1;g=meta.k8s.io"));
  std::vector<std::string> columns;
  for (const auto& c : table["columnDefinitions"]) columns.push_back(c["name"]);
  EXPECT_THAT(columns, ElementsAre("Name", "Size", "Color"));
  ASSERT_EQ(table["rows"].size(), 1U);
  EXPECT_EQ(table["rows"][0]["cells"], json({"w1", 4, "blue"}));
  EXPECT_EQ(table["rows"][0]["object"]["kind"], "PartialObjectMetadata");
}

TEST_F(CustomResourceRestTest, DeletingTheDefinitionDeletesItsResources) {
  establishWidgets();
  const std::string widgets = "/apis/example.com/v1/namespaces/default/widgets";
  ASSERT_EQ(send("POST", widgets,
                 R"({"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w1"}})")
                .status,
            201);
  const auto deleted =
      send("DELETE", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com");
  ASSERT_EQ(deleted.status, 200) << deleted.body;
  const json marked = body(deleted);
  EXPECT_EQ(marked["metadata"]["finalizers"],
            json::array({"customresourcecleanup.apiextensions.k8s.io"}));
  EXPECT_TRUE(marked["metadata"].contains("deletionTimestamp"));
  while (controllers_->reconcileOnce()) {
  }
  EXPECT_FALSE(store_.get(kCustomResourceDefinitions, "", "widgets.example.com").has_value());
  EXPECT_TRUE(store_.list({"example.com", "widgets"}).empty());
  EXPECT_EQ(send("GET", widgets).status, 404);
}

}  // namespace
}  // namespace harness::sim
