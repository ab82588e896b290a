// Reading audit logs as streams (`apiserver-sim audit` on logs of gigabytes): lines one at a time
// with their numbers and offsets, overlong lines skipped without being held, chains built as
// reconstructChains builds them, and chains of two logs paired by an index of keys.

#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/audit/chain.h"
#include "harness/audit/log.h"
#include "harness/testing/support.h"

namespace harness::audit {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string testdata(const std::string& name) {
  return testing::readFile(testing::sourceDir() / "audit" / "tests" / "testdata" / name);
}

struct ReadLine {
  std::string text;
  std::size_t number;
  std::uint64_t offset;
  bool too_long;
};

std::vector<ReadLine> readLines(const std::string& text, std::size_t max_line_bytes) {
  std::istringstream in(text);
  LogLineReader reader(in, max_line_bytes);
  std::vector<ReadLine> lines;
  while (auto line = reader.next()) {
    lines.push_back({std::string(line->text), line->number, line->offset, line->too_long});
  }
  EXPECT_FALSE(reader.failed());
  return lines;
}

TEST(LogLineReader, LinesWithTheirNumbersAndOffsets) {
  const auto lines = readLines("a\r\n\nbc\nlast", 100);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].text, "a");
  EXPECT_EQ(lines[1].text, "");
  EXPECT_EQ(lines[2].text, "bc");
  EXPECT_EQ(lines[3].text, "last");
  EXPECT_EQ(lines[2].number, 3u);
  EXPECT_EQ(lines[2].offset, 4u);
  EXPECT_EQ(lines[3].offset, 7u);
  EXPECT_TRUE(readLines("", 100).empty());
}

// Lines that straddle the 1 MiB reads come out whole.
TEST(LogLineReader, LinesAcrossReads) {
  std::string text;
  std::vector<std::string> written;
  for (int i = 0; text.size() < (std::size_t{3} << 20); ++i) {
    written.push_back(std::string(static_cast<std::size_t>(1000 + i * 37 % 70000), 'x') +
                      std::to_string(i));
    text += written.back() + "\n";
  }
  const auto lines = readLines(text, kMaxLogLineBytes);
  ASSERT_EQ(lines.size(), written.size());
  std::uint64_t offset = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    EXPECT_EQ(lines[i].text, written[i]);
    EXPECT_EQ(lines[i].offset, offset);
    offset += written[i].size() + 1;
  }
}

// A line longer than the limit is reported, not held: the reader's memory does not grow with it
// (the old reader held the whole log, 7.4 GB for a 1 GB log).
TEST(LogLineReader, AnOverlongLineIsSkippedAsItStreamsBy) {
  const std::string huge(std::size_t{5} << 20, 'y');
  const auto lines = readLines("first\n" + huge + "\nafter\n" + huge, 1000);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0].text, "first");
  EXPECT_TRUE(lines[1].too_long);
  EXPECT_EQ(lines[1].text, "");
  EXPECT_EQ(lines[1].number, 2u);
  EXPECT_EQ(lines[2].text, "after");
  EXPECT_EQ(lines[2].number, 3u);
  EXPECT_EQ(lines[2].offset, 6u + huge.size() + 1);
  EXPECT_TRUE(lines[3].too_long);
}

TEST(LogLineReader, StartsAgainAtAnOffset) {
  const std::string text = "one\ntwo\nthree\n";
  std::istringstream in(text);
  in.seekg(4);
  LogLineReader reader(in, 100, 4, 2);
  auto line = reader.next();
  ASSERT_TRUE(line.has_value());
  EXPECT_EQ(line->text, "two");
  EXPECT_EQ(line->number, 2u);
  EXPECT_EQ(line->offset, 4u);
}

TEST(MayHoldChain, OnlyLinesThatCannotHoldAChainAreLeftUnparsed) {
  const std::string get =
      R"({"kind":"Event","stage":"ResponseComplete","verb":"get","annotations":{"a":"b"}})";
  EXPECT_FALSE(mayHoldChain(get, false));
  EXPECT_TRUE(mayHoldChain(get, true));
  EXPECT_FALSE(
      mayHoldChain(R"({"stage":"RequestReceived","requestURI":"/x?a=1\u0026b=2"})", true));
  // The words, literally or escaped.
  EXPECT_TRUE(mayHoldChain(R"({"stage":"ResponseComplete","annotations":{)"
                           R"("mutation.webhook.admission.k8s.io/round_0_index_0":"{}"}})",
                           false));
  EXPECT_TRUE(mayHoldChain(R"({"stage":"\u0052esponseComplete"})", true));
  EXPECT_TRUE(mayHoldChain(R"({"stage":"ResponseComplete","k":"webhook.admission.k8s.io\/x"})",
                           false));
  // Lines that are not one balanced JSON value go to the parser, which says what is wrong.
  EXPECT_TRUE(mayHoldChain(R"({"kind":"Event","level":"Metadata",)", false));
  EXPECT_TRUE(mayHoldChain(R"({"kind":"Event"}})", false));
  EXPECT_TRUE(mayHoldChain(R"({"kind":"Event})", false));
}

std::vector<ChainReader::Entry> streamChains(const std::string& text, bool keep_all,
                                             std::vector<std::string>* errors = nullptr) {
  std::istringstream in(text);
  ChainReader reader(in, "audit.log", keep_all);
  std::vector<ChainReader::Entry> entries;
  while (auto entry = reader.next([&](const std::string& error) {
    if (errors != nullptr) errors->push_back(error);
  })) {
    entries.push_back(std::move(*entry));
  }
  return entries;
}

TEST(ChainReader, TheChainsReconstructChainsBuildsFromTheWholeLog) {
  for (const char* name : {"simulator_chains.log", "k3d_linkerd_pod_create.log"}) {
    for (const bool keep_all : {false, true}) {
      const std::string text = testdata(name);
      const auto expected = reconstructChains(readLog(text, name).events, keep_all);
      const auto entries = streamChains(text, keep_all);
      ASSERT_EQ(entries.size(), expected.size()) << name << " keep_all " << keep_all;
      for (std::size_t i = 0; i < entries.size(); ++i) {
        EXPECT_EQ(entries[i].chain, expected[i]) << name << " chain " << i;
        // The offset leads back to the event.
        const std::string line = text.substr(entries[i].offset, text.find('\n', entries[i].offset) -
                                                                    entries[i].offset);
        auto event = parseLogLine(line);
        ASSERT_TRUE(event.ok()) << event.error().message;
        EXPECT_EQ(chainOf(*event), expected[i]);
      }
    }
  }
}

TEST(ChainReader, BadLinesThatCouldHoldAChainAreReportedWithFileAndLine) {
  const std::string good = testdata("simulator_chains.log");
  std::vector<std::string> errors;
  const auto entries = streamChains(
      "{\"kind\":\"Event\",\"stage\":\"ResponseComplete\",\n" + good +
          R"({"kind":"Event","level":"Metadata","stage":"ResponseComplete","annotations":)"
          R"({"patch.webhook.admission.k8s.io/round_0_index_0":7}})"
          "\n",
      false, &errors);
  EXPECT_EQ(entries.size(), 1u);
  ASSERT_GE(errors.size(), 2u);
  EXPECT_THAT(errors.front(), HasSubstr("audit.log:1: invalid JSON: "));
  EXPECT_THAT(errors.back(),
              HasSubstr("annotations.patch.webhook.admission.k8s.io/round_0_index_0: "
                        "expected a string, got number"));
}

MutationChain chain(const std::string& verb, const std::string& name,
                    const std::string& generate_name = {}) {
  MutationChain c;
  c.verb = verb;
  c.resource = "pods";
  c.namespace_name = "shop";
  c.name = name;
  if (!generate_name.empty()) {
    c.request_object = nlohmann::json{{"metadata", {{"generateName", generate_name}}}};
  }
  return c;
}

// The n-th request of a key pairs with the n-th of the same key; generated names pair by
// generateName (with the pod-template-hash removed), never by the random name.
TEST(ChainIndex, PairsTheNthRequestOfEachKey) {
  ChainIndex index;
  index.add(chain("create", "web-0"), {1, 10});
  index.add(chain("create", "web-0"), {2, 20});
  index.add(chain("delete", "web-0"), {3, 30});
  index.add(chain("create", "api-x7k2q", "api-"), {4, 40});
  auto take = [&](const MutationChain& c) {
    const auto position = index.take(c);
    return position ? static_cast<long>(position->offset) : -1L;
  };
  EXPECT_EQ(take(chain("create", "web-0")), 10);
  EXPECT_EQ(take(chain("create", "web-0")), 20);
  EXPECT_EQ(take(chain("create", "web-0")), -1);  // both taken
  EXPECT_EQ(take(chain("update", "web-0")), -1);
  EXPECT_EQ(take(chain("create", "api-p9d4m", "api-")), 40);
  EXPECT_EQ(take(chain("create", "api-p9d4m")), -1);
  ASSERT_EQ(index.unpaired().size(), 1u);
  EXPECT_EQ(index.unpaired()[0].first.offset, 30u);
}

// A look at a line without building its event: the members commands select on, JSON escapes
// decoded; nothing for what is not one event simdjson reads (the full parse words the error).
TEST(PeekEvent, ReadsTheSelectingMembersOfEveryRealEvent) {
  std::istringstream lines(testdata("kube_seed_tutorial.log"));
  std::size_t peeked = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    auto event = parseLogLine(line);
    ASSERT_TRUE(event.ok()) << event.error().message;
    const auto peek = peekEvent(line);
    ASSERT_TRUE(peek.has_value()) << line;
    ++peeked;
    EXPECT_EQ(peek->stage, toString(event->stage));
    EXPECT_EQ(peek->verb, event->verb);
    EXPECT_EQ(peek->user, event->user.username);
    const ObjectReference ref = event->object_ref.value_or(ObjectReference{});
    EXPECT_EQ(peek->resource, ref.resource);
    EXPECT_EQ(peek->api_group, ref.api_group);
    EXPECT_EQ(peek->namespace_name, ref.namespace_name);
    EXPECT_EQ(peek->name, ref.name);
    std::string generate_name;
    if (event->request_object && event->request_object->contains("metadata")) {
      generate_name = (*event->request_object)["metadata"].value("generateName", "");
    }
    EXPECT_EQ(peek->generate_name, generate_name);
  }
  EXPECT_EQ(peeked, 4u);  // the log's four events
  const auto escaped = peekEvent(
      R"({"kind":"Event","stage":"Response\u0043omplete","verb":"cre\u0061te","objectRef":{"name":"a\/b"}})");
  ASSERT_TRUE(escaped.has_value());
  EXPECT_EQ(escaped->stage, "ResponseComplete");
  EXPECT_EQ(escaped->verb, "create");
  EXPECT_EQ(escaped->name, "a/b");
  EXPECT_FALSE(peekEvent(R"({"kind":"Event","stage":"ResponseComplete")").has_value());
  EXPECT_FALSE(peekEvent(R"([1])").has_value());
  EXPECT_FALSE(peekEvent(R"({"kind":"EventList","items":[]})").has_value());
}

// What compare indexes: the event as parsed whole, its objects reduced to their metadata; errors
// as the full parse words them.
TEST(ParseLogLineMetadataOnly, TheEventWithItsObjectsMetadata) {
  std::istringstream lines(testdata("kube_seed_tutorial.log"));
  std::size_t with_objects = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    auto whole = parseLogLineObjectsApart(line);
    auto reduced = parseLogLineMetadataOnly(line);
    ASSERT_TRUE(whole.ok() && reduced.ok());
    EXPECT_EQ(reduced->event, whole->event);
    auto metadataOnly = [](const std::optional<nlohmann::json>& object) {
      std::optional<nlohmann::json> out;
      if (!object) return out;
      out = nlohmann::json::object();
      if (object->contains("metadata")) (*out)["metadata"] = (*object)["metadata"];
      return out;
    };
    EXPECT_EQ(reduced->request_object, metadataOnly(whole->request_object));
    EXPECT_EQ(reduced->response_object, metadataOnly(whole->response_object));
    with_objects += whole->response_object ? 1 : 0;
  }
  EXPECT_EQ(with_objects, 4u);
  const std::string bad =
      R"({"kind":"Event","level":"Request","auditID":"a","stage":"ResponseComplete","verb":"create","user":{},"responseStatus":{"metadata":{},"code":"403"},"requestObject":{"metadata":{"name":"x"},"spec":{}}})";
  auto refused = parseLogLineMetadataOnly(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().message, parseLogLineObjectsApart(bad).error().message);
  auto invalid = parseLogLineMetadataOnly(R"({"kind":"Event",)");
  ASSERT_FALSE(invalid.ok());
  EXPECT_THAT(invalid.error().message, HasSubstr("invalid JSON: "));
}

}  // namespace
}  // namespace harness::audit
