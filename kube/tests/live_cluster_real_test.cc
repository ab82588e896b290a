// `apiserver-sim lint --kubeconfig` and `apiserver-sim explain --kubeconfig -f` against the real
// control plane (CTest label `real`), over real TLS with the kubeconfig it writes: Linkerd's and
// Istio's webhook configurations and ConfigMaps as installed, a policy webhook that can lock
// itself out, and Pods explained in an Istio and a Linkerd namespace. Nothing is created by
// explain: the test checks that no Pod exists afterwards. Skipped, with one line, when the
// binaries of scripts/build-kube.sh are not built.

#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/yaml.h"
#include "harness/kube/control_plane.h"
#include "harness/process/kube_bin_dir.h"
#include "harness/testing/support.h"
#include "../../apiserver-sim/tests/scenario/headless_chromium.h"

#if !defined(HARNESS_APISERVER_SIM_BINARY) || !defined(HARNESS_INJECTOR_BINARY)
#error "set by kube/CMakeLists.txt"
#endif

namespace harness::kube {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

constexpr char kPolicyWebhook[] = R"(apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: policy}
webhooks:
  - name: pods.policy.example.com
    clientConfig: {service: {namespace: policy, name: policy-webhook, path: /validate}}
    rules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
    failurePolicy: Fail
    sideEffects: None
    admissionReviewVersions: [v1]
)";

constexpr char kNamespaces[] = R"(apiVersion: v1
kind: List
items:
  - {apiVersion: v1, kind: Namespace, metadata: {name: linkerd, labels: {config.linkerd.io/admission-webhooks: disabled}}}
  - {apiVersion: v1, kind: Namespace, metadata: {name: istio-system}}
  - {apiVersion: v1, kind: Namespace, metadata: {name: policy}}
  - {apiVersion: v1, kind: Namespace, metadata: {name: app-istio, labels: {istio-injection: enabled}}}
  - {apiVersion: v1, kind: Namespace, metadata: {name: app-linkerd, annotations: {linkerd.io/inject: enabled}}}
)";

// A custom resource kind for policy params (the policy reading it:
// apiserver-sim/tests/live/testdata/limits-policy.yaml), and the param.
constexpr char kLimitsCrd[] = R"(apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: limits.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: limits, singular: limit, kind: Limit}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, properties: {maxContainers: {type: integer}}}
)";

constexpr char kLimitsParam[] = R"yaml(apiVersion: example.com/v1
kind: Limit
metadata: {name: strict, namespace: app-limits}
spec: {maxContainers: 0}
)yaml";

class LiveClusterRealTest : public ::testing::Test {
 protected:
  void SetUp() override {
    binaries_ = Binaries::inDir(process::kubeBinDir());
    if (auto r = binaries_.check(); !r) GTEST_SKIP() << r.error().message;
    fs::create_directories(scratch_ / "home");
    ControlPlaneOptions options;
    options.binaries = binaries_;
    options.work_dir = scratch_ / "work";
    options.controller_manager = false;  // nothing here needs controllers: no Pod is created
    options.ready_timeout = 600s;
    auto started = ControlPlane::start(std::move(options));
    ASSERT_TRUE(started.ok()) << started.error().message;
    plane_ = std::move(*started);
  }

  testing::CommandOutput kubectl(std::vector<std::string> args) {
    args.insert(args.begin(), {binaries_.kubectl.string(), "--request-timeout=60s"});
    return testing::runCapture(args, {"HOME=" + (scratch_ / "home").string(),
                                      "KUBECONFIG=" + plane_->kubeconfig().string()});
  }

  void apply(const std::string& name, const std::string& yaml) {
    testing::writeFile(scratch_ / name, yaml);
    auto run = kubectl({"apply", "-f", (scratch_ / name).string()});
    ASSERT_EQ(run.status, 0) << name << ": " << run.err;
  }

  void configMap(const std::string& ns, const std::string& name,
                 const std::vector<std::pair<std::string, fs::path>>& files) {
    std::vector<std::string> args = {"create", "configmap", name, "-n", ns};
    for (const auto& [key, file] : files) args.push_back("--from-file=" + key + "=" + file.string());
    auto run = kubectl(args);
    ASSERT_EQ(run.status, 0) << run.err;
  }

  // Linkerd and Istio installed as their charts render them, plus the policy webhook.
  void install() {
    const fs::path root = testing::sourceDir();
    apply("namespaces.yaml", kNamespaces);
    auto linkerd = kubectl(
        {"apply", "-f", (root / "scenarios/seed-tutorial/linkerd-webhook.yaml").string()});
    ASSERT_EQ(linkerd.status, 0) << linkerd.err;
    auto istio = kubectl({"apply", "-f", (root / "scenarios/istio-revisions/webhooks.yaml").string()});
    ASSERT_EQ(istio.status, 0) << istio.err;
    apply("policy-webhook.yaml", kPolicyWebhook);
    configMap("linkerd", "linkerd-config", {{"values", root / "scenarios/seed-tutorial/linkerd-values.yaml"}});
    configMap("istio-system", "istio-sidecar-injector",
              {{"config", root / "injector/istio/sidecar-injector-config.yaml"},
               {"values", root / "injector/istio/values.json"}});
    configMap("istio-system", "istio", {{"mesh", root / "injector/istio/mesh.yaml"}});
  }

  testing::CommandOutput sim(std::vector<std::string> args) {
    args.insert(args.begin(), HARNESS_APISERVER_SIM_BINARY);
    return testing::runCapture(args, {"HARNESS_INJECTOR_BINARY=" HARNESS_INJECTOR_BINARY});
  }

  Binaries binaries_;
  testing::ScratchDir scratch_{"live-real"};
  std::unique_ptr<ControlPlane> plane_;
};

TEST_F(LiveClusterRealTest, LintAndExplainReadTheLiveCluster) {
  install();
  const std::string kubeconfig = plane_->kubeconfig().string();

  // lint: the overlap between the two meshes and the policy webhook's lockout, from the cluster.
  auto lint = sim({"lint", "--kubeconfig", kubeconfig, "-o", "json"});
  ASSERT_EQ(lint.status, 1) << lint.out << lint.err;  // errors found
  const json report = json::parse(lint.out);
  std::vector<std::string> found;
  for (const auto& finding : report["findings"]) {
    found.push_back(finding["rule"].get<std::string>() + " " +
                    finding["configuration"].get<std::string>());
  }
  EXPECT_THAT(found, ::testing::Contains("self-lockout policy"));
  EXPECT_THAT(found, ::testing::Contains("multiple-injectors linkerd-proxy-injector-webhook-config"));
  EXPECT_THAT(found, ::testing::Not(::testing::Contains(
                         "self-lockout linkerd-proxy-injector-webhook-config")));
  EXPECT_EQ(report["summary"]["configurations"], 5);  // Istio: 3, Linkerd, policy
  EXPECT_EQ(sim({"lint", "--kubeconfig", kubeconfig, "--fail-on", "none"}).status, 0);

  // explain: a Pod in the Istio namespace; nothing is created.
  const fs::path pod = testing::sourceDir() / "scenarios/seed-tutorial/pod.yaml";
  auto explained = sim({"explain", "--kubeconfig", kubeconfig, "-f", pod.string(), "-n",
                        "app-istio", "--no-color"});
  ASSERT_EQ(explained.status, 0) << explained.out << explained.err;
  EXPECT_THAT(explained.out, HasSubstr("namespace app-istio: labels istio-injection=enabled"));
  EXPECT_THAT(explained.out, HasSubstr("mutating webhook namespace.sidecar-injector.istio.io"));
  EXPECT_THAT(explained.out, HasSubstr("istio injector's decision (offline, on the cluster's "
                                       "istio-sidecar-injector and istio):"));
  EXPECT_THAT(explained.out, HasSubstr("validating webhook pods.policy.example.com"));

  auto as_json = sim({"explain", "--kubeconfig", kubeconfig, "--context",
                      "kube-local", "-f", pod.string(), "-n", "app-linkerd", "--only-called",
                      "-o", "json"});
  ASSERT_EQ(as_json.status, 0) << as_json.out << as_json.err;
  const json doc = json::parse(as_json.out);
  EXPECT_EQ(doc["wouldInject"], true) << as_json.out;
  bool linkerd_injects = false;
  for (const auto& webhook : doc["webhooks"]) {
    if (webhook["webhook"] == "linkerd-proxy-injector.linkerd.io") {
      linkerd_injects = webhook["injector"]["decision"] == "inject";
      // The patch Linkerd's webhook would answer, predicted offline.
      EXPECT_FALSE(webhook["injector"].value("patch", json::array()).empty()) << webhook;
    }
  }
  EXPECT_TRUE(linkerd_injects) << as_json.out;

  auto pods = kubectl({"get", "pods", "-A", "-o", "json"});
  ASSERT_EQ(pods.status, 0) << pods.err;
  EXPECT_TRUE(json::parse(pods.out)["items"].empty());

  // Admission policies: explain's decision is kube-apiserver's. The ValidatingAdmissionPolicy
  // denies the Pod with the same message a server-side dry-run create gets; the
  // MutatingAdmissionPolicy's label is on the Pod a create in a namespace without the
  // ValidatingAdmissionPolicy's binding stores.
  auto policies_applied = kubectl(
      {"apply", "-f",
       (testing::sourceDir() / "apiserver-sim/tests/live/testdata/policies.yaml").string()});
  ASSERT_EQ(policies_applied.status, 0) << policies_applied.err;
  // The ServiceAccount admission plugin refuses a Pod in a namespace without its `default`
  // ServiceAccount, which only kube-controller-manager's serviceaccounts controller creates:
  // this cluster runs none, so the test creates them (AlreadyExists if one does).
  for (const std::string ns : {"app-policy", "app-linkerd"}) {
    auto account = kubectl({"create", "serviceaccount", "default", "-n", ns});
    ASSERT_TRUE(account.status == 0 || account.err.find("AlreadyExists") != std::string::npos)
        << account.err;
  }
  // kubectl refuses -n other than the file's namespace: the same Pod without one.
  auto pod_object = core::parseYaml(testing::readFile(pod));
  ASSERT_TRUE(pod_object.ok());
  (*pod_object)["metadata"].erase("namespace");
  const fs::path pod_anywhere = scratch_ / "pod-anywhere.yaml";
  testing::writeFile(pod_anywhere, core::toYaml(*pod_object));
  auto policy_json = sim({"explain", "--kubeconfig", kubeconfig, "-f", pod.string(), "-n",
                          "app-policy", "-o", "json"});
  ASSERT_EQ(policy_json.status, 0) << policy_json.out << policy_json.err;
  const json policy_doc = json::parse(policy_json.out);
  EXPECT_EQ(policy_doc["deniedByPolicy"], true) << policy_json.out;
  std::map<std::string, json> policies;
  for (const auto& entry : policy_doc["policies"]) policies[entry["policy"]] = entry;
  ASSERT_EQ(policies["require-team"]["decision"], "deny") << policy_json.out;
  EXPECT_EQ(policies["add-label"]["decision"], "mutate") << policy_json.out;
  EXPECT_EQ(policies["never-bound"]["decision"], "unbound") << policy_json.out;
  const std::string message = policies["require-team"]["message"];
  // kube-apiserver names a generateName Pod before validating admission, so the message's
  // `pods "<name>" is forbidden: ` differs; the policy's part is the same.
  const auto policy_part = message.find("ValidatingAdmissionPolicy 'require-team'");
  ASSERT_NE(policy_part, std::string::npos) << message;
  // The policy plugins see policies and bindings through informers: a change is in effect
  // shortly after it is stored. Retried until `done` (at most two minutes).
  auto dryRunUntil = [&](const std::string& ns, const std::function<bool(
                                                    const testing::CommandOutput&)>& done) {
    const auto deadline = std::chrono::steady_clock::now() + 120s;
    for (;;) {
      auto run = kubectl({"create", "--dry-run=server", "-f", pod_anywhere.string(), "-n", ns,
                          "-o", "json"});
      if (done(run) || std::chrono::steady_clock::now() > deadline) return run;
      std::this_thread::sleep_for(200ms);
    }
  };
  auto denied = dryRunUntil("app-policy", [](const testing::CommandOutput& run) {
    return run.err.find("require-team") != std::string::npos;
  });
  EXPECT_NE(denied.status, 0) << denied.out;
  EXPECT_THAT(denied.err, HasSubstr(message.substr(policy_part)));
  // kubectl's wording of a 422 (Invalid) status: `The pods "<name>" is invalid: `.
  EXPECT_THAT(denied.err, HasSubstr("\" is invalid: "));
  auto policy_text = sim({"explain", "--kubeconfig", kubeconfig, "-f", pod.string(), "-n",
                          "app-policy", "--no-color"});
  ASSERT_EQ(policy_text.status, 0) << policy_text.err;
  EXPECT_THAT(policy_text.out, HasSubstr("validating admission policy require-team (binding "
                                         "require-team; failurePolicy Fail; validationActions "
                                         "Deny): matched -> denied (422): " + message + "\n"));
  // report --kubeconfig: the same explanation drawn, and Chromium draws the page.
  const fs::path live_report = scratch_ / "live-report.html";
  auto reported = sim({"report", "--kubeconfig", kubeconfig, "-f", pod.string(), "-n",
                       "app-policy", "--out", live_report.string()});
  ASSERT_EQ(reported.status, 0) << reported.err;
  const std::string html = testing::readFile(live_report);
  EXPECT_THAT(html, HasSubstr("would be denied by ValidatingAdmissionPolicy require-team"));
  EXPECT_THAT(html, HasSubstr(">require-team: denied (422)</text>"));
  EXPECT_THAT(html, HasSubstr(">add-label: mutates the object</text>"));
  EXPECT_THAT(html, HasSubstr(">would call (parallel)</text>"));  // the policy webhook
  EXPECT_THAT(html, HasSubstr("<td>pods.policy.example.com</td>"));
  if (const fs::path browser = sim::test::chromium(); !browser.empty()) {
    const auto dom = sim::test::runChromium(browser, live_report, scratch_.path(), {"--dump-dom"});
    ASSERT_EQ(dom.status, 0) << dom.err;
    EXPECT_THAT(dom.out, HasSubstr("data-rendered=\"ok\""));
    EXPECT_THAT(dom.err, Not(HasSubstr("Uncaught")));
    const auto shot = sim::test::runChromium(
        browser, live_report, scratch_.path(),
        {"--window-size=1200,1400", "--screenshot=" + (scratch_ / "live-report.png").string()});
    ASSERT_EQ(shot.status, 0) << shot.err;
    EXPECT_GT(fs::file_size(scratch_ / "live-report.png"), 10'000u);
  } else {
    std::cerr << "chromium is not installed: the live report is not drawn\n";
  }
  // In app-linkerd neither binding matches, and kube-apiserver admits the Pod unlabelled.
  auto unmatched = sim({"explain", "--kubeconfig", kubeconfig, "-f", pod.string(), "-n",
                        "app-linkerd", "-o", "json"});
  ASSERT_EQ(unmatched.status, 0) << unmatched.err;
  // Parsed into a variable: a range-for over a member of a temporary reads a destroyed object.
  const json unmatched_doc = json::parse(unmatched.out);
  for (const auto& entry : unmatched_doc["policies"]) {
    if (entry["policy"] != "never-bound") {
      EXPECT_EQ(entry["decision"], "not-matched") << entry;
      // Both bindings select namespaces labelled policy=enforced.
      EXPECT_EQ(entry["excludedBy"]["part"], "matchResources") << entry;
      EXPECT_EQ(entry["excludedBy"]["clause"], "namespaceSelector") << entry;
    }
  }
  // The policy webhook (failurePolicy Fail, no Service behind it) would refuse every Pod that
  // gets past the policies: gone for the creates that are to be admitted.
  auto no_webhook = kubectl({"delete", "validatingwebhookconfiguration", "policy"});
  ASSERT_EQ(no_webhook.status, 0) << no_webhook.err;
  auto admitted = kubectl({"create", "--dry-run=server", "-f", pod_anywhere.string(), "-n",
                           "app-linkerd", "-o", "json"});
  ASSERT_EQ(admitted.status, 0) << admitted.err;
  EXPECT_FALSE(json::parse(admitted.out)["metadata"]["labels"].contains("mutated-by"));
  // The mutation explain shows is the one kube-apiserver makes: with the validating binding
  // gone, the dry-run create in app-policy stores the label.
  auto unbound = kubectl({"delete", "validatingadmissionpolicybinding", "require-team"});
  ASSERT_EQ(unbound.status, 0) << unbound.err;
  auto mutated = dryRunUntil("app-policy", [](const testing::CommandOutput& run) {
    return run.err.find("require-team") == std::string::npos;
  });
  ASSERT_EQ(mutated.status, 0) << mutated.err;
  EXPECT_EQ(json::parse(mutated.out)["metadata"]["labels"]["mutated-by"], "add-label");
  EXPECT_EQ(policies["add-label"]["patch"][0]["path"], "/metadata/labels/mutated-by")
      << policies["add-label"];
  // lint reads the policies too: the unbound one and the binding's policy.
  auto policy_lint = sim({"lint", "--kubeconfig", kubeconfig, "-o", "json"});
  std::vector<std::string> policy_findings;
  const json policy_lint_doc = json::parse(policy_lint.out);
  for (const auto& finding : policy_lint_doc["findings"]) {
    policy_findings.push_back(finding["rule"].get<std::string>() + " " +
                              finding["configuration"].get<std::string>());
  }
  EXPECT_THAT(policy_findings, ::testing::Contains("policy-without-binding never-bound"))
      << policy_lint.out << policy_lint.err;
  EXPECT_THAT(policy_findings, ::testing::Contains("policy-without-binding require-team"));
  EXPECT_THAT(policy_findings,
              ::testing::Not(::testing::Contains("policy-without-binding add-label")));

  // A policy whose paramKind is a custom resource (a CRD created here): explain finds its
  // resource through discovery and evaluates it with the param, as kube-apiserver does; lint
  // knows the kind's objects, so a binding naming a missing one is an error.
  apply("limits-crd.yaml", kLimitsCrd);
  auto established = kubectl({"wait", "--for=condition=Established", "--timeout=120s",
                              "customresourcedefinition/limits.example.com"});
  ASSERT_EQ(established.status, 0) << established.err;
  auto limits_policy = kubectl(
      {"apply", "-f",
       (testing::sourceDir() / "apiserver-sim/tests/live/testdata/limits-policy.yaml").string()});
  ASSERT_EQ(limits_policy.status, 0) << limits_policy.err;
  apply("limits-param.yaml", kLimitsParam);
  auto limits_account = kubectl({"create", "serviceaccount", "default", "-n", "app-limits"});
  ASSERT_EQ(limits_account.status, 0) << limits_account.err;
  auto limited = sim({"explain", "--kubeconfig", kubeconfig, "-f", pod.string(), "-n",
                      "app-limits", "-o", "json"});
  ASSERT_EQ(limited.status, 0) << limited.err;
  const json limited_doc = json::parse(limited.out);
  std::map<std::string, json> limit_entries;
  for (const auto& entry : limited_doc["policies"]) {
    if (!entry["binding"].is_string()) continue;  // a policy no binding names
    limit_entries[entry["policy"].get<std::string>() + "/" +
                  entry["binding"].get<std::string>()] = entry;
  }
  const json& max_containers = limit_entries["max-containers/max-containers"];
  ASSERT_EQ(max_containers["decision"], "deny") << limited.out;
  const std::string limit_message = max_containers["message"];
  EXPECT_THAT(limit_message, HasSubstr("denied request: at most 0 containers"));
  EXPECT_EQ(limit_entries["max-containers/max-containers-missing"]["excludedBy"]["clause"],
            "namespaceSelector")
      << limited.out;
  auto limit_denied = dryRunUntil("app-limits", [](const testing::CommandOutput& run) {
    return run.err.find("max-containers") != std::string::npos;
  });
  EXPECT_NE(limit_denied.status, 0) << limit_denied.out;
  EXPECT_THAT(limit_denied.err,
              HasSubstr(limit_message.substr(limit_message.find("ValidatingAdmissionPolicy"))));
  auto limit_lint = sim({"lint", "--kubeconfig", kubeconfig, "-o", "json"});
  const json limit_lint_doc = json::parse(limit_lint.out);
  std::map<std::string, json> param_findings;
  for (const auto& finding : limit_lint_doc["findings"]) {
    if (finding["rule"] == "policy-param-not-found") {
      param_findings[finding["configuration"].get<std::string>()] = finding;
    }
  }
  EXPECT_FALSE(param_findings.contains("max-containers")) << limit_lint.out;
  ASSERT_TRUE(param_findings.contains("max-containers-missing")) << limit_lint.out;
  EXPECT_EQ(param_findings["max-containers-missing"]["severity"], "error");
  EXPECT_THAT(param_findings["max-containers-missing"]["message"].get<std::string>(),
              HasSubstr("example.com/v1/Limit \"absent\" in namespace app-limits does not "
                        "exist"));

  // tls-server-name (client-go TLSClientConfig.ServerName): the name verified against
  // kube-apiserver's serving certificate, which names kubernetes.default.svc but not
  // wrong.example.
  auto with_server_name = [&](const std::string& name) {
    auto config = core::parseYaml(testing::readFile(plane_->kubeconfig()));
    EXPECT_TRUE(config.ok());
    (*config)["clusters"][0]["cluster"]["tls-server-name"] = name;
    const fs::path file = plane_->workDir() / ("kubeconfig-" + name);
    testing::writeFile(file, core::toYaml(*config));
    return file.string();
  };
  auto named = sim({"lint", "--kubeconfig", with_server_name("kubernetes.default.svc"), "-o",
                    "json", "--fail-on", "none"});
  EXPECT_EQ(named.status, 0) << named.err;
  auto wrong = sim({"lint", "--kubeconfig", with_server_name("wrong.example")});
  EXPECT_EQ(wrong.status, 2) << wrong.out;
  EXPECT_THAT(wrong.err, HasSubstr("tls: failed to verify certificate: x509: certificate is "
                                   "valid for "));
  EXPECT_THAT(wrong.err, HasSubstr(", not wrong.example"));

  // A context that is not in the kubeconfig: one line naming it.
  auto bad = sim({"explain", "--kubeconfig", kubeconfig, "--context", "nope", "-f", pod.string()});
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(bad.err, HasSubstr("no context named \"nope\""));
}

}  // namespace
}  // namespace harness::kube
