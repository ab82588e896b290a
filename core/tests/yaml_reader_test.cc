// parseYamlDocuments reads YAML with libfyaml and falls back to yaml-cpp on any error: the two
// readers must give the same documents, or the same error, for everything the project reads.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/core/yaml.h"
#include "harness/core/yaml_reference.h"

namespace harness::core {
namespace {

// Both readers agree: the same documents, or the same error message.
void expectSameAsYamlCpp(std::string_view text, const std::string& what) {
  const auto fast = parseYamlDocuments(text);
  const auto reference = detail::parseYamlDocumentsWithYamlCpp(text);
  ASSERT_EQ(fast.ok(), reference.ok())
      << what << ": " << (fast.ok() ? reference.error().message : fast.error().message);
  if (fast.ok()) {
    EXPECT_EQ(nlohmann::json(*fast), nlohmann::json(*reference)) << what;
  } else {
    EXPECT_EQ(fast.error().message, reference.error().message) << what;
  }
}

TEST(YamlReaderTest, TrickySnippetsReadAsYamlCppReadsThem) {
  const std::vector<std::string> snippets = {
      "",
      "# only a comment\n",
      "---\n",
      "---\n---\n...\n",
      "a: 1\n---\nb: 2\n...\n---\nc: [3]\n",
      "key:\n",
      "key: ~\nk2: null\nk3: Null\nk4: NULL\nk5: nUll\n",
      "key: !!str\n",
      "key: !!str ~\n",
      "key: !!str 12\nk2: !!int \"12\"\nk3: !!float 1\nk4: ! 12\nk5: !local 12\n",
      "key: !!bool yes\n",
      "key: !<tag:yaml.org,2002:str> 1\n",
      "key: !!binary aGVsbG8=\n",
      "t: 2001-12-14t21:59:43.10-05:00\nd: 2002-12-14\n",
      "b: [yes, no, on, off, y, n, true, False]\n",
      "n: [0x1F, 0o17, 017, 0b101, 1_000, +12, -0, .5, 1e3, .inf, -.Inf, .NaN, 1:20]\n",
      "base: &b {x: 1, y: 2}\nderived:\n  <<: *b\n  y: 3\n",
      "list: &l [a, b]\nagain: *l\n",
      "a: &x 1\nb: &x 2\nc: *x\n",
      "merge:\n  <<: [{a: 1}, {b: 2}]\n",
      "key: *undefined\n",
      "s: 'it''s'\nd: \"tab\\there \\u00e9 \\x41 \\\n  continued\"\n",
      "lit: |\n  line 1\n   line 2\n\n\nstrip: |-\n  x\n\nkeep: |+\n  y\n\n",
      "fold: >\n  a\n  b\n\n  c\nfold2: >-\n  x\n",
      "indent: |2\n    two extra\n",
      "plain: this is\n  several lines\n\n  long\n",
      "url: http://example.com:8080/a#frag\nc: a # comment\n",
      "'quoted key': 1\n\"dq\": 2\n? complex\n: value\n",
      "? [a, b]\n: 1\n",
      "seq:\n- a\n- - b\n  - c\n- {d: e}\n-\n",
      "flow: {a: [1, {b: c}], 'd': \"e\", f: }\n",
      "json: {\"a\": [1, 2.5, true, null, \"x\"]}\n",
      "dup: 1\ndup: 2\n",
      "1: a\n2.5: b\ntrue: c\n~: d\n",
      "key: value\n  bad indentation: x\n",
      "a: [1, 2\n",
      "- a\nb: c\n",
      "a:\tb\n",
      "\ta: b\n",
      "key: \"unterminated\n",
      "%YAML 1.1\n---\na: 1\n",
      "%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n",
      "a: b: c\n",
      "[a, b]: c\n",
      "- &a x\n- *a\n- &a y\n- *a\n",
      "emoji: \"\\U0001F600\"\nraw: é\n",
      "nested: {a: {b: {c: {d: [[[[]]]]}}}}\n",
      "empty: {}\nnone: []\n",
      "key: 'multi\n  line single'\n",
      "-1\n",
      "scalar document\n",
      "a: 1\n--- |\n  text\n",
  };
  for (const auto& text : snippets) expectSameAsYamlCpp(text, "snippet \"" + text + "\"");
}

// Every YAML file of the project (scenarios, examples, test data, configurations).
TEST(YamlReaderTest, EveryYamlFileOfTheProjectReadsAsYamlCppReadsIt) {
  const char* source = std::getenv("HARNESS_SOURCE_DIR");  // set by CTest
  ASSERT_NE(source, nullptr) << "HARNESS_SOURCE_DIR is not set";
  const std::filesystem::path root(source);
  std::size_t files = 0;
  for (auto it = std::filesystem::recursive_directory_iterator(root);
       it != std::filesystem::recursive_directory_iterator(); ++it) {
    const auto name = it->path().filename().string();
    if (it->is_directory() && (name == "build" || name.starts_with("."))) {
      it.disable_recursion_pending();
      continue;
    }
    const auto ext = it->path().extension();
    if (!it->is_regular_file() || (ext != ".yaml" && ext != ".yml")) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    expectSameAsYamlCpp(text.str(), it->path().string());
    ++files;
  }
  EXPECT_GT(files, 50u);
}

}  // namespace
}  // namespace harness::core
