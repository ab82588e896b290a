// KubeApi over the Kubernetes REST API (GET objects, POST events), with the client
// authentication of a kubeconfig or the in-cluster service account.


#include "harness/core/json.h"
#include "harness/core/object.h"
#include "harness/core/status.h"
#include "harness/injector/kube_api.h"
#include "harness/net/client.h"

namespace harness::injector {

namespace {

constexpr auto kRequestTimeout = std::chrono::seconds(10);

// The usual API group/version of the kinds the injector looks up when the reference does not
// say (ownerReferences always carry apiVersion; this is for callers that only know the kind).
std::string defaultApiVersion(std::string_view kind) {
  if (kind == "Deployment" || kind == "ReplicaSet" || kind == "StatefulSet" ||
      kind == "DaemonSet") {
    return "apps/v1";
  }
  if (kind == "Job" || kind == "CronJob") return "batch/v1";
  return "v1";
}

}  // namespace

core::Result<std::string> restPathOf(const ObjectRef& ref) {
  const std::string api_version =
      ref.api_version.empty() ? defaultApiVersion(ref.kind) : ref.api_version;
  auto gvk = core::GroupVersionKind::fromApiVersionKind(api_version, ref.kind);
  if (!gvk) return gvk.error();
  auto info = core::findResourceForKind(*gvk);
  if (!info) {
    return core::makeError("no REST mapping for " + gvk->toString());
  }
  std::string path = gvk->group.empty() ? "/api/" + gvk->version
                                        : "/apis/" + gvk->group + "/" + gvk->version;
  if (info->namespaced) {
    if (ref.namespace_name.empty()) {
      return core::makeError(ref.kind + " \"" + ref.name + "\" needs a namespace");
    }
    path += "/namespaces/" + ref.namespace_name;
  }
  path += "/" + info->resource.resource;
  if (!ref.name.empty()) path += "/" + ref.name;
  return path;
}

namespace {

class RestKubeApi final : public KubeApi {
 public:
  explicit RestKubeApi(KubeConnection connection)
      : connection_(std::move(connection)),
        client_(net::clientOptionsFor(connection_, "sidecar-harness-injector")) {}

  core::Result<std::shared_ptr<const nlohmann::json>> get(const ObjectRef& ref) override {
    auto path = restPathOf(ref);
    if (!path) return path.error();
    auto res = send("GET", *path, {});
    if (!res.ok()) return core::makeError(res.error_message);
    if (res.status == 404) return std::shared_ptr<const nlohmann::json>{};
    if (res.status != 200) return core::makeError(statusText(res, "GET " + *path));
    auto json = core::parseJsonOrDiscarded(res.body);
    if (json.is_discarded() || !json.is_object()) {
      return core::makeError("GET " + *path + ": the server returned a body that is not JSON");
    }
    return std::make_shared<const nlohmann::json>(std::move(json));
  }

  core::Result<std::vector<nlohmann::json>> list(const std::string& kind) override {
    auto path = restPathOf(ObjectRef{"", kind, "", ""});
    if (!path) return path.error();
    auto res = send("GET", *path, {});
    if (!res.ok()) return core::makeError(res.error_message);
    if (res.status != 200) return core::makeError(statusText(res, "GET " + *path));
    auto json = core::parseJsonOrDiscarded(res.body);
    const auto items = json.is_object() ? json.find("items") : json.end();
    if (json.is_discarded() || !json.is_object() ||
        (items != json.end() && !items->is_array() && !items->is_null())) {
      return core::makeError("GET " + *path + ": the server returned a body that is not a list");
    }
    std::vector<nlohmann::json> out;
    if (items != json.end() && items->is_array()) {
      for (auto& item : *items) out.push_back(std::move(item));
    }
    return out;
  }

  core::Result<void> createEvent(const nlohmann::json& event) override {
    std::string ns = "default";
    if (auto n = core::namespaceOf(event); n && !n->empty()) ns = *n;
    const std::string path = "/api/v1/namespaces/" + ns + "/events";
    auto res = send("POST", path, event.dump());
    if (!res.ok()) return core::makeError(res.error_message);
    if (res.status != 201 && res.status != 200) {
      return core::makeError(statusText(res, "POST " + path));
    }
    return {};
  }

  [[nodiscard]] std::string describe() const override {
    return connection_.server + " (" + connection_.source + ")";
  }

 private:
  std::string token() const { return net::bearerToken(connection_); }

  net::ClientResponse send(const std::string& method, const std::string& path, std::string body) {
    net::ClientRequest req;
    req.method = method;
    std::string server = connection_.server;
    while (!server.empty() && server.back() == '/') server.pop_back();
    req.url = server + path;
    req.headers.set("Accept", "application/json");
    if (!body.empty()) req.headers.set("Content-Type", "application/json");
    if (const std::string t = token(); !t.empty()) req.headers.set("Authorization", "Bearer " + t);
    req.body = std::move(body);
    req.deadline = std::chrono::steady_clock::now() + kRequestTimeout;
    return client_.sendSync(std::move(req));
  }

  // The server's Status message when it sent one, else the code.
  static std::string statusText(const net::ClientResponse& res, const std::string& what) {
    auto json = core::parseJsonOrDiscarded(res.body);
    if (!json.is_discarded() && json.is_object() && json.contains("message") &&
        json["message"].is_string()) {
      return json["message"].get<std::string>();
    }
    return what + ": the server responded with status " + std::to_string(res.status);
  }

  KubeConnection connection_;
  net::HttpClient client_;
};

}  // namespace

std::unique_ptr<KubeApi> makeRestKubeApi(KubeConnection connection) {
  return std::make_unique<RestKubeApi>(std::move(connection));
}

}  // namespace harness::injector
