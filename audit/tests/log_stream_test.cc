// Reading audit logs as streams (`apiserver-sim audit` on logs of gigabytes): lines one at a time
// with their numbers and offsets, overlong lines skipped without being held, chains built as
// reconstructChains builds them, and chains of two logs paired by an index of keys.

#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "harness/audit/chain.h"
#include "harness/audit/commands.h"
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

// `audit chains` and `compare` leave each responseObject as simdjson parsed it and replay against
// that (ChainReader::Options::defer_response_object): every chain of every real log prints,
// pairs and replays as the chain with the responseObject built as a tree.
std::vector<ChainReader::Entry> readChains(const std::string& text, bool keep_all, bool defer) {
  std::istringstream in(text);
  ChainReader::Options options;
  options.keep_all = keep_all;
  options.defer_response_object = defer;
  ChainReader reader(in, "audit.log", std::move(options));
  std::vector<ChainReader::Entry> entries;
  while (auto entry = reader.next([](const std::string&) {})) entries.push_back(std::move(*entry));
  return entries;
}

void expectSameReplay(const MutationChain& deferred, const MutationChain& tree,
                      const std::string& where) {
  EXPECT_EQ(formatChain(deferred), formatChain(tree)) << where;
  EXPECT_EQ(chainJson(deferred), chainJson(tree)) << where;
  EXPECT_EQ(responseObjectOf(deferred), tree.response_object) << where;
  EXPECT_EQ(deferred.name, tree.name) << where;
  const AdmittedBase a = admittedBase(deferred), b = admittedBase(tree);
  EXPECT_EQ(a.object, b.object) << where;
  EXPECT_EQ(a.filled, b.filled) << where;
  for (const PairBy by : {PairBy::kAuto, PairBy::kName, PairBy::kLabels, PairBy::kOrder}) {
    EXPECT_EQ(pairingKey(deferred, by), pairingKey(tree, by)) << where;
  }
}

TEST(ChainReader, DeferredResponsesReplayAsTrees) {
  std::size_t deferred_count = 0;
  for (const char* name : {"k3d_linkerd_pod_create.log", "kube_denials.log",
                           "kube_failed_open_index.log", "kube_seed_tutorial.log",
                           "kube_transport_errors.log", "sim_seed_tutorial.log",
                           "simulator_chains.log"}) {
    const std::string text = testdata(name);
    for (const bool keep_all : {false, true}) {
      const auto trees = readChains(text, keep_all, false);
      const auto deferred = readChains(text, keep_all, true);
      ASSERT_EQ(deferred.size(), trees.size()) << name;
      for (std::size_t i = 0; i < trees.size(); ++i) {
        EXPECT_EQ(trees[i].chain.deferred_response, nullptr);
        if (deferred[i].chain.deferred_response) {
          ++deferred_count;
          EXPECT_FALSE(deferred[i].chain.response_object) << name << " chain " << i;
        }
        expectSameReplay(deferred[i].chain, trees[i].chain,
                         std::string(name) + " chain " + std::to_string(i));
      }
    }
  }
  EXPECT_GT(deferred_count, 10u);
}

// The same on responseObjects made to reach every branch of the replay: repeated keys (parseJson
// keeps the last), numbers of other types (1 and 1.0 are equal), zero values the response leaves
// out, members filled from the response, differences at every depth, an ignored pointer through
// an array (compared on erased copies), and a responseObject that is not an object.
TEST(ChainReader, DeferredResponsesOfEveryShapeReplayAsTrees) {
  const std::string request =
      R"({"metadata":{"name":"p","namespace":"n"},"spec":{"containers":[{"name":"a","image":"i"}]}})";
  const std::string patch =
      R"([{"op":"add","path":"/spec/containers/-","value":{"name":"proxy","image":"x","ports":[{"containerPort":4143,"initialDelaySeconds":0}]}},{"op":"add","path":"/metadata/labels","value":{"k":"v"}},{"op":"add","path":"/spec/priority","value":1}])";
  const std::string good_spec =
      R"({"containers":[{"name":"a","image":"i"},{"name":"proxy","image":"x","ports":[{"containerPort":4143}]}],"priority":1.0,"dnsPolicy":"ClusterFirst","volumes":[{"name":"kube-api-access-abcde","projected":{}}]})";
  const std::string bad_spec =
      R"({"containers":[{"name":"a","image":"i"},{"name":"proxy","image":"y"}],"priority":2})";
  const std::string metadata = R"({"name":"p","namespace":"n","uid":"u1","labels":{"k":"v"}})";
  const std::vector<std::string> responses = {
      R"({"metadata":)" + metadata + R"(,"spec":)" + good_spec + R"(,"status":{"phase":"Pending"}})",
      R"({"metadata":)" + metadata + R"(,"spec":)" + bad_spec + R"(,"spec":)" + good_spec + "}",
      R"({"metadata":)" + metadata + R"(,"spec":)" + good_spec + R"(,"spec":)" + bad_spec + "}",
      R"({"metadata":)" + metadata + R"(,"spec":)" + good_spec + R"(,"extra":[1,{"a":null}]})",
      R"({"metadata":{"name":"p","labels":{"k":"v","k":"w"}},"spec":)" + good_spec + "}",
      R"({"metadata":[],"spec":)" + good_spec + "}",
      R"({"metadata":)" + metadata + R"(,"spec":[1,2]})",
      R"({"metadata":)" + metadata +
          R"(,"spec":{"containers":[{"name":"proxy","image":"x"},{"name":"a","image":"i","name":"b"}]}})",
      R"({})",
      R"("not an object")",
  };
  std::set<std::string> verdicts;
  for (std::size_t i = 0; i < responses.size(); ++i) {
    nlohmann::json annotations = {
        {"mutation.webhook.admission.k8s.io/round_0_index_0",
         R"({"configuration":"c","webhook":"w.example.com","mutated":true})"},
        {"patch.webhook.admission.k8s.io/round_0_index_0",
         R"({"configuration":"c","webhook":"w.example.com","patch":)" + patch +
             R"(,"patchType":"JSONPatch"})"}};
    const std::string line =
        R"({"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"RequestResponse","auditID":"id-)" +
        std::to_string(i) +
        R"(","stage":"ResponseComplete","requestURI":"/api/v1/namespaces/n/pods","verb":"create","user":{"username":"u"},"objectRef":{"resource":"pods","namespace":"n","apiVersion":"v1"},"responseStatus":{"metadata":{},"code":201},"requestObject":)" +
        request + R"(,"responseObject":)" + responses[i] +
        R"(,"annotations":)" + annotations.dump() + "}";
    auto tree = parseLogLineObjectsApart(line);
    auto deferred = parseLogLineDeferredResponse(line);
    ASSERT_TRUE(tree.ok() && deferred.ok()) << line;
    EXPECT_EQ(deferred->deferred_response != nullptr, responses[i][0] == '{') << i;
    const MutationChain a = chainOf(std::move(*deferred));
    const MutationChain b = chainOf(std::move(*tree));
    expectSameReplay(a, b, "response " + std::to_string(i));
    const std::string text = formatChain(b);
    verdicts.insert(text.substr(text.find("replay: ")));
  }
  // Not vacuous: the shapes reach different verdicts (matches, differs at several places).
  EXPECT_GE(verdicts.size(), 5u);
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
