#include "harness/sim/watch.h"

#include <poll.h>
#include <sys/inotify.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "harness/sim/scenario.h"

namespace harness::sim {
namespace fs = std::filesystem;

namespace {

// The fields of the scenario format whose value is a file name relative to the scenario
// (scenarios/FORMAT.md): objects and webhookConfigurations entries, injector and external
// endpoint files, the audit policy.
const std::regex kFileField(
    R"((?:^|[\s{,-])(?:file|values|trustAnchors|istioConfig|istioValues|istioMesh|caFile|auditPolicy):\s*["']?([^"'\s,}#]+))");

void addTree(const fs::path& dir, std::set<fs::path>& out) {
  std::error_code ec;
  out.insert(fs::weakly_canonical(dir, ec));
  for (auto it = fs::recursive_directory_iterator(dir, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it->is_directory(ec)) out.insert(fs::weakly_canonical(it->path(), ec));
  }
}

// The folders of the files a scenario file names.
void addReferencedFolders(const fs::path& file, std::set<fs::path>& out) {
  std::ifstream in(file, std::ios::binary);
  std::string line;
  while (std::getline(in, line)) {
    for (std::sregex_iterator it(line.begin(), line.end(), kFileField), end; it != end; ++it) {
      std::error_code ec;
      const fs::path named = file.parent_path() / (*it)[1].str();
      if (fs::is_regular_file(named, ec)) {
        out.insert(fs::weakly_canonical(named.parent_path(), ec));
      }
    }
  }
}

bool relevantFile(const std::string& name) {
  if (name.empty() || name.front() == '.') return false;
  for (const char* suffix : {".yaml", ".yml", ".json", ".pem", ".crt", ".key"}) {
    const std::string_view s(suffix);
    if (name.size() > s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0) {
      return true;
    }
  }
  return false;
}

// One step's outcome as lines, for comparing two runs.
std::string outcomeText(const StepResult& step) {
  std::ostringstream out;
  out << "result: " << toString(step.status) << "\n";
  if (!step.skip_reason.empty()) out << "skipped: " << step.skip_reason << "\n";
  for (const auto& failure : step.failures) {
    out << "failed: " << failure.field << ": " << failure.message << "\n";
  }
  if (!step.admission) return out.str();
  const auto& admission = *step.admission;
  out << "response: " << admission.code << (admission.allowed ? " allowed" : " denied") << "\n";
  if (admission.status) out << "message: " << admission.status->message << "\n";
  for (const auto& call : admission.calls) {
    out << fmt::format("call: {} {} round {} {}{}\n", call.configuration, call.webhook, call.round,
                       toString(call.outcome), call.changed ? " (changed the object)" : "");
  }
  for (const auto& warning : admission.warnings) out << "warning: " << warning << "\n";
  if (admission.object) {
    // One line per leaf, so that a changed field is one "-" and one "+" line.
    const nlohmann::json flat = withoutServerSetFields(*admission.object).flatten();
    for (const auto& [pointer, value] : flat.items()) {
      out << "object " << pointer << ": " << value.dump() << "\n";
    }
  }
  return out.str();
}

std::string scenarioText(const ScenarioResult& scenario) {
  std::string text;
  if (scenario.error) text += "error: " + *scenario.error + "\n";
  if (scenario.skip_reason) text += "skipped: " + *scenario.skip_reason + "\n";
  return text;
}

// The "-" and "+" lines of a line diff (the unchanged ones are left out).
std::string changedLines(const std::string& before, const std::string& after) {
  std::istringstream diff(lineDiff(before, after));
  std::string line, out;
  while (std::getline(diff, line)) {
    if (line.starts_with("- ") || line.starts_with("+ ")) out += "    " + line + "\n";
  }
  return out;
}

}  // namespace

std::vector<fs::path> watchedDirectories(const std::vector<fs::path>& paths) {
  std::set<fs::path> dirs;
  std::vector<fs::path> files;
  for (const auto& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      addTree(path, dirs);
    } else {
      dirs.insert(fs::weakly_canonical(fs::absolute(path, ec).parent_path(), ec));
    }
  }
  if (auto found = findScenarioFiles(paths); found.ok()) files = *found;
  for (const auto& file : files) addReferencedFolders(file, dirs);
  return {dirs.begin(), dirs.end()};
}

struct FileWatcher::Impl {
  int fd = -1;
  std::map<int, fs::path> watches;  // watch descriptor -> folder
  ~Impl() {
    if (fd >= 0) ::close(fd);
  }
};

core::Result<std::unique_ptr<FileWatcher>> FileWatcher::create(
    const std::vector<fs::path>& directories) {
  std::unique_ptr<FileWatcher> watcher(new FileWatcher());
  watcher->impl_ = std::make_unique<Impl>();
  watcher->impl_->fd = ::inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (watcher->impl_->fd < 0) {
    return core::Error{fmt::format("--watch: inotify_init1: {}", std::strerror(errno))};
  }
  for (const auto& dir : directories) {
    const int wd = ::inotify_add_watch(
        watcher->impl_->fd, dir.c_str(),
        IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_CREATE | IN_DELETE | IN_ONLYDIR);
    if (wd < 0) {
      return core::Error{
          fmt::format("--watch: cannot watch {}: {}", dir.string(), std::strerror(errno))};
    }
    watcher->impl_->watches[wd] = dir;
  }
  return watcher;
}

FileWatcher::~FileWatcher() = default;

std::size_t FileWatcher::watchCount() const { return impl_->watches.size(); }

core::Result<std::vector<fs::path>> FileWatcher::waitForChanges(int settle_ms) {
  std::set<fs::path> changed;
  alignas(inotify_event) std::array<char, std::size_t{64} * 1024> buffer{};
  while (true) {
    pollfd pfd{impl_->fd, POLLIN, 0};
    // Wait without limit for the first change, then until the events stop for settle_ms.
    const int ready = ::poll(&pfd, 1, changed.empty() ? -1 : settle_ms);
    if (ready < 0) {
      if (errno == EINTR) continue;
      return core::Error{fmt::format("--watch: poll: {}", std::strerror(errno))};
    }
    if (ready == 0) break;  // settled
    const ssize_t n = ::read(impl_->fd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EAGAIN || errno == EINTR) continue;
      return core::Error{fmt::format("--watch: reading inotify: {}", std::strerror(errno))};
    }
    for (ssize_t offset = 0; offset < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer.data() + offset);
      offset += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      if (event->len == 0 || (event->mask & IN_ISDIR) != 0) continue;
      const std::string name(event->name);
      if (!relevantFile(name)) continue;
      if (auto it = impl_->watches.find(event->wd); it != impl_->watches.end()) {
        changed.insert(it->second / name);
      }
    }
  }
  return std::vector<fs::path>(changed.begin(), changed.end());
}

std::string describeRunChanges(const RunReport& before, const RunReport& after) {
  // Keyed by "scenario/step" (and "scenario" for what concerns the whole scenario), in the
  // order of the new run, then what disappeared.
  auto outcomes = [](const RunReport& report) {
    std::vector<std::pair<std::string, std::string>> ordered;
    for (const auto& scenario : report.scenarios) {
      ordered.emplace_back(scenario.name, scenarioText(scenario));
      for (const auto& step : scenario.steps) {
        ordered.emplace_back(scenario.name + "/" + step.name, outcomeText(step));
      }
    }
    for (const auto& error : report.load_errors) {
      ordered.emplace_back("load " + error.file, "error: " + error.message + "\n");
    }
    return ordered;
  };
  const auto old_outcomes = outcomes(before);
  const auto new_outcomes = outcomes(after);
  const std::map<std::string, std::string> old_by_key(old_outcomes.begin(), old_outcomes.end());
  const std::map<std::string, std::string> new_by_key(new_outcomes.begin(), new_outcomes.end());
  std::string out;
  for (const auto& [key, text] : new_outcomes) {
    auto it = old_by_key.find(key);
    if (it == old_by_key.end()) {
      out += "+ " + key + " (new)\n" + changedLines("", text);
    } else if (it->second != text) {
      out += "~ " + key + "\n" + changedLines(it->second, text);
    }
  }
  for (const auto& [key, text] : old_outcomes) {
    if (!new_by_key.contains(key)) out += "- " + key + " (gone)\n";
  }
  return out.empty() ? "no change in any step's outcome\n" : out;
}

}  // namespace harness::sim
