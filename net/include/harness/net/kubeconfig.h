#pragma once

// Where a Kubernetes REST client connects and how it authenticates, read as client-go reads it:
// a kubeconfig (k8s.io/client-go/tools/clientcmd/api/v1/types.go field names) or the in-cluster
// service account (rest/config.go InClusterConfig). Used by the injector and by apiserver-sim's
// commands that read a live cluster.

#include <filesystem>
#include <string>

#include "harness/core/result.h"
#include "harness/net/client.h"

namespace harness::net {

struct KubeConnection {
  std::string server;  // https://host:port
  std::string ca_pem;
  std::string client_certificate_pem;
  std::string client_key_pem;
  std::string bearer_token;
  std::string token_file;  // re-read on every request (projected tokens rotate)
  bool insecure_skip_verify = false;
  std::string tls_server_name;
  std::string default_namespace = "default";
  std::string source;  // where this came from, for messages
};

// Reads a kubeconfig (current-context, or `context` when given): server, CA and client
// credentials, inline (-data) or as files relative to the kubeconfig's folder. Errors name the
// file and the field.
core::Result<KubeConnection> loadKubeconfig(const std::filesystem::path& path,
                                            const std::string& context = {});

// The in-cluster configuration: KUBERNETES_SERVICE_HOST/PORT and the service account token and
// CA under `service_account_dir` (default /var/run/secrets/kubernetes.io/serviceaccount).
core::Result<KubeConnection> inClusterConnection(
    const std::filesystem::path& service_account_dir =
        "/var/run/secrets/kubernetes.io/serviceaccount");

// The HTTPS client options for talking to the connection's server: its CA, client certificate
// and key, insecure-skip-tls-verify.
ClientOptions clientOptionsFor(const KubeConnection& connection, std::string user_agent);

// The bearer token to send: the token file's content without trailing whitespace, re-read on
// every call (projected service account tokens rotate), else `bearer_token` ("" for none).
std::string bearerToken(const KubeConnection& connection);

}  // namespace harness::net
