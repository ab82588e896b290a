#pragma once

// What the lint tests share: YAML documents loaded as lint loads a file, and findings by rule.

#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/core/yaml.h"
#include "harness/sim/lint.h"
#include "harness/sim/lint_input.h"

namespace harness::sim::lint::testing_support {

// The documents of `yaml` added as lint adds a file's (source "test.yaml").
inline LoadedInput load(const std::string& yaml) {
  LoadedInput loaded;
  auto documents = core::parseYamlDocuments(yaml);
  EXPECT_TRUE(documents.ok()) << documents.error().message;
  if (!documents.ok()) return loaded;
  for (const auto& document : *documents) {
    auto added = addDocument(document, "test.yaml", loaded);
    EXPECT_TRUE(added.ok()) << added.error().message;
  }
  return loaded;
}

inline std::vector<Finding> withRule(const std::vector<Finding>& findings,
                                     const std::string& rule) {
  std::vector<Finding> out;
  std::copy_if(findings.begin(), findings.end(), std::back_inserter(out),
               [&](const Finding& f) { return f.rule == rule; });
  return out;
}

}  // namespace harness::sim::lint::testing_support
