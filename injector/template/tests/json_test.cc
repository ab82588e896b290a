// Go's encoding/json bytes (golang/go src/encoding/json/encode.go, indent.go, decode.go).

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "harness/gotemplate/go_json.h"

namespace harness::gotemplate {
namespace {

using nlohmann::json;

std::string marshal(const json& v, GoJsonOptions options = {}) {
  auto r = goJsonMarshal(v, options);
  return r.ok() ? *r : "ERR: " + r.error().message;
}

TEST(GoJson, MapKeysAreSorted) {
  EXPECT_EQ(marshal(json{{"b", 1}, {"a", json::array({true, nullptr})}}), R"({"a":[true,null],"b":1})");
}

TEST(GoJson, FloatsUseGosFormat) {
  EXPECT_EQ(marshal(json::array({1.5, 100.0, 1e21, 1e20, 1e-7, 0.000001, -0.0, 123456789.0})),
            "[1.5,100,1e+21,100000000000000000000,1e-7,0.000001,-0,123456789]");
}

TEST(GoJson, NaNIsAnUnsupportedValue) {
  EXPECT_EQ(marshal(json(std::numeric_limits<double>::quiet_NaN())),
            "ERR: json: unsupported value: NaN");
}

TEST(GoJson, HtmlCharactersAreEscapedByDefault) {
  EXPECT_EQ(marshal(json("<a&b>")), R"("\u003ca\u0026b\u003e")");
  EXPECT_EQ(marshal(json("<a&b>"), GoJsonOptions{false, ""}), R"("<a&b>")");
}

TEST(GoJson, ControlCharactersAndLineSeparators) {
  EXPECT_EQ(marshal(json("\n\t\r\b\f\x01\"\\\xE2\x80\xA8")), R"("\n\t\r\b\f\u0001\"\\\u2028")");
}

TEST(GoJson, InvalidUtf8BecomesReplacementCharacter) {
  EXPECT_EQ(marshal(json(std::string("a\xFF" "b"))), R"("a\ufffdb")");
}

TEST(GoJson, MarshalIndentLayout) {
  EXPECT_EQ(marshal(json{{"a", json::array({1, 2})}, {"e", json::object()}, {"l", json::array()}},
                    GoJsonOptions{true, "  "}),
            "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"e\": {},\n  \"l\": []\n}");
}

TEST(GoJson, UnmarshalMakesEveryNumberAFloat) {
  auto r = goJsonUnmarshal(R"({"a":1,"b":[2,3.5]})");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE((*r)["a"].is_number_float());
  EXPECT_TRUE((*r)["b"][0].is_number_float());
}

TEST(GoJson, UnmarshalRejectsInvalidJson) { EXPECT_FALSE(goJsonUnmarshal("{").ok()); }

TEST(GoJson, UnmarshalRejectsVeryDeepNesting) {
  const std::string deep = std::string(2000, '[') + std::string(2000, ']');
  EXPECT_FALSE(goJsonUnmarshal(deep).ok());
}

TEST(GoJson, JsonDepth) {
  EXPECT_EQ(jsonDepth(json(1)), 0);
  EXPECT_EQ(jsonDepth(json{{"a", json::array({json::object()})}}), 3);
}

}  // namespace
}  // namespace harness::gotemplate
