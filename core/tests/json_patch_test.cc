// Behaviour of the JSON Patch engine against evanphx/json-patch v4 (what kube-apiserver applies
// to mutating webhook patches). Expected error texts are the Go library's.

#include "harness/core/json_patch.h"

#include "harness/core/json_patch_decode.h"

#include <array>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace harness::core {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

Result<json> apply(const json& doc, std::string_view patch_text,
                   const JsonPatchOptions& options = {}) {
  auto patch = decodePatch(patch_text);
  if (!patch.ok()) return Error{"decode: " + patch.error().message};
  return applyPatch(doc, *patch, options);
}

std::string applyError(const json& doc, std::string_view patch_text,
                       const JsonPatchOptions& options = {}) {
  auto result = apply(doc, patch_text, options);
  return result.ok() ? "<no error>" : result.error().message;
}

json applyOk(const json& doc, std::string_view patch_text, const JsonPatchOptions& options = {}) {
  auto result = apply(doc, patch_text, options);
  EXPECT_TRUE(result.ok()) << result.error().message;
  return result.ok() ? *result : json();
}

std::string decodeError(std::string_view text) {
  auto patch = decodePatch(text);
  return patch.ok() ? "<no error>" : patch.error().message;
}

const json kPod = json::parse(R"({
  "apiVersion": "v1", "kind": "Pod",
  "metadata": {"name": "web", "namespace": "default", "annotations": {"a": "1"}},
  "spec": {"containers": [{"name": "app", "image": "nginx"}]}
})");

// ---- decoding ------------------------------------------------------------------------------

TEST(DecodePatchTest, DecodesOperationsAndTheirMembers) {
  auto patch = decodePatch(
      R"([{"op":"add","path":"/a","value":{"b":1}},{"op":"move","from":"/x","path":"/y"}])");
  ASSERT_TRUE(patch.ok());
  ASSERT_EQ(patch->size(), 2u);
  EXPECT_EQ((*patch)[0].op, "add");
  EXPECT_EQ((*patch)[0].path, "/a");
  EXPECT_EQ((*patch)[0].value, json({{"b", 1}}));
  EXPECT_EQ((*patch)[1].op, "move");
  EXPECT_EQ((*patch)[1].from, "/x");
  EXPECT_FALSE((*patch)[1].value.has_value());
}

TEST(DecodePatchTest, ExplicitNullValueIsKeptApartFromAbsentValue) {
  auto patch = decodePatch(R"([{"op":"add","path":"/a","value":null},{"op":"add","path":"/b"}])");
  ASSERT_TRUE(patch.ok());
  ASSERT_TRUE((*patch)[0].value.has_value());
  EXPECT_TRUE((*patch)[0].value->is_null());
  EXPECT_FALSE((*patch)[1].value.has_value());
}

TEST(DecodePatchTest, NullDocumentIsAnEmptyPatch) {
  auto patch = decodePatch("null");
  ASSERT_TRUE(patch.ok());
  EXPECT_TRUE(patch->empty());
  auto empty = decodePatch(" [ ] ");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
}

TEST(DecodePatchTest, NonArrayDocumentIsATypeError) {
  EXPECT_EQ(decodeError(R"({"op":"add"})"),
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch");
  EXPECT_EQ(decodeError(R"("x")"),
            "json: cannot unmarshal string into Go value of type jsonpatch.Patch");
  EXPECT_EQ(decodeError("12"),
            "json: cannot unmarshal number into Go value of type jsonpatch.Patch");
  EXPECT_EQ(decodeError("true"),
            "json: cannot unmarshal bool into Go value of type jsonpatch.Patch");
}

TEST(DecodePatchTest, NonObjectElementIsATypeErrorAndTheFirstOneIsReported) {
  EXPECT_EQ(decodeError(R"([{"op":"add","path":"/a"}, 1, "x"])"),
            "json: cannot unmarshal number into Go value of type jsonpatch.Operation");
  EXPECT_EQ(decodeError("[[]]"),
            "json: cannot unmarshal array into Go value of type jsonpatch.Operation");
}

// applyPatch(json&&, JsonPatch&&) moves the document and the values in: same result, same
// errors as the copying form.
TEST(ApplyPatchTest, TakingTheDocumentAndThePatchGivesWhatCopyingGives) {
  const std::vector<std::string> patches = {
      R"([{"op":"add","path":"/spec/containers/-","value":{"name":"proxy","env":[{"a":1}]}},
          {"op":"replace","path":"/metadata/annotations","value":{"b":"2"}},
          {"op":"copy","from":"/spec/containers/0","path":"/spec/initContainers"},
          {"op":"test","path":"/metadata/annotations/b","value":"2"},
          {"op":"move","from":"/metadata/annotations","path":"/metadata/labels"},
          {"op":"replace","path":"","value":{"kind":"Pod","spec":{}}},
          {"op":"add","path":"/spec/x","value":null}])",
      R"([{"op":"add","path":"/spec/containers/0/env","value":[1]},
          {"op":"test","path":"/spec/containers/0/env","value":[2]}])",
      R"([{"op":"add","path":"/missing/x","value":1}])",
      R"([{"op":"remove","path":"/metadata/nope"}])",
      R"([{"op":"replace","path":"/metadata/annotations/a"}])",
      R"([{"path":"/a","value":1}])",
  };
  for (const auto& text : patches) {
    auto patch = decodePatch(text);
    ASSERT_TRUE(patch.ok()) << text;
    const auto copied = applyPatch(kPod, *patch);
    JsonPatch taken_patch = *patch;
    const auto taken = applyPatch(json(kPod), std::move(taken_patch));
    ASSERT_EQ(taken.ok(), copied.ok()) << text;
    if (copied.ok()) {
      EXPECT_EQ(*taken, *copied) << text;
    } else {
      EXPECT_EQ(taken.error().message, copied.error().message) << text;
    }
  }
  auto scalar = applyPatch(json("text"), JsonPatch{});
  ASSERT_FALSE(scalar.ok());
  const json text_doc("text");
  EXPECT_EQ(scalar.error().message, applyPatch(text_doc, JsonPatch{}).error().message);
}

TEST(DecodePatchTest, NullElementBecomesAnUnknownOperation) {
  auto patch = decodePatch("[null]");
  ASSERT_TRUE(patch.ok());
  ASSERT_EQ(patch->size(), 1u);
  EXPECT_EQ((*patch)[0].op, "unknown");
  auto applied = applyPatch(kPod, *patch);
  ASSERT_FALSE(applied.ok());
  EXPECT_EQ(applied.error().message, "Unexpected kind: unknown");
}

TEST(DecodePatchTest, MissingOrNonStringOpIsUnknown) {
  EXPECT_EQ(applyError(kPod, R"([{"path":"/a","value":1}])"), "Unexpected kind: unknown");
  EXPECT_EQ(applyError(kPod, R"([{"op":7,"path":"/a","value":1}])"), "Unexpected kind: unknown");
}

TEST(DecodePatchTest, SyntaxErrorsUseGoTexts) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "unexpected end of JSON input"},
      {"[{", "unexpected end of JSON input"},
      {R"([{"op":"add")", "unexpected end of JSON input"},
      {"[}", "invalid character '}' looking for beginning of value"},
      {"{1:2}", "invalid character '1' looking for beginning of object key string"},
      {R"({"a" 1})", "invalid character '1' after object key"},
      {R"({"a":1 "b":2})", "invalid character '\"' after object key:value pair"},
      {"[1 2]", "invalid character '2' after array element"},
      {"[] x", "invalid character 'x' after top-level value"},
      {"[tru]", "invalid character ']' in literal true (expecting 'e')"},
      {"[nul]", "invalid character ']' in literal null (expecting 'l')"},
      {"[fx]", "invalid character 'x' in literal false (expecting 'a')"},
      {"[\"a\nb\"]", "invalid character '\\n' in string literal"},
      {R"(["\x"])", "invalid character 'x' in string escape code"},
      {R"(["\u12g4"])", "invalid character 'g' in \\u hexadecimal character escape"},
      {"[1.]", "invalid character ']' after decimal point in numeric literal"},
      {"[1e]", "invalid character ']' in exponent of numeric literal"},
      {"[-a]", "invalid character 'a' in numeric literal"},
      {"[01]", "invalid character '1' after array element"},
      {"-", "invalid character ' ' in numeric literal"},
      {"[']", "invalid character '\\'' looking for beginning of value"},
      {"[\x01]", "invalid character '\\x01' looking for beginning of value"},
      {"\xC3", "invalid character '\xC3\x83' looking for beginning of value"},
      {"\x85", "invalid character '\\u0085' looking for beginning of value"},
  };
  for (const auto& [text, expected] : cases) {
    EXPECT_EQ(decodeError(text), expected) << "input: " << text;
  }
}

TEST(DecodePatchTest, NestingDeeperThanGoAllowsIsRejected) {
  const std::string deep = std::string(10001, '[') + std::string(10001, ']');
  EXPECT_EQ(decodeError(deep), "invalid character '[' exceeded max depth");
}

TEST(DecodePatchTest, InvalidUtf8IsAcceptedAsGoDoes) {
  auto patch = decodePatch("[{\"op\":\"add\",\"path\":\"/a\",\"value\":\"\xff\"}]");
  ASSERT_TRUE(patch.ok()) << patch.error().message;
  EXPECT_EQ((*patch)[0].value, json("\xEF\xBF\xBD"));
}

TEST(EncodePatchTest, DecodedOperationsRoundTripAsSent) {
  const json sent = json::parse(R"([{"op":"add","path":"/a","value":1,"extra":true},null])");
  auto patch = decodePatch(sent.dump());
  ASSERT_TRUE(patch.ok());
  EXPECT_EQ(encodePatch(*patch), sent);
}

TEST(EncodePatchTest, BuiltOperationsEncodeTheirMembers) {
  const JsonPatch patch = {PatchOperation::add("/a", 1), PatchOperation::remove("/b"),
                           PatchOperation::move("/c", "/d"), PatchOperation::test("/e", nullptr)};
  EXPECT_EQ(encodePatch(patch), json::parse(R"([
    {"op":"add","path":"/a","value":1}, {"op":"remove","path":"/b"},
    {"op":"move","from":"/c","path":"/d"}, {"op":"test","path":"/e","value":null}])"));
}

// ---- add -----------------------------------------------------------------------------------

TEST(ApplyPatchTest, AddSetsAnObjectMember) {
  const json out = applyOk(kPod, R"([{"op":"add","path":"/metadata/labels","value":{"x":"y"}}])");
  EXPECT_EQ(out["metadata"]["labels"], json({{"x", "y"}}));
}

TEST(ApplyPatchTest, AddOverwritesAnExistingMember) {
  const json out = applyOk(kPod, R"([{"op":"add","path":"/metadata/annotations/a","value":"2"}])");
  EXPECT_EQ(out["metadata"]["annotations"]["a"], "2");
}

TEST(ApplyPatchTest, AddBelowAMissingParentFails) {
  // docs/admission-chain.md §5: a pod without labels has no /metadata/labels.
  EXPECT_EQ(applyError(kPod, R"([{"op":"add","path":"/metadata/labels/x","value":"y"}])"),
            "add operation does not apply: doc is missing path: \"/metadata/labels/x\": "
            "missing value");
}

TEST(ApplyPatchTest, AddBelowANullParentFails) {
  const json doc = {{"metadata", {{"labels", nullptr}}}};
  EXPECT_EQ(applyError(doc, R"([{"op":"add","path":"/metadata/labels/x","value":"y"}])"),
            "add operation does not apply: doc is missing path: \"/metadata/labels/x\": "
            "missing value");
}

TEST(ApplyPatchTest, AddBelowAScalarFails) {
  EXPECT_EQ(applyError(kPod, R"([{"op":"add","path":"/kind/x","value":1}])"),
            "add operation does not apply: doc is missing path: \"/kind/x\": missing value");
}

TEST(ApplyPatchTest, AddInsertsIntoAnArray) {
  const json out =
      applyOk(kPod, R"([{"op":"add","path":"/spec/containers/0","value":{"name":"istio-proxy"}}])");
  ASSERT_EQ(out["spec"]["containers"].size(), 2u);
  EXPECT_EQ(out["spec"]["containers"][0]["name"], "istio-proxy");
  EXPECT_EQ(out["spec"]["containers"][1]["name"], "app");
}

TEST(ApplyPatchTest, AddWithDashAppends) {
  const json out =
      applyOk(kPod, R"([{"op":"add","path":"/spec/containers/-","value":{"name":"s"}}])");
  EXPECT_EQ(out["spec"]["containers"][1]["name"], "s");
}

TEST(ApplyPatchTest, AddAtIndexEqualToLengthAppends) {
  const json out = applyOk(json{{"a", {1, 2}}}, R"([{"op":"add","path":"/a/2","value":3}])");
  EXPECT_EQ(out["a"], json({1, 2, 3}));
}

TEST(ApplyPatchTest, AddBeyondTheEndFails) {
  EXPECT_EQ(applyError(json{{"a", {1, 2}}}, R"([{"op":"add","path":"/a/3","value":3}])"),
            "error in add for path: '/a/3': Unable to access invalid index: 3: invalid index "
            "referenced");
}

TEST(ApplyPatchTest, AddNegativeIndexCountsFromTheEndOfTheGrownArray) {
  // -1 inserts after the last element, -(len+1) before the first.
  EXPECT_EQ(applyOk(json{{"a", {1, 2}}}, R"([{"op":"add","path":"/a/-1","value":9}])")["a"],
            json({1, 2, 9}));
  EXPECT_EQ(applyOk(json{{"a", {1, 2}}}, R"([{"op":"add","path":"/a/-3","value":9}])")["a"],
            json({9, 1, 2}));
  EXPECT_EQ(applyError(json{{"a", {1, 2}}}, R"([{"op":"add","path":"/a/-4","value":9}])"),
            "error in add for path: '/a/-4': Unable to access invalid index: -4: invalid index "
            "referenced");
}

TEST(ApplyPatchTest, NegativeIndicesCanBeTurnedOff) {
  JsonPatchOptions options;
  options.support_negative_indices = false;
  EXPECT_EQ(applyError(json{{"a", {1, 2}}}, R"([{"op":"add","path":"/a/-1","value":9}])", options),
            "error in add for path: '/a/-1': Unable to access invalid index: -1: invalid index "
            "referenced");
}

TEST(ApplyPatchTest, AddNonNumericIndexFails) {
  EXPECT_EQ(applyError(json{{"a", {1}}}, R"([{"op":"add","path":"/a/x","value":9}])"),
            "error in add for path: '/a/x': value was not a proper array index: 'x': "
            "strconv.Atoi: parsing \"x\": invalid syntax");
}

TEST(ApplyPatchTest, AddHugeIndexFailsWithGoRangeError) {
  EXPECT_EQ(
      applyError(json{{"a", {1}}}, R"([{"op":"add","path":"/a/99999999999999999999","value":9}])"),
      "error in add for path: '/a/99999999999999999999': value was not a proper array "
      "index: '99999999999999999999': strconv.Atoi: parsing \"99999999999999999999\": "
      "value out of range");
}

TEST(ApplyPatchTest, AddWithoutValueAddsNull) {
  const json out = applyOk(kPod, R"([{"op":"add","path":"/metadata/x"}])");
  ASSERT_TRUE(out["metadata"].contains("x"));
  EXPECT_TRUE(out["metadata"]["x"].is_null());
}

TEST(ApplyPatchTest, AddWithoutPathFails) {
  EXPECT_EQ(applyError(kPod, R"([{"op":"add","value":1}])"),
            "add operation failed to decode path: missing value");
  EXPECT_EQ(applyError(kPod, R"([{"op":"add","path":5,"value":1}])"),
            "add operation failed to decode path: missing value");
}

TEST(ApplyPatchTest, AddAtTheRootFails) {
  EXPECT_EQ(applyError(kPod, R"([{"op":"add","path":"","value":{}}])"),
            "add operation does not apply: doc is missing path: \"\": missing value");
}

// ---- remove --------------------------------------------------------------------------------

TEST(ApplyPatchTest, RemoveDeletesAMember) {
  const json out = applyOk(kPod, R"([{"op":"remove","path":"/metadata/annotations/a"}])");
  EXPECT_TRUE(out["metadata"]["annotations"].empty());
}

TEST(ApplyPatchTest, RemoveOfAMissingMemberFails) {
  EXPECT_EQ(applyError(kPod, R"([{"op":"remove","path":"/metadata/annotations/zz"}])"),
            "error in remove for path: '/metadata/annotations/zz': Unable to remove nonexistent "
            "key: zz: missing value");
}

TEST(ApplyPatchTest, RemoveOfANullMemberSucceeds) {
  const json out = applyOk(json{{"a", nullptr}, {"b", 1}}, R"([{"op":"remove","path":"/a"}])");
  EXPECT_EQ(out, json({{"b", 1}}));
}

TEST(ApplyPatchTest, RemoveBelowAMissingParentFails) {
  EXPECT_EQ(applyError(kPod, R"([{"op":"remove","path":"/metadata/labels/x"}])"),
            "remove operation does not apply: doc is missing path: \"/metadata/labels/x\": "
            "missing value");
}

TEST(ApplyPatchTest, RemoveArrayElements) {
  EXPECT_EQ(applyOk(json{{"a", {1, 2, 3}}}, R"([{"op":"remove","path":"/a/1"}])")["a"],
            json({1, 3}));
  EXPECT_EQ(applyOk(json{{"a", {1, 2, 3}}}, R"([{"op":"remove","path":"/a/-1"}])")["a"],
            json({1, 2}));
  EXPECT_EQ(applyOk(json{{"a", {1, 2, 3}}}, R"([{"op":"remove","path":"/a/-3"}])")["a"],
            json({2, 3}));
}

TEST(ApplyPatchTest, RemoveOutOfRangeFails) {
  EXPECT_EQ(applyError(json{{"a", {1}}}, R"([{"op":"remove","path":"/a/1"}])"),
            "error in remove for path: '/a/1': Unable to access invalid index: 1: invalid index "
            "referenced");
  EXPECT_EQ(applyError(json{{"a", {1}}}, R"([{"op":"remove","path":"/a/-2"}])"),
            "error in remove for path: '/a/-2': Unable to access invalid index: -2: invalid index "
            "referenced");
}

TEST(ApplyPatchTest, RemoveWithDashFails) {
  EXPECT_EQ(applyError(json{{"a", {1}}}, R"([{"op":"remove","path":"/a/-"}])"),
            "error in remove for path: '/a/-': strconv.Atoi: parsing \"-\": invalid syntax");
}

TEST(ApplyPatchTest, RemoveWithoutPathFails) {
  EXPECT_EQ(applyError(kPod, R"([{"op":"remove"}])"),
            "remove operation failed to decode path: missing value");
}

// ---- replace -------------------------------------------------------------------------------

TEST(ApplyPatchTest, ReplaceChangesAMember) {
  const json out =
      applyOk(kPod, R"([{"op":"replace","path":"/spec/containers/0/image","value":"x"}])");
  EXPECT_EQ(out["spec"]["containers"][0]["image"], "x");
}

TEST(ApplyPatchTest, ReplaceOfAMissingMemberAddsIt) {
  // The reinvocation integration test relies on this (docs/admission-chain.md §5).
  const json doc = {{"metadata", {{"labels", {{"a", "b"}}}}}};
  const json out =
      applyOk(doc, R"([{"op":"replace","path":"/metadata/labels/fight","value":"yes"}])");
  EXPECT_EQ(out["metadata"]["labels"], json({{"a", "b"}, {"fight", "yes"}}));
}

TEST(ApplyPatchTest, ReplaceBelowAMissingParentFails) {
  EXPECT_EQ(applyError(kPod, R"([{"op":"replace","path":"/metadata/labels/x","value":1}])"),
            "replace operation does not apply: doc is missing path: /metadata/labels/x: missing "
            "value");
}

TEST(ApplyPatchTest, ReplaceOutOfRangeIndexFails) {
  EXPECT_EQ(applyError(json{{"a", {1}}}, R"([{"op":"replace","path":"/a/1","value":2}])"),
            "replace operation does not apply: doc is missing key: /a/1: missing value");
  EXPECT_EQ(applyError(json{{"a", {1}}}, R"([{"op":"replace","path":"/a/-","value":2}])"),
            "replace operation does not apply: doc is missing key: /a/-: missing value");
}

TEST(ApplyPatchTest, ReplaceNegativeIndexCountsFromTheEnd) {
  EXPECT_EQ(applyOk(json{{"a", {1, 2}}}, R"([{"op":"replace","path":"/a/-1","value":9}])")["a"],
            json({1, 9}));
}

TEST(ApplyPatchTest, ReplaceTheRootWithAnObjectOrArray) {
  EXPECT_EQ(applyOk(kPod, R"([{"op":"replace","path":"","value":{"x":1}}])"), json({{"x", 1}}));
  EXPECT_EQ(applyOk(kPod, R"([{"op":"replace","path":"","value":[1]}])"), json({1}));
}

TEST(ApplyPatchTest, ReplaceTheRootWithAScalarFails) {
  EXPECT_EQ(applyError(kPod, R"([{"op":"replace","path":"","value":1}])"),
            "replace operation value must be object or array: %!w(<nil>)");
}

TEST(ApplyPatchTest, ReplacePathDecodeErrors) {
  EXPECT_EQ(applyError(kPod, R"([{"op":"replace","value":1}])"),
            "replace operation failed to decode path: operation missing path field: missing "
            "value");
  EXPECT_EQ(applyError(kPod, R"([{"op":"replace","path":null,"value":1}])"),
            "replace operation failed to decode path: operation missing path field: missing "
            "value");
  EXPECT_EQ(applyError(kPod, R"([{"op":"replace","path":1,"value":1}])"),
            "replace operation failed to decode path: json: cannot unmarshal number into Go value "
            "of type string");
}

// ---- move ----------------------------------------------------------------------------------

TEST(ApplyPatchTest, MoveRelocatesAValue) {
  const json out =
      applyOk(json{{"a", 1}, {"b", {{"c", 2}}}}, R"([{"op":"move","from":"/a","path":"/b/d"}])");
  EXPECT_EQ(out, json({{"b", {{"c", 2}, {"d", 1}}}}));
}

TEST(ApplyPatchTest, MoveWithinAnArray) {
  EXPECT_EQ(applyOk(json{{"a", {1, 2, 3}}}, R"([{"op":"move","from":"/a/0","path":"/a/-"}])")["a"],
            json({2, 3, 1}));
}

TEST(ApplyPatchTest, MoveOfAMissingMemberFailsNamingTheKey) {
  EXPECT_EQ(applyError(json{{"a", 1}}, R"([{"op":"move","from":"/x","path":"/y"}])"),
            "error in move for path: 'x': Unable to remove nonexistent key: x: missing value");
}

TEST(ApplyPatchTest, MoveFromAMissingParentFails) {
  EXPECT_EQ(applyError(json{{"a", 1}}, R"([{"op":"move","from":"/x/y","path":"/z"}])"),
            "move operation does not apply: doc is missing from path: /x/y: missing value");
}

TEST(ApplyPatchTest, MoveIntoItsOwnChildFails) {
  EXPECT_EQ(applyError(json{{"a", {{"b", 1}}}}, R"([{"op":"move","from":"/a","path":"/a/c"}])"),
            "move operation does not apply: doc is missing destination path: /a/c: missing value");
}

TEST(ApplyPatchTest, MoveWithoutFromFails) {
  EXPECT_EQ(applyError(json{{"a", 1}}, R"([{"op":"move","path":"/b"}])"),
            "move operation failed to decode from: operation, missing from field: missing value");
}

TEST(ApplyPatchTest, MoveOutOfRangeFailsNamingTheKey) {
  EXPECT_EQ(applyError(json{{"a", {1}}}, R"([{"op":"move","from":"/a/4","path":"/b"}])"),
            "error in move for path: '4': Unable to access invalid index: 4: invalid index "
            "referenced");
}

// ---- copy ----------------------------------------------------------------------------------

TEST(ApplyPatchTest, CopyDuplicatesAValue) {
  const json out = applyOk(json{{"a", {{"b", 1}}}}, R"([{"op":"copy","from":"/a","path":"/c"}])");
  EXPECT_EQ(out, json({{"a", {{"b", 1}}}, {"c", {{"b", 1}}}}));
}

TEST(ApplyPatchTest, CopyFromAMissingMemberCopiesNull) {
  const json out = applyOk(json{{"a", 1}}, R"([{"op":"copy","from":"/x","path":"/c"}])");
  ASSERT_TRUE(out.contains("c"));
  EXPECT_TRUE(out["c"].is_null());
}

TEST(ApplyPatchTest, CopyIntoAnIndexPastTheEndFails) {
  EXPECT_EQ(
      applyError(json{{"foo", {"bar"}}}, R"([{"op":"copy","path":"/foo/2","from":"/foo/0"}])"),
      "error while adding value during copy: Unable to access invalid index: 2: invalid "
      "index referenced");
}

TEST(ApplyPatchTest, CopyFromAnOutOfRangeIndexFails) {
  EXPECT_EQ(applyError(json{{"foo", {"bar"}}}, R"([{"op":"copy","path":"/x","from":"/foo/5"}])"),
            "error in copy for from: '/foo/5': Unable to access invalid index: 5: invalid index "
            "referenced");
}

TEST(ApplyPatchTest, CopyPathErrorsUseMissingValue) {
  EXPECT_EQ(applyError(json{{"a", 1}}, R"([{"op":"copy","from":"/a","path":2}])"),
            "copy operation failed to decode path: missing value");
  EXPECT_EQ(applyError(json{{"a", 1}}, R"([{"op":"copy","path":"/b"}])"),
            "copy operation failed to decode from: operation, missing from field: missing value");
}

TEST(ApplyPatchTest, CopySizeIsLimited) {
  // evanphx's own test case: a 49-character string encodes to 51 bytes with its quotes.
  const json doc = {{"foo", {"A", std::string(49, 'A')}}};
  const std::string patch = R"([{"op":"copy","path":"/foo/-","from":"/foo/1"},
                                {"op":"copy","path":"/foo/-","from":"/foo/1"}])";
  JsonPatchOptions options;
  options.accumulated_copy_size_limit = 100;
  EXPECT_EQ(applyError(doc, patch, options),
            "Unable to complete the copy, the accumulated size increase of copy is 102, exceeding "
            "the limit 100");
  options.accumulated_copy_size_limit = 102;
  EXPECT_EQ(applyOk(doc, patch, options)["foo"].size(), 4u);
}

TEST(ApplyPatchTest, CopySizeCountsGoEncoding) {
  // Go's encoder escapes <, > and & (6 bytes each): "<>" encodes to 14 bytes.
  const json doc = {{"a", "<>"}};
  JsonPatchOptions options;
  options.accumulated_copy_size_limit = 13;
  EXPECT_THAT(applyError(doc, R"([{"op":"copy","from":"/a","path":"/b"}])", options),
              HasSubstr("accumulated size increase of copy is 14"));
}

TEST(ApplyPatchTest, DefaultCopyLimitIsTheApiserversThreeMebibytes) {
  EXPECT_EQ(JsonPatchOptions{}.accumulated_copy_size_limit, 3 * 1024 * 1024);
  const json doc = {{"big", std::string(std::size_t{2} * 1024 * 1024, 'x')}};
  EXPECT_THAT(applyError(doc, R"([{"op":"copy","from":"/big","path":"/c1"},
                                  {"op":"copy","from":"/big","path":"/c2"}])"),
              HasSubstr("exceeding the limit 3145728"));
}

// ---- test ----------------------------------------------------------------------------------

TEST(ApplyPatchTest, TestOfAnEqualValuePasses) {
  applyOk(kPod,
          R"([{"op":"test","path":"/spec/containers/0","value":{"image":"nginx","name":"app"}}])");
}

TEST(ApplyPatchTest, TestOfADifferentValueFails) {
  EXPECT_EQ(applyError(kPod, R"([{"op":"test","path":"/kind","value":"Service"}])"),
            "testing value /kind failed: test failed");
}

TEST(ApplyPatchTest, TestKeepsIntegersAndFloatsApart) {
  EXPECT_EQ(applyError(json{{"n", 1}}, R"([{"op":"test","path":"/n","value":1.0}])"),
            "testing value /n failed: test failed");
  applyOk(json{{"n", 1}}, R"([{"op":"test","path":"/n","value":1}])");
}

TEST(ApplyPatchTest, TestOfAMissingMemberAgainstNullOrNothingPasses) {
  applyOk(kPod, R"([{"op":"test","path":"/metadata/nothing","value":null}])");
  applyOk(kPod, R"([{"op":"test","path":"/metadata/nothing"}])");
  EXPECT_EQ(applyError(kPod, R"([{"op":"test","path":"/metadata/nothing","value":"x"}])"),
            "testing value /metadata/nothing failed: test failed");
}

TEST(ApplyPatchTest, TestOfAPresentMemberWithoutValueFails) {
  EXPECT_EQ(applyError(kPod, R"([{"op":"test","path":"/kind"}])"),
            "testing value /kind failed: test failed");
}

TEST(ApplyPatchTest, TestOfTheWholeDocument) {
  applyOk(json{{"a", 1}}, R"([{"op":"test","path":"","value":{"a":1}}])");
  EXPECT_EQ(applyError(json{{"a", 1}}, R"([{"op":"test","path":"","value":{"a":2}}])"),
            "testing value  failed: test failed");
}

TEST(ApplyPatchTest, TestOutOfRangeIndexFails) {
  EXPECT_EQ(applyError(json{{"a", {1}}}, R"([{"op":"test","path":"/a/3","value":1}])"),
            "error in test for path: '/a/3': Unable to access invalid index: 3: invalid index "
            "referenced");
}

TEST(ApplyPatchTest, TestOfAMissingParentFails) {
  EXPECT_EQ(applyError(kPod, R"([{"op":"test","path":"/x/y","value":1}])"),
            "test operation does not apply: is missing path: /x/y: missing value");
}

// ---- whole patches -------------------------------------------------------------------------

TEST(ApplyPatchTest, UnknownOperationFails) {
  EXPECT_EQ(applyError(kPod, R"([{"op":"frobnicate","path":"/a"}])"),
            "Unexpected kind: frobnicate");
}

TEST(ApplyPatchTest, OperationsApplyInOrder) {
  const json out = applyOk(json::object(), R"([{"op":"add","path":"/a","value":{}},
                                                {"op":"add","path":"/a/b","value":[1]},
                                                {"op":"add","path":"/a/b/0","value":0}])");
  EXPECT_EQ(out, json({{"a", {{"b", {0, 1}}}}}));
}

TEST(ApplyPatchTest, FirstFailureFailsTheWholePatchAndLeavesTheInputAlone) {
  const json doc = kPod;
  EXPECT_EQ(applyError(doc, R"([{"op":"add","path":"/metadata/x","value":1},
                                {"op":"remove","path":"/nope"}])"),
            "error in remove for path: '/nope': Unable to remove nonexistent key: nope: missing "
            "value");
  EXPECT_EQ(doc, kPod);
}

TEST(ApplyPatchTest, KeysAreUnescapedLeniently) {
  const json out = applyOk(json::object(), R"([{"op":"add","path":"/a~1b","value":1},
                                                {"op":"add","path":"/m~0n","value":2},
                                                {"op":"add","path":"/p~2q","value":3}])");
  EXPECT_EQ(out, json({{"a/b", 1}, {"m~n", 2}, {"p~2q", 3}}));
}

TEST(ApplyPatchTest, TextBeforeTheFirstSlashIsIgnored) {
  EXPECT_EQ(applyOk(json::object(), R"([{"op":"add","path":"whatever/a","value":1}])"),
            json({{"a", 1}}));
  EXPECT_EQ(applyError(json::object(), R"([{"op":"add","path":"a","value":1}])"),
            "add operation does not apply: doc is missing path: \"a\": missing value");
}

TEST(ApplyPatchTest, EmptyKeyIsAddressable) {
  EXPECT_EQ(applyOk(json::object(), R"([{"op":"add","path":"/","value":1}])"), json({{"", 1}}));
}

TEST(ApplyPatchTest, ArrayDocumentsArePatched) {
  EXPECT_EQ(applyOk(json{1, 2}, R"([{"op":"add","path":"/0","value":0}])"), json({0, 1, 2}));
}

TEST(ApplyPatchTest, ScalarDocumentIsRejected) {
  auto result = applyPatch(json("text"), JsonPatch{});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error().message,
            "json: cannot unmarshal string into Go value of type jsonpatch.partialDoc");
}

TEST(ApplyPatchTest, TraversingANullArrayElementFails) {
  EXPECT_EQ(applyError(json{{"a", {nullptr}}}, R"([{"op":"add","path":"/a/0/b","value":1}])"),
            "add operation does not apply: doc is missing path: \"/a/0/b\": missing value");
}

// ---- evanphx/json-patch's own test tables (patch_test.go: Cases, BadCases, TestCases) ---------

// The tables as of the stored patch_test.go; one expectation follows v4.13 instead: `copy` into
// "/0/bar/0" inserts (v4.13 copy calls container.add), where the older table replaced.
TEST(EvanphxCasesTest, GoodCasesGiveTheExpectedDocument) {
  JsonPatchOptions options;
  options.accumulated_copy_size_limit = 100;  // TestAllCases runs with this limit
  const std::string a48(48, 'A');
  const std::vector<std::array<std::string, 3>> cases = {
      {R"({ "foo": "bar"})", R"([{ "op": "add", "path": "/baz", "value": "qux" }])",
       R"({"baz": "qux", "foo": "bar"})"},
      {R"({ "foo": [ "bar", "baz" ] })", R"([{ "op": "add", "path": "/foo/1", "value": "qux" }])",
       R"({ "foo": [ "bar", "qux", "baz" ] })"},
      {R"({ "foo": [ "bar", "baz" ] })", R"([{ "op": "add", "path": "/foo/-1", "value": "qux" }])",
       R"({ "foo": [ "bar", "baz", "qux" ] })"},
      {R"({ "baz": "qux", "foo": "bar" })", R"([ { "op": "remove", "path": "/baz" } ])",
       R"({ "foo": "bar" })"},
      {R"({ "foo": [ "bar", "qux", "baz" ] })", R"([ { "op": "remove", "path": "/foo/1" } ])",
       R"({ "foo": [ "bar", "baz" ] })"},
      {R"({ "baz": "qux", "foo": "bar" })",
       R"([ { "op": "replace", "path": "/baz", "value": "boo" } ])",
       R"({ "baz": "boo", "foo": "bar" })"},
      {R"({"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}})",
       R"([ { "op": "move", "from": "/foo/waldo", "path": "/qux/thud" } ])",
       R"({"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}})"},
      {R"({ "foo": [ "all", "grass", "cows", "eat" ] })",
       R"([ { "op": "move", "from": "/foo/1", "path": "/foo/3" } ])",
       R"({ "foo": [ "all", "cows", "eat", "grass" ] })"},
      {R"({ "foo": [ "all", "grass", "cows", "eat" ] })",
       R"([ { "op": "move", "from": "/foo/1", "path": "/foo/2" } ])",
       R"({ "foo": [ "all", "cows", "grass", "eat" ] })"},
      {R"({ "foo": "bar" })",
       R"([ { "op": "add", "path": "/child", "value": { "grandchild": { } } } ])",
       R"({ "foo": "bar", "child": { "grandchild": { } } })"},
      {R"({ "foo": ["bar"] })", R"([ { "op": "add", "path": "/foo/-", "value": ["abc", "def"] } ])",
       R"({ "foo": ["bar", ["abc", "def"]] })"},
      {R"({ "foo": "bar", "qux": { "baz": 1, "bar": null } })",
       R"([ { "op": "remove", "path": "/qux/bar" } ])", R"({ "foo": "bar", "qux": { "baz": 1 } })"},
      {R"({ "foo": "bar" })", R"([ { "op": "add", "path": "/baz", "value": null } ])",
       R"({ "baz": null, "foo": "bar" })"},
      {R"({ "foo": ["bar"]})", R"([ { "op": "replace", "path": "/foo/0", "value": "baz"}])",
       R"({ "foo": ["baz"]})"},
      {R"({ "foo": ["bar","qux","baz"]})",
       R"([ { "op": "replace", "path": "/foo/1", "value": "bum"}])",
       R"({ "foo": ["bar", "bum","baz"]})"},
      {R"([ {"foo": ["bar","qux","baz"]}])",
       R"([ { "op": "replace", "path": "/0/foo/0", "value": "bum"}])",
       R"([ {"foo": ["bum","qux","baz"]}])"},
      {R"([ {"foo": ["bar","qux","baz"], "bar": ["qux","baz"]}])",
       R"([ { "op": "copy", "from": "/0/foo/0", "path": "/0/bar/0"}])",
       R"([ {"foo": ["bar","qux","baz"], "bar": ["bar", "qux", "baz"]}])"},
      {R"([ { "foo": {"bar": ["qux","baz"]}, "baz": {"qux": "bum"}}])",
       R"([ { "op": "copy", "from": "/0/foo/bar", "path": "/0/baz/bar"}])",
       R"([ { "baz": {"bar": ["qux","baz"], "qux":"bum"}, "foo": {"bar": ["qux","baz"]}}])"},
      {R"({ "foo": ["bar"]})", R"([{"op": "copy", "path": "/foo/0", "from": "/foo"}])",
       R"({ "foo": [["bar"], "bar"]})"},
      {R"({ "foo": ["bar","qux","baz"]})", R"([ { "op": "remove", "path": "/foo/-2"}])",
       R"({ "foo": ["bar", "baz"]})"},
      {R"({ "foo": []})", R"([ { "op": "add", "path": "/foo/-1", "value": "qux"}])",
       R"({ "foo": ["qux"]})"},
      {R"({ "bar": [{"baz": null}]})",
       R"([ { "op": "replace", "path": "/bar/0/baz", "value": 1 } ])", R"({ "bar": [{"baz": 1}]})"},
      {R"({ "bar": [null]})", R"([ { "op": "replace", "path": "/bar/0", "value": 1 } ])",
       R"({ "bar": [1]})"},
      {R"({ "bar": [1]})", R"([ { "op": "replace", "path": "/bar/0", "value": null } ])",
       R"({ "bar": [null]})"},
      {R"({ "foo": ["A", ")" + a48 + R"("] })",
       R"([ { "op": "copy", "path": "/foo/-", "from": "/foo/1" },
            { "op": "copy", "path": "/foo/-", "from": "/foo/1" }])",
       R"({ "foo": ["A", ")" + a48 + R"(", ")" + a48 + R"(", ")" + a48 + R"("] })"},
  };
  for (const auto& [doc, patch, expected] : cases) {
    EXPECT_EQ(applyOk(json::parse(doc), patch, options), json::parse(expected)) << patch;
  }
}

TEST(EvanphxCasesTest, BadCasesFail) {
  JsonPatchOptions options;
  options.accumulated_copy_size_limit = 100;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {R"({ "foo": "bar" })", R"([ { "op": "add", "path": "/baz/bat", "value": "qux" } ])"},
      {R"({ "a": { "b": { "d": 1 } } })", R"([ { "op": "remove", "path": "/a/b/c" } ])"},
      {R"({ "a": { "b": { "d": 1 } } })",
       R"([ { "op": "move", "from": "/a/b/c", "path": "/a/b/e" } ])"},
      {R"({ "a": { "b": [1] } })", R"([ { "op": "remove", "path": "/a/b/1" } ])"},
      {R"({ "a": { "b": [1] } })", R"([ { "op": "move", "from": "/a/b/1", "path": "/a/b/2" } ])"},
      {R"({ "foo": "bar" })", R"([ { "op": "add", "pathz": "/baz", "value": "qux" } ])"},
      {R"({ "foo": "bar" })", R"([ { "op": "add", "path": "", "value": "qux" } ])"},
      {R"({ "foo": ["bar","baz"]})", R"([ { "op": "replace", "path": "/foo/2", "value": "bum"}])"},
      {R"({ "foo": ["bar","baz"]})", R"([ { "op": "add", "path": "/foo/-4", "value": "bum"}])"},
      {R"({ "name":{ "foo": "bat", "qux": "bum"}})",
       R"([ { "op": "replace", "path": "/foo/bar", "value":"baz"}])"},
      {R"({ "foo": ["bar"]})", R"([ {"op": "add", "path": "/foo/2", "value": "bum"}])"},
      {R"({ "foo": []})", R"([ {"op": "remove", "path": "/foo/-"}])"},
      {R"({ "foo": []})", R"([ {"op": "remove", "path": "/foo/-1"}])"},
      {R"({ "foo": ["bar"]})", R"([ {"op": "remove", "path": "/foo/-2"}])"},
      {R"({})", R"([ {"op":null,"path":""} ])"},
      {R"({})", R"([ {"op":"add","path":null} ])"},
      {R"({})", R"([ { "op": "copy", "from": null }])"},
      {R"({ "foo": ["bar"]})", R"([{"op": "copy", "path": "/foo/6666666666", "from": "/"}])"},
      {R"({ "foo": ["bar"]})", R"([{"op": "copy", "path": "/foo/2", "from": "/foo/0"}])"},
      {R"({ "foo": ["A", ")" + std::string(49, 'A') + R"("] })",
       R"([ { "op": "copy", "path": "/foo/-", "from": "/foo/1" },
            { "op": "copy", "path": "/foo/-", "from": "/foo/1" }])"},
      {R"({ "foo": [ "all", "grass", "cows", "eat" ] })",
       R"([ { "op": "move", "from": "/foo/1", "path": "/foo/4" } ])"},
  };
  for (const auto& [doc, patch] : cases) {
    EXPECT_FALSE(apply(json::parse(doc), patch, options).ok()) << patch;
  }
}

TEST(EvanphxCasesTest, TestOperationCases) {
  struct Case {
    std::string doc, patch;
    bool passes;
    std::string failed_path;
  };
  const std::vector<Case> cases = {
      {R"({"baz": "qux", "foo": [ "a", 2, "c" ]})",
       R"([{ "op": "test", "path": "/baz", "value": "qux" },
           { "op": "test", "path": "/foo/1", "value": 2 }])",
       true, ""},
      {R"({ "baz": "qux" })", R"([ { "op": "test", "path": "/baz", "value": "bar" } ])", false,
       "/baz"},
      {R"({"baz": "qux", "foo": ["a", 2, "c"]})",
       R"([{ "op": "test", "path": "/baz", "value": "qux" },
           { "op": "test", "path": "/foo/1", "value": "c" }])",
       false, "/foo/1"},
      {R"({ "baz": "qux" })", R"([ { "op": "test", "path": "/foo", "value": 42 } ])", false,
       "/foo"},
      {R"({ "baz": "qux" })", R"([ { "op": "test", "path": "/foo", "value": null } ])", true, ""},
      {R"({ "foo": null })", R"([ { "op": "test", "path": "/foo", "value": null } ])", true, ""},
      {R"({ "foo": {} })", R"([ { "op": "test", "path": "/foo", "value": null } ])", false, "/foo"},
      {R"({ "foo": [] })", R"([ { "op": "test", "path": "/foo", "value": null } ])", false, "/foo"},
      {R"({ "baz/foo": "qux" })", R"([ { "op": "test", "path": "/baz~1foo", "value": "qux"} ])",
       true, ""},
      {R"({ "foo": [] })", R"([ { "op": "test", "path": "/foo"} ])", false, "/foo"},
  };
  for (const auto& c : cases) {
    const std::string error = applyError(json::parse(c.doc), c.patch);
    if (c.passes) {
      EXPECT_EQ(error, "<no error>") << c.patch;
    } else {
      EXPECT_EQ(error, "testing value " + c.failed_path + " failed: test failed") << c.patch;
    }
  }
}

TEST(ApplyPatchTest, BuiltOperationsApply) {
  const JsonPatch patch = {PatchOperation::add("/metadata/labels", json::object()),
                           PatchOperation::add("/metadata/labels/app", "web"),
                           PatchOperation::replace("/spec/containers/0/image", "nginx:2"),
                           PatchOperation::test("/kind", "Pod")};
  auto out = applyPatch(kPod, patch);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ((*out)["metadata"]["labels"]["app"], "web");
  EXPECT_EQ((*out)["spec"]["containers"][0]["image"], "nginx:2");
}

TEST(DecodeParsedPatch, SameAsDecodingTheDumpedText) {
  // Operations, null elements, unknown and non-string members, and every error kind.
  for (const char* text : {
           R"([{"op":"add","path":"/a","value":{"b":[1,2.5,"x\u00e9"]}},null,{"op":7},{}])",
           R"([{"op":"move","from":"/a","path":"/b"},{"op":"test","path":"/c","value":null}])",
           "null", "[]", R"({"op":"add"})", R"([1])", R"([{"op":"add"},"x"])", "3"}) {
    SCOPED_TRACE(text);
    const auto parsed = json::parse(text);
    const auto from_text = decodePatch(parsed.dump());
    const auto from_value = decodeParsedPatch(parsed);
    ASSERT_EQ(from_text.ok(), from_value.ok());
    if (!from_text.ok()) {
      EXPECT_EQ(from_value.error().message, from_text.error().message);
      continue;
    }
    ASSERT_EQ(from_value->size(), from_text->size());
    for (std::size_t i = 0; i < from_text->size(); ++i) {
      EXPECT_EQ((*from_value)[i], (*from_text)[i]);
      EXPECT_EQ((*from_value)[i].raw, (*from_text)[i].raw);
    }
  }
}

}  // namespace
}  // namespace harness::core
