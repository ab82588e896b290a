// The scenario loader (apiserver-sim parseScenario, scenarios/FORMAT.md): YAML -> typed Scenario
// with webhook configurations defaulted and validated, every error naming file, line and field.
// The scenario's path is in a folder that does not exist, so `{file: ...}` entries with relative
// paths fail to read rather than reach into the checkout. Checked: no crash, and every
// endpoint of a loaded scenario can be found by its name.

#include "fuzz_support.h"
#include "harness/sim/scenario.h"

using namespace harness;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const std::filesystem::path path = "/nonexistent/fuzz/scenario.yaml";
  const std::string_view text = fuzz::asText(data, size);
  (void)sim::looksLikeScenario(text);
  auto scenario = sim::parseScenario(text, path);
  if (scenario.ok()) {
    for (const auto& endpoint : scenario->endpoints) {
      FUZZ_CHECK(scenario->findEndpoint(endpoint.name) != nullptr, endpoint.name);
    }
  }
  return 0;
}
