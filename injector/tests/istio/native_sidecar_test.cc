// ENABLE_NATIVE_SIDECARS and DetectNativeSidecar (pkg/kube/inject/webhook.go; its
// TestDetectNativeSidecar cases), pure.

#include "harness/injector/istio/native_sidecar.h"

#include <gtest/gtest.h>

namespace harness::injector::istio {
namespace {

using nlohmann::json;

json node(const std::string& name, const std::string& kubelet) {
  return {{"kind", "Node"},
          {"metadata", {{"name", name}}},
          {"status", {{"nodeInfo", {{"kubeletVersion", kubelet}}}}}};
}

TEST(NativeSidecar, ModeIsExactlyTrueFalseOrAuto) {
  std::vector<LogLine> logs;
  EXPECT_EQ(parseNativeSidecarMode("true", &logs), NativeSidecarMode::kEnabled);
  EXPECT_EQ(parseNativeSidecarMode("false", &logs), NativeSidecarMode::kDisabled);
  EXPECT_EQ(parseNativeSidecarMode("auto", &logs), NativeSidecarMode::kAuto);
  EXPECT_TRUE(logs.empty());
  EXPECT_EQ(parseNativeSidecarMode("TRUE", &logs), NativeSidecarMode::kDisabled);
  ASSERT_EQ(logs.size(), 1u);
  EXPECT_EQ(logs[0].message, "Unknown value for ENABLE_NATIVE_SIDECARS: TRUE, defaulting to false");
}

TEST(NativeSidecar, ConfigurationModeFromPilotEnvElseTheReleaseDefault) {
  InjectorSettings s;
  EXPECT_EQ(nativeSidecarModeOf(s, nullptr), NativeSidecarMode::kAuto);  // unknown release
  s.version = IstioVersion::parse("1.26.4");
  EXPECT_EQ(nativeSidecarModeOf(s, nullptr), NativeSidecarMode::kDisabled);
  s.version = IstioVersion::parse("1.27.0");
  EXPECT_EQ(nativeSidecarModeOf(s, nullptr), NativeSidecarMode::kAuto);
  s.values.map = {{"pilot", {{"env", {{"ENABLE_NATIVE_SIDECARS", "false"}}}}}};
  EXPECT_EQ(nativeSidecarModeOf(s, nullptr), NativeSidecarMode::kDisabled);
  s.values.map["pilot"]["env"]["ENABLE_NATIVE_SIDECARS"] = true;
  EXPECT_EQ(nativeSidecarModeOf(s, nullptr), NativeSidecarMode::kEnabled);
}

TEST(NativeSidecar, KubeletMinorAsGoVersionReadsIt) {
  EXPECT_EQ(kubeletMinor("v1.33.1"), 33);
  EXPECT_EQ(kubeletMinor("v1.34.0-eks-4096722"), 34);
  EXPECT_EQ(kubeletMinor("v1.33.3+k3s1"), 33);
  EXPECT_EQ(kubeletMinor("1.29"), 29);
  EXPECT_EQ(kubeletMinor("1"), 0);
  for (const char* bad : {"", "v", "abc", "v1.33.", "1.33-", "1.33 "}) {
    EXPECT_EQ(kubeletMinor(bad), std::nullopt) << bad;
  }
}

TEST(NativeSidecar, AutoNeedsEveryNodeAt133) {
  const auto kAuto = NativeSidecarMode::kAuto;
  std::vector<LogLine> logs;
  EXPECT_TRUE(detectNativeSidecar(kAuto, std::vector<json>{node("a", "v1.33.0"), node("b", "v1.34.1")},
                                  nullptr, &logs));
  EXPECT_FALSE(detectNativeSidecar(kAuto, std::vector<json>{node("a", "v1.33.0"), node("b", "v1.32.9")},
                                   nullptr, &logs));
  EXPECT_EQ(logs.back().message,
            "detected kubelet version 1.32 < 1.33 on node b; native sidecars disabled");
  // A node without a readable version disables it; a truly empty list enables it; no client
  // at all disables it.
  EXPECT_FALSE(detectNativeSidecar(kAuto, std::vector<json>{node("a", "")}, nullptr, &logs));
  EXPECT_TRUE(detectNativeSidecar(kAuto, std::vector<json>{}, nullptr, &logs));
  EXPECT_FALSE(detectNativeSidecar(kAuto, std::nullopt, nullptr, &logs));
  EXPECT_EQ(logs.back().message,
            "configured to auto detect native sidecar support, but couldn't find a client");
  // The pod's own node decides alone.
  const json old = node("old", "v1.30.0");
  EXPECT_FALSE(detectNativeSidecar(kAuto, std::vector<json>{node("a", "v1.34.0")}, &old, &logs));
  const json fresh = node("new", "v1.35.0");
  EXPECT_TRUE(detectNativeSidecar(kAuto, std::vector<json>{old}, &fresh, &logs));
  // The explicit modes ignore the nodes.
  EXPECT_TRUE(detectNativeSidecar(NativeSidecarMode::kEnabled, std::nullopt, &old, &logs));
  EXPECT_FALSE(detectNativeSidecar(NativeSidecarMode::kDisabled, std::vector<json>{}, nullptr, &logs));
}

}  // namespace
}  // namespace harness::injector::istio
