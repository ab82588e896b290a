// Loading scenario files: the typed result of good input, and the exact error (file, line:column,
// field path) of every kind of bad input.

#include <filesystem>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/sim/cel.h"
#include "harness/sim/scenario.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// A minimal valid scenario; tests replace or append lines.
constexpr const char* kHeader = R"(apiVersion: apiserver-sim.harness.dev/v1alpha1
kind: Scenario
metadata:
  name: t
spec:
)";

constexpr const char* kPodStep = R"(  steps:
    - name: create
      request:
        object:
          apiVersion: v1
          kind: Pod
          metadata: {name: p, namespace: ns}
          spec: {containers: [{name: c, image: i}]}
)";

class ScenarioLoaderTest : public ::testing::Test {
 protected:
  core::Result<Scenario> load(const std::string& text, const std::string& name = "s.yaml") {
    path_ = dir_ / name;
    testing::writeFile(path_, text);
    return loadScenario(path_);
  }
  std::string file() const { return path_.string(); }

  testing::ScratchDir dir_{"scenario-loader"};
  fs::path path_;
};

TEST_F(ScenarioLoaderTest, LoadsTheAllowExample) {
  const fs::path path = testing::sourceDir() / "scenarios/examples/allow.yaml";
  auto scenario = loadScenario(path);
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  EXPECT_EQ(scenario->name, "example-allow");
  EXPECT_DOUBLE_EQ(scenario->time_scale, 0.01);
  ASSERT_EQ(scenario->objects.size(), 2u);  // cluster.yaml: Namespace + ServiceAccount
  EXPECT_EQ(scenario->objects[0].object["kind"], "Namespace");
  ASSERT_EQ(scenario->webhook_configurations.size(), 1u);
  ASSERT_EQ(scenario->endpoints.size(), 1u);
  EXPECT_EQ(scenario->endpoints[0].type, EndpointType::kStub);
  ASSERT_EQ(scenario->endpoints[0].services.size(), 1u);
  EXPECT_EQ(scenario->endpoints[0].services[0].hostPort(), "allow.webhooks.svc:443");
  ASSERT_EQ(scenario->steps.size(), 2u);
  const RequestSpec& request = scenario->steps[0].request;
  EXPECT_EQ(request.operation, "CREATE");
  EXPECT_EQ(request.resource, (core::GroupVersionResource{"", "v1", "pods"}));
  EXPECT_EQ(request.namespace_name, "demo");
  EXPECT_EQ(request.name, "web");
  ASSERT_TRUE(scenario->steps[0].expect.calls.has_value());
  EXPECT_EQ(scenario->steps[0].expect.calls->at(0).outcome, "Allowed");
}

TEST_F(ScenarioLoaderTest, EveryExampleLoads) {
  auto files = findScenarioFiles({testing::sourceDir() / "scenarios/examples"});
  ASSERT_TRUE(files.ok()) << files.error().message;
  ASSERT_EQ(files->size(), 4u);
  for (const auto& path : *files) {
    auto scenario = loadScenario(path);
    EXPECT_TRUE(scenario.ok()) << scenario.error().message;
  }
}

TEST_F(ScenarioLoaderTest, WrongTypeNamesFileLineColumnAndField) {
  auto scenario = load(std::string(kHeader) + kPodStep + "      expect:\n        code: \"201\"\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":15:15: spec.steps[0].expect.code: expected integer, got string");
}

TEST_F(ScenarioLoaderTest, UnknownFieldIsAnErrorAtItsKey) {
  auto scenario = load(std::string(kHeader) + kPodStep + "      expect:\n        cod: 201\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message,
              StartsWith(file() + ":15:9: spec.steps[0].expect.cod: unknown field (expected one "
                                  "of: allowed, code, message,"));
}

TEST_F(ScenarioLoaderTest, StepsAreRequired) {
  auto scenario = load(std::string(kHeader) + "  timeScale: 1\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message, file() + ":6:3: spec.steps: required field is missing");
}

TEST_F(ScenarioLoaderTest, WrongApiVersionAndKindAreBothReported) {
  auto scenario = load("apiVersion: v1\nkind: Pod\nmetadata: {name: t}\nspec:\n" +
                       std::string(kPodStep));
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":1:13: apiVersion: expected \"apiserver-sim.harness.dev/v1alpha1\", got "
                     "\"v1\"\n" +
                file() + ":2:7: kind: expected \"Scenario\", got \"Pod\"");
}

TEST_F(ScenarioLoaderTest, YamlSyntaxErrorNamesTheFile) {
  auto scenario = load(std::string(kHeader) + "  steps: [\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message, StartsWith(file() + ": document 1, line "));
}

TEST_F(ScenarioLoaderTest, TwoDocumentsAreAnError) {
  auto scenario = load(std::string(kHeader) + kPodStep + "---\n" + kHeader + kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ": expected exactly one YAML document (one scenario per file), got 2");
}

TEST_F(ScenarioLoaderTest, MissingObjectFileIsNamed) {
  auto scenario = load(std::string(kHeader) + "  objects:\n    - file: missing.yaml\n" + kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":7:13: spec.objects[0].file: cannot read \"" + (dir_ / "missing.yaml").string() +
                "\": No such file or directory");
}

TEST_F(ScenarioLoaderTest, EndlessObjectFileIsRefusedNotReadForever) {
  auto scenario = load(std::string(kHeader) + "  objects:\n    - file: /dev/zero\n" + kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":7:13: spec.objects[0].file: cannot read \"/dev/zero\": larger than 64 MiB");
}

TEST_F(ScenarioLoaderTest, ObjectFileYamlErrorNamesBothFiles) {
  testing::writeFile(dir_ / "bad.yaml", "a: [\n");
  auto scenario = load(std::string(kHeader) + "  objects:\n    - file: bad.yaml\n" + kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message,
              StartsWith(file() + ":7:13: spec.objects[0].file: " + (dir_ / "bad.yaml").string() +
                         ": document 1, line"));
}

TEST_F(ScenarioLoaderTest, ObjectsFromFilesExpandListsAndMultipleDocuments) {
  testing::writeFile(dir_ / "objects.yaml", R"(apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: Namespace, metadata: {name: a}}
  - {apiVersion: v1, kind: Namespace, metadata: {name: b}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: c, namespace: a}
)");
  auto scenario = load(std::string(kHeader) + "  objects:\n    - file: objects.yaml\n" + kPodStep);
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  ASSERT_EQ(scenario->objects.size(), 3u);
  EXPECT_EQ(scenario->objects[1].object["metadata"]["name"], "b");
  EXPECT_EQ(scenario->objects[2].object["kind"], "ConfigMap");
  EXPECT_EQ(scenario->objects[2].location.file, (dir_ / "objects.yaml").string() + " (document 2)");
}

TEST_F(ScenarioLoaderTest, ObjectWithoutNameIsAnError) {
  auto scenario = load(std::string(kHeader) +
                       "  objects:\n    - {apiVersion: v1, kind: Namespace, metadata: {}}\n" +
                       kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message, file() + ":7:7: spec.objects[0]: metadata.name is required");
}

TEST_F(ScenarioLoaderTest, InvalidWebhookConfigurationGivesThe422Message) {
  auto scenario = load(std::string(kHeader) + R"(  webhookConfigurations:
    - apiVersion: admissionregistration.k8s.io/v1
      kind: MutatingWebhookConfiguration
      metadata: {name: hooks}
      webhooks:
        - name: a.example.com
          clientConfig: {url: "https://a.example.com/"}
          admissionReviewVersions: [v1]
)" + kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":7:7: spec.webhookConfigurations[0]: MutatingWebhookConfiguration."
                     "admissionregistration.k8s.io \"hooks\" is invalid: "
                     "webhooks[0].sideEffects: Required value: must specify one of None, "
                     "NoneOnDryRun");
}

TEST_F(ScenarioLoaderTest, WebhookConfigurationListMustHoldConfigurations) {
  auto scenario = load(std::string(kHeader) +
                       "  webhookConfigurations:\n    - {apiVersion: v1, kind: Namespace, "
                       "metadata: {name: a}}\n" +
                       kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":7:7: spec.webhookConfigurations[0]: expected a "
                     "MutatingWebhookConfiguration or ValidatingWebhookConfiguration, got "
                     "\"Namespace\"");
}

TEST_F(ScenarioLoaderTest, WebhookConfigurationsInObjectsAreValidatedToo) {
  auto scenario = load(std::string(kHeader) + R"(  objects:
    - apiVersion: admissionregistration.k8s.io/v1
      kind: ValidatingWebhookConfiguration
      metadata: {name: v}
      webhooks: []
)" + kPodStep);
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  EXPECT_TRUE(scenario->objects.empty());
  EXPECT_EQ(scenario->webhook_configurations.size(), 1u);
}

TEST_F(ScenarioLoaderTest, RequestDefaultsComeFromTheObject) {
  auto scenario = load(std::string(kHeader) + R"(  steps:
    - request:
        object:
          apiVersion: apps/v1
          kind: Deployment
          metadata: {name: d}
    - request:
        object: {apiVersion: v1, kind: Namespace, metadata: {name: nsx}}
        operation: UPDATE
    - request:
        object: {apiVersion: example.com/v1, kind: Policy, metadata: {name: w, namespace: x}}
)");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  ASSERT_EQ(scenario->steps.size(), 3u);
  EXPECT_EQ(scenario->steps[0].name, "step 1");
  EXPECT_EQ(scenario->steps[0].request.resource,
            (core::GroupVersionResource{"apps", "v1", "deployments"}));
  EXPECT_EQ(scenario->steps[0].request.namespace_name, "default");
  EXPECT_EQ(scenario->steps[1].request.resource,
            (core::GroupVersionResource{"", "v1", "namespaces"}));
  EXPECT_EQ(scenario->steps[1].request.namespace_name, "nsx");  // RequestInfo for namespaces/nsx
  EXPECT_EQ(scenario->steps[2].request.resource,
            (core::GroupVersionResource{"example.com", "v1", "policies"}));
  EXPECT_EQ(scenario->steps[2].request.namespace_name, "x");
}

TEST_F(ScenarioLoaderTest, ResourceForKindGuessesLikeApimachinery) {
  EXPECT_EQ(resourceForKind({"x.io", "v1", "Widget"}).resource, "widgets");
  EXPECT_EQ(resourceForKind({"x.io", "v1", "Class"}).resource, "classes");
  EXPECT_EQ(resourceForKind({"x.io", "v1", "Policy"}).resource, "policies");
  EXPECT_EQ(resourceForKind({"x.io", "v1", "MyEndpoints"}).resource, "myendpoints");
  EXPECT_EQ(resourceForKind({"", "v1", "Endpoints"}).resource, "endpoints");
  EXPECT_EQ(resourceForKind({"networking.k8s.io", "v1", "Ingress"}).resource, "ingresses");
}

TEST_F(ScenarioLoaderTest, DeleteWithoutANameIsAnError) {
  auto scenario = load(std::string(kHeader) + R"(  steps:
    - request:
        operation: DELETE
        resource: {version: v1, resource: pods}
)");
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":8:9: spec.steps[0].request: DELETE needs a name (name, or an object "
                     "naming the target)");
}

TEST_F(ScenarioLoaderTest, CreateWithoutAnObjectIsAnError) {
  auto scenario = load(std::string(kHeader) +
                       "  steps:\n    - request: {resource: {version: v1, resource: pods}}\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":7:16: spec.steps[0].request: CREATE needs an object (object or file)");
}

// PATCH and APPLY steps: the patch is sent as JSON (a file's YAML converted, as kubectl does), and
// the HTTP request both backends send is kubectl's.
TEST_F(ScenarioLoaderTest, PatchAndApplyStepsBecomeKubectlsRequests) {
  testing::writeFile(dir_ / "template.yaml", "spec:\n  replicas: 2\n");
  auto scenario = load(std::string(kHeader) + R"(  steps:
    - name: patch
      request:
        operation: PATCH
        resource: {group: apps, version: v1, resource: deployments}
        namespace: ns
        name: web
        patchType: strategic
        patchFile: template.yaml
        fieldManager: "ops team"
        fieldValidation: Strict
        dryRun: true
    - name: json
      request:
        operation: PATCH
        resource: {version: v1, resource: configmaps}
        name: c
        patchType: json
        patch: [{op: remove, path: /data/x}]
    - name: apply
      request:
        operation: APPLY
        fieldManager: alice
        force: true
        timeout: 5s
        object: {apiVersion: v1, kind: ConfigMap, metadata: {name: c, namespace: ns}}
)");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  const auto& steps = scenario->steps;
  ASSERT_EQ(steps.size(), 3u);
  PatchHttpRequest patch = patchHttpRequest(steps[0].request);
  EXPECT_EQ(patch.path,
            "/apis/apps/v1/namespaces/ns/deployments/web"
            "?dryRun=All&fieldManager=ops+team&fieldValidation=Strict");
  EXPECT_EQ(patch.content_type, "application/strategic-merge-patch+json");
  EXPECT_EQ(patch.body, R"({"spec":{"replicas":2}})");
  patch = patchHttpRequest(steps[1].request);
  EXPECT_EQ(patch.path, "/api/v1/namespaces/default/configmaps/c");
  EXPECT_EQ(patch.content_type, "application/json-patch+json");
  EXPECT_EQ(patch.body, R"([{"op":"remove","path":"/data/x"}])");
  patch = patchHttpRequest(steps[2].request);
  EXPECT_EQ(patch.path,
            "/api/v1/namespaces/ns/configmaps/c?fieldManager=alice&force=true&timeout=5s");
  EXPECT_EQ(patch.content_type, "application/apply-patch+yaml");
  EXPECT_EQ(patch.body, R"({"apiVersion":"v1","kind":"ConfigMap","metadata":)"
                        R"({"name":"c","namespace":"ns"}})");
}

TEST_F(ScenarioLoaderTest, PatchStepsNeedTheirFields) {
  const std::string patch_step = std::string(kHeader) + R"(  steps:
    - request:
        operation: PATCH
        resource: {version: v1, resource: configmaps}
        name: c
)";
  auto scenario = load(patch_step);
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":8:9: spec.steps[0].request: PATCH needs a patchType (json, merge or "
                     "strategic)");
  scenario = load(patch_step + "        patchType: merge\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":8:9: spec.steps[0].request: PATCH needs a patch (patch or patchFile)");
  scenario = load(patch_step + "        patchType: merge\n        patchFile: missing.yaml\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message, HasSubstr("spec.steps[0].request.patchFile: "));
  EXPECT_THAT(scenario.error().message, HasSubstr("missing.yaml"));
  scenario = load(std::string(kHeader) + kPodStep + "        force: true\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message,
              HasSubstr("spec.steps[0].request.force: only for operations PATCH and APPLY"));
  scenario = load(std::string(kHeader) + kPodStep + "        patch: {a: b}\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message,
              HasSubstr("spec.steps[0].request.patch: only for operation PATCH"));
}

TEST_F(ScenarioLoaderTest, ObjectAndFileAreExclusive) {
  auto scenario = load(std::string(kHeader) +
                       "  steps:\n    - request: {file: p.yaml, object: {apiVersion: v1, kind: "
                       "Pod, metadata: {name: p}}}\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message,
              HasSubstr("spec.steps[0].request: object and file are mutually exclusive"));
}

TEST_F(ScenarioLoaderTest, DuplicateStepNamesAreAnError) {
  auto scenario = load(std::string(kHeader) + kPodStep + R"(    - name: create
      request: {object: {apiVersion: v1, kind: Pod, metadata: {name: q, namespace: ns}}}
)");
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":14:13: spec.steps[1].name: duplicate step name \"create\"");
}

TEST_F(ScenarioLoaderTest, InvalidDurationUsesGoText) {
  auto scenario = load(std::string(kHeader) + "  requestTimeout: 10 seconds\n" + kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message,
              StartsWith(file() + ":6:19: spec.requestTimeout: time: "));
}

TEST_F(ScenarioLoaderTest, TimeScaleMustBePositive) {
  auto scenario = load(std::string(kHeader) + "  timeScale: 0\n" + kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message, file() + ":6:14: spec.timeScale: must be greater than 0");
}

TEST_F(ScenarioLoaderTest, UnknownPluginIsRejected) {
  auto scenario = load(std::string(kHeader) + "  plugins: [NoSuchPlugin]\n" + kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message, StartsWith(file() + ":6:12: spec.plugins: "));
  EXPECT_THAT(scenario.error().message, HasSubstr("NoSuchPlugin"));
}

TEST_F(ScenarioLoaderTest, StubErrorIsLocatedAtItsField) {
  auto scenario = load(std::string(kHeader) + R"(  endpoints:
    - name: s
      hosts: ["s.example.com:443"]
      stub:
        responses:
          - respond: {delay: soon}
)" + kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message,
              StartsWith(file() + ":11:30: spec.endpoints[0].stub.responses[0].respond.delay: "));
}

TEST_F(ScenarioLoaderTest, EndpointNeedsAnAddress) {
  auto scenario = load(std::string(kHeader) + "  endpoints:\n    - {name: s, stub: {}}\n" +
                       kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":7:7: spec.endpoints[0]: a service or hosts entry is required: webhook "
                     "configurations reach an endpoint through the addresses routed to it");
}

TEST_F(ScenarioLoaderTest, EndpointNeedsExactlyOneKind) {
  auto scenario = load(std::string(kHeader) +
                       "  endpoints:\n    - {name: s, hosts: [\"a:1\"]}\n" + kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":7:7: spec.endpoints[0]: exactly one of stub, injector or external is "
                     "required");
}

TEST_F(ScenarioLoaderTest, TwoEndpointsCannotShareAnAddress) {
  auto scenario = load(std::string(kHeader) + R"(  endpoints:
    - {name: a, stub: {}, service: {namespace: w, name: x}}
    - {name: b, stub: {}, hosts: ["x.w.svc:443"]}
)" + kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":8:7: spec.endpoints[1]: address \"x.w.svc:443\" is routed to two endpoints");
}

TEST_F(ScenarioLoaderTest, HostsMustBeHostPort) {
  auto scenario = load(std::string(kHeader) +
                       "  endpoints:\n    - {name: a, stub: {}, hosts: [example.com]}\n" +
                       kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":7:35: spec.endpoints[0].hosts[0]: \"example.com\" is not host:port");
}

TEST_F(ScenarioLoaderTest, InvalidMessageRegexIsAnError) {
  auto scenario = load(std::string(kHeader) + kPodStep +
                       "      expect:\n        message: {regex: \"(\"}\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":15:26: spec.steps[0].expect.message.regex: invalid regular expression "
                     "\"(\": error parsing regexp: missing closing ): `(`");
}

TEST_F(ScenarioLoaderTest, RegexesAreGoSyntax) {
  // Go's regexp (RE2), as go test -run: Perl's lookahead, which std::regex took, is an error...
  auto perl = load(std::string(kHeader) + kPodStep +
                   "      expect:\n        message: {regex: \"a(?=b)\"}\n");
  ASSERT_FALSE(perl.ok());
  EXPECT_EQ(perl.error().message,
            file() + ":15:26: spec.steps[0].expect.message.regex: invalid regular expression "
                     "\"a(?=b)\": error parsing regexp: invalid or unsupported Perl syntax: "
                     "`(?=`");
  // ...and named groups and Unicode classes, which it refused, are fine.
  auto go = load(std::string(kHeader) + kPodStep +
                 "      expect:\n        message: {regex: \"(?P<word>\\\\pL+)\"}\n");
  EXPECT_TRUE(go.ok()) << go.error().message;
}

TEST_F(ScenarioLoaderTest, MessageNeedsExactlyOneMatcher) {
  auto scenario = load(std::string(kHeader) + kPodStep +
                       "      expect:\n        message: {exact: a, contains: b}\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":15:18: spec.steps[0].expect.message: exactly one of exact, contains or "
                     "regex is required");
}

TEST_F(ScenarioLoaderTest, StubExpectationMustNameAStubEndpoint) {
  auto scenario = load(std::string(kHeader) + kPodStep +
                       "      expect:\n        stub: {nope: {calls: 1}}\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":15:16: spec.steps[0].expect.stub.nope: no stub endpoint named \"nope\"");
}

TEST_F(ScenarioLoaderTest, AuditEventExpectationNeedsAPolicy) {
  auto scenario = load(std::string(kHeader) + kPodStep +
                       "      expect:\n        auditEvent: {level: Metadata}\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":15:21: spec.steps[0].expect.auditEvent: needs spec.auditPolicy (no audit "
                     "events are written without one)");
}

TEST_F(ScenarioLoaderTest, AuditPolicyFileErrorNamesThePolicyFile) {
  testing::writeFile(dir_ / "policy.yaml",
                     "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n  - level: Verbose\n");
  auto scenario = load(std::string(kHeader) + "  auditPolicy: policy.yaml\n" + kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message,
              StartsWith(file() + ":6:16: spec.auditPolicy: " + (dir_ / "policy.yaml").string()));
  EXPECT_THAT(scenario.error().message, HasSubstr("Verbose"));
}

TEST_F(ScenarioLoaderTest, InlineAuditPolicyErrorIsLocatedInTheScenario) {
  auto scenario = load(std::string(kHeader) + R"(  auditPolicy:
    apiVersion: audit.k8s.io/v1
    kind: Policy
    rules:
      - level: Verbose
)" + kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message,
              StartsWith(file() + ":10:16: spec.auditPolicy.rules[0].level: "));
}

TEST_F(ScenarioLoaderTest, InlineAuditPolicyLoads) {
  auto scenario = load(std::string(kHeader) + R"(  auditPolicy:
    apiVersion: audit.k8s.io/v1
    kind: Policy
    rules: [{level: Metadata}]
)" + kPodStep);
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  ASSERT_TRUE(scenario->audit_policy.has_value());
  EXPECT_EQ(scenario->audit_policy->rules.at(0).level, audit::Level::kMetadata);
}

TEST_F(ScenarioLoaderTest, AnnotationValuesWrittenAsMappingsBecomeJson) {
  auto scenario = load(std::string(kHeader) + kPodStep + R"(      expect:
        annotations:
          subset:
            k/a: {configuration: c, webhook: w, mutated: false}
            k/b: plain
)");
  ASSERT_TRUE(scenario.ok()) << scenario.error().message;
  const auto& annotations = *scenario->steps[0].expect.annotations;
  EXPECT_EQ(scenario->steps[0].expect.annotations_match, ListMatch::kSubset);
  EXPECT_EQ(annotations.at("k/b"), "plain");
  EXPECT_EQ(nlohmann::json::parse(annotations.at("k/a")),
            (nlohmann::json{{"configuration", "c"}, {"webhook", "w"}, {"mutated", false}}));
}

TEST_F(ScenarioLoaderTest, AbsentPointersMustParse) {
  auto scenario = load(std::string(kHeader) + kPodStep +
                       "      expect:\n        absent: [metadata/labels]\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message, StartsWith(file() + ":15:18: spec.steps[0].expect.absent[0]: "));
}

TEST_F(ScenarioLoaderTest, CallOutcomeMustBeKnown) {
  auto scenario = load(std::string(kHeader) + kPodStep +
                       "      expect:\n        calls: [{outcome: Rejected}]\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message,
              StartsWith(file() + ":15:27: spec.steps[0].expect.calls[0].outcome: unsupported "
                                  "value \"Rejected\" (expected one of: Allowed, Patched,"));
}

TEST_F(ScenarioLoaderTest, ExpectedObjectRegexMustCompile) {
  auto scenario = load(std::string(kHeader) + kPodStep +
                       "      expect:\n        object: {metadata: {name: {$regex: \"[\"}}}\n");
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message,
              HasSubstr("spec.steps[0].expect.object.metadata.name.$regex: invalid regular "
                        "expression \"[\""));
}

TEST_F(ScenarioLoaderTest, SeveralErrorsAreAllReported) {
  auto scenario = load(std::string(kHeader) + "  timeScale: fast\n  seed: -1\n" + kPodStep);
  ASSERT_FALSE(scenario.ok());
  EXPECT_EQ(scenario.error().message,
            file() + ":6:14: spec.timeScale: expected number, got string\n" + file() +
                ":7:9: spec.seed: must be between 0 and 9223372036854775807");
}

TEST(ScenarioFilesTest, FoldersYieldOnlyScenarioFilesInPathOrder) {
  testing::ScratchDir dir("scenario-files");
  const std::string scenario = std::string(kHeader) + kPodStep;
  testing::writeFile(dir / "b.yaml", scenario);
  testing::writeFile(dir / "a.yml", scenario);
  std::filesystem::create_directories(dir / "sub");
  testing::writeFile(dir / "sub/c.yaml", scenario);
  testing::writeFile(dir / "pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n");
  testing::writeFile(dir / "notes.txt", scenario);
  auto files = findScenarioFiles({dir.path()});
  ASSERT_TRUE(files.ok()) << files.error().message;
  ASSERT_EQ(files->size(), 3u);
  EXPECT_EQ((*files)[0], dir / "a.yml");
  EXPECT_EQ((*files)[1], dir / "b.yaml");
  EXPECT_EQ((*files)[2], dir / "sub/c.yaml");
}

TEST(ScenarioFilesTest, NamedFilesAreTakenWhateverTheirContent) {
  testing::ScratchDir dir("scenario-files");
  testing::writeFile(dir / "pod.yaml", "apiVersion: v1\nkind: Pod\n");
  auto files = findScenarioFiles({dir / "pod.yaml"});
  ASSERT_TRUE(files.ok());
  EXPECT_EQ(files->size(), 1u);
}

TEST(ScenarioFilesTest, MissingPathIsAnError) {
  auto files = findScenarioFiles({"/nonexistent/scenarios"});
  ASSERT_FALSE(files.ok());
  EXPECT_EQ(files.error().message, "/nonexistent/scenarios: no such file or directory");
}

TEST(ScenarioFilesTest, LooksLikeScenarioReadsTheFirstDocumentKind) {
  EXPECT_TRUE(looksLikeScenario("kind: Scenario\n"));
  EXPECT_FALSE(looksLikeScenario("kind: Pod\n"));
  EXPECT_FALSE(looksLikeScenario("a: [\n"));
  EXPECT_FALSE(looksLikeScenario(""));
}

}  // namespace
}  // namespace harness::sim

namespace harness::sim {
namespace {

constexpr const char* kPolicyObjects = R"(  objects:
    - apiVersion: admissionregistration.k8s.io/v1
      kind: ValidatingAdmissionPolicy
      metadata: {name: p}
      spec:
        matchConstraints:
          resourceRules: [{apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}]
        validations: [{expression: "true"}]
)";

// Without kube-cel (no Go), a scenario with a ValidatingAdmissionPolicy does not load: one line
// naming what is missing and the command that builds it.
TEST_F(ScenarioLoaderTest, APolicyWithoutKubeCelFailsAtLoadNamingTheBuildCommand) {
  cel::installUnavailable(
      "kube-cel is not built (/x/kube-cel; bash scripts/build-kube.sh builds it, with Go 1.26)");
  auto scenario = load(std::string(kHeader) + kPolicyObjects + kPodStep);
  cel::install(nullptr);
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message,
              HasSubstr("ValidatingAdmissionPolicy \"p\" needs CEL: kube-cel is not built "
                        "(/x/kube-cel; bash scripts/build-kube.sh builds it, with Go 1.26)"));
  EXPECT_EQ(scenario.error().message.find('\n'), std::string::npos) << scenario.error().message;
}

}  // namespace
}  // namespace harness::sim

namespace harness::sim {
namespace {

// The same for a MutatingAdmissionPolicyBinding written by a step.
TEST_F(ScenarioLoaderTest, AMutatingPolicyWithoutKubeCelFailsAtLoadNamingTheBuildCommand) {
  cel::installUnavailable(
      "kube-cel is not built (/x/kube-cel; bash scripts/build-kube.sh builds it, with Go 1.26)");
  auto scenario = load(std::string(kHeader) + R"(  steps:
    - name: bind
      request:
        object:
          apiVersion: admissionregistration.k8s.io/v1
          kind: MutatingAdmissionPolicyBinding
          metadata: {name: b}
          spec: {policyName: p}
)");
  cel::install(nullptr);
  ASSERT_FALSE(scenario.ok());
  EXPECT_THAT(scenario.error().message,
              HasSubstr("MutatingAdmissionPolicyBinding \"b\" needs CEL: kube-cel is not built "
                        "(/x/kube-cel; bash scripts/build-kube.sh builds it, with Go 1.26)"));
  EXPECT_EQ(scenario.error().message.find('\n'), std::string::npos) << scenario.error().message;
}

}  // namespace
}  // namespace harness::sim
