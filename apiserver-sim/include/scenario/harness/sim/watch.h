#pragma once

// `run --watch` and `explain --watch`: the scenarios are played again whenever one of their files
// changes (Linux inotify), and what changed in the outcome since the previous run is printed, so
// that editing a scenario, a webhook configuration or an injector's values is a loop of "save,
// look".

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "harness/core/result.h"
#include "harness/sim/report.h"

namespace harness::sim {

// The folders to watch for `paths` (scenario files and folders, as `run` takes them): every
// folder given, with its subfolders; the folder of every file given; and the folders of the files
// a scenario file names (`file:`, `values:`, `trustAnchors:`, `istioConfig:`, `istioValues:`,
// `istioMesh:`, `caFile:`, `auditPolicy:` values that name an existing file relative to it), so
// that editing ../seed-tutorial/pod.yaml re-runs a walkthrough that uses it. Sorted, unique.
std::vector<std::filesystem::path> watchedDirectories(
    const std::vector<std::filesystem::path>& paths);

// inotify watches on folders. Only changes to files a scenario can use count (*.yaml, *.yml,
// *.json, *.pem, *.crt, *.key; not hidden files, so an editor's swap files do not re-run).
class FileWatcher {
 public:
  // Errors: inotify is not available, or a folder cannot be watched (the error names it).
  static core::Result<std::unique_ptr<FileWatcher>> create(
      const std::vector<std::filesystem::path>& directories);
  ~FileWatcher();
  FileWatcher(const FileWatcher&) = delete;
  FileWatcher& operator=(const FileWatcher&) = delete;

  // Blocks until a relevant file changes, then keeps collecting for `settle_ms` after the last
  // change (an editor's save is several events: write, rename, chmod) and returns the changed
  // files, sorted and unique. Errors: reading inotify failed.
  core::Result<std::vector<std::filesystem::path>> waitForChanges(int settle_ms = 200);

  [[nodiscard]] std::size_t watchCount() const;

 private:
  FileWatcher() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// What differs between two runs, step by step: "~ scenario/step" with the changed lines of its
// outcome (result, response code and message, webhook calls and their outcomes, warnings, the
// admitted object without the fields the server sets), "+" for steps that are new, "-" for steps
// that are gone, and load errors that appeared or went away. "no change in any step's outcome"
// when nothing differs.
std::string describeRunChanges(const RunReport& before, const RunReport& after);

}  // namespace harness::sim
