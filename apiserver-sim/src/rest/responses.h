#pragma once

// How kube-apiserver writes answers: objects and metav1.Status as JSON
// (k8s.io/apiserver pkg/endpoints/handlers/responsewriters), the errors of its router
// (go-restful's 404/405/406/415 through serviceErrorHandler, and the not-found handler at the end
// of the delegation chain), Warning headers (k8s.io/apimachinery pkg/util/net NewWarningHeader),
// and which representation a client accepts (as=Table / as=PartialObjectMetadata).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/result.h"
#include "harness/core/status.h"
#include "harness/net/http.h"

namespace harness::sim::rest {

net::Response jsonResponse(int code, const nlohmann::json& body);
// The Status with kind/apiVersion set; the HTTP code is status.code (500 when unset).
net::Response statusResponse(const core::Status& status);

// util/notfoundhandler once the paths are installed (paths outside any served group/version,
// a custom resource's whose CRD is gone): net/http's http.NotFound, 404 text/plain "404 page
// not found" (clients make "the server could not find the requested resource (get <resource>)"
// of it).
net::Response notFoundPage();
// go-restful errors inside a served group/version, through serviceErrorHandler
// (NewGenericServerResponse with the router's message): 404 "404: Page Not Found",
// 405 "405: Method Not Allowed", 406 "406: Not Acceptable", 415 "415: Unsupported Media Type".
core::Status routerError(int code);

// `299 - "<text>"` with '"' and '\' escaped.
std::string warningHeaderValue(std::string_view text);
void addWarnings(net::Response& response, const std::vector<std::string>& warnings);

// What the Accept header asks for. Unknown media types are skipped; nothing acceptable is a 406.
struct OutputFormat {
  enum class Kind { kObject, kTable, kPartialObjectMetadata };
  Kind kind = Kind::kObject;
  std::string meta_version = "v1";  // meta.k8s.io version of a Table / PartialObjectMetadata
};
std::optional<OutputFormat> negotiateOutput(const std::optional<std::string>& accept);

// The body's media type for POST/PUT: JSON (also when absent) or YAML; nullopt for anything else.
enum class BodyFormat { kJson, kYaml, kProtobuf };
// kProtobuf only when `protobuf` (a decoder is installed).
std::optional<BodyFormat> negotiateInput(const std::optional<std::string>& content_type,
                                         bool protobuf = false);
// 415 for a body in another format (negotiation.NewUnsupportedMediaTypeError).
core::Status unsupportedMediaType(const std::vector<std::string>& accepted);

}  // namespace harness::sim::rest
