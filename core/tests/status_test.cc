#include "harness/core/status.h"

#include <string>

#include <gtest/gtest.h>

namespace harness::core {
namespace {

using nlohmann::json;

const GroupResource kPods{"", "pods"};
const GroupResource kDeployments{"apps", "deployments"};

TEST(StatusJsonTest, EncodesInternalErrorLikeGo) {
  EXPECT_EQ(toJson(newInternalError("boom")), json::parse(R"({
    "metadata": {}, "status": "Failure", "message": "Internal error occurred: boom",
    "reason": "InternalError", "details": {"causes": [{"message": "boom"}]}, "code": 500})"));
}

TEST(StatusJsonTest, OmitsEmptyFieldsButAlwaysWritesMetadata) {
  EXPECT_EQ(toJson(Status{}), json::parse(R"({"metadata": {}})"));
}

TEST(StatusJsonTest, WritesNonNilEmptyDetailsAsEmptyObject) {
  Status s;
  s.details = StatusDetails{};
  EXPECT_EQ(toJson(s), json::parse(R"({"metadata": {}, "details": {}})"));
}

TEST(StatusJsonTest, WritesCauseTypeAsReason) {
  Status s;
  s.details = StatusDetails{"n", "g", "k", "u", {{"FieldValueInvalid", "m", "f"}}, 5};
  EXPECT_EQ(toJson(s)["details"], json::parse(R"({"name": "n", "group": "g", "kind": "k",
    "uid": "u", "causes": [{"reason": "FieldValueInvalid", "message": "m", "field": "f"}],
    "retryAfterSeconds": 5})"));
}

TEST(StatusJsonTest, WithTypeMetaSetsKindAndApiVersion) {
  const auto j = toJson(newBadRequest("no").withTypeMeta());
  EXPECT_EQ(j["kind"], "Status");
  EXPECT_EQ(j["apiVersion"], "v1");
}

TEST(StatusJsonTest, RoundTripsThroughJson) {
  Status s =
      newInvalid(GroupKind{"apps", "Deployment"}, "d", {FieldError::required("spec.replicas")})
          .withTypeMeta();
  s.metadata = json::parse(R"({"resourceVersion": "7"})");
  auto decoded = statusFromJson(toJson(s));
  ASSERT_TRUE(decoded.ok()) << decoded.error().message;
  EXPECT_EQ(*decoded, s);
}

TEST(StatusJsonTest, DecodingIgnoresUnknownFieldsAndNulls) {
  auto decoded = statusFromJson(
      json::parse(R"({"code": null, "message": "m", "extra": 1, "details": {"causes": [null]}})"));
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->code, 0);
  EXPECT_EQ(decoded->message, "m");
  ASSERT_TRUE(decoded->details);
  EXPECT_EQ(decoded->details->causes.size(), 1u);
}

TEST(StatusJsonTest, DecodingReportsGoTypeErrors) {
  auto decoded = statusFromJson(json::parse(R"({"code": "500"})"));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().message,
            "json: cannot unmarshal string into Go struct field Status.code of type int32");
}

TEST(StatusJsonTest, DecodingNamesTheEnclosingPath) {
  auto decoded = statusFromJson(json::parse(R"({"details": {"causes": [{"field": 3}]}})"),
                                "response.status", "AdmissionResponse");
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().message,
            "json: cannot unmarshal number into Go struct field "
            "StatusCause.response.status.details.causes.field of type string");
}

TEST(StatusJsonTest, DecodingRejectsFractionalCodes) {
  auto decoded = statusFromJson(json::parse(R"({"code": 1.5})"));
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().message,
            "json: cannot unmarshal number 1.5 into Go struct field Status.code of type int32");
}

TEST(StatusJsonTest, DecodingRejectsNonObjects) {
  auto decoded = statusFromJson(json::parse(R"("x")"), "response.status", "AdmissionResponse");
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.error().message,
            "json: cannot unmarshal string into Go struct field AdmissionResponse.response.status "
            "of type v1.Status");
}

TEST(StatusErrorsTest, NotFoundNamesResourceAndGroup) {
  const auto s = newNotFound(kDeployments, "web");
  EXPECT_EQ(s.message, R"(deployments.apps "web" not found)");
  EXPECT_EQ(s.code, 404);
  EXPECT_EQ(s.reason, "NotFound");
  EXPECT_EQ(s.status, "Failure");
  EXPECT_EQ(s.details, (StatusDetails{"web", "apps", "deployments", "", {}, 0}));
  EXPECT_EQ(newNotFound(GroupResource{"", "namespaces"}, "ns").message,
            R"(namespaces "ns" not found)");
}

TEST(StatusErrorsTest, AlreadyExists) {
  const auto s = newAlreadyExists(kPods, "p");
  EXPECT_EQ(s.message, R"(pods "p" already exists)");
  EXPECT_EQ(s.code, 409);
  EXPECT_EQ(s.reason, "AlreadyExists");
}

TEST(StatusErrorsTest, ForbiddenWithName) {
  const auto s = newForbidden(kDeployments, "name", "test error");
  EXPECT_EQ(s.message, R"(deployments.apps "name" is forbidden: test error)");
  EXPECT_EQ(s.code, 403);
  EXPECT_EQ(s.reason, "Forbidden");
  EXPECT_EQ(s.details, (StatusDetails{"name", "apps", "deployments", "", {}, 0}));
}

TEST(StatusErrorsTest, ForbiddenWithoutName) {
  EXPECT_EQ(newForbidden(kPods, "", "nope").message, "pods is forbidden: nope");
}

TEST(StatusErrorsTest, ForbiddenWithoutResource) {
  EXPECT_EQ(newForbidden(GroupResource{}, "x", "not yet ready to handle request").message,
            "forbidden: not yet ready to handle request");
}

TEST(StatusErrorsTest, Conflict) {
  const auto s = newConflict(kPods, "p", "the object has been modified");
  EXPECT_EQ(s.message,
            R"(Operation cannot be fulfilled on pods "p": the object has been modified)");
  EXPECT_EQ(s.code, 409);
  EXPECT_EQ(s.reason, "Conflict");
}

TEST(StatusErrorsTest, InvalidAggregatesFieldErrorsAndListsCauses) {
  const FieldErrors errors = {
      FieldError::required("webhooks[0].sideEffects", "must specify one of None, NoneOnDryRun"),
      FieldError::invalid("webhooks[0].timeoutSeconds", std::int64_t{31},
                          "the timeout value must be between 1 and 30 seconds")};
  const auto s = newInvalid(
      GroupKind{"admissionregistration.k8s.io", "MutatingWebhookConfiguration"}, "cfg", errors);
  EXPECT_EQ(s.message,
            "MutatingWebhookConfiguration.admissionregistration.k8s.io \"cfg\" is invalid: "
            "[webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun, "
            "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 "
            "and 30 seconds]");
  EXPECT_EQ(s.code, 422);
  EXPECT_EQ(s.reason, "Invalid");
  ASSERT_TRUE(s.details);
  EXPECT_EQ(s.details->kind, "MutatingWebhookConfiguration");
  EXPECT_EQ(s.details->group, "admissionregistration.k8s.io");
  EXPECT_EQ(s.details->name, "cfg");
  ASSERT_EQ(s.details->causes.size(), 2u);
  EXPECT_EQ(
      s.details->causes[0],
      (StatusCause{"FieldValueRequired", "Required value: must specify one of None, NoneOnDryRun",
                   "webhooks[0].sideEffects"}));
  EXPECT_EQ(s.details->causes[1].type, "FieldValueInvalid");
  EXPECT_EQ(s.details->causes[1].message,
            "Invalid value: 31: the timeout value must be between 1 and 30 seconds");
}

TEST(StatusErrorsTest, InvalidWithoutErrorsHasNoColon) {
  EXPECT_EQ(newInvalid(GroupKind{"", "Pod"}, "p", {}).message, R"(Pod "p" is invalid)");
}

TEST(StatusErrorsTest, BadRequestUnauthorizedServiceUnavailable) {
  EXPECT_EQ(newBadRequest("admission webhook \"a.b.c\" does not support dry run").code, 400);
  EXPECT_EQ(newBadRequest("x").reason, "BadRequest");
  EXPECT_FALSE(newBadRequest("x").details.has_value());
  EXPECT_EQ(newUnauthorized("").message, "not authorized");
  EXPECT_EQ(newUnauthorized("").code, 401);
  const auto s = newServiceUnavailable("error calling webhook");
  EXPECT_EQ(s.code, 503);
  EXPECT_EQ(s.reason, "ServiceUnavailable");
  EXPECT_EQ(s.message, "error calling webhook");
}

TEST(StatusErrorsTest, MethodNotSupported) {
  const auto s = newMethodNotSupported(kPods, "create");
  EXPECT_EQ(s.message, R"(create is not supported on resources of kind "pods")");
  EXPECT_EQ(s.code, 405);
  EXPECT_EQ(s.reason, "MethodNotAllowed");
}

TEST(StatusErrorsTest, ServerTimeout) {
  const auto s = newServerTimeout(kPods, "create", 2);
  EXPECT_EQ(s.message,
            "The create operation against pods could not be completed at this time, please try "
            "again.");
  EXPECT_EQ(s.code, 500);
  EXPECT_EQ(s.reason, "ServerTimeout");
  EXPECT_EQ(s.details->retry_after_seconds, 2);
  EXPECT_EQ(s.details->name, "create");
}

TEST(StatusErrorsTest, InternalErrorKeepsTheCause) {
  const auto s = newInternalError(R"(failed calling webhook "a.b.c": failed to call webhook: EOF)");
  EXPECT_EQ(
      s.message,
      R"(Internal error occurred: failed calling webhook "a.b.c": failed to call webhook: EOF)");
  EXPECT_EQ(s.code, 500);
  ASSERT_TRUE(s.details);
  ASSERT_EQ(s.details->causes.size(), 1u);
  EXPECT_EQ(s.details->causes[0].message,
            R"(failed calling webhook "a.b.c": failed to call webhook: EOF)");
  EXPECT_EQ(s.details->causes[0].type, "");
}

TEST(StatusErrorsTest, RequestTimeoutIs504WithEmptyDetails) {
  const auto s = newRequestTimeout();
  EXPECT_EQ(s.message, "Timeout: request did not complete within requested timeout");
  EXPECT_EQ(s.code, 504);
  EXPECT_EQ(s.reason, "Timeout");
  EXPECT_EQ(toJson(s)["details"], json::object());
}

TEST(StatusErrorsTest, TooManyRequestsAndEntityTooLarge) {
  EXPECT_EQ(newTooManyRequestsError("slow down").message, "Too many requests: slow down");
  EXPECT_EQ(newTooManyRequests("x", 3).details->retry_after_seconds, 3);
  EXPECT_EQ(newRequestEntityTooLargeError("limit is 3145728").message,
            "Request entity too large: limit is 3145728");
  EXPECT_EQ(newRequestEntityTooLargeError("x").code, 413);
}

TEST(StatusErrorsTest, GoneAndExpired) {
  EXPECT_EQ(newGone("g").reason, "Gone");
  EXPECT_EQ(newResourceExpired("e").reason, "Expired");
  EXPECT_EQ(newResourceExpired("e").code, 410);
}

Status generic(int code, std::string_view verb = "POST", std::string_view body = "boom") {
  return newGenericServerResponse(code, verb, GroupResource{}, "", body, 0, true);
}

TEST(GenericServerResponseTest, InternalServerErrorQuotesTheBody) {
  const auto s = generic(500);
  EXPECT_EQ(s.message,
            R"(an error on the server ("boom") has prevented the request from succeeding)");
  EXPECT_EQ(s.reason, "InternalError");
  EXPECT_EQ(s.code, 500);
  ASSERT_TRUE(s.details);
  EXPECT_EQ(s.details->causes,
            (std::vector<StatusCause>{{"UnexpectedServerResponse", "boom", ""}}));
}

TEST(GenericServerResponseTest, OtherServerErrorsUseTheSameText) {
  EXPECT_EQ(
      generic(502, "POST", "bad \"gateway\"").message,
      R"(an error on the server ("bad \"gateway\"") has prevented the request from succeeding)");
  EXPECT_EQ(generic(502).reason, "InternalError");
}

TEST(GenericServerResponseTest, ServiceUnavailable) {
  EXPECT_EQ(generic(503).message, "the server is currently unable to handle the request");
  EXPECT_EQ(generic(503).reason, "ServiceUnavailable");
}

TEST(GenericServerResponseTest, GatewayTimeout) {
  EXPECT_EQ(generic(504).message,
            "the server was unable to return a response in the time allotted, but may still be "
            "processing the request");
  EXPECT_EQ(generic(504).reason, "Timeout");
}

TEST(GenericServerResponseTest, NotFoundAndBadRequest) {
  EXPECT_EQ(generic(404).message, "the server could not find the requested resource");
  EXPECT_EQ(generic(404).reason, "NotFound");
  EXPECT_EQ(generic(400).message, "the server rejected our request for an unknown reason");
  EXPECT_EQ(generic(400).reason, "BadRequest");
}

TEST(GenericServerResponseTest, ForbiddenKeepsTheServerMessage) {
  EXPECT_EQ(generic(403, "POST", "user x cannot do y").message, "user x cannot do y");
  EXPECT_EQ(generic(403).reason, "Forbidden");
}

TEST(GenericServerResponseTest, Unauthorized) {
  EXPECT_EQ(generic(401).message, "the server has asked for the client to provide credentials");
}

TEST(GenericServerResponseTest, ConflictDependsOnTheVerb) {
  EXPECT_EQ(generic(409, "POST").reason, "AlreadyExists");
  EXPECT_EQ(generic(409, "PUT").reason, "Conflict");
  EXPECT_EQ(generic(409).message, "the server reported a conflict");
}

TEST(GenericServerResponseTest, NotAcceptableFallsBackForUnknownBodies) {
  EXPECT_EQ(generic(406, "POST", "unknown").message,
            "the server was unable to respond with a content type that the client supports");
  EXPECT_EQ(generic(406, "POST", "only json").message, "only json");
}

TEST(GenericServerResponseTest, OtherKnownCodes) {
  EXPECT_EQ(generic(415, "POST", "use json").message, "use json");
  EXPECT_EQ(generic(405).message,
            "the server does not allow this method on the requested resource");
  EXPECT_EQ(generic(422).message, "the server rejected our request due to an error in our request");
  EXPECT_EQ(generic(422).reason, "Invalid");
  EXPECT_EQ(generic(429).message,
            "the server has received too many requests and has asked us to try again later");
}

TEST(GenericServerResponseTest, UnlistedCodesHaveNoReason) {
  const auto s = generic(418);
  EXPECT_EQ(s.message,
            "the server responded with the status code 418 but did not return more "
            "information");
  EXPECT_EQ(s.reason, "");
  EXPECT_EQ(s.code, 418);
}

TEST(GenericServerResponseTest, NamesVerbAndResourceWhenKnown) {
  EXPECT_EQ(newGenericServerResponse(404, "GET", kDeployments, "web", "", 0, false).message,
            "the server could not find the requested resource (get deployments.apps web)");
  EXPECT_EQ(newGenericServerResponse(404, "GET", kPods, "", "", 0, false).message,
            "the server could not find the requested resource (get pods)");
}

TEST(GenericServerResponseTest, WithoutUnexpectedResponseThereAreNoCauses) {
  const auto s = newGenericServerResponse(500, "POST", GroupResource{}, "", "x", 7, false);
  ASSERT_TRUE(s.details);
  EXPECT_TRUE(s.details->causes.empty());
  EXPECT_EQ(s.details->retry_after_seconds, 7);
}

TEST(UnstructuredResponseTest, TextBodyIsTrimmed) {
  const auto s = unstructuredResponseError(500, "text/plain; charset=utf-8", "  oops\n\n", 0);
  EXPECT_EQ(s.message,
            R"(an error on the server ("oops") has prevented the request from succeeding)");
}

TEST(UnstructuredResponseTest, EmptyContentTypeCountsAsText) {
  EXPECT_EQ(unstructuredResponseError(500, "", "oops", 0).details->causes[0].message, "oops");
}

TEST(UnstructuredResponseTest, NonTextBodyIsUnknown) {
  EXPECT_EQ(unstructuredResponseError(500, "application/json", "{\"a\":1}", 0).message,
            R"(an error on the server ("unknown") has prevented the request from succeeding)");
}

TEST(UnstructuredResponseTest, BodyIsLimitedTo2048Bytes) {
  const std::string body(3000, 'x');
  const auto s = unstructuredResponseError(500, "text/plain", body, 0);
  EXPECT_EQ(s.details->causes[0].message, std::string(2048, 'x'));
}

TEST(UnstructuredResponseTest, CarriesRetryAfter) {
  EXPECT_EQ(unstructuredResponseError(503, "", "", 4).details->retry_after_seconds, 4);
}

TEST(StatusFromErrorResponseTest, UsesAFailureStatusBodyAsSent) {
  const std::string body =
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"no way","code":418})";
  const auto s = statusFromErrorResponse(500, "application/json", body, 0);
  EXPECT_EQ(s.message, "no way");
  EXPECT_EQ(s.code, 418);
}

TEST(StatusFromErrorResponseTest, AcceptsAStatusWithoutApiVersionWhateverTheContentType) {
  const auto s = statusFromErrorResponse(
      403, "text/plain", R"({"kind":"Status","status":"Failure","message":"m"})", 0);
  EXPECT_EQ(s.message, "m");
}

TEST(StatusFromErrorResponseTest, IgnoresASuccessStatus) {
  const auto s = statusFromErrorResponse(
      500, "application/json", R"({"kind":"Status","status":"Success","message":"m"})", 0);
  EXPECT_EQ(s.message,
            R"(an error on the server ("unknown") has prevented the request from succeeding)");
}

TEST(StatusFromErrorResponseTest, FallsBackToTheGenericErrorForPlainText) {
  const auto s = statusFromErrorResponse(503, "text/plain", "down", 0);
  EXPECT_EQ(s.message, "the server is currently unable to handle the request");
}

TEST(StatusFromErrorResponseTest, UnparseableContentTypeIsAnInternalError) {
  const auto s = statusFromErrorResponse(500, "text/", "x", 0);
  EXPECT_EQ(s.message, "Internal error occurred: mime: expected token after slash");
  EXPECT_EQ(s.code, 500);
}

TEST(MediaTypeTest, ParsesAndLowerCases) {
  EXPECT_EQ(*parseMediaType("Text/Plain; charset=\"utf-8\""), "text/plain");
  EXPECT_EQ(*parseMediaType("application/json;"), "application/json");
  EXPECT_EQ(*parseMediaType("text"), "text");
}

TEST(MediaTypeTest, ReportsGoErrors) {
  EXPECT_EQ(parseMediaType("").error().message, "mime: no media type");
  EXPECT_EQ(parseMediaType("text plain").error().message, "mime: expected slash after first token");
  EXPECT_EQ(parseMediaType("text/").error().message, "mime: expected token after slash");
  EXPECT_EQ(parseMediaType("text/plain/x").error().message,
            "mime: unexpected content after media subtype");
  EXPECT_EQ(parseMediaType("text/plain; charset").error().message, "mime: invalid media parameter");
  EXPECT_EQ(parseMediaType("text/plain; a=1; A=2").error().message,
            "mime: duplicate parameter name");
}

TEST(MediaTypeTest, TextResponses) {
  EXPECT_TRUE(isTextResponse(""));
  EXPECT_TRUE(isTextResponse("text/html"));
  EXPECT_FALSE(isTextResponse("application/json"));
  EXPECT_FALSE(isTextResponse("text/"));
}

}  // namespace
}  // namespace harness::core
