// apiserver-sim: runs admission scenarios against the simulated kube-apiserver admission chain
// (harness::sim_scenario), or serves a scenario's cluster for kubectl. A thin shell over the
// library: option parsing, output streams and exit codes.
//
//   apiserver-sim run PATH... [-o table|json|junit] [--run REGEX] [--explain] [--time-scale X]
//                             [-j N] [--shard K/N]
//                             [--audit-log FILE] [--work-dir DIR] [--injector PATH]
//                             [--admission-control-config-file FILE]
//   apiserver-sim explain SCENARIO...          (= run --explain)
//                 [-v] [--webhook RE] [--step RE] [--only-called] [--no-color] [-o json]
//   apiserver-sim run --backend kube PATH...   (against the real control plane, kube/)
//   apiserver-sim compare --backend kube PATH... [--known-differences FILE] [-o ...]
//   apiserver-sim serve SCENARIO [--kubeconfig-out FILE] [--port N] [--audit-log FILE]
//                                [--admission-control-config-file FILE]
//   apiserver-sim audit chains LOG... [--namespace N] [--resource R] [--user U] [--verb V]
//                                     [--webhook W] [--outcome O] [--all] [-o text|json]
//   apiserver-sim audit compare A B [--pair-by auto|name|labels|order] [filters]
//   apiserver-sim audit policy-check POLICY REQUEST
//   apiserver-sim audit timeline LOG... AUDIT_ID
//   apiserver-sim audit assert LOG... EXPECTATIONS
//   apiserver-sim audit sink --log FILE [--port N] [--tls-cert F --tls-key F] [--client-ca F]
//   apiserver-sim audit LOG [--compare OTHER_LOG]   (= chains / compare)
//   apiserver-sim explain --kubeconfig FILE [--context C] -f OBJECT [-n NS] [-o json]
//   apiserver-sim report (PATH... | --audit-log LOG... | --kubeconfig FILE -f OBJECT)
//                        [--out FILE]
//   apiserver-sim lint (PATH... | --kubeconfig FILE [--context C]) [-o text|json]
//                      [--fail-on error|warning|info|none] [--request-timeout S]
//   apiserver-sim check-idempotence (--injector P | --stub FILE | --stub-mutator M | --url URL)
//                                   [--cases N] [--seed S] [--kinds K,...] [--mutator M]...
//                                   (harness/sim/check_command.h)
//
// Exit status: 0 every selected step passed, 1 an expectation failed (audit --compare: a chain
// differs), 2 bad input or a harness error.

#include <stdlib.h>  // mkdtemp
#include <unistd.h>  // isatty

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <chrono>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>

#include "harness/audit/chain.h"
#include "harness/audit/commands.h"
#include "harness/audit/default_policy.h"
#include "harness/audit/event.h"
#include "harness/audit/log.h"
#include "harness/core/yaml.h"
#include "harness/go/regexp.h"
#include "harness/net/kubeconfig.h"
#include "harness/net/server.h"
#include "harness/sim/audit_assert.h"
#include "harness/sim/audit_report.h"
#include "harness/sim/cel.h"
#include "harness/sim/check_command.h"
#include "harness/sim/compare.h"
#include "harness/sim/go_types.h"
#include "harness/sim/html_report.h"
#include "harness/sim/kube_cel_session.h"
#include "harness/sim/lint.h"
#include "harness/sim/lint_input.h"
#include "harness/sim/live_explain.h"
#include "harness/sim/report.h"
#include "harness/sim/rest_api.h"
#include "harness/sim/scenario.h"
#include "harness/sim/scenario_runner.h"
#include "harness/sim/watch.h"
#include "harness/sim/workload_controllers.h"

#ifdef HARNESS_KUBE_BACKEND
#include "harness/kube/scenario_backend.h"
#endif

#ifndef HARNESS_VERSION
#define HARNESS_VERSION "dev"
#endif

namespace {

namespace fs = std::filesystem;
namespace sim = harness::sim;

constexpr int kExitBadInput = 2;

struct RunArgs {
  std::vector<std::string> paths;
  std::string output = "table";
  std::string run_filter;
  bool explain = false;
  std::optional<double> time_scale;
  std::string audit_log;
  std::string work_dir;
  std::string injector;
  std::string admission_config;
  bool stop_on_failure = false;
  std::string backend = "simulator";
  std::string slow = "include";
  std::string known_differences;  // compare
  unsigned jobs = 1;               // run
  std::string shard;               // run
  // explain (and run --explain)
  bool verbose = false;
  std::string webhook_filter;
  std::string step_filter;
  bool only_called = false;
  bool no_color = false;
  bool watch = false;  // run/explain --watch
  // explain --kubeconfig: a live cluster instead of scenarios
  std::string kubeconfig;
  std::string context;
  std::string object_file;
  std::string namespace_name;
};

struct ServeArgs {
  std::string scenario;
  std::string kubeconfig_out;
  std::uint16_t port = 0;
  std::optional<double> time_scale;
  std::string work_dir;
  std::string injector;
  std::string audit_log;
  std::string admission_config;
};

constexpr char kAdmissionConfigHelp[] =
    "An AdmissionConfiguration, as kube-apiserver's --admission-control-config-file: the "
    "kubeconfig of the MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins gives the "
    "client certificate (or token) presented to each webhook host";

// --admission-control-config-file: the credentials presented to webhooks; null when not given,
// nullopt (with the error printed) when the file does not load.
std::optional<std::shared_ptr<const sim::WebhookAuthentication>> loadWebhookAuthentication(
    const std::string& path) {
  if (path.empty()) return std::shared_ptr<const sim::WebhookAuthentication>();
  auto loaded = sim::WebhookAuthentication::loadAdmissionConfiguration(path);
  if (!loaded.ok()) {
    std::cerr << "apiserver-sim: --admission-control-config-file: " << loaded.error().message
              << "\n";
    return std::nullopt;
  }
  return std::make_shared<const sim::WebhookAuthentication>(std::move(*loaded));
}

void addExplainOptions(CLI::App& command, RunArgs& args) {
  command.add_flag("-v,--verbose", args.verbose,
                   "Explain every clause of every webhook and list the audit annotations (default: "
                   "a skipped webhook gets one line with the clause that decided)");
  command.add_option("--webhook", args.webhook_filter,
                     "Explain only the webhooks whose \"<configuration>/<webhook>\" matches this "
                     "regex");
  command.add_option("--step", args.step_filter,
                     "Explain only the steps whose name matches this regex (the others still run)");
  command.add_flag("--only-called", args.only_called,
                   "Explain only the webhooks that were called (or rejected without a call)");
  command.add_flag("--no-color", args.no_color,
                   "No colours in patches (also: NO_COLOR set, or output not a terminal)");
}

void addWatchOption(CLI::App& command, RunArgs& args) {
  command.add_flag("--watch", args.watch,
                   "Run again whenever a scenario file, or a file it names, changes (inotify), "
                   "and print what changed in the outcome since the last run; until Ctrl-C");
}

void addRunOptions(CLI::App& command, RunArgs& args) {
  command.add_option("-o,--output", args.output, "Report format: table, json or junit")
      ->check(CLI::IsMember({"table", "json", "junit"}))
      ->capture_default_str();
  command.add_option("--run", args.run_filter,
                     "Select scenarios (and steps) by regex: SCENARIO_RE[/STEP_RE]");
  command.add_option("--time-scale", args.time_scale,
                     "Real seconds slept per simulated second of stub delays and Retry-After "
                     "waits (overrides timeScale); outcomes never depend on it")
      ->check(CLI::PositiveNumber);
  command.add_option("--audit-log", args.audit_log,
                     "Append audit events as JSON lines (kube-apiserver's log backend format)");
  command.add_option("--work-dir", args.work_dir,
                     "Keep certificates, kubeconfigs and endpoint logs here (default: a "
                     "temporary directory, removed afterwards)");
  command.add_option("--injector", args.injector, "The injector binary for injector endpoints");
  command.add_option("--admission-control-config-file", args.admission_config,
                     kAdmissionConfigHelp);
  command.add_flag("--stop-on-failure", args.stop_on_failure,
                   "Stop a scenario at its first failing step");
  command.add_option("--backend", args.backend,
                     "Where scenarios are played: simulator, or kube (the real control plane "
                     "built by bash scripts/build-kube.sh; time is not scaled there)")
      ->check(CLI::IsMember({"simulator", "kube"}))
      ->capture_default_str();
  command.add_option("--slow", args.slow,
                     "Scenarios labelled apiserver-sim.harness.dev/slow: \"true\": include, "
                     "exclude or only")
      ->check(CLI::IsMember({"include", "exclude", "only"}))
      ->capture_default_str();
}

// Exit status when the real backend is asked for but its binaries are not built (CTest's
// SKIP_RETURN_CODE for the `real` tests).
constexpr int kExitNotBuilt = 77;

// The backend named by --backend (nullptr: the simulator, the runner's default).
std::unique_ptr<sim::Backend> makeBackend(const std::string& name) {
  if (name != "kube") return nullptr;
#ifdef HARNESS_KUBE_BACKEND
  return harness::kube::kubeBackend();
#else
  return nullptr;
#endif
}

// --backend kube needs the binaries of scripts/build-kube.sh: without them, one line and 77.
std::optional<int> checkBackendBuilt(const std::string& name) {
  if (name != "kube") return std::nullopt;
#ifdef HARNESS_KUBE_BACKEND
  namespace kube = harness::kube;
  if (auto built = kube::Binaries::inDir(kube::Binaries::defaultDir()).check(); !built) {
    std::cout << "apiserver-sim: skipped: " << built.error().message << "\n";
    return kExitNotBuilt;
  }
  return std::nullopt;
#else
  std::cerr << "apiserver-sim: --backend kube: this apiserver-sim was built without kube/\n";
  return kExitBadInput;
#endif
}

// The kube backend starts kube-apiserver with its own AdmissionConfiguration and does not yet
// pass webhook credentials to it: refuse rather than compare calls made with and without them.
std::optional<int> refuseCredentialsOnKube(const RunArgs& args) {
  if (args.backend != "kube" || args.admission_config.empty()) return std::nullopt;
  std::cerr << "apiserver-sim: --admission-control-config-file is not supported with --backend "
               "kube (the real control plane is started without webhook credentials)\n";
  return kExitBadInput;
}

sim::RunOptions::Slow slowFilter(const std::string& value) {
  if (value == "exclude") return sim::RunOptions::Slow::kExclude;
  if (value == "only") return sim::RunOptions::Slow::kOnly;
  return sim::RunOptions::Slow::kInclude;
}

// --audit-log: opens the log for appending when a path is given; false (with the error printed)
// when it cannot be opened.
bool openAuditLog(const std::string& path, std::optional<harness::audit::LogWriter>& log) {
  if (path.empty()) return true;
  auto writer = harness::audit::LogWriter::open(path);
  if (!writer.ok()) {
    std::cerr << "apiserver-sim: " << writer.error().message << "\n";
    return false;
  }
  log.emplace(std::move(*writer));
  return true;
}

// Runs the scenarios with progress lines and load errors on stderr (stdout holds exactly one
// report document); nullopt (with the error printed) when the run filter does not parse.
std::optional<sim::RunReport> runWithProgress(const std::vector<std::string>& paths,
                                              const std::string& run_filter,
                                              sim::RunOptions& options,
                                              const sim::RunSplit& split = {}) {
  options.on_step = [](const sim::ScenarioResult& scenario, const sim::StepResult& step) {
    std::cerr << sim::progressLine(scenario, step) << "\n";
  };
  auto report = sim::runScenarioFiles(std::vector<fs::path>(paths.begin(), paths.end()), run_filter,
                                      options,
                                      [](const sim::LoadError& error) {
                                        std::cerr << "ERROR   " << error.message << "\n";
                                      },
                                      split);
  if (!report.ok()) {
    std::cerr << "apiserver-sim: " << report.error().message << "\n";
    return std::nullopt;
  }
  return std::move(*report);
}

// -j and --shard into `split`; an exit status (the error printed) when they do not apply.
std::optional<int> splitRun(const RunArgs& args, sim::RunSplit& split) {
  split.jobs = args.jobs;
  if (!args.shard.empty()) {
    auto shard = sim::parseShard(args.shard);
    if (!shard.ok()) {
      std::cerr << "apiserver-sim: " << shard.error().message << "\n";
      return kExitBadInput;
    }
    split.shard = *shard;
  }
  if (args.jobs > 1 && args.backend != "simulator") {
    // The kube backend starts a whole control plane per scenario: one scenario at a time.
    std::cerr << "apiserver-sim: -j is for the simulator; --backend " << args.backend
              << " plays one scenario at a time\n";
    return kExitBadInput;
  }
  return std::nullopt;
}

// run/explain --watch: plays the scenarios, then again after every change to their files, with
// what changed in the outcome since the previous run; ends only by a signal (or a watch error:
// exit 2). The reports stay on stdout, one after another, each followed by the changes and a
// "watching" line, so that a reader (or a test) can wait for the next one.
int watchLoop(const RunArgs& args, const std::function<std::optional<sim::RunReport>()>& play) {
  const std::vector<fs::path> paths(args.paths.begin(), args.paths.end());
  auto watcher = sim::FileWatcher::create(sim::watchedDirectories(paths));
  if (!watcher.ok()) {
    std::cerr << "apiserver-sim: " << watcher.error().message << "\n";
    return kExitBadInput;
  }
  std::optional<sim::RunReport> previous = play();
  for (int run = 2;; ++run) {
    std::cout << "apiserver-sim: watching " << (*watcher)->watchCount()
              << " folders for changes (Ctrl-C to stop)" << std::endl;
    auto changed = (*watcher)->waitForChanges();
    if (!changed.ok()) {
      std::cerr << "apiserver-sim: " << changed.error().message << "\n";
      return kExitBadInput;
    }
    std::cout << "\n== run " << run << ": changed:";
    for (const auto& file : *changed) std::cout << " " << file.string();
    std::cout << "\n" << std::endl;
    auto report = play();
    if (report && previous) {
      std::cout << "\n== what changed since the last run\n"
                << sim::describeRunChanges(*previous, *report);
    }
    if (report) previous = std::move(report);
  }
}

// Colour for a terminal, unless NO_COLOR (https://no-color.org: present and not empty) or
// --no-color; never in a JSON or JUnit document.
bool colorOutput(const RunArgs& args) {
  const char* no_color = std::getenv("NO_COLOR");
  return args.output == "table" && !args.no_color && (no_color == nullptr || *no_color == '\0') &&
         isatty(1) == 1;
}

int runCommand(const RunArgs& args) {
  const sim::KubeCelSession kube_cel;  // before the scenarios load: their matchConditions compile
  std::optional<harness::audit::LogWriter> audit_log;  // thread-safe: one line per event
  sim::RunOptions options;
  options.time_scale = args.time_scale;
  options.explain = args.explain;
  options.explain_options.verbose = args.verbose;
  options.explain_options.webhook_filter = args.webhook_filter;
  options.explain_options.only_called = args.only_called;
  options.explain_options.color = colorOutput(args);
  options.explain_step_filter = args.step_filter;
  for (const auto* filter : {&args.webhook_filter, &args.step_filter}) {
    if (auto check = harness::go::Regexp::compile(*filter); !check) {
      std::cerr << "apiserver-sim: bad regex \"" << *filter << "\": " << check.error().message
                << "\n";
      return kExitBadInput;
    }
  }
  options.stop_on_failure = args.stop_on_failure;
  options.work_dir = args.work_dir;
  options.injector_binary = args.injector;
  auto authentication = loadWebhookAuthentication(args.admission_config);
  if (!authentication) return kExitBadInput;
  options.webhook_authentication = *authentication;
  options.slow = slowFilter(args.slow);
  sim::RunSplit split;
  if (auto status = splitRun(args, split)) return *status;
  if (auto status = refuseCredentialsOnKube(args)) return *status;
  if (auto status = checkBackendBuilt(args.backend)) return *status;
  auto backend = makeBackend(args.backend);
  options.backend = backend.get();
  if (!openAuditLog(args.audit_log, audit_log)) return kExitBadInput;
  if (audit_log) {
    options.audit_sink = [&](const harness::audit::Event& event) { audit_log->write(event); };
    options.on_warning = [](const std::string& warning) {
      std::cerr << "warning: " << warning << "\n";
    };
  }
  if (!args.work_dir.empty()) {
    std::error_code ec;
    fs::create_directories(args.work_dir, ec);
    if (ec) {
      std::cerr << "apiserver-sim: cannot create " << args.work_dir << ": " << ec.message() << "\n";
      return kExitBadInput;
    }
  }
  auto play = [&]() -> std::optional<sim::RunReport> {
    auto report = runWithProgress(args.paths, args.run_filter, options, split);
    if (!report) return std::nullopt;
    for (const auto& scenario : report->scenarios) {
      if (scenario.error) {
        std::cerr << "ERROR   " << scenario.name << ": " << *scenario.error << "\n";
      }
    }
    if (args.output == "json") {
      std::cout << sim::renderJson(*report);
    } else if (args.output == "junit") {
      std::cout << sim::renderJunit(*report);
    } else {
      std::cout << sim::renderTable(*report, args.explain);
    }
    std::cout.flush();
    return report;
  };
  if (args.watch && args.output != "table") {
    std::cerr << "apiserver-sim: --watch prints one report after another: it needs -o table\n";
    return kExitBadInput;
  }
  if (!args.watch) {
    auto report = play();
    return report ? report->exitCode() : kExitBadInput;
  }
  return watchLoop(args, play);
}

// `report PATH... -o FILE`: the scenarios run with explanations, written as one HTML file
// (html_report.h). Exit as `run`.
// Writes the HTML report; exit status 2 when the file cannot be written, else `status`.
int writeHtmlReport(const sim::RunReport& report, const std::string& out_file, int status) {
  std::string title = "apiserver-sim report";
  if (report.scenarios.size() == 1) title += ": " + report.scenarios[0].name;
  std::ofstream out(out_file, std::ios::binary | std::ios::trunc);
  out << sim::renderHtmlReport(report, title);
  out.close();
  if (!out) {
    std::cerr << "apiserver-sim: cannot write " << out_file << "\n";
    return kExitBadInput;
  }
  std::cerr << "apiserver-sim: wrote " << out_file << "\n";
  return status;
}

int reportCommand(RunArgs args, const std::string& out_file) {
  const sim::KubeCelSession kube_cel;
  sim::RunOptions options;
  options.explain = true;
  options.explain_options.verbose = true;
  options.explain_options.webhook_filter = args.webhook_filter;
  options.explain_options.only_called = args.only_called;
  options.explain_step_filter = args.step_filter;
  options.time_scale = args.time_scale;
  options.injector_binary = args.injector;
  options.slow = slowFilter(args.slow);
  auto report = runWithProgress(args.paths, args.run_filter, options);
  if (!report) return kExitBadInput;
  return writeHtmlReport(*report, out_file, report->exitCode());
}

// `compare --backend kube PATH...`: every scenario on the simulator, then on the other backend,
// and the differences step by step (compare.h).
int compareCommand(const RunArgs& args) {
  std::vector<sim::KnownDifference> known;
  if (!args.known_differences.empty()) {
    auto loaded = sim::loadKnownDifferences(args.known_differences);
    if (!loaded.ok()) {
      std::cerr << "apiserver-sim: " << loaded.error().message << "\n";
      return kExitBadInput;
    }
    known = std::move(*loaded);
  }
  if (args.backend != "kube") {
    std::cerr << "apiserver-sim: compare needs --backend kube\n";
    return kExitBadInput;
  }
  if (auto status = refuseCredentialsOnKube(args)) return *status;
  if (auto status = checkBackendBuilt(args.backend)) return *status;
  auto backend = makeBackend(args.backend);
  const sim::KubeCelSession kube_cel;
  sim::RunOptions options;
  options.time_scale = args.time_scale;
  options.injector_binary = args.injector;
  options.slow = slowFilter(args.slow);
  std::vector<fs::path> paths(args.paths.begin(), args.paths.end());
  auto progress = [](const char* side) {
    return [side](const sim::ScenarioResult& scenario, const sim::StepResult& step) {
      std::cerr << side << " " << sim::progressLine(scenario, step) << "\n";
    };
  };
  options.on_step = progress("simulator");
  auto simulated = sim::runScenarioFiles(paths, args.run_filter, options,
                                         [](const sim::LoadError& error) {
                                           std::cerr << "ERROR   " << error.message << "\n";
                                         });
  if (!simulated.ok()) {
    std::cerr << "apiserver-sim: " << simulated.error().message << "\n";
    return kExitBadInput;
  }
  options.backend = backend.get();
  options.on_step = progress(std::string(backend->name()) == "kube" ? "kube     " : "other    ");
  auto real = sim::runScenarioFiles(paths, args.run_filter, options);
  if (!real.ok()) {
    std::cerr << "apiserver-sim: " << real.error().message << "\n";
    return kExitBadInput;
  }
  const auto comparison = sim::compareRuns(*simulated, *real, known);
  if (args.output == "json") {
    std::cout << sim::comparisonJson(comparison).dump(2, ' ', false,
                                                      nlohmann::json::error_handler_t::replace)
              << "\n";
  } else if (args.output == "junit") {
    std::cout << sim::renderComparisonJunit(comparison);
  } else {
    std::cout << sim::renderComparisonTable(comparison);
  }
  std::cout.flush();
  return comparison.exitCode();
}

int serveCommand(const ServeArgs& args) {
  // Before any thread exists, so that SIGTERM/SIGINT wait for waitForTerminationSignal().
  harness::net::blockTerminationSignals();
  const sim::KubeCelSession kube_cel;
  const sim::cel::ProcessCel& cel = kube_cel.cel();
  auto scenario = sim::loadScenario(args.scenario);
  if (!scenario.ok()) {
    std::cerr << scenario.error().message << "\n";
    return kExitBadInput;
  }
  auto authentication = loadWebhookAuthentication(args.admission_config);
  if (!authentication) return kExitBadInput;
  std::optional<harness::audit::LogWriter> audit_log;  // thread-safe: one line per event
  if (!openAuditLog(args.audit_log, audit_log)) return kExitBadInput;
  if (audit_log && !scenario->audit_policy) {
    auto policy = harness::audit::parsePolicy(harness::audit::kDefaultLogPolicyText,
                                              "default audit policy");
    if (policy.ok()) {
      scenario->audit_policy = std::move(*policy);
      scenario->audit_policy_text = std::string(harness::audit::kDefaultLogPolicyText);
      std::cerr << "warning: " << args.scenario
                << ": no spec.auditPolicy: the audit log records every request at "
                   "RequestResponse (the default policy, RequestReceived omitted)\n";
    }
  }
  fs::path work_dir = args.work_dir;
  bool remove_work_dir = false;
  std::error_code ec;
  if (work_dir.empty()) {
    std::string pattern = (fs::temp_directory_path(ec) / "apiserver-sim-serve-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      std::cerr << "apiserver-sim: cannot create a temporary directory\n";
      return kExitBadInput;
    }
    work_dir = pattern;
    remove_work_dir = true;
  } else {
    fs::create_directories(work_dir, ec);
  }
  int status = 0;
  {
    sim::EnvironmentOptions options;
    options.time_scale = args.time_scale.value_or(scenario->time_scale);
    options.work_dir = work_dir;
    options.start_rest_api = true;
    options.rest_api_port = args.port;
    options.injector_binary = args.injector;
    options.webhook_authentication = *authentication;
    if (audit_log) {
      options.audit_sink = [&](const harness::audit::Event& event) { audit_log->write(event); };
    }
    auto environment = sim::ScenarioEnvironment::start(*scenario, options);
    if (!environment.ok()) {
      std::cerr << "apiserver-sim: " << environment.error().message << "\n";
      if (remove_work_dir) {
        // The message can name files in it (an endpoint's log): they must outlive the message.
        remove_work_dir = false;
        std::cerr << "apiserver-sim: work directory kept: " << work_dir.string() << "\n";
      }
      status = kExitBadInput;
    } else {
      fs::path kubeconfig = (*environment)->kubeconfigPath();
      if (!args.kubeconfig_out.empty()) {
        fs::copy_file(kubeconfig, args.kubeconfig_out, fs::copy_options::overwrite_existing, ec);
        if (ec) {
          std::cerr << "apiserver-sim: cannot write " << args.kubeconfig_out << ": "
                    << ec.message() << "\n";
          status = kExitBadInput;
        } else {
          fs::permissions(args.kubeconfig_out, fs::perms::owner_read | fs::perms::owner_write,
                          ec);
          kubeconfig = args.kubeconfig_out;
        }
      }
      // kube-controller-manager's workload controllers: a Deployment gets its ReplicaSet and
      // Pods, as on a cluster (serve only: scenario runs play their steps alone).
      std::optional<sim::WorkloadControllers> controllers;
      sim::ControllerOptions controller_options;
      if (auto kube_cel = cel.kubeCel()) {
        // status.typeChecking of ValidatingAdmissionPolicies, by Kubernetes' TypeChecker.
        controller_options.policy_status = sim::cel::policyStatusWriter(kube_cel);
        // CustomResourceDefinitions named and established by apiextensions-apiserver's code.
        controller_options.crd_status = sim::cel::customResourceCode(kube_cel).definition_status;
        // pod-template-hash as Kubernetes computes it (controller.ComputeHash, in Go).
        controller_options.pod_template_hash =
            [hasher = sim::cel::podTemplateHasher(kube_cel)](
                const nlohmann::json& template_spec,
                std::optional<std::int32_t> collision_count) -> std::optional<std::string> {
          auto hash = hasher(template_spec, collision_count);
          if (!hash) {
            std::cerr << "apiserver-sim: pod-template-hash approximated: " << hash.error().message
                      << "\n";
            return std::nullopt;
          }
          return *hash;
        };
      } else {
        std::cerr << "apiserver-sim: pod-template-hash approximated (a hash of the template's "
                     "JSON, not Kubernetes' controller.ComputeHash): "
                  << cel.status() << "\n";
        std::cerr << "apiserver-sim: RBAC's bootstrap roles are absent (they come from kube-cel): "
                     "every request is allowed, access reviews see only the stored roles\n";
      }
      if (status == 0) {
        controllers.emplace((*environment)->store(), (*environment)->chain(),
                            std::move(controller_options));
      }
      if (status == 0) {
        std::cout << "apiserver-sim: serving scenario " << scenario->name << " at "
                  << (*environment)->apiServerUrl() << "\n"
                  << "kubeconfig: " << fs::absolute(kubeconfig).string() << "\n";
        for (const auto& [name, url] : (*environment)->endpointUrls()) {
          std::cout << "endpoint " << name << ": " << url << "\n";
        }
        std::cout.flush();
        harness::net::waitForTerminationSignal();
        std::cerr << "apiserver-sim: stopping\n";
      }
      if (controllers) controllers->stop();
      (*environment)->stop();
    }
  }
  if (remove_work_dir) fs::remove_all(work_dir, ec);
  return status;
}

struct AuditArgs {
  std::vector<std::string> logs;
  std::string compare;
  bool all = false;
  std::string output = "text";
  std::string pair_by = "auto";
  std::string namespace_name, resource, user, verb, webhook, outcome;
};

// The filter options of `audit chains` and `audit compare`.
void addAuditFilters(CLI::App& command, AuditArgs& args) {
  command.add_flag("--all", args.all, "Also list requests no admission annotation marks");
  command.add_option("-o,--output", args.output, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  command.add_option("--namespace", args.namespace_name, "Only requests in this namespace");
  command.add_option("--resource", args.resource, "Only this resource (pods, deployments.apps)");
  command.add_option("--user", args.user, "Only requests by this user");
  command.add_option("--verb", args.verb, "Only this verb (create, update...)");
  command.add_option("--webhook", args.webhook,
                     "Only requests this webhook mutated, denied, failed open or annotated");
  command.add_option("--outcome", args.outcome,
                     "Only requests with this outcome: admitted, denied, failed, timed-out, "
                     "error, unknown")
      ->check(CLI::IsMember({"admitted", "denied", "failed", "timed-out", "error", "unknown"}));
}

harness::audit::ChainFilter auditFilter(const AuditArgs& args) {
  harness::audit::ChainFilter filter;
  filter.namespace_name = args.namespace_name;
  filter.resource = args.resource;
  filter.user = args.user;
  filter.verb = args.verb;
  filter.webhook = args.webhook;
  if (!args.outcome.empty()) filter.outcome = harness::audit::parseOutcomeKind(args.outcome);
  return filter;
}

struct SinkArgs {
  std::string log;
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;
  std::string tls_cert, tls_key, client_ca;
};

// `audit sink`: kube-apiserver's webhook audit backend (--audit-webhook-config-file, a kubeconfig
// naming this server) POSTs batches of events as EventList (k8s.io/apiserver
// plugin/pkg/audit/webhook); each batch is appended to the log as JSON lines, the log backend's
// format every `audit` command reads. A body that is not a batch of events gets 400 with the
// item and field, and nothing of it is written.
int auditSinkCommand(const SinkArgs& args) {
  namespace net = harness::net;
  net::blockTerminationSignals();
  auto log = harness::audit::LogWriter::open(args.log);
  if (!log.ok()) {
    std::cerr << "apiserver-sim: " << log.error().message << "\n";
    return kExitBadInput;
  }
  if (args.tls_cert.empty() != args.tls_key.empty()) {
    std::cerr << "apiserver-sim: audit sink: --tls-cert and --tls-key go together\n";
    return kExitBadInput;
  }
  net::ServerOptions options;
  options.address = args.address;
  options.port = args.port;
  options.name = "audit-sink";
  // The webhook backend batches up to 400 events (--audit-webhook-batch-max-size) of up to a few
  // MiB each.
  options.body_limit = std::size_t{256} << 20;
  if (!args.tls_cert.empty()) {
    net::TlsServerConfig tls;
    tls.certificate_file = args.tls_cert;
    tls.private_key_file = args.tls_key;
    if (!args.client_ca.empty()) {
      tls.client_ca_file = args.client_ca;
      tls.require_client_certificate = true;
    }
    options.tls = tls;
  }
  std::mutex mutex;
  std::size_t received = 0;
  net::Router router;
  router.fallback([&](const net::Request& request) {
    if (request.method != "POST") {
      return net::Response::text(405, "audit sink: POST an audit.k8s.io/v1 EventList\n");
    }
    const std::lock_guard<std::mutex> lock(mutex);
    auto written = harness::audit::appendEventBatch(request.body, *log);
    if (!written.ok()) {
      std::cerr << "audit sink: request from " << request.peer << " refused: "
                << written.error().message << "\n";
      return net::Response::text(400, "audit sink: " + written.error().message + "\n");
    }
    received += *written;
    return net::Response::json(200, "{}");
  });
  net::Server server(options, router);
  if (auto started = server.start(); !started.ok()) {
    std::cerr << "apiserver-sim: audit sink: " << started.error().message << "\n";
    return kExitBadInput;
  }
  std::cout << "apiserver-sim: audit sink at " << (options.tls ? "https" : "http") << "://"
            << server.address() << ":" << server.port() << " writing " << args.log << "\n";
  std::cout.flush();
  net::waitForTerminationSignal();
  server.stop(std::chrono::seconds(5));
  std::cerr << "apiserver-sim: audit sink stopping, " << received << " events written\n";
  return 0;
}

// HARNESS_AUDIT_FULL_PARSE=1: the audit commands parse every event they look at whole, as they
// did before peeking at lines (the same output; to measure the difference, audit/README.md).
bool auditFullParse() {
  const char* value = std::getenv("HARNESS_AUDIT_FULL_PARSE");
  return value != nullptr && std::string_view(value) == "1";
}

// `audit chains LOG...` (and the older `audit LOG`) or, with --compare, `audit compare`.
int auditChains(const AuditArgs& args) {
  namespace audit = harness::audit;
  if (args.logs.empty()) {
    std::cerr << "apiserver-sim: audit: a log is required (audit chains LOG...)\n";
    return kExitBadInput;
  }
  if (!args.compare.empty()) {
    audit::CompareOptions options;
    options.expected = args.logs;
    options.actual = {args.compare};
    options.pair_by = *audit::parsePairBy(args.pair_by);
    options.filter = auditFilter(args);
    options.all = args.all;
    options.output = args.output;
    options.full_parse = auditFullParse();
    return audit::compareCommand(options, std::cout, std::cerr);
  }
  audit::ChainsOptions options;
  options.logs = args.logs;
  options.filter = auditFilter(args);
  options.all = args.all;
  options.output = args.output;
  return audit::chainsCommand(options, std::cout, std::cerr);
}

// `report --audit-log LOG...`: the requests of audit logs (audit_report.h). Exit 0 written, 2 a
// log that cannot be read (bad lines are reported and skipped, and make the exit status 2).
int auditReportCommand(const std::vector<std::string>& logs, const AuditArgs& args,
                       const std::string& out_file) {
  std::size_t bad_lines = 0;
  auto report = sim::reportFromAuditLogs(
      std::vector<fs::path>(logs.begin(), logs.end()), auditFilter(args), args.all,
      [&bad_lines](const std::string& message) {
        ++bad_lines;
        std::cerr << message << "\n";
      });
  if (!report.ok()) {
    std::cerr << "apiserver-sim: " << report.error().message << "\n";
    return kExitBadInput;
  }
  return writeHtmlReport(*report, out_file, bad_lines == 0 ? 0 : kExitBadInput);
}

// `explain --kubeconfig FILE [--context C] -f OBJECT` (and `report --kubeconfig`): the live
// cluster's webhooks, policies and injectors narrated for the object, nothing created
// (live_explain.h); nullopt, with the error printed, on bad input or a cluster that cannot be read.
std::optional<sim::live::LiveExplanation> explainLive(const RunArgs& args,
                                                      const std::string& command) {
  namespace live = sim::live;
  const std::string prefix = "apiserver-sim " + command + ": ";
  if (args.object_file.empty()) {
    std::cerr << prefix << "--kubeconfig needs -f OBJECT\n";
    return std::nullopt;
  }
  if (auto check = harness::go::Regexp::compile(args.webhook_filter); !check) {
    std::cerr << prefix << "bad regex \"" << args.webhook_filter << "\": "
              << check.error().message << "\n";
    return std::nullopt;
  }
  auto connection = harness::net::loadKubeconfig(args.kubeconfig, args.context);
  if (!connection.ok()) {
    std::cerr << prefix << connection.error().message << "\n";
    return std::nullopt;
  }
  std::ifstream in(args.object_file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) {
    std::cerr << prefix << "cannot read " << args.object_file << "\n";
    return std::nullopt;
  }
  auto object = harness::core::parseYaml(text.str());
  if (!object.ok() || !object->is_object()) {
    std::cerr << prefix << args.object_file << ": "
              << (object.ok() ? std::string("not an object") : object.error().message) << "\n";
    return std::nullopt;
  }
  std::string namespace_name = args.namespace_name;
  if (!namespace_name.empty()) {
    (*object)["metadata"]["namespace"] = namespace_name;  // -n wins, the object is moved there
  } else {
    const auto& metadata = object->value("metadata", nlohmann::json::object());
    namespace_name = metadata.is_object() ? metadata.value("namespace", "") : "";
  }
  if (namespace_name.empty()) namespace_name = connection->default_namespace;
  sim::lint::ClusterClient client(*connection);
  auto snapshot = live::readCluster(
      [&client](const std::string& path) { return client.get(path); }, namespace_name,
      client.describe());
  if (!snapshot.ok()) {
    std::cerr << prefix << snapshot.error().message << "\n";
    return std::nullopt;
  }
  const sim::cel::ProcessCel cel;
  if (!cel.available()) sim::cel::install(nullptr);
  live::LiveExplainOptions options;
  options.explain.verbose = args.verbose;
  options.explain.webhook_filter = args.webhook_filter;
  options.explain.only_called = args.only_called;
  options.explain.color = colorOutput(args);
  if (cel.available()) {
    options.evaluator = sim::cel::processMatchConditionEvaluator();
    options.validating_policies = sim::cel::processValidatingPolicyDispatcher();
    options.mutating_policies = sim::cel::processMutatingPolicyDispatcher();
  } else {
    options.cel_unavailable_reason = cel.status();
  }
  options.injector_binary = args.injector;
  std::error_code ec;
  std::string pattern = (fs::temp_directory_path(ec) / "apiserver-sim-explain-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) {
    std::cerr << "apiserver-sim: cannot create a temporary directory\n";
    return std::nullopt;
  }
  options.work_dir = pattern;
  auto explained = live::explainCreate(*snapshot, *object, namespace_name, options);
  fs::remove_all(options.work_dir, ec);
  if (!explained.ok()) {
    std::cerr << prefix << explained.error().message << "\n";
    return std::nullopt;
  }
  return std::move(*explained);
}

// `explain --kubeconfig`: exit 0 explained, 2 bad input or a cluster that cannot be read.
int liveExplainCommand(const RunArgs& args) {
  auto explained = explainLive(args, "explain");
  if (!explained) return kExitBadInput;
  if (args.output == "json") {
    std::cout << explained->json.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    std::cout << explained->text;
  }
  std::cout.flush();
  return 0;
}

// `report --kubeconfig FILE -f OBJECT`: the live explanation as the HTML report; exit 0 written
// (whatever the policies decide: nothing was sent), 2 bad input, a cluster that cannot be read or
// a file that cannot be written.
int liveReportCommand(const RunArgs& args, const std::string& out_file) {
  auto explained = explainLive(args, "report");
  if (!explained) return kExitBadInput;
  return writeHtmlReport(sim::live::liveReport(*explained, args.object_file), out_file, 0);
}

struct LintArgs {
  std::vector<std::string> paths;
  std::string kubeconfig;
  std::string context;
  std::string output = "text";
  std::string fail_on = "error";
  int request_timeout = 60;
};

// `apiserver-sim lint`: the webhook set of files, folders or a live cluster against the rules of
// lint.h. Exit 0 no finding at or above --fail-on, 1 some, 2 input that does not load.
int lintCommand(const LintArgs& args) {
  namespace lint = sim::lint;
  if (args.paths.empty() == args.kubeconfig.empty()) {
    std::cerr << "apiserver-sim lint: give files or folders, or --kubeconfig (not both)\n";
    return kExitBadInput;
  }
  // CEL for matchConditions when kube-cel is built; without it the configurations still load
  // (no compiler: their expressions are not compiled) and the rule says it was skipped.
  const sim::cel::ProcessCel cel;
  if (!cel.available()) sim::cel::install(nullptr);
  harness::core::Result<lint::LoadedInput> loaded = harness::core::makeError("not loaded");
  if (!args.kubeconfig.empty()) {
    auto connection = harness::net::loadKubeconfig(args.kubeconfig, args.context);
    if (!connection.ok()) {
      std::cerr << "apiserver-sim lint: " << connection.error().message << "\n";
      return kExitBadInput;
    }
    loaded = lint::loadCluster(*connection);
  } else {
    loaded = lint::loadFiles(std::vector<fs::path>(args.paths.begin(), args.paths.end()));
  }
  if (!loaded.ok()) {
    std::cerr << "apiserver-sim lint: " << loaded.error().message << "\n";
    return kExitBadInput;
  }
  for (const auto& skipped : loaded->skipped) std::cerr << "skipped " << skipped << "\n";
  lint::LintOptions options;
  options.request_timeout = std::chrono::seconds(args.request_timeout);
  if (cel.available()) {
    options.evaluator = sim::cel::processMatchConditionEvaluator();
  } else {
    options.cel_unavailable_reason = cel.status();
  }
  options.validate_policy = sim::cel::processPolicyObjectAdmitter();
  const auto findings = lint::lint(loaded->input, options);
  const std::size_t policies = loaded->input.policies.size();
  std::size_t webhooks = 0;
  for (const auto& configuration : loaded->input.configurations) {
    webhooks += configuration.configuration.webhooks.size();
  }
  const std::size_t configurations = loaded->input.configurations.size();
  if (args.output == "json") {
    std::cout << lint::renderJson(findings, configurations, webhooks, policies)
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    std::cout << lint::renderText(findings, configurations, webhooks, policies);
  }
  std::cout.flush();
  return lint::exitCode(findings, lint::parseSeverity(args.fail_on));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"apiserver-sim: the kube-apiserver admission chain, driven by YAML scenarios"};
  app.set_version_flag("--version", std::string("apiserver-sim ") + HARNESS_VERSION);
  app.require_subcommand(1);
  app.footer("Exit status: 0 every selected step passed (audit: the log was read; --compare: no "
             "chain differs), 1 an expectation failed (--compare: a chain differs), 2 bad input "
             "(bad flags, a file that does not load, audit log lines that are not events) or a "
             "harness error (an endpoint that does not start), 77 --backend kube without the "
             "binaries of bash scripts/build-kube.sh. compare: 0 no unlisted difference, 1 "
             "unlisted or stale known differences.");

  RunArgs run_args;
  auto* run = app.add_subcommand("run", "Run scenario files or folders (recursively)");
  run->add_option("paths", run_args.paths, "Scenario files or folders")->required();
  addRunOptions(*run, run_args);
  run->add_option("-j,--jobs", run_args.jobs,
                  "Scenarios run at once, each in its own environment (stubs, ports, store, work "
                  "directory); the report is the serial run's, in file order")
      ->check(CLI::Range(1U, 256U))
      ->capture_default_str();
  run->add_option("--shard", run_args.shard,
                  "K/N: run only this job's part of the scenario list (round robin in file "
                  "order), for a CI matrix of N jobs");
  run->add_flag("--explain", run_args.explain,
                "Explain every step: webhook matching, calls, failurePolicy, patches");
  addExplainOptions(*run, run_args);
  addWatchOption(*run, run_args);

  RunArgs explain_args;
  explain_args.explain = true;
  auto* explain = app.add_subcommand("explain", "Run scenarios with --explain");
  explain->add_option("paths", explain_args.paths, "Scenario files or folders");
  addRunOptions(*explain, explain_args);
  addExplainOptions(*explain, explain_args);
  addWatchOption(*explain, explain_args);
  explain->add_option("--kubeconfig", explain_args.kubeconfig,
                      "Explain -f OBJECT against a live cluster's webhooks and injectors "
                      "(nothing is created, no webhook is called)");
  explain->add_option("--context", explain_args.context, "The kubeconfig context (default: current)");
  explain->add_option("-f,--filename", explain_args.object_file,
                      "With --kubeconfig: the object to explain the CREATE of (YAML or JSON)");
  explain->add_option("-n,--namespace", explain_args.namespace_name,
                      "With --kubeconfig: the namespace to explain the object in (default: the object's, else the "
                      "context's)");

  RunArgs compare_args;
  auto* compare = app.add_subcommand(
      "compare", "Play scenarios on the simulator and on another backend (--backend kube) and "
                 "show, step by step, where they differ");
  compare->add_option("paths", compare_args.paths, "Scenario files or folders")->required();
  addRunOptions(*compare, compare_args);
  compare->add_option("--known-differences", compare_args.known_differences,
                      "YAML list of the differences that are expected, with their reasons "
                      "(scenarios/known-differences.yaml)");

  ServeArgs serve_args;
  auto* serve = app.add_subcommand(
      "serve", "Serve a scenario's starting state and endpoints over the REST API until SIGTERM");
  serve->add_option("scenario", serve_args.scenario, "Scenario file")->required();
  serve->add_option("--kubeconfig-out", serve_args.kubeconfig_out, "Write the kubeconfig here");
  serve->add_option("--port", serve_args.port, "REST API port (0: any free port)")
      ->capture_default_str();
  serve->add_option("--time-scale", serve_args.time_scale,
                    "Real seconds slept per simulated second of stub delays")
      ->check(CLI::PositiveNumber);
  serve->add_option("--work-dir", serve_args.work_dir, "Certificates and logs (default: temporary)");
  serve->add_option("--injector", serve_args.injector, "The injector binary");
  serve->add_option("--admission-control-config-file", serve_args.admission_config,
                    kAdmissionConfigHelp);
  serve->add_option("--audit-log", serve_args.audit_log,
                    "Append audit events (the scenario's auditPolicy) as JSON lines");

  AuditArgs audit_args;
  auto* audit = app.add_subcommand(
      "audit", "Audit logs (the simulator's or a real cluster's: JSON lines, rotated, gzip): "
               "mutation chains, outcomes, replay, comparison, policy check, timelines");
  audit->add_option("--compare", audit_args.compare, "= audit compare LOG OTHER");
  audit->add_option("--pair-by", audit_args.pair_by, "With --compare: auto, name, labels, order")
      ->check(CLI::IsMember({"auto", "name", "labels", "order"}));
  addAuditFilters(*audit, audit_args);

  AuditArgs chains_args;
  auto* audit_chains = audit->add_subcommand(
      "chains", "Each request's mutation chain, outcome and replay (LOG...: oldest first)");
  audit_chains->add_option("logs", chains_args.logs, "Audit log files")->required();
  addAuditFilters(*audit_chains, chains_args);

  AuditArgs compare_audit_args;
  std::vector<std::string> compare_logs;
  auto* audit_compare = audit->add_subcommand(
      "compare", "Pair the requests of two logs (A: e.g. the simulator's, B: a cluster's) and "
                 "print where their chains and outcomes differ");
  audit_compare->add_option("logs", compare_logs, "A B")->required()->expected(2);
  audit_compare->add_option("--pair-by", compare_audit_args.pair_by,
                            "auto (name, or owner/generateName for server-named objects), name, "
                            "labels or order")
      ->check(CLI::IsMember({"auto", "name", "labels", "order"}))
      ->capture_default_str();
  addAuditFilters(*audit_compare, compare_audit_args);

  std::string policy_file, request_file;
  auto* audit_policy = audit->add_subcommand(
      "policy-check", "The audit level a policy gives requests, and the rule that decided");
  audit_policy->add_option("policy", policy_file, "audit.k8s.io/v1 Policy")->required();
  audit_policy->add_option("request", request_file,
                           "Request attributes (YAML/JSON: user, groups, verb, apiGroup, "
                           "apiVersion, resource, subresource, namespace, name, path) or audit "
                           "events")
      ->required();

  SinkArgs sink_args;
  auto* audit_sink = audit->add_subcommand(
      "sink", "Receive a cluster's audit events (kube-apiserver's webhook backend: EventList "
              "POSTs) and append them to a log, until SIGTERM");
  audit_sink->add_option("--log", sink_args.log, "The log to append to")->required();
  audit_sink->add_option("--address", sink_args.address, "Address to listen on")
      ->capture_default_str();
  audit_sink->add_option("--port", sink_args.port, "Port (0: any free port, printed)");
  audit_sink->add_option("--tls-cert", sink_args.tls_cert, "Serving certificate (PEM): HTTPS");
  audit_sink->add_option("--tls-key", sink_args.tls_key, "Its private key (PEM)");
  audit_sink->add_option("--client-ca", sink_args.client_ca,
                         "Require client certificates signed by this CA (kube-apiserver's "
                         "webhook kubeconfig client-certificate)");

  std::vector<std::string> assert_args;
  auto* audit_assert = audit->add_subcommand(
      "assert", "Check a log against expectations in the scenario expectation language "
                "(kind: AuditExpectations): LOG... EXPECTATIONS");
  audit_assert->add_option("args", assert_args, "LOG... EXPECTATIONS")->required()->expected(2, -1);

  std::vector<std::string> timeline_args;
  std::string timeline_output = "text";
  auto* audit_timeline = audit->add_subcommand(
      "timeline", "One request's stages, webhooks, outcome and latencies: LOG... AUDIT_ID");
  audit_timeline->add_option("args", timeline_args, "LOG... AUDIT_ID")->required()->expected(2, -1);
  audit_timeline->add_option("-o,--output", timeline_output, "text or json")
      ->check(CLI::IsMember({"text", "json"}));
  // `audit LOG... [--compare OTHER]`, the older form: the logs are what no subcommand took (a
  // positional of `audit` would take the subcommands' arguments too).
  audit->allow_extras();

  sim::CheckIdempotenceArgs check_args;
  auto* check = app.add_subcommand(
      "check-idempotence",
      "Send generated objects to a mutating webhook, then its own output, then its output "
      "changed by other mutators (as reinvocation does); report the first failing case shrunk. "
      "Exit 0 all passed, 1 a counterexample, 2 bad usage or an unreachable webhook");
  check->add_option("--injector", check_args.injector,
                    "Check the project's injector (started here): linkerd or istio");
  check->add_option("--injector-arg", check_args.injector_args,
                    "Extra `injector serve` argument (repeat), e.g. "
                    "--istio-enable-native-sidecars=false");
  check->add_option("--injector-binary", check_args.injector_binary, "The injector binary");
  check->add_option("--stub", check_args.stub_file,
                    "Check a stub webhook: a YAML file holding a stub ({tls, responses}) or an "
                    "endpoint with `stub:` (scenarios/FORMAT.md)");
  check->add_option("--stub-mutator", check_args.stub_mutator,
                    "Check a stub answering with an example mutator's patch (scenarios/FORMAT.md "
                    "\"Example mutators\")");
  check->add_option("--url", check_args.url, "Check an external webhook at this https URL");
  check->add_option("--ca-file", check_args.ca_file,
                    "The CA bundle that verifies --url (default: the system roots)");
  check->add_option("--cases", check_args.cases, "Generated cases")->capture_default_str();
  check->add_option("--seed", check_args.seed,
                    "Random seed (default: from the clock; printed, to reproduce a run)");
  check->add_option("--kinds", check_args.kinds,
                    "Kinds to generate, comma-separated (Pod, Deployment, StatefulSet, DaemonSet, "
                    "Job, CronJob, ReplicaSet) or all")
      ->capture_default_str();
  check->add_option("--mutator", check_args.mutators,
                    "A mutator run beside the webhook (repeat): add-annotation[=K:V], "
                    "add-init-container[=NAME], set-image-pull-policy[=P], label-fighter=V, "
                    "append-sidecar, timestamp-annotation, reorder-containers");
  check->add_option("-o,--output", check_args.output, "table, json or junit")
      ->capture_default_str();
  check->add_option("--work-dir", check_args.work_dir,
                    "Certificates and logs (default: a temporary folder, removed)");

  RunArgs report_args;
  std::string report_out = "report.html";
  auto* report = app.add_subcommand(
      "report", "Run scenarios (or read audit logs, or explain an object against a live cluster) "
                "and write one self-contained HTML file: a sequence diagram per request, the "
                "decision table, the patches as diffs");
  report->add_option("paths", report_args.paths, "Scenario files or folders");
  AuditArgs report_audit_args;
  std::vector<std::string> report_logs;
  report->add_option("--audit-log", report_logs,
                     "Instead of scenarios: the requests of these audit logs (the simulator's or "
                     "a cluster's; rotated files oldest first, gzip) with their admission chains")
      ->take_all();
  report->add_option("--namespace", report_audit_args.namespace_name,
                     "With --audit-log: only requests in this namespace");
  report->add_option("--resource", report_audit_args.resource,
                     "With --audit-log: only requests for this resource");
  report->add_option("--user", report_audit_args.user, "With --audit-log: only this user's requests");
  report->add_flag("--all", report_audit_args.all,
                   "With --audit-log: also requests no admission annotation marks");
  report->add_option("--run", report_args.run_filter,
                     "Select scenarios (and steps) by regex: SCENARIO_RE[/STEP_RE]");
  report->add_option("--out", report_out, "The HTML file to write")->capture_default_str();
  report->add_option("--injector", report_args.injector, "The injector binary");
  report->add_option("--time-scale", report_args.time_scale,
                     "Real seconds slept per simulated second of stub delays")
      ->check(CLI::PositiveNumber);
  report->add_option("--webhook", report_args.webhook_filter, "Only these webhooks (regex)");
  report->add_option("--step", report_args.step_filter, "Only these steps (regex)");
  report->add_flag("--only-called", report_args.only_called, "Only the webhooks called");
  report->add_option("--kubeconfig", report_args.kubeconfig,
                     "Instead of scenarios: explain -f OBJECT against a live cluster (as explain "
                     "--kubeconfig: nothing is created, no webhook is called) and draw it");
  report->add_option("--context", report_args.context,
                     "With --kubeconfig: the kubeconfig context (default: current)");
  report->add_option("-f,--filename", report_args.object_file,
                     "With --kubeconfig: the object to explain the CREATE of (YAML or JSON)");
  report->add_option("-n", report_args.namespace_name,
                     "With --kubeconfig: the namespace to explain the object in (default: the "
                     "object's, else the context's)");

  LintArgs lint_args;
  auto* lint = app.add_subcommand(
      "lint", "Check a webhook set (files, folders or a live cluster) for lockouts, overlapping "
              "injectors, deadlines, dry-run and ordering problems. Exit 0 nothing at or above "
              "--fail-on, 1 findings, 2 input that does not load");
  lint->add_option("paths", lint_args.paths,
                   "YAML/JSON files or folders: webhook configurations, Namespaces, Services, "
                   "Lists, scenarios");
  lint->add_option("--kubeconfig", lint_args.kubeconfig, "Lint a live cluster's webhook set");
  lint->add_option("--context", lint_args.context, "The kubeconfig context (default: current)");
  lint->add_option("-o,--output", lint_args.output, "text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  lint->add_option("--fail-on", lint_args.fail_on,
                   "Exit 1 when a finding has this severity or more: error, warning, info, none")
      ->check(CLI::IsMember({"error", "warning", "info", "none"}))
      ->capture_default_str();
  lint->add_option("--request-timeout", lint_args.request_timeout,
                   "kube-apiserver's --request-timeout in seconds: the deadline webhooks share")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& error) {
    const int code = app.exit(error);
    return code == 0 ? 0 : kExitBadInput;
  }
  try {
    if (run->parsed()) return runCommand(run_args);
    if (explain->parsed()) {
      if (!explain_args.kubeconfig.empty()) {
        if (explain_args.watch) {
          std::cerr << "apiserver-sim explain: --watch re-runs scenarios; with --kubeconfig "
                       "there is nothing to re-run on a file change\n";
          return kExitBadInput;
        }
        return liveExplainCommand(explain_args);
      }
      if (explain_args.paths.empty()) {
        std::cerr << "apiserver-sim explain: give scenario files or folders, or --kubeconfig "
                     "FILE -f OBJECT\n";
        return kExitBadInput;
      }
      return runCommand(explain_args);
    }
    if (compare->parsed()) return compareCommand(compare_args);
    if (serve->parsed()) return serveCommand(serve_args);
    if (audit_chains->parsed()) return auditChains(chains_args);
    if (audit_compare->parsed()) {
      harness::audit::CompareOptions options;
      options.expected = {compare_logs[0]};
      options.actual = {compare_logs[1]};
      options.pair_by = *harness::audit::parsePairBy(compare_audit_args.pair_by);
      options.filter = auditFilter(compare_audit_args);
      options.all = compare_audit_args.all;
      options.output = compare_audit_args.output;
      options.full_parse = auditFullParse();
      return harness::audit::compareCommand(options, std::cout, std::cerr);
    }
    if (audit_policy->parsed()) {
      return harness::audit::policyCheckCommand(policy_file, request_file, std::cout, std::cerr);
    }
    if (audit_sink->parsed()) return auditSinkCommand(sink_args);
    if (audit_assert->parsed()) {
      const std::string expectations = assert_args.back();
      assert_args.pop_back();
      return sim::auditAssertCommand(assert_args, expectations, std::cout, std::cerr,
                                     auditFullParse());
    }
    if (audit_timeline->parsed()) {
      const std::string audit_id = timeline_args.back();
      timeline_args.pop_back();
      return harness::audit::timelineCommand(timeline_args, audit_id, timeline_output, std::cout,
                                             std::cerr);
    }
    if (audit->parsed()) {
      for (const auto& extra : audit->remaining()) {
        if (extra.rfind("-", 0) == 0) {
          std::cerr << "apiserver-sim: audit: unknown option " << extra << "\n";
          return kExitBadInput;
        }
        audit_args.logs.push_back(extra);
      }
      return auditChains(audit_args);
    }
    if (lint->parsed()) return lintCommand(lint_args);
    if (report->parsed()) {
      const int sources = static_cast<int>(!report_logs.empty()) +
                          static_cast<int>(!report_args.paths.empty()) +
                          static_cast<int>(!report_args.kubeconfig.empty());
      if (sources != 1) {
        std::cerr << "apiserver-sim report: give scenario files or folders, --audit-log LOG..., "
                     "or --kubeconfig FILE -f OBJECT\n";
        return kExitBadInput;
      }
      if (!report_args.kubeconfig.empty()) return liveReportCommand(report_args, report_out);
      if (!report_logs.empty()) {
        return auditReportCommand(report_logs, report_audit_args, report_out);
      }
      return reportCommand(report_args, report_out);
    }
    if (check->parsed()) return sim::runCheckIdempotence(check_args, std::cout, std::cerr);
  } catch (const std::exception& error) {
    std::cerr << "apiserver-sim: " << error.what() << "\n";
    return kExitBadInput;
  }
  return kExitBadInput;
}
