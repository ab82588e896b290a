#include "harness/core/recent_cache.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

namespace harness::core {
namespace {

TEST(RecentCache, KeepsWhatWasInsertedAndFindsNothingElse) {
  RecentCache<std::string, int> cache(4);
  cache.insert("a", 1);
  EXPECT_EQ(cache.find("a"), 1);
  EXPECT_EQ(cache.find("b"), std::nullopt);
  cache.insert("a", 2);  // replaces
  EXPECT_EQ(cache.find("a"), 2);
  EXPECT_EQ(cache.size(), 1u);
}

TEST(RecentCache, WhenFullTheLeastRecentlyUsedGoes) {
  RecentCache<std::string, int> cache(3);
  cache.insert("a", 1);
  cache.insert("b", 2);
  cache.insert("c", 3);
  ASSERT_EQ(cache.find("a"), 1);  // "a" used: "b" is now the least recent
  cache.insert("d", 4);
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(cache.find("b"), std::nullopt);
  EXPECT_EQ(cache.find("a"), 1);
  EXPECT_EQ(cache.find("c"), 3);
  EXPECT_EQ(cache.find("d"), 4);
}

TEST(RecentCache, FindOrMakeMakesOnceAndKeepsOnlyWhatKeepAccepts) {
  RecentCache<int, std::string> cache(8);
  int made = 0;
  auto make = [&] {
    ++made;
    return std::string("value");
  };
  EXPECT_EQ(cache.findOrMake(1, make), "value");
  EXPECT_EQ(cache.findOrMake(1, make), "value");
  EXPECT_EQ(made, 1);
  // An answer not worth keeping (an error) is made again next time.
  auto failing = [&] {
    ++made;
    return std::string();
  };
  auto non_empty = [](const std::string& value) { return !value.empty(); };
  EXPECT_EQ(cache.findOrMake(2, failing, non_empty), "");
  EXPECT_EQ(cache.findOrMake(2, failing, non_empty), "");
  EXPECT_EQ(made, 3);
  EXPECT_EQ(cache.find(2), std::nullopt);
}

TEST(RecentCache, EraseIfDropsOnlyTheStaleEntries) {
  RecentCache<std::string, int> cache(8);
  cache.insert("a", 1);
  cache.insert("b", 2);
  cache.insert("c", 3);
  EXPECT_EQ(cache.eraseIf([](int value) { return value % 2 == 1; }), 2u);
  EXPECT_EQ(cache.size(), 1u);
  EXPECT_EQ(cache.find("a"), std::nullopt);
  EXPECT_EQ(cache.find("b"), 2);
  EXPECT_EQ(cache.find("c"), std::nullopt);
  // What was erased leaves room: the cache still holds up to its capacity and evicts as before.
  cache.insert("a", 5);
  EXPECT_EQ(cache.find("a"), 5);
  EXPECT_EQ(cache.eraseIf([](int) { return false; }), 0u);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(RecentCache, AnEvictedValueStaysValidForWhoeverHoldsIt) {
  RecentCache<int, std::shared_ptr<const std::string>> cache(1);
  cache.insert(1, std::make_shared<const std::string>("held"));
  const auto held = *cache.find(1);
  cache.insert(2, std::make_shared<const std::string>("other"));
  EXPECT_EQ(cache.find(1), std::nullopt);
  EXPECT_EQ(*held, "held");
}

TEST(RecentCache, ManyThreadsFindAndInsertWithoutLosingTheBound) {
  RecentCache<int, int> cache(16);
  std::vector<std::thread> threads;
  threads.reserve(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      for (int i = 0; i < 2000; ++i) {
        const int key = (i * 7 + t) % 40;
        EXPECT_EQ(cache.findOrMake(key, [key] { return key * 2; }), key * 2);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_LE(cache.size(), 16u);
}

}  // namespace
}  // namespace harness::core
