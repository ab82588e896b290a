// The properties' rapidcheck parameters, set before any property runs: a fixed seed (a run is
// reproducible, and CTest never fails by chance) and rapidcheck's default case count (100),
// raised by HARNESS_PROPERTY_CASES for a long run (scripts/bench-properties.sh uses 10000).
// RC_PARAMS given by the caller wins for what it sets (e.g. `reproduce=...` from a failure).

#include <cstdlib>
#include <string>

namespace {

constexpr const char* kSeed = "20261126";

struct PropertyParams {
  PropertyParams() {
    const char* given = std::getenv("RC_PARAMS");
    std::string params = given ? given : "";
    if (params.find("seed=") == std::string::npos) params += std::string(" seed=") + kSeed;
    if (const char* cases = std::getenv("HARNESS_PROPERTY_CASES");
        cases && *cases && params.find("max_success=") == std::string::npos) {
      params += std::string(" max_success=") + cases;
    }
    setenv("RC_PARAMS", params.c_str(), 1);
  }
};

// Runs before main(): rapidcheck reads RC_PARAMS on its first check.
const PropertyParams kParams;

}  // namespace
