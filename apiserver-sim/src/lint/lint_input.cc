// Loading a webhook set from files or a live cluster (lint_input.h).

#include "harness/sim/lint_input.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <system_error>

#include <fmt/format.h>

#include "harness/core/json.h"
#include "harness/core/object.h"
#include "harness/core/yaml.h"
#include "harness/net/client.h"

namespace harness::sim::lint {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr char kScenarioApiVersion[] = "apiserver-sim.harness.dev/v1alpha1";
constexpr auto kClusterRequestTimeout = std::chrono::seconds(30);

std::string stringOr(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// A string map at object[key] (labels, selector): fields that are not strings are an error.
core::Result<core::Labels> labelMap(const json& object, const std::string& where) {
  core::Labels labels;
  if (object.is_null()) return labels;
  if (!object.is_object()) return core::makeError(where + ": expected a map of strings");
  for (const auto& [key, value] : object.items()) {
    if (!value.is_string()) {
      return core::makeError(fmt::format("{}.{}: expected a string", where, key));
    }
    labels[key] = value.get<std::string>();
  }
  return labels;
}

const json& field(const json& object, const char* key) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(key);
  return it == object.end() ? kNull : *it;
}

core::Result<void> addConfiguration(const json& document, const std::string& source,
                                    LoadedInput& loaded) {
  auto parsed = core::parseWebhookConfiguration(document);
  if (!parsed.ok()) return parsed.error().within(source);
  for (const auto& existing : loaded.input.configurations) {
    if (existing.configuration.kind == parsed->kind &&
        existing.configuration.name == parsed->name) {
      return core::makeError(fmt::format("{}: {} \"{}\" is also defined in {}", source,
                                         core::kindName(parsed->kind), parsed->name,
                                         existing.source));
    }
  }
  loaded.input.configurations.push_back({std::move(*parsed), source});
  return {};
}

core::Result<void> addFile(const fs::path& path, bool named, LoadedInput& loaded);

core::Result<void> addPolicyObject(const json& document, const std::string& source,
                                   LoadedInput& loaded) {
  const std::string kind = stringOr(document, "kind");
  const std::string name = stringOr(field(document, "metadata"), "name");
  if (name.empty()) return core::makeError(source + ": " + kind + ": metadata.name is empty");
  if (!field(document, "spec").is_object()) {
    return core::makeError(source + ": " + kind + " " + name + ": spec: expected a map");
  }
  for (const auto& existing : loaded.input.policies) {
    if (stringOr(existing.object, "kind") == kind &&
        stringOr(field(existing.object, "metadata"), "name") == name) {
      return core::makeError(fmt::format("{}: {} \"{}\" is also defined in {}", source, kind,
                                         name, existing.source));
    }
  }
  loaded.input.policies.push_back({document, source});
  return {};
}

core::Result<void> addScenario(const json& document, const std::string& source,
                               LoadedInput& loaded, const fs::path& base_dir) {
  const json& spec = field(document, "spec");
  for (const char* list : {"objects", "webhookConfigurations"}) {
    const json& items = field(spec, list);
    if (items.is_null()) continue;
    if (!items.is_array()) {
      return core::makeError(fmt::format("{}: spec.{}: expected a list", source, list));
    }
    for (std::size_t i = 0; i < items.size(); ++i) {
      const json& item = items[i];
      // `{file: NAME}`: the documents of a file beside the scenario (scenarios/FORMAT.md).
      if (item.is_object() && item.size() == 1 && item.contains("file")) {
        if (!item["file"].is_string()) {
          return core::makeError(
              fmt::format("{}: spec.{}[{}].file: expected a file name", source, list, i));
        }
        auto added = addFile(base_dir / item["file"].get<std::string>(), true, loaded);
        if (!added.ok()) {
          return added.error().within(fmt::format("{} spec.{}[{}].file", source, list, i));
        }
        continue;
      }
      auto added = addDocument(item, fmt::format("{} spec.{}[{}]", source, list, i), loaded,
                               base_dir);
      if (!added.ok()) return added;
    }
  }
  return {};
}

// The documents of one file; a file found in a folder (not named) that does not parse is listed
// as skipped.
core::Result<void> addFile(const fs::path& path, bool named, LoadedInput& loaded) {
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(path, ec);
  if (!loaded.files_read.insert(ec ? path.string() : canonical.string()).second) return {};
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::makeError("cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  if (!in && !in.eof()) return core::makeError("cannot read " + path.string());
  auto documents = core::parseYamlDocuments(text.str());
  if (!documents.ok()) {
    if (named) return documents.error().within(path.string());
    loaded.skipped.push_back(path.string() + ": " + documents.error().message);
    return {};
  }
  for (std::size_t i = 0; i < documents->size(); ++i) {
    const std::string source = documents->size() == 1
                                   ? path.string()
                                   : fmt::format("{} (document {})", path.string(), i + 1);
    auto added = addDocument((*documents)[i], source, loaded, path.parent_path());
    if (!added.ok()) return added.error();
  }
  return {};
}

}  // namespace

core::Result<void> addDocument(const json& document, const std::string& source,
                               LoadedInput& loaded, const fs::path& base_dir) {
  if (!document.is_object()) return {};  // a values file's scalar, a comment-only document
  const std::string kind = stringOr(document, "kind");
  const std::string api_version = stringOr(document, "apiVersion");
  if (kind == "MutatingWebhookConfiguration" || kind == "ValidatingWebhookConfiguration") {
    return addConfiguration(document, source, loaded);
  }
  if (isAdmissionPolicyObject(document)) return addPolicyObject(document, source, loaded);
  if (kind == "Scenario" && api_version == kScenarioApiVersion) {
    return addScenario(document, source, loaded, base_dir);
  }
  if (kind == "List" || (kind.size() > 4 && kind.ends_with("List"))) {
    const json& items = field(document, "items");
    if (items.is_null()) return {};
    if (!items.is_array()) return core::makeError(source + ": items: expected a list");
    for (std::size_t i = 0; i < items.size(); ++i) {
      auto added =
          addDocument(items[i], fmt::format("{} items[{}]", source, i), loaded, base_dir);
      if (!added.ok()) return added;
    }
    return {};
  }
  const json& metadata = field(document, "metadata");
  const std::string name = stringOr(metadata, "name");
  if (!kind.empty() && !api_version.empty() && !name.empty()) {
    // Any object can be a policy's param: kept by kind, namespace and name with its labels.
    auto labels = labelMap(field(metadata, "labels"), source + ": metadata.labels");
    if (!labels.ok()) return labels.error();
    loaded.input.facts.objects[fmt::format("{}/{}/{}/{}", api_version, kind,
                                           stringOr(metadata, "namespace"), name)] = *labels;
  }
  if (kind == "Namespace" && api_version == "v1" && !name.empty()) {
    auto labels = labelMap(field(metadata, "labels"), source + ": metadata.labels");
    if (!labels.ok()) return labels.error();
    auto& known = loaded.input.facts.namespaces[name];
    known.insert(labels->begin(), labels->end());
    return {};
  }
  if (kind == "Service" && api_version == "v1" && !name.empty()) {
    std::string ns = stringOr(metadata, "namespace");
    if (ns.empty()) ns = "default";
    auto selector = labelMap(field(field(document, "spec"), "selector"), source + ": spec.selector");
    if (!selector.ok()) return selector.error();
    if (!selector->empty()) loaded.input.facts.service_pod_labels[ns + "/" + name] = *selector;
    return {};
  }
  return {};
}

core::Result<LoadedInput> loadFiles(const std::vector<fs::path>& paths) {
  LoadedInput loaded;
  std::vector<std::pair<fs::path, bool>> files;  // path, named on the command line
  for (const auto& path : paths) {
    std::error_code ec;
    if (fs::is_directory(path, ec)) {
      std::vector<fs::path> found;
      for (auto it = fs::recursive_directory_iterator(path, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        const auto extension = it->path().extension();
        if (it->is_regular_file(ec) &&
            (extension == ".yaml" || extension == ".yml" || extension == ".json")) {
          found.push_back(it->path());
        }
      }
      if (ec) return core::makeError(fmt::format("{}: {}", path.string(), ec.message()));
      std::sort(found.begin(), found.end());
      for (auto& file : found) files.emplace_back(std::move(file), false);
    } else if (fs::exists(path, ec)) {
      files.emplace_back(path, true);
    } else {
      return core::makeError(path.string() + ": no such file or directory");
    }
  }
  for (const auto& [path, named] : files) {
    auto added = addFile(path, named, loaded);
    if (!added.ok()) return added.error();
  }
  return loaded;
}

std::string listPath(const core::GroupVersionResource& resource) {
  return resource.group.empty()
             ? fmt::format("/api/{}/{}", resource.version, resource.resource)
             : fmt::format("/apis/{}/{}/{}", resource.group, resource.version, resource.resource);
}

core::Result<std::optional<core::ResourceInfo>> resourceForKind(
    const RestGet& get, const core::GroupVersionKind& kind) {
  if (auto builtin = core::findResourceForKind(kind)) return builtin;
  const std::string path = kind.group.empty()
                               ? fmt::format("/api/{}", kind.version)
                               : fmt::format("/apis/{}/{}", kind.group, kind.version);
  auto discovered = get(path);
  if (!discovered.ok()) return discovered.error();
  if (!*discovered) return std::optional<core::ResourceInfo>{};  // group/version not served
  const json& resources = field(**discovered, "resources");
  if (!resources.is_array()) {
    return core::makeError("GET " + path + ": resources: expected a list (an APIResourceList)");
  }
  for (const auto& entry : resources) {
    const std::string name = stringOr(entry, "name");
    // Subresources ("widgets/status") serve other kinds or the same one: only the resource.
    if (name.empty() || name.find('/') != std::string::npos) continue;
    if (stringOr(entry, "kind") != kind.kind) continue;
    core::ResourceInfo info;
    info.resource = core::GroupVersionResource{kind.group, kind.version, name};
    info.kind = kind;
    const json& namespaced = field(entry, "namespaced");
    info.namespaced = namespaced.is_boolean() && namespaced.get<bool>();
    return std::optional<core::ResourceInfo>{std::move(info)};
  }
  return std::optional<core::ResourceInfo>{};
}

struct ClusterClient::Impl {
  net::KubeConnection connection;
  net::HttpClient client;

  explicit Impl(net::KubeConnection c)
      : connection(std::move(c)), client(net::clientOptionsFor(connection, "apiserver-sim")) {}

  std::string token() const { return net::bearerToken(connection); }
};

ClusterClient::ClusterClient(net::KubeConnection connection)
    : impl_(std::make_unique<Impl>(std::move(connection))) {}
ClusterClient::~ClusterClient() = default;

std::string ClusterClient::describe() const {
  return impl_->connection.server + " (" + impl_->connection.source + ")";
}

core::Result<std::optional<json>> ClusterClient::get(const std::string& path) {
  net::ClientRequest request;
  request.method = "GET";
  std::string server = impl_->connection.server;
  while (!server.empty() && server.back() == '/') server.pop_back();
  request.url = server + path;
  request.headers.set("Accept", "application/json");
  if (const std::string token = impl_->token(); !token.empty()) {
    request.headers.set("Authorization", "Bearer " + token);
  }
  request.deadline = std::chrono::steady_clock::now() + kClusterRequestTimeout;
  auto response = impl_->client.sendSync(std::move(request));
  if (!response.ok()) return core::makeError(response.error_message);
  if (response.status == 404) return std::optional<json>{};
  auto body = core::parseJsonOrDiscarded(response.body);
  if (response.status != 200) {
    if (!body.is_discarded() && body.is_object() && body.contains("message") &&
        body["message"].is_string()) {
      return core::makeError(fmt::format("GET {}: {} {}", path, response.status,
                                         body["message"].get<std::string>()));
    }
    return core::makeError(fmt::format("GET {}: the server answered {}", path, response.status));
  }
  if (body.is_discarded() || !body.is_object()) {
    return core::makeError("GET " + path + ": the server answered with a body that is not a JSON "
                           "object");
  }
  return std::optional<json>{std::move(body)};
}

core::Result<std::vector<json>> ClusterClient::list(const std::string& path) {
  auto listed = get(path);
  if (!listed.ok()) return listed.error();
  if (!*listed) return core::makeError("GET " + path + ": not found (404)");
  const json& items = field(**listed, "items");
  if (!items.is_null() && !items.is_array()) {
    return core::makeError("GET " + path + ": items is not a list");
  }
  std::vector<json> out;
  if (items.is_array()) out.assign(items.begin(), items.end());
  return out;
}

core::Result<LoadedInput> loadCluster(const net::KubeConnection& connection) {
  ClusterClient client(connection);
  LoadedInput loaded;
  const std::string where = client.describe();
  for (const auto& [path, kind] :
       {std::pair{"/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
                  "MutatingWebhookConfiguration"},
        std::pair{"/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
                  "ValidatingWebhookConfiguration"}}) {
    auto items = client.list(path);
    if (!items.ok()) return items.error().within(where);
    for (auto& item : *items) {
      // List items carry no apiVersion/kind (the list has them).
      item["apiVersion"] = "admissionregistration.k8s.io/v1";
      item["kind"] = kind;
      const std::string name = stringOr(field(item, "metadata"), "name");
      auto added = addDocument(item, fmt::format("{} {}/{}", where, kind, name), loaded);
      if (!added.ok()) return added.error();
    }
  }
  // Admission policies and bindings; a cluster that does not serve a kind (older than its GA:
  // ValidatingAdmissionPolicy v1.30, MutatingAdmissionPolicy v1.36) has none of it.
  for (const char* kind : {"ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding",
                           "MutatingAdmissionPolicy", "MutatingAdmissionPolicyBinding"}) {
    std::string resource = kind;
    std::transform(resource.begin(), resource.end(), resource.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    resource = resource.ends_with("policy") ? resource.substr(0, resource.size() - 1) + "ies"
                                            : resource + "s";
    const std::string path = "/apis/admissionregistration.k8s.io/v1/" + resource;
    auto listed = client.get(path);
    if (!listed.ok()) return listed.error().within(where);
    if (!*listed) continue;
    const json& items = field(**listed, "items");
    if (!items.is_array()) continue;
    for (json item : items) {
      item["apiVersion"] = "admissionregistration.k8s.io/v1";
      item["kind"] = kind;
      const std::string name = stringOr(field(item, "metadata"), "name");
      auto added = addDocument(item, fmt::format("{} {}/{}", where, kind, name), loaded);
      if (!added.ok()) return added.error();
    }
  }
  // The objects of every paramKind, for the bindings' paramRefs.
  std::set<std::string> param_kinds;
  for (const auto& policy : loaded.input.policies) {
    const json& param_kind = field(field(policy.object, "spec"), "paramKind");
    const std::string kind = stringOr(param_kind, "kind");
    if (kind.empty() || !param_kinds.insert(stringOr(param_kind, "apiVersion") + "|" + kind).second) {
      continue;
    }
    const std::string api_version = stringOr(param_kind, "apiVersion");
    auto gvk = core::GroupVersionKind::fromApiVersionKind(api_version, kind);
    if (!gvk.ok()) continue;  // invalid-configuration says so
    auto resource = resourceForKind(
        [&client](const std::string& path) { return client.get(path); }, *gvk);
    if (!resource.ok()) return resource.error().within(where);
    loaded.input.facts.param_kinds_served[api_version + "/" + kind] = resource->has_value();
    if (!*resource) continue;  // not served: no param of it exists (the rule says so)
    const std::string path = listPath((*resource)->resource);
    auto params = client.list(path);
    if (!params.ok()) return params.error().within(where);
    for (auto& item : *params) {
      item["apiVersion"] = api_version;
      item["kind"] = kind;
      auto added = addDocument(item, fmt::format("{} {}", where, path), loaded);
      if (!added.ok()) return added.error();
    }
  }
  loaded.input.facts.complete = true;
  auto namespaces = client.list("/api/v1/namespaces");
  if (!namespaces.ok()) return namespaces.error().within(where);
  for (auto& item : *namespaces) {
    item["apiVersion"] = "v1";
    item["kind"] = "Namespace";
    auto added = addDocument(item, where + " namespaces", loaded);
    if (!added.ok()) return added.error();
  }
  // The Services the webhooks are called through: their selectors are their pods' labels.
  std::set<std::pair<std::string, std::string>> services;
  for (const auto& [configuration, source] : loaded.input.configurations) {
    for (const auto& webhook : configuration.webhooks) {
      if (const auto& service = webhook.client_config.service) {
        services.emplace(service->namespace_name, service->name);
      }
    }
  }
  for (const auto& [ns, name] : services) {
    auto service = client.get(fmt::format("/api/v1/namespaces/{}/services/{}", ns, name));
    if (!service.ok()) return service.error().within(where);
    if (!*service) continue;  // not there: the webhook cannot be called, its pods unknown
    (**service)["apiVersion"] = "v1";
    (**service)["kind"] = "Service";
    auto added = addDocument(**service, fmt::format("{} service {}/{}", where, ns, name), loaded);
    if (!added.ok()) return added.error();
  }
  return loaded;
}

}  // namespace harness::sim::lint
