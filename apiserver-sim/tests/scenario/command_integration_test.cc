// The apiserver-sim executable's exit statuses for every command (0 success, 1 failing
// expectations or differing chains, 2 bad input or a harness error), and error messages that name
// files the user can still open.

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "harness/testing/support.h"

namespace harness::sim {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

fs::path simulator() { return testing::binaryDir() / "apiserver-sim/apiserver-sim"; }
fs::path examples() { return testing::sourceDir() / "scenarios/examples"; }
fs::path k3dLog() {
  return testing::sourceDir() / "audit/tests/testdata/k3d_linkerd_pod_create.log";
}

class SimulatorCommandTest : public ::testing::Test {
 protected:
  struct Outcome {
    int status = -1;
    std::string out, err;
  };

  // `environment` is prepended to the command (VAR=value ...).
  Outcome run(const std::string& arguments, const std::string& environment = {}) {
    const fs::path out = dir_ / "stdout.txt";
    const fs::path err = dir_ / "stderr.txt";
    const int raw = std::system((environment + " " + simulator().string() + " " + arguments +
                                 " </dev/null >" + out.string() + " 2>" + err.string())
                                    .c_str());
    Outcome outcome;
    outcome.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    outcome.out = testing::readFile(out);
    outcome.err = testing::readFile(err);
    return outcome;
  }

  fs::path write(const std::string& name, const std::string& text) {
    testing::writeFile(dir_ / name, text);
    return dir_ / name;
  }

  testing::ScratchDir dir_{"simulator-command"};
};

TEST_F(SimulatorCommandTest, UsageErrorsAreExit2ForEveryCommand) {
  const std::vector<std::string> usage_errors = {"",
                                                 "frobnicate",
                                                 "--no-such-flag run x",
                                                 "run",
                                                 "run --no-such-flag " + examples().string(),
                                                 "run -o xml " + examples().string(),
                                                 "explain",
                                                 "serve",
                                                 "serve --port not-a-number x.yaml",
                                                 "audit",
                                                 "audit --no-such-flag x.log"};
  for (const auto& arguments : usage_errors) {
    const auto outcome = run(arguments);
    EXPECT_EQ(outcome.status, 2) << "apiserver-sim " << arguments << "\n" << outcome.err;
  }
  for (const std::string arguments : {"--help", "audit --help", "--version"}) {
    EXPECT_EQ(run(arguments).status, 0) << "apiserver-sim " << arguments;
  }
  EXPECT_THAT(run("--help").out, HasSubstr("Exit status: 0"));
}

TEST_F(SimulatorCommandTest, ServeOfAFileThatDoesNotLoadIsExit2) {
  EXPECT_EQ(run("serve " + (dir_ / "missing.yaml").string()).status, 2);
  const auto bad = write("bad.yaml", "apiVersion: apiserver-sim.harness.dev/v1alpha1\n"
                                     "kind: Scenario\nspec: 1\n");
  EXPECT_EQ(run("serve " + bad.string()).status, 2);
}

TEST_F(SimulatorCommandTest, AuditExitStatuses) {
  const auto read = run("audit " + k3dLog().string());
  EXPECT_EQ(read.status, 0) << read.err;
  EXPECT_THAT(read.out, HasSubstr("1 chain in "));
  const auto same = run("audit " + k3dLog().string() + " --compare " + k3dLog().string());
  EXPECT_EQ(same.status, 0) << same.err;
  EXPECT_THAT(same.out, HasSubstr("1 chain compared, 1 paired (by auto), 0 differ"));

  // The same log with the injector's patch changed: the chains differ.
  std::string text = testing::readFile(k3dLog());
  ASSERT_NE(text.find("edge-26.8.3"), std::string::npos);
  text = std::regex_replace(text, std::regex("edge-26\\.8\\.3"), "edge-26.8.4");
  const auto changed = write("changed.log", text);
  const auto differ = run("audit " + k3dLog().string() + " --compare " + changed.string());
  EXPECT_EQ(differ.status, 1) << differ.err;
  EXPECT_THAT(differ.out, HasSubstr("1 chain compared, 1 paired (by auto), 1 differ"));
  EXPECT_THAT(differ.out, HasSubstr("patch differs at operation"));

  EXPECT_EQ(run("audit " + (dir_ / "missing.log").string()).status, 2);
  EXPECT_EQ(run("audit " + k3dLog().string() + " --compare " + (dir_ / "missing.log").string())
                .status,
            2);
  // A line that could hold a chain but is not an event: reported with file and line, exit 2.
  const auto truncated = write("truncated.log", testing::readFile(k3dLog()) +
                                                    "{\"kind\":\"Event\",\"stage\":\"Resp\n");
  const auto bad = run("audit " + truncated.string());
  EXPECT_EQ(bad.status, 2);
  EXPECT_THAT(bad.err, HasSubstr(truncated.string() + ":4: invalid JSON: "));
  EXPECT_THAT(bad.out, HasSubstr("1 chain in "));
}

// The audit subcommands parse as subcommands (not as the log of `audit LOG`).
TEST_F(SimulatorCommandTest, AuditSubcommands) {
  const fs::path real = testing::sourceDir() / "audit/tests/testdata/kube_seed_tutorial.log";
  const fs::path sim = testing::sourceDir() / "audit/tests/testdata/sim_seed_tutorial.log";
  const auto chains = run("audit chains --resource pods -o json " + real.string());
  EXPECT_EQ(chains.status, 0) << chains.err;
  EXPECT_EQ(nlohmann::json::parse(chains.out)["count"], 1);
  const auto compared = run("audit compare " + sim.string() + " " + real.string());
  EXPECT_THAT(compared.out, HasSubstr("compare: paired with create simple-app/"));
  const auto by_name = run("audit compare --pair-by name " + sim.string() + " " + real.string());
  EXPECT_EQ(by_name.status, 1);
  EXPECT_THAT(by_name.out, HasSubstr("without a partner"));
  const fs::path policy = testing::sourceDir() / "scenarios/seed-tutorial/audit-policy.yaml";
  const auto request = write("request.yaml", "verb: get\nresource: secrets\nuser: bob\n");
  const auto checked = run("audit policy-check " + policy.string() + " " + request.string());
  EXPECT_EQ(checked.status, 0) << checked.err;
  EXPECT_THAT(checked.out, HasSubstr("level RequestResponse, decided by rules[0]"));
  EXPECT_EQ(run("audit timeline " + real.string() + " no-such-audit-id").status, 1);
  EXPECT_EQ(run("audit compare " + real.string()).status, 2);  // B missing
}

// --audit-log on a scenario without spec.auditPolicy: recorded with the default policy, and said.
TEST_F(SimulatorCommandTest, AuditLogWithoutAPolicyUsesTheDefaultOne) {
  const fs::path log = dir_ / "audit.log";
  const auto outcome = run("run --audit-log " + log.string() + " " +
                           (examples() / "allow.yaml").string());
  EXPECT_EQ(outcome.status, 0) << outcome.err;
  EXPECT_THAT(outcome.err, HasSubstr("has no spec.auditPolicy: the audit log records it with the "
                                     "default policy"));
  ASSERT_TRUE(fs::exists(log));
  EXPECT_GT(fs::file_size(log), 0u);
  const auto chains = run("audit chains " + log.string());
  EXPECT_EQ(chains.status, 0) << chains.err;
  EXPECT_THAT(chains.out, HasSubstr("replay: "));
}

// Without --work-dir an endpoint's files live in a temporary directory. When an endpoint does not
// start, the error names its log: that file must still be there for the user to open.
TEST_F(SimulatorCommandTest, AnErrorNamesOnlyFilesThatStillExist) {
  // The seed tutorial's endpoint is the injector, here a program that exits at once.
  const fs::path scenario = testing::sourceDir() / "scenarios/seed-tutorial/scenario.yaml";
  const fs::path tmp = dir_ / "tmp";
  fs::create_directories(tmp);
  for (const std::string command : {"run", "serve"}) {
    const auto outcome =
        run(command + " --injector /bin/false " + scenario.string(), "TMPDIR=" + tmp.string());
    EXPECT_EQ(outcome.status, 2) << outcome.err;
    std::smatch match;
    ASSERT_TRUE(std::regex_search(outcome.err, match, std::regex("log (/[^ :\n]*injector\\.log)")))
        << outcome.err;
    EXPECT_TRUE(fs::exists(match[1].str())) << command << ": " << match[1].str() << " is gone";
    EXPECT_THAT(outcome.err, HasSubstr("work directory kept: " + tmp.string()));
  }
}

// explain colours a patch (added green, removed red) only on a terminal, and not with NO_COLOR
// (set and not empty) or --no-color. The terminal is `script`'s pseudo-terminal.
TEST_F(SimulatorCommandTest, ExplainColoursOnlyATerminalWithoutNoColor) {
  if (!fs::exists("/usr/bin/script")) GTEST_SKIP() << "script (util-linux) is not installed";
  const std::string scenario = (examples() / "patch.yaml").string();
  auto onTerminal = [&](const std::string& environment, const std::string& flags) {
    const fs::path out = dir_ / "terminal.txt";
    const std::string command = "env -u NO_COLOR " + environment + " " + simulator().string() +
                                " explain " + scenario + " " + flags;
    const int raw = std::system(("script -qec '" + command + "' /dev/null </dev/null >" +
                                 out.string() + " 2>/dev/null")
                                    .c_str());
    EXPECT_TRUE(WIFEXITED(raw) && WEXITSTATUS(raw) == 0) << command;
    return testing::readFile(out);
  };
  const std::string green = "\x1b[32m";
  EXPECT_THAT(onTerminal("", ""), HasSubstr(green + "+ \"true\""));
  EXPECT_THAT(onTerminal("NO_COLOR=1", ""), Not(HasSubstr("\x1b[")));
  EXPECT_THAT(onTerminal("", "--no-color"), Not(HasSubstr("\x1b[")));
  EXPECT_THAT(onTerminal("NO_COLOR=", ""), HasSubstr(green));  // empty: not set (no-color.org)
  // Not a terminal (a file): no colour.
  const auto to_file = run("explain " + scenario, "env -u NO_COLOR");
  EXPECT_EQ(to_file.status, 0) << to_file.err;
  EXPECT_THAT(to_file.out, HasSubstr("+ \"true\""));
  EXPECT_THAT(to_file.out, Not(HasSubstr("\x1b[")));
}

}  // namespace
}  // namespace harness::sim
