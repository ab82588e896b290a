#include "harness/process/child_process.h"

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>
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

TEST(ChildProcessTest, PipedChildReadsStdinAndWritesStdout) {
  testing::ScratchDir dir("child");
  // A line filter: echoes each line back upper-cased, logs to stderr, exits when stdin closes.
  auto child = ChildProcess::startPiped(
      {"/bin/sh", "-c", "while read -r line; do echo \"$line\" | tr a-z A-Z; echo seen >&2; done; "
                        "exit 7"},
      dir / "piped.log");
  ASSERT_TRUE(child.ok()) << child.error().message;
  ASSERT_GE((*child)->stdinFd(), 0);
  ASSERT_GE((*child)->stdoutFd(), 0);
  const std::string line = "hello\n";
  ASSERT_EQ(::write((*child)->stdinFd(), line.data(), line.size()),
            static_cast<ssize_t>(line.size()));
  std::string got;
  char c;
  while (got.find('\n') == std::string::npos && ::read((*child)->stdoutFd(), &c, 1) == 1) got += c;
  EXPECT_EQ(got, "HELLO\n");
  // End of input lets the child finish by itself.
  (*child)->closeStdin();
  EXPECT_EQ((*child)->stdinFd(), -1);
  EXPECT_EQ(waitForExit(**child), 7);
  EXPECT_EQ((*child)->logTail(), "seen");
  EXPECT_EQ((*child)->stop(), 7);
  EXPECT_EQ((*child)->stdoutFd(), -1);
}

TEST(ChildProcessTest, PipedChildHoldsNoOtherDescriptor) {
  testing::ScratchDir dir("child");
  // Only 0, 1 and 2 are open in the child: the parent's pipe ends are close-on-exec.
  auto child = ChildProcess::startPiped({"/bin/sh", "-c", "ls /proc/self/fd >&2"},
                                        dir / "fds.log");
  ASSERT_TRUE(child.ok()) << child.error().message;
  while ((*child)->running()) std::this_thread::sleep_for(10ms);
  // ls itself opens the directory it lists (fd 3).
  EXPECT_EQ((*child)->logTail(10), "0\n1\n2\n3");
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
