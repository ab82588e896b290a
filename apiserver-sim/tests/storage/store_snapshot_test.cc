// ObjectStore snapshots: a store started from another's contents (the scenario runner's RBAC
// bootstrap objects, stored once per process) holds the same objects, revision and watch events,
// and what one store writes afterwards is seen by neither the snapshot nor the other stores.

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/sim/store.h"

namespace harness::sim {
namespace {

using nlohmann::json;

const core::GroupResource kConfigMaps{"", "configmaps"};

json configMap(const std::string& name, const std::string& value) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"namespace", "default"}, {"name", name}}},
          {"data", {{"k", value}}}};
}

std::string valueOf(const std::optional<json>& object) {
  return object ? (*object)["data"]["k"].get<std::string>() : std::string("<absent>");
}

TEST(StoreSnapshotTest, ARestoredStoreHasTheObjectsRevisionAndEvents) {
  ObjectStore source;
  ASSERT_TRUE(std::holds_alternative<json>(source.create(kConfigMaps, configMap("a", "1"))));
  ASSERT_TRUE(std::holds_alternative<json>(source.create(kConfigMaps, configMap("b", "1"))));
  auto updated = source.get(kConfigMaps, "default", "a");
  ASSERT_TRUE(updated);
  (*updated)["data"]["k"] = "2";
  ASSERT_TRUE(std::holds_alternative<json>(source.update(kConfigMaps, *updated)));
  const auto snapshot = source.snapshot();

  ObjectStore restored;
  restored.restore(*snapshot);
  EXPECT_EQ(restored.revision(), source.revision());
  EXPECT_EQ(restored.revision(), 3u);
  EXPECT_EQ(restored.list(kConfigMaps), source.list(kConfigMaps));
  EXPECT_EQ(valueOf(restored.get(kConfigMaps, "default", "a")), "2");

  // The watch cache came along: a watch from revision 0 replays the three writes.
  auto watched = restored.watch({kConfigMaps}, 0, [](const StoreEventPtr&) {});
  ASSERT_TRUE(std::holds_alternative<WatchStart>(watched));
  const auto& replay = std::get<WatchStart>(watched).replay;
  ASSERT_EQ(replay.size(), 3u);
  EXPECT_EQ(replay[2]->type, StoreEvent::Type::kModified);
  EXPECT_EQ(replay[2]->revision, 3u);

  // The next write continues from the snapshot's revision.
  auto created = restored.create(kConfigMaps, configMap("c", "1"));
  ASSERT_TRUE(std::holds_alternative<json>(created));
  EXPECT_EQ(std::get<json>(created)["metadata"]["resourceVersion"], "4");
}

TEST(StoreSnapshotTest, WritesAfterARestoreStayInTheirStore) {
  ObjectStore source;
  ASSERT_TRUE(std::holds_alternative<json>(source.create(kConfigMaps, configMap("a", "1"))));
  const auto snapshot = source.snapshot();

  ObjectStore first;
  first.restore(*snapshot);
  auto object = first.get(kConfigMaps, "default", "a");
  ASSERT_TRUE(object);
  (*object)["data"]["k"] = "changed";
  ASSERT_TRUE(std::holds_alternative<json>(first.update(kConfigMaps, *object)));
  ASSERT_TRUE(std::holds_alternative<json>(first.remove(kConfigMaps, "default", "a")));
  ASSERT_TRUE(std::holds_alternative<json>(first.create(kConfigMaps, configMap("b", "1"))));

  ObjectStore second;
  second.restore(*snapshot);
  EXPECT_EQ(valueOf(second.get(kConfigMaps, "default", "a")), "1");
  EXPECT_FALSE(second.get(kConfigMaps, "default", "b"));
  EXPECT_EQ(second.revision(), 1u);
  EXPECT_EQ(valueOf(source.get(kConfigMaps, "default", "a")), "1");
  EXPECT_EQ(source.revision(), 1u);
}

TEST(StoreSnapshotTest, ARestoreKeepsTheGeneratorItWasSeededWith) {
  ObjectStore source;
  ASSERT_TRUE(std::holds_alternative<json>(source.create(kConfigMaps, configMap("a", "1"))));
  const auto snapshot = source.snapshot();
  ObjectStore one;
  ObjectStore two;
  one.seed(42);
  two.seed(42);
  one.restore(*snapshot);
  two.restore(*snapshot);
  EXPECT_EQ(one.newUid(), two.newUid());
  EXPECT_EQ(one.randomSuffix(), two.randomSuffix());
}

}  // namespace
}  // namespace harness::sim
