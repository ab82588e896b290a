// Golden tests: each testdata/golden/<name>.case.json is one admission request (object,
// namespace, values, owners in the cache); the whole Outcome (decision, report, patch, events,
// logs, metric labels) is compared with <name>.expected.json.
//
// Refresh the expected files explicitly with HARNESS_UPDATE_GOLDEN=1; without it a missing or
// different expected file is a failure.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "fixtures.h"
#include "harness/core/json.h"
#include "harness/injector/linkerd/injector.h"
#include "harness/injector/linkerd/values.h"

namespace harness::injector::linkerd {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

fs::path goldenDir() { return testing::testdataDir() / "golden"; }

std::vector<std::string> caseNames() {
  std::vector<std::string> names;
  const std::string suffix = ".case.json";
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(goldenDir(), ec)) {
    const std::string file = entry.path().filename().string();
    if (file.size() > suffix.size() &&
        file.compare(file.size() - suffix.size(), suffix.size(), suffix) == 0) {
      names.push_back(file.substr(0, file.size() - suffix.size()));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool updating() {
  const char* v = std::getenv("HARNESS_UPDATE_GOLDEN");
  return v != nullptr && std::string(v) == "1";
}

// `cache`: as the webhook runs admit, without debug lines and with a patch cache.
Outcome run(const json& c, PatchCache* cache = nullptr) {
  const json raw_values =
      c.contains("values_file")
          ? testing::readJson(testing::testdataDir() / c["values_file"].get<std::string>())
          : c.value("values", json::object());
  auto values = parseValues(raw_values);
  EXPECT_TRUE(values.ok()) << values.error().message;
  AdmissionInput in;
  in.object = c.at("object");
  in.request_kind = c.at("request_kind").get<std::string>();
  in.request_namespace = c.value("request_namespace", "");
  if (c.contains("namespace") && !c["namespace"].is_null()) in.namespace_object = c["namespace"];
  in.trust_anchors_pem = c.contains("trust_anchors_pem") ? c["trust_anchors_pem"].get<std::string>()
                                                         : testing::trustAnchors();
  in.linkerd_namespace = c.value("linkerd_namespace", "linkerd");
  in.injector_version = c.value("injector_version", "edge-26.8.3");
  in.owner_lookup = testing::lookupOver(c.value("owners", json::array()).get<std::vector<json>>());
  if (cache != nullptr) {
    in.debug_logs = false;
    in.patch_cache = cache;
  }
  return admit(*values, in);
}

class Golden : public ::testing::TestWithParam<std::string> {};

TEST_P(Golden, OutcomeMatchesExpected) {
  const std::string name = GetParam();
  const json c = testing::readJson(goldenDir() / (name + ".case.json"));
  const json actual = run(c).toJson();
  const fs::path expected_path = goldenDir() / (name + ".expected.json");
  if (updating()) {
    harness::testing::writeFile(expected_path, actual.dump(2) + "\n");
    std::cerr << "[golden] wrote " << expected_path << "\n";
    return;
  }
  ASSERT_TRUE(fs::exists(expected_path))
      << expected_path << " is missing; run with HARNESS_UPDATE_GOLDEN=1 to create it";
  const json expected = testing::readJson(expected_path);
  EXPECT_EQ(actual, expected) << "differences (RFC 6902, expected -> actual):\n"
                              << json::diff(expected, actual).dump(2)
                              << "\nrefresh with HARNESS_UPDATE_GOLDEN=1 if the change is intended";
}

// The webhook's way (a patch cache, no debug lines): the case's outcome once the patch is built
// and kept, and again when it is taken from the cache, is the expected one with the patch as
// text and without the debug lines.
TEST_P(Golden, APatchCacheGivesTheExpectedOutcome) {
  const json c = testing::readJson(goldenDir() / (GetParam() + ".case.json"));
  json expected = run(c).toJson();
  auto& logs = expected["logs"];
  logs.erase(std::remove_if(logs.begin(), logs.end(),
                            [](const json& l) {
                              const std::string m = l["message"];
                              return l["level"] == "debug" && (m.rfind("injection patch: ", 0) == 0 ||
                                                               m.rfind("annotation patch: ", 0) == 0);
                            }),
             logs.end());
  PatchCache cache;
  for (int round = 0; round < 2; ++round) {
    Outcome o = run(c, &cache);
    if (o.patch_text) {
      EXPECT_EQ(o.decision, Decision::kInject);
      EXPECT_TRUE(o.patch.is_null());
      o.patch = json::parse(*o.patch_text);
      EXPECT_EQ(*o.patch_text, core::dumpJson(o.patch));
    }
    EXPECT_EQ(o.toJson(), expected) << "round " << round << ":\n"
                                    << json::diff(expected, o.toJson()).dump(2);
  }
  // Kept only when injected; the second round is then taken from the cache.
  const bool injected = expected["decision"] == "inject";
  EXPECT_EQ(cache.size(), injected ? 1u : 0u);
  EXPECT_EQ(cache.hits(), injected ? 1u : 0u);
}

// One cache for pods that differ: each gets its own patch, never another's.
TEST(GoldenCache, PodsThatDifferGetTheirOwnPatches) {
  const json c = testing::readJson(goldenDir() / "tutorial_simple_app_v1_pod.case.json");
  PatchCache cache;
  std::vector<std::string> patches;
  for (const auto& [key, value] : std::vector<std::pair<std::string, std::string>>{
           {"config.linkerd.io/proxy-cpu-limit", "1"},
           {"config.linkerd.io/proxy-cpu-limit", "2"},
           {"config.linkerd.io/proxy-log-level", "debug"},
           {"config.linkerd.io/proxy-cpu-limit", "1"}}) {
    json changed = c;
    changed["object"]["metadata"]["annotations"][key] = value;
    const Outcome plain = run(changed);
    const Outcome cached = run(changed, &cache);
    ASSERT_TRUE(cached.patch_text);
    EXPECT_EQ(*cached.patch_text, core::dumpJson(plain.patch)) << key << "=" << value;
    patches.push_back(*cached.patch_text);
  }
  EXPECT_NE(patches[0], patches[1]);
  EXPECT_NE(patches[0], patches[2]);
  EXPECT_EQ(patches[0], patches[3]);
  EXPECT_EQ(cache.misses(), 3u);
  EXPECT_EQ(cache.hits(), 1u);
}

TEST(GoldenFiles, EveryCaseHasAnExpectedFile) {
  const auto names = caseNames();
  EXPECT_GE(names.size(), 10u);
  if (updating()) return;
  for (const auto& name : names) {
    EXPECT_TRUE(fs::exists(goldenDir() / (name + ".expected.json"))) << name;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, Golden, ::testing::ValuesIn(caseNames()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

// The tutorial's Pod (seed 000): its patch is the golden reference for a default install.
TEST(Tutorial, SimpleAppPodIsInjectedFromTheNamespaceAnnotation) {
  const json c = testing::readJson(goldenDir() / "tutorial_simple_app_v1_pod.case.json");
  const Outcome o = run(c);
  ASSERT_EQ(o.decision, Decision::kInject);
  EXPECT_EQ(o.report->annotation_at, "namespace");
  EXPECT_EQ(o.owner_kind, "deployment");
  ASSERT_EQ(o.events.size(), 1u);
  EXPECT_EQ(o.events[0].involved_object["name"], "simple-app-v1");
  EXPECT_EQ(testing::opValue(o.patch, "/metadata/annotations/linkerd.io~1trust-root-sha256"),
            "7a76cb14464eba8dd428d81f2705121520ddce4f238eb0c5280462009d128da8");
  EXPECT_EQ(testing::opValue(o.patch, "/metadata/labels/linkerd.io~1proxy-deployment"),
            "simple-app-v1");
}

}  // namespace
}  // namespace harness::injector::linkerd
