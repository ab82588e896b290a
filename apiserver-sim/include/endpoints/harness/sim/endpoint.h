#pragma once

// An external webhook endpoint a scenario points at (a webhook already running elsewhere, e.g.
// a real injector in a cluster reached through a port-forward):
//
//   endpoint:
//     url: https://127.0.0.1:8443/inject   # https, no user info, query or fragment
//     caFile: certs/ca.crt                  # relative to the scenario file's directory;
//                                           # omitted: the system roots
//
// The URL rules are the apiserver's for a webhook clientConfig.url (ValidateWebhookURL with
// https forced); the CA file must hold a certificate client-go can use as a root pool.

#include <filesystem>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"

namespace harness::sim {

struct ExternalEndpoint {
  std::string url;
  std::filesystem::path ca_file;  // absolute; empty when not given
  std::string ca_pem;             // the CA file's content (a caBundle); empty: system roots
};

// Errors name the field below `path`: `endpoint.url: Invalid value: "http": 'https' is the only
// allowed URL scheme; desired format: https://host[/path]`, `endpoint.caFile: cannot read
// "/abs/ca.crt": No such file or directory`, `endpoint.caFile: unable to load root certificates:
// unable to parse bytes as PEM block`.
core::Result<ExternalEndpoint> parseExternalEndpoint(const nlohmann::json& json,
                                                     const std::filesystem::path& base_dir,
                                                     std::string_view path = "endpoint");

}  // namespace harness::sim
