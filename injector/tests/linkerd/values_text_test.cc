// The linkerd-config values read from a file's text: the values YAML, or the dumped ConfigMap.

#include "harness/injector/linkerd/values_text.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace harness::injector::linkerd {
namespace {

using ::testing::HasSubstr;

TEST(ValuesText, TheValuesYamlOntoTheChartDefaults) {
  auto v = parseValuesText("proxy:\n  ports:\n    admin: 5191\n", "values.yaml");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->proxy.ports.admin, 5191);
  EXPECT_EQ(v->proxy.ports.control, 4190);  // the chart's default
}

TEST(ValuesText, TheDumpedConfigMapsDataValues) {
  auto v = parseValuesText(
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: linkerd-config}\n"
      "data:\n  values: |\n    proxy:\n      ports:\n        admin: 6191\n",
      "cm.yaml");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->proxy.ports.admin, 6191);
}

TEST(ValuesText, AnEmptyDocumentIsTheChartDefaults) {
  auto v = parseValuesText("", "empty.yaml");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(v->proxy.ports.admin, 4191);
}

TEST(ValuesText, ErrorsNameTheFileAndTheField) {
  auto no_values = parseValuesText("kind: ConfigMap\ndata: {other: x}\n", "cm.yaml");
  ASSERT_FALSE(no_values.ok());
  EXPECT_EQ(no_values.error().message,
            "cm.yaml: data.values: the linkerd-config ConfigMap has no values");
  auto bad_inner = parseValuesText("kind: ConfigMap\ndata:\n  values: \"a: [\"\n", "cm.yaml");
  ASSERT_FALSE(bad_inner.ok());
  EXPECT_THAT(bad_inner.error().message, HasSubstr("cm.yaml: data.values"));
  auto wrong_type = parseValuesText("proxy: {ports: {admin: x}}\n", "values.yaml");
  ASSERT_FALSE(wrong_type.ok());
  EXPECT_THAT(wrong_type.error().message, HasSubstr("values.yaml"));
  EXPECT_THAT(wrong_type.error().message, HasSubstr("Ports.proxy.ports.admin of type int32"));
}

}  // namespace
}  // namespace harness::injector::linkerd
