#pragma once

// Where `apiserver-sim lint` (and `explain --kubeconfig`) get a webhook set: YAML/JSON files and
// folders (kubectl get -o yaml output, rendered Helm charts, Lists, scenario files), or a live
// cluster over its REST API.

#include <filesystem>
#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/object.h"
#include "harness/core/result.h"
#include "harness/net/kubeconfig.h"
#include "harness/sim/lint.h"

namespace harness::sim::lint {

struct LoadedInput {
  LintInput input;
  // Files in folders that are not YAML or JSON objects (an unrendered Helm template...):
  // skipped, each with why; a file named on the command line is an error instead.
  std::vector<std::string> skipped;
  // Every file read, by canonical path: a file both in a folder and named by a scenario's
  // `{file: ...}` is read once.
  std::set<std::string> files_read;
};

// Reads every document of the files and, recursively, of the folders' *.yaml, *.yml and *.json
// files (sorted by path): MutatingWebhookConfiguration and ValidatingWebhookConfiguration
// (admissionregistration.k8s.io/v1), Namespaces (labels), Services (selectors: their pods'
// labels), `kind: List` and *List items, and apiserver-sim Scenarios (spec.webhookConfigurations
// and spec.objects). Other kinds are ignored. Errors name the file, the document and the field;
// the same configuration defined twice is an error naming both files.
core::Result<LoadedInput> loadFiles(const std::vector<std::filesystem::path>& paths);

// Adds one parsed document (from `source`) to `loaded`, as loadFiles does. A Scenario's
// `{file: NAME}` entries are read relative to `base_dir` (the scenario's folder), as the scenario
// loader reads them.
core::Result<void> addDocument(const nlohmann::json& document, const std::string& source,
                               LoadedInput& loaded,
                               const std::filesystem::path& base_dir = {});

// A live cluster's webhook set: both kinds of configurations, every Namespace's labels, and the
// Services the webhooks are called through; the admission policies and bindings, and the objects
// of every paramKind they name (custom resources too, found through discovery).
core::Result<LoadedInput> loadCluster(const net::KubeConnection& connection);

// A GET on a cluster's REST API: the object, nullopt on 404.
using RestGet =
    std::function<core::Result<std::optional<nlohmann::json>>(const std::string& path)>;

// The resource serving `kind` in a live cluster, as the policy plugins' REST mapper finds a
// paramKind's (k8s.io/apiserver pkg/admission/plugin/policy/generic/policy_source.go
// calculatePolicyData: restMapper.RESTMapping): a built-in kind from apiserver-sim's table,
// any other (a custom resource) from the cluster's discovery document of its group and version
// (`GET /apis/<group>/<version>`: the APIResourceList entry of that kind that is not a
// subresource, its plural name and whether it is namespaced). nullopt when the cluster does not
// serve the kind (the group/version is unknown or has no such kind).
core::Result<std::optional<core::ResourceInfo>> resourceForKind(const RestGet& get,
                                                                const core::GroupVersionKind& kind);

// The list path of a resource: "/api/v1/configmaps", "/apis/example.com/v1/widgets".
std::string listPath(const core::GroupVersionResource& resource);

// A GET on a live cluster's REST API: the object, nullopt on 404, an error otherwise (the
// server's Status message, or the transport's).
class ClusterClient {
 public:
  explicit ClusterClient(net::KubeConnection connection);
  ~ClusterClient();
  ClusterClient(const ClusterClient&) = delete;
  ClusterClient& operator=(const ClusterClient&) = delete;
  core::Result<std::optional<nlohmann::json>> get(const std::string& path);
  // The items of a list GET (an error when the path does not exist).
  core::Result<std::vector<nlohmann::json>> list(const std::string& path);
  [[nodiscard]] std::string describe() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace harness::sim::lint
