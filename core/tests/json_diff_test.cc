// createPatch: correctness (applying the patch to its source gives its target, under the v4
// engine) and size of the generated patches.

#include <algorithm>
#include <cstdint>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/core/json_patch.h"

namespace harness::core {
namespace {

using json = nlohmann::json;

json applyOrDie(const json& doc, const JsonPatch& patch) {
  auto out = applyPatch(doc, patch);
  EXPECT_TRUE(out.ok()) << out.error().message << "\npatch: " << encodePatch(patch).dump();
  return out.ok() ? *out : json();
}

json podWithEnv(std::size_t count) {
  json env = json::array();
  for (std::size_t i = 0; i < count; ++i) {
    env.push_back({{"name", "VAR_" + std::to_string(i)}, {"value", "value-" + std::to_string(i)}});
  }
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata", {{"name", "big"}, {"namespace", "default"}}},
          {"spec",
           {{"containers", json::array({{{"name", "app"}, {"image", "app:1"}, {"env", env}}})},
            {"volumes", json::array({{{"name", "data"}, {"emptyDir", json::object()}}})}}}};
}

TEST(CreatePatchTest, IdenticalDocumentsGiveAnEmptyPatch) {
  const json pod = podWithEnv(3);
  EXPECT_TRUE(createPatch(pod, pod).empty());
}

TEST(CreatePatchTest, ObjectMembersAreAddedRemovedAndReplaced) {
  const json from = {{"keep", 1}, {"gone", 2}, {"change", 3}};
  const json to = {{"keep", 1}, {"change", 4}, {"new", 5}};
  const JsonPatch patch = createPatch(from, to);
  EXPECT_EQ(encodePatch(patch), json::parse(R"([
    {"op":"replace","path":"/change","value":4},
    {"op":"remove","path":"/gone"},
    {"op":"add","path":"/new","value":5}])"));
  EXPECT_EQ(applyOrDie(from, patch), to);
}

TEST(CreatePatchTest, KeysAreEscapedInPaths) {
  const json from = json::object();
  const json to = {{"a/b", 1}, {"m~n", 2}};
  const JsonPatch patch = createPatch(from, to);
  ASSERT_EQ(patch.size(), 2u);
  EXPECT_EQ(patch[0].path, "/a~1b");
  EXPECT_EQ(patch[1].path, "/m~0n");
  EXPECT_EQ(applyOrDie(from, patch), to);
}

TEST(CreatePatchTest, NestedChangesProduceDeepPaths) {
  const json from = {{"metadata", {{"labels", {{"app", "web"}}}}}};
  const json to = {{"metadata", {{"labels", {{"app", "web"}, {"version", "v2"}}}}}};
  EXPECT_EQ(encodePatch(createPatch(from, to)),
            json::parse(R"([{"op":"add","path":"/metadata/labels/version","value":"v2"}])"));
}

TEST(CreatePatchTest, ContainerInsertedAtIndexZeroIsOneAdd) {
  json from = podWithEnv(5);
  json to = from;
  to["spec"]["containers"].insert(to["spec"]["containers"].begin(),
                                  json{{"name", "istio-init"}, {"image", "proxy"}});
  const JsonPatch patch = createPatch(from, to);
  ASSERT_EQ(patch.size(), 1u);
  EXPECT_EQ(patch[0].op, "add");
  EXPECT_EQ(patch[0].path, "/spec/containers/0");
  EXPECT_EQ(applyOrDie(from, patch), to);
}

TEST(CreatePatchTest, AppendedElementIsOneAddWithDash) {
  json from = podWithEnv(5);
  json to = from;
  to["spec"]["containers"].push_back({{"name", "istio-proxy"}});
  const JsonPatch patch = createPatch(from, to);
  ASSERT_EQ(patch.size(), 1u);
  EXPECT_EQ(patch[0].op, "add");
  EXPECT_EQ(patch[0].path, "/spec/containers/-");
  EXPECT_EQ(applyOrDie(from, patch), to);
}

TEST(CreatePatchTest, RemovedMiddleElementIsOneRemove) {
  const json from = {{"a", {1, 2, 3, 4}}};
  const json to = {{"a", {1, 2, 4}}};
  EXPECT_EQ(encodePatch(createPatch(from, to)), json::parse(R"([{"op":"remove","path":"/a/2"}])"));
}

TEST(CreatePatchTest, OneChangedEnvVarAmongTwoThousandIsOneReplace) {
  json from = podWithEnv(2000);
  json to = from;
  to["spec"]["containers"][0]["env"][1234]["value"] = "changed";
  const JsonPatch patch = createPatch(from, to);
  ASSERT_EQ(patch.size(), 1u);
  EXPECT_EQ(patch[0].op, "replace");
  EXPECT_EQ(patch[0].path, "/spec/containers/0/env/1234/value");
  EXPECT_EQ(applyOrDie(from, patch), to);
}

TEST(CreatePatchTest, SidecarInjectionIntoABigPodIsSmall) {
  json from = podWithEnv(2000);
  json to = from;
  to["metadata"]["annotations"] = {{"sidecar.istio.io/status", "{}"}};
  to["spec"]["initContainers"] = json::array({{{"name", "istio-init"}}});
  to["spec"]["containers"].push_back({{"name", "istio-proxy"}, {"image", "proxyv2"}});
  to["spec"]["volumes"].push_back({{"name", "istio-envoy"}, {"emptyDir", json::object()}});
  const JsonPatch patch = createPatch(from, to);
  EXPECT_EQ(patch.size(), 4u);
  EXPECT_EQ(applyOrDie(from, patch), to);
}

TEST(CreatePatchTest, InsertionsAndDeletionsInsideAListUseAnEditScript) {
  const json from = {{"a", {"x", "b", "c", "y", "d", "e"}}};
  const json to = {{"a", {"b", "c", "NEW", "d", "e", "z"}}};
  const JsonPatch patch = createPatch(from, to);
  EXPECT_LE(patch.size(), 4u);
  EXPECT_EQ(applyOrDie(from, patch), to);
}

TEST(CreatePatchTest, ChangedTypeIsReplaced) {
  const json from = {{"a", {{"b", 1}}}};
  const json to = {{"a", {1, 2}}};
  EXPECT_EQ(encodePatch(createPatch(from, to)),
            json::parse(R"([{"op":"replace","path":"/a","value":[1,2]}])"));
}

TEST(CreatePatchTest, IntegerAndFloatAreDifferentValues) {
  const json from = {{"n", 1}};
  const json to = {{"n", 1.0}};
  const JsonPatch patch = createPatch(from, to);
  ASSERT_EQ(patch.size(), 1u);
  EXPECT_TRUE(applyOrDie(from, patch)["n"].is_number_float());
}

TEST(CreatePatchTest, RootOfAnotherKindIsReplacedWhole) {
  const json from = {{"a", 1}};
  const json to = {1, 2};
  const JsonPatch patch = createPatch(from, to);
  ASSERT_EQ(patch.size(), 1u);
  EXPECT_EQ(patch[0].op, "replace");
  EXPECT_EQ(patch[0].path, "");
  EXPECT_EQ(applyOrDie(from, patch), to);
}

TEST(CreatePatchTest, ReversingALongArrayFallsBackAndStillApplies) {
  json from = json::array();
  for (int i = 0; i < 6000; ++i) from.push_back(i);
  json to = from;
  std::reverse(to.begin(), to.end());
  const JsonPatch patch = createPatch(from, to);
  EXPECT_EQ(applyOrDie(from, patch), to);
}

TEST(CreatePatchTest, ShrinkingAListRemovesFromTheBack) {
  const json from = {{"a", {1, 2, 3, 4, 5}}};
  const json to = {{"a", {9}}};
  const JsonPatch patch = createPatch(from, to);
  EXPECT_EQ(applyOrDie(from, patch), to);
  EXPECT_EQ(encodePatch(patch), json::parse(R"([
    {"op":"replace","path":"/a/0","value":9},
    {"op":"remove","path":"/a/4"}, {"op":"remove","path":"/a/3"},
    {"op":"remove","path":"/a/2"}, {"op":"remove","path":"/a/1"}])"));
}

// ---- property: apply(from, createPatch(from, to)) == to ------------------------------------

class Generator {
 public:
  explicit Generator(std::uint32_t seed) : rng_(seed) {}

  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  json scalar() {
    switch (pick(6)) {
      case 0:
        return nullptr;
      case 1:
        return pick(2) == 0;
      case 2:
        return pick(7) - 3;
      case 3:
        return pick(5) / 2.0 + 0.5;
      case 4:
        return std::string(1, static_cast<char>('a' + pick(4)));
      default:
        return key();
    }
  }

  // Keys include the characters JSON Pointer must escape.
  std::string key() {
    static const char* const kKeys[] = {"a", "b", "c", "a/b", "m~n", "", "-", "0", "~1", "x y"};
    return kKeys[pick(10)];
  }

  json value(int depth) {
    const int choice = depth <= 0 ? 0 : pick(4);
    if (choice == 0 || choice == 1) return scalar();
    if (choice == 2) {
      json object = json::object();
      const int n = pick(5);
      for (int i = 0; i < n; ++i) object[key()] = value(depth - 1);
      return object;
    }
    json array = json::array();
    const int n = pick(6);
    for (int i = 0; i < n; ++i) array.push_back(value(depth - 1));
    return array;
  }

  json container(int depth) {
    json v;
    do {
      v = value(depth);
    } while (!v.is_object() && !v.is_array());
    return v;
  }

  // A related document: a few random edits anywhere in `doc`.
  json mutate(json doc, int edits) {
    for (int i = 0; i < edits; ++i) mutateOnce(doc, 4);
    return doc;
  }

 private:
  void mutateOnce(json& node, int depth) {
    if (node.is_object() && !node.empty() && pick(3) != 0 && depth > 0) {
      auto it = node.begin();
      std::advance(it, pick(static_cast<int>(node.size())));
      mutateOnce(it.value(), depth - 1);
      return;
    }
    if (node.is_array() && !node.empty() && pick(3) != 0 && depth > 0) {
      mutateOnce(node[static_cast<std::size_t>(pick(static_cast<int>(node.size())))], depth - 1);
      return;
    }
    if (node.is_object()) {
      switch (pick(3)) {
        case 0:
          node[key()] = value(2);
          return;
        case 1:
          if (!node.empty()) {
            auto it = node.begin();
            std::advance(it, pick(static_cast<int>(node.size())));
            node.erase(it);
          }
          return;
        default:
          node = value(2);
          return;
      }
    }
    if (node.is_array()) {
      const auto size = static_cast<int>(node.size());
      switch (pick(4)) {
        case 0:
          node.insert(node.begin() + pick(size + 1), value(2));
          return;
        case 1:
          if (size > 0) node.erase(node.begin() + pick(size));
          return;
        case 2:
          if (size > 1) std::swap(node[0], node[static_cast<std::size_t>(size - 1)]);
          return;
        default:
          node = value(2);
          return;
      }
    }
    node = value(2);
  }

  std::mt19937 rng_;
};

TEST(CreatePatchPropertyTest, PatchOfRelatedDocumentsTurnsSourceIntoTarget) {
  Generator gen(20240917);
  for (int i = 0; i < 3000; ++i) {
    const json from = gen.container(4);
    json to = gen.mutate(from, 1 + gen.pick(4));
    if (!to.is_object() && !to.is_array()) continue;
    const JsonPatch patch = createPatch(from, to);
    auto out = applyPatch(from, patch);
    ASSERT_TRUE(out.ok()) << out.error().message << "\nfrom: " << from.dump()
                          << "\nto: " << to.dump() << "\npatch: " << encodePatch(patch).dump();
    ASSERT_EQ(*out, to) << "from: " << from.dump() << "\npatch: " << encodePatch(patch).dump();
  }
}

TEST(CreatePatchPropertyTest, PatchOfUnrelatedDocumentsTurnsSourceIntoTarget) {
  Generator gen(7);
  for (int i = 0; i < 3000; ++i) {
    const json from = gen.container(3);
    const json to = gen.container(3);
    const JsonPatch patch = createPatch(from, to);
    auto out = applyPatch(from, patch);
    ASSERT_TRUE(out.ok()) << out.error().message << "\nfrom: " << from.dump()
                          << "\nto: " << to.dump() << "\npatch: " << encodePatch(patch).dump();
    ASSERT_EQ(*out, to) << "from: " << from.dump() << "\npatch: " << encodePatch(patch).dump();
  }
}

TEST(CreatePatchPropertyTest, LongListsWithScatteredEditsStayCorrect) {
  Generator gen(99);
  for (int round = 0; round < 20; ++round) {
    json from = json::array();
    for (int i = 0; i < 500; ++i) from.push_back(gen.pick(50));
    json to = from;
    for (int e = 0; e < 40; ++e) {
      const auto size = static_cast<int>(to.size());
      if (gen.pick(2) == 0) {
        to.insert(to.begin() + gen.pick(size + 1), gen.pick(50));
      } else if (size > 0) {
        to.erase(to.begin() + gen.pick(size));
      }
    }
    const JsonPatch patch = createPatch(from, to);
    EXPECT_LE(patch.size(), 80u);
    EXPECT_EQ(applyOrDie(from, patch), to);
  }
}

TEST(CreatePatchPropertyTest, DocumentDiffedWithItselfIsEmpty) {
  Generator gen(3);
  for (int i = 0; i < 500; ++i) {
    const json doc = gen.container(4);
    EXPECT_TRUE(createPatch(doc, doc).empty()) << doc.dump();
  }
}

}  // namespace
}  // namespace harness::core
