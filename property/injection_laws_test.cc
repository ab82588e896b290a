// Injection is idempotent: a pod injected by the Linkerd profile, admitted again, is not
// injected a second time — whatever its containers, ports and annotations.

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "harness/core/json_patch.h"
#include "harness/injector/linkerd/injector.h"

namespace harness::property {
namespace {

using nlohmann::json;
namespace linkerd = harness::injector::linkerd;

json genPod() {
  json containers = json::array();
  const int n = *rc::gen::inRange(1, 4);
  for (int i = 0; i < n; ++i) {
    json c = {{"name", "app" + std::to_string(i)}, {"image", "example/app:1"}};
    const auto ports = *rc::gen::container<std::vector<int>>(
        rc::gen::element(80, 443, 3306, 8080, 9090, 11211));
    for (int p : ports) c["ports"].push_back({{"containerPort", p}});
    containers.push_back(c);
  }
  json pod = {{"apiVersion", "v1"},
              {"kind", "Pod"},
              {"metadata", {{"name", "p"}, {"namespace", "ns"}}},
              {"spec", {{"containers", containers}}}};
  if (*rc::gen::arbitrary<bool>()) pod["metadata"]["labels"] = {{"app", "x"}};
  if (*rc::gen::arbitrary<bool>()) {
    pod["metadata"]["annotations"]["linkerd.io/inject"] =
        *rc::gen::element<std::string>("enabled", "ingress");
  }
  if (*rc::gen::arbitrary<bool>()) {
    pod["metadata"]["annotations"]["config.linkerd.io/proxy-enable-native-sidecar"] =
        *rc::gen::element<std::string>("true", "false");
  }
  if (*rc::gen::arbitrary<bool>()) pod["spec"]["initContainers"] = {{{"name", "setup"}, {"image", "busybox"}}};
  return pod;
}

linkerd::Outcome admit(const linkerd::Values& values, const json& pod) {
  linkerd::AdmissionInput input;
  input.object = pod;
  input.request_kind = "Pod";
  input.request_namespace = "ns";
  input.namespace_object = json{{"metadata", {{"name", "ns"}, {"annotations", {{"linkerd.io/inject", "enabled"}}}}}};
  input.trust_anchors_pem = "pem";
  input.injector_version = "test";
  return linkerd::admit(values, input);
}

RC_GTEST_PROP(InjectionLaws, LinkerdInjectionIsIdempotent, ()) {
  const auto values = linkerd::parseValues(json::object());
  RC_ASSERT(values.ok());
  const json pod = genPod();
  const auto first = admit(*values, pod);
  RC_ASSERT(first.decision == linkerd::Decision::kInject);
  const auto patch = core::decodePatch(first.patch.dump());
  RC_ASSERT(patch.ok());
  const auto injected = core::applyPatch(pod, *patch);
  RC_ASSERT(injected.ok());

  const auto second = admit(*values, *injected);
  RC_ASSERT(second.decision != linkerd::Decision::kInject);
  RC_ASSERT(second.report.has_value());
  const auto reasons = second.report->reasons();
  RC_ASSERT(std::find(reasons.begin(), reasons.end(), linkerd::Reason::kSidecarAlreadyExists) !=
            reasons.end());
  // Whatever the second answer is, it adds no proxy.
  if (second.patch.is_array()) {
    for (const auto& op : second.patch) {
      RC_ASSERT(op["path"].get<std::string>().find("Containers") == std::string::npos);
    }
  }
}

}  // namespace
}  // namespace harness::property
