// audit.k8s.io/v1 Event JSON (types.go field order and omitempty, MicroTime), reading it back,
// and the request.go helpers that fill an event.

#include <chrono>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/audit/event.h"

namespace harness::audit {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

TimePoint at(const char* text) {
  auto parsed = parseMicroTime(text);
  EXPECT_TRUE(parsed.ok()) << text;
  return parsed.ok() ? *parsed : TimePoint{};
}

TEST(MicroTime, FormatsSixFractionalDigitsInUtc) {
  const TimePoint t =
      std::chrono::sys_days{std::chrono::year{2026} / 11 / 22} + 10h + 123456us + 789ns;
  EXPECT_EQ(formatMicroTime(t), "2026-11-22T10:00:00.123456Z");
  EXPECT_EQ(
      formatMicroTime(std::chrono::sys_days{std::chrono::year{2026} / 1 / 2} + 3h + 4min + 5s),
      "2026-01-02T03:04:05.000000Z");
}

TEST(MicroTime, TruncatesBeforeTheEpochToo) {
  const TimePoint t = TimePoint{} - 1ns;
  EXPECT_EQ(formatMicroTime(t), "1969-12-31T23:59:59.999999Z");
}

TEST(MicroTime, ParsesOffsetsAndShortFractions) {
  EXPECT_EQ(formatMicroTime(at("2026-11-22T11:30:00.5+01:30")), "2026-11-22T10:00:00.500000Z");
  EXPECT_EQ(formatMicroTime(at("2026-11-22T10:00:00Z")), "2026-11-22T10:00:00.000000Z");
  EXPECT_EQ(formatMicroTime(at("2026-11-22T10:00:00.123456789Z")), "2026-11-22T10:00:00.123456Z");
}

TEST(MicroTime, RejectsMalformedTimes) {
  for (const char* bad :
       {"", "2026-11-22", "2026-11-22 10:00:00Z", "2026-13-01T00:00:00Z", "2026-02-30T00:00:00Z",
        "2026-11-22T10:00:00.Z", "2026-11-22T10:00:00+0100", "2026-11-22T10:00:00Zjunk"}) {
    EXPECT_FALSE(parseMicroTime(bad).ok()) << bad;
  }
}

TEST(EventJson, MinimalEventKeepsRequiredFieldsAndWritesZeroTimesAsNull) {
  Event event;
  event.level = Level::kMetadata;
  event.audit_id = "id-1";
  event.stage = Stage::kResponseComplete;
  event.request_uri = "/api";
  event.verb = "get";
  EXPECT_EQ(
      toJsonLine(event),
      R"({"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"id-1","s)"
      R"(tage":"ResponseComplete","requestURI":"/api","verb":"get","user":{},"requestReceivedT)"
      R"(imestamp":null,"stageTimestamp":null})"
      "\n");
}

Event fullEvent() {
  Event event;
  event.level = Level::kRequestResponse;
  event.audit_id = "8d0c3e1a";
  event.stage = Stage::kResponseComplete;
  event.request_uri = "/api/v1/namespaces/shop/pods?fieldManager=kubectl-client-side-apply";
  event.verb = "create";
  event.user.username = "alice";
  event.user.groups = {"dev", "system:authenticated"};
  event.user.extra = {{"scopes", {"a", "b"}}};
  event.impersonated_user = core::UserInfo{"bob", "", {}, {}};
  event.source_ips = {"10.0.0.1"};
  event.user_agent = "kubectl/v1.31.0";
  event.object_ref = ObjectReference{"pods", "shop", "web-0", "", "", "v1", "", ""};
  core::Status status;
  status.code = 201;
  event.response_status = status;
  event.request_object = nlohmann::ordered_json::parse(R"({"kind":"Pod","apiVersion":"v1"})");
  event.response_object =
      nlohmann::ordered_json::parse(R"({"kind":"Pod","apiVersion":"v1","metadata":{"x":"<&>"}})");
  event.request_received_timestamp = at("2026-11-22T10:00:00.123456Z");
  event.stage_timestamp = at("2026-11-22T10:00:00.234567Z");
  event.annotations = {{"b.example.com/k", "2"}, {"a.example.com/k", "1"}};
  return event;
}

TEST(EventJson, FieldsInStructOrderWithHtmlEscaping) {
  EXPECT_EQ(
      toJsonLine(fullEvent()),
      R"({"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","auditID":"8)"
      R"(d0c3e1a","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/shop/pods?fieldM)"
      R"(anager=kubectl-client-side-apply","verb":"create","user":{"username":"alice","groups")"
      R"(:["dev","system:authenticated"],"extra":{"scopes":["a","b"]}},"impersonatedUser":{"us)"
      R"(ername":"bob"},"sourceIPs":["10.0.0.1"],"userAgent":"kubectl/v1.31.0","objectRef":{"r)"
      R"(esource":"pods","namespace":"shop","name":"web-0","apiVersion":"v1"},"responseStatus")"
      R"(:{"metadata":{},"code":201},"requestObject":{"kind":"Pod","apiVersion":"v1"},"respons)"
      R"(eObject":{"kind":"Pod","apiVersion":"v1","metadata":{"x":"\u003c\u0026\u003e"}},"requ)"
      R"(estReceivedTimestamp":"2026-11-22T10:00:00.123456Z","stageTimestamp":"2026-11-22T10:0)"
      R"(0:00.234567Z","annotations":{"a.example.com/k":"1","b.example.com/k":"2"}})"
      "\n");
}

TEST(EventJson, FailureStatusInStatusFieldOrder) {
  Event event = fullEvent();
  core::Status status;
  status.status = "Failure";
  status.message = "admission webhook \"v.example.com\" denied the request";
  status.reason = "Forbidden";
  status.details =
      core::StatusDetails{"web-0", "", "pods", "", {{"FieldValueInvalid", "m", "f"}}, 0};
  status.code = 403;
  event.response_status = status;
  EXPECT_THAT(
      toJsonLine(event),
      HasSubstr(
          R"("responseStatus":{"metadata":{},"status":"Failure","message":"admission webhook \)"
          R"("v.example.com\" denied the request","reason":"Forbidden","details":{"name":"web-)"
          R"(0","kind":"pods","causes":[{"reason":"FieldValueInvalid","message":"m","field":"f)"
          R"("}]},"code":403},)"));
}

TEST(EventJson, StringsEscapeLikeGo) {
  Event event;
  event.audit_id = std::string("a\b\f\n\r\t\x01\x7f") + "\xe2\x80\xa8" + "\xff" + "é";
  const std::string line = toJsonLine(event);
  EXPECT_THAT(line, HasSubstr(R"("auditID":"a\b\f\n\r\t\u0001)"
                              "\x7f"
                              R"(\u2028\ufffd)"
                              "é\""));
}

TEST(EventJson, FloatsAreWrittenLikeGo) {
  Event event;
  event.request_object = nlohmann::ordered_json::parse(
      R"([1.0, 0.5, 1e21, 1e-7, 123456789.25, -0.0, 1e20, 12345678901234567890])");
  EXPECT_THAT(
      toJsonLine(event),
      HasSubstr(
          R"("requestObject":[1,0.5,1e+21,1e-7,123456789.25,-0,100000000000000000000,123456789)"
          R"(01234567890])"));
}

TEST(EventJson, RoundTripsThroughEventFromJson) {
  const Event event = fullEvent();
  auto parsed = eventFromJson(nlohmann::ordered_json::parse(toJsonLine(event)));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(*parsed, event);
}

TEST(EventJson, UnknownFieldsAreKeptAndWrittenBack) {
  const std::string line =
      R"({"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"x","stag)"
      R"(e":"ResponseComplete","requestURI":"/","verb":"get","user":{},"requestReceivedTimesta)"
      R"(mp":null,"stageTimestamp":null,"authenticationMetadata":{"b":1,"a":2}})"
      "\n";
  auto parsed = eventFromJson(nlohmann::ordered_json::parse(line));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(toJsonLine(*parsed), line);
}

TEST(EventJson, ReadingNamesTheBadField) {
  auto bad_stage = eventFromJson(nlohmann::json::parse(R"({"level":"Metadata","stage":"Done"})"));
  ASSERT_FALSE(bad_stage.ok());
  EXPECT_EQ(bad_stage.error().message, "stage: unknown stage \"Done\"");

  auto bad_group = eventFromJson(
      nlohmann::json::parse(R"({"level":"Metadata","stage":"Panic","user":{"groups":["a",1]}})"));
  ASSERT_FALSE(bad_group.ok());
  EXPECT_EQ(bad_group.error().message, "user.groups[1]: expected a string, got number");

  auto bad_time = eventFromJson(nlohmann::json::parse(
      R"({"level":"Metadata","stage":"Panic","stageTimestamp":"yesterday"})"));
  ASSERT_FALSE(bad_time.ok());
  EXPECT_THAT(bad_time.error().message, HasSubstr("stageTimestamp: cannot parse \"yesterday\""));

  auto not_event = eventFromJson(nlohmann::json::parse(R"({"kind":"Pod","level":"None"})"));
  ASSERT_FALSE(not_event.ok());
  EXPECT_EQ(not_event.error().message, "kind: \"Pod\" is not an audit Event");

  auto array = eventFromJson(nlohmann::json::parse("[]"));
  ASSERT_FALSE(array.ok());
  EXPECT_EQ(array.error().message, "expected an audit Event object, got array");

  auto bad_status = eventFromJson(nlohmann::json::parse(
      R"({"level":"Metadata","stage":"Panic","responseStatus":{"code":"x"}})"));
  ASSERT_FALSE(bad_status.ok());
  EXPECT_THAT(bad_status.error().message, HasSubstr("code"));
}

TEST(EventJson, NullMembersAreZeroValues) {
  auto parsed = eventFromJson(nlohmann::json::parse(
      R"({"level":"Request","stage":"ResponseComplete","objectRef":null,"requestObject":null,")"
      R"(sourceIPs":null})"));
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ(parsed->object_ref, std::nullopt);
  EXPECT_EQ(parsed->request_object, std::nullopt);
  EXPECT_TRUE(parsed->source_ips.empty());
}

RequestAttributes podCreate() {
  RequestAttributes a;
  a.user = "alice";
  a.groups = {"dev"};
  a.verb = "create";
  a.api_version = "v1";
  a.resource = "pods";
  a.namespace_name = "shop";
  a.path = "/api/v1/namespaces/shop/pods";
  return a;
}

TEST(NewEventFromRequest, FillsUserAndObjectRef) {
  HttpRequestInfo info;
  info.audit_id = "id";
  info.request_uri = "/api/v1/namespaces/shop/pods";
  info.user_agent = "kubectl";
  info.source_ips = {"127.0.0.1"};
  info.user_uid = "u-1";
  info.received = at("2026-11-22T10:00:00Z");
  const Event event = newEventFromRequest(info, Level::kRequest, podCreate());
  EXPECT_EQ(event.stage, Stage::kRequestReceived);
  EXPECT_EQ(event.user, (core::UserInfo{"alice", "u-1", {"dev"}, {}}));
  ASSERT_TRUE(event.object_ref.has_value());
  EXPECT_EQ(*event.object_ref, (ObjectReference{"pods", "shop", "", "", "", "v1", "", ""}));
  EXPECT_EQ(event.request_received_timestamp, info.received);
}

TEST(NewEventFromRequest, TruncatesLongUserAgents) {
  HttpRequestInfo info;
  info.user_agent = std::string(1100, 'x');
  const Event event = newEventFromRequest(info, Level::kMetadata, podCreate());
  EXPECT_EQ(event.user_agent, std::string(1024, 'x') + "...TRUNCATED");
}

TEST(NewEventFromRequest, NonResourceRequestsHaveNoObjectRef) {
  RequestAttributes a;
  a.verb = "get";
  a.resource_request = false;
  a.path = "/healthz";
  EXPECT_EQ(newEventFromRequest({}, Level::kMetadata, a).object_ref, std::nullopt);
}

const nlohmann::ordered_json kPod = nlohmann::ordered_json::parse(
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-0","namespace":"shop","uid":"u")"
    R"(,"resourceVersion":"7","managedFields":[{"manager":"kubectl"}]}})");

TEST(LogRequestObject, MetadataLevelCompletesObjectRefOnly) {
  Event event = newEventFromRequest({}, Level::kMetadata, podCreate());
  logRequestObject(event, kPod, "", "v1", "pods", "", false);
  EXPECT_EQ(*event.object_ref, (ObjectReference{"pods", "shop", "web-0", "u", "", "v1", "7", ""}));
  EXPECT_EQ(event.request_object, std::nullopt);
}

TEST(LogRequestObject, RequestLevelRecordsTheObjectWithoutManagedFieldsWhenAsked) {
  Event event = newEventFromRequest({}, Level::kRequest, podCreate());
  logRequestObject(event, kPod, "", "v1", "pods", "", true);
  ASSERT_TRUE(event.request_object.has_value());
  EXPECT_FALSE((*event.request_object)["metadata"].contains("managedFields"));
  Event keep = newEventFromRequest({}, Level::kRequest, podCreate());
  logRequestObject(keep, kPod, "", "v1", "pods", "", false);
  EXPECT_EQ(keep.request_object, kPod);
}

TEST(LogRequestObject, NoneLevelRecordsNothing) {
  Event event;
  logRequestObject(event, kPod, "", "v1", "pods", "", false);
  EXPECT_EQ(event.object_ref, std::nullopt);
}

// v1.37.2 copies Status, Message, Reason, Details and Code (pkg/audit/context.go); a real
// kube-apiserver's log has a denial's message in responseStatus (found by e2e/run kube vs sim).
TEST(LogResponseObject, StatusKeepsTheBoundedFields) {
  Event event = newEventFromRequest({}, Level::kRequestResponse, podCreate());
  logResponseObject(
      event,
      nlohmann::ordered_json::parse(
          R"({"kind":"Status","apiVersion":"v1","metadata":{"resourceVersion":"7"},)"
          R"("status":"Failure","message":"long","reason":"NotFound",)"
          R"("details":{"name":"web","kind":"pods"},"code":404})"),
      false);
  ASSERT_TRUE(event.response_status.has_value());
  EXPECT_EQ(event.response_status->status, "Failure");
  EXPECT_EQ(event.response_status->reason, "NotFound");
  EXPECT_EQ(event.response_status->code, 404);
  EXPECT_EQ(event.response_status->message, "long");
  ASSERT_TRUE(event.response_status->details.has_value());
  EXPECT_EQ(event.response_status->details->name, "web");
  EXPECT_EQ(event.response_status->metadata, nlohmann::json::object());
  EXPECT_TRUE(event.response_object.has_value());
}

TEST(LogResponseObject, RequestLevelDoesNotRecordTheResponse) {
  Event event = newEventFromRequest({}, Level::kRequest, podCreate());
  logResponseObject(event, kPod, false);
  EXPECT_EQ(event.response_object, std::nullopt);
}

TEST(LogAnnotation, FirstValueWinsAndNoneIgnores) {
  Event event;
  event.level = Level::kMetadata;
  EXPECT_TRUE(logAnnotation(event, "k.example.com/a", "1"));
  EXPECT_FALSE(logAnnotation(event, "k.example.com/a", "2"));
  EXPECT_TRUE(logAnnotation(event, "k.example.com/a", "1"));
  EXPECT_EQ(event.annotations.at("k.example.com/a"), "1");
  Event none;
  EXPECT_FALSE(logAnnotation(none, "k.example.com/a", "1"));
  EXPECT_TRUE(none.annotations.empty());
}

TEST(LogAnnotations, CopiesWhatTheEventLevelRecords) {
  AnnotationSet set;
  ASSERT_TRUE(set.add(mutationAnnotationKey(0, 0), mutationAnnotationValue("c", "w", true)));
  ASSERT_TRUE(set.add(patchAnnotationKey(0, 0), "{}", Level::kRequest));
  Event metadata;
  metadata.level = Level::kMetadata;
  logAnnotations(metadata, set);
  EXPECT_EQ(metadata.annotations.size(), 1u);
  Event request;
  request.level = Level::kRequest;
  logAnnotations(request, set);
  EXPECT_EQ(request.annotations.size(), 2u);
}

}  // namespace
}  // namespace harness::audit
