// WATCH without sockets: the store's event feed (ADDED/MODIFIED/DELETED with their revisions, the
// ring and its 410) and the REST handler's stream (selectors, bookmarks, timeoutSeconds, option
// validation), pulled the way net::Server pulls a BodySource.

#include <atomic>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/core/metrics.h"
#include "harness/sim/admission_chain.h"
#include "harness/sim/caller.h"
#include "harness/sim/rest_api.h"
#include "harness/sim/store.h"

namespace harness::sim {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kToken = "watch-test-token";

json configMap(const std::string& ns, const std::string& name, json labels = json::object()) {
  return {{"apiVersion", "v1"},
          {"kind", "ConfigMap"},
          {"metadata", {{"namespace", ns}, {"name", name}, {"labels", std::move(labels)}}},
          {"data", {{"k", "v"}}}};
}

std::string rvOf(const json& object) {
  return object["metadata"]["resourceVersion"].get<std::string>();
}

// --- the store's feed ---

TEST(StoreWatchTest, LiveEventsCarryTheirTypeAndRevision) {
  ObjectStore store;
  std::vector<StoreEventPtr> seen;
  auto start = store.watch({{"", "configmaps"}}, store.revision(),
                           [&](const StoreEventPtr& event) { seen.push_back(event); });
  ASSERT_TRUE(std::holds_alternative<WatchStart>(start));
  EXPECT_TRUE(std::get<WatchStart>(start).replay.empty());

  auto created = std::get<json>(store.create({"", "configmaps"}, configMap("a", "one")));
  json changed = created;
  changed["data"]["k"] = "w";
  auto updated = std::get<json>(store.update({"", "configmaps"}, changed));
  store.create({"", "secrets"}, configMap("a", "not-watched"));
  auto removed = std::get<json>(store.remove({"", "configmaps"}, "a", "one"));

  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0]->type, StoreEvent::Type::kAdded);
  EXPECT_EQ(std::to_string(seen[0]->revision), rvOf(created));
  EXPECT_EQ(seen[1]->type, StoreEvent::Type::kModified);
  EXPECT_EQ(std::to_string(seen[1]->revision), rvOf(updated));
  EXPECT_EQ((*seen[1]->previous)["data"]["k"], "v");
  EXPECT_EQ(seen[2]->type, StoreEvent::Type::kDeleted);
  EXPECT_EQ(std::to_string(seen[2]->revision), rvOf(removed));
  EXPECT_EQ(rvOf(seen[2]->object), rvOf(removed));
  EXPECT_EQ(eventTypeName(seen[2]->type), "DELETED");
}

TEST(StoreWatchTest, ReplaysFromARevisionOrTheCurrentState) {
  ObjectStore store;
  store.create({"", "configmaps"}, configMap("a", "one"));
  const auto after_first = store.revision();
  store.create({"", "configmaps"}, configMap("a", "two"));
  store.remove({"", "configmaps"}, "a", "one");

  auto from = store.watch({{"", "configmaps"}}, after_first, [](const StoreEventPtr&) {});
  const auto& replay = std::get<WatchStart>(from).replay;
  ASSERT_EQ(replay.size(), 2u);
  EXPECT_EQ(replay[0]->type, StoreEvent::Type::kAdded);
  EXPECT_EQ(replay[1]->type, StoreEvent::Type::kDeleted);

  auto state = store.watch({{"", "configmaps"}}, std::nullopt, [](const StoreEventPtr&) {});
  const auto& initial = std::get<WatchStart>(state).replay;
  ASSERT_EQ(initial.size(), 1u);
  EXPECT_EQ(initial[0]->type, StoreEvent::Type::kAdded);
  EXPECT_EQ(initial[0]->object["metadata"]["name"], "two");
}

TEST(StoreWatchTest, ARevisionOlderThanTheRingIsExpired) {
  ObjectStore store;
  store.setEventCapacity(2);
  for (const char* name : {"a", "b", "c", "d"}) {
    store.create({"", "configmaps"}, configMap("x", name));
  }
  // Revisions 1..4; the ring keeps 3 and 4, so a watch can start from 2 but not from 1.
  auto fine = store.watch({{"", "configmaps"}}, 2, [](const StoreEventPtr&) {});
  ASSERT_TRUE(std::holds_alternative<WatchStart>(fine));
  EXPECT_EQ(std::get<WatchStart>(fine).replay.size(), 2u);
  auto old = store.watch({{"", "configmaps"}}, 1, [](const StoreEventPtr&) {});
  ASSERT_TRUE(std::holds_alternative<core::Status>(old));
  const auto& status = std::get<core::Status>(old);
  EXPECT_EQ(status.code, 410);
  EXPECT_EQ(status.reason, "Expired");
  EXPECT_EQ(status.message, "too old resource version: 1 (2)");
}

TEST(StoreWatchTest, NoEventAfterTheSubscriptionEnds) {
  ObjectStore store;
  int calls = 0;
  auto start = store.watch({{"", "configmaps"}}, store.revision(),
                           [&](const StoreEventPtr&) { ++calls; });
  store.create({"", "configmaps"}, configMap("a", "one"));
  std::get<WatchStart>(start).subscription.reset();
  store.create({"", "configmaps"}, configMap("a", "two"));
  EXPECT_EQ(calls, 1);
}

// --- the REST handler's stream ---

class WatchHandlerTest : public ::testing::Test {
 protected:
  WatchHandlerTest()
      : chain_(store_, caller_, metrics_, ChainOptions{}), handler_(store_, chain_, apiOptions()) {
    store_.put({"", "namespaces"}, {{"apiVersion", "v1"},
                                    {"kind", "Namespace"},
                                    {"metadata", {{"name", "team"}}},
                                    {"status", {{"phase", "Active"}}}});
  }

  static RestApiOptions apiOptions() {
    RestApiOptions options;
    options.bearer_token = kToken;
    options.watch_bookmark_interval = 1ms;
    return options;
  }

  net::Response get(const std::string& target, const std::string& accept = "") {
    net::Request request;
    request.method = "GET";
    request.target = target;
    const auto question = target.find('?');
    request.path = target.substr(0, question);
    request.query = question == std::string::npos ? "" : target.substr(question + 1);
    request.headers.add("Authorization", std::string("Bearer ") + kToken);
    if (!accept.empty()) request.headers.add("Accept", accept);
    return handler_.handle(request);
  }

  // Starts the stream of a watch response, counting its wake-ups.
  std::shared_ptr<net::BodySource> open(const net::Response& response) {
    EXPECT_EQ(response.status, 200) << response.body;
    EXPECT_TRUE(response.stream);
    if (!response.stream) return nullptr;
    response.stream->start([this] { ++wakes_; });
    return response.stream;
  }

  // The events a pull yields (parsed lines) and whether the stream ended.
  static std::vector<json> pullEvents(net::BodySource& source, bool* end = nullptr) {
    const auto pulled = source.pull();
    if (end) *end = pulled.end;
    std::vector<json> events;
    std::size_t start = 0;
    while (start < pulled.data.size()) {
      const auto newline = pulled.data.find('\n', start);
      EXPECT_NE(newline, std::string::npos) << "an event not ended by a newline";
      if (newline == std::string::npos) break;
      events.push_back(json::parse(pulled.data.substr(start, newline - start)));
      start = newline + 1;
    }
    return events;
  }

  json create(const json& object) {
    return std::get<json>(store_.create({"", "configmaps"}, object));
  }
  json update(const json& object) {
    return std::get<json>(store_.update({"", "configmaps"}, object));
  }

  ObjectStore store_;
  InProcessWebhookCaller caller_;
  core::MetricsRegistry metrics_;
  AdmissionChain chain_;
  RestApiHandler handler_;
  std::atomic<int> wakes_{0};
};

TEST_F(WatchHandlerTest, AddedModifiedDeletedWithTheirResourceVersions) {
  const auto from = std::to_string(store_.revision());
  auto stream = open(get("/api/v1/namespaces/team/configmaps?watch=true&resourceVersion=" + from));
  ASSERT_TRUE(stream);
  EXPECT_TRUE(pullEvents(*stream).empty());

  const json created = create(configMap("team", "cm"));
  EXPECT_GE(wakes_.load(), 1);
  json changed = created;
  changed["data"]["k"] = "w";
  const json updated = update(changed);
  store_.create({"", "configmaps"}, configMap("elsewhere", "cm"));  // another namespace
  const json removed = std::get<json>(store_.remove({"", "configmaps"}, "team", "cm"));

  const auto events = pullEvents(*stream);
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["kind"], "ConfigMap");
  EXPECT_EQ(events[0]["object"]["apiVersion"], "v1");
  EXPECT_EQ(rvOf(events[0]["object"]), rvOf(created));
  EXPECT_EQ(events[1]["type"], "MODIFIED");
  EXPECT_EQ(events[1]["object"]["data"]["k"], "w");
  EXPECT_EQ(rvOf(events[1]["object"]), rvOf(updated));
  EXPECT_EQ(events[2]["type"], "DELETED");
  EXPECT_EQ(rvOf(events[2]["object"]), rvOf(removed));
  stream->cancel();
}

TEST_F(WatchHandlerTest, LabelSelectorTurnsChangesOfMatchingIntoAddedAndDeleted) {
  const json created = create(configMap("team", "cm", {{"app", "web"}}));
  auto stream = open(get("/api/v1/namespaces/team/configmaps?watch=1&labelSelector=app%3Dweb"
                         "&resourceVersion=" + rvOf(created)));
  ASSERT_TRUE(stream);
  json other = created;
  other["metadata"]["labels"]["app"] = "db";
  const json moved = update(other);
  json back = moved;
  back["metadata"]["labels"]["app"] = "web";
  const json returned = update(back);
  create(configMap("team", "unrelated", {{"app", "db"}}));

  const auto events = pullEvents(*stream);
  ASSERT_EQ(events.size(), 2u);
  // cache_watcher.go convertToWatchEvent: the state before, at the event's resourceVersion.
  EXPECT_EQ(events[0]["type"], "DELETED");
  EXPECT_EQ(events[0]["object"]["metadata"]["labels"]["app"], "web");
  EXPECT_EQ(rvOf(events[0]["object"]), rvOf(moved));
  EXPECT_EQ(events[1]["type"], "ADDED");
  EXPECT_EQ(rvOf(events[1]["object"]), rvOf(returned));
}

TEST_F(WatchHandlerTest, FieldSelectorOnTheName) {
  auto stream = open(get("/api/v1/namespaces/team/configmaps?watch=true&resourceVersion=" +
                         std::to_string(store_.revision()) +
                         "&fieldSelector=metadata.name%3Dwanted"));
  ASSERT_TRUE(stream);
  create(configMap("team", "other"));
  create(configMap("team", "wanted"));
  const auto events = pullEvents(*stream);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "wanted");

  const auto bad = get("/api/v1/namespaces/team/configmaps?watch=true&fieldSelector=spec.x%3Dy");
  EXPECT_EQ(bad.status, 400);
  EXPECT_FALSE(bad.stream);
}

TEST_F(WatchHandlerTest, WithoutAResourceVersionTheCurrentObjectsComeFirstThenTheEndBookmark) {
  const json one = create(configMap("team", "one"));
  auto stream = open(get("/api/v1/namespaces/team/configmaps?watch=true&allowWatchBookmarks=true"));
  ASSERT_TRUE(stream);
  const auto events = pullEvents(*stream);
  ASSERT_GE(events.size(), 2u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "one");
  EXPECT_EQ(events[1]["type"], "BOOKMARK");
  EXPECT_EQ(events[1]["object"]["kind"], "ConfigMap");
  EXPECT_EQ(events[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true");
  EXPECT_EQ(rvOf(events[1]["object"]), std::to_string(store_.revision()));
}

TEST_F(WatchHandlerTest, SendInitialEventsFalseStartsFromNow) {
  create(configMap("team", "old"));
  auto stream = open(get("/api/v1/namespaces/team/configmaps?watch=true&sendInitialEvents=false"
                         "&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"));
  ASSERT_TRUE(stream);
  create(configMap("team", "new"));
  const auto events = pullEvents(*stream);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "ADDED");
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "new");
}

TEST_F(WatchHandlerTest, TheLegacyWatchPathOfOneObject) {
  const auto from = std::to_string(store_.revision());
  auto stream = open(get("/api/v1/watch/namespaces/team/configmaps/wanted?resourceVersion=" + from));
  ASSERT_TRUE(stream);
  create(configMap("team", "other"));
  create(configMap("team", "wanted"));
  const auto events = pullEvents(*stream);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["object"]["metadata"]["name"], "wanted");
  const auto mismatch =
      get("/api/v1/watch/namespaces/team/configmaps/wanted?fieldSelector=metadata.name%3Dother");
  EXPECT_EQ(mismatch.status, 400);
  EXPECT_EQ(json::parse(mismatch.body)["message"],
            "fieldSelector metadata.name doesn't match requested name");
}

TEST_F(WatchHandlerTest, BookmarksComeAtTheInterval) {
  auto stream = open(get("/api/v1/namespaces/team/configmaps?watch=true&allowWatchBookmarks=true"
                         "&resourceVersion=" + std::to_string(store_.revision())));
  ASSERT_TRUE(stream);
  // The interval is 1 ms here: pull at the times the stream asks for until a bookmark comes.
  for (int i = 0; i < 10'000; ++i) {
    const auto pulled = stream->pull();
    if (pulled.data.find("\"BOOKMARK\"") != std::string::npos) {
      EXPECT_EQ(json::parse(pulled.data.substr(0, pulled.data.find('\n')))["type"], "BOOKMARK");
      return;
    }
    ASSERT_FALSE(pulled.end);
    std::this_thread::sleep_until(pulled.wake_at);
  }
  FAIL() << "no bookmark";
}

TEST_F(WatchHandlerTest, TimeoutSecondsEndsTheStream) {
  // Read the clock before the request: the handler sets the deadline (now + 1 s) while it opens
  // the stream, so only a time taken before that is sure to be at least 1 s before the end.
  const auto started = std::chrono::steady_clock::now();
  auto stream = open(get("/api/v1/namespaces/team/configmaps?watch=true&timeoutSeconds=1"
                         "&resourceVersion=" + std::to_string(store_.revision())));
  ASSERT_TRUE(stream);
  for (;;) {
    const auto pulled = stream->pull();
    if (pulled.end) break;
    ASSERT_LE(pulled.wake_at, started + 2s) << "the deadline is not the timeout";
    std::this_thread::sleep_until(pulled.wake_at);
  }
  EXPECT_GE(std::chrono::steady_clock::now() - started, 1s);
}

TEST_F(WatchHandlerTest, TooOldResourceVersionIsOneErrorEvent) {
  store_.setEventCapacity(2);
  for (const char* name : {"a", "b", "c", "d"}) create(configMap("team", name));
  auto stream = open(get("/api/v1/namespaces/team/configmaps?watch=true&resourceVersion=1"));
  ASSERT_TRUE(stream);
  bool end = false;
  const auto events = pullEvents(*stream, &end);
  EXPECT_TRUE(end);
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0]["type"], "ERROR");
  EXPECT_EQ(events[0]["object"]["kind"], "Status");
  EXPECT_EQ(events[0]["object"]["code"], 410);
  EXPECT_EQ(events[0]["object"]["reason"], "Expired");
  EXPECT_EQ(events[0]["object"]["message"].get<std::string>().rfind("too old resource version: 1 (",
                                                                    0),
            0u);
}

TEST_F(WatchHandlerTest, TableEventsCarryColumnsOnTheFirstOnly) {
  auto stream = open(get("/api/v1/namespaces/team/configmaps?watch=true&resourceVersion=" +
                             std::to_string(store_.revision()),
                         "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"));
  ASSERT_TRUE(stream);
  create(configMap("team", "one"));
  create(configMap("team", "two"));
  const auto events = pullEvents(*stream);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0]["object"]["kind"], "Table");
  EXPECT_FALSE(events[0]["object"]["columnDefinitions"].empty());
  EXPECT_TRUE(events[1]["object"]["columnDefinitions"].is_null());
  EXPECT_EQ(events[1]["object"]["rows"][0]["cells"][0], "two");
}

TEST_F(WatchHandlerTest, InvalidOptionsAreRefusedBeforeTheStream) {
  auto response = get("/api/v1/namespaces/team/configmaps?watch=true&resourceVersion=3"
                      "&resourceVersionMatch=NotOlderThan");
  EXPECT_EQ(response.status, 422);
  EXPECT_EQ(json::parse(response.body)["message"],
            "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: "
            "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided");
  response = get("/api/v1/namespaces/team/configmaps?watch=true&resourceVersion=abc");
  EXPECT_EQ(response.status, 500);
  EXPECT_EQ(json::parse(response.body)["message"],
            "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid "
            "syntax");
  response = get("/api/v1/namespaces/team/configmaps?watch=true&timeoutSeconds=soon");
  EXPECT_EQ(response.status, 400);
  EXPECT_FALSE(response.stream);
}

TEST_F(WatchHandlerTest, CancelStopsTheWakeUps) {
  auto stream = open(get("/api/v1/namespaces/team/configmaps?watch=true&resourceVersion=" +
                         std::to_string(store_.revision())));
  ASSERT_TRUE(stream);
  create(configMap("team", "one"));
  const int before = wakes_.load();
  EXPECT_GE(before, 1);
  stream->cancel();
  create(configMap("team", "two"));
  EXPECT_EQ(wakes_.load(), before);
}

}  // namespace
}  // namespace harness::sim
