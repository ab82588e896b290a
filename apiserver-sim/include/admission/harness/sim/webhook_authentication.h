#pragma once

// What kube-apiserver presents to the webhooks it calls, configured as kube-apiserver configures
// it: --admission-control-config-file names an AdmissionConfiguration whose
// MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins each have a
// WebhookAdmissionConfiguration with a kubeConfigFile (k8s.io/apiserver
// pkg/admission/plugin/webhook/config/kubeconfig.go LoadConfig: the path must be absolute). The
// kubeconfig's users[] are matched by the webhook's host and port as
// pkg/util/webhook/authentication.go (defaultAuthenticationInfoResolver.clientConfig) matches
// them: the exact "host:port", then "*.<domain>:port" from the longest domain down, then the same
// without the port when the port is 443, then "*", then the user of the current-context;
// otherwise the call is anonymous. A service reference's host is "<name>.<namespace>.svc"
// (ClientConfigForService), a URL's its host, with port 443 when the URL has none
// (pkg/util/webhook/client.go HookClient).

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "harness/core/result.h"
#include "harness/core/webhook_config.h"

namespace harness::sim {

// One users[] entry, read from its kubeconfig (restConfigFromKubeconfig: a token wins over a
// tokenFile; -data wins over the file it replaces).
struct WebhookCredentials {
  std::string user;  // the users[] name that matched, e.g. "*.svc"
  std::string client_certificate_pem;
  std::string client_key_pem;
  std::string bearer_token;
  std::string username, password;  // basic authentication

  bool operator==(const WebhookCredentials&) const = default;
};

// The users of one kubeconfig, matched by host and port.
class WebhookKubeconfig {
 public:
  // Reads users (client-certificate[-data], client-key[-data], token, tokenFile, username,
  // password), contexts and current-context. Files are read now, relative to the kubeconfig's
  // folder as clientcmd resolves them. Errors name the file and the field, e.g.
  // `kc.yaml: users[webhook].user.client-key: cannot read "/abs/missing.key"`, and refuse what the
  // simulator cannot present (exec and auth-provider plugins).
  static core::Result<WebhookKubeconfig> load(const std::filesystem::path& file);

  // The credentials for "host:port" (a name that matched, by the rules above), nullptr when the
  // call is anonymous.
  [[nodiscard]] const WebhookCredentials* forHostPort(std::string_view host_port) const;
  // The same for a webhook's clientConfig (service reference or URL); nullptr for anonymous or a
  // URL that does not parse (the call then fails on the URL).
  [[nodiscard]] const WebhookCredentials* forClientConfig(
      const core::WebhookClientConfig& config) const;

 private:
  std::map<std::string, WebhookCredentials> users_;
  std::optional<std::string> current_user_;  // the current context's user, when it is listed
};

// The kubeconfig of each webhook admission plugin (none: anonymous calls).
struct WebhookAuthentication {
  std::optional<WebhookKubeconfig> mutating;
  std::optional<WebhookKubeconfig> validating;

  // An AdmissionConfiguration file (apiserver.config.k8s.io/v1 or v1alpha1) as
  // --admission-control-config-file takes it: plugins[] with `path` (a file, relative to the
  // AdmissionConfiguration's folder) or an inline `configuration`, each a
  // WebhookAdmissionConfiguration (v1) or WebhookAdmission (v1alpha1) with kubeConfigFile.
  // Plugins other than the two webhook ones are left to the scenario's plugin list.
  static core::Result<WebhookAuthentication> loadAdmissionConfiguration(
      const std::filesystem::path& file);

  [[nodiscard]] const WebhookCredentials* forCall(const core::WebhookClientConfig& config,
                                                  bool mutating_webhook) const;
};

}  // namespace harness::sim
