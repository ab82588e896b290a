// Followed: k8s.io/client-go/tools/clientcmd/api/v1/types.go (field names of Config, Cluster,
// AuthInfo, Context and their named wrappers).

#include "harness/sim/kubeconfig.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <system_error>

#include "harness/core/yaml.h"
#include "harness/go/base64.h"

namespace harness::sim {

nlohmann::json kubeconfigDocument(const KubeconfigSpec& spec) {
  nlohmann::json context = {{"cluster", spec.name}, {"user", spec.name}};
  if (!spec.namespace_name.empty()) context["namespace"] = spec.namespace_name;
  return {
      {"apiVersion", "v1"},
      {"kind", "Config"},
      {"clusters",
       nlohmann::json::array({{{"name", spec.name},
                               {"cluster",
                                {{"server", spec.server},
                                 {"certificate-authority-data", go::base64Encode(spec.ca_pem)}}}}})},
      {"users", nlohmann::json::array(
                    {{{"name", spec.name}, {"user", {{"token", spec.bearer_token}}}}})},
      {"contexts", nlohmann::json::array({{{"name", spec.name}, {"context", context}}})},
      {"current-context", spec.name},
      {"preferences", nlohmann::json::object()},
  };
}

std::string renderKubeconfig(const KubeconfigSpec& spec) {
  return core::toYaml(kubeconfigDocument(spec));
}

core::Result<void> writeKubeconfigFile(const std::filesystem::path& file,
                                       const KubeconfigSpec& spec) {
  const std::string text = renderKubeconfig(spec);
  std::error_code ec;
  if (file.has_parent_path()) {
    std::filesystem::create_directories(file.parent_path(), ec);
    if (ec) {
      return core::makeError(file.string() + ": cannot create directory: " + ec.message());
    }
  }
  // Write a temporary file with mode 0600 and rename it, so that a reader never sees half a file
  // and the token is never readable by others.
  const std::filesystem::path temporary = file.string() + ".tmp";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return core::makeError(file.string() + ": " + std::strerror(errno));
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = ::write(fd, text.data() + written, text.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      const std::string reason = std::strerror(errno);
      ::close(fd);
      std::filesystem::remove(temporary, ec);
      return core::makeError(file.string() + ": " + reason);
    }
    written += static_cast<std::size_t>(n);
  }
  ::fchmod(fd, 0600);  // O_CREAT's mode is filtered by the umask; make it exact
  if (::close(fd) != 0) return core::makeError(file.string() + ": " + std::strerror(errno));
  std::filesystem::rename(temporary, file, ec);
  if (ec) {
    const std::string reason = ec.message();
    std::filesystem::remove(temporary, ec);
    return core::makeError(file.string() + ": " + reason);
  }
  return {};
}

}  // namespace harness::sim
