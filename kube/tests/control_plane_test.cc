// harness::kube without the real binaries: bad input and components that fail to start, with
// fake binaries (shell scripts). The real control plane: control_plane_real_test.cc.

#include "harness/kube/control_plane.h"

#include <sys/stat.h>
#include <unistd.h>

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "harness/testing/support.h"

namespace harness::kube {
namespace {

namespace fs = std::filesystem;

void writeScript(const fs::path& file, const std::string& body) {
  testing::writeFile(file, "#!/bin/sh\n" + body + "\n");
  ::chmod(file.c_str(), 0755);
}

// Four fake binaries in `dir`; `etcd_body` is the fake etcd's script.
Binaries fakeBinaries(const fs::path& dir, const std::string& etcd_body) {
  Binaries binaries = Binaries::inDir(dir);
  writeScript(binaries.etcd, etcd_body);
  for (const auto* other :
       {&binaries.kube_apiserver, &binaries.kube_controller_manager, &binaries.kubectl}) {
    writeScript(*other, "exit 1");
  }
  return binaries;
}

TEST(BinariesTest, MissingBinaryNamesTheBuildCommand) {
  testing::ScratchDir dir("kube-bin");
  auto r = Binaries::inDir(dir.path()).check();
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, (dir / "etcd").string() +
                                   " is not built (bash scripts/build-kube.sh builds it; needs "
                                   "Go 1.26)");
  fakeBinaries(dir.path(), "exit 0");
  EXPECT_TRUE(Binaries::inDir(dir.path()).check().ok());
  fs::remove(dir / "kubectl");
  fs::create_directory(dir / "kubectl");  // a directory is not a binary
  ASSERT_FALSE(Binaries::inDir(dir.path()).check().ok());
}

TEST(PortsTest, AHeldPortIsNotFreeAndAPickedOneIs) {
  testing::ListeningSocket held;
  EXPECT_FALSE(loopbackPortFree(held.port()));
  auto picked = pickFreeLoopbackPort();
  ASSERT_TRUE(picked.ok()) << picked.error().message;
  EXPECT_NE(*picked, 0);
  EXPECT_NE(*picked, held.port());
}

class ControlPlaneStartTest : public ::testing::Test {
 protected:
  ControlPlaneOptions options(const std::string& etcd_body) {
    ControlPlaneOptions o;
    o.binaries = fakeBinaries(scratch_ / "bin", etcd_body);
    o.work_dir = scratch_ / "work";
    o.ready_timeout = std::chrono::seconds(600);
    return o;
  }
  // Nothing of the attempt is left on disk.
  void expectNoWorkDir() { EXPECT_FALSE(fs::exists(scratch_ / "work")); }

  testing::ScratchDir scratch_{"kube-start"};
};

TEST_F(ControlPlaneStartTest, RefusesAPortInUse) {
  testing::ListeningSocket held;
  for (auto [port, name] : {std::pair{&ControlPlaneOptions::apiserver_port, "apiserver port"},
                            std::pair{&ControlPlaneOptions::etcd_port, "etcd port"}}) {
    auto o = options("exit 0");
    o.*port = held.port();
    auto plane = ControlPlane::start(o);
    ASSERT_FALSE(plane.ok());
    EXPECT_EQ(plane.error().message,
              "127.0.0.1:" + std::to_string(held.port()) + " (" + name + ") is in use");
    // kube-local exits 2 (bad input) on this code.
    EXPECT_EQ(plane.error().code, core::ErrorCode::kFailedPrecondition);
    expectNoWorkDir();
  }
}

TEST_F(ControlPlaneStartTest, RefusesUnbuiltBinaries) {
  ControlPlaneOptions o;
  o.binaries = Binaries::inDir(scratch_ / "empty");
  o.work_dir = scratch_ / "work";
  auto plane = ControlPlane::start(o);
  ASSERT_FALSE(plane.ok());
  EXPECT_NE(plane.error().message.find("is not built (bash scripts/build-kube.sh builds it"),
            std::string::npos)
      << plane.error().message;
  EXPECT_EQ(plane.error().code, core::ErrorCode::kNotFound);
  expectNoWorkDir();
}

TEST_F(ControlPlaneStartTest, RefusesAMissingAuditPolicyAndANonEmptyWorkDir) {
  auto o = options("exit 0");
  o.audit_policy_file = scratch_ / "no-policy.yaml";
  auto plane = ControlPlane::start(o);
  ASSERT_FALSE(plane.ok());
  EXPECT_EQ(plane.error().message,
            "audit policy " + (scratch_ / "no-policy.yaml").string() + ": No such file or directory");
  EXPECT_EQ(plane.error().code, core::ErrorCode::kInvalid);
  expectNoWorkDir();

  testing::writeFile(scratch_ / "work" / "something", "x");
  plane = ControlPlane::start(options("exit 0"));
  ASSERT_FALSE(plane.ok());
  EXPECT_EQ(plane.error().message,
            "work directory " + (scratch_ / "work").string() + " is not empty");
  EXPECT_EQ(plane.error().code, core::ErrorCode::kFailedPrecondition);
  EXPECT_TRUE(fs::exists(scratch_ / "work" / "something"));  // not ours: left alone
}

TEST_F(ControlPlaneStartTest, AnEtcdThatExitsIsReportedWithItsLogAndNothingIsLeft) {
  auto plane = ControlPlane::start(options("echo \"etcd: cannot start: $*\" >&2; exit 3"));
  ASSERT_FALSE(plane.ok());
  const std::string& message = plane.error().message;
  EXPECT_EQ(message.rfind("etcd exited (exit status 3) before listening; the end of its log:\n"
                          "etcd: cannot start: --name=kube-local --data-dir=",
                          0),
            0u)
      << message;
  // A component that fails is no input error: kube-local exits 1.
  EXPECT_EQ(plane.error().code, core::ErrorCode::kUnknown);
  expectNoWorkDir();
}

TEST_F(ControlPlaneStartTest, AnEtcdKilledBySignalIsReportedAsSuch) {
  auto plane = ControlPlane::start(options("echo dying; kill -9 $$"));
  ASSERT_FALSE(plane.ok());
  EXPECT_EQ(plane.error().message,
            "etcd exited (killed by signal 9 (Killed)) before listening; the end of its log:\n"
            "dying");
  expectNoWorkDir();
}

TEST_F(ControlPlaneStartTest, AStuckEtcdTimesOutAndIsStopped) {
  auto o = options("exec sleep 600");
  o.ready_timeout = std::chrono::seconds(1);
  auto plane = ControlPlane::start(o);
  ASSERT_FALSE(plane.ok());
  EXPECT_EQ(plane.error().message.rfind("etcd: not listening within 1s (last: 127.0.0.1:", 0),
            0u)
      << plane.error().message;
  expectNoWorkDir();
}

TEST_F(ControlPlaneStartTest, APortLostToAnotherProcessIsRetriedWithNewPorts) {
  // Each attempt appends its etcd client URL; the fake etcd always loses the race.
  const fs::path attempts = scratch_ / "attempts";
  auto plane = ControlPlane::start(options(
      "for a in \"$@\"; do case $a in --listen-client-urls=*) echo \"$a\" >> " +
      attempts.string() +
      ";; esac; done\n"
      "echo 'listen tcp 127.0.0.1:1: bind: address already in use' >&2; exit 1"));
  ASSERT_FALSE(plane.ok());
  EXPECT_NE(plane.error().message.find("bind: address already in use"), std::string::npos);
  std::vector<std::string> urls;
  std::istringstream lines(testing::readFile(attempts));
  for (std::string line; std::getline(lines, line);) urls.push_back(line);
  ASSERT_EQ(urls.size(), 3u);
  EXPECT_NE(urls[0], urls[1]) << "the retry used the same port";
  expectNoWorkDir();
}

}  // namespace
}  // namespace harness::kube
