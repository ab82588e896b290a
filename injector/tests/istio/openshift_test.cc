// istiod on OpenShift: the proxy's UID and GID from the Namespace's SCC annotations
// (pkg/kube/inject/inject.go GetProxyIDs, openshift.go) and the istio-proxy user reset of
// webhook.go inject. Expected values worked out from those functions and Go's fmt.Sscanf.

#include <gtest/gtest.h>

#include <algorithm>

#include "harness/core/yaml.h"
#include "harness/injector/istio/injector.h"
#include "harness/injector/istio/openshift.h"
#include "harness/testing/support.h"

namespace harness::injector::istio {
namespace {

using nlohmann::json;
namespace t = harness::testing;

json namespaceWith(const json& annotations) {
  return {{"apiVersion", "v1"},
          {"kind", "Namespace"},
          {"metadata", {{"name", "test-ns"}, {"annotations", annotations}}}};
}

TEST(OpenShift, UidBlocksAreReadAsSscanfReadsThem) {
  auto slash = parseUidBlock("1000620000/10000");
  ASSERT_TRUE(slash.ok());
  EXPECT_EQ(slash->start, 1000620000U);
  EXPECT_EQ(slash->end, 1000629999U);
  auto dash = parseUidBlock("5-10");
  ASSERT_TRUE(dash.ok());
  EXPECT_EQ(dash->end, 10U);
  // Leading spaces skipped, trailing text ignored, uint32 arithmetic wraps.
  EXPECT_EQ(parseUidBlock(" 7/3junk")->end, 9U);
  EXPECT_EQ(parseUidBlock("0/0")->end, 4294967295U);
  EXPECT_EQ(parseUidBlock("-1/5").error().message, "expected integer");
  EXPECT_EQ(parseUidBlock("").error().message, "unexpected EOF");
  EXPECT_EQ(parseUidBlock("5").error().message, "unexpected EOF");
  EXPECT_EQ(parseUidBlock("5 /2").error().message, "input does not match format");
  EXPECT_EQ(parseUidBlock("4294967296/1").error().message,
            "unsigned integer overflow on token 4294967296");
  EXPECT_EQ(parseUidBlock("\n1/2").error().message, "unexpected newline");
}

TEST(OpenShift, ProxyIdsComeFromTheNamespaceRanges) {
  EXPECT_EQ(proxyIds(nullptr), std::make_pair(std::int64_t{1337}, std::int64_t{1337}));
  EXPECT_EQ(proxyIds(namespaceWith(json::object())), std::make_pair(std::int64_t{1337}, std::int64_t{1337}));
  // The uid range stands in for missing supplemental groups.
  EXPECT_EQ(proxyIds(namespaceWith({{"openshift.io/sa.scc.uid-range", "1000620000/10000"}})),
            std::make_pair(std::int64_t{1000629999}, std::int64_t{1000629999}));
  // The first supplemental block's end is the gid; every block must parse.
  EXPECT_EQ(proxyIds(namespaceWith({{"openshift.io/sa.scc.uid-range", "1000620000/10000"},
                                    {"openshift.io/sa.scc.supplemental-groups",
                                     "2000-2005,3000/10"}})),
            std::make_pair(std::int64_t{1000629999}, std::int64_t{2005}));
  EXPECT_EQ(proxyIds(namespaceWith({{"openshift.io/sa.scc.uid-range", "1000620000/10000"},
                                    {"openshift.io/sa.scc.supplemental-groups", "2000-2005,x"}})),
            std::make_pair(std::int64_t{1000629999}, std::int64_t{1337}));
  // A present but empty supplemental annotation does not fall back to the uid range.
  EXPECT_EQ(proxyIds(namespaceWith({{"openshift.io/sa.scc.uid-range", "1000620000/10000"},
                                    {"openshift.io/sa.scc.supplemental-groups", ""}})),
            std::make_pair(std::int64_t{1000629999}, std::int64_t{1337}));
  // A bad uid range leaves the uid alone, and the gid falls back to the same bad text.
  EXPECT_EQ(proxyIds(namespaceWith({{"openshift.io/sa.scc.uid-range", "abc"}})),
            std::make_pair(std::int64_t{1337}, std::int64_t{1337}));
}

TEST(OpenShift, PlatformFromPilotEnvElseGlobalElseTheOverride) {
  InjectorSettings s;
  EXPECT_FALSE(isOpenShift(s));
  s.values.map["global"]["platform"] = "openshift";
  EXPECT_TRUE(isOpenShift(s));
  EXPECT_FALSE(isOpenShift(s, "gcp"));
  s.values.map["pilot"]["env"]["PLATFORM"] = "k3d";
  EXPECT_FALSE(isOpenShift(s));
  EXPECT_TRUE(isOpenShift(s, "openshift"));
  s.values.map["pilot"]["env"]["PLATFORM"] = "openshift";
  s.values.map["global"]["platform"] = "";
  EXPECT_TRUE(isOpenShift(s));
}

json podWithUsers(const json& proxy_sc, const json& app_sc) {
  json pod = {{"metadata", {{"name", "p"}}},
              {"spec",
               {{"containers",
                 {{{"name", "app"}, {"securityContext", app_sc}},
                  {{"name", "istio-proxy"}, {"securityContext", proxy_sc}}}}}}};
  return pod;
}

TEST(OpenShift, SidecarUserMatchingTheAppsIsDropped) {
  json pod = podWithUsers({{"runAsUser", 1000620000}, {"runAsGroup", 5}, {"privileged", false}},
                          {{"runAsUser", 1000620000}});
  std::vector<LogLine> logs;
  EXPECT_TRUE(resetSidecarUserMatchingApp(pod, &logs));
  EXPECT_EQ(pod["spec"]["containers"][1]["securityContext"], json({{"privileged", false}}));
  ASSERT_EQ(logs.size(), 1U);
  EXPECT_EQ(logs[0].message,
            "Resetting the UserID of sideCar proxy as it matches with the app container for Pod "
            "\"p\"");

  // Another user is the user's choice and stays.
  json other = podWithUsers({{"runAsUser", 1234}}, {{"runAsUser", 1000620000}});
  EXPECT_FALSE(resetSidecarUserMatchingApp(other, nullptr));
  EXPECT_EQ(other["spec"]["containers"][1]["securityContext"]["runAsUser"], 1234);

  // Both unset count as 0: the group goes too.
  json unset = podWithUsers({{"runAsGroup", 7}}, json::object());
  EXPECT_TRUE(resetSidecarUserMatchingApp(unset, nullptr));
  EXPECT_EQ(unset["spec"]["containers"][1]["securityContext"], json::object());

  // Without a securityContext on istio-proxy nothing happens; istio-init is not the app.
  json none = podWithUsers(nullptr, {{"runAsUser", 0}});
  none["spec"]["containers"][1].erase("securityContext");
  EXPECT_FALSE(resetSidecarUserMatchingApp(none, nullptr));
  json init = podWithUsers({{"runAsUser", 1337}}, {{"runAsUser", 1337}});
  init["spec"]["containers"][0]["securityContext"]["runAsUser"] = 99;
  init["spec"]["initContainers"] = {{{"name", "istio-init"}, {"securityContext", {{"runAsUser", 1337}}}}};
  EXPECT_FALSE(resetSidecarUserMatchingApp(init, nullptr));
}

// This project's template reads .ProxyUID and .ProxyGID as Istio's does: on OpenShift the
// webhook runs the proxy as the namespace's range end, elsewhere (and in kube-inject) as 1337.
InjectorSettings projectDefaults() {
  const auto dir = t::sourceDir() / "injector" / "istio";
  auto s = loadSettings(t::readFile(dir / "sidecar-injector-config.yaml"),
                        t::readFile(dir / "values.json"), t::readFile(dir / "mesh.yaml"));
  EXPECT_TRUE(s.ok()) << (s.ok() ? "" : s.error().message);
  return s.ok() ? *s : InjectorSettings{};
}

json container(const json& pod, const char* list, const char* name) {
  for (const auto& c : pod["spec"].value(list, json::array())) {
    if (c["name"] == name) return c;
  }
  return nullptr;
}

TEST(OpenShift, WebhookRunsTheProxyAsTheNamespacesUser) {
  const auto settings = projectDefaults();
  AdmissionInput in;
  in.pod = core::parseYaml(R"(
metadata: {name: hello, namespace: test-ns}
spec:
  containers:
  - name: hello
    image: hello
    securityContext: {runAsUser: 1000620000}
  - name: istio-proxy
    image: auto
    securityContext: {runAsUser: 1000620000, readOnlyRootFilesystem: false}
)").value();
  in.native_sidecars = false;
  const json ns = namespaceWith({{"openshift.io/sa.scc.uid-range", "1000620000/10000"},
                                 {"openshift.io/sa.scc.supplemental-groups", "1000620000/10000"}});

  // Elsewhere: 1337, and the user's runAsUser on istio-proxy is kept as their override.
  auto plain = admit(settings, in);
  ASSERT_EQ(plain.decision, Decision::kInject) << plain.error_message;
  json proxy = container(plain.injected_pod, "containers", "istio-proxy");
  ASSERT_TRUE(proxy.is_object());
  EXPECT_EQ(proxy["securityContext"]["runAsUser"], 1000620000);
  EXPECT_EQ(proxy["securityContext"]["runAsGroup"], 1337);

  in.openshift = true;
  in.namespace_object = ns;
  auto os = admit(settings, in);
  ASSERT_EQ(os.decision, Decision::kInject) << os.error_message;
  proxy = container(os.injected_pod, "containers", "istio-proxy");
  ASSERT_TRUE(proxy.is_object());
  EXPECT_EQ(proxy["securityContext"]["runAsUser"], 1000629999);
  EXPECT_EQ(proxy["securityContext"]["runAsGroup"], 1000629999);
  EXPECT_EQ(proxy["securityContext"]["readOnlyRootFilesystem"], false);
  const json init = container(os.injected_pod, "initContainers", "istio-init");
  ASSERT_TRUE(init.is_object());
  // istio-init's -u names the proxy's user, so its iptables rules exclude the right traffic.
  const auto& args = init["args"];
  const auto u = std::find(args.begin(), args.end(), "-u");
  ASSERT_NE(u, args.end());
  EXPECT_EQ(*(u + 1), "1000629999");

  // OpenShift without the Namespace (not found): 1337, but the matching user is still reset.
  in.namespace_object = nullptr;
  auto missing = admit(settings, in);
  ASSERT_EQ(missing.decision, Decision::kInject);
  proxy = container(missing.injected_pod, "containers", "istio-proxy");
  EXPECT_EQ(proxy["securityContext"]["runAsUser"], 1337);
}

TEST(OpenShift, KubeInjectHasNoNamespaceAndKeeps1337) {
  const auto settings = projectDefaults();
  const json deployment = core::parseYaml(R"(
apiVersion: apps/v1
kind: Deployment
metadata: {name: hello, namespace: test-ns}
spec:
  selector: {matchLabels: {app: hello}}
  template:
    metadata: {labels: {app: hello}}
    spec:
      containers: [{name: hello, image: hello}]
)").value();
  auto got = kubeInject(settings, deployment);
  ASSERT_TRUE(got.ok()) << got.error().message;
  const json pod = {{"spec", (*got)["spec"]["template"]["spec"]}};
  json proxy = container(pod, "containers", "istio-proxy");
  ASSERT_TRUE(proxy.is_object());
  EXPECT_EQ(proxy["securityContext"]["runAsUser"], 1337);
}

}  // namespace
}  // namespace harness::injector::istio
