#pragma once

// `apiserver-sim compare --backend kube PATH...`: every scenario played on the simulator and on
// another backend (the real control plane), and, step by step, where the two differ: status
// code, reason, message, the object after admission (field by field), warnings, admission
// annotations, the audit event (level, annotations, objects recorded), the admission webhook
// counters, what each stub received, and the webhook calls.
//
// Known differences (one YAML file, scenarios/known-differences.yaml) are listed with the
// reason and the upstream code that explains them; a difference that is not listed makes the
// comparison fail, and a listed one that no longer occurs in a scenario compared is reported
// (and fails it too, so the list stays true; entries for scenario "*" or marked intermittent
// are not).

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/sim/report.h"

namespace harness::sim {

// One entry of the known-differences file:
//   - scenario: audit-levels        # exact name, or "*"
//     step: "*"                     # exact step name, or "*"
//     field: "object:/status/*"     # exact field, or a prefix ending in "*" ("x/*" covers x too)
//     reason: ...                   # why the real server answers differently
//     upstream: k8s.io/...          # the upstream code that explains it
//     intermittent: true            # optional: depends on a race (never reported as stale)
struct KnownDifference {
  std::string scenario, step, field, reason, upstream;
  bool intermittent = false;
  std::string location;  // "file:line" for messages
  bool matches(const std::string& scenario_name, const std::string& step_name,
               const std::string& field_name) const;
};

// Reads the file; errors name the file, the entry and the field.
core::Result<std::vector<KnownDifference>> loadKnownDifferences(
    const std::filesystem::path& path);

// The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows its assert_invariant()
// into a throw it cannot reach.
// NOLINTNEXTLINE(bugprone-exception-escape)
struct FieldDifference {
  std::string field;  // "code", "object:/metadata/labels/x", "annotations:<key>", "metrics:<series>"...
  nlohmann::json simulator, other;  // null when absent on that side
  std::string diff;                 // line diff of the two (YAML), "-" simulator, "+" other
  const KnownDifference* known = nullptr;
};

struct StepComparison {
  std::string name;
  enum class Result { kIdentical, kDifferent, kKnown, kSkipped } result = Result::kIdentical;
  std::string note;  // why skipped
  std::vector<FieldDifference> differences;
};

struct ScenarioComparison {
  std::string name;
  std::string file;
  std::string error;  // a harness error on either side
  std::vector<StepComparison> steps;
};

struct ComparisonReport {
  std::string other_backend;
  std::vector<ScenarioComparison> scenarios;
  std::vector<LoadError> load_errors;
  // Known differences that did not occur among the scenarios compared.
  std::vector<const KnownDifference*> stale;

  struct Counts {
    std::size_t scenarios = 0, steps = 0, identical = 0, known = 0, different = 0, skipped = 0,
                errors = 0;
  };
  [[nodiscard]] Counts counts() const;
  // 0: no unlisted difference and no stale entry; 1: some; 2: a load or harness error.
  [[nodiscard]] int exitCode() const;
};

// The observable result of a step as compared (and shown in diffs): a JSON object with the
// fields above; `unobservable` fields of the other backend are left out on both sides.
nlohmann::json comparableView(const StepResult& step, const std::vector<std::string>& unobservable);

// Pairs the runs' scenarios (by file and name) and steps (by name) and compares them.
ComparisonReport compareRuns(const RunReport& simulator, const RunReport& other,
                             const std::vector<KnownDifference>& known);

std::string renderComparisonTable(const ComparisonReport& report);
nlohmann::json comparisonJson(const ComparisonReport& report);
std::string renderComparisonJunit(const ComparisonReport& report);

}  // namespace harness::sim
