// Followed: k8s.io/apiserver pkg/util/webhook/authentication.go (defaultAuthenticationInfoResolver
// clientConfig: the order users[] names are tried; restConfigFromKubeconfig: which fields count),
// pkg/util/webhook/client.go (HookClient: the host:port a service reference or a URL is looked up
// by), pkg/admission/plugin/webhook/config/kubeconfig.go (LoadConfig: kubeConfigFile must be an
// absolute path), pkg/admission/config.go (ReadAdmissionConfiguration: plugins[].path relative to
// the configuration file, or an inline configuration).

#include "harness/sim/webhook_authentication.h"

#include <fstream>
#include <sstream>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/yaml.h"
#include "harness/go/base64.h"
#include "harness/net/url.h"

namespace harness::sim {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

core::Result<std::string> readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return core::Error{"cannot read \"" + path.string() + "\""};
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) return core::Error{"cannot read \"" + path.string() + "\""};
  return ss.str();
}

core::Result<json> readYamlFile(const fs::path& path) {
  auto text = readText(path);
  if (!text.ok()) return text.error();
  auto doc = core::parseYaml(*text);
  if (!doc.ok()) return doc.error().within(path.string());
  return std::move(*doc);
}

// A string member, "" when absent; an error naming `where.key` when it is another type.
core::Result<std::string> stringAt(const json& object, const std::string& key,
                                   const std::string& where) {
  const auto it = object.find(key);
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) return core::Error{where + "." + key + ": expected a string"};
  return it->get<std::string>();
}

// "<key>-data" (base64) wins over "<key>" (a file, relative to the kubeconfig's folder).
core::Result<std::string> dataOrFile(const json& user, const std::string& key,
                                     const fs::path& base, const std::string& where) {
  auto data = stringAt(user, key + "-data", where);
  if (!data.ok()) return data.error();
  if (!data->empty()) {
    auto decoded = go::base64Decode(*data);
    if (!decoded.ok()) return decoded.error().within(where + "." + key + "-data");
    return *decoded;
  }
  auto file = stringAt(user, key, where);
  if (!file.ok()) return file.error();
  if (file->empty()) return std::string();
  fs::path path(*file);
  if (path.is_relative()) path = base / path;
  auto content = readText(path);
  if (!content.ok()) return content.error().within(where + "." + key);
  return *content;
}

core::Result<WebhookCredentials> credentialsOf(const std::string& name, const json& user,
                                               const fs::path& base, const std::string& where) {
  if (!user.is_object()) return core::Error{where + ": expected a map"};
  for (const char* plugin : {"exec", "auth-provider"}) {
    if (user.contains(plugin) && !user[plugin].is_null()) {
      return core::Error{where + "." + plugin +
                         ": not supported by the simulator (it presents certificates, tokens and "
                         "basic authentication)"};
    }
  }
  WebhookCredentials credentials;
  credentials.user = name;
  auto certificate = dataOrFile(user, "client-certificate", base, where);
  if (!certificate.ok()) return certificate.error();
  auto key = dataOrFile(user, "client-key", base, where);
  if (!key.ok()) return key.error();
  if (certificate->empty() != key->empty()) {
    return core::Error{where + ": client-certificate and client-key go together (one is missing)"};
  }
  credentials.client_certificate_pem = std::move(*certificate);
  credentials.client_key_pem = std::move(*key);
  auto token = stringAt(user, "token", where);
  if (!token.ok()) return token.error();
  auto token_file = stringAt(user, "tokenFile", where);
  if (!token_file.ok()) return token_file.error();
  if (!token->empty()) {
    credentials.bearer_token = *token;
  } else if (!token_file->empty()) {
    fs::path path(*token_file);
    if (path.is_relative()) path = base / path;
    auto content = readText(path);
    if (!content.ok()) return content.error().within(where + ".tokenFile");
    credentials.bearer_token = *content;
  }
  for (auto [field, out] : {std::pair{"username", &credentials.username},
                            std::pair{"password", &credentials.password}}) {
    auto value = stringAt(user, field, where);
    if (!value.ok()) return value.error();
    *out = *value;
  }
  return credentials;
}

// Go's strings.Split(target, ".") then "*." + strings.Join(steps[i:], ".") for i >= 1.
std::vector<std::string> starNames(std::string_view target) {
  std::vector<std::string> names;
  for (std::size_t dot = target.find('.'); dot != std::string_view::npos;
       dot = target.find('.', dot + 1)) {
    names.push_back("*." + std::string(target.substr(dot + 1)));
  }
  return names;
}

// net.SplitHostPort for "host:port" and "[v6]:port".
std::pair<std::string, std::string> splitHostPort(std::string_view host_port) {
  const std::size_t colon = host_port.rfind(':');
  if (colon == std::string_view::npos) return {std::string(host_port), ""};
  std::string_view host = host_port.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  return {std::string(host), std::string(host_port.substr(colon + 1))};
}

}  // namespace

core::Result<WebhookKubeconfig> WebhookKubeconfig::load(const fs::path& file) {
  const std::string where = file.string();
  auto config = readYamlFile(file);
  if (!config.ok()) return config.error();
  if (!config->is_object()) return core::Error{where + ": not a kubeconfig (expected a map)"};
  const fs::path base = file.has_parent_path() ? file.parent_path() : fs::path(".");
  WebhookKubeconfig out;
  if (const auto users = config->find("users"); users != config->end() && !users->is_null()) {
    if (!users->is_array()) return core::Error{where + ": users: expected a list"};
    for (std::size_t i = 0; i < users->size(); ++i) {
      const json& entry = (*users)[i];
      const std::string at = where + ": users[" + std::to_string(i) + "]";
      if (!entry.is_object()) return core::Error{at + ": expected a map"};
      auto name = stringAt(entry, "name", at);
      if (!name.ok()) return name.error();
      if (name->empty()) return core::Error{at + ".name: required"};
      const std::string user_where = where + ": users[" + *name + "].user";
      const auto user = entry.find("user");
      auto credentials = credentialsOf(*name, user == entry.end() ? json::object() : *user,
                                       base, user_where);
      if (!credentials.ok()) return credentials.error();
      // clientcmd keeps the last entry of a name.
      out.users_[*name] = std::move(*credentials);
    }
  }
  auto current = stringAt(*config, "current-context", where);
  if (!current.ok()) return current.error();
  if (const auto contexts = config->find("contexts");
      !current->empty() && contexts != config->end() && contexts->is_array()) {
    for (const json& entry : *contexts) {
      if (!entry.is_object() || entry.value("name", json()) != *current) continue;
      const auto context = entry.find("context");
      if (context == entry.end() || !context->is_object()) continue;
      const std::string user = context->value("user", json("")).is_string()
                                   ? context->value("user", std::string())
                                   : std::string();
      if (!user.empty() && out.users_.count(user) > 0) out.current_user_ = user;
    }
  }
  return out;
}

const WebhookCredentials* WebhookKubeconfig::forHostPort(std::string_view host_port) const {
  auto find = [this](const std::string& name) -> const WebhookCredentials* {
    const auto it = users_.find(name);
    return it == users_.end() ? nullptr : &it->second;
  };
  auto exactOrStar = [&](std::string_view target) -> const WebhookCredentials* {
    if (const auto* found = find(std::string(target))) return found;
    for (const auto& name : starNames(target)) {
      if (const auto* found = find(name)) return found;
    }
    return nullptr;
  };
  if (const auto* found = exactOrStar(host_port)) return found;
  if (const auto [host, port] = splitHostPort(host_port); port == "443") {
    if (const auto* found = exactOrStar(host)) return found;
  }
  // authentication.go then tries the in-cluster configuration for kubernetes.default.svc:443
  // (the apiserver calling itself), which has no meaning here.
  if (const auto* found = find("*")) return found;
  if (current_user_) return find(*current_user_);
  return nullptr;
}

const WebhookCredentials* WebhookKubeconfig::forClientConfig(
    const core::WebhookClientConfig& config) const {
  if (config.service) {
    const auto& service = *config.service;
    return forHostPort(service.name + "." + service.namespace_name +
                       ".svc:" + std::to_string(service.port.value_or(443)));
  }
  if (!config.url) return nullptr;
  auto url = net::parseUrl(*config.url);
  if (!url.ok()) return nullptr;
  return forHostPort(url->hostPort());  // with :443 when the URL names no port
}

core::Result<WebhookAuthentication> WebhookAuthentication::loadAdmissionConfiguration(
    const fs::path& file) {
  const std::string where = file.string();
  auto config = readYamlFile(file);
  if (!config.ok()) return config.error();
  if (!config->is_object()) return core::Error{where + ": expected an AdmissionConfiguration"};
  auto api_version = stringAt(*config, "apiVersion", where);
  auto kind = stringAt(*config, "kind", where);
  if (!api_version.ok()) return api_version.error();
  if (!kind.ok()) return kind.error();
  if (*kind != "AdmissionConfiguration" || (*api_version != "apiserver.config.k8s.io/v1" &&
                                            *api_version != "apiserver.config.k8s.io/v1alpha1")) {
    return core::Error{where + ": expected kind AdmissionConfiguration of apiVersion "
                               "apiserver.config.k8s.io/v1 (or v1alpha1), got kind \"" +
                       *kind + "\" of apiVersion \"" + *api_version + "\""};
  }
  const fs::path base = file.has_parent_path() ? file.parent_path() : fs::path(".");
  WebhookAuthentication out;
  const auto plugins = config->find("plugins");
  if (plugins == config->end() || plugins->is_null()) return out;
  if (!plugins->is_array()) return core::Error{where + ": plugins: expected a list"};
  for (std::size_t i = 0; i < plugins->size(); ++i) {
    const json& plugin = (*plugins)[i];
    const std::string at = where + ": plugins[" + std::to_string(i) + "]";
    if (!plugin.is_object()) return core::Error{at + ": expected a map"};
    auto name = stringAt(plugin, "name", at);
    if (!name.ok()) return name.error();
    std::optional<WebhookKubeconfig>* slot = nullptr;
    if (*name == "MutatingAdmissionWebhook") slot = &out.mutating;
    if (*name == "ValidatingAdmissionWebhook") slot = &out.validating;
    if (slot == nullptr) continue;

    // The plugin's configuration: inline, or in the file at `path`.
    json webhook_admission;
    std::string config_where = at + ".configuration";
    auto path = stringAt(plugin, "path", at);
    if (!path.ok()) return path.error();
    if (const auto inline_config = plugin.find("configuration");
        inline_config != plugin.end() && !inline_config->is_null()) {
      webhook_admission = *inline_config;
    } else if (!path->empty()) {
      fs::path config_file(*path);
      if (config_file.is_relative()) config_file = base / config_file;
      auto read = readYamlFile(config_file);
      if (!read.ok()) return read.error().within(at + ".path");
      webhook_admission = std::move(*read);
      config_where = config_file.string();
    } else {
      continue;  // no configuration: anonymous calls, as without the plugin entry
    }
    if (!webhook_admission.is_object()) return core::Error{config_where + ": expected a map"};
    auto config_kind = stringAt(webhook_admission, "kind", config_where);
    auto config_version = stringAt(webhook_admission, "apiVersion", config_where);
    if (!config_kind.ok()) return config_kind.error();
    if (!config_version.ok()) return config_version.error();
    const bool v1 = *config_version == "apiserver.config.k8s.io/v1" &&
                    *config_kind == "WebhookAdmissionConfiguration";
    const bool v1alpha1 = *config_version == "apiserver.config.k8s.io/v1alpha1" &&
                          *config_kind == "WebhookAdmission";
    if (!v1 && !v1alpha1) {
      return core::Error{config_where +
                         ": expected kind WebhookAdmissionConfiguration of apiVersion "
                         "apiserver.config.k8s.io/v1 (or WebhookAdmission of v1alpha1), got kind "
                         "\"" + *config_kind + "\" of apiVersion \"" + *config_version + "\""};
    }
    auto kubeconfig_file = stringAt(webhook_admission, "kubeConfigFile", config_where);
    if (!kubeconfig_file.ok()) return kubeconfig_file.error();
    if (!fs::path(*kubeconfig_file).is_absolute()) {
      // kubeconfig.go LoadConfig: field.Invalid(field.NewPath("kubeConfigFile"), ...).
      return core::Error{config_where + ": kubeConfigFile: Invalid value: \"" + *kubeconfig_file +
                         "\": must be an absolute file path"};
    }
    auto kubeconfig = WebhookKubeconfig::load(*kubeconfig_file);
    if (!kubeconfig.ok()) return kubeconfig.error();
    *slot = std::move(*kubeconfig);
  }
  return out;
}

const WebhookCredentials* WebhookAuthentication::forCall(const core::WebhookClientConfig& config,
                                                         bool mutating_webhook) const {
  const auto& kubeconfig = mutating_webhook ? mutating : validating;
  return kubeconfig ? kubeconfig->forClientConfig(config) : nullptr;
}

}  // namespace harness::sim
