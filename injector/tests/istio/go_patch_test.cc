// gomodules.xyz/jsonpatch/v2 CreatePatch as Istio's webhook uses it (go_patch.h), and the
// Go-typed pod JSON both sides of the diff are taken from.

#include "harness/injector/istio/go_patch.h"

#include <gtest/gtest.h>

namespace harness::injector::istio {
namespace {

using nlohmann::json;

json ops(const json& a, const json& b) { return core::encodePatch(createPatchGomodules(a, b)); }

TEST(CreatePatchGomodules, EqualDocumentsGiveNoOperations) {
  EXPECT_EQ(ops(json{{"a", {1, 2}}}, json{{"a", {1, 2}}}), json::array());
}

TEST(CreatePatchGomodules, ObjectMembersOfTheTargetComeFirstThenRemovals) {
  EXPECT_EQ(ops(json{{"a", 1}, {"gone", true}, {"z", {{"x", 1}}}},
                json{{"a", 2}, {"new", "n"}, {"z", {{"x", 1}, {"y", 2}}}}),
            json::parse(R"([
              {"op":"replace","path":"/a","value":2},
              {"op":"add","path":"/new","value":"n"},
              {"op":"add","path":"/z/y","value":2},
              {"op":"remove","path":"/gone"}])"));
}

TEST(CreatePatchGomodules, ArraysDropTheTailBackwardsThenAppendThenCompareByIndex) {
  EXPECT_EQ(ops(json{{"l", {1, 2, 3, 4}}}, json{{"l", {1, 9}}}),
            json::parse(R"([
              {"op":"remove","path":"/l/3"},
              {"op":"remove","path":"/l/2"},
              {"op":"replace","path":"/l/1","value":9}])"));
  EXPECT_EQ(ops(json{{"l", {1}}}, json{{"l", {5, 1, 2}}}),
            json::parse(R"([
              {"op":"add","path":"/l/1","value":1},
              {"op":"add","path":"/l/2","value":2},
              {"op":"replace","path":"/l/0","value":5}])"));
}

TEST(CreatePatchGomodules, AnElementInsertedAtTheFrontChangesEveryLaterIndex) {
  json a = {{"c", {{{"name", "app"}, {"image", "app"}}}}};
  json b = {{"c", {{{"name", "proxy"}, {"image", "proxy"}, {"args", {"x"}}},
                   {{"name", "app"}, {"image", "app"}}}}};
  EXPECT_EQ(ops(a, b), json::parse(R"([
              {"op":"add","path":"/c/1","value":{"image":"app","name":"app"}},
              {"op":"add","path":"/c/0/args","value":["x"]},
              {"op":"replace","path":"/c/0/image","value":"proxy"},
              {"op":"replace","path":"/c/0/name","value":"proxy"}])"));
}

TEST(CreatePatchGomodules, NumbersCompareAsFloat64) {
  EXPECT_EQ(ops(json{{"n", 1}}, json{{"n", 1.0}}), json::array());
  EXPECT_EQ(ops(json{{"n", 1}}, json{{"n", 1.5}}),
            json::parse(R"([{"op":"replace","path":"/n","value":1.5}])"));
}

TEST(CreatePatchGomodules, AChangeOfTypeReplacesTheWholeValue) {
  EXPECT_EQ(ops(json{{"v", {{"a", 1}}}}, json{{"v", {1}}}),
            json::parse(R"([{"op":"replace","path":"/v","value":[1]}])"));
  EXPECT_EQ(ops(json{{"v", nullptr}}, json{{"v", "x"}}),
            json::parse(R"([{"op":"replace","path":"/v","value":"x"}])"));
  EXPECT_EQ(ops(json{{"v", "x"}}, json{{"v", nullptr}}),
            json::parse(R"([{"op":"replace","path":"/v","value":null}])"));
  EXPECT_EQ(ops(json{{"v", nullptr}}, json{{"v", nullptr}, {"w", nullptr}}),
            json::parse(R"([{"op":"add","path":"/w","value":null}])"));
}

TEST(CreatePatchGomodules, PathPartsAreEscaped) {
  EXPECT_EQ(ops(json{{"m", json::object()}}, json{{"m", {{"a/b~c", "v"}}}}),
            json::parse(R"([{"op":"add","path":"/m/a~1b~0c","value":"v"}])"));
}

TEST(CreatePatchGomodules, DifferentRootsAreOneReplaceOfTheRoot) {
  EXPECT_EQ(ops(json::array(), json::object()),
            json::parse(R"([{"op":"replace","path":"","value":{}}])"));
}

TEST(CreatePatchGomodules, ThePatchTurnsTheOriginalIntoTheTarget) {
  json a = {{"spec", {{"containers", {{{"name", "a"}}, {{"name", "b"}}, {{"name", "c"}}}}}}};
  json b = {{"spec", {{"initContainers", {{{"name", "i"}}}},
                      {"containers", {{{"name", "c"}, {"env", {{{"name", "X"}}}}}}}}}};
  auto applied = core::applyPatch(a, createPatchGomodules(a, b));
  ASSERT_TRUE(applied.ok()) << applied.error().message;
  EXPECT_EQ(*applied, b);
}

TEST(GoTypedPod, AddsTheFieldsGoAlwaysMarshals) {
  json pod = {{"metadata", {{"name", "p"}}},
              {"spec",
               {{"containers",
                 {{{"name", "app"},
                   {"ports", {{{"name", "http"}}}},
                   {"readinessProbe", {{"grpc", {{"port", 9}}}}},
                   {"env", {{{"name", "E"}, {"valueFrom", {{"resourceFieldRef",
                                                            {{"resource", "limits.cpu"}}}}}}}}}}},
                {"volumes", {{{"name", "t"}, {"projected", json::object()}}}}}}};
  json typed = goTypedPod(pod);
  EXPECT_TRUE(typed["metadata"]["creationTimestamp"].is_null());
  EXPECT_TRUE(typed["metadata"].contains("creationTimestamp"));
  EXPECT_EQ(typed["status"], json::object());
  const json& c = typed["spec"]["containers"][0];
  EXPECT_EQ(c["resources"], json::object());
  EXPECT_EQ(c["ports"][0]["containerPort"], 0);
  EXPECT_TRUE(c["readinessProbe"]["grpc"].contains("service"));
  EXPECT_EQ(c["env"][0]["valueFrom"]["resourceFieldRef"]["divisor"], "0");
  EXPECT_TRUE(typed["spec"]["volumes"][0]["projected"].contains("sources"));
}

TEST(GoTypedPod, AMissingContainerListIsNull) {
  json typed = goTypedPod(json::object());
  ASSERT_TRUE(typed["spec"].contains("containers"));
  EXPECT_TRUE(typed["spec"]["containers"].is_null());
}

TEST(GoTypedPod, IsIdempotentAndKeepsWhatIsSet) {
  json pod = {{"metadata", {{"creationTimestamp", "2024-01-01T00:00:00Z"}}},
              {"spec", {{"containers", {{{"name", "a"}, {"resources", {{"limits", {{"cpu", "1"}}}}}}}}}},
              {"status", {{"phase", "Pending"}}}};
  json once = goTypedPod(pod);
  EXPECT_EQ(goTypedPod(once), once);
  EXPECT_EQ(once["metadata"]["creationTimestamp"], "2024-01-01T00:00:00Z");
  EXPECT_EQ(once["spec"]["containers"][0]["resources"], pod["spec"]["containers"][0]["resources"]);
  EXPECT_EQ(once["status"], pod["status"]);
}

}  // namespace
}  // namespace harness::injector::istio
