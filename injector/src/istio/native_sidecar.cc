#include "harness/injector/istio/native_sidecar.h"

#include <cctype>
#include <string>

// Followed: istio/istio pilot/pkg/features/pilot.go (EnableNativeSidecars),
// pkg/kube/inject/webhook.go (DetectNativeSidecar), hashicorp/go-version version.go
// (NewVersion, Segments) for kubelet versions.

namespace harness::injector::istio {

namespace {

using nlohmann::json;

std::string kubeletVersionOf(const json& node) {
  const json* v = &node;
  for (const char* key : {"status", "nodeInfo", "kubeletVersion"}) {
    if (!v->is_object()) return {};
    const auto it = v->find(key);
    if (it == v->end()) return {};
    v = &*it;
  }
  return v->is_string() ? v->get<std::string>() : std::string();
}

std::string nameOf(const json& node) {
  if (!node.is_object() || !node.contains("metadata") || !node["metadata"].is_object()) return {};
  const json& n = node["metadata"].value("name", json());
  return n.is_string() ? n.get<std::string>() : std::string();
}

bool isVersionChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '~' || c == '.';
}

}  // namespace

NativeSidecarMode parseNativeSidecarMode(std::string_view value, std::vector<LogLine>* logs) {
  if (value == "true") return NativeSidecarMode::kEnabled;
  if (value == "false") return NativeSidecarMode::kDisabled;
  if (value == "auto") return NativeSidecarMode::kAuto;
  if (logs != nullptr) {
    logs->push_back({LogLine::Level::kWarning, "Unknown value for ENABLE_NATIVE_SIDECARS: " +
                                                   std::string(value) + ", defaulting to false"});
  }
  return NativeSidecarMode::kDisabled;
}

NativeSidecarMode nativeSidecarModeOf(const InjectorSettings& settings,
                                      std::vector<LogLine>* logs) {
  const json& values = settings.values.map;
  const json* env = &values;
  for (const char* key : {"pilot", "env", "ENABLE_NATIVE_SIDECARS"}) {
    const auto it = env->is_object() ? env->find(key) : env->end();
    env = env->is_object() && it != env->end() ? &*it : nullptr;
    if (env == nullptr) break;
  }
  if (env != nullptr && env->is_string()) return parseNativeSidecarMode(env->get<std::string>(), logs);
  if (env != nullptr && env->is_boolean()) {
    return env->get<bool>() ? NativeSidecarMode::kEnabled : NativeSidecarMode::kDisabled;
  }
  return settings.version.atLeast(1, 27) ? NativeSidecarMode::kAuto : NativeSidecarMode::kDisabled;
}

std::optional<int> kubeletMinor(std::string_view v) {
  // ^v?([0-9]+(\.[0-9]+)*)(-prerelease)?(\+metadata)?$, segments padded with zeros.
  if (v.starts_with("v")) v.remove_prefix(1);
  std::vector<int> segments;
  std::size_t i = 0;
  while (true) {
    const std::size_t start = i;
    long n = 0;
    while (i < v.size() && std::isdigit(static_cast<unsigned char>(v[i])) != 0) {
      if (n < 1000000) n = n * 10 + (v[i] - '0');
      ++i;
    }
    if (i == start) return std::nullopt;
    segments.push_back(static_cast<int>(n));
    if (i < v.size() && v[i] == '.' && i + 1 < v.size() &&
        std::isdigit(static_cast<unsigned char>(v[i + 1])) != 0) {
      ++i;
      continue;
    }
    break;
  }
  if (i < v.size()) {
    if (v[i] != '-' && v[i] != '+') return std::nullopt;
    for (std::size_t j = i + 1; j < v.size(); ++j) {
      if (!isVersionChar(v[j]) && v[j] != '+') return std::nullopt;
    }
    if (i + 1 == v.size()) return std::nullopt;
  }
  return segments.size() > 1 ? segments[1] : 0;
}

bool detectNativeSidecar(NativeSidecarMode mode,
                         const std::optional<std::vector<json>>& nodes, const json* pod_node,
                         std::vector<LogLine>* logs) {
  if (mode == NativeSidecarMode::kDisabled) return false;
  if (mode == NativeSidecarMode::kEnabled) return true;
  auto log = [&](LogLine::Level level, std::string message) {
    if (logs != nullptr) logs->push_back({level, std::move(message)});
  };
  if (!nodes) {
    log(LogLine::Level::kWarning,
        "configured to auto detect native sidecar support, but couldn't find a client");
    return false;
  }
  // Native sidecars are stable since Kubernetes 1.33.
  constexpr int kMinMinor = 33;
  auto check = [&](const json& node) {
    const std::string version = kubeletVersionOf(node);
    const auto minor = kubeletMinor(version);
    if (!minor) {
      log(LogLine::Level::kWarning, "could not read node version for " + nameOf(node) + " " +
                                        version + ": Malformed version: " + version);
      return false;
    }
    if (*minor < kMinMinor) {
      log(LogLine::Level::kDebug, "detected kubelet version 1." + std::to_string(*minor) +
                                      " < 1." + std::to_string(kMinMinor) + " on node " +
                                      nameOf(node) + "; native sidecars disabled");
      return false;
    }
    return true;
  };
  if (pod_node != nullptr) return check(*pod_node);
  for (const json& node : *nodes) {
    if (!check(node)) return false;
  }
  return true;
}

}  // namespace harness::injector::istio
