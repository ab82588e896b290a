// Webhook ordering (docs/admission-chain.md §2.1; kubernetes/apiserver
// pkg/admission/configuration/mutating_webhook_manager.go getMutatingWebhookConfigurations).

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/sim/webhook_source.h"

namespace harness::sim {
namespace {

core::WebhookConfiguration config(core::WebhookKind kind, const std::string& name,
                                  const std::vector<std::string>& webhooks) {
  core::WebhookConfiguration c;
  c.kind = kind;
  c.name = name;
  c.metadata = {{"name", name}};
  for (const auto& w : webhooks) {
    core::Webhook hook;
    hook.name = w;
    c.webhooks.push_back(hook);
  }
  return c;
}

std::vector<std::string> uids(const std::vector<HookEntry>& hooks) {
  std::vector<std::string> out;
  out.reserve(hooks.size());
  for (const auto& h : hooks) out.push_back(h.webhook.uid);
  return out;
}

constexpr auto kMutating = core::WebhookKind::kMutating;
constexpr auto kValidating = core::WebhookKind::kValidating;

TEST(OrderHooksTest, NoConfigurationsGiveNoHooks) {
  EXPECT_TRUE(orderHooks({}, kMutating).empty());
}

TEST(OrderHooksTest, ConfigurationsAreSortedByNameByteWise) {
  // Byte order: upper case before lower case, '-' (0x2d) before '.' (0x2e) before digits.
  const auto hooks = orderHooks({config(kMutating, "b", {"w"}), config(kMutating, "a.1", {"w"}),
                                 config(kMutating, "Z", {"w"}), config(kMutating, "a-1", {"w"}),
                                 config(kMutating, "a", {"w"})},
                                kMutating);
  EXPECT_EQ(uids(hooks),
            (std::vector<std::string>{"Z/w/0", "a/w/0", "a-1/w/0", "a.1/w/0", "b/w/0"}));
}

TEST(OrderHooksTest, WebhooksKeepTheirListOrderWithinAConfiguration) {
  const auto hooks =
      orderHooks({config(kMutating, "cfg", {"z.example.com", "a.example.com"})}, kMutating);
  ASSERT_EQ(hooks.size(), 2u);
  EXPECT_EQ(hooks[0].webhook.name, "z.example.com");
  EXPECT_EQ(hooks[1].webhook.name, "a.example.com");
}

TEST(OrderHooksTest, EqualNamesKeepTheirInputOrder) {
  // sort.SliceStable; the store never holds two, but the order must not depend on the sort.
  const auto hooks = orderHooks(
      {config(kMutating, "same", {"first"}), config(kMutating, "same", {"second"})}, kMutating);
  ASSERT_EQ(hooks.size(), 2u);
  EXPECT_EQ(hooks[0].webhook.name, "first");
  EXPECT_EQ(hooks[1].webhook.name, "second");
}

TEST(OrderHooksTest, UidsCountRepeatedNamesWithinAConfiguration) {
  const auto hooks = orderHooks(
      {config(kMutating, "a", {"w", "x", "w"}), config(kMutating, "b", {"w"})}, kMutating);
  EXPECT_EQ(uids(hooks), (std::vector<std::string>{"a/w/0", "a/x/0", "a/w/1", "b/w/0"}));
}

TEST(OrderHooksTest, EntriesCarryConfigurationKindAndFlattenedIndex) {
  const auto hooks =
      orderHooks({config(kValidating, "second", {"c"}), config(kValidating, "first", {"a", "b"})},
                 kValidating);
  ASSERT_EQ(hooks.size(), 3u);
  for (std::size_t i = 0; i < hooks.size(); ++i) {
    EXPECT_EQ(hooks[i].index, i);
    EXPECT_EQ(hooks[i].kind, kValidating);
  }
  EXPECT_EQ(hooks[0].configuration, "first");
  EXPECT_EQ(hooks[2].configuration, "second");
}

TEST(OrderHooksTest, ConfigurationsOfTheOtherKindAreIgnored) {
  const auto configs = std::vector<core::WebhookConfiguration>{config(kMutating, "m", {"mw"}),
                                                               config(kValidating, "v", {"vw"})};
  EXPECT_EQ(uids(orderHooks(configs, kMutating)), (std::vector<std::string>{"m/mw/0"}));
  EXPECT_EQ(uids(orderHooks(configs, kValidating)), (std::vector<std::string>{"v/vw/0"}));
}

TEST(OrderHooksTest, StaleUidsAreReassigned) {
  auto c = config(kMutating, "renamed", {"w"});
  c.webhooks[0].uid = "old/w/0";
  EXPECT_EQ(uids(orderHooks({c}, kMutating)), (std::vector<std::string>{"renamed/w/0"}));
}

TEST(OrderHooksTest, ConfigurationsWithoutWebhooksContributeNothing) {
  const auto hooks =
      orderHooks({config(kMutating, "a", {}), config(kMutating, "b", {"w"})}, kMutating);
  ASSERT_EQ(hooks.size(), 1u);
  EXPECT_EQ(hooks[0].index, 0u);
}

}  // namespace
}  // namespace harness::sim
