#include "harness/core/json.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace harness::core {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string nestedArrays(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::string nestedObjects(int depth) {
  std::string text;
  for (int i = 1; i < depth; ++i) text += "{\"a\":";
  text += "{}";
  text += std::string(depth - 1, '}');
  return text;
}

int depthOf(const nlohmann::json& value) {
  int depth = 0;
  for (const nlohmann::json* v = &value; v->is_structured(); ++depth) {
    if (v->empty()) return depth + 1;
    v = v->is_array() ? &v->front() : &v->begin().value();
  }
  return depth;
}

// encoding/json scanner.go: maxNestingDepth = 10000, checked after the push, so the 10,000th
// bracket is accepted and the 10,001st refused.
TEST(ParseJson, AcceptsGoMaximumNestingDepth) {
  auto arrays = parseJson(nestedArrays(kMaxJsonDepth));
  ASSERT_TRUE(arrays.ok()) << arrays.error().message;
  EXPECT_EQ(depthOf(*arrays), 10000);
  auto objects = parseJson(nestedObjects(kMaxJsonDepth));
  ASSERT_TRUE(objects.ok()) << objects.error().message;
  EXPECT_EQ(depthOf(*objects), 10000);
}

TEST(ParseJson, RefusesOneLevelMoreWithGoSyntaxError) {
  JsonError detail;
  auto arrays = parseJson(nestedArrays(kMaxJsonDepth + 1), &detail);
  ASSERT_FALSE(arrays.ok());
  EXPECT_EQ(arrays.error().message, "invalid character '[' exceeded max depth");
  EXPECT_TRUE(detail.too_deep);
  EXPECT_EQ(detail.offset, 10000u);  // the 10,001st '['

  auto objects = parseJson(" " + nestedObjects(kMaxJsonDepth + 1), &detail);
  ASSERT_FALSE(objects.ok());
  EXPECT_EQ(objects.error().message, "invalid character '{' exceeded max depth");
  EXPECT_EQ(detail.offset, 1u + 10000u * 5u);
}

TEST(ParseJson, RefusesHostileDepthWithoutBuildingIt) {
  // 100,000 levels: a recursive copy or dump of such a value overflows the stack.
  auto parsed = parseJson(nestedArrays(100000));
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.error().message, "invalid character '[' exceeded max depth");
  auto ordered = parseOrderedJson("{\"x\":" + nestedArrays(100000) + "}");
  ASSERT_FALSE(ordered.ok());
  EXPECT_EQ(ordered.error().message, "invalid character '[' exceeded max depth");
  EXPECT_TRUE(parseJsonOrDiscarded(nestedArrays(70000)).is_discarded());
}

TEST(ParseJson, BracketsInsideStringsDoNotCount) {
  const std::string text = "[\"" + std::string(20000, '[') + "\\\"\"]";
  auto parsed = parseJson(text);
  ASSERT_TRUE(parsed.ok()) << parsed.error().message;
  EXPECT_EQ((*parsed)[0].get<std::string>().size(), 20001u);
  EXPECT_EQ(tooDeepOffset(text), std::string_view::npos);
}

TEST(ParseJson, SyntaxErrorsBeforeTheLimitWin) {
  // The scanner stops at the first problem in text order, as Go's does.
  JsonError detail;
  auto parsed = parseJson("[x" + nestedArrays(20000), &detail);
  ASSERT_FALSE(parsed.ok());
  EXPECT_FALSE(detail.too_deep);
  EXPECT_EQ(detail.offset, 1u);
  EXPECT_THAT(parsed.error().message, StartsWith("parse error at line 1, column 2: "));
}

TEST(ParseJson, WholeTextOnly) {
  EXPECT_THAT(parseJson("{} {}").error().message, HasSubstr("end of input"));
  EXPECT_EQ(*parseJson("  {\"a\": [1, 2.5, \"x\", null, true]}\n"),
            nlohmann::json::parse(R"({"a": [1, 2.5, "x", null, true]})"));
  EXPECT_TRUE(parseJsonOrDiscarded("").is_discarded());
  // ordered_json keeps member order.
  EXPECT_EQ(parseOrderedJson(R"({"b":1,"a":2})")->begin().key(), "b");
}

TEST(FindTooDeep, FindsTheFirstContainerBeyondTheLimitInMemberOrder) {
  nlohmann::json value = {{"a", nlohmann::json::array({nlohmann::json::array()})},
                          {"b", {{"c", nlohmann::json::object()}}}};
  EXPECT_EQ(findTooDeep(value, 3), nullptr);
  const nlohmann::json* found = findTooDeep(value, 2);
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found, &value["a"][0]);
  EXPECT_EQ(findTooDeep(value["b"], 1), &value["b"]["c"]);
  EXPECT_EQ(findTooDeep(nlohmann::json(1), 0), nullptr);
  auto deep = parseJson(nestedArrays(kMaxJsonDepth));
  ASSERT_TRUE(deep.ok());
  EXPECT_EQ(findTooDeep(*deep), nullptr);
  EXPECT_NE(findTooDeep(*deep, kMaxJsonDepth - 1), nullptr);
}

TEST(ParseJsonAt, ReadsAStreamOfValues) {
  const std::string text = "{\"a\":1}\n{\"b\":2} [3]";
  std::size_t offset = 0;
  auto first = parseJsonAt(text, offset);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ((*first)["a"], 1);
  EXPECT_EQ(offset, 7u);
  auto second = parseJsonAt(text, offset);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ((*second)["b"], 2);
  auto third = parseJsonAt(text, offset);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(*third, nlohmann::json::array({3}));

  const std::string deep = "{} " + nestedArrays(kMaxJsonDepth + 1);
  offset = 0;
  ASSERT_TRUE(parseJsonAt(deep, offset).ok());
  JsonError detail;
  auto refused = parseJsonAt(deep, offset, &detail);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(detail.too_deep);
  EXPECT_EQ(detail.offset, 3u + 10000u);
}

}  // namespace
}  // namespace harness::core

namespace harness::core {
namespace {

// The same value with the same types all the way down (nlohmann's == calls 1 and 1u and 1.0
// equal).
template <class Json>
bool identical(const Json& a, const Json& b) {
  if (a.type() != b.type()) return false;
  if (a.is_number_float()) {
    const double x = a.template get<double>();
    const double y = b.template get<double>();
    return x == y && std::signbit(x) == std::signbit(y);
  }
  if (a.is_object()) {
    if (a.size() != b.size()) return false;
    for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
      if (i.key() != j.key() || !identical(i.value(), j.value())) return false;
    }
    return true;
  }
  if (a.is_array()) {
    if (a.size() != b.size()) return false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!identical(a[i], b[i])) return false;
    }
    return true;
  }
  return a == b;
}

// parseJson and parseOrderedJson (their fast path included) against nlohmann's own parser:
// accepted by both with identical values, or refused by both with nlohmann's message.
void expectSameAsNlohmann(const std::string& text) {
  SCOPED_TRACE("text: " + testing::PrintToString(text));
  const auto reference = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto parsed = parseJson(text);
  ASSERT_EQ(parsed.ok(), !reference.is_discarded())
      << (parsed.ok() ? parsed->dump() : parsed.error().message);
  if (parsed.ok()) {
    EXPECT_TRUE(identical(*parsed, reference)) << parsed->dump() << " vs " << reference.dump();
  } else {
    std::string message;
    try {
      message = nlohmann::json::parse(text).dump();
    } catch (const nlohmann::json::exception& e) {
      message = e.what();
    }
    EXPECT_THAT(message, HasSubstr(parsed.error().message));
  }
  const auto ordered_reference =
      nlohmann::ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  const auto ordered = parseOrderedJson(text);
  ASSERT_EQ(ordered.ok(), !ordered_reference.is_discarded());
  if (ordered.ok()) {
    EXPECT_TRUE(identical(*ordered, ordered_reference)) << ordered->dump();
  }
}

TEST(ParseJson, BuildsWhatNlohmannBuilds) {
  for (const std::string& text : std::vector<std::string>{
           R"({"a":1,"b":[true,false,null],"c":{"d":"e"}})", " \t\r\n[ 1 , 2 ]\n ", "{}", "[]",
           R"([{},[],{"":""}])", "0", "1", "-1", "18446744073709551615",
           "18446744073709551616", "-9223372036854775808", "-9223372036854775809",
           "99999999999999999999999", "1.5", "-0.0", "1e3", "1E+3", "2.5e-3", "1e400", "-1e400",
           "0.1e1", R"({"a":1,"a":2,"b":3})", R"({"b":1,"a":{"x":1},"a":[2]})",
           R"("\u0000\b\f\n\r\t\"\\\/")", R"("\u00e9\u20ac\ud83d\ude00")", "\"\xc3\xa9\xe2\x82\xac\"",
           "\"\xf0\x9f\x98\x80\"", "\"\xed\x9f\xbf\"", "\"\xef\xbf\xbf\"", "\"\xf4\x8f\xbf\xbf\"",
           // Refused, each for its own reason.
           "", " ", "{", "[", "]", "[1,]", R"({"a":1,})", R"({"a" 1})", R"({a:1})", "[1 2]",
           "01", "-01", "-", "1.", ".5", "1e", "1e+", "+1", "0x10", "NaN", "Infinity", "tru",
           "nul", "falsey", "[1]]", "[1] x", "\"abc", R"("\x")", R"("\u12")", R"("\uZZZZ")",
           R"("\ud800")", R"("\udc00")", R"("\ud800\u0041")", R"("\ud800x")",
           std::string("\"a\x01\""), std::string("\"\t\""), "\"\xc0\xaf\"", "\"\xc3\"",
           "\"\xe0\x80\x80\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xf5\x80\x80\x80\"",
           "\"\x80\"", "\"\xff\"", "\xef\xbb\xbf[1]", std::string("[1]\0", 4),
           std::string("[\0]", 3)}) {
    expectSameAsNlohmann(text);
  }
}

// "-0" is the one text whose number kind differs from nlohmann's (unsigned 0 for signed 0): the
// same number, equal and dumped the same.
TEST(ParseJson, MinusZeroIsZero) {
  const auto parsed = parseJson("[-0, -0.0]");
  ASSERT_TRUE(parsed.ok());
  EXPECT_EQ((*parsed)[0], nlohmann::json(0));
  EXPECT_TRUE((*parsed)[1].is_number_float());
  EXPECT_TRUE(std::signbit((*parsed)[1].get<double>()));
  EXPECT_EQ(parsed->dump(), "[0,-0.0]");
}

// A document over 1 MiB (parsed by a parser of its own) and a small one after it (the thread's
// parser) build what nlohmann builds.
TEST(ParseJson, LargeDocumentThenSmallOne) {
  nlohmann::json big = nlohmann::json::array();
  for (int i = 0; i < 40000; ++i) {
    big.push_back({{"name", "container-" + std::to_string(i)}, {"port", i}, {"ratio", i / 7.0}});
  }
  const std::string text = big.dump();
  ASSERT_GT(text.size(), std::size_t{1} << 20);
  expectSameAsNlohmann(text);
  expectSameAsNlohmann(R"({"small":[1,-2,3.5]})");
}

// Random damage to realistic documents: whatever the bytes, the same outcome as nlohmann.
TEST(ParseJson, BuildsWhatNlohmannBuildsFromDamagedText) {
  const std::vector<std::string> seeds = {
      R"({"kind":"Event","apiVersion":"audit.k8s.io/v1","annotations":{"patch.webhook.admission.k8s.io/round_0_index_0":"{\"configuration\":\"c\",\"patch\":[{\"op\":\"add\",\"path\":\"/a~1b\",\"value\":\"\u003c\"}]}"},"n":[0,-1,2.5e3,18446744073709551615]})",
      R"([{"name":"caf\u00e9","value":"\ud83d\ude00 ok","x":null,"y":true,"z":false},[[]],{}])",
      "{\"k\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\",\"n\":-9223372036854775808}"};
  const std::string alphabet = "{}[]\",:\\/u0123456789abcdefABCDEF-+.eE \t\n\r\x01\x7f\x80\xbf"
                               "\xc3\xe2\xed\xf0\xf4\xff";
  std::mt19937 random(20261125);
  for (const auto& seed : seeds) {
    for (int round = 0; round < 3000; ++round) {
      std::string text = seed;
      const int edits = 1 + static_cast<int>(random() % 3);
      for (int e = 0; e < edits && !text.empty(); ++e) {
        const std::size_t at = random() % text.size();
        const char c = alphabet[random() % alphabet.size()];
        switch (random() % 3) {
          case 0:
            text[at] = c;
            break;
          case 1:
            text.insert(text.begin() + static_cast<std::ptrdiff_t>(at), c);
            break;
          default:
            text.erase(at, 1 + random() % 4);
            break;
        }
      }
      expectSameAsNlohmann(text);
      if (HasFatalFailure() || HasNonfatalFailure()) return;
    }
  }
}

// dumpJson writes its own JSON text (nlohmann's serializer was a third of the Linkerd webhook's
// instructions): byte for byte what nlohmann's dump() with U+FFFD replacement writes.
std::string nlohmannDump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

TEST(DumpJson, WritesWhatNlohmannWritesForEveryByteAndKind) {
  std::string every_ascii;
  for (int c = 0; c < 0x80; ++c) every_ascii.push_back(static_cast<char>(c));
  const std::vector<nlohmann::json> values = {
      nullptr, true, false, 0, -1, 42, std::numeric_limits<std::int64_t>::min(),
      std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::uint64_t>::max(), 1.5,
      -0.0, 1e300, 0.1, 1.0, std::nan(""), std::numeric_limits<double>::infinity(), "",
      every_ascii, "h\xc3\xa9llo \xe2\x82\xac \xf0\x9f\x98\x80",  // valid UTF-8
      "bad \xff byte", "cut \xe2\x82", "\xed\xa0\x80 surrogate", "\xc0\xaf overlong",
      nlohmann::json::object(), nlohmann::json::array(),
      {{"a", 1}, {"b", {1, 2.5, "x\ny"}}, {"\x01key\"\\", nullptr}, {"k\xff", "v"}},
      nlohmann::json::binary({1, 2, 3})};
  for (const auto& v : values) EXPECT_EQ(dumpJson(v), nlohmannDump(v)) << nlohmannDump(v);
  // Each byte that needs a look at each place of a string read eight bytes at a time.
  for (const std::string special :
       {"\"", "\\", "\n", "\x1f", "\x7f", " ", "~", "\xc3\xa9", "\xff"}) {
    for (std::size_t at = 0; at <= 24; ++at) {
      std::string text(24, 'a');
      text.insert(at, special);
      EXPECT_EQ(dumpJson(text), nlohmannDump(text)) << at;
    }
  }
  EXPECT_EQ(dumpJson(nlohmann::json(values)), nlohmannDump(nlohmann::json(values)));
}

TEST(DumpJson, WritesWhatNlohmannWritesForRandomDocuments) {
  std::mt19937 rng(19);
  const std::string alphabet = std::string("ab\"\\/\n\t\x01\x1f\x7f ") + "\xc3\xa9\xe2\x82\xac\xff";
  auto text = [&] {
    std::string s;
    for (int n = static_cast<int>(rng() % 12); n > 0; --n) {
      s.push_back(alphabet[rng() % alphabet.size()]);
    }
    return s;
  };
  std::function<nlohmann::json(int)> make = [&](int depth) -> nlohmann::json {
    switch (depth > 4 ? rng() % 4 : rng() % 7) {
      case 0: return text();
      case 1: return static_cast<std::int64_t>(rng()) - (1LL << 31);
      case 2: return static_cast<double>(rng()) / 7.0;
      case 3: return rng() % 2 == 0;
      case 4: {
        nlohmann::json a = nlohmann::json::array();
        for (int n = static_cast<int>(rng() % 4); n > 0; --n) a.push_back(make(depth + 1));
        return a;
      }
      default: {
        nlohmann::json o = nlohmann::json::object();
        for (int n = static_cast<int>(rng() % 4); n > 0; --n) o[text()] = make(depth + 1);
        return o;
      }
    }
  };
  for (int i = 0; i < 2000; ++i) {
    const auto v = make(0);
    ASSERT_EQ(dumpJson(v), nlohmannDump(v)) << i;
    // A size guess, too small or too large, changes the capacity only.
    ASSERT_EQ(dumpJson(v, 1), nlohmannDump(v)) << i;
    ASSERT_EQ(dumpJson(v, 4096), nlohmannDump(v)) << i;
  }
}

TEST(DumpJson, ReservesTheExpectedSizeOnce) {
  const nlohmann::json review = {{"request", {{"uid", "u"}}}, {"patch", std::string(9000, 'A')}};
  const std::string text = dumpJson(review, 10000);
  EXPECT_EQ(text, dumpJson(review));
  EXPECT_GE(text.capacity(), 10000u);
}

}  // namespace
}  // namespace harness::core
