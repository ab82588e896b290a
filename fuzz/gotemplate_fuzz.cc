// The Go-template engine (harness::gotemplate) as the Istio profile uses it: the input is a
// template, parsed with Sprig's and Istio's functions and executed on Istio-shaped injection
// data (SidecarTemplateData as JSON) with istioExecOptions(). Injection templates come from a
// user's istio-sidecar-injector ConfigMap, so the engine must turn any text into a parse or
// execution error. The step, output and range limits are lowered so that one input runs in
// milliseconds (exceeding them is an execution error, not a finding). Checked: no crash.

#include "fuzz_support.h"
#include "harness/gotemplate/funcs.h"
#include "harness/gotemplate/template.h"

namespace {

using namespace harness;
using nlohmann::json;

const json& injectionData() {
  static const json data = json::parse(R"({
    "TypeMeta": {"apiVersion": "v1", "kind": "Pod"},
    "DeploymentMeta": {"name": "web", "namespace": "default"},
    "ObjectMeta": {"name": "web-1", "namespace": "default", "labels": {"app": "web",
      "version": "v1"}, "annotations": {"sidecar.istio.io/proxyCPU": "200m",
      "traffic.sidecar.istio.io/excludeOutboundPorts": "9090"}},
    "Spec": {"containers": [{"name": "app", "image": "nginx:1.27", "ports": [
      {"containerPort": 80, "protocol": "TCP"}], "env": [{"name": "A", "value": "1"}]}],
      "serviceAccountName": "web"},
    "ProxyConfig": {"statusPort": 15020, "interceptionMode": "REDIRECT",
      "proxyMetadata": {"ISTIO_META_DNS_CAPTURE": "true"}, "concurrency": 2},
    "MeshConfig": {"trustDomain": "cluster.local", "defaultConfig": {"statusPort": 15020}},
    "Values": {"global": {"hub": "registry.istio.io/testing", "tag": "latest",
      "imagePullPolicy": "", "proxy": {"image": "proxyv2", "statusPort": 15020,
      "resources": {"requests": {"cpu": "100m", "memory": "128Mi"}},
      "includeIPRanges": "*", "excludeIPRanges": "", "lifecycle": {}},
      "imagePullSecrets": [], "sds": {"token": {"aud": "istio-ca"}}},
      "pilot": {"cni": {"enabled": false}}, "revision": ""},
    "Revision": "", "NativeSidecars": false,
    "ProxyImage": "registry.istio.io/testing/proxyv2:latest",
    "ProxyInitImage": "registry.istio.io/testing/proxyv2:latest",
    "ProxyUID": 1337, "ProxyGID": 1337, "InboundTrafficPolicyMode": "passthrough",
    "CompliancePolicy": ""})");
  return data;
}

gotemplate::ExecOptions fuzzOptions() {
  gotemplate::ExecOptions options = gotemplate::istioExecOptions();
  options.max_steps = 200000;
  options.max_output_bytes = 1u << 20;
  options.max_range_iterations = 10000;
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const gotemplate::FuncMap funcs =
      gotemplate::istioFuncMap({{"ISTIO_META_CLUSTER_ID", "Kubernetes"}});
  static const gotemplate::ExecOptions options = fuzzOptions();
  auto set = gotemplate::parse("inject", fuzz::asText(data, size), funcs);
  if (!set.ok()) return 0;
  for (const auto& name : set->names()) {
    (void)gotemplate::execute(*set, name, injectionData(), options);
  }
  return 0;
}
