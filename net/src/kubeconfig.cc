// Kubeconfig and in-cluster configuration (net/kubeconfig.h), as client-go's clientcmd and rest.InClusterConfig read
// them (k8s.io/client-go/tools/clientcmd/api/v1/types.go field names; rest/config.go
// InClusterConfig for the service-account paths and environment).

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <vector>

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


// An exec credential plugin's answer may take this long (a browser login is interactive, which
// this client is not: client-go's InteractiveMode Always fails without a terminal, below).
constexpr std::chrono::seconds kExecTimeout{60};

// Runs `argv` with `env` added to the environment and returns its stdout; errors: it cannot be
// started, it exits with a non-zero status (with its stderr), it runs longer than kExecTimeout
// (killed). client-go: k8s.io/client-go/plugin/pkg/client/auth/exec/exec.go refreshCredsLocked.
core::Result<std::string> runPlugin(const std::vector<std::string>& argv,
                                    const std::vector<std::string>& env, const std::string& where) {
  int out[2], err[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    return core::makeError(where + ": pipe: " + std::strerror(errno));
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(out[0]);
    ::close(out[1]);
    return core::makeError(where + ": pipe: " + std::strerror(errno));
  }
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return core::makeError(where + ": fork: " + std::strerror(errno));
  if (pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(err[1], 2);
    int devnull = ::open("/dev/null", O_RDONLY);
    if (devnull >= 0) ::dup2(devnull, 0);
    for (const auto& e : env) ::putenv(const_cast<char*>(e.c_str()));
    ::execvp(args[0], args.data());
    const std::string message = std::string("exec: \"") + args[0] + "\": " + std::strerror(errno);
    (void)!::write(2, message.data(), message.size());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(err[1]);
  std::string stdout_text, stderr_text;
  const auto deadline = std::chrono::steady_clock::now() + kExecTimeout;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  bool timed_out = false;
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      timed_out = true;
      break;
    }
    const int ready = ::poll(fds, 2, static_cast<int>(left.count()));
    if (ready < 0 && errno == EINTR) continue;
    if (ready < 0) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buffer[4096];
      const ssize_t n = ::read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        (i == 0 ? stdout_text : stderr_text).append(buffer, static_cast<std::size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        ::close(fds[i].fd);
        fds[i].fd = -1;
      }
    }
  }
  for (auto& fd : fds) {
    if (fd.fd >= 0) ::close(fd.fd);
  }
  if (timed_out) ::kill(pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  while (!stderr_text.empty() && std::isspace(static_cast<unsigned char>(stderr_text.back()))) {
    stderr_text.pop_back();
  }
  if (timed_out) {
    return core::makeError(where + ": exec plugin " + argv[0] + " did not answer within " +
                           std::to_string(kExecTimeout.count()) + "s");
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return core::makeError(where + ": exec plugin " + argv[0] + " failed (" +
                           (WIFEXITED(status) ? "exit status " + std::to_string(WEXITSTATUS(status))
                                              : std::string("killed by a signal")) +
                           ")" + (stderr_text.empty() ? "" : ": " + stderr_text));
  }
  return stdout_text;
}

// A user's `exec` (client.authentication.k8s.io/v1, or v1beta1): runs the plugin as client-go
// does (k8s.io/client-go/plugin/pkg/client/auth/exec/exec.go: KUBERNETES_EXEC_INFO with the
// ExecCredential spec, the cluster when provideClusterInfo, `env` added; a relative command with a
// path separator is relative to the kubeconfig, clientcmd ResolvePaths) and takes the token or the
// client certificate and key from its ExecCredential status. The credential is read once, when
// the kubeconfig is loaded (this client's runs are short; expirationTimestamp is not refreshed).
core::Result<void> execCredential(const nlohmann::json& exec, const nlohmann::json& cluster,
                                  const fs::path& base, const std::string& where,
                                  KubeConnection& conn) {
  if (!exec.is_object()) return core::makeError(where + ": not a map");
  const std::string api_version = stringField(exec, "apiVersion");
  if (api_version != "client.authentication.k8s.io/v1" &&
      api_version != "client.authentication.k8s.io/v1beta1") {
    return core::makeError(where + ".apiVersion: \"" + api_version +
                           "\" is not supported (client.authentication.k8s.io/v1 or v1beta1)");
  }
  std::string command = stringField(exec, "command");
  if (command.empty()) return core::makeError(where + ".command: Required value");
  if (command.find('/') != std::string::npos && fs::path(command).is_relative()) {
    command = (base / command).lexically_normal().string();
  }
  // client-go v1 requires interactiveMode; this client never has a terminal for the plugin.
  const std::string mode = stringField(exec, "interactiveMode");
  if (api_version.ends_with("/v1") && mode.empty()) {
    return core::makeError(where + ".interactiveMode: Required value (Never, IfAvailable, Always)");
  }
  if (mode == "Always") {
    return core::makeError(where + ": exec plugin is configured to use interactive mode (Always) "
                           "but no terminal is available");
  }
  std::vector<std::string> argv = {command};
  if (auto args = exec.find("args"); args != exec.end() && args->is_array()) {
    for (const auto& a : *args) {
      if (a.is_string()) argv.push_back(a.get<std::string>());
    }
  }
  nlohmann::json spec = {{"interactive", false}};
  if (exec.value("provideClusterInfo", false)) {
    nlohmann::json info = {{"server", conn.server}};
    if (!conn.tls_server_name.empty()) info["tls-server-name"] = conn.tls_server_name;
    if (conn.insecure_skip_verify) info["insecure-skip-tls-verify"] = true;
    if (!conn.ca_pem.empty()) info["certificate-authority-data"] = go::base64Encode(conn.ca_pem);
    if (auto config = cluster.find("extensions"); config != cluster.end()) {
      // client.authentication.k8s.io/exec extension: passed as spec.cluster.config.
      for (const auto& ext : *config) {
        if (ext.is_object() && ext.value("name", "") == "client.authentication.k8s.io/exec") {
          info["config"] = ext.value("extension", nlohmann::json());
        }
      }
    }
    spec["cluster"] = std::move(info);
  }
  const nlohmann::json exec_info = {
      {"apiVersion", api_version}, {"kind", "ExecCredential"}, {"spec", spec}};
  std::vector<std::string> env = {"KUBERNETES_EXEC_INFO=" + exec_info.dump()};
  if (auto vars = exec.find("env"); vars != exec.end() && vars->is_array()) {
    for (const auto& v : *vars) {
      if (v.is_object()) env.push_back(stringField(v, "name") + "=" + stringField(v, "value"));
    }
  }
  auto output = runPlugin(argv, env, where);
  if (!output) return output.error();
  nlohmann::json credential = nlohmann::json::parse(*output, nullptr, false);
  if (!credential.is_object()) {
    return core::makeError(where + ": exec plugin " + argv[0] + " did not print an ExecCredential "
                           "(not JSON)");
  }
  if (stringField(credential, "kind") != "ExecCredential" ||
      stringField(credential, "apiVersion") != api_version) {
    return core::makeError(where + ": exec plugin " + argv[0] + " printed kind \"" +
                           stringField(credential, "kind") + "\" apiVersion \"" +
                           stringField(credential, "apiVersion") + "\", want ExecCredential " +
                           api_version);
  }
  const auto status = credential.value("status", nlohmann::json::object());
  const std::string token = status.is_object() ? stringField(status, "token") : "";
  const std::string cert = status.is_object() ? stringField(status, "clientCertificateData") : "";
  const std::string key = status.is_object() ? stringField(status, "clientKeyData") : "";
  if (cert.empty() != key.empty()) {
    return core::makeError(where + ": exec plugin " + argv[0] + ": status: clientCertificateData "
                           "and clientKeyData must both be present");
  }
  if (token.empty() && cert.empty()) {
    return core::makeError(where + ": exec plugin " + argv[0] + ": status: neither token nor "
                           "clientCertificateData");
  }
  if (!token.empty()) conn.bearer_token = token;
  if (!cert.empty()) {
    conn.client_certificate_pem = cert;
    conn.client_key_pem = key;
  }
  return {};
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
    if (auto exec = u.find("exec"); exec != u.end() && !exec->is_null()) {
      if (auto ok = execCredential(*exec, cl, base, user_where + ".exec", conn); !ok) {
        return ok.error();
      }
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
  options.server_name = connection.tls_server_name;
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
