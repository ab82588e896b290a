#pragma once

// Reports of a run of `apiserver-sim run`: a human table (default), one JSON document (-o json)
// and one JUnit XML document (-o junit, the format CI systems read: testsuites > testsuite per
// scenario > testcase per step, <failure> for expectations that do not hold, <error> for
// scenarios that could not be loaded or run). Each renderer returns the whole document.

#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/sim/scenario_runner.h"

namespace harness::sim {

// A scenario file that could not be read or parsed (bad input).
struct LoadError {
  std::string file;
  std::string message;  // the loader's full message
};

struct RunReport {
  std::vector<ScenarioResult> scenarios;
  std::vector<LoadError> load_errors;
  std::chrono::nanoseconds duration{0};

  // 0: every step selected passed; 1: some expectation failed; 2: bad input (a load error) or a
  // harness error (a scenario that could not be run).
  [[nodiscard]] int exitCode() const;
};

// One of `count` parts of a run (`--shard K/N`): the entries of the serial run (scenarios and
// files that do not load, in file order) at positions index-1, index-1+count, ...
struct Shard {
  unsigned index = 1;
  unsigned count = 1;
};

// How runScenarioFiles spreads a run: over threads and over the jobs of a CI matrix.
struct RunSplit {
  // Scenarios run at once, each on its own thread in its own environment (work directory, CA,
  // stubs and their ports, store, chain). The simulator only: another backend plays one at a
  // time.
  unsigned jobs = 1;
  Shard shard;  // this job's part of the run (1 <= index <= count)
};

// Finds the scenario files among `paths` (findScenarioFiles), loads each, and runs those whose
// name `run_filter` (RunFilter syntax, "" = all) selects, reported in file order. Files that do
// not load and paths that do not exist become load errors; the run goes on. With `split.shard`,
// only this shard's entries; with `split.jobs` > 1, that many scenarios at once (the report is
// the serial run's but for durations). Errors: a `run_filter` that does not parse, a bad shard.
// `on_load_error` (optional) is told about each load error of the shard.
core::Result<RunReport> runScenarioFiles(
    const std::vector<std::filesystem::path>& paths, std::string_view run_filter,
    const RunOptions& options, const std::function<void(const LoadError&)>& on_load_error = {},
    const RunSplit& split = {});

// "K/N" (--shard): 1 <= K <= N.
core::Result<Shard> parseShard(std::string_view text);

// Progress line for one finished step (stderr while running): "PASS  scenario/step (12.3ms)".
std::string progressLine(const ScenarioResult& scenario, const StepResult& step);

// SCENARIO / STEP / RESULT / TIME columns, failure details (message and diff) under the failing
// step, and a summary line.
std::string renderTable(const RunReport& report, bool with_explanations = false);

// The run as JSON (kind ScenarioRunReport; see scenarios/FORMAT.md "Reports").
nlohmann::json reportJson(const RunReport& report);
std::string renderJson(const RunReport& report);

// JUnit XML: well-formed and UTF-8 (invalid bytes and characters XML 1.0 forbids are replaced).
std::string renderJunit(const RunReport& report);

// Text for XML 1.0 (valid UTF-8, escaped; `attribute` also escapes quotes and line breaks).
std::string xmlEscaped(std::string_view value, bool attribute);

// The text of one failure as shown in the table and in JUnit: "<field>: <message>" and the diff
// indented below it.
std::string formatFailure(const ExpectationFailure& failure);

}  // namespace harness::sim
