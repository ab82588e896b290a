#include "harness/process/child_process.h"

#include <signal.h>

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "harness/testing/support.h"

namespace harness::process {
namespace {

using namespace std::chrono_literals;

// Waits without a deadline that a loaded machine could miss: the shell exits by itself.
int waitForExit(ChildProcess& child) {
  while (child.running()) std::this_thread::sleep_for(10ms);
  return *child.exitStatus();
}

TEST(ChildProcessTest, OutputGoesToTheLogAndTheExitCodeIsReported) {
  testing::ScratchDir dir("child");
  auto child = ChildProcess::start({"/bin/sh", "-c", "echo one; echo two >&2; exit 3"},
                                   dir / "child.log");
  ASSERT_TRUE(child.ok()) << child.error().message;
  EXPECT_EQ(waitForExit(**child), 3);
  EXPECT_EQ((*child)->logTail(), "one\ntwo");
  EXPECT_EQ((*child)->logTail(1), "two");
  EXPECT_EQ((*child)->stop(), 3);  // idempotent once exited
}

TEST(ChildProcessTest, StopSendsSigtermThenSigkill) {
  testing::ScratchDir dir("child");
  auto polite = ChildProcess::start({"/bin/sleep", "600"}, dir / "sleep.log");
  ASSERT_TRUE(polite.ok()) << polite.error().message;
  EXPECT_TRUE((*polite)->running());
  EXPECT_EQ((*polite)->stop(), 128 + SIGTERM);
  EXPECT_FALSE((*polite)->running());

  // A child ignoring SIGTERM is killed after the grace period.
  auto stubborn = ChildProcess::start(
      {"/bin/sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"},
      dir / "stubborn.log");
  ASSERT_TRUE(stubborn.ok()) << stubborn.error().message;
  ASSERT_TRUE(testing::waitForFile(dir / "stubborn.log", 600'000));
  EXPECT_EQ((*stubborn)->stop(100ms), 128 + SIGKILL);
}

TEST(ChildProcessTest, ExecFailureIsAnError) {
  testing::ScratchDir dir("child");
  auto child = ChildProcess::start({(dir / "missing").string()}, dir / "missing.log");
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.error().message,
            "exec " + (dir / "missing").string() + ": No such file or directory");
  auto no_log = ChildProcess::start({"/bin/true"}, dir / "no" / "such" / "dir.log");
  ASSERT_FALSE(no_log.ok());
  EXPECT_NE(no_log.error().message.find("cannot open"), std::string::npos);
}

TEST(ChildProcessTest, DescribesExitStatus) {
  EXPECT_EQ(describeExitStatus(0), "exit status 0");
  EXPECT_EQ(describeExitStatus(2), "exit status 2");
  EXPECT_EQ(describeExitStatus(128 + SIGKILL), "killed by signal 9 (Killed)");
}

}  // namespace
}  // namespace harness::process
