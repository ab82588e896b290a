// parseStubSpec: the scenario's stub format, read from YAML as a scenario would, and the errors
// that name the field path.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "harness/core/yaml.h"
#include "harness/sim/stub_webhook.h"

namespace harness::sim {
namespace {

using nlohmann::json;

core::Result<StubSpec> parse(const std::string& yaml) {
  auto document = core::parseYaml(yaml);
  EXPECT_TRUE(document.ok()) << document.error().message;
  return parseStubSpec(document.ok() ? *document : json());
}

std::string errorOf(const std::string& yaml) {
  auto spec = parse(yaml);
  EXPECT_FALSE(spec.ok());
  return spec.ok() ? std::string("<parsed>") : spec.error().message;
}

TEST(ParseStubSpec, EmptyObjectIsAValidStubThatAllows) {
  auto spec = parse("{}");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->tls, StubTls::kValid);
  EXPECT_TRUE(spec->responses.empty());
}

TEST(ParseStubSpec, ReadsTlsModes) {
  EXPECT_EQ(parse("tls: untrusted")->tls, StubTls::kUntrusted);
  EXPECT_EQ(parse("tls: wrong-host")->tls, StubTls::kWrongHost);
  EXPECT_EQ(parse("tls: valid")->tls, StubTls::kValid);
}

TEST(ParseStubSpec, ReadsEveryCondition) {
  auto spec = parse(R"(
responses:
- when:
    operation: UPDATE
    dryRun: true
    subResource: status
    kind: Pod
    namespace: apps
    name: web
    call: [2, 3]
    path: /mutate
    pointers:
      /request/object/metadata/labels/app: web
      /request/oldObject: null
)");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const auto& when = spec->responses.at(0).when;
  EXPECT_EQ(when.operation, "UPDATE");
  EXPECT_EQ(when.dry_run, true);
  EXPECT_EQ(when.sub_resource, "status");
  EXPECT_EQ(when.kind, "Pod");
  EXPECT_EQ(when.namespace_name, "apps");
  EXPECT_EQ(when.name, "web");
  EXPECT_EQ(when.calls, (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(when.path, "/mutate");
  ASSERT_EQ(when.pointers.size(), 2u);
  EXPECT_EQ(when.pointers[0].first, "/request/object/metadata/labels/app");
  EXPECT_EQ(when.pointers[0].second, "web");
  EXPECT_TRUE(when.pointers[1].second.is_null());
}

TEST(ParseStubSpec, ASingleCallNumberIsAListOfOne) {
  auto spec = parse("responses: [{when: {call: 4}}]");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->responses[0].when.calls, std::vector<std::size_t>{4});
}

TEST(ParseStubSpec, ReadsEveryBehaviourField) {
  auto spec = parse(R"(
responses:
- respond:
    allowed: false
    status: {code: 403, message: "no", reason: Forbidden}
    patch: [{op: add, path: /metadata/labels/x, value: v}]
    patchType: JSONPatch
    warnings: [w1, w2]
    auditAnnotations: {key: value}
    delay: 1m30s
    uid: other
    apiVersion: admission.k8s.io/v1beta1
    kind: Foo
    omitResponse: true
)");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const auto& b = spec->responses.at(0).sequence.at(0);
  EXPECT_FALSE(spec->responses[0].is_sequence);
  EXPECT_FALSE(b.allowed);
  EXPECT_EQ(*b.status, (json{{"code", 403}, {"message", "no"}, {"reason", "Forbidden"}}));
  EXPECT_EQ(b.patch, R"([{"op":"add","path":"/metadata/labels/x","value":"v"}])");
  EXPECT_TRUE(b.patch_type_overridden);
  EXPECT_EQ(b.patch_type, "JSONPatch");
  EXPECT_EQ(b.warnings, (std::vector<std::string>{"w1", "w2"}));
  EXPECT_EQ(b.audit_annotations.at("key"), "value");
  EXPECT_EQ(b.delay, std::chrono::seconds(90));
  EXPECT_EQ(b.uid, "other");
  EXPECT_EQ(b.api_version, "admission.k8s.io/v1beta1");
  EXPECT_EQ(b.kind, "Foo");
  EXPECT_TRUE(b.omit_response);
}

TEST(ParseStubSpec, PatchTypeNullIsAnOverrideThatOmits) {
  auto spec = parse("responses: [{respond: {patch: [], patchType: null}}]");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const auto& b = spec->responses[0].sequence[0];
  EXPECT_TRUE(b.patch_type_overridden);
  EXPECT_FALSE(b.patch_type.has_value());
}

TEST(ParseStubSpec, PatchTypeEmptyStringIsKept) {
  auto spec = parse("responses: [{respond: {patchType: ''}}]");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->responses[0].sequence[0].patch_type, "");
}

TEST(ParseStubSpec, RawPatchIsTakenVerbatim) {
  auto spec = parse("responses: [{respond: {rawPatch: '[{'}}]");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  EXPECT_EQ(spec->responses[0].sequence[0].patch, "[{");
  EXPECT_FALSE(spec->responses[0].sequence[0].patch_type_overridden);
}

TEST(ParseStubSpec, ReadsAnHttpAnswer) {
  auto spec = parse(R"(
responses:
- respond:
    http: {status: 500, body: boom, contentType: text/plain, headers: {Retry-After: "1"}}
    delay: 10ms
)");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  const auto& http = spec->responses[0].sequence[0].http;
  ASSERT_TRUE(http);
  EXPECT_EQ(http->status, 500);
  EXPECT_EQ(http->body, "boom");
  EXPECT_EQ(http->content_type, "text/plain");
  ASSERT_EQ(http->headers.size(), 1u);
  EXPECT_EQ(http->headers[0], (std::pair<std::string, std::string>{"Retry-After", "1"}));
}

TEST(ParseStubSpec, ReadsASequence) {
  auto spec = parse("responses: [{sequence: [{allowed: false}, {close: true}]}]");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  ASSERT_EQ(spec->responses[0].sequence.size(), 2u);
  EXPECT_TRUE(spec->responses[0].is_sequence);
  EXPECT_TRUE(spec->responses[0].sequence[1].close);
}

TEST(ParseStubSpec, ARuleWithoutAnswerAllows) {
  auto spec = parse("responses: [{when: {kind: Pod}}]");
  ASSERT_TRUE(spec.ok()) << spec.error().message;
  ASSERT_EQ(spec->responses[0].sequence.size(), 1u);
  EXPECT_TRUE(spec->responses[0].sequence[0].allowed);
}

// --- errors ---

TEST(ParseStubSpecErrors, InvalidDurationNamesTheField) {
  EXPECT_EQ(errorOf(R"(
responses:
- respond: {}
- respond: {delay: soon}
)"),
            "stub.responses[1].respond.delay: invalid duration \"soon\"");
}

// The scenario loader locates the error by its field, never by reading the message.
TEST(ParseStubSpecErrors, ErrorsCarryTheirFieldAndText) {
  auto spec = parse("responses: [{respond: {delay: soon}}]");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().code, core::ErrorCode::kInvalid);
  EXPECT_EQ(spec.error().field, "stub.responses[0].respond.delay");
  EXPECT_EQ(spec.error().text(), "invalid duration \"soon\"");

  spec = parse("tls: expired");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().field, "stub.tls");
  EXPECT_THAT(spec.error().text(), ::testing::StartsWith("Unsupported value: \"expired\""));

  spec = parse("responses: [{respond: {colour: red}}]");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().field, "stub.responses[0].respond");
  EXPECT_EQ(spec.error().text(), "unknown field \"colour\"");
}

// Go's time.ParseDuration reads "2" and then the unit " seconds".
TEST(ParseStubSpecErrors, DurationWithAnUnknownUnitUsesGosText) {
  EXPECT_EQ(errorOf("responses: [{respond: {delay: 2 seconds}}]"),
            "stub.responses[0].respond.delay: unknown unit \" seconds\" in duration "
            "\"2 seconds\"");
}

TEST(ParseStubSpecErrors, DurationWithoutUnit) {
  EXPECT_EQ(errorOf("responses: [{respond: {delay: '5'}}]"),
            "stub.responses[0].respond.delay: missing unit in duration \"5\"");
}

TEST(ParseStubSpecErrors, NegativeDelay) {
  EXPECT_EQ(errorOf("responses: [{respond: {delay: -1s}}]"),
            "stub.responses[0].respond.delay: must not be negative, got \"-1s\"");
}

TEST(ParseStubSpecErrors, DelayMustBeAString) {
  EXPECT_EQ(errorOf("responses: [{respond: {delay: 5}}]"),
            "stub.responses[0].respond.delay: must be a string, got number");
}

TEST(ParseStubSpecErrors, UnsupportedTlsMode) {
  EXPECT_EQ(errorOf("tls: expired"),
            "stub.tls: Unsupported value: \"expired\": supported values: \"valid\", "
            "\"untrusted\", \"wrong-host\"");
}

TEST(ParseStubSpecErrors, TopLevelMustBeAnObject) {
  EXPECT_EQ(errorOf("[1]"), "stub: must be an object, got array");
}

TEST(ParseStubSpecErrors, UsesTheCallersPath) {
  auto spec = parseStubSpec(json{{"tls", 1}}, "webhooks.mine.stub");
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.error().message, "webhooks.mine.stub.tls: must be a string, got number");
}

TEST(ParseStubSpecErrors, UnknownTopLevelField) {
  EXPECT_EQ(errorOf("response: []"), "stub: unknown field \"response\"");
}

TEST(ParseStubSpecErrors, UnknownConditionField) {
  EXPECT_EQ(errorOf("responses: [{when: {operations: CREATE}}]"),
            "stub.responses[0].when: unknown field \"operations\"");
}

TEST(ParseStubSpecErrors, UnknownBehaviourField) {
  EXPECT_EQ(errorOf("responses: [{sequence: [{}, {allow: true}]}]"),
            "stub.responses[0].sequence[1]: unknown field \"allow\"");
}

TEST(ParseStubSpecErrors, ResponsesMustBeAList) {
  EXPECT_EQ(errorOf("responses: {a: 1}"), "stub.responses: must be a list of rules, got object");
}

TEST(ParseStubSpecErrors, UnsupportedOperation) {
  EXPECT_EQ(errorOf("responses: [{when: {operation: create}}]"),
            "stub.responses[0].when.operation: Unsupported value: \"create\": supported values: "
            "\"CREATE\", \"UPDATE\", \"DELETE\", \"CONNECT\"");
}

TEST(ParseStubSpecErrors, DryRunMustBeABoolean) {
  EXPECT_EQ(errorOf("responses: [{when: {dryRun: 'maybe'}}]"),
            "stub.responses[0].when.dryRun: must be a boolean, got string");
}

TEST(ParseStubSpecErrors, CallNumberMustBePositive) {
  EXPECT_EQ(errorOf("responses: [{when: {call: 0}}]"),
            "stub.responses[0].when.call: must be a positive integer, got 0");
}

TEST(ParseStubSpecErrors, CallListEntriesAreChecked) {
  EXPECT_EQ(errorOf("responses: [{when: {call: [1, two]}}]"),
            "stub.responses[0].when.call[1]: must be a positive integer, got string");
}

TEST(ParseStubSpecErrors, CallListMustNotBeEmpty) {
  EXPECT_EQ(errorOf("responses: [{when: {call: []}}]"),
            "stub.responses[0].when.call: must not be empty");
}

TEST(ParseStubSpecErrors, PathMustStartWithASlash) {
  EXPECT_EQ(errorOf("responses: [{when: {path: mutate}}]"),
            "stub.responses[0].when.path: must start with \"/\", got \"mutate\"");
}

TEST(ParseStubSpecErrors, PointerMustParse) {
  EXPECT_EQ(errorOf("responses: [{when: {pointers: {request/uid: x}}}]"),
            "stub.responses[0].when.pointers[request/uid]: invalid json pointer "
            "\"request/uid\": it must be empty or start with \"/\"");
}

TEST(ParseStubSpecErrors, BadPointerEscape) {
  EXPECT_NE(errorOf("responses: [{when: {pointers: {/a~2: x}}}]")
                .find("stub.responses[0].when.pointers[/a~2]: "),
            std::string::npos);
}

TEST(ParseStubSpecErrors, RespondAndSequenceTogether) {
  EXPECT_EQ(errorOf("responses: [{respond: {}, sequence: [{}]}]"),
            "stub.responses[0].sequence: may not be combined with respond");
}

TEST(ParseStubSpecErrors, EmptySequence) {
  EXPECT_EQ(errorOf("responses: [{sequence: []}]"),
            "stub.responses[0].sequence: must not be empty");
}

TEST(ParseStubSpecErrors, PatchAndRawPatchTogether) {
  EXPECT_EQ(errorOf("responses: [{respond: {patch: [], rawPatch: '[]'}}]"),
            "stub.responses[0].respond.rawPatch: may not be combined with patch");
}

TEST(ParseStubSpecErrors, PatchMustBeAList) {
  EXPECT_EQ(errorOf("responses: [{respond: {patch: {op: add}}}]"),
            "stub.responses[0].respond.patch: must be a list of JSON patch operations, got "
            "object");
}

TEST(ParseStubSpecErrors, PatchTypeMustBeAStringOrNull) {
  EXPECT_EQ(errorOf("responses: [{respond: {patchType: 1}}]"),
            "stub.responses[0].respond.patchType: must be a string or null, got number");
}

TEST(ParseStubSpecErrors, StatusMustBeAnObject) {
  EXPECT_EQ(errorOf("responses: [{respond: {status: Forbidden}}]"),
            "stub.responses[0].respond.status: must be an object, got string");
}

TEST(ParseStubSpecErrors, WarningsMustBeStrings) {
  EXPECT_EQ(errorOf("responses: [{respond: {warnings: [ok, [x]]}}]"),
            "stub.responses[0].respond.warnings[1]: must be a string, got array");
}

TEST(ParseStubSpecErrors, AuditAnnotationValuesMustBeStrings) {
  EXPECT_EQ(errorOf("responses: [{respond: {auditAnnotations: {a: {b: c}}}}]"),
            "stub.responses[0].respond.auditAnnotations[a]: must be a string, got object");
}

TEST(ParseStubSpecErrors, HttpStatusOutOfRange) {
  EXPECT_EQ(errorOf("responses: [{respond: {http: {status: 1000}}}]"),
            "stub.responses[0].respond.http.status: must be between 100 and 999, got 1000");
}

TEST(ParseStubSpecErrors, HttpHeaderNameMustBeAToken) {
  EXPECT_EQ(errorOf("responses: [{respond: {http: {headers: {'Bad Header': x}}}}]"),
            "stub.responses[0].respond.http.headers[Bad Header]: invalid header name");
}

TEST(ParseStubSpecErrors, HttpHeaderValueMayNotSplitTheHeader) {
  EXPECT_EQ(errorOf("responses: [{respond: {http: {headers: {X-A: \"a\\r\\nX-B: b\"}}}}]"),
            "stub.responses[0].respond.http.headers[X-A]: must not contain CR, LF or NUL");
}

TEST(ParseStubSpecErrors, UnknownHttpField) {
  EXPECT_EQ(errorOf("responses: [{respond: {http: {code: 500}}}]"),
            "stub.responses[0].respond.http: unknown field \"code\"");
}

TEST(ParseStubSpecErrors, HttpMayNotBeCombinedWithReviewFields) {
  EXPECT_EQ(errorOf("responses: [{respond: {http: {status: 500}, allowed: false}}]"),
            "stub.responses[0].respond: http may only be combined with delay, not allowed");
}

TEST(ParseStubSpecErrors, CloseMayNotBeCombinedWithAPatch) {
  EXPECT_EQ(errorOf("responses: [{respond: {close: true, patch: []}}]"),
            "stub.responses[0].respond: close may only be combined with delay, not patch");
}

TEST(ParseStubSpecErrors, CloseMayNotBeCombinedWithHttp) {
  EXPECT_EQ(errorOf("responses: [{respond: {close: true, http: {}}}]"),
            "stub.responses[0].respond: close may only be combined with delay, not http");
}

TEST(ParseStubSpecErrors, RuleMustBeAnObject) {
  EXPECT_EQ(errorOf("responses: [allow]"), "stub.responses[0]: must be an object, got string");
}

}  // namespace
}  // namespace harness::sim
