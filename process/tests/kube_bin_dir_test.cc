#include "harness/process/kube_bin_dir.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace harness::process {
namespace {

// Restores HARNESS_KUBE_BIN_DIR as the test found it.
class KubeBinDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* v = std::getenv("HARNESS_KUBE_BIN_DIR")) saved_ = v;
  }
  void TearDown() override {
    if (saved_) {
      ::setenv("HARNESS_KUBE_BIN_DIR", saved_->c_str(), 1);
    } else {
      ::unsetenv("HARNESS_KUBE_BIN_DIR");
    }
  }
  std::optional<std::string> saved_;
};

TEST_F(KubeBinDirTest, TheVariableWins) {
  ::setenv("HARNESS_KUBE_BIN_DIR", "/opt/kube/bin", 1);
  EXPECT_EQ(kubeBinDir(), std::filesystem::path("/opt/kube/bin"));
}

TEST_F(KubeBinDirTest, EmptyOrUnsetMeansTheSourceTree) {
  ::unsetenv("HARNESS_KUBE_BIN_DIR");
  const auto fallback = kubeBinDir();
  // CTest sets HARNESS_SOURCE_DIR to the source tree the library was built from.
  const char* source = std::getenv("HARNESS_SOURCE_DIR");
  ASSERT_NE(source, nullptr);
  EXPECT_EQ(fallback, std::filesystem::path(source) / "build" / "kube" / "bin");
  ::setenv("HARNESS_KUBE_BIN_DIR", "", 1);
  EXPECT_EQ(kubeBinDir(), fallback);
}

}  // namespace
}  // namespace harness::process
