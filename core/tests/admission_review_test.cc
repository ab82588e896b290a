#include "harness/core/admission_review.h"

#include <string>

#include <gtest/gtest.h>

namespace harness::core {
namespace {

using nlohmann::json;

AdmissionRequest podCreate() {
  AdmissionRequest r;
  r.uid = "0df28fbd-5f5f-11e8-bc74-36e6bb280816";
  r.kind = {"", "v1", "Pod"};
  r.resource = {"", "v1", "pods"};
  r.request_kind = GroupVersionKind{"", "v1", "Pod"};
  r.request_resource = GroupVersionResource{"", "v1", "pods"};
  r.namespace_name = "default";
  r.operation = "CREATE";
  r.user_info.username = "admin";
  r.user_info.groups = {"system:masters", "system:authenticated"};
  r.object = json::parse(R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}})");
  r.dry_run = false;
  r.options = json::parse(R"({"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"})");
  return r;
}

AdmissionReview responseReview(std::string_view body) {
  auto decoded = decodeAdmissionReview(body);
  EXPECT_TRUE(decoded.ok()) << decoded.error().message;
  return decoded.ok() ? *decoded : AdmissionReview{};
}

std::string verifyError(ReviewVersion version, bool mutating, std::string_view body,
                        std::string_view uid = "u1") {
  auto verified = verifyAdmissionResponse(version, uid, mutating, responseReview(body));
  EXPECT_FALSE(verified.ok());
  return verified.ok() ? std::string() : verified.error().message;
}

VerifiedResponse verifyOk(ReviewVersion version, bool mutating, std::string_view body,
                          std::string_view uid = "u1") {
  auto verified = verifyAdmissionResponse(version, uid, mutating, responseReview(body));
  EXPECT_TRUE(verified.ok()) << verified.error().message;
  return verified.ok() ? *verified : VerifiedResponse{};
}

constexpr ReviewVersion kV1 = ReviewVersion::kV1;
constexpr ReviewVersion kV1beta1 = ReviewVersion::kV1beta1;

// --- version negotiation ---

TEST(ReviewVersionTest, PicksTheFirstKnownVersion) {
  EXPECT_EQ(*negotiateReviewVersion({"v1", "v1beta1"}), kV1);
  EXPECT_EQ(*negotiateReviewVersion({"v1beta1", "v1"}), kV1beta1);
}

TEST(ReviewVersionTest, SkipsUnknownVersions) {
  EXPECT_EQ(*negotiateReviewVersion({"v2", "v1alpha1", "v1beta1"}), kV1beta1);
}

TEST(ReviewVersionTest, FailsWhenNoVersionIsKnown) {
  const auto r = negotiateReviewVersion({"v2"});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "webhook does not accept known AdmissionReview versions (v1, v1beta1)");
  EXPECT_FALSE(negotiateReviewVersion({}).ok());
}

TEST(ReviewVersionTest, MapsApiVersions) {
  EXPECT_EQ(apiVersionOf(kV1), "admission.k8s.io/v1");
  EXPECT_EQ(apiVersionOf(kV1beta1), "admission.k8s.io/v1beta1");
  EXPECT_EQ(reviewVersionOf("admission.k8s.io/v1beta1"), kV1beta1);
  EXPECT_EQ(reviewVersionOf("admission.k8s.io/v2"), std::nullopt);
}

// --- encoding ---

TEST(AdmissionReviewEncodeTest, EncodesARequestLikeGo) {
  const auto review = makeRequestReview(kV1, podCreate());
  EXPECT_EQ(toJson(review), json::parse(R"({
    "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
    "request": {
      "uid": "0df28fbd-5f5f-11e8-bc74-36e6bb280816",
      "kind": {"group": "", "version": "v1", "kind": "Pod"},
      "resource": {"group": "", "version": "v1", "resource": "pods"},
      "requestKind": {"group": "", "version": "v1", "kind": "Pod"},
      "requestResource": {"group": "", "version": "v1", "resource": "pods"},
      "namespace": "default",
      "operation": "CREATE",
      "userInfo": {"username": "admin", "groups": ["system:masters", "system:authenticated"]},
      "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}},
      "oldObject": null,
      "dryRun": false,
      "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"}}})"));
}

TEST(AdmissionReviewEncodeTest, AbsentObjectsAreNullAndEmptyFieldsOmitted) {
  AdmissionRequest r;
  r.uid = "u";
  r.operation = "DELETE";
  EXPECT_EQ(toJson(r), json::parse(R"({"uid": "u",
    "kind": {"group": "", "version": "", "kind": ""},
    "resource": {"group": "", "version": "", "resource": ""},
    "operation": "DELETE", "userInfo": {}, "object": null, "oldObject": null,
    "options": null})"));
}

TEST(AdmissionReviewEncodeTest, V1beta1UsesItsApiVersion) {
  EXPECT_EQ(toJson(makeRequestReview(kV1beta1, podCreate()))["apiVersion"],
            "admission.k8s.io/v1beta1");
}

TEST(AdmissionReviewEncodeTest, EncodesUserInfoExtra) {
  AdmissionRequest r = podCreate();
  r.user_info.uid = "42";
  r.user_info.extra = {{"scopes", {"a", "b"}}};
  EXPECT_EQ(toJson(r)["userInfo"], json::parse(R"({"username": "admin", "uid": "42",
    "groups": ["system:masters", "system:authenticated"], "extra": {"scopes": ["a", "b"]}})"));
}

TEST(AdmissionReviewEncodeTest, EncodesAResponseWithBase64Patch) {
  AdmissionResponse resp;
  resp.uid = "u1";
  resp.allowed = true;
  resp.patch = R"([{"op":"add","path":"/a","value":1}])";
  resp.patch_type = "JSONPatch";
  resp.audit_annotations = {{"k", "v"}};
  resp.warnings = {"careful"};
  EXPECT_EQ(toJson(resp), json::parse(R"({"uid": "u1", "allowed": true,
    "patch": "W3sib3AiOiJhZGQiLCJwYXRoIjoiL2EiLCJ2YWx1ZSI6MX1d", "patchType": "JSONPatch",
    "auditAnnotations": {"k": "v"}, "warnings": ["careful"]})"));
}

TEST(AdmissionReviewEncodeTest, ResponseAlwaysHasUidAndAllowed) {
  EXPECT_EQ(toJson(AdmissionResponse{}), json::parse(R"({"uid": "", "allowed": false})"));
}

TEST(AdmissionReviewEncodeTest, ResponseStatusHasNoTypeMeta) {
  AdmissionResponse resp;
  resp.status = newForbidden(GroupResource{"", "pods"}, "p", "no");
  const auto j = toJson(resp);
  EXPECT_FALSE(j["status"].contains("kind"));
  EXPECT_EQ(j["status"]["metadata"], json::object());
  EXPECT_EQ(j["status"]["code"], 403);
}

TEST(AdmissionReviewEncodeTest, EncodedTextReplacesInvalidUtf8) {
  AdmissionRequest r = podCreate();
  r.name = "bad\xff";
  const std::string text = encodeAdmissionReview(makeRequestReview(kV1, r));
  EXPECT_NE(text.find("bad\xef\xbf\xbd"), std::string::npos);
}

// --- decoding ---

TEST(AdmissionReviewDecodeTest, RoundTripsARequestReview) {
  const auto review = makeRequestReview(kV1, podCreate());
  auto decoded = decodeAdmissionReview(encodeAdmissionReview(review));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(*decoded, review);
}

TEST(AdmissionReviewDecodeTest, RoundTripsAResponseReview) {
  AdmissionResponse resp;
  resp.uid = "u1";
  resp.patch = std::string("\x00\x01[]", 4);
  resp.patch_type = "";
  resp.status = newBadRequest("x");
  const auto review = makeResponseReview(makeRequestReview(kV1beta1, podCreate()), resp);
  auto decoded = decodeAdmissionReview(encodeAdmissionReview(review));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(*decoded, review);
}

TEST(AdmissionReviewDecodeTest, KeepsPatchBytesRaw) {
  const auto review = responseReview(
      R"({"response": {"uid": "u", "allowed": true, "patch": "W10=", "patchType": "JSONPatch"}})");
  EXPECT_EQ(review.response->patch, "[]");
}

TEST(AdmissionReviewDecodeTest, DistinguishesNullFromEmptyPatchType) {
  EXPECT_FALSE(responseReview(R"({"response": {"patchType": null}})").response->patch_type);
  EXPECT_EQ(responseReview(R"({"response": {"patchType": ""}})").response->patch_type, "");
}

TEST(AdmissionReviewDecodeTest, NullObjectsStayAbsent) {
  const auto review = responseReview(
      R"({"request": {"uid": "u", "object": null, "oldObject": {}, "dryRun": null}})");
  EXPECT_FALSE(review.request->object);
  EXPECT_EQ(review.request->old_object, json::object());
  EXPECT_FALSE(review.request->dry_run);
}

TEST(AdmissionReviewDecodeTest, IgnoresUnknownFields) {
  const auto review = responseReview(R"({"response": {"uid": "u", "allowed": true, "x": 1}})");
  EXPECT_TRUE(review.response->allowed);
}

TEST(AdmissionReviewDecodeTest, RejectsTextThatIsNotJson) {
  const auto decoded = decodeAdmissionReview("{\"response\": ");
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().message.rfind("invalid JSON: parse error at line 1, column ", 0), 0u)
      << decoded.error().message;
}

TEST(AdmissionReviewDecodeTest, RejectsANonObjectDocument) {
  const auto decoded = decodeAdmissionReview("[]");
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().message,
            "json: cannot unmarshal array into Go value of type v1.AdmissionReview");
}

TEST(AdmissionReviewDecodeTest, NamesTheFieldOfAWrongType) {
  const auto decoded = decodeAdmissionReview(R"({"response": {"allowed": "yes"}})");
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().message,
            "json: cannot unmarshal string into Go struct field AdmissionResponse.response.allowed "
            "of type bool");
}

TEST(AdmissionReviewDecodeTest, NamesNestedFieldsWithGoTypes) {
  EXPECT_EQ(decodeAdmissionReview(R"({"response": {"status": {"code": "x"}}})").error().message,
            "json: cannot unmarshal string into Go struct field Status.response.status.code of "
            "type int32");
  EXPECT_EQ(
      decodeAdmissionReview(R"({"request": {"kind": {"group": 1}}})").error().message,
      "json: cannot unmarshal number into Go struct field GroupVersionKind.request.kind.group "
      "of type string");
  EXPECT_EQ(decodeAdmissionReview(R"({"response": {"warnings": [1]}})").error().message,
            "json: cannot unmarshal number into Go struct field "
            "AdmissionResponse.response.warnings of type string");
  EXPECT_EQ(
      decodeAdmissionReview(R"({"request": {"userInfo": {"extra": {"a": "b"}}}})").error().message,
      "json: cannot unmarshal string into Go struct field UserInfo.request.userInfo.extra of "
      "type v1.ExtraValue");
}

TEST(AdmissionReviewDecodeTest, UsesV1beta1TypeNamesForV1beta1Reviews) {
  const auto decoded = decodeAdmissionReview(
      R"({"apiVersion": "admission.k8s.io/v1beta1", "response": {"patchType": 1}})");
  EXPECT_EQ(decoded.error().message,
            "json: cannot unmarshal number into Go struct field "
            "AdmissionResponse.response.patchType of type v1beta1.PatchType");
}

TEST(AdmissionReviewDecodeTest, RejectsInvalidBase64Patch) {
  const auto decoded = decodeAdmissionReview(R"({"response": {"patch": "W10"}})");
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().message, "illegal base64 data at input byte 0");
}

TEST(AdmissionReviewDecodeTest, RequestReviewMustHaveTypeMetaAndRequest) {
  EXPECT_EQ(decodeRequestReview(R"({"kind": "AdmissionReview", "request": {"uid": "u"}})")
                .error()
                .message,
            "apiVersion is missing (want admission.k8s.io/v1 or admission.k8s.io/v1beta1)");
  EXPECT_EQ(decodeRequestReview(R"({"apiVersion": "admission.k8s.io/v2"})").error().message,
            R"(apiVersion "admission.k8s.io/v2" is not admission.k8s.io/v1 or )"
            "admission.k8s.io/v1beta1");
  EXPECT_EQ(decodeRequestReview(R"({"apiVersion": "admission.k8s.io/v1"})").error().message,
            "kind is missing (want AdmissionReview)");
  EXPECT_EQ(decodeRequestReview(R"({"apiVersion": "admission.k8s.io/v1", "kind": "Pod"})")
                .error()
                .message,
            R"(kind "Pod" is not AdmissionReview)");
  EXPECT_EQ(decodeRequestReview(R"({"apiVersion": "admission.k8s.io/v1",
                                    "kind": "AdmissionReview"})")
                .error()
                .message,
            "request is missing");
  EXPECT_EQ(decodeRequestReview(R"({"apiVersion": "admission.k8s.io/v1",
                                    "kind": "AdmissionReview", "request": {}})")
                .error()
                .message,
            "request.uid is missing");
}

TEST(AdmissionReviewDecodeTest, RequestReviewAcceptsWhatTheApiserverSends) {
  const auto review = makeRequestReview(kV1beta1, podCreate());
  auto decoded = decodeRequestReview(encodeAdmissionReview(review));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(*decoded, review);
}

// The rvalue decoders take the request's objects out of the document instead of copying them,
// and decode the same review as the copying ones.
TEST(AdmissionReviewDecodeTest, DecodingAnRvalueMovesTheObjectsOut) {
  const auto review = makeRequestReview(kV1, podCreate());
  json document = toJson(review);
  document["request"]["oldObject"] = json::parse(R"({"kind": "Pod", "metadata": {"name": "o"}})");
  auto copied = requestReviewFromJson(document);
  ASSERT_TRUE(copied.ok()) << copied.error().message;
  auto moved = requestReviewFromJson(std::move(document));
  ASSERT_TRUE(moved.ok()) << moved.error().message;
  EXPECT_EQ(*moved, *copied);
  EXPECT_EQ(moved->request->object, review.request->object);
  EXPECT_EQ(moved->request->old_object->at("metadata")["name"], "o");
  // What was moved out is left null; the other members are as they were.
  EXPECT_TRUE(document["request"]["object"].is_null());  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(document["request"]["oldObject"].is_null());
  EXPECT_TRUE(document["request"]["options"].is_null());
  EXPECT_EQ(document["request"]["uid"], review.request->uid);
}

// --- builders ---

TEST(AdmissionReviewBuilderTest, ResponseReviewEchoesTypeMetaAndUid) {
  const auto request = makeRequestReview(kV1beta1, podCreate());
  AdmissionResponse resp;
  resp.allowed = true;
  const auto review = makeResponseReview(request, resp);
  EXPECT_EQ(review.api_version, "admission.k8s.io/v1beta1");
  EXPECT_EQ(review.kind, "AdmissionReview");
  EXPECT_EQ(review.response->uid, "0df28fbd-5f5f-11e8-bc74-36e6bb280816");
  EXPECT_FALSE(review.request);
}

TEST(AdmissionReviewBuilderTest, ResponseReviewKeepsAnExplicitUid) {
  AdmissionResponse resp;
  resp.uid = "other";
  EXPECT_EQ(makeResponseReview(makeRequestReview(kV1, podCreate()), resp).response->uid, "other");
}

// --- verification, v1 ---

constexpr std::string_view kV1Header =
    R"("apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview")";

std::string v1Body(std::string_view response) {
  return "{" + std::string(kV1Header) + ", \"response\": " + std::string(response) + "}";
}

TEST(VerifyV1Test, AbsentResponse) {
  EXPECT_EQ(verifyError(kV1, true, "{" + std::string(kV1Header) + "}"),
            "webhook response was absent");
}

TEST(VerifyV1Test, UidMismatch) {
  EXPECT_EQ(verifyError(kV1, true, v1Body(R"({"uid": "u2", "allowed": true})")),
            R"(expected response.uid="u1", got "u2")");
}

TEST(VerifyV1Test, MissingUid) {
  EXPECT_EQ(verifyError(kV1, false, v1Body(R"({"allowed": true})")),
            R"(expected response.uid="u1", got "")");
}

TEST(VerifyV1Test, WrongApiVersion) {
  EXPECT_EQ(verifyError(kV1, true, R"({"apiVersion": "admission.k8s.io/v1beta1",
      "kind": "AdmissionReview", "response": {"uid": "u1", "allowed": true}})"),
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got "
            "admission.k8s.io/v1beta1, Kind=AdmissionReview");
}

TEST(VerifyV1Test, MissingTypeMeta) {
  EXPECT_EQ(verifyError(kV1, true, R"({"response": {"uid": "u1", "allowed": true}})"),
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /, "
            "Kind=");
}

TEST(VerifyV1Test, WrongKind) {
  EXPECT_EQ(verifyError(kV1, true, R"({"apiVersion": "admission.k8s.io/v1", "kind": "Review",
      "response": {"uid": "u1", "allowed": true}})"),
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got "
            "admission.k8s.io/v1, Kind=Review");
}

TEST(VerifyV1Test, CoreGroupApiVersionIsPrintedWithEmptyGroup) {
  EXPECT_EQ(verifyError(kV1, true, R"({"apiVersion": "v1", "kind": "AdmissionReview",
      "response": {"uid": "u1", "allowed": true}})"),
            "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got /v1, "
            "Kind=AdmissionReview");
}

TEST(VerifyV1Test, UidIsCheckedBeforeTypeMeta) {
  EXPECT_EQ(verifyError(kV1, true, R"({"response": {"uid": "x", "allowed": true}})"),
            R"(expected response.uid="u1", got "x")");
}

TEST(VerifyV1Test, MutatingPatchWithoutPatchType) {
  EXPECT_EQ(verifyError(kV1, true, v1Body(R"({"uid": "u1", "allowed": true, "patch": "W10="})")),
            "webhook returned response.patch but not response.patchType");
}

TEST(VerifyV1Test, MutatingPatchTypeWithoutPatch) {
  EXPECT_EQ(
      verifyError(kV1, true, v1Body(R"({"uid": "u1", "allowed": true, "patchType": "JSONPatch"})")),
      "webhook returned response.patchType but not response.patch");
}

TEST(VerifyV1Test, MutatingEmptyPatchTypeWithoutPatchReportsTheMissingPatch) {
  EXPECT_EQ(verifyError(kV1, true, v1Body(R"({"uid": "u1", "allowed": true, "patchType": ""})")),
            "webhook returned response.patchType but not response.patch");
}

TEST(VerifyV1Test, MutatingEmptyPatchType) {
  EXPECT_EQ(verifyError(kV1, true, v1Body(R"({"uid": "u1", "allowed": true, "patch": "W10=",
                                              "patchType": ""})")),
            R"(webhook returned invalid response.patchType of "")");
}

TEST(VerifyV1Test, DenialWithPatchButNoPatchTypeIsInvalid) {
  EXPECT_EQ(verifyError(kV1, true, v1Body(R"({"uid": "u1", "allowed": false, "patch": "W10="})")),
            "webhook returned response.patch but not response.patchType");
}

TEST(VerifyV1Test, MutatingUnknownPatchTypePassesVerification) {
  const auto v = verifyOk(kV1, true, v1Body(R"({"uid": "u1", "allowed": true, "patch": "W10=",
                                               "patchType": "JSONMergePatch"})"));
  EXPECT_EQ(v.patch_type, "JSONMergePatch");
  EXPECT_EQ(v.patch, "[]");
}

TEST(VerifyV1Test, MutatingValidPatch) {
  const auto v = verifyOk(kV1, true, v1Body(R"({"uid": "u1", "allowed": true, "patch": "W10=",
                                               "patchType": "JSONPatch"})"));
  EXPECT_TRUE(v.allowed);
  EXPECT_EQ(v.patch, "[]");
  EXPECT_EQ(v.patch_type, "JSONPatch");
}

TEST(VerifyV1Test, EmptyPatchStringCountsAsNoPatch) {
  const auto v = verifyOk(kV1, true, v1Body(R"({"uid": "u1", "allowed": true, "patch": ""})"));
  EXPECT_EQ(v.patch, "");
  EXPECT_EQ(v.patch_type, "");
}

TEST(VerifyV1Test, ValidatingMayNotReturnPatch) {
  EXPECT_EQ(verifyError(kV1, false, v1Body(R"({"uid": "u1", "allowed": true, "patch": "W10=",
                                               "patchType": "JSONPatch"})")),
            "validating webhook may not return response.patch");
}

TEST(VerifyV1Test, ValidatingMayNotReturnPatchType) {
  EXPECT_EQ(verifyError(kV1, false,
                        v1Body(R"({"uid": "u1", "allowed": true, "patchType": "JSONPatch"})")),
            "validating webhook may not return response.patchType");
}

TEST(VerifyV1Test, PassesThroughStatusAnnotationsAndWarnings) {
  const auto v = verifyOk(kV1, false, v1Body(R"({"uid": "u1", "allowed": false,
      "status": {"code": 403, "message": "nope", "reason": "Forbidden"},
      "auditAnnotations": {"k": "v"}, "warnings": ["w1", "w2"]})"));
  EXPECT_FALSE(v.allowed);
  ASSERT_TRUE(v.status);
  EXPECT_EQ(v.status->message, "nope");
  EXPECT_EQ(v.status->code, 403);
  EXPECT_EQ(v.audit_annotations, (std::map<std::string, std::string>{{"k", "v"}}));
  EXPECT_EQ(v.warnings, (std::vector<std::string>{"w1", "w2"}));
}

TEST(VerifyTest, FullTextHasTheCallingErrorPrefix) {
  EXPECT_EQ(invalidWebhookResponseText("webhook response was absent"),
            "received invalid webhook response: webhook response was absent");
}

// --- verification, v1beta1 leniency ---

TEST(VerifyV1beta1Test, AbsentResponseIsStillAnError) {
  EXPECT_EQ(verifyError(kV1beta1, true, R"({"apiVersion": "admission.k8s.io/v1beta1"})"),
            "webhook response was absent");
}

TEST(VerifyV1beta1Test, IgnoresUidAndTypeMeta) {
  const auto v = verifyOk(kV1beta1, true, R"({"response": {"uid": "zzz", "allowed": true}})");
  EXPECT_TRUE(v.allowed);
}

TEST(VerifyV1beta1Test, MutatingPatchIsAlwaysJsonPatch) {
  EXPECT_EQ(
      verifyOk(kV1beta1, true, R"({"response": {"allowed": true, "patch": "W10="}})").patch_type,
      "JSONPatch");
  EXPECT_EQ(verifyOk(kV1beta1, true, R"({"response": {"allowed": true, "patch": "W10=",
                                                     "patchType": "Other"}})")
                .patch_type,
            "JSONPatch");
}

TEST(VerifyV1beta1Test, MutatingPatchTypeWithoutPatchIsIgnored) {
  const auto v = verifyOk(kV1beta1, true, R"({"response": {"allowed": true,
                                                          "patchType": "JSONPatch"}})");
  EXPECT_EQ(v.patch_type, "");
  EXPECT_EQ(v.patch, "");
}

TEST(VerifyV1beta1Test, ValidatingPatchIsIgnored) {
  const auto v = verifyOk(kV1beta1, false, R"({"response": {"allowed": true, "patch": "W10=",
                                                           "patchType": "JSONPatch"}})");
  EXPECT_EQ(v.patch, "");
  EXPECT_EQ(v.patch_type, "");
}

TEST(GroupVersionKindStringTest, ParsesApiVersionsLikeSchema) {
  EXPECT_EQ(groupVersionKindString("apps/v1", "Deployment"), "apps/v1, Kind=Deployment");
  EXPECT_EQ(groupVersionKindString("v1", "Pod"), "/v1, Kind=Pod");
  EXPECT_EQ(groupVersionKindString("", ""), "/, Kind=");
  EXPECT_EQ(groupVersionKindString("/", "X"), "/, Kind=X");
  EXPECT_EQ(groupVersionKindString("a/b/c", "X"), "/, Kind=X");
}

}  // namespace
}  // namespace harness::core
