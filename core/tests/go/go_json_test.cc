
#include <gtest/gtest.h>

#include "harness/go/json.h"

namespace harness::go {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

TEST(GoJsonValueKind, NamesEachJsonTypeAsEncodingJsonDoes) {
  EXPECT_EQ(jsonValueKind(json("x")), "string");
  EXPECT_EQ(jsonValueKind(json(true)), "bool");
  EXPECT_EQ(jsonValueKind(json(-3)), "number");
  EXPECT_EQ(jsonValueKind(json(3u)), "number");
  EXPECT_EQ(jsonValueKind(json(1.5)), "number");
  EXPECT_EQ(jsonValueKind(json::array()), "array");
  EXPECT_EQ(jsonValueKind(json::object()), "object");
  EXPECT_EQ(jsonValueKind(json(nullptr)), "null");
}

TEST(GoJsonValueKind, NamesANumberWithItsLiteralForIntegerTargets) {
  // decode.go: UnmarshalTypeError{Value: "number " + string(item)} for a number an integer type
  // cannot hold.
  EXPECT_EQ(jsonValueKind(json(1.5), true), "number 1.5");
  EXPECT_EQ(jsonValueKind(json(99999999999), true), "number 99999999999");
  EXPECT_EQ(jsonValueKind(json("1"), true), "string");
}

TEST(GoJsonValueKind, ReadsOrderedJsonToo) {
  EXPECT_EQ(jsonValueKind(ordered_json::parse(R"({"b":1,"a":2})")), "object");
  EXPECT_EQ(jsonValueKind(ordered_json::parse("[1]")), "array");
  EXPECT_EQ(jsonValueKind(ordered_json(-7), true), "number -7");
}


TEST(GoJsonSyntaxError, WordsErrorsAsScannerDoes) {
  EXPECT_EQ(jsonSyntaxError(R"({"a":[1,2.5e3,true,null,"x\u00e9"]})"), "");
  EXPECT_EQ(jsonSyntaxError(""), "unexpected end of JSON input");
  EXPECT_EQ(jsonSyntaxError("[1,"), "unexpected end of JSON input");
  EXPECT_EQ(jsonSyntaxError("[}"), "invalid character '}' looking for beginning of value");
  EXPECT_EQ(jsonSyntaxError("{1:2}"),
            "invalid character '1' looking for beginning of object key string");
  EXPECT_EQ(jsonSyntaxError("01"), "invalid character '1' after top-level value");
  // eof() steps a space through a pending literal, so Go names the space.
  EXPECT_EQ(jsonSyntaxError("tru"), "invalid character ' ' in literal true (expecting 'e')");
  EXPECT_EQ(jsonSyntaxError("\x01"), R"(invalid character '\x01' looking for beginning of value)");
}

TEST(GoJsonString, EscapesAsAppendStringDoes) {
  auto marshal = [](std::string_view s, bool escape_html) {
    std::string out;
    appendJsonString(out, s, escape_html);
    return out;
  };
  EXPECT_EQ(marshal("a\"b\\c", true), R"("a\"b\\c")");
  EXPECT_EQ(marshal("\b\f\n\r\t\x01\x7f", true), R"("\b\f\n\r\t\u0001)" "\x7f\"");
  EXPECT_EQ(marshal("<a&b>", true), R"("\u003ca\u0026b\u003e")");
  EXPECT_EQ(marshal("<a&b>", false), R"("<a&b>")");
  EXPECT_EQ(marshal("\xe2\x80\xa8\xe2\x80\xa9", false), R"("\u2028\u2029")");
  EXPECT_EQ(marshal("\xff\xc0\x80\xed\xa0\x80", true),  // invalid, overlong, surrogate
            R"("\ufffd\ufffd\ufffd\ufffd\ufffd\ufffd")");
  EXPECT_EQ(marshal("h\xc3\xa9", true), "\"h\xc3\xa9\"");
}

TEST(GoJsonFloat, WritesFloatsAsFloatEncoderDoes) {
  EXPECT_EQ(jsonFloat(1), "1");
  EXPECT_EQ(jsonFloat(0.5), "0.5");
  EXPECT_EQ(jsonFloat(-0.0), "-0");
  EXPECT_EQ(jsonFloat(123456789), "123456789");
  EXPECT_EQ(jsonFloat(1e20), "100000000000000000000");
  EXPECT_EQ(jsonFloat(1e21), "1e+21");
  EXPECT_EQ(jsonFloat(0.000001), "0.000001");
  EXPECT_EQ(jsonFloat(1e-7), "1e-7");
  EXPECT_EQ(jsonFloat(1.5e-10), "1.5e-10");
}

}  // namespace
}  // namespace harness::go
