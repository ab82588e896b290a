// coerceYamlScalars: how `linkerd inject` reads unquoted YAML numbers and booleans in string
// fields (sigs.k8s.io/yaml convertToJSONableObject into the typed object).

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "harness/injector/linkerd/workload.h"

namespace harness::injector::linkerd {
namespace {

using nlohmann::json;

json deploymentWithTemplateAnnotations(const json& annotations) {
  return {{"apiVersion", "apps/v1"},
          {"kind", "Deployment"},
          {"metadata", {{"name", "web"}, {"labels", {{"version", 2}}}}},
          {"spec",
           {{"template",
             {{"metadata", {{"annotations", annotations}}},
              {"spec", {{"containers", json::array({{{"name", "web"}, {"image", "x"}}})}}}}}}}};
}

TEST(CoerceYamlScalars, NumbersAndBooleansInAnnotationsBecomeGoStrings) {
  json d = deploymentWithTemplateAnnotations({{"config.linkerd.io/skip-outbound-ports", 4222},
                                              {"config.linkerd.io/enable-external-profiles", true},
                                              {"off", false},
                                              {"negative", -7},
                                              {"big", 18446744073709551615ULL},
                                              {"text", "kept"},
                                              {"empty", nullptr}});
  coerceYamlScalars(d);
  const json& a = d["spec"]["template"]["metadata"]["annotations"];
  EXPECT_EQ(a["config.linkerd.io/skip-outbound-ports"], "4222");
  EXPECT_EQ(a["config.linkerd.io/enable-external-profiles"], "true");
  EXPECT_EQ(a["off"], "false");
  EXPECT_EQ(a["negative"], "-7");
  EXPECT_EQ(a["big"], "18446744073709551615");
  EXPECT_EQ(a["text"], "kept");
  EXPECT_TRUE(a["empty"].is_null());  // Go decodes null into a map[string]string as ""
  EXPECT_EQ(d["metadata"]["labels"]["version"], "2");
  // The decoder then accepts it, as linkerd inject does.
  auto w = parseWorkload(d, "Deployment");
  ASSERT_TRUE(w.ok()) << w.error().message;
  EXPECT_EQ(w->pod_annotations.at("config.linkerd.io/skip-outbound-ports"), "4222");
}

// strconv.FormatFloat(v, 'g', -1, 32): float32 precision, %e below 1e-4 and from 1e6 on.
TEST(CoerceYamlScalars, FloatsAreFormattedAsGoFormatsAFloat32) {
  const std::pair<double, const char*> cases[] = {
      {0.5, "0.5"},           {1.10, "1.1"},         {2.0, "2"},
      {-2.5, "-2.5"},         {100000.0, "100000"},  {1e6, "1e+06"},
      {0.0001, "0.0001"},     {0.00001, "1e-05"},    {123456789.0, "1.2345679e+08"},
      {0.1, "0.1"},           {3.14159265358979, "3.1415927"}, {0.0, "0"},
      {1.5e-10, "1.5e-10"},   {12345.678, "12345.678"},
  };
  for (const auto& [value, want] : cases) {
    json p = {{"kind", "Pod"}, {"metadata", {{"annotations", {{"a", value}}}}}};
    coerceYamlScalars(p);
    EXPECT_EQ(p["metadata"]["annotations"]["a"], want) << value;
  }
}

TEST(CoerceYamlScalars, CronJobTemplatesAndOtherFieldsAreLeftAlone) {
  json c = {{"apiVersion", "batch/v1"},
            {"kind", "CronJob"},
            {"metadata", {{"name", 42}}},
            {"spec",
             {{"schedule", 5},
              {"jobTemplate",
               {{"spec",
                 {{"template", {{"metadata", {{"labels", {{"tier", 1}}}}}}}}}}}}}};
  coerceYamlScalars(c);
  EXPECT_EQ(c["metadata"]["name"], "42");
  EXPECT_EQ(c["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["labels"]["tier"], "1");
  EXPECT_EQ(c["spec"]["schedule"], 5);  // not a field this decoder reads
  json odd = {{"kind", "Pod"}, {"metadata", "not an object"}};
  coerceYamlScalars(odd);  // a wrong type is left to the decoder's error
  EXPECT_EQ(odd["metadata"], "not an object");
}

}  // namespace
}  // namespace harness::injector::linkerd
