// parseExternalEndpoint (endpoint.h).

#include "harness/sim/endpoint.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/field_errors.h"
#include "harness/core/webhook_config.h"
#include "harness/net/url.h"
#include "json_fields.h"

namespace harness::sim {

namespace fs = std::filesystem;

core::Result<ExternalEndpoint> parseExternalEndpoint(const nlohmann::json& json,
                                                     const fs::path& base_dir,
                                                     std::string_view path) {
  auto fields = detail::ObjectFields::open(json, std::string(path));
  if (!fields) return fields.error();
  ExternalEndpoint out;

  auto url = fields->string("url");
  if (!url) return url.error();
  const std::string url_path = fields->pathOf("url");
  if (!*url) return core::toError(core::FieldError::required(url_path));
  // apiserver pkg/util/webhook/validation.go ValidateWebhookURL(path, url, forceHttps=true), as
  // admissionregistration validation applies it to clientConfig.url.
  if (auto errors = core::validateWebhookUrl(url_path, **url, true); !errors.empty()) {
    return core::toError(errors);
  }
  // The webhook client must be able to dial it too (a port it can read, a host it can use).
  if (auto parsed = net::parseUrl(**url); !parsed) {
    return detail::invalidField(url_path, parsed.error().message);
  }
  out.url = **url;

  auto ca_file = fields->string("caFile");
  if (!ca_file) return ca_file.error();
  if (*ca_file) {
    const std::string ca_path = fields->pathOf("caFile");
    if (ca_file->value().empty()) return detail::invalidField(ca_path, "must not be empty");
    fs::path file = **ca_file;
    if (file.is_relative()) file = base_dir / file;
    file = file.lexically_normal();
    std::ifstream in(file, std::ios::binary);
    std::error_code ec;
    if (!in || fs::is_directory(file, ec)) {
      return detail::invalidField(ca_path, fmt::format("cannot read \"{}\": {}", file.string(),
                                                   in ? "is a directory" : std::strerror(errno)));
    }
    std::ostringstream content;
    content << in.rdbuf();
    out.ca_pem = content.str();
    if (out.ca_pem.empty()) {
      return detail::invalidField(ca_path, fmt::format("\"{}\" is empty", file.string()));
    }
    // client-go's rootCertPool check (what the apiserver would report when calling).
    if (auto ok = core::checkCaBundle(out.ca_pem); !ok) {
      return detail::invalidField(ca_path, ok.error().message);
    }
    out.ca_file = file;
  }
  HARNESS_TRY(fields->rejectUnknown());
  return out;
}

}  // namespace harness::sim
