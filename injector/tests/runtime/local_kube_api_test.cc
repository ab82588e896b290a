// LocalKubeApi: the object files behind `inject` and `serve --objects`. Lookups go through an
// index, so `inject` on n objects does n lookups of constant cost, not n scans of n objects.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/injector/kube_api.h"

namespace harness::injector {
namespace {

using json = nlohmann::json;

json object(const std::string& api_version, const std::string& kind, const std::string& ns,
            const std::string& name, const std::string& marker = {}) {
  json metadata = {{"name", name}};
  if (!ns.empty()) metadata["namespace"] = ns;
  if (!marker.empty()) metadata["labels"] = {{"marker", marker}};
  return {{"apiVersion", api_version}, {"kind", kind}, {"metadata", metadata}};
}

std::string markerOf(const std::shared_ptr<const json>& found) {
  return found ? found->at("metadata").at("labels").at("marker").get<std::string>() : "<none>";
}

TEST(LocalKubeApi, FindsByKindNamespaceAndName) {
  LocalKubeApi kube({object("v1", "Namespace", "", "apps", "ns"),
                     object("apps/v1", "ReplicaSet", "apps", "web-1", "rs"),
                     object("v1", "Pod", "apps", "web-1", "pod")});
  EXPECT_EQ(markerOf(*kube.get({"", "ReplicaSet", "apps", "web-1"})), "rs");
  EXPECT_EQ(markerOf(*kube.get({"", "Pod", "apps", "web-1"})), "pod");
  EXPECT_EQ(markerOf(*kube.get({"v1", "Namespace", "", "apps"})), "ns");
  EXPECT_EQ(*kube.get({"", "ReplicaSet", "other", "web-1"}), nullptr);
  EXPECT_EQ(*kube.get({"", "ReplicaSet", "apps", "web-2"}), nullptr);
  EXPECT_EQ(kube.describe(), "local objects (3)");
}

TEST(LocalKubeApi, ANamespaceIsFoundByNameWhateverNamespaceItNames) {
  LocalKubeApi kube;
  kube.add(object("v1", "Namespace", "stray", "apps", "ns"));
  EXPECT_EQ(markerOf(*kube.get({"v1", "Namespace", "", "apps"})), "ns");
  EXPECT_EQ(markerOf(*kube.get({"v1", "Namespace", "elsewhere", "apps"})), "ns");
}

TEST(LocalKubeApi, TheLastObjectAddedWins) {
  LocalKubeApi kube(std::vector<json>{object("apps/v1", "ReplicaSet", "apps", "web", "first")});
  kube.add(object("apps/v1", "ReplicaSet", "apps", "web", "second"));
  EXPECT_EQ(markerOf(*kube.get({"", "ReplicaSet", "apps", "web"})), "second");
}

TEST(LocalKubeApi, AnotherGroupIsNotTheSameObjectButAnotherVersionIs) {
  LocalKubeApi kube({object("apps/v1", "ReplicaSet", "apps", "web", "apps-group"),
                     object("example.com/v1", "ReplicaSet", "apps", "web", "other-group")});
  EXPECT_EQ(markerOf(*kube.get({"apps/v1beta2", "ReplicaSet", "apps", "web"})), "apps-group");
  EXPECT_EQ(markerOf(*kube.get({"example.com/v2", "ReplicaSet", "apps", "web"})), "other-group");
  EXPECT_EQ(markerOf(*kube.get({"", "ReplicaSet", "apps", "web"})), "other-group");
  EXPECT_EQ(*kube.get({"batch/v1", "ReplicaSet", "apps", "web"}), nullptr);
}

TEST(LocalKubeApi, ObjectsWithoutKindOrNameAreCountedButNeverFound) {
  LocalKubeApi kube({json{{"kind", "Pod"}}, json{{"metadata", {{"name", "x"}}}},
                     json{{"kind", "Pod"}, {"metadata", {{"name", "x"}, {"namespace", 3}}}}});
  EXPECT_EQ(kube.describe(), "local objects (3)");
  EXPECT_EQ(*kube.get({"", "Pod", "", "x"}), nullptr);
  EXPECT_EQ(*kube.get({"", "Pod", "default", "x"}), nullptr);
}

// The cost of a lookup: only the objects of the same kind, namespace and name are compared,
// however many others there are (the old lookup compared every object, newest first, which made
// `inject` of 20,000 pods take minutes).
TEST(LocalKubeApi, ALookupComparesOnlyTheObjectsOfThatKindNamespaceAndName) {
  LocalKubeApi kube;
  constexpr int kObjects = 20'000;
  for (int i = 0; i < kObjects; ++i) {
    kube.add(object("apps/v1", "ReplicaSet", "ns-" + std::to_string(i % 10),
                    "rs-" + std::to_string(i), std::to_string(i)));
  }
  kube.add(object("v1", "Namespace", "", "ns-3", "ns"));
  EXPECT_EQ(kube.candidatesFor({"", "ReplicaSet", "ns-3", "rs-13"}), 1u);
  EXPECT_EQ(kube.candidatesFor({"v1", "Namespace", "", "ns-3"}), 1u);
  EXPECT_EQ(kube.candidatesFor({"", "ReplicaSet", "ns-4", "rs-13"}), 0u);
  EXPECT_EQ(markerOf(*kube.get({"", "ReplicaSet", "ns-3", "rs-13"})), "13");
  EXPECT_EQ(markerOf(*kube.get({"", "ReplicaSet", "ns-9", "rs-19999"})), "19999");
}

}  // namespace
}  // namespace harness::injector

namespace harness::injector {
namespace {

// `inject` gives its objects to the lookups and reads them back from there: kept, not copied.
TEST(LocalKubeApi, KeepsTheObjectsGivenAwayInOrder) {
  LocalKubeApi kube;
  json pod = object("v1", "Pod", "apps", "web-with-a-name-longer-than-any-small-string", "p");
  const char* name_bytes = pod["metadata"]["name"].get_ref<const std::string&>().data();
  kube.add(object("v1", "Namespace", "", "apps", "ns"));
  kube.add(std::move(pod));
  ASSERT_EQ(kube.size(), 2u);
  EXPECT_EQ(kube.objectAt(0)["kind"], "Namespace");
  EXPECT_EQ(kube.objectAt(1)["metadata"]["name"].get_ref<const std::string&>().data(),
            name_bytes);
  EXPECT_THROW((void)kube.objectAt(2), std::out_of_range);
}

json event(int n) {
  return {{"apiVersion", "v1"},
          {"kind", "Event"},
          {"metadata", {{"name", "web." + std::to_string(n)}, {"namespace", "apps"}}},
          {"reason", "Injected"}};
}

// `serve --objects` posts an Event per injected pod into this API: it keeps the latest ones, as
// a cluster keeps Events for --event-ttl, not every Event ever posted (it held 986 MB after 394k
// requests).
TEST(LocalKubeApi, KeepsOnlyTheLatestEvents) {
  LocalKubeApi kube;
  constexpr int kPosted = 5000;
  for (int n = 0; n < kPosted; ++n) ASSERT_TRUE(kube.createEvent(event(n)).ok());
  const auto kept = kube.events();
  ASSERT_EQ(kept.size(), LocalKubeApi::kDefaultMaxEvents);
  EXPECT_EQ(kept.front()["metadata"]["name"],
            "web." + std::to_string(kPosted - static_cast<int>(LocalKubeApi::kDefaultMaxEvents)));
  EXPECT_EQ(kept.back()["metadata"]["name"], "web." + std::to_string(kPosted - 1));
  EXPECT_EQ(kube.eventsCreated(), static_cast<std::uint64_t>(kPosted));
}

TEST(LocalKubeApi, TheNumberOfEventsKeptCanBeLowered) {
  LocalKubeApi kube;
  for (int n = 0; n < 10; ++n) ASSERT_TRUE(kube.createEvent(event(n)).ok());
  kube.setMaxEvents(3);
  ASSERT_EQ(kube.events().size(), 3u);
  EXPECT_EQ(kube.events().front()["metadata"]["name"], "web.7");
  kube.setMaxEvents(0);  // at least one is kept
  EXPECT_EQ(kube.maxEvents(), 1u);
  ASSERT_TRUE(kube.createEvent(event(10)).ok());
  ASSERT_EQ(kube.events().size(), 1u);
  EXPECT_EQ(kube.events().front()["metadata"]["name"], "web.10");
  EXPECT_EQ(kube.eventsCreated(), 11u);
}

}  // namespace
}  // namespace harness::injector
