#pragma once

// The two injector profiles as the properties call them: each layout they support (Linkerd:
// native or classic sidecar, with or without the CNI plugin; Istio: native or classic sidecar,
// istio-init or the CNI's istio-validation), and what the laws check of an injected pod.

#include <filesystem>
#include <memory>
#include <string>

#include <rapidcheck.h>

#include <nlohmann/json.hpp>

#include "harness/core/json_patch.h"
#include "harness/core/object.h"
#include "harness/core/yaml.h"
#include "harness/injector/istio/injector.h"
#include "harness/injector/linkerd/injector.h"
#include "harness/property/workloads.h"
#include "harness/sim/idempotence_check.h"
#include "harness/testing/support.h"

namespace harness::property {

namespace linkerd = harness::injector::linkerd;
namespace istio = harness::injector::istio;

struct LinkerdLayout {
  bool native_sidecar = true;
  bool cni = false;
};

inline std::ostream& operator<<(std::ostream& os, const LinkerdLayout& l) {
  return os << "linkerd(native=" << l.native_sidecar << ", cni=" << l.cni << ")";
}

inline nlohmann::json linkerdValuesJson(const LinkerdLayout& layout) {
  return {{"cniEnabled", layout.cni}, {"proxy", {{"nativeSidecar", layout.native_sidecar}}}};
}

inline const linkerd::Values& linkerdValues(const LinkerdLayout& layout) {
  static std::map<std::pair<bool, bool>, linkerd::Values> cache;
  const auto key = std::make_pair(layout.native_sidecar, layout.cni);
  auto it = cache.find(key);
  if (it == cache.end()) {
    auto values = linkerd::parseValues(linkerdValuesJson(layout));
    if (!values) throw std::runtime_error(values.error().message);
    it = cache.emplace(key, std::move(*values)).first;
  }
  return it->second;
}

inline rc::Gen<LinkerdLayout> genLinkerdLayout() {
  return rc::gen::construct<LinkerdLayout>(rc::gen::arbitrary<bool>(), rc::gen::arbitrary<bool>());
}

inline constexpr char kTrustAnchors[] = "-----BEGIN CERTIFICATE-----\nplaceholder\n-----END CERTIFICATE-----\n";

inline linkerd::Outcome linkerdAdmit(const LinkerdLayout& layout, const nlohmann::json& object,
                                     const nlohmann::json& namespace_object) {
  linkerd::AdmissionInput input;
  input.object = object;
  input.request_kind = object.value("kind", "");
  input.request_namespace = object["metadata"].value("namespace", "");
  input.namespace_object = namespace_object;
  input.trust_anchors_pem = kTrustAnchors;
  input.injector_version = "property";
  input.debug_logs = false;
  return linkerd::admit(linkerdValues(layout), input);
}

struct IstioLayout {
  bool native_sidecars = true;
  bool cni = false;
};

inline std::ostream& operator<<(std::ostream& os, const IstioLayout& l) {
  return os << "istio(native=" << l.native_sidecars << ", cni=" << l.cni << ")";
}

inline rc::Gen<IstioLayout> genIstioLayout() {
  return rc::gen::construct<IstioLayout>(rc::gen::arbitrary<bool>(), rc::gen::arbitrary<bool>());
}

inline std::filesystem::path istioDataDir() {
  return testing::sourceDir() / "injector" / "istio";
}

// values.json with pilot.cni.enabled set as the layout says.
inline std::string istioValuesText(bool cni) {
  auto values = nlohmann::json::parse(testing::readFile(istioDataDir() / "values.json"));
  values["pilot"]["cni"]["enabled"] = cni;
  return values.dump(2);
}

inline const istio::InjectorSettings& istioSettings(bool cni) {
  static std::map<bool, istio::InjectorSettings> cache;
  auto it = cache.find(cni);
  if (it == cache.end()) {
    auto settings = istio::loadSettings(
        testing::readFile(istioDataDir() / "sidecar-injector-config.yaml"), istioValuesText(cni),
        testing::readFile(istioDataDir() / "mesh.yaml"));
    if (!settings) throw std::runtime_error(settings.error().message);
    it = cache.emplace(cni, std::move(*settings)).first;
  }
  return it->second;
}

inline istio::Outcome istioAdmit(const IstioLayout& layout, const nlohmann::json& pod) {
  istio::AdmissionInput input;
  input.pod = pod;
  input.request_namespace = pod["metadata"].value("namespace", "");
  input.native_sidecars = layout.native_sidecars;
  return istio::admit(istioSettings(layout.cni), input);
}

// Applies a JSON Patch (an array of operations, possibly empty or null) as kube-apiserver applies
// a webhook's: the result defaulted and Go-encoded again (sim::asSent), as the next webhook sees
// it.
inline core::Result<nlohmann::json> applyOps(const nlohmann::json& object,
                                             const nlohmann::json& ops) {
  if (!ops.is_array() || ops.empty()) return object;
  auto decoded = core::decodePatch(ops.dump());
  if (!decoded) return decoded.error();
  auto applied = core::applyPatch(object, *decoded);
  if (!applied) return applied.error();
  return sim::asSent(std::move(*applied));
}

// A generated case as kube-apiserver sends it to webhooks.
inline AdmissionCase asSent(AdmissionCase c) {
  c.object = sim::asSent(std::move(c.object));
  return c;
}

}  // namespace harness::property
