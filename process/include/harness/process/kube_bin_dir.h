#pragma once

// Where the real Kubernetes binaries live (kube-apiserver, kube-controller-manager, kubectl,
// etcd, kube-cel; scripts/build-kube.sh builds them from the Go modules pinned in kube/go.mod).
// One rule for everything that starts them: the simulator's CEL client (apiserver-sim's cel
// module), the real control plane (harness::kube) and the tests.

#include <filesystem>

namespace harness::process {

// $HARNESS_KUBE_BIN_DIR when it is set and not empty, else build/kube/bin in the source tree
// this was built from.
std::filesystem::path kubeBinDir();

}  // namespace harness::process
