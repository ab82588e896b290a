// Injection is idempotent for both profiles, in every layout they support: an object injected
// once and admitted again gets no patch (Kubernetes requires it of every mutating webhook:
// reinvocation and retries show the webhook its own output). Generated objects: Pods and every
// pod-template workload, with the Linkerd and Istio vocabularies (property/workloads.h).

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "harness/sim/idempotence_check.h"
#include "injectors.h"

namespace harness::property {
namespace {

using nlohmann::json;

// Linkerd's webhook on any workload kind (it injects pod templates too, as `linkerd inject`
// does), native or classic sidecar, with or without the CNI plugin.
RC_GTEST_PROP(IdempotenceLaws, LinkerdInjectingAnInjectedObjectYieldsNoPatch, ()) {
  const auto layout = *genLinkerdLayout();
  const auto c = asSent(*genAdmissionCase());
  const auto first = linkerdAdmit(layout, c.object, c.namespace_object);
  RC_TAG(linkerd::decisionName(first.decision));
  const auto injected = applyOps(c.object, first.patch);
  RC_LOG() << layout << "\nfirst patch: " << first.patch.dump() << "\n";
  RC_ASSERT(injected.ok());
  RC_ASSERT(sim::duplicateNames(*injected).empty());

  const auto second = linkerdAdmit(layout, *injected, c.namespace_object);
  RC_LOG() << "second: " << linkerd::decisionName(second.decision) << " "
           << second.patch.dump() << "\n";
  RC_ASSERT(second.decision != linkerd::Decision::kInject);
  RC_ASSERT(!second.patch.is_array() || second.patch.empty());
}

// Istio's webhook on Pods (the kind its webhook configuration matches), native or classic
// sidecar, istio-init or the CNI's istio-validation. An injected pod is re-injected from scratch
// (inject.go reinsertOverrides/stripPod): the result must be the same pod.
RC_GTEST_PROP(IdempotenceLaws, IstioInjectingAnInjectedPodYieldsNoPatch, ()) {
  const auto layout = *genIstioLayout();
  const auto c = asSent(*genAdmissionCase({"Pod"}));
  const auto first = istioAdmit(layout, c.object);
  RC_TAG(istio::decisionName(first.decision));
  RC_LOG() << layout << "\nfirst patch: " << core::encodePatch(first.patch).dump() << "\n";
  if (first.decision != istio::Decision::kInject) {
    RC_ASSERT(first.patch.empty());
    return;
  }
  const auto injected = applyOps(c.object, core::encodePatch(first.patch));
  RC_ASSERT(injected.ok());
  RC_ASSERT(sim::duplicateNames(*injected).empty());

  const auto second = istioAdmit(layout, *injected);
  RC_LOG() << "second: " << istio::decisionName(second.decision) << " "
           << core::encodePatch(second.patch).dump() << " " << second.error_message << "\n";
  RC_ASSERT(second.decision != istio::Decision::kError);
  const auto again = applyOps(*injected, core::encodePatch(second.patch));
  RC_ASSERT(again.ok());
  RC_ASSERT(*again == *injected);
}

// istioctl kube-inject (the offline path) on every workload kind: injecting its output again
// gives the same object.
RC_GTEST_PROP(IdempotenceLaws, IstioKubeInjectOfItsOutputIsTheSameObject, ()) {
  const auto layout = *genIstioLayout();
  const auto c = *genAdmissionCase();
  const auto& settings = istioSettings(layout.cni);
  const auto first = istio::kubeInject(settings, c.object, nullptr, layout.native_sidecars);
  RC_LOG() << layout << "\n";
  if (!first) {
    RC_TAG("denied");
    return;
  }
  RC_TAG(*first == c.object ? "unchanged" : "injected");
  RC_ASSERT(sim::duplicateNames(*first).empty());
  const auto second = istio::kubeInject(settings, *first, nullptr, layout.native_sidecars);
  RC_LOG() << "injected: " << first->dump() << "\n"
           << (second ? "" : "second: " + second.error().message) << "\n";
  RC_ASSERT(second.ok());
  RC_LOG() << "patch of the second injection: "
           << core::encodePatch(core::createPatch(*first, *second)).dump() << "\n";
  RC_ASSERT(*second == *first);
}

// The regression the property above found: with a status port annotation other than the mesh's
// (the probes were redirected to it, so DumpAppProbers, which compares with the mesh's port, finds
// them again on re-injection), re-injection merged the probers of ISTIO_KUBE_APP_PROBERS and
// wrote them back with their keys sorted ({"httpHeaders",...,"path","port","scheme"}) instead of
// the typed Prober's field order the first injection wrote (webhook.go mergeOrAppendProbers
// marshals map[string]*Prober), so every re-injection changed the env value.
TEST(IdempotenceLaws, IstioReinjectionKeepsTheProbersText) {
  const json deployment = json::parse(R"({"apiVersion":"apps/v1","kind":"DaemonSet",
    "metadata":{"name":"web","namespace":"shop"},
    "spec":{"selector":{"matchLabels":{"app":"web"}},"template":{
      "metadata":{"labels":{"app":"web"},
                  "annotations":{"status.sidecar.istio.io/port":"15030"}},
      "spec":{"containers":[{"name":"app","image":"nginx",
        "readinessProbe":{"httpGet":{"path":"/healthz","port":8080,"scheme":"HTTP",
                                     "httpHeaders":[{"name":"X-Probe","value":"1"}]}},
        "livenessProbe":{"tcpSocket":{"port":8080},"timeoutSeconds":3}}]}}}})");
  const auto& settings = istioSettings(false);
  const auto first = istio::kubeInject(settings, deployment, nullptr, false);
  ASSERT_TRUE(first.ok()) << first.error().message;
  const auto second = istio::kubeInject(settings, *first, nullptr, false);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(core::encodePatch(core::createPatch(*first, *second)), json::array());
  std::string probers;
  for (const auto& env : (*second)["spec"]["template"]["spec"]["containers"][1]["env"]) {
    if (env["name"] == "ISTIO_KUBE_APP_PROBERS") probers = env["value"];
  }
  EXPECT_EQ(probers,
            R"({"/app-health/app/livez":{"tcpSocket":{"port":8080},"timeoutSeconds":3},)"
            R"("/app-health/app/readyz":{"httpGet":{"path":"/healthz","port":8080,)"
            R"("scheme":"HTTP","httpHeaders":[{"name":"X-Probe","value":"1"}]}}})");
}

}  // namespace
}  // namespace harness::property
