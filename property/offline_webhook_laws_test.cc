// The offline command (`injector inject`) and the webhook (the HTTPS handler, in process) agree on
// every generated input, for both profiles in every layout: the same decision (inject, leave, or
// deny) and the same resulting object.

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <sstream>

#include "harness/core/admission_review.h"
#include "harness/go/base64.h"
#include "inject_command.h"
#include "injectors.h"
#include "istio_webhook.h"
#include "linkerd_webhook.h"

namespace harness::property {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Files both paths read, written once under the build tree.
fs::path scratch() {
  static const fs::path dir = [] {
    fs::path d = testing::binaryDir() / "property" / "offline-webhook";
    fs::create_directories(d);
    testing::writeFile(d / "trust-anchors.pem", kTrustAnchors);
    for (bool native : {false, true}) {
      for (bool cni : {false, true}) {
        testing::writeFile(d / ("linkerd-values-" + std::to_string(native) + std::to_string(cni) +
                                ".yaml"),
                           core::toYaml(linkerdValuesJson({native, cni})));
      }
    }
    testing::writeFile(d / "istio-values-0.json", istioValuesText(false));
    testing::writeFile(d / "istio-values-1.json", istioValuesText(true));
    return d;
  }();
  return dir;
}

fs::path linkerdValuesFile(const LinkerdLayout& l) {
  return scratch() / ("linkerd-values-" + std::to_string(l.native_sidecar) +
                      std::to_string(l.cni) + ".yaml");
}

// What a path decided: nullopt = denied, else the resulting object.
using Verdict = std::optional<json>;

Verdict offline(injector::InjectOptions options, const json& ns, const json& object) {
  std::istringstream in(core::toYamlDocuments({ns, object}));
  std::ostringstream out, err;
  options.output = "json";
  options.version = "property";
  const int code = injector::runInject(options, in, out, err);
  RC_LOG() << "offline exit " << code << ": " << err.str() << "\n";
  RC_ASSERT(code != 2);
  if (code == 1) return std::nullopt;
  const json list = json::parse(out.str());
  return list["items"].back();
}

json reviewOf(const json& object) {
  core::AdmissionRequest request;
  request.uid = "property";
  request.kind = *core::groupVersionKindOf(object);
  request.resource = core::findResourceForKind(request.kind)->resource;
  request.namespace_name = object["metadata"].value("namespace", "");
  request.name = object["metadata"].value("name", "");
  request.operation = "CREATE";
  request.object = object;
  return core::toJson(core::makeRequestReview(core::ReviewVersion::kV1, request));
}

template <typename Webhook>
Verdict webhook(Webhook& hook, const json& object) {
  net::Request request;
  request.method = "POST";
  request.path = "/inject";
  request.headers.set("Content-Type", "application/json");
  request.body = reviewOf(object).dump();
  const net::Response response = hook.handle(request);
  RC_LOG() << "webhook: " << response.status << " " << response.body.substr(0, 2000) << "\n";
  RC_ASSERT(response.status == 200);
  const json answer = json::parse(response.body)["response"];
  if (!answer.value("allowed", false)) return std::nullopt;
  if (!answer.contains("patch")) return object;
  const auto patch = go::base64Decode(answer["patch"].get<std::string>());
  RC_ASSERT(patch.ok());
  // Applied as it is (not defaulted again): the offline path does not default either.
  const auto decoded = core::decodePatch(*patch);
  RC_ASSERT(decoded.ok());
  const auto applied = core::applyPatch(object, *decoded);
  RC_ASSERT(applied.ok());
  return *applied;
}

json withoutNullCreationTimestamp(json object) {
  auto it = object.find("metadata");
  if (it != object.end() && it->is_object()) {
    auto ts = it->find("creationTimestamp");
    if (ts != it->end() && ts->is_null()) it->erase(ts);
  }
  return object;
}

RC_GTEST_PROP(OfflineWebhookLaws, LinkerdOfflineInjectAgreesWithTheWebhook, ()) {
  const auto layout = *genLinkerdLayout();
  const auto c = *genAdmissionCase();
  RC_LOG() << layout << "\n";
  injector::InjectOptions options;
  options.values_file = linkerdValuesFile(layout);
  options.trust_anchors_file = scratch() / "trust-anchors.pem";
  const Verdict off = offline(options, c.namespace_object, c.object);

  injector::LocalKubeApi kube;
  kube.add(c.namespace_object);
  injector::EventSink events(kube);
  core::MetricsRegistry metrics;
  injector::LinkerdWebhook hook({options.values_file, options.trust_anchors_file, "linkerd",
                                 "property"},
                                kube, events, metrics);
  const Verdict on = webhook(hook, c.object);
  RC_TAG(!on ? "denied" : *on == c.object ? "unchanged" : "injected");
  RC_ASSERT(off.has_value() == on.has_value());
  if (off) {
    RC_LOG() << "difference (offline -> webhook): "
             << core::encodePatch(core::createPatch(*off, *on)).dump() << "\n";
    RC_ASSERT(*off == *on);
  }
}

RC_GTEST_PROP(OfflineWebhookLaws, IstioOfflineInjectAgreesWithTheWebhook, ()) {
  const auto layout = *genIstioLayout();
  // Istio's patch is computed against the pod as Go encodes it (webhook.go createPatch), so it
  // applies to what kube-apiserver sends: the defaulted, Go-encoded pod; both paths get that.
  const auto c = asSent(*genAdmissionCase({"Pod"}));
  RC_LOG() << layout << "\n";
  injector::IstioWebhookConfig config{istioDataDir() / "sidecar-injector-config.yaml",
                                      scratch() / ("istio-values-" +
                                                   std::to_string(layout.cni) + ".json"),
                                      istioDataDir() / "mesh.yaml"};
  injector::InjectOptions options;
  options.profile = "istio";
  options.istio = config;
  options.istio.native_sidecars = layout.native_sidecars;
  const Verdict off = offline(options, c.namespace_object, c.object);

  core::MetricsRegistry metrics;
  config.native_sidecars_mode = layout.native_sidecars ? "true" : "false";
  injector::IstioWebhook hook(config, metrics);
  const Verdict on = webhook(hook, c.object);
  RC_TAG(!on ? "denied" : *on == c.object ? "unchanged" : "injected");
  RC_ASSERT(off.has_value() == on.has_value());
  if (off) {
    // A null creationTimestamp (Go's zero metav1.Time, as the apiserver's encoding writes it) is
    // the same as none: the offline path drops it, as its Go round trip of the pod does.
    const json a = withoutNullCreationTimestamp(*off);
    const json b = withoutNullCreationTimestamp(*on);
    RC_LOG() << "difference (offline -> webhook): "
             << core::encodePatch(core::createPatch(a, b)).dump() << "\n";
    RC_ASSERT(a == b);
  }
}

}  // namespace
}  // namespace harness::property
