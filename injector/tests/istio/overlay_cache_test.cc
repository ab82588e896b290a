// OverlayCache: rendered injection templates parsed once per distinct text, within bounds.

#include "harness/injector/istio/overlay_cache.h"

#include <gtest/gtest.h>

#include <string>

#include "harness/core/yaml.h"

namespace harness::injector::istio {
namespace {

std::string overlay(int n) {
  return "spec:\n  containers:\n  - name: istio-proxy\n    image: proxyv2:" + std::to_string(n) +
         "\n    args: [\"proxy\", \"sidecar\"]\n";
}

TEST(OverlayCache, TheSameTextGivesTheSameDocumentParsedOnce) {
  OverlayCache cache;
  auto first = cache.parse(overlay(1));
  ASSERT_TRUE(first.ok()) << first.error().message;
  EXPECT_EQ(**first, *core::parseYaml(overlay(1)));
  auto again = cache.parse(std::string(overlay(1)));
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->get(), first->get());
  EXPECT_EQ(cache.hits(), 1u);
  EXPECT_EQ(cache.misses(), 1u);
  auto other = cache.parse(overlay(2));
  ASSERT_TRUE(other.ok());
  EXPECT_NE(other->get(), first->get());
  EXPECT_EQ((**other)["spec"]["containers"][0]["image"], "proxyv2:2");
}

TEST(OverlayCache, KeepsAtMostItsEntriesOldestOut) {
  OverlayCache cache(3);
  for (int n = 0; n < 5; ++n) ASSERT_TRUE(cache.parse(overlay(n)).ok());
  EXPECT_EQ(cache.size(), 3u);
  ASSERT_TRUE(cache.parse(overlay(4)).ok());  // kept
  EXPECT_EQ(cache.hits(), 1u);
  ASSERT_TRUE(cache.parse(overlay(0)).ok());  // dropped: parsed again
  EXPECT_EQ(cache.misses(), 6u);
  EXPECT_EQ(cache.size(), 3u);
}

TEST(OverlayCache, KeepsAtMostItsBytesOfText) {
  const std::size_t one = overlay(0).size();
  OverlayCache cache(100, 2 * one);
  for (int n = 0; n < 10; ++n) ASSERT_TRUE(cache.parse(overlay(n)).ok());
  EXPECT_EQ(cache.size(), 2u);
  EXPECT_LE(cache.textBytes(), 2 * one);
  // A text larger than the whole budget is parsed, never kept.
  const std::string large = overlay(0) + "metadata:\n  annotations:\n    a: \"" +
                            std::string(3 * one, 'x') + "\"\n";
  auto parsed = cache.parse(large);
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ((**parsed)["metadata"]["annotations"]["a"].get<std::string>().size(), 3 * one);
  EXPECT_EQ(cache.size(), 2u);
}

TEST(OverlayCache, ErrorsAreTheParsersAndAreNotKept) {
  OverlayCache cache;
  const std::string bad = "spec: [unclosed\n";
  auto parsed = cache.parse(bad);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, core::parseYaml(bad).error().message);
  EXPECT_EQ(cache.size(), 0u);
  EXPECT_FALSE(cache.parse(bad).ok());
  EXPECT_EQ(cache.misses(), 2u);
}

}  // namespace
}  // namespace harness::injector::istio
