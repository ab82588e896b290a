#include "harness/process/kube_bin_dir.h"

#include <cstdlib>

namespace harness::process {

std::filesystem::path kubeBinDir() {
  if (const char* dir = std::getenv("HARNESS_KUBE_BIN_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  return std::filesystem::path(HARNESS_PROCESS_SOURCE_DIR) / "build" / "kube" / "bin";
}

}  // namespace harness::process
