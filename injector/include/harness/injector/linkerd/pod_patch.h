#pragma once

// The injection patch (charts/patch/templates/patch.json and the partials it includes), built
// as data: a JSON array of RFC 6902 "add" operations in the exact order of
// docs/linkerd-injector.md §2.1, and the opaque-ports annotation patch of §1.4
// (pkg/inject/annotation_patch.go).

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/injector/linkerd/log.h"
#include "harness/injector/linkerd/values.h"
#include "harness/injector/linkerd/workload.h"

namespace harness::injector::linkerd {

struct PodPatchInput {
  const Workload* workload = nullptr;
  // GetOverriddenValues applied to the effective annotation set.
  const Values* values = nullptr;
  // The webhook-collected annotations written onto the pod: created-by, namespace-inherited keys
  // and the defaulted opaque-ports (proxy-version and trust-root-sha256 are added here).
  StringMap annotations;
  // control-plane-ns, workload-ns and the owner-derived proxy-<kind> label.
  StringMap labels;
  // The effective annotation set (pod annotations overlaid by `annotations`): decides the debug
  // sidecar and feeds the tracing attributes.
  StringMap effective_annotations;
  std::string linkerd_namespace = "linkerd";
  std::string trust_anchors_pem;  // the bundle file's bytes
};

// GetPodPatch(injectProxy=true). Errors are the ones the real webhook returns for this step:
// an invalid clusterNetworks CIDR ("cannot parse destination get networks: invalid CIDR
// address: x") and the chart's `fail`/`required` messages (iptablesMode, closeWaitTimeoutSecs
// without runAsRoot, logHTTPHeaders, missing trust anchors, tracing without a collector).
// Helm wraps those in "template: ..." context that is not reproduced.
core::Result<nlohmann::json> buildPodPatch(const PodPatchInput& input, std::vector<LogLine>* logs);

// The opaque-ports annotation patch on the admitted object's own /metadata/annotations.
// The value is HTML-escaped like upstream's html/template rendering (& < > " ' + and NUL).
nlohmann::json buildOpaquePortsPatch(bool add_root_annotations, std::string_view ports);

// RFC 6901-ish escaping as upstream does it: '/' becomes "~1"; '~' is left alone.
std::string escapePatchKey(std::string_view key);

// metadata that reflect.DeepEqual's &ObjectMeta{Annotations: {}} after decoding: nothing set
// except an empty or null annotations map (empty labels/lists count as set, as in Go).
bool isEmptyObjectMeta(const nlohmann::json& metadata);

// Go's net.ParseCIDR acceptance (IPv4 dotted quad without leading zeros, IPv6 without zone,
// decimal prefix length within the address size).
bool isValidCidr(std::string_view cidr);

}  // namespace harness::injector::linkerd
