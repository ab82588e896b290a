// The kube-cel client (apiserver-sim/src/cel): failure handling with fake helpers (no Go needed),
// and Kubernetes' CEL through the real kube-cel (skipped, with one line, when
// scripts/build-kube.sh has not built it).

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/webhook_config.h"
#include "harness/process/kube_bin_dir.h"
#include "harness/sim/authorizer.h"
#include "harness/sim/cel.h"
#include "harness/sim/go_types.h"
#include "harness/sim/store.h"
#include "harness/testing/support.h"

namespace harness::sim::cel {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// A fake helper: a shell script that answers the version handshake, then runs `rest`.
fs::path fakeHelper(const fs::path& dir, const std::string& name, const std::string& rest) {
  fs::path path = dir / name;
  std::ofstream out(path);
  out << "#!/bin/sh\n"
      << "read -r line\n"
      << R"(echo '{"kubernetes":"v0.0.0-fake","celCompatibilityVersion":"1.0"}')" << "\n"
      << rest << "\n";
  out.close();
  ::chmod(path.c_str(), 0755);
  return path;
}

TEST(KubeCelClientTest, NotBuiltNamesTheCommandThatBuildsIt) {
  testing::ScratchDir dir("cel");
  auto cel = KubeCel::start(dir / "no-such-kube-cel", dir / "cel.log");
  ASSERT_FALSE(cel.ok());
  EXPECT_EQ(cel.error().message,
            "kube-cel is not built (" + (dir / "no-such-kube-cel").string() +
                "; bash scripts/build-kube.sh builds it, with Go 1.26)");
}

TEST(KubeCelClientTest, AHelperThatExitsIsReportedAndStaysBroken) {
  testing::ScratchDir dir("cel");
  auto cel = KubeCel::start(fakeHelper(dir.path(), "exits", "echo dying >&2; exit 4"), dir / "cel.log");
  ASSERT_TRUE(cel.ok()) << cel.error().message;
  EXPECT_EQ((*cel)->kubernetesVersion(), "v0.0.0-fake");
  auto first = (*cel)->call({{"op", "version"}});
  ASSERT_FALSE(first.ok());
  EXPECT_THAT(first.error().message, HasSubstr("kube-cel exited (exit status 4)"));
  EXPECT_THAT(first.error().message, HasSubstr("dying"));
  EXPECT_FALSE((*cel)->healthy());
  auto second = (*cel)->call({{"op", "version"}});
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.error().message, first.error().message);
}

TEST(KubeCelClientTest, AGarbledAnswerIsAnError) {
  testing::ScratchDir dir("cel");
  auto cel = KubeCel::start(fakeHelper(dir.path(), "garbles", "read -r line; echo 'not json'; sleep 600"),
                            dir / "cel.log");
  ASSERT_TRUE(cel.ok()) << cel.error().message;
  auto answer = (*cel)->call({{"op", "version"}});
  ASSERT_FALSE(answer.ok());
  EXPECT_THAT(answer.error().message, HasSubstr("answered with a line that is not a JSON object"));
}

TEST(KubeCelClientTest, AHelperThatNeverAnswersTimesOutAndIsStopped) {
  testing::ScratchDir dir("cel");
  // The helper reads the request and never answers: the deadline passes whatever the load.
  auto cel = KubeCel::start(fakeHelper(dir.path(), "silent", "read -r line; exec sleep 600"),
                            dir / "cel.log");
  ASSERT_TRUE(cel.ok()) << cel.error().message;
  auto answer = (*cel)->call({{"op", "version"}}, 100ms);
  ASSERT_FALSE(answer.ok());
  EXPECT_THAT(answer.error().message, HasSubstr("kube-cel did not answer within 100 ms"));
  EXPECT_FALSE((*cel)->healthy());
}

TEST(KubeCelClientTest, AnErrorAnswerKeepsTheHelper) {
  testing::ScratchDir dir("cel");
  auto cel = KubeCel::start(
      fakeHelper(dir.path(), "refuses",
                 R"(while read -r line; do echo '{"error":"unknown op \"x\""}'; done)"),
      dir / "cel.log");
  ASSERT_TRUE(cel.ok()) << cel.error().message;
  for (int i = 0; i < 2; ++i) {
    auto answer = (*cel)->call({{"op", "x"}});
    ASSERT_FALSE(answer.ok());
    EXPECT_EQ(answer.error().message, "kube-cel: unknown op \"x\"");
  }
  EXPECT_TRUE((*cel)->healthy());
}

TEST(KubeCelClientTest, UnavailableCompilerSaysWhatIsMissing) {
  auto compile = unavailableCompiler("kube-cel is not built (x)");
  auto results = compile({"true", "false"}, {});
  ASSERT_EQ(results.size(), 2u);
  ASSERT_TRUE(results[0].has_value());
  EXPECT_EQ(results[0]->type, core::FieldErrorType::kInternal);
  EXPECT_EQ(results[0]->detail, "matchConditions need CEL: kube-cel is not built (x)");
}

// --- the real kube-cel ---

class RealKubeCelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const fs::path binary = process::kubeBinDir() / "kube-cel";
    if (auto reason = testing::notBuiltReason(binary); !reason.empty()) GTEST_SKIP() << reason;
    auto started = KubeCel::start(binary, dir_ / "kube-cel.log");
    ASSERT_TRUE(started.ok()) << started.error().message;
    cel_ = std::move(started).value();
  }

  static AdmissionAttributes configMapCreate(nlohmann::json data) {
    AdmissionAttributes a;
    a.operation = "CREATE";
    a.kind = {"", "v1", "ConfigMap"};
    a.resource = {"", "v1", "configmaps"};
    a.namespace_name = "demo";
    a.name = "settings";
    nlohmann::json object = {{"apiVersion", "v1"},
                             {"kind", "ConfigMap"},
                             {"metadata", {{"name", "settings"}, {"namespace", "demo"}}}};
    if (!data.is_null()) object["data"] = std::move(data);
    a.object = std::move(object);
    a.options = nlohmann::json{{"apiVersion", "meta.k8s.io/v1"}, {"kind", "CreateOptions"}};
    a.user_info = {"jane", "", {"developers", "system:authenticated"}, {}};
    return a;
  }

  static HookEntry hookWith(std::vector<core::MatchCondition> conditions) {
    HookEntry hook;
    hook.webhook.name = "hook.example.com";
    hook.webhook.match_conditions = std::move(conditions);
    return hook;
  }

  testing::ScratchDir dir_{"kube-cel"};
  std::shared_ptr<KubeCel> cel_;
};

TEST_F(RealKubeCelTest, ReportsTheKubernetesVersionItWasBuiltFrom) {
  EXPECT_THAT(cel_->kubernetesVersion(), ::testing::StartsWith("v1."));
  EXPECT_THAT(cel_->compatibilityVersion(), ::testing::MatchesRegex("1\\.[0-9]+"));
}

// RBAC's bootstrap policy from Kubernetes' bootstrappolicy, stored as kube-apiserver stores it and
// aggregated as the clusterrole-aggregation controller aggregates it (authorizer.h).
TEST_F(RealKubeCelTest, BootstrapPolicyIsKubernetesOwnAndAggregates) {
  auto policy = cel_->call({{"op", "bootstrapPolicy"}});
  ASSERT_TRUE(policy.ok()) << policy.error().message;
  ObjectStore store;
  auto seeded = seedBootstrapPolicy(store, *policy);
  ASSERT_TRUE(seeded.ok()) << seeded.error().message;
  EXPECT_GT(*seeded, 100U);
  const core::GroupResource cluster_roles{"rbac.authorization.k8s.io", "clusterroles"};
  auto admin = store.get(cluster_roles, "", "cluster-admin");
  ASSERT_TRUE(admin);
  EXPECT_EQ((*admin)["metadata"]["labels"]["kubernetes.io/bootstrapping"], "rbac-defaults");
  EXPECT_EQ((*admin)["metadata"]["annotations"]["rbac.authorization.kubernetes.io/autoupdate"],
            "true");
  EXPECT_TRUE((*admin)["metadata"].contains("creationTimestamp"));
  // view, edit and admin are filled; edit holds view's rules, admin edit's.
  auto rules = [&](const char* name) { return store.get(cluster_roles, "", name)->at("rules"); };
  ASSERT_FALSE(rules("view").empty());
  for (const auto& rule : rules("view")) {
    const auto edit = rules("edit");
    EXPECT_NE(std::find(edit.begin(), edit.end(), rule), edit.end()) << rule.dump();
  }
  EXPECT_GT(rules("admin").size(), rules("edit").size());
  // Namespaced roles keep their namespace; the controllers' bindings are there.
  EXPECT_TRUE(store.get({"rbac.authorization.k8s.io", "roles"}, "kube-system",
                        "extension-apiserver-authentication-reader"));
  EXPECT_TRUE(store.get({"rbac.authorization.k8s.io", "clusterrolebindings"}, "",
                        "system:controller:replicaset-controller"));
  // Who may do what, as on a cluster: discovery for everyone authenticated, not more.
  AuthorizationAttributes attributes;
  attributes.user.username = "jane";
  attributes.user.groups = {"system:authenticated"};
  attributes.resource_request = false;
  attributes.verb = "get";
  attributes.path = "/apis/apps/v1";
  const auto discovery = authorize(store, attributes);
  EXPECT_TRUE(discovery.allowed());
  EXPECT_EQ(discovery.reason, R"(RBAC: allowed by ClusterRoleBinding "system:discovery" of )"
                              R"(ClusterRole "system:discovery" to Group "system:authenticated")");
  attributes.path = "/metrics";
  EXPECT_FALSE(authorize(store, attributes).allowed());
}

TEST_F(RealKubeCelTest, PodTemplateHashIsKubernetesComputeHash) {
  const nlohmann::json tmpl = {
      {"metadata", {{"labels", {{"app", "web"}}}}},
      {"spec", {{"containers", {{{"name", "app"}, {"image", "nginx"}}}}}}};
  auto hasher = podTemplateHasher(cel_);
  auto hash = hasher(tmpl, std::nullopt);
  ASSERT_TRUE(hash.ok()) << hash.error().message;
  // rand.SafeEncodeString of a decimal uint32: up to 10 characters of its alphabet.
  EXPECT_THAT(*hash, ::testing::MatchesRegex("[bcdfghjklmnpqrstvwxz2456789]{1,10}"));
  EXPECT_EQ(*hasher(tmpl, std::nullopt), *hash);
  EXPECT_NE(*hasher(tmpl, 1), *hash);  // the collisionCount is hashed too
  nlohmann::json other = tmpl;
  other["spec"]["containers"][0]["image"] = "nginx:1.27";
  EXPECT_NE(*hasher(other, std::nullopt), *hash);
  auto bad = hasher(nlohmann::json::array({1}), std::nullopt);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("not a PodTemplateSpec"));
}

TEST_F(RealKubeCelTest, PodUpdatesAreValidatedByValidatePodUpdateWithItsSpecDiff) {
  const nlohmann::json old_pod = nlohmann::json::parse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "web", "namespace": "a", "uid": "u1", "resourceVersion": "1",
                 "creationTimestamp": "2026-01-01T00:00:00Z"},
    "spec": {"serviceAccountName": "default",
             "containers": [{"name": "app", "image": "nginx:1.27",
                             "ports": [{"containerPort": 80}]}]}})");
  auto validate = podUpdateValidator(cel_);
  // Only the image and the labels change: valid.
  nlohmann::json pod = old_pod;
  pod["metadata"]["labels"] = {{"app", "web"}};
  pod["spec"]["containers"][0]["image"] = "nginx:1.28";
  EXPECT_EQ(validate(pod, old_pod), std::nullopt);
  // A port removed: Forbidden, with apimachinery's diff of the internal PodSpecs (Go names).
  pod["spec"]["containers"][0].erase("ports");
  auto status = validate(pod, old_pod);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code, 422);
  EXPECT_EQ(status->reason, "Invalid");
  EXPECT_THAT(status->message,
              ::testing::StartsWith("Pod \"web\" is invalid: spec: Forbidden: pod updates may "
                                    "not change fields other than `spec.containers[*].image`,"));
  EXPECT_THAT(status->message, HasSubstr("\n-   \"Ports\": [\n-    {\n-     \"Name\": \"\",\n"));
  EXPECT_THAT(status->message, HasSubstr("\n+   \"Ports\": null,\n"));
  // The metadata rules come with it (ValidateObjectMetaUpdate).
  pod = old_pod;
  pod["metadata"]["uid"] = "u2";
  status = validate(pod, old_pod);
  ASSERT_TRUE(status.has_value());
  EXPECT_THAT(status->message, HasSubstr("metadata.uid: Invalid value: \"u2\": field is immutable"));
  // What Go cannot decode is an error, not a verdict.
  EXPECT_THROW(validate(nlohmann::json::array(), old_pod), std::runtime_error);
}

TEST_F(RealKubeCelTest, ProtobufBodiesDecodeWithKubernetesSerializerOrSayWhy) {
  auto decode = protobufDecoder(cel_);
  auto bad = decode(std::string("k8s\0", 4) + "\x0a\xff");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().code, core::ErrorCode::kDecode);
  auto not_protobuf = decode("{}");
  ASSERT_FALSE(not_protobuf.ok());
  EXPECT_EQ(not_protobuf.error().code, core::ErrorCode::kDecode);
}

TEST_F(RealKubeCelTest, EvaluatesEachConditionWithTheApiserverVariables) {
  auto evaluate = matchConditionEvaluator(cel_);
  const auto results = evaluate(
      hookWith({{"ns", "request.namespace == 'demo' && request.operation == 'CREATE'"},
                {"user", "'developers' in request.userInfo.groups"},
                {"kind", "request.kind.kind == 'ConfigMap' && object.kind == 'ConfigMap'"},
                {"old", "oldObject == null"},
                {"mode", "object.data.mode == 'strict'"},
                {"options", "request.options.kind == 'CreateOptions'"},
                {"no-params", "!has(request.dryRun) || request.dryRun == false"}}),
      configMapCreate(nullptr), {"", "v1", "ConfigMap"});
  ASSERT_EQ(results.size(), 7u);
  EXPECT_EQ(results[0], (std::variant<bool, std::string>(true)));
  EXPECT_EQ(results[1], (std::variant<bool, std::string>(true)));
  EXPECT_EQ(results[2], (std::variant<bool, std::string>(true)));
  EXPECT_EQ(results[3], (std::variant<bool, std::string>(true)));
  EXPECT_EQ(results[4], (std::variant<bool, std::string>(std::string(
                            "expression 'object.data.mode == 'strict'' resulted in error: no such "
                            "key: data"))));
  EXPECT_EQ(results[5], (std::variant<bool, std::string>(true)));
  EXPECT_EQ(results[6], (std::variant<bool, std::string>(true)));
}

TEST_F(RealKubeCelTest, TheInvocationKindIsWhatTheExpressionsSee) {
  // matchPolicy Equivalent: the object converted to the kind the rule matched.
  auto evaluate = matchConditionEvaluator(cel_);
  AdmissionAttributes a;
  a.operation = "CREATE";
  a.kind = {"apps", "v1", "Deployment"};
  a.resource = {"apps", "v1", "deployments"};
  a.namespace_name = "demo";
  a.object = nlohmann::json{{"apiVersion", "apps/v1"}, {"kind", "Deployment"},
                            {"metadata", {{"name", "web"}}}};
  const auto results =
      evaluate(hookWith({{"object", "object.apiVersion == 'extensions/v1beta1'"},
                         {"request", "request.kind.group == 'extensions' && "
                                     "request.requestKind.group == 'apps'"}}),
               a, {"extensions", "v1beta1", "Deployment"});
  EXPECT_THAT(results, ElementsAre(std::variant<bool, std::string>(true),
                                   std::variant<bool, std::string>(true)));
}

TEST_F(RealKubeCelTest, TheAuthorizerAllowsSystemMastersAndNobodyElseByDefault) {
  auto evaluate = matchConditionEvaluator(cel_);
  const auto hook = hookWith(
      {{"may-create", "authorizer.group('').resource('pods').namespace('demo').check('create')"
                      ".allowed()"}});
  auto a = configMapCreate(nullptr);
  EXPECT_THAT(evaluate(hook, a, {"", "v1", "ConfigMap"}),
              ElementsAre(std::variant<bool, std::string>(false)));
  a.user_info.groups.push_back("system:masters");
  EXPECT_THAT(evaluate(hook, a, {"", "v1", "ConfigMap"}),
              ElementsAre(std::variant<bool, std::string>(true)));
  // Rules a scenario sets decide first.
  auto set = cel_->call({{"op", "setAuthorizer"},
                         {"rules", {{{"users", {"jane"}}, {"verbs", {"create"}},
                                     {"resources", {"pods"}}, {"decision", "Deny"}}}}});
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_THAT(evaluate(hook, a, {"", "v1", "ConfigMap"}),
              ElementsAre(std::variant<bool, std::string>(false)));
  auto bad = cel_->call({{"op", "setAuthorizer"}, {"rules", {{{"decision", "Maybe"}}}}});
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.error().message,
            "kube-cel: rules[0].decision: \"Maybe\" is not Allow, Deny or NoOpinion");
}

TEST_F(RealKubeCelTest, CompilesAsCreateValidationDoes) {
  auto compile = matchConditionCompiler(cel_);
  const auto results =
      compile({"true", "imnotafield == null", "size(request.name)", "object.metadata.name"}, {});
  ASSERT_EQ(results.size(), 4u);
  EXPECT_FALSE(results[0].has_value());
  ASSERT_TRUE(results[1].has_value());
  EXPECT_EQ(results[1]->type, core::FieldErrorType::kInvalid);
  EXPECT_EQ(results[1]->detail,
            "compilation failed: ERROR: <input>:1:1: undeclared reference to 'imnotafield' (in "
            "container '')\n | imnotafield == null\n | ^");
  ASSERT_TRUE(results[2].has_value());
  EXPECT_EQ(results[2]->detail, "must evaluate to bool but got int");
  ASSERT_TRUE(results[3].has_value());
  // `object` is dyn: a field of it is not known to be a string at compile time.
  EXPECT_EQ(results[3]->detail, "must evaluate to bool but got dyn");
}

TEST_F(RealKubeCelTest, ConfigurationValidationUsesIt) {
  install(cel_);
  core::WebhookConfiguration config;
  config.kind = core::WebhookKind::kValidating;
  config.name = "checks";
  config.metadata = {{"name", "checks"}};
  core::Webhook hook;
  hook.name = "check.example.com";
  hook.client_config.url = "https://checks.example.com/";
  hook.side_effects = "None";
  hook.admission_review_versions = {"v1"};
  hook.match_conditions = {{"bad", "nope"}, {"good", "true"}};
  config.webhooks = {hook};
  core::applyV1Defaults(config);
  const auto errors = core::validateWebhookConfiguration(config);
  install(nullptr);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0].toString(),
              ::testing::StartsWith("webhooks[0].matchConditions[0].expression: Invalid value: "
                                    "\"nope\": compilation failed: ERROR: <input>:1:1: undeclared "
                                    "reference to 'nope'"));
}

TEST_F(RealKubeCelTest, HostileRequestsGetAnErrorAndTheHelperGoesOn) {
  // Deeply nested JSON: Go's decoder refuses it; the stream continues.
  std::string deep(20'000, '[');
  deep += std::string(20'000, ']');
  auto a = configMapCreate(nullptr);
  a.object = nlohmann::json::parse(deep);
  auto evaluate = matchConditionEvaluator(cel_);
  EXPECT_THROW(evaluate(hookWith({{"t", "true"}}), a, {"", "v1", "ConfigMap"}),
               std::runtime_error);
  // A line over the helper's limit.
  auto huge = configMapCreate(nlohmann::json{{"blob", std::string(17 << 20, 'x')}});
  EXPECT_THROW(evaluate(hookWith({{"t", "true"}}), huge, {"", "v1", "ConfigMap"}),
               std::runtime_error);
  EXPECT_TRUE(cel_->healthy());
  EXPECT_THAT(evaluate(hookWith({{"t", "true"}}), configMapCreate(nullptr), {"", "v1", "ConfigMap"}),
              ElementsAre(std::variant<bool, std::string>(true)));
}

TEST_F(RealKubeCelTest, ARunawayExpressionIsStoppedByTheCostBudget) {
  auto evaluate = matchConditionEvaluator(cel_);
  const auto results = evaluate(
      hookWith({{"expensive",
                 "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, "
                 "[1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, "
                 "[1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, "
                 "[1,2,3,4,5,6,7,8,9,10].all(g, a + b + c + d + e + f + g > 0)))))))"}}),
      configMapCreate(nullptr), {"", "v1", "ConfigMap"});
  ASSERT_EQ(results.size(), 1u);
  ASSERT_TRUE(std::holds_alternative<std::string>(results[0]));
  EXPECT_THAT(std::get<std::string>(results[0]), HasSubstr("cost"));
}

// --- MutatingAdmissionPolicy through the real kube-cel ---

nlohmann::json mutatingPolicy(const std::string& name, const std::string& reinvocation,
                              nlohmann::json mutations) {
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", "MutatingAdmissionPolicy"},
          {"metadata", {{"name", name}, {"generation", 1}}},
          {"spec",
           {{"matchConstraints",
             {{"resourceRules",
               nlohmann::json::array({{{"apiGroups", {""}},
                                       {"apiVersions", {"v1"}},
                                       {"operations", {"CREATE"}},
                                       {"resources", {"configmaps"}}}})}}},
            {"failurePolicy", "Fail"},
            {"reinvocationPolicy", reinvocation},
            {"mutations", std::move(mutations)}}}};
}

nlohmann::json bindingFor(const std::string& policy) {
  return {{"apiVersion", "admissionregistration.k8s.io/v1"},
          {"kind", "MutatingAdmissionPolicyBinding"},
          {"metadata", {{"name", policy}}},
          {"spec", {{"policyName", policy}}}};
}

nlohmann::json applyLabel(const std::string& key, const std::string& value_expression) {
  return nlohmann::json::array(
      {{{"patchType", "ApplyConfiguration"},
        {"applyConfiguration",
         {{"expression", "Object{metadata: Object.metadata{labels: {\"" + key +
                             "\": " + value_expression + "}}}"}}}}});
}

PolicyInput configMapPolicies(std::vector<nlohmann::json> policies) {
  PolicyInput input;
  for (auto& p : policies) {
    input.bindings.push_back(bindingFor(p["metadata"]["name"]));
    input.policies.push_back(std::move(p));
  }
  input.namespace_object = nlohmann::json{
      {"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", "demo"}}}};
  input.equivalents = {*core::findResourceForKind({"", "v1", "ConfigMap"})};
  return input;
}

// kube-controller-manager's ValidatingAdmissionPolicy status controller: the type checker's
// warnings for each kind the policy matches (the built-in resources' REST mapping), at each
// expression's field path; nothing once the generation is observed.
TEST_F(RealKubeCelTest, PolicyStatusIsTheTypeCheckersWarnings) {
  auto status_of = policyStatusWriter(cel_);
  nlohmann::json policy = nlohmann::json::parse(R"({
    "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
    "metadata": {"name": "replicas", "generation": 2},
    "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"],
               "apiVersions": ["v1"], "operations": ["CREATE"],
               "resources": ["deployments", "replicasets"]}]},
             "validations": [{"expression": "object.spec.replicas > 1"},
                             {"expression": "object.spec.replicas > 'one'",
                              "messageExpression": "object.metadata.name"}]}})");
  const auto status = status_of(policy);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ((*status)["observedGeneration"], 2);
  const auto& warnings = (*status)["typeChecking"]["expressionWarnings"];
  ASSERT_EQ(warnings.size(), 1u) << status->dump();
  EXPECT_EQ(warnings[0]["fieldRef"], "spec.validations[1].expression");
  // One result per kind checked, in group/version/kind order (TypeCheckingResults.String).
  const std::string text = warnings[0]["warning"];
  EXPECT_EQ(text.find("apps/v1, Kind=Deployment: ERROR: <input>:1:22: found no matching overload "
                      "for '_>_' applied to '(int, string)'"),
            0u)
      << text;
  EXPECT_NE(text.find("\napps/v1, Kind=ReplicaSet: ERROR: "), std::string::npos) << text;

  policy["status"] = {{"observedGeneration", 2}};
  EXPECT_FALSE(status_of(policy).has_value());
}

// A ValidatingAdmissionPolicy "limits" on Pod CREATEs whose params are ConfigMaps.
nlohmann::json configMapParamPolicy() {
  return nlohmann::json::parse(R"({
    "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
    "metadata": {"name": "limits"},
    "spec": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
             "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
               "operations": ["CREATE"], "resources": ["pods"]}]},
             "validations": [{"expression": "true"}]}})");
}

// The registry strategies' paramKind authorization (validatingadmissionpolicy/authz.go): the
// requesting user must be allowed to get every object of the paramKind's resource (ConfigMap:
// configmaps, resolved from the served resources); system:masters is not asked; the starting
// state (no user) is not checked.
TEST_F(RealKubeCelTest, PolicyParamKindIsAuthorizedForTheRequestingUser) {
  auto admit = policyObjectAdmitter(cel_);
  const nlohmann::json policy = configMapParamPolicy();
  const core::UserInfo jane{"jane", "", {"developers", "system:authenticated"}, {}};
  const core::UserInfo admin{"admin", "", {"system:masters", "system:authenticated"}, {}};
  const PolicyObjectWriter jane_writes{jane};
  const PolicyObjectWriter admin_writes{admin};
  auto refused = admit("ValidatingAdmissionPolicy", policy, nullptr, &jane_writes);
  ASSERT_TRUE(std::holds_alternative<core::Status>(refused));
  EXPECT_EQ(std::get<core::Status>(refused).code, 422);
  EXPECT_EQ(std::get<core::Status>(refused).message,
            "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"limits\" is invalid: "
            "spec.paramKind: Forbidden: user &{jane  [developers system:authenticated] map[]} must "
            "have \"get\" permission on all objects of the referenced paramKind (kind=ConfigMap, "
            "apiVersion=v1)");
  EXPECT_TRUE(std::holds_alternative<nlohmann::json>(
      admit("ValidatingAdmissionPolicy", policy, nullptr, &admin_writes)));
  EXPECT_TRUE(std::holds_alternative<nlohmann::json>(
      admit("ValidatingAdmissionPolicy", policy, nullptr, nullptr)));

  // Allowed once the authorizer lets jane get configmaps (any name, any namespace).
  auto set = cel_->call({{"op", "setAuthorizer"},
                         {"rules",
                          {{{"users", {"jane"}},
                            {"verbs", {"get"}},
                            {"resources", {"configmaps"}},
                            {"decision", "Allow"}}}}});
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_TRUE(std::holds_alternative<nlohmann::json>(
      admit("ValidatingAdmissionPolicy", policy, nullptr, &jane_writes)));
}

// The bindings' paramRef authorization (validatingadmissionpolicybinding/authz.go): "get" on the
// named param of the bound policy's paramKind resource; without the bound policy, the message
// says the permission was asked for every resource. The policy goes to kube-cel with the writer.
TEST_F(RealKubeCelTest, BindingParamRefIsAuthorizedAgainstTheBoundPolicy) {
  auto admit = policyObjectAdmitter(cel_);
  const nlohmann::json policy = configMapParamPolicy();
  const nlohmann::json binding = nlohmann::json::parse(R"({
    "apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
    "metadata": {"name": "limits-team"},
    "spec": {"policyName": "limits", "validationActions": ["Deny"],
             "paramRef": {"name": "team-limits", "namespace": "team",
                          "parameterNotFoundAction": "Deny"}}})");
  const core::UserInfo jane{"jane", "", {"developers"}, {}};
  const std::string prefix =
      "ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io \"limits-team\" is invalid: "
      "spec.paramRef: Forbidden: ";
  auto message = [&](const PolicyObjectWriter& writer) {
    auto admitted = admit("ValidatingAdmissionPolicyBinding", binding, nullptr, &writer);
    return std::holds_alternative<core::Status>(admitted)
               ? std::get<core::Status>(admitted).message
               : std::string();
  };
  EXPECT_EQ(message({jane, &policy}),
            prefix + "user &{jane  [developers] map[]} does not have \"get\" permission on the "
                     "object referenced by paramRef");
  EXPECT_EQ(message({jane, nullptr}),
            prefix + "unable to get policy limits to determine minimum required permissions and "
                     "user &{jane  [developers] map[]} does not have \"get\" permission for all "
                     "groups, versions and resources");

  // Allowed once jane may get that one ConfigMap; asking for every resource is still refused.
  auto set = cel_->call({{"op", "setAuthorizer"},
                         {"rules",
                          {{{"users", {"jane"}},
                            {"verbs", {"get"}},
                            {"resources", {"configmaps"}},
                            {"names", {"team-limits"}},
                            {"namespaces", {"team"}},
                            {"decision", "Allow"}}}}});
  ASSERT_TRUE(set.ok()) << set.error().message;
  EXPECT_EQ(message({jane, &policy}), "");
  EXPECT_NE(message({jane, nullptr}), "");
}

TEST_F(RealKubeCelTest, MutatingPoliciesApplyAndKeepTheirReinvocationStatePerRequest) {
  auto dispatcher = mutatingPolicyDispatcher(cel_);
  // ifneeded copies the "webhook" label; never counts its own invocations in a JSON patch.
  const PolicyInput input = configMapPolicies(
      {mutatingPolicy("ifneeded", "IfNeeded",
                      applyLabel("copied", "has(object.metadata.labels) && 'webhook' in "
                                           "object.metadata.labels ? "
                                           "object.metadata.labels['webhook'] : 'none'")),
       mutatingPolicy("never", "Never", applyLabel("never", "'ran'"))});
  AdmissionAttributes attributes = configMapCreate(nlohmann::json{{"k", "v"}});
  const MutatingPolicyOutcome round0 = dispatcher.dispatch(input, attributes, {"req-1", false});
  ASSERT_FALSE(round0.status.has_value()) << round0.status->message;
  ASSERT_TRUE(round0.object.has_value());
  EXPECT_EQ((*round0.object)["metadata"]["labels"],
            (nlohmann::json{{"copied", "none"}, {"never", "ran"}}));
  EXPECT_TRUE(round0.should_reinvoke);

  // A webhook's change between the passes: in the reinvocation pass only the IfNeeded policy
  // runs again (the Never one would put its label back).
  nlohmann::json changed = *round0.object;
  changed["metadata"]["labels"] = {{"webhook", "set"}};
  attributes.object = changed;
  attributes.reinvoke = true;
  const MutatingPolicyOutcome round1 = dispatcher.dispatch(input, attributes, {"req-1", true});
  ASSERT_FALSE(round1.status.has_value()) << round1.status->message;
  EXPECT_EQ((*round1.object)["metadata"]["labels"],
            (nlohmann::json{{"webhook", "set"}, {"copied", "set"}}));

  // The dispatcher counted each policy's invocations under upstream's names and labels.
  const std::string metrics = policyMetricsText(cel_)();
  EXPECT_THAT(metrics, HasSubstr("apiserver_mutating_admission_policy_check_total{error_type="
                                 "\"no_error\",policy=\"ifneeded\",policy_binding=\"ifneeded\"} 2\n"));
  EXPECT_THAT(metrics, HasSubstr("apiserver_mutating_admission_policy_check_total{error_type="
                                 "\"no_error\",policy=\"never\",policy_binding=\"never\"} 1\n"));
  EXPECT_THAT(metrics, HasSubstr("# TYPE apiserver_mutating_admission_policy_check_duration_seconds "
                                 "histogram\n"));

  // Another request's reinvocation pass has no state: nothing was invoked before it.
  const MutatingPolicyOutcome other = dispatcher.dispatch(input, attributes, {"req-2", true});
  EXPECT_EQ((*other.object)["metadata"]["labels"], (nlohmann::json{{"webhook", "set"}}));
  dispatcher.release("req-3");  // unknown: nothing happens
}

TEST_F(RealKubeCelTest, AMutatingPolicyErrorFollowsFailurePolicyAndBadPoliciesAre422) {
  auto dispatcher = mutatingPolicyDispatcher(cel_);
  nlohmann::json failing = mutatingPolicy(
      "failing", "Never",
      nlohmann::json::array({{{"patchType", "JSONPatch"},
                              {"jsonPatch",
                               {{"expression",
                                 "[JSONPatch{op: 'add', path: '/metadata/labels/x', value: "
                                 "object.data['missing']}]"}}}}}));
  const MutatingPolicyOutcome denied = dispatcher.dispatch(
      configMapPolicies({failing}), configMapCreate(nlohmann::json{{"k", "v"}}), {"r", false});
  ASSERT_TRUE(denied.status.has_value());
  EXPECT_THAT(denied.status->message,
              HasSubstr("policy 'failing' with binding 'failing' denied request"));
  failing["spec"]["failurePolicy"] = "Ignore";
  const MutatingPolicyOutcome ignored = dispatcher.dispatch(
      configMapPolicies({failing}), configMapCreate(nlohmann::json{{"k", "v"}}), {"r2", false});
  EXPECT_FALSE(ignored.status.has_value());
  EXPECT_FALSE(ignored.should_reinvoke);

  auto admit = policyObjectAdmitter(cel_);
  nlohmann::json bad = mutatingPolicy("bad", "Never", applyLabel("x", "1 +"));
  auto refused = admit("MutatingAdmissionPolicy", bad, nullptr, nullptr);
  ASSERT_TRUE(std::holds_alternative<core::Status>(refused));
  const auto& status = std::get<core::Status>(refused);
  EXPECT_EQ(status.code, 422);
  EXPECT_THAT(status.message, HasSubstr("spec.mutations[0].applyConfiguration.expression"));
  auto stored = admit("MutatingAdmissionPolicy", mutatingPolicy("ok", "Never", applyLabel("x", "'y'")),
                      nullptr, nullptr);
  ASSERT_TRUE(std::holds_alternative<nlohmann::json>(stored));
  EXPECT_EQ(std::get<nlohmann::json>(stored)["spec"]["matchConstraints"]["matchPolicy"],
            "Equivalent");
}

}  // namespace
}  // namespace harness::sim::cel
