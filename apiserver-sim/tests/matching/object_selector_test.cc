// objectSelector: a port of kubernetes/apiserver pkg/admission/plugin/webhook/predicates/
// object/matcher_test.go (TestObjectSelector) plus nil and unparseable selectors
// (docs/admission-chain.md §3.4).

#include <string>

#include <gtest/gtest.h>

#include "harness/sim/matching.h"

namespace harness::sim {
namespace {

using nlohmann::json;

json node(const std::string& runlevel) {
  return {
      {"apiVersion", "v1"}, {"kind", "Node"}, {"metadata", {{"labels", {{"runlevel", runlevel}}}}}};
}

const json kNodeProxyOptions = {{"apiVersion", "v1"}, {"kind", "NodeProxyOptions"}};

// runLevel1Excluder: runlevel NotIn (1).
const json kRunLevel1Excluder = {
    {"matchExpressions", {{{"key", "runlevel"}, {"operator", "NotIn"}, {"values", {"1"}}}}}};

core::Webhook withSelector(const std::optional<json>& selector) {
  core::Webhook hook;
  hook.name = "mock-hook";
  hook.namespace_selector = core::SelectorField::fromJson(json::object());
  hook.object_selector = core::SelectorField::fromJson(selector);
  return hook;
}

AdmissionAttributes request(std::optional<json> object, std::optional<json> old_object,
                            std::string_view operation = kOperationCreate) {
  AdmissionAttributes a;
  a.name = "name";
  a.operation = std::string(operation);
  a.object = std::move(object);
  a.old_object = std::move(old_object);
  return a;
}

struct Case {
  std::string name;
  std::optional<json> selector;
  AdmissionAttributes attributes;
  bool expect_call;
};

TEST(ObjectSelectorTest, UpstreamTestObjectSelectorTable) {
  const std::vector<Case> cases = {
      {"empty object selector matches everything", json::object(),
       request(std::nullopt, std::nullopt), true},
      {"matches new object", kRunLevel1Excluder, request(node("2"), std::nullopt), true},
      {"matches old object", kRunLevel1Excluder, request(std::nullopt, node("2"), kOperationDelete),
       true},
      {"does not match new object", kRunLevel1Excluder, request(node("1"), std::nullopt), false},
      {"does not match old object", kRunLevel1Excluder, request(std::nullopt, node("1")), false},
      {"does not match object that does not implement Object interface", kRunLevel1Excluder,
       request(kNodeProxyOptions, std::nullopt), false},
      {"empty selector matches everything, including object that does not implement Object "
       "interface",
       json::object(), request(kNodeProxyOptions, std::nullopt), true},
  };
  for (const auto& tc : cases) {
    SCOPED_TRACE(tc.name);
    const auto match = matchObjectSelector(withSelector(tc.selector), tc.attributes);
    EXPECT_FALSE(match.error);
    EXPECT_EQ(match.matches, tc.expect_call);
  }
}

TEST(ObjectSelectorTest, EitherObjectOrOldObjectMatchingIsEnough) {
  const auto sel = json{{"matchLabels", {{"runlevel", "1"}}}};
  EXPECT_TRUE(matchObjectSelector(withSelector(sel), request(node("1"), node("2"))).matches);
  EXPECT_TRUE(matchObjectSelector(withSelector(sel), request(node("2"), node("1"))).matches);
  EXPECT_FALSE(matchObjectSelector(withSelector(sel), request(node("2"), node("3"))).matches);
}

TEST(ObjectSelectorTest, NilSelectorMatchesNothing) {
  const auto match = matchObjectSelector(withSelector(std::nullopt), request(node("1"), node("1")));
  EXPECT_FALSE(match.matches);
  EXPECT_FALSE(match.error);
}

TEST(ObjectSelectorTest, ObjectWithoutLabelsMatchesOnlyLabelAbsentSelectors) {
  const json pod = {{"apiVersion", "v1"}, {"kind", "Pod"}, {"metadata", {{"name", "p"}}}};
  EXPECT_TRUE(
      matchObjectSelector(withSelector(kRunLevel1Excluder), request(pod, std::nullopt)).matches);
  EXPECT_FALSE(matchObjectSelector(withSelector(json{{"matchLabels", {{"a", "b"}}}}),
                                   request(pod, std::nullopt))
                   .matches);
}

TEST(ObjectSelectorTest, SelectorThatDoesNotParseIsAnInternalError) {
  const auto hook = withSelector(json{{"matchExpressions", {{{"key", "a"}, {"operator", "In"}}}}});
  ASSERT_TRUE(hook.object_selector.parse_error);
  const auto match = matchObjectSelector(hook, request(node("1"), std::nullopt));
  EXPECT_FALSE(match.matches);
  ASSERT_TRUE(match.error);
  EXPECT_EQ(match.error->code, 500);
  EXPECT_EQ(match.error->reason, "InternalError");
  EXPECT_EQ(match.error->message, "Internal error occurred: " + *hook.object_selector.parse_error);
}

TEST(ObjectSelectorTest, ExplainsBothSides) {
  const auto match = matchObjectSelector(withSelector(json{{"matchLabels", {{"runlevel", "1"}}}}),
                                         request(node("2"), std::nullopt));
  EXPECT_EQ(match.explanation,
            "objectSelector `runlevel=1`: object has labels runlevel=2 (no match), no oldObject: "
            "no match");
}

TEST(ObjectSelectorTest, ExplainsObjectsWithoutMetadata) {
  const auto match =
      matchObjectSelector(withSelector(kRunLevel1Excluder), request(kNodeProxyOptions, node("1")));
  EXPECT_EQ(match.explanation,
            "objectSelector `runlevel notin (1)`: object has no metadata (NodeProxyOptions), "
            "oldObject has labels runlevel=1 (no match): no match");
}

TEST(ObjectSelectorTest, ExplainsEmptySelector) {
  EXPECT_EQ(matchObjectSelector(withSelector(json::object()), request(std::nullopt, std::nullopt))
                .explanation,
            "objectSelector {}: matches everything");
}

TEST(HasObjectMetaTest, OptionKindsHaveNoObjectMeta) {
  for (const char* kind :
       {"PodExecOptions", "PodAttachOptions", "PodPortForwardOptions", "PodProxyOptions",
        "NodeProxyOptions", "ServiceProxyOptions", "DeleteOptions"}) {
    SCOPED_TRACE(kind);
    EXPECT_FALSE(hasObjectMeta(json{{"apiVersion", "v1"}, {"kind", kind}}));
  }
  EXPECT_FALSE(hasObjectMeta(json{{"apiVersion", "meta.k8s.io/v1"}, {"kind", "DeleteOptions"}}));
}

TEST(HasObjectMetaTest, ObjectsOfOtherKindsHaveObjectMetaEvenWithoutMetadata) {
  EXPECT_TRUE(hasObjectMeta(json{{"apiVersion", "v1"}, {"kind", "Pod"}}));
  EXPECT_TRUE(hasObjectMeta(json{{"apiVersion", "example.com/v1"}, {"kind", "DeleteOptions"}}));
  EXPECT_TRUE(hasObjectMeta(json::object()));
}

TEST(HasObjectMetaTest, NonObjectsHaveNoObjectMeta) {
  EXPECT_FALSE(hasObjectMeta(json()));
  EXPECT_FALSE(hasObjectMeta(json::array()));
  EXPECT_FALSE(hasObjectMeta(json("pod")));
}

TEST(ObjectSelectorTest, ObjectWithMalformedLabelsDoesNotMatch) {
  const json bad = {{"kind", "Pod"}, {"metadata", {{"labels", "not-a-map"}}}};
  const auto match =
      matchObjectSelector(withSelector(kRunLevel1Excluder), request(bad, std::nullopt));
  EXPECT_FALSE(match.matches);
  EXPECT_FALSE(match.error);
  EXPECT_NE(match.explanation.find("object labels unreadable"), std::string::npos)
      << match.explanation;
}

}  // namespace
}  // namespace harness::sim
