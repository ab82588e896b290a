// namespaceSelector: a port of kubernetes/apiserver pkg/admission/plugin/webhook/predicates/
// namespace/matcher_test.go (TestGetNamespaceLabels, TestNotExemptClusterScopedResource) plus the
// MatchNamespaceSelector branches (docs/admission-chain.md §3.3).

#include <map>
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "harness/sim/matching.h"

namespace harness::sim {
namespace {

using nlohmann::json;

// The fake namespace lister of matcher_test.go: namespace "1" with runlevel=1.
struct FakeNamespaces {
  std::map<std::string, core::StringMap> namespaces = {{"1", {{"runlevel", "1"}}}};
  int lookups = 0;

  NamespaceLabelsLookup lookup() {
    return [this](const std::string& name) -> std::variant<core::StringMap, core::Status> {
      ++lookups;
      const auto it = namespaces.find(name);
      if (it == namespaces.end()) return core::newNotFound({"", "namespaces"}, name);
      return it->second;
    };
  }
};

json namespaceObject(const std::string& name, const core::StringMap& labels) {
  json object = {{"apiVersion", "v1"}, {"kind", "Namespace"}, {"metadata", {{"name", name}}}};
  for (const auto& [k, v] : labels) object["metadata"]["labels"][k] = v;
  return object;
}

AdmissionAttributes request(const std::string& resource, const std::string& subresource,
                            const std::string& ns, const std::string& name,
                            std::string_view operation) {
  AdmissionAttributes a;
  a.resource = {"", "v1", resource};
  a.subresource = subresource;
  a.namespace_name = ns;
  a.name = name;
  a.operation = std::string(operation);
  return a;
}

core::Webhook withSelector(const std::optional<json>& selector) {
  core::Webhook hook;
  hook.name = "hook.example.com";
  hook.namespace_selector = core::SelectorField::fromJson(selector);
  hook.object_selector = core::SelectorField::fromJson(json::object());
  return hook;
}

const core::StringMap kLevel2 = {{"runlevel", "2"}};

core::StringMap labelsOrFail(const std::variant<core::StringMap, core::Status>& result) {
  if (const auto* status = std::get_if<core::Status>(&result)) {
    ADD_FAILURE() << status->message;
    return {};
  }
  return std::get<core::StringMap>(result);
}

TEST(NamespaceLabelsTest, NamespaceCreateUsesTheObjectItself) {
  FakeNamespaces fake;
  auto a = request("namespaces", "", "", "2", kOperationCreate);
  a.object = namespaceObject("2", kLevel2);
  EXPECT_EQ(labelsOrFail(namespaceLabelsFor(a, fake.lookup())), kLevel2);
  EXPECT_EQ(fake.lookups, 0);
}

TEST(NamespaceLabelsTest, NamespaceUpdateUsesTheNewObject) {
  FakeNamespaces fake;
  auto a = request("namespaces", "", "2", "2", kOperationUpdate);
  a.object = namespaceObject("2", kLevel2);
  EXPECT_EQ(labelsOrFail(namespaceLabelsFor(a, fake.lookup())), kLevel2);
}

TEST(NamespaceLabelsTest, NamespaceDeleteUsesTheStoredNamespace) {
  FakeNamespaces fake;
  auto a = request("namespaces", "", "1", "1", kOperationDelete);
  a.object = namespaceObject("2", kLevel2);  // ignored, as upstream
  EXPECT_EQ(labelsOrFail(namespaceLabelsFor(a, fake.lookup())),
            (core::StringMap{{"runlevel", "1"}}));
}

TEST(NamespaceLabelsTest, NamespaceSubresourceUsesTheStoredNamespace) {
  FakeNamespaces fake;
  const auto a = request("namespaces", "finalizers", "1", "mock-name", kOperationCreate);
  EXPECT_EQ(labelsOrFail(namespaceLabelsFor(a, fake.lookup())),
            (core::StringMap{{"runlevel", "1"}}));
}

TEST(NamespaceLabelsTest, NamespacedObjectUsesItsNamespace) {
  FakeNamespaces fake;
  const auto a = request("pods", "", "1", "mock-name", kOperationCreate);
  EXPECT_EQ(labelsOrFail(namespaceLabelsFor(a, fake.lookup())),
            (core::StringMap{{"runlevel", "1"}}));
}

TEST(NamespaceLabelsTest, MissingNamespaceIsTheLookupsNotFoundUnchanged) {
  FakeNamespaces fake;
  const auto result =
      namespaceLabelsFor(request("pods", "", "gone", "p", kOperationCreate), fake.lookup());
  const auto* status = std::get_if<core::Status>(&result);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->code, 404);
  EXPECT_EQ(status->reason, "NotFound");
  EXPECT_EQ(status->message, "namespaces \"gone\" not found");
}

TEST(NamespaceLabelsTest, OtherLookupErrorsBecomeInternalErrors) {
  const NamespaceLabelsLookup failing =
      [](const std::string&) -> std::variant<core::StringMap, core::Status> {
    return core::newServiceUnavailable("etcd is down");
  };
  const auto result = namespaceLabelsFor(request("pods", "", "ns", "p", kOperationCreate), failing);
  const auto* status = std::get_if<core::Status>(&result);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->code, 500);
  EXPECT_EQ(status->message, "Internal error occurred: etcd is down");
}

TEST(NamespaceLabelsTest, ThrowingLookupBecomesAnInternalError) {
  const NamespaceLabelsLookup throwing =
      [](const std::string&) -> std::variant<core::StringMap, core::Status> {
    throw std::runtime_error("boom");
  };
  const auto result =
      namespaceLabelsFor(request("pods", "", "ns", "p", kOperationCreate), throwing);
  const auto* status = std::get_if<core::Status>(&result);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->message, "Internal error occurred: boom");
}

TEST(NamespaceLabelsTest, AbsentLookupIsAnInternalError) {
  const auto result = namespaceLabelsFor(request("pods", "", "ns", "p", kOperationCreate), {});
  const auto* status = std::get_if<core::Status>(&result);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->message,
            "Internal error occurred: the namespace matcher requires a namespace provider");
}

TEST(NamespaceLabelsTest, NamespaceCreateWithoutObjectIsAnInternalError) {
  FakeNamespaces fake;
  const auto result =
      namespaceLabelsFor(request("namespaces", "", "", "x", kOperationCreate), fake.lookup());
  const auto* status = std::get_if<core::Status>(&result);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->message,
            "Internal error occurred: object does not implement the Object interfaces");
}

TEST(NamespaceLabelsTest, NamespaceCreateWithMalformedLabelsIsAnInternalError) {
  FakeNamespaces fake;
  auto a = request("namespaces", "", "", "x", kOperationCreate);
  a.object = json{{"kind", "Namespace"}, {"metadata", {{"labels", {{"a", 1}}}}}};
  const auto result = namespaceLabelsFor(a, fake.lookup());
  const auto* status = std::get_if<core::Status>(&result);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(status->code, 500);
  EXPECT_NE(status->message.find("metadata.labels.a"), std::string::npos) << status->message;
}

TEST(NamespaceSelectorTest, ClusterScopedResourcesAreNotExempted) {
  // TestNotExemptClusterScopedResource: nodes, {} selector, no namespace lister at all.
  const auto match = matchNamespaceSelector(
      withSelector(json::object()), request("nodes", "", "", "mock-name", kOperationCreate), {});
  EXPECT_TRUE(match.matches);
  EXPECT_FALSE(match.error);
}

TEST(NamespaceSelectorTest, ClusterScopedResourcesIgnoreEvenANilOrBrokenSelector) {
  const auto a = request("nodes", "", "", "n", kOperationCreate);
  EXPECT_TRUE(matchNamespaceSelector(withSelector(std::nullopt), a, {}).matches);
  const auto broken =
      withSelector(json{{"matchExpressions", {{{"key", "a"}, {"operator", "Foo"}}}}});
  ASSERT_TRUE(broken.namespace_selector.parse_error);
  const auto match = matchNamespaceSelector(broken, a, {});
  EXPECT_TRUE(match.matches);
  EXPECT_FALSE(match.error);
  EXPECT_EQ(match.explanation,
            "namespaceSelector ignored: \"nodes\" is cluster-scoped and not a namespace");
}

TEST(NamespaceSelectorTest, EmptySelectorMatchesWithoutALookup) {
  FakeNamespaces fake;
  const auto match =
      matchNamespaceSelector(withSelector(json::object()),
                             request("pods", "", "gone", "p", kOperationCreate), fake.lookup());
  EXPECT_TRUE(match.matches);
  EXPECT_FALSE(match.error);
  EXPECT_EQ(fake.lookups, 0);
  EXPECT_EQ(match.explanation, "namespaceSelector {}: matches everything");
}

TEST(NamespaceSelectorTest, MatchesTheNamespaceLabels) {
  FakeNamespaces fake;
  const auto a = request("pods", "", "1", "p", kOperationCreate);
  EXPECT_TRUE(matchNamespaceSelector(withSelector(json{{"matchLabels", {{"runlevel", "1"}}}}), a,
                                     fake.lookup())
                  .matches);
  const auto miss = matchNamespaceSelector(withSelector(json{{"matchLabels", {{"runlevel", "2"}}}}),
                                           a, fake.lookup());
  EXPECT_FALSE(miss.matches);
  EXPECT_FALSE(miss.error);
  EXPECT_EQ(miss.explanation,
            "namespaceSelector `runlevel=2`: namespace \"1\" has labels runlevel=1: no match");
}

TEST(NamespaceSelectorTest, NilSelectorMatchesNothingButStillLooksTheNamespaceUp) {
  FakeNamespaces fake;
  const auto match = matchNamespaceSelector(
      withSelector(std::nullopt), request("pods", "", "1", "p", kOperationCreate), fake.lookup());
  EXPECT_FALSE(match.matches);
  EXPECT_FALSE(match.error);
  EXPECT_EQ(fake.lookups, 1);
  EXPECT_EQ(match.explanation,
            "namespaceSelector null: namespace \"1\" has labels runlevel=1: no match (a nil "
            "selector matches nothing)");
  const auto missing =
      matchNamespaceSelector(withSelector(std::nullopt),
                             request("pods", "", "gone", "p", kOperationCreate), fake.lookup());
  ASSERT_TRUE(missing.error);
  EXPECT_EQ(missing.error->code, 404);
}

TEST(NamespaceSelectorTest, NamespaceCreateMatchesOnItsOwnLabels) {
  FakeNamespaces fake;
  auto a = request("namespaces", "", "", "2", kOperationCreate);
  a.object = namespaceObject("2", kLevel2);
  const auto match = matchNamespaceSelector(
      withSelector(json{{"matchLabels", {{"runlevel", "2"}}}}), a, fake.lookup());
  EXPECT_TRUE(match.matches);
  EXPECT_EQ(fake.lookups, 0);
  EXPECT_EQ(match.explanation,
            "namespaceSelector `runlevel=2`: namespace \"2\" (the object being created) has "
            "labels runlevel=2: matches");
}

TEST(NamespaceSelectorTest, NamespaceDeleteLooksTheNamespaceUp) {
  FakeNamespaces fake;
  const auto match =
      matchNamespaceSelector(withSelector(json{{"matchLabels", {{"runlevel", "1"}}}}),
                             request("namespaces", "", "1", "1", kOperationDelete), fake.lookup());
  EXPECT_TRUE(match.matches);
  EXPECT_EQ(fake.lookups, 1);
}

TEST(NamespaceSelectorTest, LookupFailureIsReportedNotMatched) {
  FakeNamespaces fake;
  const auto match =
      matchNamespaceSelector(withSelector(json{{"matchLabels", {{"a", "b"}}}}),
                             request("pods", "", "gone", "p", kOperationCreate), fake.lookup());
  EXPECT_FALSE(match.matches);
  ASSERT_TRUE(match.error);
  EXPECT_EQ(match.error->message, "namespaces \"gone\" not found");
  EXPECT_EQ(match.explanation,
            "namespaceSelector `a=b`: namespace \"gone\": namespaces \"gone\" not found "
            "(returned if the rules match)");
}

TEST(NamespaceSelectorTest, SelectorThatDoesNotParseIsAnInternalError) {
  FakeNamespaces fake;
  const auto hook = withSelector(json{{"matchExpressions", {{{"key", "a"}, {"operator", "Foo"}}}}});
  ASSERT_TRUE(hook.namespace_selector.parse_error);
  const auto match =
      matchNamespaceSelector(hook, request("pods", "", "1", "p", kOperationCreate), fake.lookup());
  EXPECT_FALSE(match.matches);
  ASSERT_TRUE(match.error);
  EXPECT_EQ(match.error->code, 500);
  EXPECT_EQ(match.error->message,
            "Internal error occurred: " + *hook.namespace_selector.parse_error);
  EXPECT_EQ(fake.lookups, 0);
}

}  // namespace
}  // namespace harness::sim
