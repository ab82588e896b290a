#pragma once

// The Kubernetes REST API of the simulator, served from its ObjectStore over HTTPS so that
// kubectl and the real injector can talk to it as to a k3s kube-apiserver (docs/admission-chain.md
// §1 for the write path: writes go through AdmissionChain::handle, reads straight to the store).
//
// Two layers, like the apiserver's handler chain and its HTTP server:
//   * RestApiHandler answers one net::Request (authentication, request info, discovery, reads,
//     writes, errors as metav1.Status) without any socket: it is what the tests drive directly;
//   * RestApiServer puts a handler behind net::Server with a serving certificate issued by a CA,
//     and writes a kubeconfig for clients.
//
// What is served (paths exactly as kube-apiserver's):
//   /version, /healthz, /livez, /readyz, /metrics, /api, /apis, /api/v1, /apis/<group>/<version>;
//   GET (one object, or a list: namespaced and across namespaces, labelSelector, fieldSelector),
//   POST, PUT, PATCH (json-patch, merge-patch, strategic-merge-patch, apply-patch+yaml as a simple
//   create-or-merge), DELETE and DELETE of a collection for core::builtinResources(); the status
//   subresource (GET/PUT/PATCH).
// WATCH of every resource (a chunked stream of events, src/rest/watch.cc). Not served: other
// subresources (405), /openapi/v2 and /openapi/v3 (404: kubectl
// then needs --validate=false), CBOR, protobuf bodies unless a decoder is installed
// (setProtobufDecoder), list pagination (limit is ignored: every list is complete).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>

#include <functional>

#include <nlohmann/json.hpp>

#include "harness/core/metrics.h"
#include "harness/core/result.h"
#include "harness/net/certificates.h"
#include "harness/net/http.h"
#include "harness/sim/admission_chain.h"

namespace harness::sim {

class ObjectStore;
class AdmissionChain;

// What GET /version answers (k8s.io/apimachinery pkg/version/types.go Info): a k3s server.
struct ServerVersion {
  std::string major = "1";
  std::string minor = "31";
  std::string git_version = "v1.31.4+k3s1";
  std::string git_commit;  // not a real build: left empty
  std::string git_tree_state = "clean";
  std::string build_date;  // idem
  std::string go_version = "go1.22.9";
  std::string compiler = "gc";
  std::string platform = "linux/amd64";
};

struct RestApiOptions {
  std::string address = "127.0.0.1";
  std::uint16_t port = 0;  // 0: any free port (see RestApiServer::url())
  // Where the serving certificate and key are written (required by RestApiServer::start).
  std::filesystem::path scratch_dir;
  // The one accepted bearer token (system:admin, system:masters, as k3s). Generated when empty.
  std::string bearer_token;
  int threads = 2;
  // Served at /metrics (the chain's registry); an empty exposition when null.
  core::MetricsRegistry* metrics = nullptr;
  // Appended to it: families kept elsewhere (the admission policy plugins', kube-cel's).
  std::function<std::string()> more_metrics;
  ServerVersion version;
  // How often a watch with allowWatchBookmarks=true gets a BOOKMARK (the watch cache's
  // bookmarkFrequency, a minute).
  std::chrono::milliseconds watch_bookmark_interval{60'000};
};

// Answers REST requests as kube-apiserver does. Thread-safe (the store and chain are); the
// references must outlive the handler.
// Decodes a request body in Kubernetes' protobuf encoding (application/vnd.kubernetes.protobuf,
// what kubectl's typed clients send: `kubectl create namespace`) into the object's JSON; the
// simulator installs kube-cel's (op decodeProtobuf) when it runs. An error with code kDecode is
// the body's (answered 400), any other the decoder's (500). Without a decoder (the default)
// protobuf bodies are answered 415, naming the media types accepted.
using ProtobufDecoder = std::function<core::Result<nlohmann::json>(const std::string& body)>;
void setProtobufDecoder(ProtobufDecoder decoder);

class RestApiHandler {
 public:
  RestApiHandler(ObjectStore& store, AdmissionChain& chain, RestApiOptions options);
  ~RestApiHandler();
  RestApiHandler(const RestApiHandler&) = delete;
  RestApiHandler& operator=(const RestApiHandler&) = delete;

  // Never throws. Every error is a metav1.Status JSON body (kind Status, apiVersion v1) with the
  // HTTP code in `code`, except the plain-text health endpoints.
  net::Response handle(const net::Request& request);
  // handle() for a request made inside the process (a scenario's PATCH and APPLY steps): a write
  // is admitted as `user` (as impersonation would), and `admitted`, when not null, receives the
  // admission chain's result of the write (left empty when the request is answered before
  // admission: a 4xx of the request itself).
  net::Response handleAs(const net::Request& request, const core::UserInfo& user,
                         std::optional<AdmissionResult>* admitted);

  // "host:port" advertised in /api serverAddressByClientCIDRs (set once the port is known).
  void setServerAddress(const std::string& host_port);
  [[nodiscard]] const RestApiOptions& options() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class RestApiServer {
 public:
  // Serves HTTPS with a serving certificate issued by `ca` (SANs 127.0.0.1, localhost,
  // kubernetes, kubernetes.default, kubernetes.default.svc, kubernetes.default.svc.cluster.local
  // and the listen address), written under options.scratch_dir. Errors: no scratch_dir, an
  // unusable CA, files that cannot be written, a port that cannot be bound.
  static core::Result<std::unique_ptr<RestApiServer>> start(ObjectStore& store,
                                                            AdmissionChain& chain,
                                                            const net::CertificateAuthority& ca,
                                                            RestApiOptions options);
  ~RestApiServer();  // stops
  RestApiServer(const RestApiServer&) = delete;
  RestApiServer& operator=(const RestApiServer&) = delete;

  // https://127.0.0.1:<port>
  [[nodiscard]] std::string url() const;
  [[nodiscard]] std::uint16_t port() const;
  [[nodiscard]] const std::string& bearerToken() const;
  // The CA certificate clients must trust (what the kubeconfig carries).
  [[nodiscard]] const std::string& caCertificatePem() const;

  // Writes a kubeconfig (cluster "apiserver-sim" with certificate-authority-data, user with the
  // bearer token, context "apiserver-sim" as current-context), mode 0600, usable by kubectl and by
  // `injector serve --kubeconfig`. Returns the path written.
  core::Result<std::filesystem::path> writeKubeconfig(const std::filesystem::path& file) const;

  // Stops serving (in-flight requests finish within a short grace period). Idempotent.
  void stop();

 private:
  RestApiServer();
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace harness::sim
