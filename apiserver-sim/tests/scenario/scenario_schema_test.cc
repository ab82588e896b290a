// The scenario JSON Schema (scenarios/schema/scenario.schema.json) against the loader: every
// scenario file in the repository that the loader accepts must validate against the schema, so
// the two cannot drift (the loader is the truth; FORMAT.md documents both). Validation by
// valijson (Debian libvalijson-dev) through its nlohmann::json adapter.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <valijson/adapters/nlohmann_json_adapter.hpp>
#include <valijson/schema.hpp>
#include <valijson/schema_parser.hpp>
#include <valijson/validation_results.hpp>
#include <valijson/validator.hpp>

#include "harness/core/yaml.h"
#include "harness/sim/scenario.h"
#include "harness/testing/support.h"

namespace harness::sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

std::string readFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

class ScenarioSchema {
 public:
  ScenarioSchema() {
    const auto text = readFile(testing::sourceDir() / "scenarios" / "schema" /
                               "scenario.schema.json");
    document_ = json::parse(text);
    valijson::SchemaParser parser(valijson::SchemaParser::kDraft7);
    valijson::adapters::NlohmannJsonAdapter adapter(document_);
    parser.populateSchema(adapter, schema_);
  }

  // The schema's complaints about `document`, one line each ("<JSON path>: <reason>").
  std::vector<std::string> errors(const json& document) const {
    valijson::Validator validator(valijson::Validator::kStrongTypes);
    valijson::ValidationResults results;
    valijson::adapters::NlohmannJsonAdapter adapter(document);
    std::vector<std::string> out;
    if (validator.validate(schema_, adapter, &results)) return out;
    valijson::ValidationResults::Error error;
    while (results.popError(error)) {
      std::string where;
      for (const auto& part : error.context) where += part;
      out.push_back(where + ": " + error.description);
    }
    return out;
  }

 private:
  json document_;
  valijson::Schema schema_;
};

const ScenarioSchema& schema() {
  static const ScenarioSchema kSchema;
  return kSchema;
}

// The YAML files of the source tree whose top level says kind: Scenario (scenarios/CMakeLists.txt
// makes each under scenarios/ a test; others are fuzz seeds and test data).
std::vector<fs::path> scenarioFiles() {
  std::vector<fs::path> out;
  const fs::path root = testing::sourceDir();
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator();
       ++it) {
    const auto name = it->path().filename().string();
    if (it->is_directory() && (name == "build" || name == ".git")) {
      it.disable_recursion_pending();
      continue;
    }
    const auto ext = it->path().extension();
    if (!it->is_regular_file() || (ext != ".yaml" && ext != ".yml")) continue;
    std::istringstream lines(readFile(it->path()));
    for (std::string line; std::getline(lines, line);) {
      if (line.rfind("kind: Scenario", 0) == 0 &&
          line.find_first_not_of(" \t", 14) == std::string::npos) {
        out.push_back(it->path());
        break;
      }
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(ScenarioSchemaTest, EveryScenarioTheLoaderAcceptsValidates) {
  std::size_t validated = 0;
  for (const auto& file : scenarioFiles()) {
    const auto relative = fs::relative(file, testing::sourceDir()).string();
    const bool library = relative.rfind("scenarios/", 0) == 0;
    auto loaded = loadScenario(file);
    // The scenario library must load (its CTest tests say why not); elsewhere a file the loader
    // rejects (a fuzz seed kept for its malformation) says nothing about the schema.
    if (!loaded) {
      EXPECT_FALSE(library) << relative << ": " << loaded.error().message;
      continue;
    }
    auto document = core::parseYaml(readFile(file));
    ASSERT_TRUE(document.ok()) << relative;
    const auto errors = schema().errors(*document);
    EXPECT_TRUE(errors.empty()) << relative << " does not match scenarios/schema:\n  "
                                << ::testing::PrintToString(errors);
    ++validated;
  }
  // The library has some 60 scenarios: a walk that found none would pass vacuously.
  EXPECT_GE(validated, 50u);
}

// A document the schema must refuse, for each kind of drift the test above guards against.
TEST(ScenarioSchemaTest, RefusesWrongDocuments) {
  const json valid = json::parse(R"({
    "apiVersion": "apiserver-sim.harness.dev/v1alpha1", "kind": "Scenario",
    "metadata": {"name": "x"},
    "spec": {"steps": [{"name": "create", "request": {"operation": "CREATE",
             "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}},
             "expect": {"allowed": true}}]}})");
  EXPECT_TRUE(schema().errors(valid).empty()) << ::testing::PrintToString(schema().errors(valid));

  json unknown_field = valid;
  unknown_field["spec"]["stepz"] = json::array();
  EXPECT_FALSE(schema().errors(unknown_field).empty());

  json wrong_type = valid;
  wrong_type["spec"]["steps"][0]["expect"]["allowed"] = "yes";
  EXPECT_FALSE(schema().errors(wrong_type).empty());

  json wrong_kind = valid;
  wrong_kind["kind"] = "Scenarios";
  EXPECT_FALSE(schema().errors(wrong_kind).empty());

  json no_steps = valid;
  no_steps["spec"].erase("steps");
  EXPECT_FALSE(schema().errors(no_steps).empty());
}

}  // namespace
}  // namespace harness::sim
