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

Outcome run(const json& c) {
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
