// Kubeconfig and in-cluster configuration (net/kubeconfig.h), as client-go's clientcmd and rest.InClusterConfig read
// them (k8s.io/client-go/tools/clientcmd/api/v1/types.go field names; rest/config.go
// InClusterConfig for the service-account paths and environment).

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "harness/core/yaml.h"
#include "harness/go/base64.h"
#include "harness/net/kubeconfig.h"

namespace harness::net {

namespace fs = std::filesystem;

namespace {

core::Result<std::string> readWholeFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::makeError("cannot read " + path.string());
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Finds the named entry of a kubeconfig list (clusters, users, contexts).
const nlohmann::json* findNamed(const nlohmann::json& config, const char* list,
                                const std::string& name) {
  auto it = config.find(list);
  if (it == config.end() || !it->is_array()) return nullptr;
  for (const auto& entry : *it) {
    if (entry.is_object() && entry.value("name", "") == name) return &entry;
  }
  return nullptr;
}

std::string stringField(const nlohmann::json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// "<x>-data" (base64) wins over "<x>" (a file path, relative to the kubeconfig's folder).
core::Result<std::string> dataOrFile(const nlohmann::json& obj, const std::string& key,
                                     const fs::path& base, const std::string& where) {
  const std::string data = stringField(obj, (key + "-data").c_str());
  if (!data.empty()) {
    auto decoded = go::base64Decode(data);
    if (!decoded) return core::makeError(where + "." + key + "-data: " + decoded.error().message);
    return *decoded;
  }
  const std::string file = stringField(obj, key.c_str());
  if (file.empty()) return std::string();
  fs::path p(file);
  if (p.is_relative()) p = base / p;
  auto content = readWholeFile(p);
  if (!content) return core::makeError(where + "." + key + ": " + content.error().message);
  return *content;
}

}  // namespace

core::Result<KubeConnection> loadKubeconfig(const fs::path& path, const std::string& context) {
  const std::string where = path.string();
  auto text = readWholeFile(path);
  if (!text) return text.error();
  auto parsed = core::parseYaml(*text);
  if (!parsed) return parsed.error().within(where);
  const nlohmann::json& config = *parsed;
  if (!config.is_object()) return core::makeError(where + ": not a kubeconfig (expected a map)");

  std::string context_name = context.empty() ? stringField(config, "current-context") : context;
  if (context_name.empty()) return core::makeError(where + ": current-context is not set");
  const nlohmann::json* ctx = findNamed(config, "contexts", context_name);
  if (!ctx || !ctx->contains("context") || !(*ctx)["context"].is_object()) {
    return core::makeError(where + ": contexts: no context named \"" + context_name + "\"");
  }
  const auto& c = (*ctx)["context"];
  const std::string cluster_name = stringField(c, "cluster");
  const std::string user_name = stringField(c, "user");
  const nlohmann::json* cluster = findNamed(config, "clusters", cluster_name);
  if (!cluster || !cluster->contains("cluster") || !(*cluster)["cluster"].is_object()) {
    return core::makeError(where + ": clusters: no cluster named \"" + cluster_name +
                           "\" (context \"" + context_name + "\")");
  }
  const auto& cl = (*cluster)["cluster"];
  const fs::path base = path.has_parent_path() ? path.parent_path() : fs::path(".");

  KubeConnection conn;
  conn.source = "kubeconfig " + where + ", context " + context_name;
  conn.server = stringField(cl, "server");
  if (conn.server.empty()) {
    return core::makeError(where + ": clusters[" + cluster_name + "].cluster.server is empty");
  }
  const std::string cluster_where = where + ": clusters[" + cluster_name + "].cluster";
  auto ca = dataOrFile(cl, "certificate-authority", base, cluster_where);
  if (!ca) return ca.error();
  conn.ca_pem = *ca;
  if (auto it = cl.find("insecure-skip-tls-verify"); it != cl.end() && it->is_boolean()) {
    conn.insecure_skip_verify = it->get<bool>();
  }
  conn.tls_server_name = stringField(cl, "tls-server-name");
  if (const std::string ns = stringField(c, "namespace"); !ns.empty()) conn.default_namespace = ns;

  if (!user_name.empty()) {
    const nlohmann::json* user = findNamed(config, "users", user_name);
    if (!user || !user->contains("user") || !(*user)["user"].is_object()) {
      return core::makeError(where + ": users: no user named \"" + user_name + "\"");
    }
    const auto& u = (*user)["user"];
    const std::string user_where = where + ": users[" + user_name + "].user";
    auto cert = dataOrFile(u, "client-certificate", base, user_where);
    if (!cert) return cert.error();
    auto key = dataOrFile(u, "client-key", base, user_where);
    if (!key) return key.error();
    conn.client_certificate_pem = *cert;
    conn.client_key_pem = *key;
    conn.bearer_token = stringField(u, "token");
    if (const std::string token_file = stringField(u, "tokenFile"); !token_file.empty()) {
      fs::path p(token_file);
      conn.token_file = (p.is_relative() ? base / p : p).string();
    }
  }
  return conn;
}

core::Result<KubeConnection> inClusterConnection(const fs::path& service_account_dir) {
  const char* host = std::getenv("KUBERNETES_SERVICE_HOST");
  const char* port = std::getenv("KUBERNETES_SERVICE_PORT");
  if (!host || !port || !*host || !*port) {
    return core::makeError(
        "unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and "
        "KUBERNETES_SERVICE_PORT must be defined");
  }
  KubeConnection conn;
  std::string h = host;
  if (h.find(':') != std::string::npos) h = "[" + h + "]";
  conn.server = "https://" + h + ":" + port;
  conn.token_file = (service_account_dir / "token").string();
  auto token = readWholeFile(conn.token_file);
  if (!token) return core::makeError("in-cluster: " + token.error().message);
  auto ca = readWholeFile(service_account_dir / "ca.crt");
  if (!ca) return core::makeError("in-cluster: " + ca.error().message);
  conn.ca_pem = *ca;
  if (auto ns = readWholeFile(service_account_dir / "namespace"); ns && !ns->empty()) {
    conn.default_namespace = *ns;
  }
  conn.source = "in-cluster service account " + service_account_dir.string();
  return conn;
}

ClientOptions clientOptionsFor(const KubeConnection& connection, std::string user_agent) {
  ClientOptions options;
  options.ca_pem = connection.ca_pem;
  options.client_certificate_pem = connection.client_certificate_pem;
  options.client_key_pem = connection.client_key_pem;
  options.insecure_skip_verify = connection.insecure_skip_verify;
  options.user_agent = std::move(user_agent);
  return options;
}

std::string bearerToken(const KubeConnection& connection) {
  if (!connection.token_file.empty()) {
    std::ifstream in(connection.token_file);
    std::ostringstream text;
    text << in.rdbuf();
    std::string token = text.str();
    while (!token.empty() && std::isspace(static_cast<unsigned char>(token.back()))) {
      token.pop_back();
    }
    if (!token.empty()) return token;
  }
  return connection.bearer_token;
}

}  // namespace harness::net
