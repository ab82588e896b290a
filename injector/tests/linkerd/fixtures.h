#pragma once

// Shared helpers for the Linkerd injector tests: test data paths and small object builders.

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/injector/linkerd/injector.h"
#include "harness/testing/support.h"

namespace harness::injector::linkerd::testing {

inline std::filesystem::path testdataDir() {
  return harness::testing::sourceDir() / "injector" / "tests" / "linkerd" / "testdata";
}

inline std::string trustAnchors() {
  return harness::testing::readFile(testdataDir() / "trust-anchors.pem");
}

inline nlohmann::json readJson(const std::filesystem::path& path) {
  return nlohmann::json::parse(harness::testing::readFile(path));
}

inline nlohmann::json namespaceWith(const std::map<std::string, std::string>& annotations,
                                    const std::string& name = "emojivoto") {
  nlohmann::json ns = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
  if (!annotations.empty()) ns["metadata"]["annotations"] = annotations;
  return ns;
}

// A Pod with one container "web" exposing `ports`, in namespace emojivoto.
inline nlohmann::json pod(const std::map<std::string, std::string>& annotations = {},
                          const std::vector<int>& ports = {8080}) {
  nlohmann::json container = {{"name", "web"}, {"image", "buoyantio/emojivoto-web:v11"}};
  for (int p : ports) container["ports"].push_back({{"containerPort", p}, {"protocol", "TCP"}});
  nlohmann::json p = {{"apiVersion", "v1"},
                      {"kind", "Pod"},
                      {"metadata", {{"name", "web-1"}, {"namespace", "emojivoto"}}},
                      {"spec", {{"containers", {container}}}}};
  if (!annotations.empty()) p["metadata"]["annotations"] = annotations;
  return p;
}

// A lookup over a fixed set of objects, keyed by kind/namespace/name.
inline OwnerLookup lookupOver(std::vector<nlohmann::json> objects) {
  return [objects = std::move(objects)](std::string_view kind, std::string_view ns,
                                        std::string_view name)
             -> std::shared_ptr<const nlohmann::json> {
    for (const auto& o : objects) {
      if (o.value("kind", "") == kind && o["metadata"].value("namespace", "") == ns &&
          o["metadata"].value("name", "") == name) {
        return std::make_shared<const nlohmann::json>(o);
      }
    }
    return nullptr;
  };
}

inline AdmissionInput podRequest(nlohmann::json object, nlohmann::json ns) {
  AdmissionInput in;
  in.object = std::move(object);
  in.request_kind = "Pod";
  in.request_namespace = ns["metadata"].value("name", "");
  in.namespace_object = std::move(ns);
  in.trust_anchors_pem = trustAnchors();
  in.injector_version = "edge-26.8.3";
  return in;
}

// The op paths of a patch, in order.
inline std::vector<std::string> paths(const nlohmann::json& patch) {
  std::vector<std::string> out;
  for (const auto& op : patch) out.push_back(op.value("path", ""));
  return out;
}

// The value of the op with `path` (the first one), or null.
inline nlohmann::json opValue(const nlohmann::json& patch, const std::string& path) {
  for (const auto& op : patch) {
    if (op.value("path", "") == path) return op["value"];
  }
  return nullptr;
}

// The proxy container of a patch (the op whose value is named linkerd-proxy).
inline nlohmann::json proxyOf(const nlohmann::json& patch) {
  for (const auto& op : patch) {
    if (op["value"].is_object() && op["value"].value("name", "") == "linkerd-proxy") {
      return op["value"];
    }
  }
  return nullptr;
}

inline nlohmann::json initOf(const nlohmann::json& patch) {
  for (const auto& op : patch) {
    if (op["value"].is_object() && op["value"].value("name", "") == "linkerd-init") {
      return op["value"];
    }
  }
  return nullptr;
}

// The value of env var `name` in a container, or nullopt.
inline std::optional<std::string> envOf(const nlohmann::json& container, const std::string& name) {
  if (!container.is_object() || !container.contains("env")) return std::nullopt;
  for (const auto& e : container["env"]) {
    if (e.value("name", "") == name) return e.value("value", "");
  }
  return std::nullopt;
}

}  // namespace harness::injector::linkerd::testing
