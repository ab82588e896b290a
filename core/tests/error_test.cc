// core::Error's data beside its message (code, field, text), HARNESS_TRY, and the codes the core
// parsers give the errors other modules branch on.

#include <string>

#include <gtest/gtest.h>

#include "harness/core/field_errors.h"
#include "harness/go/time.h"
#include "harness/core/json.h"
#include "harness/core/json_patch.h"
#include "harness/core/result.h"
#include "harness/core/yaml.h"

namespace harness::core {
namespace {

TEST(Error, DefaultsToUnknownWithoutAField) {
  const Error e = makeError("boom");
  EXPECT_EQ(e.message, "boom");
  EXPECT_EQ(e.code, ErrorCode::kUnknown);
  EXPECT_EQ(e.field, "");
  EXPECT_EQ(e.text(), "boom");
  EXPECT_EQ(Error{"aggregate"}.code, ErrorCode::kUnknown);
}

TEST(Error, FieldErrorPrintsTheFieldFirst) {
  const Error e = fieldError(ErrorCode::kInvalid, "spec.containers[0].image", "must not be empty");
  EXPECT_EQ(e.message, "spec.containers[0].image: must not be empty");
  EXPECT_EQ(e.code, ErrorCode::kInvalid);
  EXPECT_EQ(e.field, "spec.containers[0].image");
  EXPECT_EQ(e.text(), "must not be empty");
}

TEST(Error, WithinPrefixesTheMessageOnly) {
  const Error e = fieldError(ErrorCode::kNotFound, "a.b", "gone").within("file.yaml");
  EXPECT_EQ(e.message, "file.yaml: a.b: gone");
  EXPECT_EQ(e.code, ErrorCode::kNotFound);
  EXPECT_EQ(e.field, "a.b");
  EXPECT_EQ(e.text(), "gone");
  // Without a detail, the text is the message before the first prefix.
  const Error plain = makeError("bad", ErrorCode::kDecode).within("x").within("y");
  EXPECT_EQ(plain.message, "y: x: bad");
  EXPECT_EQ(plain.text(), "bad");
  EXPECT_EQ(plain.code, ErrorCode::kDecode);
}

TEST(Error, CodeNames) {
  EXPECT_EQ(errorCodeName(ErrorCode::kUnknown), "Unknown");
  EXPECT_EQ(errorCodeName(ErrorCode::kInvalid), "Invalid");
  EXPECT_EQ(errorCodeName(ErrorCode::kDecode), "Decode");
  EXPECT_EQ(errorCodeName(ErrorCode::kNotFound), "NotFound");
  EXPECT_EQ(errorCodeName(ErrorCode::kAlreadyExists), "AlreadyExists");
  EXPECT_EQ(errorCodeName(ErrorCode::kConflict), "Conflict");
  EXPECT_EQ(errorCodeName(ErrorCode::kFailedPrecondition), "FailedPrecondition");
  EXPECT_EQ(errorCodeName(ErrorCode::kForbidden), "Forbidden");
  EXPECT_EQ(errorCodeName(ErrorCode::kTimeout), "Timeout");
  EXPECT_EQ(errorCodeName(ErrorCode::kUnavailable), "Unavailable");
  EXPECT_EQ(errorCodeName(ErrorCode::kInternal), "Internal");
}

TEST(Error, FromFieldErrors) {
  const Error one = toError(FieldError::invalid("spec.x", "y", "must be z"));
  EXPECT_EQ(one.message, "spec.x: Invalid value: \"y\": must be z");
  EXPECT_EQ(one.code, ErrorCode::kInvalid);
  EXPECT_EQ(one.field, "spec.x");
  EXPECT_EQ(one.text(), "Invalid value: \"y\": must be z");
  EXPECT_EQ(toError(FieldError::internal("spec.x", "oops")).code, ErrorCode::kInternal);

  // One distinct error keeps its field; several are about no single field.
  const Error same = toError(FieldErrors{FieldError::required("a"), FieldError::required("a")});
  EXPECT_EQ(same.message, "a: Required value");
  EXPECT_EQ(same.field, "a");
  const Error two = toError(FieldErrors{FieldError::required("a"), FieldError::required("b")});
  EXPECT_EQ(two.message, "[a: Required value, b: Required value]");
  EXPECT_EQ(two.code, ErrorCode::kInvalid);
  EXPECT_EQ(two.field, "");
  EXPECT_EQ(two.text(), two.message);
}

Result<int> half(int n) {
  if (n % 2 != 0) return fieldError(ErrorCode::kInvalid, "n", "odd");
  return n / 2;
}

Result<void> check(int n, int* calls) {
  ++*calls;
  HARNESS_TRY(half(n));
  return {};
}

Result<int> quarter(int n, int* calls) {
  HARNESS_TRY(check(n, calls));
  HARNESS_TRY(check(n / 2, calls));
  return n / 4;
}

TEST(HarnessTry, ReturnsTheFirstErrorAsIs) {
  int calls = 0;
  auto ok = quarter(8, &calls);
  ASSERT_TRUE(ok.ok());
  EXPECT_EQ(*ok, 2);
  EXPECT_EQ(calls, 2);

  calls = 0;
  auto failed = quarter(6, &calls);  // 6 halves, 3 does not
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error().message, "n: odd");
  EXPECT_EQ(failed.error().field, "n");
  EXPECT_EQ(calls, 2);

  calls = 0;
  failed = quarter(5, &calls);  // stops at the first check
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(calls, 1);
}

// The codes other modules branch on.

TEST(ErrorCodes, APatchPathTheDocumentLacksIsNotFoundAtThatPointer) {
  const auto doc = nlohmann::json::parse(R"({"metadata":{"name":"p"}})");
  for (const char* patch_text :
       {R"([{"op":"add","path":"/metadata/labels/x","value":"1"}])",
        R"([{"op":"remove","path":"/metadata/labels/x"}])",
        R"([{"op":"replace","path":"/spec/x","value":1}])",
        R"([{"op":"move","from":"/spec/x","path":"/metadata/y"}])",
        R"([{"op":"copy","from":"/spec/x","path":"/metadata/y"}])",
        R"([{"op":"test","path":"/spec/x","value":1}])"}) {
    auto patch = decodePatch(patch_text);
    ASSERT_TRUE(patch.ok()) << patch.error().message;
    auto applied = applyPatch(doc, *patch);
    ASSERT_FALSE(applied.ok()) << patch_text;
    EXPECT_EQ(applied.error().code, ErrorCode::kNotFound) << applied.error().message;
    EXPECT_NE(applied.error().message.find("does not apply"), std::string::npos);
    EXPECT_EQ(applied.error().field.rfind('/', 0), 0u) << applied.error().field;
  }
  // A failing test operation is not a missing path.
  auto patch = decodePatch(R"([{"op":"test","path":"/metadata/name","value":"q"}])");
  ASSERT_TRUE(patch.ok());
  auto applied = applyPatch(doc, *patch);
  ASSERT_FALSE(applied.ok());
  EXPECT_NE(applied.error().code, ErrorCode::kNotFound);
}

TEST(ErrorCodes, DurationErrorsKeepGosTextWithoutThePackage) {
  auto d = go::parseDuration("soon");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().message, "time: invalid duration \"soon\"");
  EXPECT_EQ(d.error().code, ErrorCode::kDecode);
  EXPECT_EQ(d.error().text(), "invalid duration \"soon\"");
  d = go::parseDuration("5");
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.error().text(), "missing unit in duration \"5\"");
}

TEST(ErrorCodes, JsonSyntaxErrorsAreDecodeErrorsWithTheirDescription) {
  JsonError detail;
  auto parsed = parseJson("{x", &detail);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().code, ErrorCode::kDecode);
  EXPECT_EQ(parsed.error().message.rfind("parse error at line 1, column 2: ", 0), 0u)
      << parsed.error().message;
  EXPECT_EQ(parsed.error().text(), detail.description);
  EXPECT_EQ(parsed.error().message, "parse error at line 1, column 2: " + detail.description);
  // YAML streams of JSON documents quote the description after their own position.
  auto yaml = parseYamlDocuments("{\"a\": 1}\n{x");
  ASSERT_FALSE(yaml.ok());
  EXPECT_EQ(yaml.error().code, ErrorCode::kDecode);
  EXPECT_NE(yaml.error().message.find(detail.description), std::string::npos)
      << yaml.error().message;
}

}  // namespace
}  // namespace harness::core
