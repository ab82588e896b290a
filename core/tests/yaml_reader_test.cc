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

// Text that libfyaml 0.7.12 reads differently from yaml-cpp (a different value, bytes past the
// value, or a document where yaml-cpp finds a syntax error), found by fuzzing the two readers
// against each other: parseYamlDocuments must see it and let yaml-cpp read it.
TEST(YamlReaderTest, WhatLibfyamlMisreadsIsReadByYamlCpp) {
  const std::vector<std::string> snippets = {
      // Two escaped quotes in a row; the run of 32 returned bytes past the value.
      "k: 'a''''b c'\n",
      "k: 'at-k" + std::string(32, '\'') + "ey true :bool-key '\n",
      "k: 'at-k" + std::string(32, '\'') + "ey\ntrue :bool-key\n",  // never closed
      // Quoted over several lines with empty lines.
      "k: 'b\n  \n  '' \n\n  \n   \n   \n  '\n",
      "k: \"a\n\n\n  b\n\n\"\n",
      // \N and \_ in double quotes.
      "k: \"a\\Nb\"\n",
      "k: \"a\\_b\"\n",
      // Folded: keep chomping, a more-indented line after an empty one (a NUL byte).
      "k: >+\n  a\n\nx: 1\n",
      "k: >\n  e  \n  \n   d\n    f\n",
      // Literal: no line break at the end of the text; content not indented past its header.
      "k: |\n  a\n  b",
      "a:\n  k: |-\n  a\n  - x\n",
      "a:\n  k: | # c\n  e  \n...\n",
      // Block sequence entries and mapping values at or left of their collection's column.
      "k: \n  -\n  aa\n",
      "k: \n  - #x b\n  c\n",
      "i: !!st101\n1.5 f:loat-ke-key\n",
      // A plain scalar continued at the column of its mapping; tags without content.
      "k: a\nb\n",
      "!: of41k-o\ne",
      "!:ofno42k-o;e",
      "--- !foo\n",
      // "?" starting a plain scalar in a flow mapping; a tag with a "!" in its suffix.
      "base: {cpu: 050m, memory: ?12NOi}\n",
      "i: !!str!12\nj: 2\n",
      // A line of tabs; a carriage return alone; an explicit key whose content is a comment.
      "a: 1\n\t\t\nb: 2\n",
      "a: b\rc\nd: e\n",
      "- a\n- ? #@\n  b\n",
      // A flow scalar ending its line; "]" in a tag.
      "k: {0.\n  }\n",
      "!:]fn-o\ne",
  };
  for (const auto& text : snippets) {
    expectSameAsYamlCpp(text, "snippet \"" + text + "\"");
    EXPECT_FALSE(detail::libfyamlReads(text)) << text;
  }
}

// Every YAML file of the project (scenarios, examples, test data, configurations).
TEST(YamlReaderTest, EveryYamlFileOfTheProjectReadsAsYamlCppReadsIt) {
  const char* source = std::getenv("HARNESS_SOURCE_DIR");  // set by CTest
  ASSERT_NE(source, nullptr) << "HARNESS_SOURCE_DIR is not set";
  const std::filesystem::path root(source);
  std::size_t files = 0;
  std::size_t fast = 0;
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
    if (detail::libfyamlReads(text.str())) ++fast;
  }
  EXPECT_GT(files, 50u);
  // The fast reader stays the one that reads the project's files: the checks that send text to
  // yaml-cpp only catch what libfyaml gets wrong.
  EXPECT_GT(fast * 10, files * 9) << fast << " of " << files << " read by libfyaml";
}

}  // namespace
}  // namespace harness::core
