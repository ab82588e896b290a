#pragma once

// A kubeconfig for the simulator's REST API, in the format client-go's clientcmd reads
// (k8s.io/client-go/tools/clientcmd/api/v1/types.go: clusters[].cluster.server and
// certificate-authority-data, users[].user.token, contexts[].context.{cluster,user,namespace},
// current-context). One cluster, one user and one context, all named `name`.

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::sim {

struct KubeconfigSpec {
  std::string server;  // https://127.0.0.1:6443
  std::string ca_pem;  // written base64-encoded as certificate-authority-data
  std::string bearer_token;
  std::string name = "apiserver-sim";  // cluster, user and context name
  std::string namespace_name;          // the context's default namespace; omitted when empty
};

// The kubeconfig as a JSON document (apiVersion v1, kind Config).
nlohmann::json kubeconfigDocument(const KubeconfigSpec& spec);
// The same as YAML, as kubectl writes it.
std::string renderKubeconfig(const KubeconfigSpec& spec);
// Writes renderKubeconfig(spec) to `file` with mode 0600 (it holds a credential), creating missing
// parent directories. Errors name the file.
core::Result<void> writeKubeconfigFile(const std::filesystem::path& file,
                                       const KubeconfigSpec& spec);

}  // namespace harness::sim
