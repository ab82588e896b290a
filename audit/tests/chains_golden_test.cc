// The output of `audit chains` (text and -o json, with --all) and of `audit compare` on every log
// of testdata/ (real kube-apiserver and k3d logs, the simulator's), byte for byte against
// testdata/golden/: the fast reading path (chain_reader.cc: only the members a chain needs, read
// from simdjson's DOM) must print exactly what parsing each event whole printed. Written by the
// full parse before the fast path existed; refresh with HARNESS_UPDATE_GOLDEN=1 only when the
// output is meant to change.

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "harness/audit/commands.h"
#include "harness/testing/support.h"

namespace harness::audit {
namespace {

namespace fs = std::filesystem;

const fs::path& testdata() {
  static const fs::path dir = testing::sourceDir() / "audit" / "tests" / "testdata";
  return dir;
}

// Paths in the output are those of the source tree: replaced by "LOG" so the goldens do not
// depend on where the tree is.
std::string withoutDir(std::string text) {
  const std::string dir = testdata().string() + "/";
  for (std::size_t at; (at = text.find(dir)) != std::string::npos;) {
    text.replace(at, dir.size(), "");
  }
  return text;
}

void expectGolden(const std::string& name, const std::string& actual) {
  const fs::path golden = testdata() / "golden" / name;
  if (const char* update = std::getenv("HARNESS_UPDATE_GOLDEN");
      update != nullptr && std::string(update) == "1") {
    fs::create_directories(golden.parent_path());
    testing::writeFile(golden, actual);
  }
  ASSERT_TRUE(fs::exists(golden)) << golden << " missing (HARNESS_UPDATE_GOLDEN=1 writes it)";
  EXPECT_EQ(actual, testing::readFile(golden))
      << name << ": refresh with HARNESS_UPDATE_GOLDEN=1 only if the change is intended";
}

const char* const kLogs[] = {"k3d_linkerd_pod_create.log", "kube_denials.log",
                             "kube_failed_open_index.log", "kube_seed_tutorial.log",
                             "kube_transport_errors.log",  "sim_seed_tutorial.log",
                             "simulator_chains.log"};

TEST(ChainsGolden, EveryTestdataLogPrintsAsBefore) {
  for (const char* log : kLogs) {
    for (const bool all : {false, true}) {
      for (const char* output : {"text", "json"}) {
        ChainsOptions options;
        options.logs = {(testdata() / log).string()};
        options.all = all;
        options.output = output;
        std::ostringstream out, err;
        const int status = chainsCommand(options, out, err);
        expectGolden(std::string(log) + (all ? ".all." : ".") + output,
                     "status " + std::to_string(status) + "\n" + withoutDir(out.str()) +
                         "--- stderr\n" + withoutDir(err.str()));
      }
    }
  }
}

TEST(ChainsGolden, CompareOfTestdataLogsPrintsAsBefore) {
  const std::pair<const char*, const char*> kPairs[] = {
      {"sim_seed_tutorial.log", "kube_seed_tutorial.log"},
      {"kube_seed_tutorial.log", "k3d_linkerd_pod_create.log"},
      {"kube_denials.log", "kube_transport_errors.log"},
      {"kube_transport_errors.log", "kube_transport_errors.log"},
      {"k3d_linkerd_pod_create.log", "k3d_linkerd_pod_create.log"},
      {"kube_failed_open_index.log", "simulator_chains.log"}};
  for (const auto& [a, b] : kPairs) {
    for (const char* output : {"text", "json"}) {
      CompareOptions options;
      options.expected = {(testdata() / a).string()};
      options.actual = {(testdata() / b).string()};
      options.output = output;
      std::ostringstream out, err;
      const int status = compareCommand(options, out, err);
      expectGolden(std::string("compare.") + a + "." + b + "." + output,
                   "status " + std::to_string(status) + "\n" + withoutDir(out.str()) +
                       "--- stderr\n" + withoutDir(err.str()));
      // The index of `actual` built from whole events: the same.
      for (const bool all : {false, true}) {
        CompareOptions whole = options;
        whole.full_parse = true;
        whole.all = all;
        CompareOptions fast = options;
        fast.all = all;
        std::ostringstream whole_out, whole_err, fast_out, fast_err;
        EXPECT_EQ(compareCommand(fast, fast_out, fast_err),
                  compareCommand(whole, whole_out, whole_err));
        EXPECT_EQ(fast_out.str(), whole_out.str()) << a << " " << b;
        EXPECT_EQ(fast_err.str(), whole_err.str()) << a << " " << b;
      }
    }
  }
}

}  // namespace
}  // namespace harness::audit
