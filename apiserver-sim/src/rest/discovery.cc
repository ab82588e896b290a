// Followed: k8s.io/apimachinery pkg/apis/meta/v1/types.go (APIVersions, APIGroupList, APIGroup,
// GroupVersionForDiscovery, APIResourceList, APIResource and their omitempty tags),
// pkg/version/types.go (Info), k8s.io/apiserver pkg/endpoints/installer.go (subresource entries
// carry group/version when their kind lives elsewhere; verbs sorted), and the ShortNames /
// Categories of the registries in k8s.io/kubernetes pkg/registry (e.g.
// admissionregistration/mutatingwebhookconfiguration/storage/storage.go: no short names,
// category "api-extensions").

#include "discovery.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include <fmt/format.h>

namespace harness::sim::rest {
namespace {

struct Naming {
  std::vector<std::string> short_names;
  std::vector<std::string> categories;
};

const Naming& namingOf(std::string_view resource) {
  static const std::map<std::string, Naming, std::less<>> kNaming = {
      {"pods", {{"po"}, {"all"}}},
      {"services", {{"svc"}, {"all"}}},
      {"namespaces", {{"ns"}, {}}},
      {"configmaps", {{"cm"}, {}}},
      {"secrets", {{}, {}}},
      {"serviceaccounts", {{"sa"}, {}}},
      {"events", {{"ev"}, {}}},
      {"nodes", {{"no"}, {}}},
      {"persistentvolumeclaims", {{"pvc"}, {}}},
      {"replicationcontrollers", {{"rc"}, {"all"}}},
      {"deployments", {{"deploy"}, {"all"}}},
      {"statefulsets", {{"sts"}, {"all"}}},
      {"daemonsets", {{"ds"}, {"all"}}},
      {"replicasets", {{"rs"}, {"all"}}},
      {"jobs", {{}, {"all"}}},
      {"cronjobs", {{"cj"}, {"all"}}},
      {"mutatingwebhookconfigurations", {{}, {"api-extensions"}}},
      {"validatingwebhookconfigurations", {{}, {"api-extensions"}}},
      // apiextensions-apiserver pkg/registry/customresourcedefinition/etcd.go.
      {"customresourcedefinitions", {{"crd", "crds"}, {"api-extensions"}}},
  };
  static const Naming kNone;
  auto it = kNaming.find(resource);
  return it == kNaming.end() ? kNone : it->second;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

nlohmann::json groupVersionEntry(const std::string& group, const std::string& version) {
  return {{"groupVersion", core::GroupVersion{group, version}.toString()}, {"version", version}};
}

using GroupVersions = std::vector<std::pair<std::string, std::vector<std::string>>>;

// Adds `gvr`'s version to its group's entry (the group appended the first time).
void addGroupVersion(GroupVersions& groups, const core::GroupVersionResource& gvr) {
  auto it = std::find_if(groups.begin(), groups.end(),
                         [&](const auto& entry) { return entry.first == gvr.group; });
  if (it == groups.end()) {
    groups.push_back({gvr.group, {gvr.version}});
  } else if (std::find(it->second.begin(), it->second.end(), gvr.version) == it->second.end()) {
    it->second.push_back(gvr.version);
  }
}

// Groups of /apis in the order clients should prefer them. kube-apiserver orders groups by
// APIService priority, which would put the legacy extensions group (which a v1.31 server no longer
// serves) first; it goes last here so that kubectl maps "deployments" to apps/v1 as on a real
// v1.31 cluster.
GroupVersions servedGroups() {
  GroupVersions groups;
  for (const auto& info : core::builtinResources()) {
    if (!info.resource.group.empty()) addGroupVersion(groups, info.resource);
  }
  std::stable_partition(groups.begin(), groups.end(),
                        [](const auto& entry) { return entry.first != "extensions"; });
  return groups;
}

}  // namespace

nlohmann::json versionDocument(const ServerVersion& v) {
  return {{"major", v.major},
          {"minor", v.minor},
          {"gitVersion", v.git_version},
          {"gitCommit", v.git_commit},
          {"gitTreeState", v.git_tree_state},
          {"buildDate", v.build_date},
          {"goVersion", v.go_version},
          {"compiler", v.compiler},
          {"platform", v.platform}};
}

nlohmann::json apiVersionsDocument(const std::string& server_address) {
  // The legacy /api document has no apiVersion (it is served unversioned).
  nlohmann::json doc = {{"kind", "APIVersions"}, {"versions", nlohmann::json::array({"v1"})}};
  nlohmann::json addresses = nlohmann::json::array();
  if (!server_address.empty()) {
    addresses.push_back({{"clientCIDR", "0.0.0.0/0"}, {"serverAddress", server_address}});
  }
  doc["serverAddressByClientCIDRs"] = addresses;
  return doc;
}

namespace {

// The CRDs' groups (in CRD order) and their versions (by version priority).
GroupVersions customGroups(const CustomResources& custom) {
  GroupVersions groups;
  for (const auto& served : custom) addGroupVersion(groups, served.info.resource);
  for (auto& [group, versions] : groups) {
    std::stable_sort(versions.begin(), versions.end(),
                     [](const auto& a, const auto& b) { return kubeAwareVersionBefore(a, b); });
  }
  return groups;
}

// Every group of /apis with its versions, preferred first: the built-in ones, then the CRDs'.
GroupVersions allGroups(const CustomResources& custom) {
  auto groups = servedGroups();
  for (auto& [group, versions] : customGroups(custom)) {
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& entry) { return entry.first == group; });
    if (it == groups.end()) {
      groups.emplace_back(group, std::move(versions));
      continue;
    }
    for (auto& version : versions) {
      if (std::find(it->second.begin(), it->second.end(), version) == it->second.end()) {
        it->second.push_back(std::move(version));
      }
    }
  }
  return groups;
}

}  // namespace

nlohmann::json apiGroupListDocument(const CustomResources& custom) {
  nlohmann::json groups = nlohmann::json::array();
  for (const auto& [group, versions] : allGroups(custom)) {
    nlohmann::json entry = {{"name", group}, {"versions", nlohmann::json::array()}};
    for (const auto& version : versions) entry["versions"].push_back(groupVersionEntry(group, version));
    entry["preferredVersion"] = groupVersionEntry(group, versions.front());
    groups.push_back(std::move(entry));
  }
  return {{"kind", "APIGroupList"}, {"apiVersion", "v1"}, {"groups", std::move(groups)}};
}

bool servesGroupVersion(std::string_view group, std::string_view version,
                        const CustomResources& custom) {
  for (const auto& info : core::builtinResources()) {
    if (info.resource.group == group && info.resource.version == version) return true;
  }
  return std::any_of(custom.begin(), custom.end(), [&](const ServedCustomResource& served) {
    return served.info.resource.group == group && served.info.resource.version == version;
  });
}

std::vector<std::string> verbsOf(const core::ResourceInfo& info) {
  const std::string& sub = info.subresource;
  if (sub.empty()) {
    if (info.resource.resource == "namespaces") {
      return {"create", "delete", "get", "list", "patch", "update", "watch"};
    }
    return {"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"};
  }
  if (sub == "status" || sub == "scale" || sub == "ephemeralcontainers") {
    return {"get", "patch", "update"};
  }
  if (sub == "binding" || sub == "eviction" || sub == "token") return {"create"};
  if (sub == "exec" || sub == "attach" || sub == "portforward") return {"create", "get"};
  if (sub == "proxy") return {"create", "delete", "get", "patch", "update"};
  if (sub == "log") return {"get"};
  if (sub == "finalize") return {"update"};
  return {"get"};
}

std::optional<nlohmann::json> apiResourceListDocument(std::string_view group,
                                                      std::string_view version,
                                                      const CustomResources& custom) {
  if (!servesGroupVersion(group, version, custom)) return std::nullopt;
  std::vector<std::pair<std::string, nlohmann::json>> entries;
  for (const auto& info : core::builtinResources()) {
    const auto& gvr = info.resource;
    if (gvr.group != group || gvr.version != version) continue;
    nlohmann::json entry;
    const bool is_sub = !info.subresource.empty();
    const std::string name = is_sub ? gvr.resource + "/" + info.subresource : gvr.resource;
    entry["name"] = name;
    entry["singularName"] = is_sub ? "" : lower(info.kind.kind);
    entry["namespaced"] = info.namespaced;
    if (info.kind.group != gvr.group || info.kind.version != gvr.version) {
      entry["group"] = info.kind.group;
      entry["version"] = info.kind.version;
    }
    entry["kind"] = info.kind.kind;
    entry["verbs"] = verbsOf(info);
    if (!is_sub) {
      const Naming& naming = namingOf(gvr.resource);
      if (!naming.short_names.empty()) entry["shortNames"] = naming.short_names;
      if (!naming.categories.empty()) entry["categories"] = naming.categories;
    }
    entries.emplace_back(name, std::move(entry));
  }
  // The installer registers paths sorted, so resources come out sorted by name.
  std::stable_sort(entries.begin(), entries.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  nlohmann::json resources = nlohmann::json::array();
  for (auto& [name, entry] : entries) resources.push_back(std::move(entry));
  // The CRDs' resources follow, as the discovery controller lists them (sync: no sorting).
  for (const auto& served : custom) {
    const auto& gvr = served.info.resource;
    if (gvr.group != group || gvr.version != version) continue;
    nlohmann::json entry;
    const bool is_sub = !served.info.subresource.empty();
    entry["name"] = is_sub ? gvr.resource + "/" + served.info.subresource : gvr.resource;
    entry["singularName"] = is_sub ? "" : served.singular;
    entry["namespaced"] = served.info.namespaced;
    if (served.info.subresource == "scale") {
      entry["group"] = served.info.kind.group;
      entry["version"] = served.info.kind.version;
    }
    entry["kind"] = served.info.kind.kind;
    entry["verbs"] = served.verbs;
    if (!served.short_names.empty()) entry["shortNames"] = served.short_names;
    if (!served.categories.empty()) entry["categories"] = served.categories;
    resources.push_back(std::move(entry));
  }
  const std::string group_version = core::GroupVersion{std::string(group), std::string(version)}
                                        .toString();
  nlohmann::json doc = {{"kind", "APIResourceList"}};
  // Like /api, the legacy /api/v1 list is written without an apiVersion.
  if (!group.empty()) doc["apiVersion"] = "v1";
  doc["groupVersion"] = group_version;
  doc["resources"] = std::move(resources);
  return doc;
}

namespace {

std::string openApiKey(std::string_view group, std::string_view version) {
  return group.empty() ? "api/" + std::string(version)
                       : "apis/" + std::string(group) + "/" + std::string(version);
}

// FNV-1a over the document, the stand-in for kube-openapi's sha512 etag: stable for a given
// build, different when the document changes.
std::string documentHash(const nlohmann::json& doc) {
  std::uint64_t hash = 1469598103934665603ULL;
  for (const unsigned char c : doc.dump()) {
    hash ^= c;
    hash *= 1099511628211ULL;
  }
  return fmt::format("{:016X}", hash);
}

nlohmann::json queryParameter(const char* name, const char* description) {
  return {{"name", name},
          {"in", "query"},
          {"description", description},
          {"schema", {{"type", "string"}, {"uniqueItems", true}}}};
}

}  // namespace

namespace {

nlohmann::json buildOpenApiV3Document(std::string_view group, std::string_view version,
                                      const CustomResources& custom) {
  const std::string prefix = group.empty() ? "/api/" + std::string(version)
                                           : "/apis/" + std::string(group) + "/" +
                                                 std::string(version);
  nlohmann::json paths = nlohmann::json::object();
  std::vector<core::ResourceInfo> resources = core::builtinResources();
  for (const auto& served : custom) resources.push_back(served.info);
  for (const auto& info : resources) {
    const auto& gvr = info.resource;
    if (gvr.group != group || gvr.version != version || !info.subresource.empty()) continue;
    const std::string path = info.namespaced
                                 ? prefix + "/namespaces/{namespace}/" + gvr.resource + "/{name}"
                                 : prefix + "/" + gvr.resource + "/{name}";
    nlohmann::json parameters = nlohmann::json::array({
        queryParameter("dryRun", "When present, indicates that modifications should not be "
                                 "persisted."),
        queryParameter("fieldManager", "fieldManager is a name associated with the actor or "
                                       "entity that is making these changes."),
        queryParameter("fieldValidation", "fieldValidation instructs the server on how to "
                                          "handle objects in the request containing unknown or "
                                          "duplicate fields."),
        {{"name", "force"}, {"in", "query"}, {"schema", {{"type", "boolean"}, {"uniqueItems", true}}}},
    });
    nlohmann::json gvk = {{"group", info.kind.group}, {"version", info.kind.version},
                          {"kind", info.kind.kind}};
    paths[path] = {
        {"parameters",
         nlohmann::json::array({queryParameter("pretty", "If 'true', then the output is pretty "
                                                         "printed.")})},
        {"patch",
         {{"description", "partially update the specified " + info.kind.kind},
          {"operationId", "patch" + info.kind.kind},
          {"parameters", std::move(parameters)},
          {"x-kubernetes-action", "patch"},
          {"x-kubernetes-group-version-kind", std::move(gvk)}}},
    };
  }
  return nlohmann::json{{"openapi", "3.0.0"},
                        {"info", {{"title", "Kubernetes"}, {"version", "unversioned"}}},
                        {"paths", std::move(paths)},
                        {"components", {{"schemas", nlohmann::json::object()}}}};
}

// The served resources are fixed, so the documents and the root (with their hashes) are built
// once, on first use. (The implicit move of nlohmann::json is noexcept; clang-tidy 16 follows
// its assert_invariant() into a throw it cannot reach.)
// NOLINTNEXTLINE(bugprone-exception-escape)
struct OpenApiV3 {
  std::map<std::string, nlohmann::json, std::less<>> documents;  // by openApiKey
  nlohmann::json root;
};

const OpenApiV3& openApiV3() {
  static const OpenApiV3 built = [] {
    OpenApiV3 out;
    nlohmann::json paths = nlohmann::json::object();
    auto add = [&](const std::string& group, const std::string& version) {
      const std::string key = openApiKey(group, version);
      nlohmann::json doc = buildOpenApiV3Document(group, version, {});
      paths[key] = {{"serverRelativeURL", "/openapi/v3/" + key + "?hash=" + documentHash(doc)}};
      out.documents.emplace(key, std::move(doc));
    };
    add("", "v1");
    for (const auto& [group, versions] : servedGroups()) {
      for (const auto& version : versions) add(group, version);
    }
    out.root = {{"paths", std::move(paths)}};
    return out;
  }();
  return built;
}

}  // namespace

std::optional<nlohmann::json> openApiV3Document(std::string_view group, std::string_view version,
                                                const CustomResources& custom) {
  const auto& documents = openApiV3().documents;
  auto it = documents.find(openApiKey(group, version));
  if (it != documents.end()) return it->second;
  if (!servesGroupVersion(group, version, custom)) return std::nullopt;
  return buildOpenApiV3Document(group, version, custom);
}

nlohmann::json openApiV3Root(const CustomResources& custom) {
  nlohmann::json root = openApiV3().root;
  for (const auto& [group, versions] : customGroups(custom)) {
    for (const auto& version : versions) {
      const std::string key = openApiKey(group, version);
      if (root["paths"].contains(key)) continue;
      root["paths"][key] = {{"serverRelativeURL",
                             "/openapi/v3/" + key + "?hash=" +
                                 documentHash(buildOpenApiV3Document(group, version, custom))}};
    }
  }
  return root;
}

bool returnsDeletedObject(const core::GroupVersionResource& resource) {
  static const std::set<std::string, std::less<>> kCore = {
      "pods", "services", "namespaces", "serviceaccounts", "persistentvolumeclaims"};
  return resource.group.empty() && kCore.count(resource.resource) != 0;
}

}  // namespace harness::sim::rest
